"""One small hand-built board per rule of route-rules.md: the validator names
the broken rule, and scores valid routes to the exact figure.

Most boards are a column of flat hexes A1, A3, A5, ... (boards.column), with
company A's token on the first city unless a test says otherwise.
"""

from __future__ import annotations

import dataclasses

import pytest
from boards import cell, city, column, line_board, offboard, position, route, stop, town, track, visit_bonus

from routecalc import PositionError, api, load_position, validate
from routecalc.errors import RouteViolation
from routecalc.validate import RouteSetValidator


def violation(pos, routes) -> RouteViolation:
    with pytest.raises(RouteViolation) as err:
        validate(pos, routes)
    return err.value


def revenue(pos, routes) -> int:
    return validate(pos, routes)["revenue"]


# The triangle A1 - A3 - B2: A1 holds two cities (A1-0 towards A3, A1-1
# towards B2), A3 a city joined to both; B2 is plain track.
TRIANGLE = [
    cell("A1", "city=revenue:20;city=revenue:30;path=a:0,b:_0;path=a:5,b:_1", tokens=[["A"], [None]]),
    cell("A3", city(40, edges=(3, 4))),
    cell("B2", track((2, 1))),
]

# Two tracks join A1-0 and A3-0: straight, and round through B2.
TWO_TRACKS = [
    cell("A1", city(20, edges=(0, 5)), tokens=[["A"]]),
    cell("A3", city(40, edges=(3, 4))),
    cell("B2", track((2, 1))),
]


# -- rules ---------------------------------------------------------------------------------


def test_too_few_stops():
    err = violation(line_board(city(20), city(30)), [route("2", "A1-0")])
    assert (err.rule, err.route) == ("too_few_stops", 0)


def test_node_twice():
    err = violation(line_board(city(20), city(30), trains=["4"]), [route("4", "A1-0", "A3-0", "A1-0")])
    assert err.rule == "node_twice"
    assert "A1-0" in err.detail


def test_group_twice():
    pos = line_board(city(10, groups="G"), city(20), city(30, groups="G"), token_at=1, trains=["3"])
    err = violation(pos, [route("3", "A1-0", "A3-0", "A5-0")])
    assert err.rule == "group_twice"
    assert "A5-0" in err.detail
    assert revenue(pos, [route("3", "A1-0", "A3-0")]) == 30


def test_group_twice_counts_skipped_stops():
    # The 1E pays only its token stop, but the group is visited twice anyway.
    pos = line_board(offboard(50, groups="W"), city(20), offboard(40, groups="W"), token_at=1, trains=["1E"])
    assert violation(pos, [route("1E", "A1-0", "A3-0", "A5-0")]).rule == "group_twice"


def test_wrong_gauge():
    narrow = line_board(city(20, path="track:narrow"), city(30, path="track:narrow"))
    err = violation(narrow, [route("2", "A1-0", "A3-0")])
    assert err.rule == "wrong_gauge"
    assert "the 2 cannot use" in err.detail


def test_dual_track_carries_broad_trains():
    dual = line_board(city(20, path="track:dual"), city(30, path="track:dual"))
    assert revenue(dual, [route("2", "A1-0", "A3-0")]) == 50


def test_change_of_gauge_is_a_dead_end():
    mixed = line_board(city(20), city(30, path="track:narrow"))
    assert violation(mixed, [route("2", "A1-0", "A3-0")]).rule == "not_connected"


def test_reversal():
    # Both A1 cities leave by edge 0; the town in A3 is a dead end, so going
    # on from it means leaving on the path the route came in on.
    pos = position(
        [
            cell("A1", "city=revenue:20;city=revenue:30;path=a:0,b:_0;path=a:0,b:_1", tokens=[["A"], [None]]),
            cell("A3", town(10, edges=(3,))),
        ],
        trains=["3"],
    )
    err = violation(pos, [route("3", "A1-0", "A3-0", "A1-1")])
    assert err.rule == "reversal"
    assert "A3-0" in err.detail


