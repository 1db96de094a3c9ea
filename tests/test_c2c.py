"""18C2C "D" variant: nD trains double the company's token stops (offboards
included), and the destination / transcontinental proof query
``options.connect``.

Hand-built boards are columns of flat hexes (tests/boards.py); company ``A``
operates. The usual line, top to bottom::

    A1 offboard 40 [A]  -  A3 city 20  -  A5 city 30  -  A7 city 10 [A]  -  A9 offboard 50

Random boards check that every solver finds the reference's optimum and
that the connect query's answer is the one exhaustive listing gives.
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import pytest
from boards import cell, city, column, offboard, position, route, town
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import positions
from test_solvers_agree import check_agreement

from routecalc.api import solve, validate
from routecalc.errors import PositionError, RouteViolation
from routecalc.games.c2c import connect_query, train_table
from routecalc.geometry import Grid
from routecalc.graph import compile_position
from routecalc.model import load_position
from routecalc.rules.c2c import unfolded
from routecalc.solvers import SOLVERS
from routecalc.solvers.reference import enumerate_routes

GAME = "18C2C-D"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "c2c-d-destination.json"


def line(trains: list, options: dict | None = None, middle: str | None = None) -> dict:
    """The line of the module docstring; ``middle`` replaces the A5 city."""
    cells = column(
        offboard(40, edges=(0,), slots=1),
        city(20),
        middle or city(30),
        city(10),
        offboard(50, edges=(3,)),
        tokens={0: [["A"]], 3: [["A"]]},
    )
    return position(cells, trains, game=GAME, options=options)


def every_solver(board: dict) -> set[tuple[int, str]]:
    return {(a["revenue"], a["status"]) for a in (solve(board, s) for s in SOLVERS)}


# -- trains and tokens --------------------------------------------------------


def test_catalogue():
    trains = load_position(line(["2", "3", "4", "5", "3D", "4D", "5D", "6D"])).trains
    assert [t.groups[0].visit for t in trains] == [2, 3, 4, 5, 3, 4, 5, 6]
    assert [t.double_token_stops for t in trains] == [False] * 4 + [True] * 4
    assert all(t.pays_every_stop and t.multiplier == 1 and not t.diesel for t in trains)


@pytest.mark.parametrize("train", ["6", "2D", "7D", "D", "4+4", "3E"])
def test_trains_outside_the_catalogue_are_named(train):
    with pytest.raises(PositionError, match=rf"trains\[1\].*unknown 18C2C-D train '{re.escape(train)}'"):
        load_position(line(["2", train]))


def test_a_train_object_is_a_catalogue_train():
    trains = load_position(line([{"name": "4D", "price": 630}])).trains
    assert trains[0].double_token_stops and trains[0].groups[0].visit == 4
    with pytest.raises(PositionError, match=r"trains\[0\].*distance is not read"):
        load_position(line([{"name": "4D", "distance": 8}]))


def test_offboards_hold_tokens_only_in_this_game():
    board = line(["2"])
    assert load_position(board).nodes[0].tokens == ("A",)
    board["game"] = "generic"
    with pytest.raises(PositionError, match=r"cell A1.*offboards hold no tokens in generic"):
        load_position(board)
    board["game"] = GAME
    board["hexes"][0]["tokens"] = []
    with pytest.raises(PositionError, match=r"cell A1.*one list per city: the code has 0 cities and 1 offboards"):
        load_position(board)


# -- revenue --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trains", "revenue"),
    [
        (["4D"], 2 * 40 + 20 + 30 + 2 * 10),  # A1-A7 150 beats A3-A9 20+30+20+50 = 120
        (["4"], 20 + 30 + 10 + 50),  # plain: A3-A9 110 beats A1-A7 100
        (["5D"], 2 * 40 + 20 + 30 + 2 * 10 + 50),  # all five stops
        (["5"], 40 + 20 + 30 + 10 + 50),
        (["2"], 20 + 40),  # A1-A3 60: the offboard's token counts for the token rule
        # A1-A5 130 and the plain 2 A7-A9 60 (no track shared) beat A5-A9 100 and A1-A3 60
        (["3D", "2"], (2 * 40 + 20 + 30) + (10 + 50)),
    ],
)
def test_nd_doubles_token_stops_and_every_solver_agrees(trains, revenue):
    assert every_solver(line(trains)) == {(revenue, "optimal")}


def test_only_the_company_tokens_double():
    # A5 holds B and A tokens (doubled), A3 a B token only (once)
    board = line(["5D"])
    board["hexes"][1]["code"] = city(20, slots=2)
    board["hexes"][1]["tokens"] = [["B", None]]
    board["hexes"][2]["code"] = city(30, slots=2)
    board["hexes"][2]["tokens"] = [["B", "A"]]
    assert every_solver(board) == {(2 * 40 + 20 + 2 * 30 + 2 * 10 + 50, "optimal")}


def test_validated_routes_show_doubled_stops_and_the_stop_limit():
    scored = validate(line(["4D"]), [route("4D", "A1-0", "A3-0", "A5-0", "A7-0")])
    assert scored["revenue"] == 150
    assert [s["value"] for s in scored["routes"][0]["stops"]] == [80, 20, 30, 20]
    with pytest.raises(RouteViolation) as err:
        validate(line(["4D"]), [route("4D", "A1-0", "A3-0", "A5-0", "A7-0", "A9-0")])
    assert err.value.rule == "too_long"


@st.composite
def c2c_positions(draw, max_size: int = 3, trains=("2", "3", "4", "3D", "4D"), max_trains: int = 2) -> dict:
    """A random generic board read as 18C2C-D: offboards get a slot (sometimes
    holding the company's token) and the trains come from the catalogue."""
    board = draw(positions(max_size=max_size, max_trains=1))
    board["game"] = GAME
    for hexagon in board["hexes"]:
        cities = iter(hexagon.get("tokens", []))
        parts, tokens = [], []
        for part in hexagon["code"].split(";"):
            if part.startswith("offboard="):
                part += ",slots:1"
                tokens.append([draw(st.sampled_from(("A", None, None)))])
            elif part.startswith("city="):
                tokens.append(next(cities))
            parts.append(part)
        hexagon["code"] = ";".join(parts)
        if tokens:
            hexagon["tokens"] = tokens
    board["trains"] = draw(st.lists(st.sampled_from(trains), min_size=1, max_size=max_trains))
    return board


@st.composite
def meshes(draw) -> dict:
    """A flat patch of 3 x 2-4 cells, each a stop with track to a random part of
    its neighbours: many routes of four to six stops, where short trains
    need unfolding."""
    grid = Grid.make("flat", None)
    coords = [(x, y) for x in range(3) for y in range(2 * draw(st.integers(2, 4))) if (x + y) % 2 == 0]
    hexes = []
    for x, y in coords:
        near = [e for e in range(6) if grid.neighbor_coords(x, y, e) in coords]
        edges = draw(st.lists(st.sampled_from(near), min_size=min(2, len(near)), max_size=len(near), unique=True))
        kind = draw(st.sampled_from(("city", "city", "town", "offboard")))
        value = draw(st.sampled_from((10, 20, 30)))
        if kind == "town":
            hexes.append(cell(grid.cell_id(x, y), town(value, edges)))
            continue
        token = draw(st.sampled_from(("A", None, None, None, "B")))
        code = city(value, edges) if kind == "city" else offboard(value, edges, slots=1)
        hexes.append(cell(grid.cell_id(x, y), code, tokens=[[token]]))
    trains = draw(st.sampled_from((["3D"], ["2", "3D"], ["3D", "3"], ["2"], ["3", "2"])))
    return position(hexes, trains, game=GAME)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(c2c_positions(), meshes()))
