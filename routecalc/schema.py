"""The JSON contract as pydantic models: a position (one model per game) and an answer.

These models are the one source of the JSON Schemas that ship with the
package (:mod:`routecalc.schemas`: ``position.schema.json`` and
``answer.schema.json``, written by ``python -m routecalc.schema``), of the
HTTP service's OpenAPI document, and of ``routecalc schema``. The engine
(:func:`routecalc.model.load_position`) stays the judge of a position: it
reads the tile language, the cells' geometry and the tokens, which a schema
cannot; a position the schema refuses, the engine refuses too, and the tests
check that every fixture, corpus position and answer fits.

Importing this module imports pydantic; the rest of the engine does not
need it (the CLI prints the shipped files).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, RootModel, TypeAdapter, create_model
from pydantic.config import JsonDict

from .geometry import CELL_ID_PATTERN
from .model import MAX_CELLS, MAX_CODE, MAX_INT, MAX_ITEMS, MAX_STRING, MAX_TRAINS
from .rules import RULES
from .schemas import NAMES, schema_path
from .tiles import TILE_COLOURS
from .trains import _IGNORED_TRAIN_KEYS as IGNORED_TRAIN_KEYS
from .trains import GENERIC_TRAIN_PATTERN, MAX_MULTIPLIER

#: The JSON Schema dialect of the generated files.
DIALECT = "https://json-schema.org/draft/2020-12/schema"


class Strict(BaseModel):
    """An object whose keys are all listed: the engine refuses unknown keys."""

    model_config = ConfigDict(extra="forbid")


class Input(Strict):
    """A part of a position: its strings within the engine's length limit (``check_json``)."""

    model_config = ConfigDict(extra="forbid", str_max_length=MAX_STRING)


class Open(BaseModel):
    """An object that may carry keys beyond those listed."""

    model_config = ConfigDict(extra="allow")


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def absent(description: str = "", **constraints: Any) -> Any:
    """An optional key that is never null: the engine reads a null there as a wrong type."""
    return Field(None, description=description or None, json_schema_extra=_no_default, **constraints)


class Unread(
    RootModel[
        None
        | bool
        | Annotated[int, Field(ge=-MAX_INT, le=MAX_INT)]
        | Annotated[float, Field(ge=-MAX_INT, le=MAX_INT)]
        | Annotated[str, Field(max_length=MAX_STRING)]
        | Annotated[list["Unread"], Field(max_length=MAX_ITEMS)]
        | Annotated[dict[Annotated[str, Field(max_length=MAX_STRING)], "Unread"], Field(max_length=MAX_ITEMS)]
    ]
):
    """A value not read, within the limits every value is read within (``check_json``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "description": f"any JSON, not read, but within the limits of every value: numbers at most {MAX_INT:,} "
            f"either way, strings of at most {MAX_STRING:,} characters, at most {MAX_ITEMS:,} entries"
        }
    )


# -- the position --------------------------------------------------------------


class LetterX(Input):
    """x is the letter part (flat hexagons' and squares' default)."""

    x: Literal["letter"]
    y: Literal["number"]


class NumberX(Input):
    """x is the number part (pointy hexagons' default)."""

    x: Literal["number"]
    y: Literal["letter"]


Axes = LetterX | NumberX


class Phase(Input):
    """The phase: its name and the tile colours it makes available."""

    name: str = Field("", description='free text, e.g. "6"')
    colors: list[one_of(tuple(sorted(TILE_COLOURS)))] = Field(  # type: ignore[valid-type]
        description="tile colours of this phase, oldest first; picks multi-colour revenues",
        examples=[["yellow", "green", "brown"]],
    )


class Cell(Input):
    """One cell of the board and the tile on it."""

    id: str = Field(
        pattern=f"^{CELL_ID_PATTERN}$",
        description="coordinates: a letter part and a number part (no leading zeros)",
        examples=["F10"],
    )
    tile: str | None = Field(None, description="the tile's name, for display only")
    code: str = Field(
        max_length=MAX_CODE,
        description='the tile in the 18xx.games tile language, unrotated ("": a bare cell)',
        examples=["city=revenue:30,slots:2;path=a:0,b:_0;path=a:3,b:_0"],
    )
    rotation: int = Field(
        0, ge=0, le=5, description="0-5 (0-3 on squares): code edge e lies on board edge (e + rotation) mod 6 (mod 4)"
    )
    tokens: list[list[str | None]] | None = Field(
        None,
        description="one list per city of the code (and per offboard with slots), one entry per slot: "
        "a company id or null; absent: every slot empty",
    )
    neighbors: (
        Annotated[
            dict[Annotated[str, Field(pattern=r"^[0-5]$")], str],
            Field(json_schema_extra={"additionalProperties": False}),  # "6", "a", "03": no edge
        ]
        | None
    ) = Field(None, description="board edge -> cell id; replaces the cell's computed neighbours")
    terrain: Literal["forest", "mountain", "barrens", "plain"] | None = Field(None, description="18XS only")


class DistanceGroup(Input):
    """Up to ``visit`` stops of these node types; the best ``pay`` of them count."""

    nodes: list[Literal["city", "town", "offboard"]] = Field(min_length=1)
    pay: int = Field(ge=0, le=MAX_INT)
    visit: int = Field(ge=0, le=MAX_INT)
    multiplier: int = Field(1, ge=1, le=MAX_MULTIPLIER)


#: The keys of an 18xx.games train definition that do not affect routes: accepted, not read.
_IgnoredTrainKeys: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "IgnoredTrainKeys",
    __base__=Input,
    **{
        key: (Unread, Field(None, description="not read (18xx.games train definition)"))
        for key in sorted(IGNORED_TRAIN_KEYS)
    },
)