# A junction hub in C5 joins B6, D4, C7 and C3; D4 and C7 are also joined
# round through D6.
HUB = [
    cell("C5", "junction;path=a:0,b:_0;path=a:1,b:_0;path=a:3,b:_0;path=a:4,b:_0"),
    cell("B6", city(10, edges=(4,)), tokens=[["A"]]),
    cell("D4", city(20, edges=(1, 0))),
    cell("D6", track((3, 1))),
    cell("C7", city(30, edges=(3, 4))),
    cell("C3", city(40, edges=(0,))),
]


def test_track_reused_within_a_route():
    # B6 -> D4 and C7 -> C3 both cross the junction of C5.
    hexes = [["B6", "C5", "D4"], ["D4", "D6", "C7"], ["C7", "C5", "C3"]]
    pos = position(HUB, trains=["4"])
    err = violation(pos, [route("4", "B6-0", "D4-0", "C7-0", "C3-0", hexes=hexes)])
    assert err.rule == "track_reused"
    assert "junction C5-0" in err.detail
    assert revenue(pos, [route("4", "B6-0", "D4-0", "C7-0", hexes=hexes[:2])]) == 60


def test_track_reused_between_routes():
    pos = line_board(city(20), city(30), city(40), token_at=1, trains=["2", "2"])
    err = violation(pos, [route("2", "A1-0", "A3-0"), route("2", "A3-0", "A1-0")])
    assert (err.rule, err.route) == ("track_reused", 1)
    assert "route 0" in err.detail
    # Meeting at a city is fine: 20 + 30, 30 + 40.
    assert revenue(pos, [route("2", "A1-0", "A3-0"), route("2", "A3-0", "A5-0")]) == 120


# Between A3's city and its top edge run two tracks along the same cells: the
# edge's path straight in, and round through a junction beside the city;
# towards A5 the only track passes that junction.
JUNCTION_BESIDE = column(
    city(10, edges=(0,)),
    "city=revenue:20;junction;path=a:3,b:_1;path=a:_1,b:_0;path=a:3,b:_0;path=a:_1,b:0",
    city(30, edges=(3,)),
    tokens={0: [["A"]]},
)
# Two junctions in A3: in from A1 through J0 to the city, or J0, J1 and the
# city; in from A5 only through J1.
TWO_JUNCTIONS = column(
    city(10, edges=(0,)),
    "junction;junction;city=revenue:20;path=a:3,b:_0;path=a:_0,b:_2;path=a:_0,b:_1;path=a:_1,b:_2;path=a:_1,b:0",
    city(30, edges=(3,)),
    tokens={0: [["A"]], 2: [["A"]]},
)


@pytest.mark.parametrize("nodes", [("A1-0", "A3-0", "A5-0"), ("A5-0", "A3-0", "A1-0")])
def test_a_route_takes_whichever_track_of_the_same_cells_is_valid(nodes):
    # read either way, the route needs the straight track at A1's side
    assert revenue(position(JUNCTION_BESIDE, trains=["3"]), [route("3", *nodes)]) == 60


@pytest.mark.parametrize("order", [1, -1])
def test_the_order_of_routes_never_decides_which_track_they_take(order):
    routes = [route("2", "A1-0", "A3-2"), route("2", "A5-0", "A3-2")][::order]
    assert revenue(position(TWO_JUNCTIONS, trains=["2", "2"]), routes) == 30 + 50


@pytest.mark.parametrize("solver", ["reference", "fast", "cpsat", "auto"])
@pytest.mark.parametrize("cells, optimum", [(JUNCTION_BESIDE, 60), (TWO_JUNCTIONS, 80)])
def test_answers_on_tracks_of_the_same_cells_validate(solver, cells, optimum):
    pos = position(cells, trains=["3"] if cells is JUNCTION_BESIDE else ["2", "2"])
    answer = api.solve(pos, solver)
    assert answer["revenue"] == optimum
    assert revenue(pos, answer["routes"]) == optimum