def test_solvers_agree_on_random_boards(board):
    check_agreement(board)


# -- the connect query ----------------------------------------------------------


def connect(board: dict, sources: list[str], targets: list[str]) -> dict:
    board["options"] = {"connect": {"from": sources, "to": targets}}
    return solve(board)["connect"]


def test_connect_folded():
    answer = connect(line(["2", "4D"]), ["A1"], ["A7"])
    assert answer["possible"] is True and answer["unfolded"] is False and answer["status"] == "exact"
    assert answer["route"]["train"] == "4D"
    assert answer["route"]["nodes"] == ["A1-0", "A3-0", "A5-0", "A7-0"]
    assert answer["route"]["revenue"] == 150  # as the folded 4D runs it, doubled


def test_connect_the_shortest_route_with_the_first_train_that_runs_it():
    # A3-A5 holds no company token: three stops, through A1's or A7's token
    answer = connect(line(["3", "4D"]), ["A3"], ["A5", "A9"])
    assert (answer["route"]["train"], answer["unfolded"]) == ("3", False)
    assert answer["route"]["nodes"] in (["A1-0", "A3-0", "A5-0"], ["A3-0", "A5-0", "A7-0"])


def test_connect_only_unfolded():
    # A1 to A9 is five stops: no train runs it, the 3D unfolded (six stops, no doubling) does
    answer = connect(line(["2", "3D"]), ["A1"], ["A9"])
    assert answer["possible"] is True and answer["unfolded"] is True and answer["status"] == "exact"
    assert answer["route"]["train"] == "3D"
    assert answer["route"]["nodes"] == ["A1-0", "A3-0", "A5-0", "A7-0", "A9-0"]
    assert answer["route"]["revenue"] == 40 + 20 + 30 + 10 + 50
    # a 5 runs it folded: no unfolding
    assert connect(line(["3D", "5"]), ["A1"], ["A9"])["unfolded"] is False


