"""A game's own question, above the route solvers.

Most games ask one question: the company's best route set, which the route
solvers answer. Some ask more or something else: 18XS plans transports,
18Cuba couples its trains through sugar, wagons and fees, 18C2C adds a
destination proof. Each such game has one module here, and :data:`QUESTIONS`
says which part of the answer it takes over; :mod:`routecalc.api` consults it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..board import Position
from ..graph import TrackGraph
from ..limits import Limits
from ..rules.xs import validate_xs
from ..solvers import warm_up as warm_up_solvers
from . import c2c, cuba, cuba_coupled, xs_plan


@dataclass(frozen=True)
class Question:
    """How a game departs from "the route solvers' answer, the route validator's check".

    ``solve``/``validate`` replace the route solvers / validator (games whose
    question is not a route set; the game's own search answers whichever
    solver is named); ``finish`` adds the game's parts to the route solvers'
    answer; ``kernels`` False: the answer runs no numba kernel (the CLI then
    does not load them before the solve); ``warm_up`` loads the kernels of the
    game's own search before a solve's clock starts.
    """

    solve: Callable[[Position, Limits], dict] | None = None
    validate: Callable[[Position, Any], dict] | None = None
    finish: Callable[[Position, TrackGraph, dict, Limits], dict] | None = None
    kernels: bool = True
    warm_up: Callable[[], None] | None = None


QUESTIONS: dict[str, Question] = {
    "18XS": Question(solve=xs_plan.solve_plan, validate=validate_xs, kernels=False),
    "18Cuba": Question(
        solve=cuba_coupled.solve_cuba_coupled, validate=cuba.validate_cuba, warm_up=cuba_coupled.warm_up
    ),
    "18C2C-D": Question(finish=c2c.add_connect),
}

#: The question of every game not listed above.
ROUTES = Question()


def question(game: str) -> Question:
    """What answers a position of ``game``."""
    return QUESTIONS.get(game, ROUTES)


def warm_up_all(report: Callable[[str], None] | None = None, *, cpsat: bool = False) -> None:
    """Every kernel an answer may run loaded (from numba's disk cache, or
    compiled into it: seconds, once after an install): the route solvers'
    (:func:`routecalc.solvers.warm_up`, ``report`` and ``cpsat`` as there)
    and each game's own search. A long-running caller (the service, a fuzz
    run) calls it at start; a single solve loads only what it runs, outside
    its time limit."""
    warm_up_solvers(report, cpsat=cpsat)
    for asked in QUESTIONS.values():
        if asked.warm_up is not None:
            asked.warm_up()