def test_a_clash_on_every_track_names_the_first_readings_rule():
    # both routes need A3's J1 whichever track the first takes
    routes = [route("3", "A1-0", "A3-2", "A5-0"), route("2", "A5-0", "A3-2")]
    err = violation(position(TWO_JUNCTIONS, trains=["3", "2"]), routes)
    assert (err.rule, err.route) == ("track_reused", 1)
    assert "with route 0" in err.detail


def test_terminal_passed_at_an_offboard():
    pos = line_board(city(20), offboard(50), city(30), trains=["3"])
    err = violation(pos, [route("3", "A1-0", "A3-0", "A5-0")])
    assert err.rule == "terminal_passed"
    assert "A3-0" in err.detail


def test_offboards_start_and_end_routes():
    pos = line_board(offboard(50), city(20), offboard(40), token_at=1, trains=["3"])
    assert revenue(pos, [route("3", "A1-0", "A3-0", "A5-0")]) == 110
    assert revenue(pos, [route("3", "A3-0", "A1-0")]) == 70


TERMINAL_CITY = "city=revenue:30;path=a:3,b:_0,terminal:1;path=a:0,b:_0"


def test_terminal_passed_on_a_terminal_path():
    pos = line_board(city(20), TERMINAL_CITY, city(40), trains=["3"])
    for nodes in (["A1-0", "A3-0", "A5-0"], ["A5-0", "A3-0", "A1-0"]):
        err = violation(pos, [route("3", *nodes)])
        assert err.rule == "terminal_passed"
        assert "passes through A3-0, which only ends a route" in err.detail


def test_a_terminal_path_may_end_or_start_a_route():
    pos = line_board(city(20), TERMINAL_CITY, city(40), trains=["2"])
    assert revenue(pos, [route("2", "A1-0", "A3-0")]) == 50
    pos = line_board(city(20), TERMINAL_CITY, city(40), token_at=2, trains=["2"])
    assert revenue(pos, [route("2", "A3-0", "A5-0")]) == 70
    # Ending there by its other path is an end too.
    assert revenue(pos, [route("2", "A5-0", "A3-0")]) == 70


# A town with track on through A1 and A5, and a terminal path to its side.
TOWN_WITH_A_SIDING = town(30) + ";path=a:4,b:_0,terminal:1"


def test_the_node_of_a_terminal_path_is_not_passed_by_its_other_paths():
    """Route rule 6: the node at the end of a terminal path only starts or
    ends a route, whichever of its paths the route comes by (a town with a
    terminal siding was passed on its through track: 90 where 50)."""
    pos = line_board(city(20), TOWN_WITH_A_SIDING, city(40), trains=["3"])
    err = violation(pos, [route("3", "A1-0", "A3-0", "A5-0")])
    assert (err.rule, err.detail) == ("terminal_passed", "passes through A3-0, which only ends a route")
    assert revenue(pos, [route("3", "A1-0", "A3-0")]) == 50
    for solver in ("reference", "fast", "cpsat", "auto"):
        assert (solver, api.solve(pos, solver=solver)["revenue"]) == (solver, 50)


def test_blocked_city():
    cells = column(city(20), city(30), city(40), tokens={0: [["A"]], 1: [["B"]]})
    pos = position(cells, trains=["3"])
    err = violation(pos, [route("3", "A1-0", "A3-0", "A5-0")])
    assert err.rule == "blocked_city"
    assert "A3-0" in err.detail


def test_routes_start_and_end_at_a_blocked_city():
    cells = column(city(20), city(30), offboard(60), tokens={0: [["B"]], 1: [["A"]]})
    pos = position(cells, trains=["3"])
    # Blocked A1 at one end, offboard A5 at the other: 20 + 30 + 60.
    assert revenue(pos, [route("3", "A1-0", "A3-0", "A5-0")]) == 110
    assert revenue(pos, [route("3", "A5-0", "A3-0", "A1-0")]) == 110


@pytest.mark.parametrize("tokens", [[["B", None]], [["B", "A"]]])
def test_a_free_slot_or_own_token_does_not_block(tokens):
    cells = column(city(20), city(30, slots=2), city(40), tokens={0: [["A"]], 1: tokens})
    assert revenue(position(cells, trains=["3"]), [route("3", "A1-0", "A3-0", "A5-0")]) == 90


