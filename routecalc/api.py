"""The library's front door: load, solve, validate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import deadline
from .board import Position
from .errors import PositionError
from .games import question
from .graph import compile_position
from .limits import Limits, check_limits
from .model import check_json, load_position, whole_numbers
from .solvers import DEFAULT_SOLVER, KERNEL_SOLVERS, SOLVERS, warm_up
from .validate import RouteSetValidator


def as_position(position: Position | dict[str, Any]) -> Position:
    return position if isinstance(position, Position) else load_position(position)


def solve(
    position: Position | dict[str, Any],
    solver: str = DEFAULT_SOLVER,
    *,
    time_limit: float | None = None,
    route_limit: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """The maximum-revenue route set of the operating company (or the game's own
    answer). ``time_limit`` covers everything from here: reading, compiling and
    every solver phase, but not the kernels' one-off load (compiled, seconds,
    on the first solve after an install: :func:`routecalc.solvers.warm_up`).
    A limit that is none (0 or less, NaN, not a number; a ``route_limit``
    below 1) raises :class:`~routecalc.errors.PositionError` naming it."""
    check_limits(time_limit, route_limit)
    with deadline.within(time_limit):
        position = as_position(position)
        if solver not in SOLVERS:
            raise PositionError("solver", f"unknown solver {solver!r} (known: {', '.join(SOLVERS)})")
        asked = question(position.game)
        if asked.solve is not None:
            if asked.warm_up is not None:
                with deadline.paused():
                    asked.warm_up()
            return asked.solve(position, Limits(deadline.clip(time_limit), route_limit, progress))
        if solver in KERNEL_SOLVERS and asked.kernels:
            with deadline.paused():
                warm_up()
        graph = compile_position(position)
        limits = Limits(deadline.clip(time_limit), route_limit, progress)
        answer = SOLVERS[solver](position, graph, limits)
        return answer if asked.finish is None else asked.finish(position, graph, answer, limits)


def validate(position: Position | dict[str, Any], routes: Any, *, time_limit: float | None = None) -> dict[str, Any]:
    """Score proposed routes, or raise RouteViolation naming the broken rule.
    ``time_limit`` covers reading and compiling the board too (a board whose
    cells join every pair of their sides has exponentially many tracks
    between two stops): past it, :class:`~routecalc.errors.TimeLimitError`.
    Routes are read as a position is: within its limits, ``1.0`` as ``1``."""
    check_limits(time_limit, None)
    with deadline.within(time_limit):
        position = as_position(position)
        check_json(routes, "routes")  # what a position is read within, with the names the validator gives
        routes = whole_numbers(routes)
        asked = question(position.game)
        if asked.validate is not None:
            return asked.validate(position, routes)
        return RouteSetValidator(position).validate(routes)