def one_of(values: tuple[str, ...]) -> Any:
    """The type whose values are ``values`` (a Literal made at run time)."""
    return Literal[values]


def list_of(*types: Any) -> Any:
    """The type of a list whose items are any of ``types``."""
    return list[Union[types]]  # type: ignore[valid-type]  # noqa: UP007


def _train_name(game: str) -> Any:
    """A catalogue train name of ``game``: its listed names (or, generic, the name patterns)."""
    if game == "generic":
        return Annotated[str, Field(pattern=f"^(?:{GENERIC_TRAIN_PATTERN})$", description="n, n+m, D or nE (n: 1-999)")]
    names = RULES[game].train_names
    return one_of(names) if names else Annotated[str, Field(max_length=0)]


def catalogue_unless_distance(game: str) -> ConfigDict:
    """A train object without ``distance`` is the catalogue train of its ``name``: the name is one of ``game``'s."""
    name = TypeAdapter(_train_name(game)).json_schema()
    return ConfigDict(
        json_schema_extra={"if": {"not": {"required": ["distance"]}}, "then": {"properties": {"name": name}}}
    )


class GenericTrain(_IgnoredTrainKeys):
    """A train object: a catalogue train by name, or the train's own distance."""

    model_config = catalogue_unless_distance("generic")

    name: str
    distance: Annotated[int, Field(ge=1, le=MAX_INT)] | Annotated[list[DistanceGroup], Field(min_length=1)] = absent(
        "stops (all pay), or distance groups; absent: the catalogue train of that name"
    )
    multiplier: int = Field(1, ge=1, le=MAX_MULTIPLIER, description="the route's revenue is multiplied")
    fill: bool = Field(False, description="pay slots the first group leaves unused go to the best other stops")


class IrelandTrain(_IgnoredTrainKeys):
    """An 18Ireland train object: ``distance`` counts cell edges."""

    model_config = catalogue_unless_distance("18Ireland")

    name: str
    distance: int = absent("cell edges the route may cross; absent: the catalogue's", ge=1, le=MAX_INT)
    multiplier: int = Field(1, ge=1, le=MAX_MULTIPLIER)
    fill: bool = False


class LilliputTrain(GenericTrain):
    """An 18Lilliput train object."""

    model_config = catalogue_unless_distance("18Lilliput")

    obsolete: bool = Field(False, description="earns half, rounded down")


class C2CTrain(_IgnoredTrainKeys):
    """An 18C2C-D train object: a catalogue train."""

    name: _train_name("18C2C-D")  # type: ignore[valid-type]
    multiplier: int = Field(1, ge=1, le=MAX_MULTIPLIER)
    fill: bool = False


