"""The library's front door: load, solve, validate."""

from __future__ import annotations

from typing import Any

from .errors import PositionError
from .graph import compile_position
from .model import Position, load_position
from .solvers import DEFAULT_SOLVER, SOLVERS, Limits
from .validate import RouteSetValidator


def as_position(position: Position | dict) -> Position:
    return position if isinstance(position, Position) else load_position(position)


def solve(position: Position | dict, solver: str = DEFAULT_SOLVER, *, time_limit: float | None = None,
          route_limit: int | None = None, progress=None) -> dict:
    """The maximum-revenue route set of the operating company."""
    position = as_position(position)
    if solver not in SOLVERS:
        raise PositionError("solver", f"unknown solver {solver!r} (known: {', '.join(SOLVERS)})")
    if time_limit is not None and not time_limit > 0:
        raise PositionError("time_limit", "must be a positive number of seconds")
    limits = Limits(time_limit, route_limit, progress)
    own = position.rules.solve(position, solver, limits)
    if own is not None:
        return own
    graph = compile_position(position)
    return position.rules.finish_answer(position, graph, SOLVERS[solver](position, graph, limits), limits)


def validate(position: Position | dict, routes: Any) -> dict:
    """Score proposed routes, or raise RouteViolation naming the broken rule."""
    position = as_position(position)
    own = position.rules.validate(position, routes)
    return own if own is not None else RouteSetValidator(position).validate(routes)
