"""The limits of one search, low enough for every layer to take them."""

from __future__ import annotations

import numbers
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


#: The longest time limit, seconds (some 30 years): beyond it, and infinity,
#: the clock's arithmetic would overflow; no limit is None.
MAX_SECONDS = 10**9


def seconds_ok(value: Any) -> bool:
    """Whether ``value`` is a time limit: a real number above 0 and at most ``MAX_SECONDS``."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 < value <= MAX_SECONDS


def check_limits(time_limit: Any = None, route_limit: Any = None) -> None:
    """Refuse, naming it, a limit that is none: seconds must be a number above
    0 and at most ``MAX_SECONDS`` (not NaN, not infinite), routes a whole
    number of 1 or more; None is no limit."""
    if time_limit is not None and not seconds_ok(time_limit):
        raise PositionError("time_limit", f"must be a number of seconds above 0 and at most {MAX_SECONDS:,}")
    if route_limit is not None and (
        isinstance(route_limit, bool) or not isinstance(route_limit, numbers.Integral) or route_limit < 1
    ):
        raise PositionError("route_limit", "must be a whole number >= 1")
