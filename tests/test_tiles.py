"""The tile language: every part and key routes need, revenue by phase, and
the errors that keep typos from passing silently."""

from __future__ import annotations

import pytest
from boards import cell, position

from routecalc import PositionError, load_position
from routecalc.api import solve, validate
from routecalc.tiles import PathEnd, Revenue, parse_tile

WHERE = "cell X1"


def tile(code: str, num_edges: int = 6):
    return parse_tile(code, WHERE, num_edges)


# -- nodes -----------------------------------------------------------------------


def test_city_reads_revenue_slots_groups_kind():
    t = tile("city=revenue:40,slots:3,groups:NY|East,kind:harbor")
    (node,) = t.nodes
    assert (node.index, node.type, node.slots) == (0, "city", 3)
    assert node.revenue.value(("yellow",)) == 40
    assert node.groups == ("NY", "East")
    assert node.kind == "harbor"
    assert t.token_holders == (node,)


def test_city_has_one_slot_by_default_and_towns_none():
    t = tile("city=revenue:20;town=revenue:10;offboard=revenue:30;junction")
    assert [(n.type, n.slots) for n in t.nodes] == [("city", 1), ("town", 0), ("offboard", 0), ("junction", 0)]
    assert [n.index for n in t.nodes] == [0, 1, 2, 3]
    assert [n.revenue.value(("yellow",)) for n in t.nodes] == [20, 10, 30, 0]
    assert t.token_holders == t.nodes[:1]  # the city; the offboard has no slots


def test_town_and_offboard_read_groups_and_kind():
    t = tile("town=revenue:10,groups:G,kind:sugar;offboard=revenue:yellow_30|brown_60,groups:W")
    assert (t.nodes[0].groups, t.nodes[0].kind) == (("G",), "sugar")
    assert t.nodes[1].groups == ("W",)
    assert t.nodes[1].revenue.value(("yellow", "green", "brown")) == 60


def test_a_node_without_revenue_is_worth_nothing():
    assert tile("city").nodes[0].revenue.value(("yellow",)) == 0


def test_18xs_city_extensions():
    (node,) = tile("city=revenue:0,color:blue,goods:blue|pink,served:1").nodes
    assert node.color == "blue"
    assert node.goods == ("blue", "pink")
    assert node.served is True
    (fresh,) = tile("city=revenue:0,color:pink").nodes
    assert (fresh.goods, fresh.served) == ((), False)


def test_18xs_position_with_terrain_and_extensions_loads():
    cells = [
        cell("A1", "city=revenue:0,color:blue,goods:pink;path=a:0,b:_0", terrain="forest"),
        cell("A2", "path=a:2,b:0", terrain="mountain"),
        cell("A3", "city=revenue:0,kind:lc;path=a:2,b:_0", terrain="plain"),
    ]
    pos = position(cells, trains=[], company=None, layout="square", game="18XS")
    loaded = load_position(pos)
    assert loaded.cells["A1"].terrain == "forest"
    assert loaded.nodes[loaded.node("A1-0")].goods == ("pink",)
    assert loaded.nodes[loaded.node("A3-0")].kind == "lc"


# -- paths -----------------------------------------------------------------------


def test_path_ends_are_edges_or_nodes():
    t = tile("city=revenue:10;path=a:0,b:_0;path=a:2,b:5")
    assert t.paths[0].a == PathEnd(edge=0) and t.paths[0].b == PathEnd(node=0)
    assert (t.paths[1].a.edge, t.paths[1].b.edge) == (2, 5)
    assert [(p.track, p.terminal) for p in t.paths] == [("broad", False), ("broad", False)]


def test_path_terminal_and_track():
    t = tile("offboard=revenue:20;path=a:0,b:_0,terminal:1,track:narrow;path=a:1,b:_0,track:dual")
    assert [(p.terminal, p.track) for p in t.paths] == [(True, "narrow"), (False, "dual")]


def test_lanes_make_one_path_per_lane():
    t = tile("path=a:0,b:3,lanes:2")
    assert len(t.paths) == 2
    assert [(p.a.lane_width, p.a.lane_index) for p in t.paths] == [(2, 0), (2, 1)]
    # each edge counts its lanes in its own sense: lane 0 of edge 0 arrives on lane 1 of edge 3
    assert [(p.b.lane_width, p.b.lane_index) for p in t.paths] == [(2, 1), (2, 0)]
    to_node = tile("city=revenue:10;city=revenue:20;path=a:0,b:_0,lanes:2").paths
    assert [(p.a.lane_index, p.b) for p in to_node] == [(0, PathEnd(node=0)), (1, PathEnd(node=0))]