class CubaTrain(_IgnoredTrainKeys):
    """An 18Cuba train object: a catalogue train with its state."""

    name: _train_name("18Cuba")  # type: ignore[valid-type]
    obsolete: bool = Field(False, description="runs one stop shorter")
    wagon: int = Field(0, ge=0, le=MAX_INT, description="the capacity of the wagon it carries, in cubes (majors)")


class VisitBonus(Input):
    """+ amount for each listed cell in which the route has a paying stop."""

    type: Literal["visit"]
    cells: list[str] = Field(min_length=1)
    amount: int = Field(ge=0, le=MAX_INT)
    multiplied: bool = Field(False, description="the train's multiplier applies to the bonus")


class ConnectBonus(Input):
    """+ amount once when the route has a paying stop in a cell of every set."""

    type: Literal["connect"]
    sets: list[Annotated[list[str], Field(min_length=1)]] = Field(min_length=1)
    amount: int = Field(ge=0, le=MAX_INT)
    multiplied: bool = False


Bonus = Annotated[VisitBonus | ConnectBonus, Field(discriminator="type")]


class GenericOptions(Input):
    """Options every company game reads."""

    no_hex_twice: bool = Field(False, description="a route may not enter the same cell twice (1867)")
    bonuses: list[Bonus] = Field(default_factory=list, description="route bonuses")


class LilliputOptions(GenericOptions):
    """18Lilliput's options."""

    last_round: bool = Field(False, description="the company's total revenue is doubled")


class Connect(Input):
    """A destination or transcontinental proof: a route with a stop in each set."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, str_max_length=MAX_STRING)
    from_: list[str] = Field(alias="from", min_length=1)
    to: list[str] = Field(min_length=1)


class C2COptions(GenericOptions):
    """18C2C-D's options."""

    connect: Connect = absent("ask for a destination proof")


class CubaOptions(Input):
    """18Cuba's options."""

    no_hex_twice: bool = False
    bonuses: list[Any] = Field(default_factory=list, max_length=0, description="not part of 18Cuba: empty")
    machines: dict[str, list[Annotated[int, Field(ge=0, le=MAX_INT)]]] = Field(
        default_factory=dict, description="minor id -> its machines' values"
    )
    wagons: list[Annotated[int, Field(ge=1, le=MAX_INT)]] = Field(
        default_factory=list, description="the company's wagons (capacities) for the optimiser to assign"
    )
    sugar: dict[str, Annotated[int, Field(ge=0, le=MAX_INT)]] = Field(
        default_factory=dict, description="sugar mill node id -> cubes lying there"
    )
    fc_fee: int = Field(20, ge=0, le=MAX_INT, description="the fee per FC token ignored per round")


class XSOptions(Input):
    """18XS's options: the player's locomotive, actions and bid cards."""

    locomotive: int = absent("the locomotive level; needed to solve", ge=0, le=8)
    actions: int = Field(2, ge=0, le=8, description="transport actions this turn")
    double_distance: bool | Annotated[int, Field(ge=0, le=MAX_INT)] = Field(
        False, description="double-distance bid cards held (true: one)"
    )
    as_level_8: bool | Annotated[int, Field(ge=0, le=MAX_INT)] = Field(
        False, description="as-level-8 bid cards held (true: one)"
    )


#: Square cells have four edges: rotations 0-3 and neighbours across edges 0-3.
SQUARE_CELLS: JsonDict = {
    "if": {"properties": {"layout": {"const": "square"}}},
    "then": {
        "properties": {
            "hexes": {
                "items": {
                    "properties": {"rotation": {"maximum": 3}, "neighbors": {"propertyNames": {"pattern": "^[0-3]$"}}}
                }
            }
        }
    },
}


class PositionBase(Input):
    """The keys every position has (the game's model narrows company, trains and options)."""

    model_config = ConfigDict(extra="forbid", str_max_length=MAX_STRING, json_schema_extra=SQUARE_CELLS)

    format: Literal[1]
    layout: Literal["flat", "pointy", "square"]
    axes: Axes | None = None
    phase: Phase
    hexes: list[Cell] = Field(max_length=MAX_CELLS, description="the cells that exist (squares too)")


