"""Board geometry: coordinates, the spec's edge table, axes, the neighbours
override, rotation and impassable borders, checked through loaded positions
and the compiled track graph."""

from __future__ import annotations

import pytest
from boards import cell, city, column, position, route, track

from routecalc import PositionError, load_position, validate
from routecalc.errors import RouteViolation
from routecalc.geometry import Grid, index_letters, letter_index
from routecalc.graph import compile_position

# The spec's table: the neighbour across edge e of the cell at (x, y).
FLAT = {0: (0, 2), 1: (-1, 1), 2: (-1, -1), 3: (0, -2), 4: (1, -1), 5: (1, 1)}
POINTY = {0: (-1, 1), 1: (-2, 0), 2: (-1, -1), 3: (1, -1), 4: (2, 0), 5: (1, 1)}
SQUARE = {0: (0, 1), 1: (-1, 0), 2: (0, -1), 3: (1, 0)}


def neighbors_of(pos: dict, cell_id: str) -> dict[int, str]:
    return load_position(pos).cells[cell_id].neighbors


def full_ring(layout: str, center: str, ring: list[str], axes=None) -> dict:
    return position([cell(c) for c in [center] + ring], layout=layout, axes=axes)


@pytest.mark.parametrize("letters, index", [("A", 0), ("Z", 25), ("AA", 26), ("AZ", 51), ("BA", 52)])
def test_letter_index_round_trip(letters, index):
    assert letter_index(letters) == index
    assert index_letters(index) == letters


@pytest.mark.parametrize(
    "layout, cell_id, xy",
    [
        ("flat", "F10", (5, 9)),  # x = letter, y = number - 1
        ("pointy", "F10", (9, 5)),  # x = number - 1, y = letter
        ("square", "B3", (1, 2)),
        ("flat", "H0", (7, -1)),  # number 0 gives -1
        ("flat", "AA3", (26, 2)),
    ],
)
def test_coords_follow_default_axes(layout, cell_id, xy):
    grid = Grid.make(layout, None)
    assert grid.coords(cell_id) == xy
    assert grid.cell_id(*xy) == cell_id


def test_flat_neighbours_match_the_edge_table():
    # C5 is (2, 4); the table gives C7, B6, B4, C3, D4, D6 for edges 0..5.
    ring = ["C7", "B6", "B4", "C3", "D4", "D6"]
    got = neighbors_of(full_ring("flat", "C5", ring), "C5")
    assert got == dict(enumerate(ring))
    grid = Grid.make("flat", None)
    for edge, (dx, dy) in FLAT.items():
        assert grid.coords(ring[edge]) == (2 + dx, 4 + dy)


def test_pointy_neighbours_match_the_edge_table():
    # Pointy default axes: x = number - 1, y = letter. D4 is (3, 3).
    ring = ["E3", "D2", "C3", "C5", "D6", "E5"]
    got = neighbors_of(full_ring("pointy", "D4", ring), "D4")
    assert got == dict(enumerate(ring))
    grid = Grid.make("pointy", None)
    for edge, (dx, dy) in POINTY.items():
        assert grid.coords(ring[edge]) == (3 + dx, 3 + dy)


def test_square_neighbours_match_the_edge_table():
    ring = ["B3", "A2", "B1", "C2"]
    got = neighbors_of(full_ring("square", "B2", ring), "B2")
    assert got == dict(enumerate(ring))
    grid = Grid.make("square", None)
    for edge, (dx, dy) in SQUARE.items():
        assert grid.coords(ring[edge]) == (1 + dx, 1 + dy)


def test_missing_cells_are_not_neighbours():
    got = neighbors_of(position([cell("C5"), cell("C7"), cell("D4")]), "C5")
    assert got == {0: "C7", 4: "D4"}


def test_opposite_edges():
    hexes, squares = Grid.make("flat", None), Grid.make("square", None)
    assert [hexes.opposite(e) for e in range(6)] == [3, 4, 5, 0, 1, 2]
    assert [squares.opposite(e) for e in range(4)] == [2, 3, 0, 1]


def test_axes_override_swaps_letter_and_number():
    # With x = number on a flat board, B4 is (3, 1) and edge 0 (dy = +2) leads to D4.
    axes = {"x": "number", "y": "letter"}
    assert Grid.make("flat", axes).coords("B4") == (3, 1)
    got = neighbors_of(position([cell("B4"), cell("D4"), cell("B6")], axes=axes), "B4")
    assert got == {0: "D4"}
    # The default axes give B6 across edge 0 instead.
    assert neighbors_of(position([cell("B4"), cell("D4"), cell("B6")]), "B4") == {0: "B6"}


def test_pointy_axes_override_to_letter_x():
    axes = {"x": "letter", "y": "number"}
    # B4 is (1, 3); pointy edge 4 is (+2, 0): D4.
    got = neighbors_of(position([cell("B4"), cell("D4"), cell("C3")], layout="pointy", axes=axes), "B4")
    assert got == {4: "D4", 3: "C3"}