def test_a_straight_double_track_keeps_its_tracks_apart():
    """Lane 0 of C3's edge 0 meets lane 1 of C5's edge 3, which runs straight
    through to lane 0 of C5's edge 0 and so to C7's second lane (the 50): a
    2-train earns 20 + 50. Read with the same lane at both ends of C5, the
    tracks would cross over and the 50 be out of reach (20 + 10)."""
    board = position(
        [
            cell("C3", "city=revenue:20;path=a:0,b:_0,a_lane:2.0", tokens=[["A"]]),
            cell("C5", "path=a:3,b:0,lanes:2"),
            cell("C7", "town=revenue:10;town=revenue:50;path=a:3,b:_0,a_lane:2.0;path=a:3,b:_1,a_lane:2.1"),
        ],
        ["2"],
    )
    assert solve(board)["revenue"] == 70
    assert validate(board, [{"train": "2", "nodes": ["C3-0", "C7-1"]}])["revenue"] == 70


def test_lanes_overrule_explicit_lanes():
    paths = tile("path=a:0,b:3,lanes:2,a_lane:2.0").paths
    assert [(p.a.lane_index, p.b.lane_index) for p in paths] == [(0, 1), (1, 0)]


def test_explicit_lanes():
    (p,) = tile("city=revenue:10;path=a:0,b:_0,a_lane:2.1").paths
    assert (p.a.edge, p.a.lane_width, p.a.lane_index) == (0, 2, 1)
    assert p.b == PathEnd(node=0)


def test_ignored_path_is_dropped():
    assert tile("path=a:0,b:3,ignore:1;path=a:1,b:4").paths[0].a.edge == 1


def test_thin_track_is_read_and_carries_no_train():
    """1822PNW's and 1822MX's pre-printed water cells draw ferry lines as
    ``track:thin``, which no train runs on: the board loads, and the 50
    across the thin track stays out of reach (the 2-train earns 20 + 10)."""
    assert [p.a.edge for p in tile("junction;path=a:4,b:_0,terminal:1;path=a:0,b:4,track:thin").paths] == [4]
    board = position(
        [
            cell("C3", "city=revenue:20;path=a:0,b:_0;path=a:3,b:_0", tokens=[["A"]]),
            cell("C5", "path=a:3,b:0,track:thin"),
            cell("C7", "city=revenue:50;path=a:3,b:_0"),
            cell("C1", "town=revenue:10;path=a:0,b:_0"),
        ],
        ["2"],
    )
    assert solve(board)["revenue"] == 30


def test_border_impassable_and_other_types():
    t = tile("border=edge:2,type:impassable;border=edge:4,type:water,cost:20;border=edge:5")
    assert t.borders == (2,)


@pytest.mark.parametrize(
    "code",
    [
        "label=Z",
        "upgrade=cost:80,terrain:water",
        "icon=image:port",
        "frame=color:red",
        "stripes=color:green",
        "stub=edge:3",
        "partition=a:0,b:3",
        "future_label=label:T,color:brown",
    ],
)
def test_drawing_parts_are_ignored(code):
    t = tile(f"city=revenue:30;{code};path=a:0,b:_0")
    assert len(t.nodes) == 1 and len(t.paths) == 1


def test_drawing_keys_are_ignored():
    t = tile("city=revenue:30,loc:center,hide:1;town=revenue:10,boom:1,style:dot;path=a:0,b:_0")
    assert [n.type for n in t.nodes] == ["city", "town"]


def test_empty_code_is_a_bare_cell():
    t = tile("")
    assert (t.nodes, t.paths, t.borders) == ((), (), ())


# -- revenue by phase ----------------------------------------------------------------

REV = Revenue.parse("yellow_20|green_30|brown_40|diesel_60", WHERE)


@pytest.mark.parametrize(
    "colors, value",
    [
        (("yellow",), 20),
        (("yellow", "green"), 30),
        (("yellow", "green", "brown"), 40),
        (("yellow", "green", "brown", "gray"), 40),
        (("gray",), 0),
        ((), 0),
    ],
)
def test_newest_phase_colour_with_an_entry_wins(colors, value):
    assert REV.value(colors) == value


def test_diesel_entry_for_d_trains():
    assert REV.value(("yellow",), diesel=True) == 60
    # No diesel entry: a D train reads the phase colour like any train.
    assert Revenue.parse("yellow_20|brown_50", WHERE).value(("yellow", "brown"), diesel=True) == 50


def test_one_value_for_several_colours():
    """18xx.games writes ``yellow/green_30``: the value of both colours."""
    rev = Revenue.parse("yellow/green_30|brown/gray_50", WHERE)
    assert [rev.value(colors) for colors in (("yellow",), ("yellow", "green"), ("yellow", "brown"))] == [30, 30, 50]


def test_flat_revenue_ignores_phase():
    assert Revenue.parse("35", WHERE).value(("brown",), diesel=True) == 35


@pytest.mark.parametrize("text", ["yellow_x", "_20", "yellow20|", "abc", "yellow/_20", "/green_20"])
def test_bad_revenue_is_an_error(text):
    with pytest.raises(PositionError) as err:
        Revenue.parse(text, WHERE)
    assert err.value.where == WHERE


