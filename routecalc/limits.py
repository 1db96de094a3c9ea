"""The limits of one search, low enough for every layer to take them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import PositionError


@dataclass(frozen=True)
class Limits:
    """Search limits; a solver that hits one answers ``status: feasible``."""

    time_limit: float | None = None  # seconds
    route_limit: int | None = None  # routes enumerated per train
    progress: Callable[[float], None] | None = None  # fraction done, for long solves


def check_limits(time_limit: Any = None, route_limit: Any = None) -> None:
    """Refuse, naming it, a limit that is none: seconds must be a number above
    0 (not NaN), routes a whole number of 1 or more; None is no limit."""
    if time_limit is not None and (
        isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0
    ):
        raise PositionError("time_limit", f"must be a number of seconds above 0, got {time_limit!r}"[:120])
    if route_limit is not None and (
        isinstance(route_limit, bool) or not isinstance(route_limit, int) or route_limit < 1
    ):
        raise PositionError("route_limit", f"must be a whole number >= 1, got {route_limit!r}"[:120])
