"""routecalc: exact route optimisation and revenue calculation for 18xx games.

>>> import routecalc
>>> answer = routecalc.solve(routecalc.load_position_file("fixtures/1830-late.json"))
>>> answer["revenue"], answer["status"]  # doctest: +SKIP
(430, 'optimal')

``solve`` and ``validate`` are imported on first use: reading and checking
a position (or naming the CLI's options) does not wait for the solvers.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .board import Position
from .errors import PositionError, RoutecalcError, RouteViolation
from .model import load_position, load_position_file

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

_FROM_API = ("solve", "validate")


def __getattr__(name: str) -> Any:
    if name in _FROM_API:
        from . import api

        globals()[name] = value = getattr(api, name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Package(ModuleType):
    """This package, whose ``validate`` stays the function: importing the
    submodule of that name would otherwise set the attribute to it."""

    def __setattr__(self, name: str, value: Any) -> None:
        if not (name in _FROM_API and isinstance(value, ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