@pytest.mark.parametrize(
    "text, colour", [("yellow_30|gren_50", "gren"), ("grey_40", "grey"), ("yellow/purpel_20", "purpel")]
)
def test_a_colour_that_is_no_tile_colour_is_an_error(text, colour):
    """A misspelt colour would silently pick another entry (the offboard paid
    its yellow 30 in a green phase): it is refused, naming the cell."""
    with pytest.raises(PositionError) as err:
        Revenue.parse(text, WHERE)
    assert err.value.where == WHERE
    assert f"unknown colour {colour!r}" in err.value.message


def test_phase_picks_revenue_in_a_loaded_position():
    code = "offboard=revenue:yellow_20|brown_40|diesel_60;path=a:0,b:_0"
    for colors, value in ((["yellow"], 20), (["yellow", "green", "brown"], 40)):
        loaded = load_position(position([cell("A1", code)], phase={"name": "x", "colors": colors}))
        node = loaded.nodes[loaded.node("A1-0")]
        assert node.revenue.value(loaded.phase_colors) == value


def test_cells_with_one_code_share_its_tile_and_a_bad_code_names_each_cell():
    code = "city=revenue:30;path=a:0,b:_0;path=a:3,b:_0"
    assert parse_tile(code, "cell A1") is parse_tile(code, "cell B2")
    assert parse_tile(code, "cell A1", 4) is not parse_tile(code, "cell A1")  # another board's edges
    for where in ("cell A1", "cell B2", "cell A1"):
        with pytest.raises(PositionError) as err:
            parse_tile("city=revenue:30;path=a:9,b:_0", where)
        assert err.value.where.startswith(where) and "edge 9 out of range 0-5" in err.value.message


# -- errors -----------------------------------------------------------------------------


def error(code: str, num_edges: int = 6) -> PositionError:
    with pytest.raises(PositionError) as err:
        tile(code, num_edges)
    assert err.value.where.startswith(WHERE)
    return err.value


def test_unknown_part():
    err = error("city=revenue:20;cty=revenue:30")
    assert "unknown tile part 'cty'" in err.message
    assert "cty=revenue:30" in err.where


def test_unknown_key():
    err = error("city=revnue:20")
    assert "unknown city key 'revnue'" in err.message


@pytest.mark.parametrize(
    "code, key",
    [("path=a:0,b:3,gauge:narrow", "gauge"), ("junction=revenue:10", "revenue"), ("town=revenue:10,slots:1", "slots")],
)
def test_keys_are_checked_per_part(code, key):
    assert f"key {key!r}" in error(code).message


@pytest.mark.parametrize("part", ["pass", "halt"])
def test_pass_and_halt_are_not_supported(part):
    err = error(f"{part}=revenue:10;path=a:0,b:_0")
    assert f"tile part {part!r} is not supported" in err.message


@pytest.mark.parametrize(
    "code, key", [("city=revenue:20,visit_cost:0", "visit_cost"), ("path=a:0,b:3,route:never", "route")]
)
def test_visit_cost_and_route_keys_are_not_supported(code, key):
    assert f"key {key!r} is not supported" in error(code).message


def test_path_to_a_missing_node():
    err = error("city=revenue:20;path=a:0,b:_1")
    assert "_1" in err.message and "missing node" in err.message


def test_path_needs_both_ends():
    assert "needs 'b'" in error("city=revenue:20;path=a:0").message


def test_a_key_given_twice_is_an_error():
    assert "key 'revenue' given twice" in error("city=revenue:20,revenue:30").message


def test_bad_track():
    assert "unknown track 'wide'" in error("path=a:0,b:3,track:wide").message


@pytest.mark.parametrize(
    "code, num_edges, bad",
    [
        ("path=a:6,b:0", 6, 6),
        ("path=a:0,b:-1", 6, -1),
        ("path=a:4,b:0", 4, 4),
        ("border=edge:7,type:impassable", 6, 7),
    ],
)
def test_edge_out_of_range(code, num_edges, bad):
    err = error(code, num_edges)
    assert f"edge {bad} out of range 0-{num_edges - 1}" in err.message


@pytest.mark.parametrize(
    "code, text",
    [
        ("city=revenue:20,slots:x", "slots must be a whole number"),
        ("city=revenue:20,slots:-1", "slots must not be negative"),
        ("town=revenue:-20", "revenue must not be negative"),
        ("offboard=revenue:yellow_20|brown_-10", "revenue must not be negative"),
        ("path=a:0,b:3,lanes:0", "lanes must be at least 1"),
        ("city=revenue", "has no ':'"),
        ("border=type:impassable", "border needs an edge"),
    ],
)
def test_malformed_values(code, text):
    assert text in error(code).message


def test_kind_unknown_to_the_game_is_an_error_naming_the_cell():
    with pytest.raises(PositionError) as err:
        load_position(position([cell("A1", "city=revenue:20,kind:harbour")]))
    assert err.value.where == "cell A1"
    assert "'harbour'" in err.value.message


def test_errors_in_a_position_name_the_cell():
    with pytest.raises(PositionError) as err:
        load_position(position([cell("A1", ""), cell("C3", "city=revenue:20;path=a:0,b:_0,track:wide")]))
    assert err.value.where.startswith("cell C3")