def test_hex_twice_only_with_the_option():
    hexes = [["A1", "A3"], ["A3", "B2", "A1"]]
    routes = [route("3", "A1-0", "A3-0", "A1-1", hexes=hexes)]
    assert revenue(position(TRIANGLE, trains=["3"]), routes) == 90
    err = violation(position(TRIANGLE, trains=["3"], options={"no_hex_twice": True}), routes)
    assert err.rule == "hex_twice"
    assert "A1" in err.detail


def test_two_stops_in_one_cell_do_not_enter_it_twice():
    cells = [
        cell("A1", "city=revenue:20;city=revenue:30;path=a:_0,b:_1;path=a:0,b:_1", tokens=[["A"], [None]]),
        cell("A3", city(40)),
    ]
    pos = position(cells, trains=["3"], options={"no_hex_twice": True})
    answer = validate(pos, [route("3", "A1-0", "A1-1", "A3-0")])
    assert answer["revenue"] == 90
    assert answer["routes"][0]["hexes"] == [["A1"], ["A1", "A3"]]


def test_too_long_in_stops():
    pos = line_board(city(20), city(30), city(40))
    err = violation(pos, [route("2", "A1-0", "A3-0", "A5-0")])
    assert err.rule == "too_long"
    assert "at most 2" in err.detail


@pytest.mark.parametrize(
    "codes, ok",
    [
        ((city(20), city(30), city(40)), False),  # three cities on a 2+1
        ((city(20), town(10), town(10)), False),  # two towns on a 2+1
        ((city(20), town(10), city(40)), True),
    ],
)
def test_too_long_for_n_plus_m(codes, ok):
    pos = line_board(*codes, trains=["2+1"])
    routes = [route("2+1", "A1-0", "A3-0", "A5-0")]
    if ok:
        assert revenue(pos, routes) == 70
    else:
        assert violation(pos, routes).rule == "too_long"


def hex_train_position(limit: int):
    """A train limited by crossed cell edges, as H trains are."""
    pos = load_position(line_board(city(20), track((3, 0)), track((3, 0)), city(30)))
    pos.trains = [dataclasses.replace(pos.trains[0], hex_limit=limit)]
    return pos


def test_too_long_in_hex_edges():
    routes = [route("2", "A1-0", "A7-0")]
    err = violation(hex_train_position(2), routes)
    assert err.rule == "too_long"
    assert "crosses 3 cell edges" in err.detail
    assert revenue(hex_train_position(3), routes) == 50


def test_no_token():
    pos = position(column(city(20), city(30)))
    err = violation(pos, [route("2", "A1-0", "A3-0")])
    assert err.rule == "no_token"
    assert "A token" in err.detail


def test_other_companies_tokens_do_not_count():
    pos = position(column(city(20, slots=2), city(30), tokens={0: [["B", None]]}))
    assert violation(pos, [route("2", "A1-0", "A3-0")]).rule == "no_token"


PLUS_E = {
    "name": "1+1E",
    "distance": [{"nodes": ["offboard"], "pay": 1, "visit": 1}, {"nodes": ["city", "town"], "pay": 0, "visit": 99}],
}


def test_no_token_when_the_token_stop_is_skipped():
    # Cities never pay on this express: the token city is passed, not counted.
    pos = line_board(city(20), offboard(50), trains=[PLUS_E])
    assert violation(pos, [route("1+1E", "A1-0", "A3-0")]).rule == "no_token"
    # With fill and a second offboard slot, the spare slot takes the token city.
    filled = dict(PLUS_E, name="2+E", fill=True, distance=[dict(PLUS_E["distance"][0], pay=2), PLUS_E["distance"][1]])
    answer = validate(line_board(city(20), offboard(50), trains=[filled]), [route("2+E", "A1-0", "A3-0")])
    assert answer["revenue"] == 70
    assert answer["routes"][0]["skip"] == []


def test_not_connected():
    pos = line_board(city(20), "", city(30))
    err = violation(pos, [route("2", "A1-0", "A5-0")])
    assert err.rule == "not_connected"
    assert "A1-0 and A5-0" in err.detail


