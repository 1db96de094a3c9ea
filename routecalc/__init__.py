"""routecalc: exact route optimisation and revenue calculation for 18xx games.

>>> import routecalc
>>> answer = routecalc.solve(routecalc.load_position_file("fixtures/1830-late.json"))
>>> answer["revenue"], answer["status"]  # doctest: +SKIP
(430, 'optimal')

``solve`` and ``validate`` are imported on first use: reading and checking
a position (or naming the CLI's options) does not wait for the solvers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import PositionError, RoutecalcError, RouteViolation
from .model import Position, load_position, load_position_file

if TYPE_CHECKING:
    from .api import solve, validate

__all__ = [
    "Position",
    "PositionError",
    "RouteViolation",
    "RoutecalcError",
    "load_position",
    "load_position_file",
    "solve",
    "validate",
]


def __getattr__(name: str) -> Any:
    if name in ("solve", "validate"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
