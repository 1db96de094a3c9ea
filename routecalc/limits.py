"""The limits of one search, low enough for every layer to take them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Search limits; a solver that hits one answers ``status: feasible``."""

    time_limit: float | None = None  # seconds
    route_limit: int | None = None  # routes enumerated per train
    progress: Callable[[float], None] | None = None  # fraction done, for long solves
