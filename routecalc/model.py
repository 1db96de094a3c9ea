"""Reading a position: JSON to a checked :class:`~routecalc.board.Position`.

:func:`load_position` reads the JSON of ``position-format.md`` (or the
corpus wrapper ``{"position": ..., "reference": ...}``) and checks all of it;
any problem is a :class:`~routecalc.errors.PositionError` naming the field or
cell. The result is immutable and game-agnostic except for ``rules``, the
rule set that the game name selects.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path as FilePath
from typing import Any

from . import deadline
from .board import Cell, End, Node, Path, Position
from .errors import PositionError, article, shown
from .geometry import Grid
from .rules import get_rules
from .tiles import TILE_COLOURS, PathEnd, Tile, parse_tile, unknown_colour

TOP_KEYS = {"format", "game", "layout", "axes", "phase", "hexes", "company", "trains", "options"}
PHASE_KEYS = {"name", "colors"}
CELL_KEYS = {"id", "tile", "code", "rotation", "tokens", "neighbors", "terrain"}
TERRAINS = {"forest", "mountain", "barrens", "plain"}
EDGE_KEYS = frozenset("012345")  # the keys of a cell's neighbors


#: Limits of what is read (position-format.md, "Limits"): beyond them a
#: named PositionError, never a deep recursion, a huge number or a long run.
MAX_DEPTH = 32  # nesting of arrays and objects
MAX_DIGITS = 30  # characters of one JSON number
MAX_INT = 10**9  # magnitude of any whole number
MAX_STRING = 10_000  # characters of one string (a tile code: MAX_CODE)
MAX_ITEMS = 20_000  # entries of one array or object
MAX_CELLS = 2_000  # cells of a board
MAX_TRAINS = 20  # trains of a company (and so routes of a route set)
MAX_CODE = 1_000  # characters of a tile code
#: Bytes of one JSON file read: far above the largest board the limits above
#: allow, so that a file that never ends (/dev/zero, a pipe) is refused
#: before it fills the memory.
MAX_FILE_BYTES = 64_000_000


def read_json(source: str | bytes | FilePath, field: str = "") -> Any:
    """Read JSON from a file path, bytes or a string, with a clear error and
    within the limits above (a ``where`` naming the field beyond one).
    ``field``: what the whole text is, in those names (a routes file:
    ``routes``, so that ``routes[0].train`` is named as the API names it)."""
    where = str(source) if isinstance(source, FilePath) else "json"
    try:
        if isinstance(source, FilePath):
            with source.open("rb") as file:
                text: str | bytes = file.read(MAX_FILE_BYTES + 1)
            if len(text) > MAX_FILE_BYTES:
                raise PositionError(where, f"over {MAX_FILE_BYTES:,} bytes: not a position or routes file")
        else:
            text = source
        if isinstance(text, bytes):
            text = text.decode("utf-8-sig")  # a BOM-led file or body read as json.loads reads bytes
        data = json.loads(text, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant)
    except FileNotFoundError:
        raise PositionError(str(source), "file not found") from None
    except OSError as exc:
        raise PositionError(str(source), f"cannot read: {exc.strerror or exc}") from None
    except RecursionError:
        raise PositionError(where, f"invalid JSON: nested deeper than {MAX_DEPTH} levels") from None
    except _NumberError as exc:
        raise PositionError(where, f"invalid JSON: {exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        # a file is named, so that the reader knows which of several inputs is wrong
        raise PositionError(where, f"invalid JSON: {exc}") from None
    check_json(data, field)
    return data


class _NumberError(ValueError):
    pass


class _BadNumber:
    """A JSON number past MAX_DIGITS characters or past a float's range, left
    unread: :func:`check_json` refuses it naming its field, as it names any
    number out of range (and as :mod:`routecalc.api` does for parsed JSON)."""

    def __init__(self, message: str):
        self.message = message


def _json_int(text: str) -> int | _BadNumber:
    digits = len(text) - text.startswith("-")
    if digits > MAX_DIGITS:
        return _BadNumber(_too_many_digits(str(digits)))
    return int(text)


def _too_many_digits(digits: str) -> str:
    """The one message for a whole number past MAX_DIGITS digits, read from
    JSON text (:func:`read_json`) or given parsed (:func:`check_json`)."""
    return f"a number of {digits} digits (at most {MAX_DIGITS})"


def _digits(value: int) -> str:
    """How many decimal digits ``value`` has, its sign not counted (past the
    4,300 digits Python writes out, an estimate: "some 5000")."""
    try:
        return str(len(str(abs(value))))
    except ValueError:
        return f"some {int(value.bit_length() * 0.30103) + 1}"


def _json_float(text: str) -> float | _BadNumber:
    if len(text) > MAX_DIGITS:
        return _BadNumber(f"a number of {len(text)} characters (at most {MAX_DIGITS})")
    value = float(text)
    if not math.isfinite(value):
        return _BadNumber(f"number {text} out of range (at most {MAX_INT:,} either way)")
    return value


def _json_constant(text: str) -> Any:
    raise _NumberError(f"{text} is not JSON")


def check_json(data: Any, where: str = "", drawn: bool = False) -> None:
    """Refuse what the engine must never meet, naming the field: nesting past
    MAX_DEPTH, whole numbers past MAX_INT, numbers that are not finite, strings
    past MAX_STRING or not valid Unicode (lone surrogates), arrays and objects
    past MAX_ITEMS, and anything that is not JSON (positions built in Python).
    ``drawn``: text that reaches a drawn board (a position's), where a
    control character XML cannot hold is refused too. A wrapper's position
    (:func:`is_wrapper`) is named as :func:`load_position` names it: ``company``,
    not ``position.company``."""
    if not where and is_wrapper(data):
        check_beside(data, drawn)
        position = data["position"]
        check_json(position, "" if isinstance(position, dict) else "position", drawn)
        return
    stack: list[tuple[Any, str, int]] = [(data, where, 0)]
    while stack:
        value, at, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise PositionError(at or "json", f"nested deeper than {MAX_DEPTH} levels")
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, int):
            if abs(value) >= 10**MAX_DIGITS:  # as read_json names it in JSON text
                raise PositionError(at or "json", _too_many_digits(_digits(value)))
            if not -MAX_INT <= value <= MAX_INT:
                raise PositionError(
                    at or "json", f"number {_short(value)} out of range (at most {MAX_INT:,} either way)"
                )
        elif isinstance(value, float):
            if not math.isfinite(value) or abs(value) > MAX_INT:
                raise PositionError(at or "json", f"number {value!r} out of range (at most {MAX_INT:,} either way)")
        elif isinstance(value, str):
            _check_string(value, at, drawn)
        elif isinstance(value, _BadNumber):
            raise PositionError(at or "json", value.message)
        elif isinstance(value, (list, dict)):
            if len(value) > MAX_ITEMS:
                raise PositionError(at or "json", f"{len(value):,} entries (at most {MAX_ITEMS:,})")
            if isinstance(value, list):
                stack.extend((item, f"{at}[{i}]", depth + 1) for i, item in enumerate(value))
            else:
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise PositionError(at or "json", f"key {_short(key)} is not a string")
                    _check_string(key, f"{at} key" if at else "a key", drawn)
                    stack.append((item, f"{at}.{key}" if at else key, depth + 1))
        else:
            raise PositionError(at or "json", f"{article(type(value).__name__)} is not a JSON value")


def check_beside(wrapper: dict, drawn: bool = False) -> None:
    """:func:`check_json` on a wrapper's entries beside its position (the
    corpus ``reference``, a service body's ``routes``), each named by its key:
    the one check of them, whether the wrapper came as JSON text
    (:func:`read_json`) or parsed (:func:`load_position`)."""
    check_json({k: v for k, v in wrapper.items() if k != "position"}, drawn=drawn)


#: Characters XML 1.0 cannot hold (every C0 control but tab, line feed and
#: carriage return, and U+FFFE/U+FFFF): text of a position reaches the SVG.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _check_string(value: str, at: str, drawn: bool) -> None:
    if len(value) > MAX_STRING:
        raise PositionError(at or "json", f"a string of {len(value):,} characters (at most {MAX_STRING:,})")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PositionError(
            at or "json",
            f"a string holding a lone surrogate U+{ord(value[exc.start]):04X} at "
            f"character {exc.start} (not valid Unicode)",
        ) from None
    bad = _CONTROL.search(value) if drawn else None
    if bad:
        raise PositionError(
            at or "json",
            f"a string holding the control character U+{ord(bad.group()):04X} at character {bad.start()} "
            "(drawn boards are XML, which cannot hold it)",
        )


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**MAX_DIGITS else f"of {_digits(value)} digits"
    return text if len(text) <= 40 else text[:37] + "..."


def is_wrapper(data: Any) -> bool:
    """Whether ``data`` holds a position under ``position`` (the corpus wrapper,
    a service body) rather than being one."""
    return isinstance(data, dict) and "position" in data and "hexes" not in data


def unwrap(data: Any) -> dict:
    """Accept a bare position or the corpus wrapper ``{"position", "reference"}``."""
    if is_wrapper(data):
        for key in data:
            if key not in ("position", "reference"):
                raise PositionError(key, "unknown key of the corpus wrapper (position, reference)")
        data = data["position"]
    if not isinstance(data, dict):
        raise PositionError("position", "must be a JSON object")
    return data


class Whole(int):
    """A whole number written with a fraction part (``1.0``): the int every
    field reads, shown in a message as written (``repr``: ``1.0``, so that a
    refusal does not quote a ``1`` the input never held); ``str``, arithmetic
    and JSON give the plain int."""

    def __repr__(self) -> str:
        return repr(float(self))

    def __str__(self) -> str:
        return int.__repr__(self)


def whole_numbers(data: Any) -> Any:
    """``data`` with every float of whole value as an int (a :class:`Whole`):
    JSON has one kind of number, so ``1.0`` is the ``1`` a field wants (JSON
    Schema reads it so too). No field of a position takes a fraction. Copies
    only the containers that change; ``data`` must have passed
    :func:`check_json` (bounded depth)."""
    if isinstance(data, float):
        return Whole(data) if data.is_integer() else data
    if isinstance(data, list):
        items = [whole_numbers(v) for v in data]
        return data if all(a is b for a, b in zip(items, data)) else items
    if isinstance(data, dict):
        entries = {k: whole_numbers(v) for k, v in data.items()}
        return data if all(entries[k] is v for k, v in data.items()) else entries
    return data


def load_position(data: Any) -> Position:
    """Check and build a position from parsed JSON (bare or wrapped: the
    wrapper's ``reference`` is not read, but within the limits as any JSON)."""

    if is_wrapper(data):
        check_beside(data)
    data = unwrap(data)
    check_json(data, drawn=True)
    data = whole_numbers(data)
    for key in data:
        if key not in TOP_KEYS:
            raise PositionError(key, "unknown top-level key")
    for key in ("format", "game", "layout", "phase", "hexes", "company", "trains"):
        if key not in data:
            raise PositionError(key, "missing")
    if data["format"] != 1 or not isinstance(data["format"], int) or isinstance(data["format"], bool):
        raise PositionError("format", f"unsupported format {shown(data['format'])} (only 1)")
    rules = get_rules(data["game"])
    grid = Grid.make(data["layout"], data.get("axes"))
    phase = data["phase"]
    if (
        not isinstance(phase, dict)
        or not isinstance(phase.get("colors"), list)
        or not all(isinstance(c, str) for c in phase["colors"])
    ):
        raise PositionError("phase", 'must be {"name": ..., "colors": ["yellow", ...]}')
    for key in phase:
        if key not in PHASE_KEYS:
            raise PositionError("phase", f"unknown key {key!r} (name, colors)")
    if not isinstance(phase.get("name", ""), str):
        raise PositionError("phase.name", "must be a string (free text)")
    for colour in phase["colors"]:
        if colour not in TILE_COLOURS:
            raise PositionError("phase.colors", unknown_colour(colour))
    company = data["company"]
    if not isinstance(company, str) and not (company is None and not rules.has_companies):
        raise PositionError("company", "must be a string")
    hexes = data["hexes"]
    if not isinstance(hexes, list):
        raise PositionError("hexes", "must be a list of cells")
    if len(hexes) > MAX_CELLS:
        raise PositionError("hexes", f"{len(hexes):,} cells (a board has at most {MAX_CELLS:,})")

    cells_raw: dict[str, dict] = {}
    for i, cell in enumerate(hexes):
        if not isinstance(cell, dict):
            raise PositionError(f"hexes[{i}]", "must be an object")
        cid = cell.get("id")
        if not isinstance(cid, str):
            raise PositionError(f"hexes[{i}]", "missing or non-string 'id'")
        grid.coords(cid)
        grid.check_parity(cid, next(iter(cells_raw), cid))
        if cid in cells_raw:
            raise PositionError(f"cell {cid}", "duplicate cell")
        for key in cell:
            if key not in CELL_KEYS:
                raise PositionError(f"cell {cid}", f"unknown key {key!r}")
        cells_raw[cid] = cell

    nodes: list[Node] = []
    node_index: dict[str, int] = {}
    paths: list[Path] = []
    cells: dict[str, Cell] = {}
    by_coords = {grid.coords(cid): cid for cid in cells_raw}
    for cid, cell in cells_raw.items():
        deadline.check("reading the board")
        cells[cid] = _build_cell(cid, cell, grid, rules, by_coords, cells_raw, nodes, node_index, paths)

    trains_raw = data["trains"]
    if not isinstance(trains_raw, list):
        raise PositionError("trains", "must be a list")
    if len(trains_raw) > MAX_TRAINS:
        raise PositionError("trains", f"{len(trains_raw)} trains (a company runs at most {MAX_TRAINS})")
    trains = [rules.parse_train(t, f"trains[{i}]") for i, t in enumerate(trains_raw)]
    options = data.get("options")
    options = {} if options is None else options
    if not isinstance(options, dict):
        raise PositionError("options", "must be an object")
    position = Position(
        game=data["game"],
        rules=rules,
        grid=grid,
        phase_name=phase.get("name", ""),
        phase_colors=tuple(phase["colors"]),
        cells=cells,
        nodes=nodes,
        node_index=node_index,
        paths=paths,
        company=company,
        trains=trains,
        options={},
        raw=data,
    )
    position.options = rules.parse_options(options, position)
    rules.check_position(position)
    return position


def _build_cell(cid, cell, grid, rules, by_coords, cells_raw, nodes, node_index, paths) -> Cell:
    where = f"cell {cid}"
    code = cell.get("code")
    if code is None:
        raise PositionError(where, "missing 'code'")
    if isinstance(code, str) and len(code) > MAX_CODE:
        raise PositionError(where, f"a tile code of {len(code):,} characters (at most {MAX_CODE:,})")
    rotation = cell.get("rotation", 0)
    if isinstance(rotation, bool) or not isinstance(rotation, int) or not 0 <= rotation < grid.num_edges:
        raise PositionError(where, f"rotation {shown(rotation)} out of range 0-{grid.num_edges - 1}")
    tile = parse_tile(code, where, grid.num_edges)
    for node in tile.nodes:
        if node.kind is not None and node.kind not in rules.kinds:
            raise PositionError(where, f"kind {node.kind!r} has no meaning in {rules.name}")
        if node.type == "offboard" and node.slots and not rules.offboard_tokens:
            raise PositionError(where, f"offboards hold no tokens in {rules.name} (slots on an offboard)")

    x, y = grid.coords(cid)
    override = cell.get("neighbors")
    neighbors: dict[int, str] = {}
    if override is not None:
        if not isinstance(override, dict):
            raise PositionError(where, "neighbors must be an object {edge: cell}")
        for edge_text, other in override.items():
            # the edge as written: "3", never "03" or " 3" (one spelling, as the schema's pattern)
            edge = int(edge_text) if edge_text in EDGE_KEYS else -1
            if not 0 <= edge < grid.num_edges:
                raise PositionError(where, f"neighbors edge {edge_text!r} out of range")
            if not isinstance(other, str) or other not in cells_raw:
                raise PositionError(where, f"neighbors[{edge_text}] names missing cell {other!r}")
            twice = next((e for e, c in neighbors.items() if c == other), None)
            if twice is not None:  # track leaving by either edge would enter the other cell at one side
                met = f"on edges {twice} and {edge} (two cells meet on one edge)"
                raise PositionError(where, f"neighbors names cell {other!r} {met}")
            neighbors[edge] = other
    else:
        for edge in range(grid.num_edges):
            other = by_coords.get(grid.neighbor_coords(x, y, edge))
            if other is not None:
                neighbors[edge] = other

    if cell.get("tile") is not None and not isinstance(cell["tile"], str):
        raise PositionError(where, "tile (the tile's name) must be a string")
    terrain = cell.get("terrain")
    if terrain is not None and (not isinstance(terrain, str) or terrain not in TERRAINS):
        raise PositionError(where, f"unknown terrain {shown(terrain)}")

    tokens = _tokens(cell.get("tokens"), tile, where)
    base = len(nodes)
    city_no = 0
    holders = tile.token_holders
    for tn in tile.nodes:
        node_tokens: tuple = ()
        if tn in holders:
            node_tokens = tokens[city_no]
            city_no += 1
        node = Node(
            id=f"{cid}-{tn.index}",
            cell=cid,
            index=tn.index,
            type=tn.type,
            revenue=tn.revenue,
            slots=tn.slots,
            tokens=node_tokens,
            groups=tn.groups,
            kind=tn.kind,
            color=tn.color,
            goods=tn.goods,
            served=tn.served,
        )
        node_index[node.id] = len(nodes)
        nodes.append(node)

    def board_end(end: PathEnd) -> End:
        if end.node is not None:
            return End(node=base + end.node)
        return End(edge=grid.rotate(end.edge, rotation), lane=(end.lane_width, end.lane_index))

    for i, tp in enumerate(tile.paths):
        paths.append(Path(cid, i, board_end(tp.a), board_end(tp.b), tp.terminal, tp.track))
    return Cell(
        id=cid,
        x=x,
        y=y,
        rotation=rotation,
        tile_name=cell.get("tile"),
        code=code,
        tile=tile,
        neighbors=neighbors,
        blocked_edges=frozenset(grid.rotate(e, rotation) for e in tile.borders),
        nodes=tuple(range(base, len(nodes))),
        terrain=terrain,
    )


def _tokens(raw, tile: Tile, where: str) -> list[tuple]:
    cities = tile.token_holders
    if raw is None:
        return [(None,) * c.slots for c in cities]
    if not isinstance(raw, list) or len(raw) != len(cities):
        offboards = sum(c.type == "offboard" for c in cities)
        raise PositionError(
            where,
            f"tokens must be one list per city: the code has {len(cities) - offboards} cities"
            + (f" and {offboards} offboards with slots" if offboards else ""),
        )
    out = []
    for i, (slots, city) in enumerate(zip(raw, cities)):
        if not isinstance(slots, list) or not all(t is None or isinstance(t, str) for t in slots):
            raise PositionError(where, f"tokens[{i}] must be a list of company ids or null")
        if len(slots) != city.slots:
            raise PositionError(where, f"tokens[{i}] has {len(slots)} entries but city {i} has {city.slots} slots")
        out.append(tuple(slots))
    return out


def load_position_file(path: str | FilePath) -> Position:
    return load_position(read_json(FilePath(path)))
