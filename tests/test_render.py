"""SVG rendering: board geometry, the drawn parts, routes and legend, the CLI."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import CORPUS

from routecalc import api, load_position, load_position_file
from routecalc.cli import main
from routecalc.geometry import EDGE_DELTAS
from routecalc.render import (
    LEGEND_CHARS,
    TRANSPORT_GAP,
    BoardDrawing,
    BoardGeometry,
    offset_line,
    render_svg,
    transport_lanes,
)

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "1830-late.json"
NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def by_class(root: ET.Element, tag: str, cls: str) -> list[ET.Element]:
    return [e for e in root.iter(NS + tag) if cls in (e.get("class") or "").split()]


def points_of(polyline: ET.Element) -> list[tuple[float, float]]:
    return [tuple(map(float, p.split(","))) for p in polyline.get("points").split()]


@pytest.mark.parametrize("layout", ["flat", "pointy", "square"])
def test_neighbours_share_an_edge_and_edges_end_at_corners(layout):
    geo = BoardGeometry(layout)
    n = len(EDGE_DELTAS[layout])
    origin = (0.0, 0.0)
    corners = geo.corners(origin)
    assert len(corners) == n
    for edge, (dx, dy) in enumerate(EDGE_DELTAS[layout]):
        other = (dx * geo.scale[0], dy * geo.scale[1])
        here_mid = geo.edge_mid(origin, edge)
        there_mid = geo.edge_mid(other, (edge + n // 2) % n)
        assert math.dist(here_mid, there_mid) < 1e-9
        assert math.dist(origin, here_mid) == pytest.approx(geo.apothem)
        for end in geo.edge_ends(origin, edge):
            assert min(math.dist(end, c) for c in corners) < 1e-6, (layout, edge)


@pytest.fixture(scope="module")
def demo():
    position = load_position_file(DEMO)
    answer = api.solve(position)
    return position, answer, parse(render_svg(position, answer))


def test_demo_board_parts(demo):
    position, answer, root = demo
    assert root.tag == NS + "svg"
    assert len(by_class(root, "g", "cell")) == len(position.cells) == 93
    assert len(by_class(root, "path", "track")) == len(position.paths)
    cities = [n for n in position.nodes if n.type == "city"]
    assert len(by_class(root, "g", "city")) == len(cities)
    slots = sum(max(n.slots, 1) for n in cities)
    tokens = by_class(root, "g", "token")
    empty = [e for e in by_class(root, "circle", "slot")]
    assert len(tokens) + len(empty) == slots
    assert len(tokens) == sum(1 for n in cities for t in n.tokens if t is not None)
    assert {t.get("data-company") for t in by_class(root, "g", "token-own")} == {"NYC"}
    offboards = [n for n in position.nodes if n.type == "offboard"]
    assert len(by_class(root, "g", "offboard")) == len(offboards)
    labels = {t.text for t in by_class(root, "text", "coord")}
    assert labels == set(position.cells)
    blocked = sum(len(c.blocked_edges) for c in position.cells.values())
    assert len(by_class(root, "line", "border")) == blocked > 0


def test_demo_routes_follow_their_nodes(demo):
    position, answer, root = demo
    drawing = BoardDrawing(position)
    lines = [e for e in by_class(root, "polyline", "route")]
    assert len(lines) == len(answer["routes"]) == 2
    colours = {line.get("style") for line in lines}
    assert len(colours) == len(lines)
    for line, route in zip(lines, answer["routes"]):
        assert line.get("data-train") == route["train"]
        assert int(line.get("data-revenue")) == route["revenue"]
        pts = points_of(line)
        at = [drawing.node_pos[position.node_index[n]] for n in route["nodes"]]
        assert math.dist(pts[0], at[0]) < 0.2 and math.dist(pts[-1], at[-1]) < 0.2
        for node in at[1:-1]:
            assert min(math.dist(p, node) for p in pts) < 0.2
        # one point per crossed edge at least: the line follows the track, not the chord
        crossed = sum(len(h) - 1 for h in route["hexes"])
        assert len(pts) > crossed
    entries = by_class(root, "g", "legend-entry")
    texts = [next(e.iter(NS + "text")).text for e in entries]
    assert texts == [f"{r['train']}: {r['revenue']}" for r in answer["routes"]]


def test_long_routes_are_cut_in_the_legend_and_whole_on_hover():
    position = load_position_file(ROOT / "fixtures" / "stress-c2c-size-8.json")
    answer = api.solve(position)
    root = parse(render_svg(position, answer))
    lines = by_class(root, "text", "legend-stops")
    assert len(lines) == len(answer["routes"]) == 2
    for line, route in zip(lines, answer["routes"]):
        whole = " ".join(route["nodes"])
        assert line.find(NS + "title").text == whole
        assert len(line.text) <= LEGEND_CHARS
        if len(whole) > LEGEND_CHARS:
            head, tail = line.text.split(" … ")
            assert whole.startswith(head) and whole.endswith(tail)
        else:
            assert line.text == whole


def _segment_distance(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    """Distance from point p to the line through a and b."""
    (px, py), (ax, ay), (bx, by) = p, a, b
    return abs((bx - ax) * (ay - py) - (ax - px) * (by - ay)) / math.hypot(bx - ax, by - ay)


def test_18xs_transports_over_the_same_cells_are_drawn_apart():
    """Three transports over the same cells (one of them the other way round)
    are drawn in lanes a gap apart, each step parallel to its cells' line; a
    transport sharing no step with another runs through the cell centres
    (they were drawn on one line, the last hiding the others)."""
    position = load_position_file(ROOT / "fixtures" / "xs-small.json")
    answer = api.solve(position)
    first = answer["plan"][0]
    assert len(first["cells"]) >= 2
    back = {**first, "cells": first["cells"][::-1]}
    plan = [first, back, first]
    assert transport_lanes([t["cells"] for t in plan]) == [0, 1, 2]
    assert transport_lanes([["A1", "B1"], ["C1", "D1"], ["B1", "C1"]]) == [0, 0, 0]
    root = parse(render_svg(position, {**answer, "plan": plan}))
    lines = [points_of(line) for line in by_class(root, "polyline", "transport")]
    drawing = BoardDrawing(position)
    centres = [drawing.centers[c] for c in first["cells"]]
    assert all(math.dist(p, q) < 0.01 for p, q in zip(lines[0], centres, strict=True))
    for lane, line in ((1, lines[1][::-1]), (2, lines[2])):
        for point, a, b in zip(line, centres, centres[1:]):
            assert _segment_distance(point, a, b) == pytest.approx(lane * TRANSPORT_GAP, abs=0.01)
    assert all(math.dist(p, q) > TRANSPORT_GAP / 2 for p, q in zip(lines[1][::-1], lines[2]))
    corner = [(0.0, 0.0), (72.0, 0.0), (72.0, 72.0)]  # a turn: the corner on the bisector, 6 from both steps
    moved = offset_line(corner, 6.0)
    for j, (a, b) in enumerate(zip(corner, corner[1:])):
        assert _segment_distance(moved[j], a, b) == pytest.approx(6.0)
        assert _segment_distance(moved[j + 1], a, b) == pytest.approx(6.0)


def test_18xs_plan_cubes_and_demands_are_drawn():
    position = load_position_file(ROOT / "fixtures" / "xs-small.json")
    answer = api.solve(position)
    root = parse(render_svg(position, answer))
    lines = by_class(root, "polyline", "transport")
    assert len(lines) == len(answer["plan"]) >= 1
    for line, transport in zip(lines, answer["plan"]):
        assert int(line.get("data-revenue")) == transport["income"]
        assert len(points_of(line)) == len(transport["cells"])
    cities = [n for n in position.nodes if n.type == "city"]
    assert [r.get("data-good") for r in by_class(root, "rect", "cube")] == [g for n in cities for g in n.goods]
    demands = by_class(root, "circle", "demand")
    assert sorted(c.get("data-color") for c in demands) == sorted(n.color for n in cities if n.color)
    labels = [next(e.iter(NS + "text")).text for e in by_class(root, "g", "legend-entry")]
    assert labels == [f"{t['cube']['color']} cube to {t['to']}: {t['income']}" for t in answer["plan"]]


def test_revenue_parts_that_are_not_routes_are_listed():
    position = load_position_file(ROOT / "fixtures" / "cuba-small.json")
    answer = api.solve(position)
    assert answer["parts"]
    root = parse(render_svg(position, answer))
    assert [t.text for t in by_class(root, "text", "legend-part")] == [
        f"{p['name']}: {p['amount']:+d}" for p in answer["parts"]
    ]
    assert len(by_class(root, "polyline", "route")) == len(answer["routes"])


def ireland_position():
    path = sorted((CORPUS / "18Ireland").glob("*.json"))[-1]
    return load_position(json.loads(path.read_text()))


def test_gauges_are_drawn_differently():
    position = ireland_position()
    root = parse(render_svg(position))
    narrow = [p for p in position.paths if p.track == "narrow"]
    broad = [p for p in position.paths if p.track == "broad"]
    assert narrow and broad
    assert len(by_class(root, "path", "track-narrow")) == len(narrow)
    assert len(by_class(root, "path", "track-broad")) == len(broad)
    style = next(root.iter(NS + "style")).text
    assert ".track-narrow" in style and "stroke-dasharray" in style.split(".track-narrow")[1].split("}")[0]
    assert by_class(root, "polyline", "route") == [] and by_class(root, "g", "legend") == []


def square_position(company: str = "A") -> dict:
    return {
        "format": 1,
        "game": "generic",
        "layout": "square",
        "phase": {"name": "2", "colors": ["yellow"]},
        "company": company,
        "trains": ["2"],
        "hexes": [
            {"id": "A1", "code": "city=revenue:20;path=a:3,b:_0", "tokens": [[company]]},
            {"id": "B1", "code": "path=a:1,b:3;path=a:1,b:0,track:dual"},
            {"id": "C1", "code": "town=revenue:10;path=a:1,b:_0"},
            {"id": "B2", "code": "offboard=revenue:yellow_30|brown_50;path=a:2,b:_0"},
            {"id": "C2", "code": ""},
        ],
    }


def test_square_board_with_dual_track_and_offboard():
    position = load_position(square_position())
    answer = api.solve(position, "reference")
    root = parse(render_svg(position, answer))
    cells = by_class(root, "g", "cell")
    assert len(cells) == 5
    for cell in cells:
        shape = next(cell.iter(NS + "polygon"))
        assert len(shape.get("points").split()) == 4
    assert len(by_class(root, "path", "track-dual")) == 1 == len(by_class(root, "path", "track-dual-core"))
    offboard = by_class(root, "g", "offboard")[0]
    assert [t.text for t in offboard.iter(NS + "text")] == ["30", "50"]
    assert answer["revenue"] == 50  # A1 20 + B2 30 (yellow phase) beats the town
    lines = by_class(root, "polyline", "route")
    assert [int(e.get("data-revenue")) for e in lines] == [50]


def test_text_is_escaped():
    position = load_position(square_position("A&<B>"))
    svg = render_svg(position, {"routes": [], "revenue": 0})
    assert "A&amp;&lt;B&gt;" in svg
    root = parse(svg)
    assert by_class(root, "g", "token")[0].get("data-company") == "A&<B>"
    assert by_class(root, "text", "legend-text")[0].text == "no route"


def test_colours_named_in_a_position_reach_no_style_but_as_words():
    """A city's ``color`` and ``goods`` are drawn (18XS's demands and cubes):
    any other value than a word of letters would reach the style attribute
    as CSS (``url(...)`` fetches a resource when the board is viewed)."""
    code = "city=revenue:20,color:url(//x/y#z),goods:red|url(//x/q#r);path=a:0,b:_0"
    position = load_position(
        {
            "format": 1,
            "game": "generic",
            "layout": "flat",
            "phase": {"name": "2", "colors": ["yellow"]},
            "company": "A",
            "trains": ["2"],
            "hexes": [
                {"id": "A1", "code": code, "tokens": [["A"]]},
                {"id": "A3", "code": "city=revenue:30;path=a:3,b:_0"},
            ],
        }
    )
    styles = [e.get("style") or "" for e in parse(render_svg(position, None)).iter()]
    assert not [s for s in styles if "url(" in s]
    assert "fill: red" in styles and "fill: #999" in styles


@pytest.mark.parametrize("folder", ["generic/1830", "generic/18Chesapeake", "generic/1867", "18Ireland"])
def test_corpus_boards_render(folder):
    files = sorted((CORPUS / folder).glob("*.json"))[::30]
    assert files
    for f in files:
        data = json.loads(f.read_text())
        position = load_position(data)
        recorded = (data["reference"].get("recorded") or {}).get("routes") or []
        result = api.validate(position, recorded) if recorded else None
        root = parse(render_svg(position, result))
        assert len(by_class(root, "g", "cell")) == len(position.cells)
        if result:
            assert len(by_class(root, "polyline", "route")) == len(recorded)


def test_cli_render(tmp_path, capsys):
    out = tmp_path / "board.svg"
    assert main(["render", str(DEMO), "--solve", "-o", str(out)]) == 0
    root = parse(out.read_text())
    assert len(by_class(root, "polyline", "route")) == 2
    routes = tmp_path / "routes.json"
    routes.write_text(json.dumps([{"train": "4", "nodes": ["D14-0"]}]))
    assert main(["render", str(DEMO), "--routes", str(routes), "-o", str(out)]) == 1
    assert json.loads(capsys.readouterr().out)["violation"]["rule"] == "too_few_stops"
    assert main(["render", str(tmp_path / "missing.json")]) == 2