def test_not_connected_along_the_given_cells():
    pos = line_board(city(20), city(30))
    err = violation(pos, [route("2", "A1-0", "A3-0", hexes=[["A1", "B2", "A3"]])])
    assert err.rule == "not_connected"
    assert "along" in err.detail


def test_ambiguous_lists_the_choices():
    pos = position(TWO_TRACKS)
    err = violation(pos, [route("2", "A1-0", "A3-0")])
    assert err.rule == "ambiguous"
    assert err.choices == [["A1", "A3"], ["A1", "B2", "A3"]]
    assert err.to_json()["choices"] == err.choices


@pytest.mark.parametrize("hexes", [[["A1", "A3"]], [["A1", "B2", "A3"]]])
def test_hexes_settle_the_choice(hexes):
    answer = validate(position(TWO_TRACKS), [route("2", "A1-0", "A3-0", hexes=hexes)])
    assert answer["revenue"] == 60
    assert answer["routes"][0]["hexes"] == hexes


def test_unknown_train():
    pos = line_board(city(20), city(30), city(40))
    err = violation(pos, [route("3", "A1-0", "A3-0")])
    assert err.rule == "unknown_train"
    assert "no '3' train" in err.detail
    err = violation(pos, [route("2", "A1-0", "A3-0"), route("2", "A3-0", "A5-0")])
    assert (err.rule, err.route) == ("unknown_train", 1)
    assert "more routes than '2' trains" in err.detail


def test_trains_sharing_a_name_are_read_the_way_that_pays_best():
    """Routes name their train only by name: where two trains of one name
    differ, the validator gives each route the train that makes the set valid
    and pays most, not merely the first free one."""
    short = {"name": "4", "distance": 2}
    pos = line_board(city(20), city(30), city(40), trains=[short, "4"])
    answer = validate(pos, [route("4", "A1-0", "A3-0", "A5-0")])  # too long for the first 4
    assert answer["revenue"] == 90
    double = {"name": "4", "distance": 4, "multiplier": 2}
    pos = line_board(city(20), city(30), city(40), city(50), trains=[double, "4"], token_at=1)
    answer = validate(pos, [route("4", "A3-0", "A1-0"), route("4", "A3-0", "A5-0", "A7-0")])
    assert [r["revenue"] for r in answer["routes"]] == [50, 240]  # the doubling 4 runs the richer route
    err = violation(
        line_board(city(20), city(30), city(40), city(50), trains=[short, short]), [route("4", "A1-0", "A3-0", "A5-0")]
    )
    assert err.rule == "too_long"  # no reading is valid: the first one's broken rule


@pytest.mark.parametrize(
    "routes, where",
    [
        ({"routes": 3}, "routes"),
        ([3], "routes[0]"),
        ([{"train": "2", "nodes": "A1-0"}], "routes[0].nodes"),
        ([{"nodes": ["A1-0", "A3-0"]}], "routes[0].train"),
        ([{"train": 2, "nodes": ["A1-0", "A3-0"]}], "routes[0].train"),
        ([{"train": "2", "nodes": ["A1-0", "Q7-0"]}], "routes[0].nodes[1]"),
        ([{"train": "2", "nodes": ["A1-0", "A3-0"], "hexes": [["A1", "A3"], ["A3"]]}], "routes[0].hexes"),
        ([{"train": "2", "nodes": ["A1-0", "A3-0"], "hexes": ["A1"]}], "routes[0].hexes[0]"),
        ([{"train": "2", "nodes": ["A1-0", "A3-0"], "hexes": [[1, 2]]}], "routes[0].hexes[0]"),
        ([{"train": "2", "nodes": ["A1-0", "A3-0"], "skip": 5}], "routes[0].skip"),
        ([{"train": "2", "nodes": ["A1-0", "A3-0"], "skip": ["Q7-3"]}], "routes[0].skip[0]"),
    ],
)
def test_malformed_routes_are_position_errors(routes, where):
    with pytest.raises(PositionError) as err:
        validate(line_board(city(20), city(30)), routes)
    assert err.value.where == where


