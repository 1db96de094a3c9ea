"""routecalc: exact route optimisation and revenue calculation for 18xx games.

>>> import routecalc
>>> answer = routecalc.solve(routecalc.load_position_file("fixtures/1830-late.json"))
>>> answer["revenue"], answer["status"]  # doctest: +SKIP
(430, 'optimal')
"""

from .api import solve, validate
from .board import Position
from .errors import PositionError, RoutecalcError, RouteViolation
from .model import load_position, load_position_file

__all__ = ["solve", "validate", "load_position", "load_position_file", "Position",
           "PositionError", "RouteViolation", "RoutecalcError"]