@pytest.mark.parametrize(
    "axes",
    [
        {"x": "letter"},
        {"x": "letter", "y": "letter"},
        ["letter", "number"],
        {"x": "number", "y": "number", "z": "letter"},
    ],
)
def test_bad_axes_are_rejected(axes):
    with pytest.raises(PositionError) as err:
        load_position(position([cell("A1")], axes=axes))
    assert err.value.where == "axes"


def test_cell_number_zero_and_double_letters():
    # B0 is (1, -1): B2 across edge 0, A1 across edge 1.
    pos = position([cell("B0"), cell("B2"), cell("A1"), cell("AA1"), cell("AA3"), cell("Z2"), cell("Z0"), cell("AB2")])
    loaded = load_position(pos)
    assert loaded.cells["B0"].neighbors == {0: "B2", 1: "A1"}
    assert (loaded.cells["B0"].x, loaded.cells["B0"].y) == (1, -1)
    # AA1 is (26, 0): the letter part rolls over from Z to AA to AB.
    assert (loaded.cells["AA1"].x, loaded.cells["AA1"].y) == (26, 0)
    assert loaded.cells["AA1"].neighbors == {0: "AA3", 1: "Z2", 2: "Z0", 5: "AB2"}


def test_track_connects_across_number_zero_cells():
    pos = position([cell("B0", city(10), tokens=[["A"]]), cell("B2", city(20))])
    answer = validate(pos, [route("2", "B0-0", "B2-0")])
    assert answer["revenue"] == 30
    assert answer["routes"][0]["hexes"] == [["B0", "B2"]]


@pytest.mark.parametrize(
    "layout, first, bad", [("flat", "A1", "A2"), ("flat", "B2", "B1"), ("pointy", "A1", "A2"), ("flat", "A2", "A3")]
)
def test_hex_cells_share_one_parity(layout, first, bad):
    with pytest.raises(PositionError) as err:
        load_position(position([cell(first), cell(bad)], layout=layout))
    assert err.value.where == f"cell {bad}"
    assert "x + y" in err.value.message and first in err.value.message


def test_odd_parity_boards_are_hex_boards_too():
    # 18Cuba's map (pointy) has Havana in B7 and Matanzas in B9: x + y is odd.
    cells = [cell("B7", city(20, edges=(4,)), tokens=[["A"]]), cell("B9", city(30, edges=(1, 4))), cell("C10", "")]
    loaded = load_position(position(cells, layout="pointy"))
    assert loaded.cells["B7"].neighbors == {4: "B9"}
    assert loaded.cells["B9"].neighbors == {1: "B7", 5: "C10"}
    assert validate(loaded, [route("2", "B7-0", "B9-0")])["revenue"] == 50


def test_square_boards_take_every_cell():
    loaded = load_position(position([cell("A1"), cell("A2"), cell("B1")], layout="square"))
    assert loaded.cells["A1"].neighbors == {0: "A2", 3: "B1"}


# -- the neighbours override -------------------------------------------------


def test_neighbors_override_replaces_the_computed_neighbours():
    pos = position([cell("A1", neighbors={"0": "C5"}), cell("A3"), cell("C5")])
    assert neighbors_of(pos, "A1") == {0: "C5"}


def test_override_links_only_where_both_cells_name_each_other():
    # A1's edge 0 is linked to the far cell E1 by the override; E1 names A1 back.
    both = [
        cell("A1", city(10, edges=(0,)), tokens=[["A"]], neighbors={"0": "E1"}),
        cell("E1", city(20, edges=(3,)), neighbors={"3": "A1"}),
    ]
    answer = validate(position(both), [route("2", "A1-0", "E1-0")])
    assert answer["revenue"] == 30
    assert answer["routes"][0]["hexes"] == [["A1", "E1"]]
    # When E1 does not name A1, there is no link.
    one_sided = [both[0], cell("E1", city(20, edges=(3,)))]
    with pytest.raises(RouteViolation) as err:
        validate(position(one_sided), [route("2", "A1-0", "E1-0")])
    assert err.value.rule == "not_connected"


def test_empty_override_cuts_a_geometric_link():
    # A3 is geometrically next to A1 and names it, but A1's override names nobody.
    cells = [cell("A1", city(10), tokens=[["A"]], neighbors={}), cell("A3", city(20))]
    assert load_position(position(cells)).cells["A3"].neighbors == {3: "A1"}
    with pytest.raises(RouteViolation) as err:
        validate(position(cells), [route("2", "A1-0", "A3-0")])
    assert err.value.rule == "not_connected"
    cells[0].pop("neighbors")
    assert validate(position(cells), [route("2", "A1-0", "A3-0")])["revenue"] == 30


# -- rotation ------------------------------------------------------------------