def test_a_junction_is_not_a_route_node():
    with pytest.raises(PositionError) as err:
        validate(position(HUB, trains=["4"]), [route("4", "B6-0", "C5-0", "D4-0")])
    assert err.value.where == "routes[0].nodes[1]"
    assert "junction" in err.value.message


# -- revenue -------------------------------------------------------------------------------


def test_n_train_scores_every_stop():
    answer = validate(line_board(city(20), town(10), offboard(40), trains=["3"]), [route("3", "A1-0", "A3-0", "A5-0")])
    assert answer["revenue"] == 70
    (r,) = answer["routes"]
    assert r["revenue"] == 70
    assert r["skip"] == []
    assert [(s["node"], s["type"], s["value"]) for s in r["stops"]] == [
        ("A1-0", "city", 20),
        ("A3-0", "town", 10),
        ("A5-0", "offboard", 40),
    ]


def test_n_plus_m_pays_cities_and_towns():
    pos = line_board(city(20), town(10), city(30), town(20), trains=["2+2"])
    assert revenue(pos, [route("2+2", "A1-0", "A3-0", "A5-0", "A7-0")]) == 80


DIESEL = "yellow_20|brown_40|diesel_60"


def test_d_train_reads_diesel_revenue():
    pos = line_board(city(20), offboard(DIESEL), trains=["D", "2"])
    assert revenue(pos, [route("D", "A1-0", "A3-0")]) == 80
    assert revenue(pos, [route("2", "A1-0", "A3-0")]) == 60
    obj = line_board(city(20), offboard(DIESEL), trains=[{"name": "D"}])
    assert revenue(obj, [route("D", "A1-0", "A3-0")]) == 80


def test_d_train_is_unlimited():
    codes = [city(10 * (i + 1)) for i in range(12)]
    pos = line_board(*codes, trains=["D"])
    nodes = [f"A{2 * i + 1}-0" for i in range(12)]
    assert revenue(pos, [route("D", *nodes)]) == sum(10 * (i + 1) for i in range(12))


def test_express_pays_its_best_stops_and_skips_the_rest():
    pos = line_board(city(20), town(60), city(10), city(50), trains=["2E"])
    (r,) = validate(pos, [route("2E", "A1-0", "A3-0", "A5-0", "A7-0")])["routes"]
    assert r["revenue"] == 80  # the token stop (20) and the best other (60)
    assert r["skip"] == ["A5-0", "A7-0"]
    assert [s["node"] for s in r["stops"]] == ["A1-0", "A3-0"]


def test_express_keeps_its_token_stop_paying():
    # 1E: the 50 city would pay more, but the token stop must pay.
    pos = line_board(city(20), city(50), trains=["1E"])
    (r,) = validate(pos, [route("1E", "A1-0", "A3-0")])["routes"]
    assert (r["revenue"], r["skip"]) == (20, ["A3-0"])


def test_object_train_with_distance_groups():
    train = {
        "name": "3+2",
        "distance": [{"nodes": ["city", "offboard"], "pay": 3, "visit": 3}, {"nodes": ["town"], "pay": 2, "visit": 2}],
    }
    pos = line_board(city(20), town(10), town(5), offboard(40), trains=[train])
    assert revenue(pos, [route("3+2", "A1-0", "A3-0", "A5-0", "A7-0")]) == 75
    too_many = line_board(city(20), town(10), town(40), town(5), trains=[train])
    assert violation(too_many, [route("3+2", "A1-0", "A3-0", "A5-0", "A7-0")]).rule == "too_long"


def test_object_train_may_not_visit_types_outside_its_groups():
    train = {"name": "2c", "distance": [{"nodes": ["city"], "pay": 2, "visit": 2}]}
    pos = line_board(city(20), town(10), trains=[train])
    err = violation(pos, [route("2c", "A1-0", "A3-0")])
    assert err.rule == "too_long"
    assert "may not visit A3-0" in err.detail