def test_connect_impossible():
    # no D train to unfold, and the 4 stops short of A9
    answer = connect(line(["2", "4"]), ["A1"], ["A9"])
    assert answer == {"possible": False, "route": None, "unfolded": False, "status": "exact"}
    # a city full of B tokens at A5 cannot be passed, even by an unfolded 6D
    blocked = line(["6D"], middle=city(30))
    blocked["hexes"][2]["tokens"] = [["B"]]
    assert connect(blocked, ["A1"], ["A9"])["possible"] is False
    assert connect(blocked, ["A1"], ["A5"])["possible"] is True  # it may end there
    # A3 to A5 needs a company token: the route runs on to A1's or A7's
    assert len(connect(line(["6D"]), ["A5"], ["A3"])["route"]["nodes"]) == 3
    # without company tokens no route is valid
    untokened = line(["6D"])
    untokened["hexes"][0]["tokens"] = [[None]]
    untokened["hexes"][3]["tokens"] = [[None]]
    assert connect(untokened, ["A1"], ["A9"])["possible"] is False


def test_connect_keeps_to_the_time_limit():
    graph = compile_position(load_position(line(["3D"])))
    answer = connect_query(graph, frozenset({"A1"}), frozenset({"A9"}), deadline=time.perf_counter() - 1)
    assert answer == {"possible": None, "route": None, "unfolded": None, "status": "unknown"}
    assert (
        solve(line(["3D"], {"connect": {"from": ["A1"], "to": ["A9"]}}), time_limit=5)["connect"]["status"] == "exact"
    )


@pytest.mark.parametrize(
    ("connect_option", "where"),
    [
        ("A1", "options.connect"),
        ({"from": ["A1"]}, "options.connect.to"),
        ({"from": ["A1"], "to": ["A9"], "via": ["A5"]}, "options.connect"),
        ({"from": [], "to": ["A9"]}, "options.connect.from"),
        ({"from": "A1", "to": ["A9"]}, "options.connect.from"),
        ({"from": ["A1"], "to": ["Z9"]}, "options.connect.to"),
    ],
)
def test_bad_connect_option_is_named(connect_option, where):
    with pytest.raises(PositionError) as err:
        load_position(line(["2"], {"connect": connect_option}))
    assert err.value.where == where


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(meshes(), c2c_positions()), st.data())
def test_connect_matches_exhaustive_listing(board, data):
    """Sources from the upper half of the board, targets from the lower half: long routes."""
    cells = sorted((c["id"] for c in board["hexes"]), key=lambda c: int(c[1:]))
    half = (len(cells) + 1) // 2
    sources = frozenset(data.draw(st.lists(st.sampled_from(cells[:half]), min_size=1, max_size=2)))
    targets = frozenset(data.draw(st.lists(st.sampled_from(cells[-half:]), min_size=1, max_size=2)))
    graph = compile_position(load_position(board))
    answer = connect_query(graph, sources, targets, math.inf)

    def shortest(trains) -> int | None:
        """Fewest stops of a listed route with a stop in both cell sets."""
        sizes = [
            len(r.stops)
            for t in trains
            for r in enumerate_routes(graph, train_table(graph, t))[0]
            if {graph.cell_ids[graph.cell[s]] for s in r.stops} & sources
            and {graph.cell_ids[graph.cell[s]] for s in r.stops} & targets
        ]
        return min(sizes, default=None)

    folded = shortest(graph.position.trains)
    opened = shortest([unfolded(t) for t in graph.position.trains if t.double_token_stops])
    expected = folded if folded is not None else opened
    assert answer["status"] == "exact"
    assert answer["possible"] is (expected is not None)
    assert answer["unfolded"] is (folded is None and opened is not None)
    if expected is not None:
        assert len(answer["route"]["nodes"]) == expected
    if folded is not None:
        assert validate(board, [answer["route"]])["revenue"] == answer["route"]["revenue"]


def test_fixture_the_1830_board_as_bo_with_an_offboard_token():
    """fixtures/c2c-d-destination.json: the 1830-late board read as 18C2C-D for
    the B&O (tokens J14, H16, I15 and the K13 offboard), a 5 and a 4D, asking
    for the destination proof K13 to F6."""
    board = json.loads(FIXTURE.read_text())
    answer = solve(board)
    runs = {r["train"]: (r["nodes"], [s["value"] for s in r["stops"]]) for r in answer["routes"]}
    # 4D: every stop holds a B&O token, all doubled: K13 40, J14 30, I15 60, H16 40
    assert runs["4D"] == (["K13-0", "J14-0", "I15-0", "H16-0"], [80, 60, 120, 80])
    # 5: H18 50, G19 80, G17 10, H16 40, I15 60 (a plain train: once)
    assert sorted(runs["5"][1]) == [10, 40, 50, 60, 80]
    assert every_solver(board) == {(340 + 240, "optimal")}
    # K13 to F6 is six stops: the 4D unfolded into an 8 runs it, without doubling
    proof = answer["connect"]
    assert (proof["possible"], proof["unfolded"], proof["status"]) == (True, True, "exact")
    assert proof["route"]["nodes"] == ["F6-0", "G7-1", "H10-0", "I15-0", "J14-0", "K13-0"]
    assert proof["route"]["revenue"] == 30 + 10 + 30 + 60 + 30 + 40
