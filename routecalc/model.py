"""Reading a position: JSON to a checked :class:`~routecalc.board.Position`.

:func:`load_position` reads the JSON of ``position-format.md`` (or the
corpus wrapper ``{"position": ..., "reference": ...}``) and checks all of it;
any problem is a :class:`~routecalc.errors.PositionError` naming the field or
cell. The result is immutable and game-agnostic except for ``rules``, the
rule set that the game name selects.
"""

from __future__ import annotations

import json
from pathlib import Path as FilePath
from typing import Any

from .board import Cell, End, Node, Path, Position
from .errors import PositionError
from .geometry import Grid
from .rules import get_rules
from .tiles import PathEnd, Tile, parse_tile

TOP_KEYS = {"format", "game", "layout", "axes", "phase", "hexes", "company", "trains", "options"}
CELL_KEYS = {"id", "tile", "code", "rotation", "tokens", "neighbors", "terrain"}
TERRAINS = {"forest", "mountain", "barrens", "plain"}


def read_json(source: str | bytes | FilePath) -> Any:
    """Read JSON from a file path or a string, with a clear error."""
    try:
        if isinstance(source, FilePath):
            text = source.read_text()
        else:
            text = source
        return json.loads(text)
    except FileNotFoundError:
        raise PositionError(str(source), "file not found") from None
    except OSError as exc:
        raise PositionError(str(source), f"cannot read: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        # a file is named, so that the reader knows which of several inputs is wrong
        where = str(source) if isinstance(source, FilePath) else "json"
        raise PositionError(where, f"invalid JSON: {exc}") from None


def unwrap(data: Any) -> dict:
    """Accept a bare position or the corpus wrapper ``{"position", "reference"}``."""
    if isinstance(data, dict) and "position" in data and "hexes" not in data:
        data = data["position"]
    if not isinstance(data, dict):
        raise PositionError("position", "must be a JSON object")
    return data


def load_position(data: Any) -> Position:
    """Check and build a position from parsed JSON (bare or wrapped)."""

    data = unwrap(data)
    for key in data:
        if key not in TOP_KEYS:
            raise PositionError(key, "unknown top-level key")
    for key in ("format", "game", "layout", "phase", "hexes", "company", "trains"):
        if key not in data:
            raise PositionError(key, "missing")
    if data["format"] != 1 or not isinstance(data["format"], int) or isinstance(data["format"], bool):
        raise PositionError("format", f"unsupported format {data['format']!r} (only 1)")
    rules = get_rules(data["game"])
    grid = Grid.make(data["layout"], data.get("axes"))
    phase = data["phase"]
    if not isinstance(phase, dict) or not isinstance(phase.get("colors"), list) \
            or not all(isinstance(c, str) for c in phase["colors"]):
        raise PositionError("phase", "must be {\"name\": ..., \"colors\": [\"yellow\", ...]}")
    company = data["company"]
    if not isinstance(company, str) and not (company is None and not rules.has_companies):
        raise PositionError("company", "must be a string")
    hexes = data["hexes"]
    if not isinstance(hexes, list):
        raise PositionError("hexes", "must be a list of cells")

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
        cells[cid] = _build_cell(cid, cell, grid, rules, by_coords, cells_raw, nodes, node_index, paths)

    trains_raw = data["trains"]
    if not isinstance(trains_raw, list):
        raise PositionError("trains", "must be a list")
    trains = [rules.parse_train(t, f"trains[{i}]") for i, t in enumerate(trains_raw)]
    options = data.get("options")
    options = {} if options is None else options
    if not isinstance(options, dict):
        raise PositionError("options", "must be an object")
    position = Position(
        game=data["game"], rules=rules, grid=grid,
        phase_name=str(phase.get("name", "")), phase_colors=tuple(phase["colors"]),
        cells=cells, nodes=nodes, node_index=node_index, paths=paths,
        company=company, trains=trains, options={}, raw=data)
    position.options = rules.parse_options(options, position)
    rules.check_position(position)
    return position


def _build_cell(cid, cell, grid, rules, by_coords, cells_raw, nodes, node_index, paths) -> Cell:
    where = f"cell {cid}"
    code = cell.get("code")
    if code is None:
        raise PositionError(where, "missing 'code'")
    rotation = cell.get("rotation", 0)
    if isinstance(rotation, bool) or not isinstance(rotation, int) or not 0 <= rotation < grid.num_edges:
        raise PositionError(where, f"rotation {rotation!r} out of range 0-{grid.num_edges - 1}")
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
            try:
                edge = int(edge_text)
            except (TypeError, ValueError):
                edge = -1
            if not 0 <= edge < grid.num_edges:
                raise PositionError(where, f"neighbors edge {edge_text!r} out of range")
            if not isinstance(other, str) or other not in cells_raw:
                raise PositionError(where, f"neighbors[{edge_text}] names missing cell {other!r}")
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
        raise PositionError(where, f"unknown terrain {terrain!r}")

    tokens = _tokens(cell.get("tokens"), tile, where)
    base = len(nodes)
    city_no = 0
    holders = tile.token_holders
    for tn in tile.nodes:
        node_tokens: tuple = ()
        if tn in holders:
            node_tokens = tokens[city_no]
            city_no += 1
        node = Node(id=f"{cid}-{tn.index}", cell=cid, index=tn.index, type=tn.type,
                    revenue=tn.revenue, slots=tn.slots, tokens=node_tokens, groups=tn.groups,
                    kind=tn.kind, color=tn.color, goods=tn.goods, served=tn.served)
        node_index[node.id] = len(nodes)
        nodes.append(node)

    def board_end(end: PathEnd) -> End:
        if end.node is not None:
            return End(node=base + end.node)
        return End(edge=grid.rotate(end.edge, rotation), lane=(end.lane_width, end.lane_index))

    for i, tp in enumerate(tile.paths):
        paths.append(Path(cid, i, board_end(tp.a), board_end(tp.b), tp.terminal, tp.track))
    return Cell(id=cid, x=x, y=y, rotation=rotation, tile_name=cell.get("tile"), code=code,
                tile=tile, neighbors=neighbors,
                blocked_edges=frozenset(grid.rotate(e, rotation) for e in tile.borders),
                nodes=tuple(range(base, len(nodes))), terrain=terrain)


def _tokens(raw, tile: Tile, where: str) -> list[tuple]:
    cities = tile.token_holders
    if raw is None:
        return [(None,) * c.slots for c in cities]
    if not isinstance(raw, list) or len(raw) != len(cities):
        offboards = sum(c.type == "offboard" for c in cities)
        raise PositionError(where, f"tokens must be one list per city: the code has {len(cities) - offboards} cities"
                                   + (f" and {offboards} offboards with slots" if offboards else ""))
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