FIVE = {
    "name": "5",
    "distance": [{"nodes": ["city", "offboard"], "pay": 5, "visit": 5}, {"nodes": ["town"], "pay": 0, "visit": 99}],
}


def test_towns_visited_unpaid_without_fill():
    pos = line_board(city(20), town(10), town(30), city(40), trains=[FIVE])
    (r,) = validate(pos, [route("5", "A1-0", "A3-0", "A5-0", "A7-0")])["routes"]
    assert (r["revenue"], r["skip"]) == (60, ["A3-0", "A5-0"])


def test_fill_pays_towns_in_the_spare_city_slots():
    # 5 slots, 2 cities: both towns fill in.
    pos = line_board(city(20), town(10), town(30), city(40), trains=[dict(FIVE, fill=True)])
    assert revenue(pos, [route("5", "A1-0", "A3-0", "A5-0", "A7-0")]) == 100
    # 2 slots, 1 city: only the best town fills in.
    two = {"name": "2", "fill": True, "distance": [dict(FIVE["distance"][0], pay=2, visit=2), FIVE["distance"][1]]}
    pos = line_board(city(20), town(10), town(30), trains=[two])
    (r,) = validate(pos, [route("2", "A1-0", "A3-0", "A5-0")])["routes"]
    assert (r["revenue"], r["skip"]) == (50, ["A3-0"])


def test_fill_never_takes_a_slot_from_the_first_groups_stops():
    """Only the slots the first group's visited stops leave unused fill: a
    2-train that visits two cities pays both, never a richer town instead."""
    two = {"name": "2", "fill": True, "distance": [dict(FIVE["distance"][0], pay=2, visit=2), FIVE["distance"][1]]}
    pos = line_board(city(50), city(10), town(20), trains=[two])
    (r,) = validate(pos, [route("2", "A1-0", "A3-0", "A5-0")])["routes"]
    assert (r["revenue"], r["skip"]) == (60, ["A5-0"])
    assert api.solve(pos)["revenue"] == 60
    # The offboard takes the express's one slot, so the token city is passed unpaid.
    filled = dict(PLUS_E, fill=True)
    assert (
        violation(line_board(offboard(20), city(30), token_at=1, trains=[filled]), [route("1+1E", "A1-0", "A3-0")]).rule
        == "no_token"
    )


def test_multiplier():
    pos = line_board(city(20), city(30), trains=[{"name": "2", "multiplier": 2}])
    assert revenue(pos, [route("2", "A1-0", "A3-0")]) == 100


def test_group_multiplier():
    train = {
        "name": "1+1x",
        "distance": [
            {"nodes": ["city"], "pay": 1, "visit": 1},
            {"nodes": ["offboard"], "pay": 1, "visit": 1, "multiplier": 2},
        ],
    }
    pos = line_board(city(20), offboard(40), trains=[train])
    assert revenue(pos, [route("1+1x", "A1-0", "A3-0")]) == 100


def bonus_board(bonus: dict, trains=None) -> dict:
    return line_board(
        city(20),
        city(30),
        city(40),
        city(0),
        trains=trains or [{"name": "3", "multiplier": 2}],
        options={"bonuses": [bonus]},
    )


@pytest.mark.parametrize("multiplied, total", [(False, (20 + 30) * 2 + 10), (True, (20 + 30 + 10) * 2)])
def test_visit_bonus(multiplied, total):
    pos = bonus_board({"type": "visit", "cells": ["A3", "A7"], "amount": 10, "multiplied": multiplied})
    assert revenue(pos, [route("3", "A1-0", "A3-0")]) == total


def test_visit_bonus_counts_each_listed_cell():
    pos = bonus_board({"type": "visit", "cells": ["A1", "A3", "A5"], "amount": 10}, trains=["3"])
    assert revenue(pos, [route("3", "A1-0", "A3-0", "A5-0")]) == 90 + 30
    assert revenue(pos, [route("3", "A1-0", "A3-0")]) == 50 + 20