def _position(
    game: str, doc: str, train: Any, options: type[BaseModel], company: Any = str, trains: Any = None
) -> type[BaseModel]:
    """The position model of one game; ``trains``: a field for the trains other than a list of names and objects."""
    fields: dict[str, Any] = {
        "game": (one_of((game,)), Field(description="the rule set")),
        "company": (company, Field(description="the operating company's id")),
        "trains": trains
        or (list_of(_train_name(game), train), Field(max_length=MAX_TRAINS, description="the company's trains")),
        "options": (options | None, Field(None, description="game-specific state; null or absent: none")),
    }
    name = "Position" + "".join(c for c in game[:1].upper() + game[1:] if c.isalnum())
    model: type[BaseModel] = create_model(name, __base__=PositionBase, __doc__=doc, **fields)
    return model


POSITIONS: dict[str, type[BaseModel]] = {
    "generic": _position("generic", "A position of the generic (1830 style) rules.", GenericTrain, GenericOptions),
    "18Ireland": _position("18Ireland", "An 18Ireland position.", IrelandTrain, GenericOptions),
    "18Lilliput": _position("18Lilliput", "An 18Lilliput position.", LilliputTrain, LilliputOptions),
    "18C2C-D": _position("18C2C-D", "An 18C2C position with the D trains.", C2CTrain, C2COptions),
    "18Cuba": _position("18Cuba", "An 18Cuba position.", CubaTrain, CubaOptions),
    "18XS": _position(
        "18XS",
        "An 18XS position: no company, no trains.",
        None,
        XSOptions,
        company=str | None,
        trains=(list[Any], Field(max_length=0, description="none: 18XS has no trains")),
    ),
}

if set(POSITIONS) != set(RULES):  # a new game needs its model here
    raise ImportError(f"schema: no position model for {sorted(set(RULES) - set(POSITIONS))}")

#: Any game's position, told apart by ``game``.
Position: Any = Annotated[Union[tuple(POSITIONS.values())], Field(discriminator="game")]  # noqa: UP007
POSITION: TypeAdapter[Any] = TypeAdapter(Position)


# -- routes and answers -----------------------------------------------------------


class Route(Open):
    """A route as given to the validator (the answer's keys may stay on it)."""

    train: str
    nodes: list[str] = Field(description="every node passed, in order, as <cell>-<n>", examples=[["D12-0", "F10-0"]])
    hexes: list[list[str]] | None = Field(
        None, description="per consecutive node pair, the cells crossed, both ends included"
    )
    skip: list[str] = Field(default_factory=list, description="nodes passed but not counted")
    wagon: int = absent("18Cuba: the wagon (capacity) this route carries", ge=0)


class Stop(Strict):
    """A paying stop of a route and what it earns."""

    node: str
    type: Literal["city", "town", "offboard"]
    value: int
    narrow: int = absent("18Ireland: what its narrow-gauge feeders add")


class ScoredRoute(Strict):
    """A route of an answer: the route form with its revenue and paying stops."""

    train: str
    nodes: list[str]
    hexes: list[list[str]]
    skip: list[str]
    revenue: int
    stops: list[Stop]
    sugar: int = absent("18Cuba: cubes it delivers", ge=0)
    wagon: int = absent("18Cuba: the capacity of the wagon it carries", ge=1)
    fc_passed: list[str] = absent("18Cuba: the FC cities it passes")
    fc_free: str = absent("18Cuba: the FC city a + train ignores for free")


class Part(Strict):
    """Revenue that is not a route's (fees negative)."""

    name: str
    detail: str
    amount: int


class ConnectAnswer(Strict):
    """18C2C-D's destination proof."""

    possible: bool | None = Field(description="null: the time limit stopped the search first")
    route: ScoredRoute | None
    unfolded: bool | None = Field(description="a D train had to run as a 2n-stop train")
    status: Literal["exact", "unknown"]


class Cube(Strict):
    """A goods cube: where it lies and its colour."""

    cell: str
    color: str


