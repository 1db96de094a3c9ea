"""The 18xx.games tile language, the part of it that routes need.

A tile code such as ``city=revenue:30,slots:2;path=a:0,b:_0;path=a:3,b:_0``
becomes a :class:`Tile`: its nodes (cities, towns, offboards, junctions, in
code order) and its paths. Edges here are *code* edges; the board turns them
by the cell's rotation. Parsing is strict: a part or key the language does
not define is an error, so a typo never passes silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .errors import PositionError

NODE_TYPES = ("city", "town", "offboard", "junction")
TRACKS = ("broad", "narrow", "dual")
#: Track drawn on a map that no train runs on (1822PNW's and 1822MX's ferry
#: lines): read, and left out of the board like an ``ignore:1`` path.
THIN = "thin"


#: The tile colours of the 18xx.games engine, which a phase lists and a
#: revenue names (``yellow_20|brown_40``); any other word is a typo that would
#: silently pick another value. ``diesel`` is a revenue entry for D trains.
TILE_COLOURS = frozenset({"white", "yellow", "green", "brown", "gray", "red", "blue", "purple", "orange", "sepia"})
DIESEL = "diesel"


def unknown_colour(name: str) -> str:
    """The error message for a colour that is not a tile colour."""
    hint = " (18xx.games spells it gray)" if name == "grey" else ""
    return f"unknown colour {name!r}{hint}: one of {', '.join(sorted(TILE_COLOURS))}"


def is_colour_word(text: str) -> bool:
    """A colour a position may name (18XS's goods and demands): a word of
    letters, so that it is safe where a drawn board writes it as CSS."""
    return text.isascii() and text.isalpha()


#: Parts that only serve drawing or tile laying.
IGNORED_PARTS = frozenset(
    {
        "label",
        "upgrade",
        "icon",
        "frame",
        "stripes",
        "stub",
        "partition",
        "future_label",
        "assignment",
    }
)
UNSUPPORTED_PARTS = frozenset({"pass", "halt"})

#: Keys each part understands; ``None`` marks a key that is read, a string
#: value marks a drawing key that is accepted and ignored.
_NODE_KEYS = {"revenue", "groups", "kind"}
_DRAWING_KEYS = {"loc", "hide", "format", "size", "boom", "style", "to_city", "reservation", "cost", "terrain"}
PART_KEYS: dict[str, set[str]] = {
    "city": _NODE_KEYS | {"slots", "color", "goods", "served"},
    "town": set(_NODE_KEYS),
    "offboard": _NODE_KEYS | {"slots"},  # token slots: only in games whose offboards hold tokens
    "junction": set(),
    "path": {
        "a",
        "b",
        "terminal",
        "track",
        "lanes",
        "a_lane",
        "b_lane",
        "ignore",
        "ignore_gauge_walk",
        "ignore_gauge_compare",
    },
    "border": {"edge", "type", "cost", "color"},
}
UNSUPPORTED_KEYS = frozenset({"visit_cost", "route"})


@dataclass(frozen=True)
class Revenue:
    """A stop value: flat, or by tile colour (``yellow_20|brown_40|diesel_60``;
    ``yellow/green_20`` gives two colours one value)."""

    flat: int = 0
    by_color: tuple[tuple[str, int], ...] = ()

    def value(self, phase_colors: tuple[str, ...], diesel: bool = False) -> int:
        """The newest phase colour with an entry wins; ``diesel`` for D trains."""
        if not self.by_color:
            return self.flat
        table = dict(self.by_color)
        if diesel and DIESEL in table:
            return table[DIESEL]
        for color in reversed(phase_colors):
            if color in table:
                return table[color]
        return 0

    @classmethod
    def parse(cls, text: str, where: str) -> Revenue:
        if "_" not in text:
            return cls(flat=_int(text, where, "revenue", 0))
        entries = []
        for item in text.split("|"):
            colors, sep, amount = item.rpartition("_")
            names = colors.split("/")  # yellow/green_30: both colours
            if not sep or not all(names):
                raise PositionError(where, f"revenue entry {item!r} is not colour_value")
            for name in names:
                if name not in TILE_COLOURS and name != DIESEL:
                    raise PositionError(where, f"revenue entry {item!r}: {unknown_colour(name)}")
            value = _int(amount, where, "revenue", 0)
            entries += [(color, value) for color in names]
        return cls(by_color=tuple(entries))


@dataclass(frozen=True)
class TileNode:
    """A node of a tile: a stop (city, town, offboard) or a junction."""

    index: int
    type: str
    revenue: Revenue = Revenue()
    slots: int = 0
    groups: tuple[str, ...] = ()
    kind: str | None = None
    color: str | None = None  # 18XS: the good a city demands
    goods: tuple[str, ...] = ()  # 18XS: cubes lying here
    served: bool = False  # 18XS


@dataclass(frozen=True)
class PathEnd:
    """One end of a path: a code edge (with its lane) or a node index."""

    edge: int | None = None
    node: int | None = None
    lane_width: int = 1
    lane_index: int = 0


@dataclass(frozen=True)
class TilePath:
    a: PathEnd
    b: PathEnd
    terminal: bool = False
    track: str = "broad"


@dataclass(frozen=True)
class Tile:
    nodes: tuple[TileNode, ...] = ()
    paths: tuple[TilePath, ...] = ()
    borders: tuple[int, ...] = ()  # impassable code edges

    @property
    def token_holders(self) -> tuple[TileNode, ...]:
        """Nodes with a token list: every city, and offboards with slots."""
        return tuple(n for n in self.nodes if n.type == "city" or (n.type == "offboard" and n.slots))


#: Bounds of the whole numbers of a tile code: a revenue below 0 or over
#: MAX_REVENUE, or more than MAX_LANES lanes or MAX_SLOTS slots, is refused.
#: No 18xx stop costs a train to visit, and the route rules' "best n pay"
#: reads as choosing among values that are worth having: a negative value
#: would make "best" ambiguous (skip it, or pay it to fill a slot).
MAX_REVENUE = 1_000_000
MAX_LANES = 8
MAX_SLOTS = 16
_WHOLE = re.compile(r"-?[0-9]{1,9}")


def _int(text: str, where: str, key: str, low: int = -MAX_REVENUE, high: int = MAX_REVENUE) -> int:
    if not _WHOLE.fullmatch(text):
        shown = text if len(text) <= 20 else text[:17] + "..."
        raise PositionError(where, f"{key} must be a whole number, got {shown!r}")
    value = int(text)
    if value < low:
        raise PositionError(where, f"{key} must not be negative" if low == 0 else f"{key} must be at least {low}")
    if value > high:
        raise PositionError(where, f"{key} {value} is over the limit of {high}")
    return value


def _params(body: str, part: str, where: str) -> dict[str, str]:
    params: dict[str, str] = {}
    for item in filter(None, body.split(",")):
        key, sep, value = item.partition(":")
        if not sep:
            raise PositionError(where, f"{part} parameter {item!r} has no ':'")
        if key in UNSUPPORTED_KEYS:
            raise PositionError(where, f"{part} key {key!r} is not supported")
        if key not in PART_KEYS[part] and key not in _DRAWING_KEYS:
            raise PositionError(where, f"unknown {part} key {key!r}")
        if key in params:
            raise PositionError(where, f"{part} key {key!r} given twice")
        params[key] = value
    return params


def _lane(text: str | None, where: str) -> tuple[int, int] | None:
    """``a_lane:2.1`` -> (width 2, index 1)."""
    if text is None:
        return None
    width, sep, index = text.partition(".")
    width_n = _int(width, where, "lane width", 1, MAX_LANES)
    index_n = _int(index, where, "lane index", 0, width_n - 1) if sep else 0
    return width_n, index_n


#: Distinct tile codes whose parsed tiles are kept (each code at most
#: ``model.MAX_CODE`` characters).
KEPT_TILES = 1024


def parse_tile(code: str, where: str, num_edges: int = 6) -> Tile:
    """Parse a tile code; ``where`` names the cell in errors. A board repeats
    its codes (stress-c2c-size-8: 48 codes on 372 cells) and a game's
    positions share them, so each is parsed once and its tile, which
    nothing changes, shared: reading that board took 36 ms, 23 of them
    parsing."""
    if not isinstance(code, str):
        raise PositionError(where, "code must be a string")
    try:
        return _parsed(code, num_edges)
    except PositionError:
        return _parse(code, where, num_edges)  # again, to name the cell


@lru_cache(maxsize=KEPT_TILES)
def _parsed(code: str, num_edges: int) -> Tile:
    return _parse(code, "", num_edges)


def _parse(code: str, where: str, num_edges: int) -> Tile:
    nodes: list[TileNode] = []
    raw_paths: list[tuple[dict[str, str], str]] = []
    borders: list[int] = []
    for part_text in filter(None, (p.strip() for p in code.split(";"))):
        part, _, body = part_text.partition("=")
        part = part.strip()
        pwhere = f"{where} part {part_text!r}"
        if part in IGNORED_PARTS:
            continue
        if part in UNSUPPORTED_PARTS:
            raise PositionError(pwhere, f"tile part {part!r} is not supported")
        if part not in PART_KEYS:
            raise PositionError(pwhere, f"unknown tile part {part!r}")
        params = _params(body, part, pwhere)
        if part in NODE_TYPES:
            nodes.append(_node(len(nodes), part, params, pwhere))
        elif part == "path":
            raw_paths.append((params, pwhere))
        elif part == "border":
            if "edge" not in params:
                raise PositionError(pwhere, "border needs an edge")
            edge = _edge(params["edge"], pwhere, num_edges)
            if params.get("type") == "impassable":
                borders.append(edge)
    paths = []
    for params, pwhere in raw_paths:
        paths.extend(_paths(params, pwhere, len(nodes), num_edges))
    return Tile(tuple(nodes), tuple(paths), tuple(borders))


def _edge(text: str, where: str, num_edges: int) -> int:
    edge = _int(text, where, "edge")
    if not 0 <= edge < num_edges:
        raise PositionError(where, f"edge {edge} out of range 0-{num_edges - 1}")
    return edge


def _node(index: int, part: str, params: dict[str, str], where: str) -> TileNode:
    revenue = Revenue.parse(params["revenue"], where) if "revenue" in params else Revenue()
    slots = 0
    if part in ("city", "offboard"):
        slots = _int(params.get("slots", "1" if part == "city" else "0"), where, "slots", 0, MAX_SLOTS)
    groups = tuple(filter(None, params.get("groups", "").split("|")))
    goods = tuple(params["goods"].split("|")) if params.get("goods") else ()
    if "" in goods:
        raise PositionError(where, f"goods:{params['goods']} lists an empty cube colour")
    served = params.get("served", "0")
    if served not in ("0", "1", "false", "true"):
        raise PositionError(where, f"served:{served} is neither 1 (served) nor 0")
    return TileNode(
        index=index,
        type=part,
        revenue=revenue,
        slots=slots,
        groups=groups,
        kind=params.get("kind") or None,
        color=params.get("color"),
        goods=goods,
        served=served in ("1", "true"),
    )


def _end(text: str | None, key: str, where: str, num_nodes: int, num_edges: int) -> PathEnd:
    if text is None:
        raise PositionError(where, f"path needs '{key}'")
    if text.startswith("_"):
        node = _int(text[1:], where, key, 0, MAX_REVENUE)
        if not 0 <= node < num_nodes:
            raise PositionError(where, f"path {key}:{text} names a missing node (tile has {num_nodes})")
        return PathEnd(node=node)
    return PathEnd(edge=_edge(text, where, num_edges))


def _paths(params: dict[str, str], where: str, num_nodes: int, num_edges: int) -> list[TilePath]:
    """One path, or one per lane for ``lanes:n``."""
    if params.get("ignore", "0") not in ("0", "false"):
        return []
    a = _end(params.get("a"), "a", where, num_nodes, num_edges)
    b = _end(params.get("b"), "b", where, num_nodes, num_edges)
    track = params.get("track", "broad")
    if track == THIN:
        return []
    if track not in TRACKS:
        raise PositionError(where, f"unknown track {track!r} (broad, narrow, dual or thin)")
    terminal = params.get("terminal", "0") not in ("0", "false")
    lanes = _int(params.get("lanes", "1"), where, "lanes", 1, MAX_LANES)
    a_lane, b_lane = _lane(params.get("a_lane"), where), _lane(params.get("b_lane"), where)
    if "lanes" in params:  # as 18xx.games reads it: lanes:n numbers the lanes itself
        a_lane = b_lane = None
    # Each edge counts its lanes in its own sense, so a track running from
    # edge to edge on lane i arrives on lane n - 1 - i: parallel tracks stay
    # side by side (as the 18xx.games tile language reads ``lanes:n``).
    across = a.edge is not None and b.edge is not None
    out = []
    for i in range(lanes):
        ends = []
        for end, explicit, index in ((a, a_lane, i), (b, b_lane, lanes - 1 - i if across else i)):
            if end.edge is not None:
                width, index = explicit if explicit else (lanes, index)
                end = PathEnd(edge=end.edge, lane_width=width, lane_index=index)
            ends.append(end)
        out.append(TilePath(ends[0], ends[1], terminal, track))
    return out