@pytest.mark.parametrize("rotation", range(6))
def test_rotation_turns_path_edges(rotation):
    loaded = load_position(position([cell("C5", "city=revenue:10;path=a:0,b:_0;path=a:2,b:_0", rotation=rotation)]))
    edges = sorted(p.a.edge for p in loaded.paths)
    assert edges == sorted({rotation % 6, (2 + rotation) % 6})


@pytest.mark.parametrize("rotation, joined", [(0, "C7"), (1, "B6"), (3, "C3"), (5, "D6")])
def test_rotated_tile_connects_to_the_turned_neighbour(rotation, joined):
    ring = ["C7", "B6", "B4", "C3", "D4", "D6"]
    cells = [cell("C5", city(10, edges=(0,)), rotation=rotation, tokens=[["A"]])]
    for edge, cid in enumerate(ring):
        cells.append(cell(cid, city(20 + edge, edges=((edge + 3) % 6,))))
    graph = compile_position(load_position(position(cells)))
    center = graph.stop("C5-0")
    others = {
        graph.stop_ids[int(graph.adj_other[k])] for k in range(graph.adj_start[center], graph.adj_start[center + 1])
    }
    assert others == {f"{joined}-0"}


def test_square_rotation_is_modulo_four():
    cells = [cell("B2", "town=revenue:10;path=a:0,b:_0", rotation=3), cell("C2"), cell("B3")]
    loaded = load_position(position(cells, layout="square"))
    assert [p.a.edge for p in loaded.paths] == [3]


# -- impassable borders --------------------------------------------------------


def test_impassable_border_cuts_the_link():
    cells = column(city(10) + ";border=edge:0,type:impassable", city(20), tokens={0: [["A"]]})
    loaded = load_position(position(cells))
    assert loaded.cells["A1"].blocked_edges == frozenset({0})
    with pytest.raises(RouteViolation) as err:
        validate(loaded, [route("2", "A1-0", "A3-0")])
    assert err.value.rule == "not_connected"


def test_border_on_the_far_side_cuts_the_link_too():
    cells = column(city(10), city(20) + ";border=edge:3,type:impassable", tokens={0: [["A"]]})
    with pytest.raises(RouteViolation) as err:
        validate(position(cells), [route("2", "A1-0", "A3-0")])
    assert err.value.rule == "not_connected"


def test_border_edges_turn_with_the_tile():
    # Code edge 5 turned by 1 is board edge 0: the link to A3 is cut.
    turned = column(city(10, edges=(5,)) + ";border=edge:5,type:impassable", city(20), tokens={0: [["A"]]})
    turned[0]["rotation"] = 1
    loaded = load_position(position(turned))
    assert loaded.cells["A1"].blocked_edges == frozenset({0})
    with pytest.raises(RouteViolation):
        validate(loaded, [route("2", "A1-0", "A3-0")])
    # The same border unturned sits on board edge 5 and leaves edge 0 open.
    open_ = column(city(10, edges=(0,)) + ";border=edge:5,type:impassable", city(20), tokens={0: [["A"]]})
    assert validate(position(open_), [route("2", "A1-0", "A3-0")])["revenue"] == 30


def test_other_border_types_do_not_block():
    cells = column(city(10) + ";border=edge:0,type:water,cost:40", city(20), tokens={0: [["A"]]})
    loaded = load_position(position(cells))
    assert loaded.cells["A1"].blocked_edges == frozenset()
    assert validate(loaded, [route("2", "A1-0", "A3-0")])["revenue"] == 30


def test_track_continues_through_plain_track_cells():
    cells = column(city(10), track((3, 0)), track((3, 0)), city(20), tokens={0: [["A"]]})
    answer = validate(position(cells), [route("2", "A1-0", "A7-0")])
    assert answer["routes"][0]["hexes"] == [["A1", "A3", "A5", "A7"]]
    assert answer["revenue"] == 30


# -- lanes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("far_lane, joined", [("2.1", True), ("2.0", False), ("3.1", False)])
def test_lanes_meet_mirrored_across_an_edge(far_lane, joined):
    # Seen from the other side, lane i of w is lane w - 1 - i.
    cells = [
        cell("A1", "city=revenue:20;path=a:0,b:_0,a_lane:2.0", tokens=[["A"]]),
        cell("A3", f"city=revenue:30;path=a:3,b:_0,a_lane:{far_lane}"),
    ]
    routes = [route("2", "A1-0", "A3-0")]
    if joined:
        assert validate(position(cells), routes)["revenue"] == 50
    else:
        with pytest.raises(RouteViolation) as err:
            validate(position(cells), routes)
        assert err.value.rule == "not_connected"


def test_a_neighbour_named_on_two_edges_is_refused_naming_both():
    # Two cells meet on one edge: a link by two would take track from two sides into one.
    pos = position([cell("A1", neighbors={"0": "A3", "2": "A3"}), cell("A3")])
    with pytest.raises(PositionError) as err:
        load_position(pos)
    assert err.value.where == "cell A1"
    assert "'A3' on edges 0 and 2" in err.value.message