@pytest.mark.parametrize("multiplied, total", [(False, 90 * 2 + 40), (True, (90 + 40) * 2)])
def test_connect_bonus(multiplied, total):
    pos = bonus_board({"type": "connect", "sets": [["A1"], ["A5", "A7"]], "amount": 40, "multiplied": multiplied})
    assert revenue(pos, [route("3", "A1-0", "A3-0", "A5-0")]) == total
    assert revenue(pos, [route("3", "A1-0", "A3-0")]) == 100  # A5 not reached: no bonus


def test_a_bonus_never_makes_an_invalid_route_valid():
    pos = bonus_board({"type": "connect", "sets": [["A3"], ["A5"]], "amount": 500}, trains=["2"])
    assert violation(pos, [route("2", "A3-0", "A5-0")]).rule == "no_token"
    assert api.solve(pos)["revenue"] == 50  # A1's 20 and A3's 30: the 500 needs a route without a token


def test_bonus_needs_a_paying_stop_in_the_cell():
    pos = bonus_board({"type": "visit", "cells": ["A3"], "amount": 100}, trains=["1E"])
    # The 1E pays its token stop only; A3 is passed, so no bonus.
    (r,) = validate(pos, [route("1E", "A1-0", "A3-0")])["routes"]
    assert (r["revenue"], r["skip"]) == (20, ["A3-0"])


def test_express_chooses_paying_stops_with_the_bonus_in_mind():
    pos = line_board(city(20), city(50), city(10), trains=["2E"], options=visit_bonus("A5", 50))
    (r,) = validate(pos, [route("2E", "A1-0", "A3-0", "A5-0")])["routes"]
    assert (r["revenue"], r["skip"]) == (20 + 10 + 50, ["A3-0"])


def test_total_is_the_sum_of_routes():
    pos = line_board(city(20), city(30), city(40), offboard(50), token_at=1, trains=["2", "3"])
    answer = validate(pos, [route("2", "A3-0", "A1-0"), route("3", "A3-0", "A5-0", "A7-0")])
    assert [r["revenue"] for r in answer["routes"]] == [50, 120]
    assert answer["revenue"] == 170


def test_validator_object_reuses_its_graph():
    pos = load_position(line_board(city(20), city(30), trains=["2"]))
    validator = RouteSetValidator(pos)
    assert validator.validate([route("2", "A1-0", "A3-0")])["revenue"] == 50
    assert validator.validate({"routes": [route("2", "A3-0", "A1-0")]})["revenue"] == 50
    with pytest.raises(RouteViolation):
        validator.validate([route("2", "A3-0")])


def test_one_stop_tile_helper():
    assert stop("town", 10, edges=(1,), groups="G") == "town=revenue:10,groups:G;path=a:1,b:_0"


def test_two_lanes_carry_two_routes():
    # Each lane is its own track: two trains run A1 - A3 side by side.
    cells = [
        cell("A1", "city=revenue:20,slots:2;path=a:0,b:_0,lanes:2", tokens=[["A", None]]),
        cell("A3", "city=revenue:30;path=a:3,b:_0,lanes:2"),
    ]
    pos = position(cells, trains=["2", "2", "2"])
    routes = [route("2", "A1-0", "A3-0"), route("2", "A3-0", "A1-0")]
    assert revenue(pos, routes) == 100
    err = violation(pos, routes + [route("2", "A1-0", "A3-0")])
    assert (err.rule, err.route) == ("track_reused", 2)


def test_no_change_of_track_where_paths_cross():
    # C5 holds two crossing paths, 0-3 and 1-4: C7 reaches C3, not B6.
    cells = [
        cell("C5", track((0, 3), (1, 4))),
        cell("C7", city(20, edges=(3,)), tokens=[["A"]]),
        cell("C3", city(30, edges=(0,))),
        cell("B6", city(40, edges=(4,))),
    ]
    pos = position(cells)
    assert revenue(pos, [route("2", "C7-0", "C3-0")]) == 50
    assert violation(pos, [route("2", "C7-0", "B6-0")]).rule == "not_connected"


def test_no_routes_earn_nothing():
    assert validate(line_board(city(20), city(30)), {"routes": []}) == {"routes": [], "revenue": 0}