class Transport(Strict):
    """18XS: one cube moved along trails to a destination."""

    cube: Cube
    cells: list[str] = Field(description="the start cell, then every cell entered")
    to: str = Field(description="the destination cell")
    to_kind: Literal["city", "lc", "port"]
    distance: int = Field(ge=0)
    income: int = Field(ge=0)
    card: Literal["double_distance", "as_level_8"] | None


class TransportProposal(Strict):
    """18XS: a transport given to the validator (the answer's other keys are recomputed)."""

    cube: Cube
    cells: list[str] = Field(min_length=1, description="the start cell, then every cell entered")
    to: str | None = Field(None, description="the destination cell, the last of cells")
    card: Literal["double_distance", "as_level_8"] | None = Field(
        None, description="the bid card played; absent or null: the validator plays held cards where they pay"
    )
    to_kind: Unread | None = Field(None, description="not read")
    distance: Unread | None = Field(None, description="not read")
    income: Unread | None = Field(None, description="not read")


class CubaSugar(Strict):
    """18Cuba: the sugar the routes deliver."""

    cubes: int = Field(ge=0)
    income: int = Field(ge=0)
    by_mill: dict[str, int]


class CubaFees(Strict):
    """18Cuba: the FC tokens paid for."""

    paid: list[str]
    amount: int = Field(ge=0)


class FCCity(Strict):
    """A city the FC counts."""

    node: str
    value: int


class FCIncome(Strict):
    """18Cuba: the FC's own income."""

    range: int = Field(ge=0)
    cities: list[FCCity]
    cubes: int = Field(ge=0)
    sugar: int = Field(ge=0)
    income: int


class Answer(Strict):
    """The optimiser's answer (:func:`routecalc.solve`): the best routes and how sure it is."""

    company: str = absent("the operating company (absent in 18XS)")
    game: Literal["18XS"] = absent("18XS: the game")
    revenue: int = Field(description="the total: the routes' revenues plus the parts' amounts")
    status: Literal["optimal", "feasible"] = Field(description="optimal: proven; feasible: a limit stopped the search")
    bound: int = Field(description="an upper bound on the optimum; equal to revenue when optimal")
    routes: list[ScoredRoute] = absent("one per train that runs (absent in 18XS)")
    solver: str = Field(description="the solver that answered")
    stats: dict[str, Any] = Field(description="the solver's counts and seconds")
    parts: list[Part] = absent("revenue that is not a route's")
    connect: ConnectAnswer = absent("18C2C-D: the destination proof asked for")
    best_transport: Transport | None = absent("18XS: the best single transport (null: no cube can move)")
    plan: list[Transport] = absent("18XS: the turn's transports")
    actions: int = absent("18XS: transport actions of the turn")
    routes_revenue: int = absent("18Cuba: the routes' revenue alone")
    sugar: CubaSugar = absent("18Cuba: the sugar delivered")
    fees: CubaFees = absent("18Cuba: the FC tokens paid for")
    machines: int = absent("18Cuba: a minor's machines", ge=0)
    fc_income: FCIncome = absent("18Cuba: the FC's own income")


# -- the generated files --------------------------------------------------------


def _titled(schema: dict[str, Any], title: str, description: str) -> dict[str, Any]:
    return {
        "$schema": DIALECT,
        "title": title,
        "description": description,
        **{k: v for k, v in schema.items() if k not in ("title", "description")},
    }


def position_schema() -> dict[str, Any]:
    """The JSON Schema of a position, every game."""
    return _titled(
        POSITION.json_schema(),
        "routecalc position",
        "A board position in routecalc's format, version 1; one model per game, told apart by `game`.",
    )


def answer_schema() -> dict[str, Any]:
    """The JSON Schema of the optimiser's answer."""
    return _titled(Answer.model_json_schema(), "routecalc answer", Answer.__doc__ or "")


def generated(name: str) -> str:
    """The text of schema ``name`` as the models generate it (what the shipped file must hold)."""
    schema = {"position": position_schema, "answer": answer_schema}[name]()
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def main() -> None:
    """Write the shipped schema files from the models."""
    for name in NAMES:
        schema_path(name).write_text(generated(name))
        print(f"wrote {schema_path(name)}", file=sys.stderr)


if __name__ == "__main__":
    main()
