"""Draw a position, and optionally its routes, as an SVG board.

The board is drawn the way 18xx players know it: flat or pointy hexagons
(or squares) with their coordinates, track from edge midpoints to the stops
(narrow gauge thin and dashed, dual gauge broad with a dashed core),
cities with their token slots and tokens, towns, offboards with their
revenues by phase, impassable borders. Each route is one polyline in its
own colour that follows the track it uses, with its train and revenue in a
legend.

Geometry comes from the board's own neighbour table (``EDGE_DELTAS``): the
midpoint of edge ``e`` lies half way to the neighbour's centre, so every
layout and rotation is drawn by the same code. The SVG is built with
``xml.etree`` (text is escaped by it); elements carry classes (``cell``,
``track``, ``city``, ``route``, ``legend-entry``) and ``data-*`` attributes
so that tests and pages can find them.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import Any

from . import deadline
from .geometry import EDGE_DELTAS
from .graph import TrackGraph, compile_position
from .model import Cell, End, Node, Path, Position
from .tiles import Revenue, is_colour_word

Point = tuple[float, float]

R = 40.0  # hexagon circumradius in px; squares have side 2 * SQUARE_HALF
SQUARE_HALF = 36.0
MARGIN = 12.0
LEGEND_WIDTH = 250.0
LEGEND_CHARS = 44  # stop-list characters that fit the legend's width
LANE_GAP = 9.0
TRANSPORT_GAP = 6.0  # px between 18XS transports drawn over the same cells (their lines are 5 wide)

#: Route colours, distinct on the board's greens, beiges and reds.
ROUTE_COLOURS = (
    "#e6194b",
    "#4363d8",
    "#f58231",
    "#911eb4",
    "#3cb44b",
    "#f032e6",
    "#008080",
    "#9a6324",
    "#000075",
    "#808000",
)
#: Fill of the revenue boxes of multi-colour stops, by phase colour.
PHASE_FILLS = {
    "yellow": "#fde900",
    "green": "#71bf44",
    "brown": "#cb7745",
    "gray": "#bcbdc0",
    "grey": "#bcbdc0",
    "diesel": "#9bd",
    "white": "#fff",
}
TERRAIN_FILLS = {"forest": "#9cc58a", "mountain": "#c9b18f", "barrens": "#e7dcb4", "plain": "#dfeccd"}

STYLE = """
.cell-shape { stroke: #777; stroke-width: 1; }
.cell-blank { fill: #d6e6c3; } .cell-track { fill: #f3edd5; } .cell-offboard { fill: #e0614f; }
.track { fill: none; stroke-linecap: round; }
.track-broad { stroke: #222; stroke-width: 8; }
.track-narrow { stroke: #222; stroke-width: 3.5; stroke-dasharray: 7 4; }
.track-dual { stroke: #222; stroke-width: 9; }
.track-dual-core { fill: none; stroke: #f3edd5; stroke-width: 3; stroke-dasharray: 7 4; }
.border { stroke: #d00; stroke-width: 5; stroke-linecap: round; }
.slot { fill: #fff; stroke: #222; stroke-width: 1.5; }
.token-text { font-size: 7px; font-weight: bold; text-anchor: middle; dominant-baseline: central; fill: #fff; }
.town { fill: #222; }
.demand { fill: none; stroke-width: 3; }
.demand.served { stroke-dasharray: 3 2; stroke-opacity: 0.5; }
.cube { stroke: #222; stroke-width: 1; }
.revenue-bubble { fill: #fff; stroke: #222; stroke-width: 1; }
.revenue-text { fill: #000; font-size: 9px; text-anchor: middle; dominant-baseline: central; }
.coord { font-size: 9px; fill: #333; text-anchor: middle; dominant-baseline: central; }
.tile-name { font-size: 7px; fill: #666; text-anchor: middle; dominant-baseline: central; }
.route { fill: none; stroke-width: 5; stroke-linecap: round; stroke-linejoin: round; stroke-opacity: 0.85; }
.legend-title { font-size: 13px; font-weight: bold; }
.legend-text { font-size: 11px; }
.legend-stops { font-size: 8.5px; fill: #444; }
"""


class BoardGeometry:
    """Pixel positions of cell centres, corners and edge midpoints for one layout."""

    def __init__(self, layout: str):
        self.layout = layout
        self.deltas = EDGE_DELTAS[layout]
        if layout == "flat":
            self.scale = (1.5 * R, math.sqrt(3) / 2 * R)
            self.corner_angles = [60.0 * k for k in range(6)]
            self.radius, self.side = R, R
        elif layout == "pointy":
            self.scale = (math.sqrt(3) / 2 * R, 1.5 * R)
            self.corner_angles = [30.0 + 60.0 * k for k in range(6)]
            self.radius, self.side = R, R
        else:
            self.scale = (2 * SQUARE_HALF, 2 * SQUARE_HALF)
            self.corner_angles = [45.0 + 90.0 * k for k in range(4)]
            self.radius, self.side = SQUARE_HALF * math.sqrt(2), 2 * SQUARE_HALF

    def center(self, cell: Cell) -> Point:
        return cell.x * self.scale[0], cell.y * self.scale[1]

    @property
    def apothem(self) -> float:
        dx, dy = self.deltas[0]
        return math.hypot(dx * self.scale[0], dy * self.scale[1]) / 2

    def corners(self, c: Point) -> list[Point]:
        return [
            (c[0] + self.radius * math.cos(math.radians(a)), c[1] + self.radius * math.sin(math.radians(a)))
            for a in self.corner_angles
        ]

    def edge_mid(self, c: Point, edge: int) -> Point:
        dx, dy = self.deltas[edge]
        return c[0] + dx * self.scale[0] / 2, c[1] + dy * self.scale[1] / 2

    def inward(self, edge: int) -> Point:
        """Unit vector from edge ``edge``'s midpoint towards the centre."""
        dx, dy = self.deltas[edge]
        px, py = dx * self.scale[0], dy * self.scale[1]
        n = math.hypot(px, py)
        return -px / n, -py / n

    def edge_ends(self, c: Point, edge: int) -> tuple[Point, Point]:
        m = self.edge_mid(c, edge)
        ix, iy = self.inward(edge)
        h = self.side / 2
        return (m[0] - iy * h, m[1] + ix * h), (m[0] + iy * h, m[1] - ix * h)

    def lane_point(self, c: Point, edge: int, lane: tuple[int, int]) -> Point:
        """The point where lane ``lane`` (width, index) of a track meets the edge."""
        m = self.edge_mid(c, edge)
        width, index = lane
        offset = (index - (width - 1) / 2) * LANE_GAP
        ix, iy = self.inward(edge)
        return m[0] - iy * offset, m[1] + ix * offset


def _fmt(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _points(points: Iterable[Point]) -> str:
    return " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in points)


def _sub(parent: ET.Element, tag: str, attrs: dict[str, Any] | None = None, text: str | None = None) -> ET.Element:
    el = ET.SubElement(
        parent,
        tag,
        {k: (_fmt(v) if isinstance(v, float) else str(v)) for k, v in (attrs or {}).items() if v is not None},
    )
    if text is not None:
        el.text = text
    return el


def css_colour(name: str) -> str:
    """A colour named in a position (18XS goods) as CSS: a word of letters
    only, so that no value reaches the style attribute as ``url(...)``."""
    return name if is_colour_word(name) else "#999"


def company_colour(company: str | None) -> str:
    """A stable colour per company id (token fills)."""
    if company is None:
        return "#fff"
    h = sum((i + 1) * ord(ch) for i, ch in enumerate(company)) % 360
    return f"hsl({h},55%,38%)"


class BoardDrawing:
    """Positions of every node, and the shape of every path, of one board."""

    def __init__(self, position: Position):
        self.position = position
        self.geo = BoardGeometry(position.grid.layout)
        self.centers = {cid: self.geo.center(cell) for cid, cell in position.cells.items()}
        self.paths_of: dict[str, list[Path]] = {cid: [] for cid in position.cells}
        for p in position.paths:
            self.paths_of[p.cell].append(p)
        self.node_pos: dict[int, Point] = {}
        for cell in position.cells.values():
            deadline.check("placing the board's nodes")
            self._place_nodes(cell)

    def _place_nodes(self, cell: Cell) -> None:
        """One stop sits at the centre; several are pulled towards their edges."""
        c = self.centers[cell.id]
        nodes = list(cell.nodes)
        if len(nodes) == 1:
            self.node_pos[nodes[0]] = c
            return
        edges: dict[int, list[int]] = {n: [] for n in nodes}
        for p in self.paths_of[cell.id]:
            for end, other in ((p.a, p.b), (p.b, p.a)):
                if end.node is not None and other.edge is not None:
                    edges[end.node].append(other.edge)
        ring = 0.42 * self.geo.apothem
        placed: list[Point] = []
        for k, n in enumerate(nodes):
            if edges[n]:
                mids = [self.geo.edge_mid(c, e) for e in edges[n]]
                mx = sum(m[0] for m in mids) / len(mids)
                my = sum(m[1] for m in mids) / len(mids)
                pos = (c[0] + 0.55 * (mx - c[0]), c[1] + 0.55 * (my - c[1]))
            else:
                pos = c
            if any(math.dist(pos, q) < 0.5 * self.geo.apothem for q in placed):
                angle = math.pi * (1 + 2 * k / len(nodes))
                pos = (c[0] + ring * math.cos(angle), c[1] + ring * math.sin(angle))
            placed.append(pos)
            self.node_pos[n] = pos

    def end_point(self, path: Path, end: End) -> Point:
        if end.node is not None:
            return self.node_pos[end.node]
        return self.geo.lane_point(self.centers[path.cell], end.edge, end.lane)

    def control(self, path: Path) -> Point | None:
        """Bezier control point: where the tracks leaving both edges square-on would meet."""
        a, b = self.end_point(path, path.a), self.end_point(path, path.b)
        if path.a.edge is not None and path.b.edge is not None:
            (ax, ay), (bx, by) = self.geo.inward(path.a.edge), self.geo.inward(path.b.edge)
            det = ax * (-by) - ay * (-bx)
            if abs(det) < 1e-9:
                return None  # opposite edges: a straight line
            rx, ry = b[0] - a[0], b[1] - a[1]
            t = (rx * (-by) - ry * (-bx)) / det
            return a[0] + t * ax, a[1] + t * ay
        for end, point in ((path.a, a), (path.b, b)):
            if end.edge is not None:
                other = b if point is a else a
                ix, iy = self.geo.inward(end.edge)
                reach = 0.5 * math.dist(point, other)
                return point[0] + ix * reach, point[1] + iy * reach
        return None

    def path_d(self, path: Path) -> str:
        a, b = self.end_point(path, path.a), self.end_point(path, path.b)
        ctrl = self.control(path)
        if ctrl is None:
            return f"M{_fmt(a[0])} {_fmt(a[1])} L{_fmt(b[0])} {_fmt(b[1])}"
        return f"M{_fmt(a[0])} {_fmt(a[1])} Q{_fmt(ctrl[0])} {_fmt(ctrl[1])} {_fmt(b[0])} {_fmt(b[1])}"

    def path_points(self, path: Path, steps: int = 8) -> list[Point]:
        """Points along the path from end ``a`` to end ``b``."""
        a, b = self.end_point(path, path.a), self.end_point(path, path.b)
        ctrl = self.control(path)
        if ctrl is None:
            return [a, b]
        out = []
        for i in range(steps + 1):
            t = i / steps
            u = 1 - t
            out.append(
                (u * u * a[0] + 2 * u * t * ctrl[0] + t * t * b[0], u * u * a[1] + 2 * u * t * ctrl[1] + t * t * b[1])
            )
        return out


def route_points(drawing: BoardDrawing, graph: TrackGraph, route: dict) -> list[Point]:
    """The polyline of a route along the track it uses (nodes and ``hexes`` pick the connections)."""
    position = graph.position
    num_paths = len(position.paths)
    stops = [graph.stop(n) for n in route["nodes"]]
    hexes = route.get("hexes")
    points: list[Point] = [drawing.node_pos[int(graph.stop_node[stops[0]])]] if stops else []
    for j in range(len(stops) - 1):
        s, t = stops[j], stops[j + 1]
        candidates = graph.connections_between(s, t)
        if hexes is not None:
            candidates = [c for c in candidates if list(graph.oriented_cells(c, s)) == list(hexes[j])] or candidates
        if not candidates:
            points.append(drawing.node_pos[int(graph.stop_node[t])])
            continue
        c = candidates[0]
        pieces = graph.conn_pieces[c] if graph.conn_a[c] == s else tuple(reversed(graph.conn_pieces[c]))
        for p in pieces:
            if p >= num_paths:
                continue  # edge crossings and junctions have no extent of their own
            seg = drawing.path_points(position.paths[p])
            if math.dist(points[-1], seg[-1]) < math.dist(points[-1], seg[0]):
                seg.reverse()
            points.extend(seg[1:] if math.dist(points[-1], seg[0]) < 1e-6 else seg)
    return points


def _revenue_label(revenue: Revenue, phase_colors: tuple[str, ...]) -> str:
    return str(revenue.value(phase_colors))


def _draw_cell(svg: ET.Element, drawing: BoardDrawing, cell: Cell) -> None:
    position, geo = drawing.position, drawing.geo
    c = drawing.centers[cell.id]
    nodes = [position.nodes[i] for i in cell.nodes]
    cell_paths = drawing.paths_of[cell.id]
    kind = "offboard" if any(n.type == "offboard" for n in nodes) else "track" if nodes or cell_paths else "blank"
    g = _sub(svg, "g", {"class": "cell", "data-id": cell.id, "data-kind": kind})
    shape = _sub(g, "polygon", {"class": f"cell-shape cell-{kind}", "points": _points(geo.corners(c))})
    if cell.terrain and kind == "blank":
        shape.set("style", f"fill: {TERRAIN_FILLS[cell.terrain]}")
    for path in cell_paths:
        d = drawing.path_d(path)
        _sub(g, "path", {"class": f"track track-{path.track}", "d": d, "data-gauge": path.track})
        if path.track == "dual":
            _sub(g, "path", {"class": "track-dual-core", "d": d})
    for edge in cell.blocked_edges:
        a, b = geo.edge_ends(c, edge)
        _sub(g, "line", {"class": "border", "x1": a[0], "y1": a[1], "x2": b[0], "y2": b[1]})
    for i, node in zip(cell.nodes, nodes):
        _draw_node(g, drawing, node, drawing.node_pos[i])
    _sub(g, "text", {"class": "coord", "x": c[0], "y": c[1] - 0.76 * geo.apothem}, cell.id)
    if cell.tile_name and cell.tile_name != "blank":
        _sub(
            g,
            "text",
            {"class": "tile-name", "x": c[0] + 0.45 * geo.apothem, "y": c[1] + 0.72 * geo.apothem},
            cell.tile_name,
        )


def _draw_node(g: ET.Element, drawing: BoardDrawing, node: Node, pos: Point) -> None:
    phase = drawing.position.phase_colors
    x, y = pos
    if node.type == "city":
        _draw_city(g, drawing, node, pos)
    elif node.type == "town":
        _sub(g, "circle", {"class": "town", "cx": x, "cy": y, "r": 6.0, "data-node": node.id})
        if node.revenue != Revenue():
            _revenue_bubble(g, (x + 11, y - 10), _revenue_label(node.revenue, phase))
    elif node.type == "offboard":
        ob = _sub(g, "g", {"class": "offboard", "data-node": node.id})
        entries = node.revenue.by_color or (("white", node.revenue.flat),)
        now = node.revenue.value(phase)
        width = 22.0
        x0 = x - width * len(entries) / 2
        for k, (colour, amount) in enumerate(entries):
            edge = "stroke-width: 2.5" if len(entries) > 1 and amount == now else "stroke-width: 1"
            _sub(
                ob,
                "rect",
                {
                    "x": x0 + k * width,
                    "y": y - 9,
                    "width": width,
                    "height": 18,
                    "style": f"fill: {PHASE_FILLS.get(colour, '#fff')}; stroke: #222; {edge}",
                },
            )
            _sub(ob, "text", {"class": "revenue-text", "x": x0 + (k + 0.5) * width, "y": y}, str(amount))


def _revenue_bubble(g: ET.Element, pos: Point, text: str) -> None:
    _sub(g, "circle", {"class": "revenue-bubble", "cx": pos[0], "cy": pos[1], "r": 8.0})
    _sub(g, "text", {"class": "revenue-text", "x": pos[0], "y": pos[1]}, text)


def _slot_offsets(n: int, r: float) -> list[Point]:
    if n <= 1:
        return [(0.0, 0.0)]
    if n == 2:
        return [(-r, 0.0), (r, 0.0)]
    if n == 3:
        return [(-r, r * 0.6), (r, r * 0.6), (0.0, -r * 1.1)]
    if n == 4:
        return [(-r, -r), (r, -r), (-r, r), (r, r)]
    return [((k - (n - 1) / 2) * 2 * r, 0.0) for k in range(n)]


def _draw_city(g: ET.Element, drawing: BoardDrawing, node: Node, pos: Point) -> None:
    company = drawing.position.company
    r = 10.0
    city = _sub(g, "g", {"class": "city", "data-node": node.id, "data-slots": node.slots})
    offsets = _slot_offsets(max(node.slots, 1), r)
    if len(offsets) > 1:
        xs = [pos[0] + dx for dx, _ in offsets]
        ys = [pos[1] + dy for _, dy in offsets]
        _sub(
            city,
            "rect",
            {
                "class": "slot",
                "x": min(xs) - r,
                "y": min(ys) - r,
                "width": max(xs) - min(xs) + 2 * r,
                "height": max(ys) - min(ys) + 2 * r,
                "rx": r,
            },
        )
    for k, (dx, dy) in enumerate(offsets):
        cx, cy = pos[0] + dx, pos[1] + dy
        owner = node.tokens[k] if k < len(node.tokens) else None
        if owner is None:
            _sub(city, "circle", {"class": "slot", "cx": cx, "cy": cy, "r": r})
            continue
        mine = owner == company
        tok = _sub(city, "g", {"class": "token" + (" token-own" if mine else ""), "data-company": owner})
        _sub(
            tok,
            "circle",
            {
                "cx": cx,
                "cy": cy,
                "r": r,
                "style": f"fill: {company_colour(owner)}; stroke: "
                + ("#ffd700; stroke-width: 3" if mine else "#222; stroke-width: 1.5"),
            },
        )
        _sub(tok, "text", {"class": "token-text", "x": cx, "y": cy}, owner[:4])
    if node.color:  # 18XS: a ring in the colour of the good the city demands (dashed once served)
        _sub(
            city,
            "circle",
            {
                "class": "demand" + (" served" if node.served else ""),
                "cx": pos[0],
                "cy": pos[1],
                "r": r + 4,
                "style": f"stroke: {css_colour(node.color)}",
                "data-color": node.color,
            },
        )
    for k, good in enumerate(node.goods):  # 18XS: the cubes lying there
        _sub(
            city,
            "rect",
            {
                "class": "cube",
                "x": pos[0] - r + 9 * k,
                "y": pos[1] + r + 5,
                "width": 7,
                "height": 7,
                "style": f"fill: {css_colour(good)}",
                "data-good": good,
            },
        )
    if node.revenue != Revenue():
        far = max(dx for dx, _ in offsets) + r
        _revenue_bubble(
            g, (pos[0] + far + 6, pos[1] - r - 2), _revenue_label(node.revenue, drawing.position.phase_colors)
        )


def render_svg(
    position: Position, result: dict | None = None, *, title: str | None = None, graph: TrackGraph | None = None
) -> str:
    """The board as an SVG document; ``result`` (a solve answer or validated
    routes: ``{"routes": [...], "revenue": n, ...}``) adds the routes and a legend."""
    drawing = BoardDrawing(position)
    routes = list((result or {}).get("routes") or [])
    transports = list((result or {}).get("plan") or [])  # 18XS: cubes moved cell by cell
    xs, ys = [], []
    for c in drawing.centers.values():
        for x, y in drawing.geo.corners(c):
            xs.append(x)
            ys.append(y)
    if not xs:
        xs, ys = [0.0], [0.0]
    left, top = min(xs) - MARGIN, min(ys) - MARGIN
    board_w, board_h = max(xs) - min(xs) + 2 * MARGIN, max(ys) - min(ys) + 2 * MARGIN
    legend = result is not None
    width = board_w + (LEGEND_WIDTH if legend else 0)
    height = (
        max(board_h, 80 + 36 * (len(routes) + len(transports)) + 16 * len((result or {}).get("parts") or []))
        if legend
        else board_h
    )
    svg = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "class": "routecalc-board",
            "viewBox": f"{_fmt(left)} {_fmt(top)} {_fmt(width)} {_fmt(height)}",
            "width": _fmt(width),
            "height": _fmt(height),
            "font-family": "Helvetica, Arial, sans-serif",
        },
    )
    _sub(svg, "title", None, title or f"{position.game}: {position.company} in phase {position.phase_name}")
    _sub(svg, "style", None, STYLE)
    board = _sub(svg, "g", {"class": "board"})
    for cell in position.cells.values():
        deadline.check("drawing the board")
        _draw_cell(board, drawing, cell)
    layer = _sub(svg, "g", {"class": "routes"})
    if routes:
        graph = graph or compile_position(position)
        for k, route in enumerate(routes):
            _sub(
                layer,
                "polyline",
                {
                    "class": "route",
                    "points": _points(route_points(drawing, graph, route)),
                    "style": f"stroke: {ROUTE_COLOURS[k % len(ROUTE_COLOURS)]}",
                    "data-train": route.get("train"),
                    "data-revenue": route.get("revenue"),
                },
            )
    lanes = transport_lanes([t["cells"] for t in transports])
    gap = min(TRANSPORT_GAP, 0.6 * drawing.geo.apothem / max(1, max(lanes, default=0)))
    for k, (transport, lane) in enumerate(zip(transports, lanes), start=len(routes)):
        centres = [drawing.centers[c] for c in transport["cells"]]
        _sub(
            layer,
            "polyline",
            {
                "class": "route transport",
                "points": _points(offset_line(centres, lane * gap)),
                "style": f"stroke: {ROUTE_COLOURS[k % len(ROUTE_COLOURS)]}",
                "data-cube": transport["cube"]["color"],
                "data-revenue": transport["income"],
            },
        )
    if legend:
        _draw_legend(
            svg,
            result,
            _legend_entries(routes, transports),
            (left + board_w + 8, top + 20),
            position.company or position.game,
        )
        parts = result.get("parts") or []  # revenue that is not a route's (18Cuba's sugar, fees, ...)
        y = top + 20 + 24 + 36 * (len(routes) + len(transports)) + (22 if not routes and not transports else 0)
        for k, part in enumerate(parts):
            _sub(
                svg,
                "text",
                {"class": "legend-text legend-part", "x": left + board_w + 8, "y": y + 16 * k},
                f"{part['name']}: {part['amount']:+d}",
            )
    ET.indent(svg)
    return ET.tostring(svg, encoding="unicode", xml_declaration=False)


def transport_lanes(paths: list[list[str]]) -> list[int]:
    """A lane per 18XS transport (cells in order), the least that no earlier
    transport sharing a step between two cells with it has: drawn one lane
    apart, transports over the same cells do not hide each other."""
    steps_of = [{frozenset(pair) for pair in zip(cells, cells[1:])} for cells in paths]
    lanes: list[int] = []
    for k, steps in enumerate(steps_of):
        taken = {lanes[j] for j in range(k) if steps & steps_of[j]}
        lanes.append(next(lane for lane in range(k + 1) if lane not in taken))
    return lanes


def offset_line(points: list[Point], distance: float) -> list[Point]:
    """The polyline moved ``distance`` to its left, each corner on the
    bisector of its two steps (at most twice as far at a sharp turn). A
    transport's lanes all lie to the left of its own direction, so two
    transports over the same cells, either way round, stay apart."""
    if not distance or len(points) < 2:
        return list(points)
    normals = []
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        length = math.hypot(x1 - x0, y1 - y0) or 1.0
        normals.append(((y1 - y0) / length, (x0 - x1) / length))
    moved = []
    for j, (x, y) in enumerate(points):
        a, b = normals[max(0, j - 1)], normals[min(j, len(normals) - 1)]
        mx, my = a[0] + b[0], a[1] + b[1]
        size = math.hypot(mx, my)
        if size < 1e-9:  # the line turns back: move along one step's normal
            mx, my, size = a[0], a[1], 1.0
        mx, my = mx / size, my / size
        stretch = min(2.0, 1.0 / max(1e-9, mx * a[0] + my * a[1]))
        moved.append((x + mx * distance * stretch, y + my * distance * stretch))
    return moved


def _shortened(text: str, room: int = LEGEND_CHARS) -> str:
    """``text`` cut in the middle to fit the legend: both ends of a route say most."""
    if len(text) <= room:
        return text
    half = (room - 3) // 2
    return f"{text[:half]} … {text[-half:]}"


def _legend_entries(routes: list[dict], transports: list[dict]) -> list[tuple[str | None, str, str]]:
    """(data-train, label, stops) per drawn line: routes, then 18XS transports."""
    entries = []
    for route in routes:
        skip = set(route.get("skip") or [])
        stops = " ".join(f"({n})" if n in skip else n for n in route.get("nodes", []))
        entries.append((route.get("train"), f"{route.get('train')}: {route.get('revenue', '')}", stops))
    for transport in transports:
        cube = transport["cube"]["color"]
        entries.append((None, f"{cube} cube to {transport['to']}: {transport['income']}", " ".join(transport["cells"])))
    return entries


def _draw_legend(
    svg: ET.Element, result: dict, entries: list[tuple[str | None, str, str]], origin: Point, who: str
) -> None:
    x, y = origin
    g = _sub(svg, "g", {"class": "legend"})
    head = f"{who}: {result.get('revenue', '')}"
    if result.get("status"):
        head += f" ({result['status']})"
    _sub(g, "text", {"class": "legend-title", "x": x, "y": y}, head)
    if not entries:
        _sub(g, "text", {"class": "legend-text", "x": x, "y": y + 22}, "no route")
    for k, (train, label, stops) in enumerate(entries):
        ey = y + 24 + 36 * k
        entry = _sub(g, "g", {"class": "legend-entry", "data-train": train})
        _sub(
            entry,
            "line",
            {
                "x1": x,
                "y1": ey,
                "x2": x + 24,
                "y2": ey,
                "class": "route",
                "style": f"stroke: {ROUTE_COLOURS[k % len(ROUTE_COLOURS)]}",
            },
        )
        _sub(entry, "text", {"class": "legend-text", "x": x + 32, "y": ey + 4}, label)
        line = _sub(entry, "text", {"class": "legend-stops", "x": x + 32, "y": ey + 17}, _shortened(stops))
        _sub(line, "title", {}, stops)  # the whole list on hover
