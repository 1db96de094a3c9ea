"""The service's JSON models: the format's models from :mod:`routecalc.schema`, plus
the requests, results and listings that only the HTTP API has.

They give the OpenAPI document its schemas. The engine
(``routecalc.model.load_position``) stays the judge of what a valid position
is, so that a bad one gets the engine's named error (field or cell).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from routecalc import schema
from routecalc.schema import DistanceGroup, Route, ScoredRoute, Strict, TransportProposal, Unread


class Position(RootModel[schema.Position]):  # type: ignore[valid-type]
    """Any game's position (told apart by ``game``)."""


class Answer(schema.Answer):
    """The optimiser's answer, plus the service's timing."""

    elapsed: float = Field(description="seconds the service spent on the request's solve")
    time_limit: float = Field(description="the time limit applied (the request's, capped by the server)")


class XSProposal(Strict):
    """18XS: the transports to check."""

    transports: list[TransportProposal]


#: A corpus file's figures beside its position: accepted with it, not read.
REFERENCE = Field(None, description="the corpus wrapper's reference figures (not read; within the limits of any value)")


class Corpus(Strict):
    """A position in the corpus wrapper."""

    position: Position
    reference: dict[str, Unread] | None = REFERENCE


class SolveRequest(RootModel[Position | Corpus]):  # type: ignore[valid-type]
    """A position, bare or in the corpus wrapper."""


class RouteList(Strict):
    """Routes in the form the validator's answer gives them."""

    routes: list[Route]


#: What the validator reads as a proposal: routes (or the object holding them); 18XS transports.
Proposal = list[Route] | RouteList | list[TransportProposal] | XSProposal


class ValidateRequest(Strict):
    """A position and the routes (18XS: the transports) to check."""

    position: Position
    routes: Proposal
    reference: dict[str, Unread] | None = REFERENCE


class Drawing(Strict):
    """A position and, optionally, routes (18XS: transports) to draw."""

    position: Position
    routes: Proposal | None = Field(None, description="routes to draw (validated and scored first)")
    reference: dict[str, Unread] | None = REFERENCE


class RenderRequest(RootModel[Drawing | Position]):  # type: ignore[valid-type]
    """A position, or a position and the routes to draw."""


class Violation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rule: str = Field(description="stable short name: track_reused, reversal, too_long, ...")
    detail: str
    route: int | None
    choices: list[Any] | None = None


class ValidateResult(BaseModel):
    valid: bool
    routes: list[ScoredRoute] | None = None
    revenue: int | None = None
    violation: Violation | None = None


class Error(BaseModel):
    """Bad input: ``where`` names the field, cell or rule."""

    error: str
    where: str
    violation: Violation | None = None


class TrainInfo(BaseModel):
    name: str
    distance: list[DistanceGroup]
    multiplier: int
    fill: bool
    hex_limit: int | None = Field(description="cell edges it may cross (H trains)")
    gauge: str


class GameInfo(BaseModel):
    name: str
    route_engine: bool = Field(
        description="routes found by the route solvers; false: the game's own search "
        "answers (18XS transports, 18Cuba's sugar and fees)"
    )
    has_companies: bool
    kinds: list[str]
    train_state_keys: list[str]
    trains: list[TrainInfo]


class FixtureInfo(BaseModel):
    name: str
    game: str
    company: str | None
    trains: list[str]


class Health(BaseModel):
    status: Literal["ok"]
    solvers: list[str]
    default_solver: str
    jobs_running: int = Field(description="engine jobs (solve, validate, render) running now")
    max_time_limit: float
