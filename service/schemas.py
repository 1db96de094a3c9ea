"""Pydantic models of the service's JSON: the position format, routes, answers, errors.

They follow ``position-format.md`` and give the OpenAPI document its
schemas. The engine (``routecalc.model.load_position``) stays the judge of
what a valid position is, so that a bad one gets the engine's named error
(field or cell); the models describe the contract for clients and are
checked against every bundled fixture and corpus position by the tests.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Axes(Strict):
    x: Literal["letter", "number"]
    y: Literal["letter", "number"]


class Phase(Strict):
    name: str = Field(description="free text, e.g. \"6\"")
    colors: list[str] = Field(description="tile colours of this phase, oldest first; picks multi-colour revenues",
                              examples=[["yellow", "green", "brown"]])


class Cell(Strict):
    """One cell of the board and the tile on it."""

    id: str = Field(pattern=r"^[A-Z]+-?\d+$", description="coordinates, e.g. F10", examples=["F10"])
    tile: str | None = Field(None, description="tile name, for display only")
    code: str = Field(description="the tile in the 18xx.games tile language, unrotated (\"\": a bare cell)",
                      examples=["city=revenue:30,slots:2;path=a:0,b:_0;path=a:3,b:_0"])
    rotation: int = Field(0, ge=0, le=5, description="0-5 (0-3 on squares)")
    tokens: list[list[str | None]] | None = Field(
        None, description="one list per city of the code, one entry per slot: a company id or null")
    neighbors: dict[str, str] | None = Field(None, description="edge -> cell id; replaces the computed neighbours")
    terrain: Literal["forest", "mountain", "barrens", "plain"] | None = None


class DistanceGroup(Strict):
    nodes: list[Literal["city", "town", "offboard"]]
    pay: int = Field(ge=0)
    visit: int = Field(ge=0)
    multiplier: int = Field(1, ge=1)


class TrainObject(BaseModel):
    """The 18xx.games train definition; keys that do not affect routes are accepted."""

    model_config = ConfigDict(extra="allow")
    name: str
    distance: int | list[DistanceGroup] | None = Field(
        None, description="stops (or, in 18Ireland, cell edges), or distance groups; absent: the catalogue's")
    multiplier: int = Field(1, ge=1)
    fill: bool = False


class Position(Strict):
    """Everything needed to answer "what must this company run?" (position-format.md)."""

    format: Literal[1]
    game: str = Field(description="rule set: generic, 18Ireland, 18Cuba, 18Lilliput, 18C2C-D, 18XS",
                      examples=["generic"])
    layout: Literal["flat", "pointy", "square"]
    axes: Axes | None = None
    phase: Phase
    hexes: list[Cell]
    company: str | None = Field(description="the operating company's id (null only in 18XS)")
    trains: list[str | TrainObject]
    options: dict[str, Any] = Field(default_factory=dict, description="game-specific state (route-rules.md)")


class Route(BaseModel):
    """A route in the spec's form, as given to the validator."""

    model_config = ConfigDict(extra="allow")
    train: str
    nodes: list[str] = Field(description="every node passed, in order, as <cell>-<n>", examples=[["D12-0", "F10-0"]])
    hexes: list[list[str]] | None = Field(
        None, description="per consecutive node pair, the cells crossed, both ends included")
    skip: list[str] = Field(default_factory=list, description="nodes passed but not counted")


class Stop(BaseModel):
    model_config = ConfigDict(extra="allow")
    node: str
    type: str
    value: int
    narrow: int | None = Field(None, description="feeder revenue over narrow gauge (18Ireland)")


class ScoredRoute(Route):
    revenue: int
    stops: list[Stop]


class Answer(BaseModel):
    """The optimiser's answer, plus the service's timing."""

    model_config = ConfigDict(extra="allow")
    company: str | None
    revenue: int
    status: Literal["optimal", "feasible"]
    bound: int = Field(description="an upper bound on the optimum; equal to revenue when optimal")
    routes: list[ScoredRoute]
    solver: str
    stats: dict[str, Any]
    elapsed: float = Field(description="seconds the service spent on the request's solve")
    time_limit: float = Field(description="the time limit applied (the request's, capped by the server)")


class ValidateRequest(Strict):
    position: Position
    routes: list[Route]


class RenderRequest(Strict):
    position: Position
    routes: list[Route] | None = Field(None, description="routes to draw (validated and scored first)")


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
    route_engine: bool = Field(description="routes found by the route solvers; false: the game's own search "
                                           "answers (18XS transports, 18Cuba's sugar and fees)")
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
