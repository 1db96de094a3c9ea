"""18Cuba: hand-computed revenues for each rule, the validator's named
violations, bad options named by field, and the search checked against a
brute force over every combination of routes on random tiny boards."""

from __future__ import annotations

import itertools
import json
import random
import time
from pathlib import Path

import pytest
from boards import cell, city, column, offboard, position, route, town, track

from routecalc.api import solve, validate
from routecalc.errors import PositionError, RouteViolation
from routecalc.games.cuba import Game, list_runs, max_flow, validate_cuba
from routecalc.model import load_position

GAME = "18Cuba"
NARROW = "track:narrow"
ROOT = Path(__file__).resolve().parent.parent


def harbor(value: int = 10, edges=(0, 3)) -> str:
    return offboard(value, edges, kind="harbor")


def mill(value: int, edges=(0, 3), **keys) -> str:
    return city(value, edges, kind="mill", **keys)


def sugar(value: int, edges=(0, 3), **keys) -> str:
    return town(value, edges, kind="sugar", **keys)


def cuba(cells: list[dict], trains: list, company: str = "A", **options) -> dict:
    return position(cells, trains, game=GAME, company=company, options=options or None)


def line(*codes: str, tokens: dict[int, list] | None = None, trains: list, company: str = "A", **options) -> dict:
    return cuba(column(*codes, tokens=tokens), trains, company, **options)


def star(center: str, top: str, bottom: str, right_up: str, right_down: str, tokens: dict[str, list]) -> list[dict]:
    """Center A3 joined to A1 (edge 3), A5 (edge 0), B2 (edge 4) and B4 (edge 5)."""
    codes = {"A1": top, "A3": center, "A5": bottom, "B2": right_up, "B4": right_down}
    return [cell(c, code, tokens=tokens.get(c)) for c, code in codes.items()]


def revenue(board: dict, **kw) -> int:
    answer = solve(board, **kw)
    assert answer["status"] == "optimal"
    again = validate(board, answer["routes"])
    assert again["revenue"] == answer["revenue"]  # the validator agrees with the optimiser's answer
    return answer["revenue"]


# -- trains: broad, narrow, obsolete, 4D --------------------------------------------------------

MAJOR_LINE = (harbor(), city(20), city(30), city(40))


@pytest.mark.parametrize(
    "train, expected",
    [
        ("2", 50),  # 20 + 30
        ("3", 90),  # 20 + 30 + 40 (or the harbor beyond the range, paying 0)
        ("4", 100),  # the harbor within range pays 10
        ({"name": "4", "obsolete": True}, 90),  # runs as a 3
        ({"name": "3", "obsolete": True}, 50),  # runs as a 2
        ("3+", 90),
        ("4D", 200),  # (10 + 20 + 30 + 40) * 2
    ],
)
def test_major_ranges(train, expected):
    assert revenue(line(*MAJOR_LINE, tokens={1: [["A"]]}, trains=[train])) == expected


def test_a_major_does_not_run_on_narrow_track():
    board = line(city(20, path=NARROW), city(30, path=NARROW), tokens={0: [["A"]]}, trains=["2"])
    assert revenue(board) == 0
    with pytest.raises(RouteViolation) as err:
        validate(board, [route("2", "A1-0", "A3-0")])
    assert err.value.rule == "wrong_gauge"


def test_4d_doubles_stops_not_sugar():
    board = line(
        city(30), mill(20), harbor(), tokens={0: [["A"]]}, trains=[{"name": "4D", "wagon": 2}], sugar={"A3-0": 3}
    )
    answer = solve(board)
    # (30 + 20 + 10) * 2 = 120, plus 2 cubes at 30 (not doubled) = 60
    assert answer["revenue"] == 180
    assert answer["routes_revenue"] == 120
    assert answer["sugar"] == {"cubes": 2, "income": 60, "by_mill": {"A3-0": 2}}
    assert answer["routes"][0]["sugar"] == 2 and answer["routes"][0]["wagon"] == 2


# -- harbors ---------------------------------------------------------------------------------------


def test_harbor_in_range_pays_beyond_range_pays_nothing():
    board = line(harbor(), city(20), city(30), tokens={1: [["A"]]}, trains=["2", "3"])
    beyond = validate(board, [route("2", "A1-0", "A3-0", "A5-0")])
    assert beyond["revenue"] == 50  # 20 + 30, the harbor beyond the 2's range pays 0
    assert beyond["routes"][0]["skip"] == ["A1-0"]
    inside = validate(board, [route("3", "A1-0", "A3-0", "A5-0")])
    assert inside["revenue"] == 60  # 10 + 20 + 30
    assert inside["routes"][0]["skip"] == []


def test_harbor_to_harbor_counts_the_dearer_harbor():
    board = line(harbor(10), city(20), harbor(30), tokens={1: [["A"]]}, trains=["2"])
    assert revenue(board) == 50  # 20 + 30, the 10 harbor beyond the range
    board = line(harbor(10), city(20), harbor(30), tokens={1: [["A"]]}, trains=["3"])
    assert revenue(board) == 60


def test_only_one_harbor_beyond_the_range():
    board = line(harbor(), city(20), city(30), city(40), tokens={1: [["A"]]}, trains=["2"])
    with pytest.raises(RouteViolation) as err:
        validate(board, [route("2", "A3-0", "A5-0", "A7-0")])
    assert err.value.rule == "too_long"
    with pytest.raises(RouteViolation) as err:
        validate(board, [route("2", "A1-0", "A3-0", "A5-0", "A7-0")])
    assert err.value.rule == "too_long"


def test_a_harbor_only_ends_a_route():
    board = line(city(20), harbor(50), city(30), tokens={0: [["A"]]}, trains=["3"])
    assert revenue(board) == 70  # 20 + 50, never through the harbor
    with pytest.raises(RouteViolation) as err:
        validate(board, [route("3", "A1-0", "A3-0", "A5-0")])
    assert err.value.rule == "terminal_passed"


# -- minors --------------------------------------------------------------------------------------------


def minor_line(trains: list, **options) -> dict:
    codes = [sugar(10, path=NARROW), sugar(20, path=NARROW), mill(30, path=NARROW), sugar(40, path=NARROW)]
    return line(*codes, tokens={2: [["M"]]}, trains=trains, company="M", **options)


@pytest.mark.parametrize(
    "trains, options, expected",
    [
        (["2n"], {}, 70),  # mill 30 + field 40
        (["3n"], {}, 70),  # mill 30 + field 40 beats 10 + 20 + 30 (the mill must end the route)
        (["2n", "3n"], {}, 130),  # 70 + 60
        (["2n", "3n"], {"machines": {"M": [10, 20]}}, 160),  # + the machines once
        (["2n"], {"machines": {"M": [10, 20]}, "sugar": {"A5-0": 4}}, 100),  # minors deliver no sugar
        ([{"name": "3n", "obsolete": True}, "4n"], {}, 130),  # a 2n and a 4n: 70 + 60
    ],
)
def test_minor_routes(trains, options, expected):
    assert revenue(minor_line(trains, **options)) == expected


def test_trains_of_one_name_may_differ_in_obsolete():
    """The 3n runs up (60: three stops), the obsolete 3n (two stops) down
    (70); routes name trains by name only, so either order validates."""
    board = minor_line(["3n", {"name": "3n", "obsolete": True}])
    assert revenue(board) == 130
    up = route("3n", "A5-0", "A3-0", "A1-0")
    down = route("3n", "A5-0", "A7-0")
    assert validate(board, [up, down])["revenue"] == validate(board, [down, up])["revenue"] == 130


@pytest.mark.parametrize(
    "trains, options",
    [
        (["3", {"name": "3", "obsolete": True}], {}),
        ([{"name": "3", "obsolete": True}, {"name": "3", "wagon": 2}], {"wagons": []}),
    ],
)
def test_a_major_route_goes_to_the_train_that_may_run_it_in_any_order(trains, options):
    """Three stops only the fresh 3 (or the one with the wagon) may run,
    two stops either: by 18Cuba's rules, an obsolete 3 runs two, and not
    three even with a stop beyond its range that is no harbor."""
    board = line(
        city(20), city(30), city(40), city(50), city(60), tokens={0: [["A"]], 3: [["A"]]}, trains=trains, **options
    )
    three, two = route("3", "A1-0", "A3-0", "A5-0"), route("3", "A7-0", "A9-0")
    assert validate(board, [three, two])["revenue"] == validate(board, [two, three])["revenue"] == 200
    answer = solve(board)
    assert validate(board, answer["routes"][::-1])["revenue"] == answer["revenue"] == 230


def test_nine_trains_of_one_name_read_every_way_that_carries_sugar():
    """Nine 3s, four plain, four obsolete and an obsolete one with a 3-wagon:
    the route harbor, mill, city pays 40 on a plain 3 but 30 + 3 cubes on the
    wagon's obsolete 3 (its harbor beyond the range pays nothing), beside
    eight routes of 20. In either order the routes are read the best way,
    280, which 2^9 ways of reading them had put past the readings priced
    (200 in one order)."""
    cells = [
        {"id": "A1", "code": "offboard=revenue:10,kind:harbor;path=a:0,b:_0"},
        {"id": "A3", "code": "city=revenue:10,kind:mill;path=a:0,b:_0;path=a:3,b:_0"},
        {"id": "A5", "code": "city=revenue:20;path=a:3,b:_0", "tokens": [["A"]]},
    ]
    columns = "CEGIKMOQ"
    for c in columns:
        cells.append({"id": f"{c}1", "code": "city=revenue:10;path=a:0,b:_0", "tokens": [["A"]]})
        cells.append({"id": f"{c}3", "code": "city=revenue:10;path=a:3,b:_0"})
    trains = [{"name": "3"}] * 4 + [{"name": "3", "obsolete": True}] * 4 + [{"name": "3", "obsolete": True, "wagon": 3}]
    board = cuba(cells, trains, sugar={"A3-0": 3})
    routes = [route("3", "A1-0", "A3-0", "A5-0")] + [route("3", f"{c}1-0", f"{c}3-0") for c in columns]
    for proposal in (routes, routes[::-1]):
        checked = validate(board, proposal)
        assert (checked["revenue"], checked["sugar"]["cubes"]) == (280, 3)
    assert solve(board)["revenue"] == 280


def test_minor_without_a_route_earns_no_machines():
    board = line(
        mill(30, path=NARROW),
        city(20, path=NARROW),
        tokens={0: [["M"]]},
        trains=["2n"],
        company="M",
        machines={"M": [10]},
    )
    answer = solve(board)
    assert answer["revenue"] == 0 and answer["routes"] == [] and answer["machines"] == 0


def test_narrow_trains_never_enter_a_harbor():
    board = line(
        mill(30, path=NARROW),
        sugar(10, path=NARROW),
        harbor(edges=(3,)),
        tokens={0: [["M"]]},
        trains=["3n"],
        company="M",
    )
    board["hexes"][2]["code"] = "offboard=revenue:10,kind:harbor;path=a:3,b:_0,track:narrow"
    assert revenue(board) == 40
    with pytest.raises(RouteViolation) as err:
        validate(board, [route("3n", "A1-0", "A3-0", "A5-0")])
    assert err.value.rule == "narrow_harbor"


@pytest.mark.parametrize(
    "nodes",
    [
        ("A1-0", "A3-0", "A5-0", "A7-0"),  # the mill in the middle
        ("A3-0", "A5-0", "A7-0"),
    ],
)
def test_minor_route_shape(nodes):
    board = minor_line(["5n"])
    with pytest.raises(RouteViolation) as err:
        validate(board, [route("5n", *nodes)])
    assert err.value.rule in ("minor_route", "no_token")


@pytest.mark.parametrize("solver", ["auto", "reference", "cpsat"])
def test_a_minor_with_two_home_mills_runs_from_one(solver):
    """A minor whose token lies in two mills runs from one of them: a route
    from mill to mill stops at a city that is not a sugar field."""
    board = line(
        mill(20, path=NARROW),
        sugar(10, path=NARROW),
        mill(30, path=NARROW),
        tokens={0: [["M"]], 2: [["M"]]},
        trains=["3n"],
        company="M",
    )
    assert revenue(board, solver=solver) == 40  # the field and the 30 mill
    with pytest.raises(RouteViolation) as err:
        validate(board, [route("3n", "A1-0", "A3-0", "A5-0")])
    assert err.value.rule == "minor_route"


def test_minor_route_through_a_city_or_plain_town():
    board = line(
        mill(30, path=NARROW),
        city(20, path=NARROW),
        town(10, path=NARROW),
        tokens={0: [["M"]]},
        trains=["3n"],
        company="M",
    )
    with pytest.raises(RouteViolation) as err:
        validate(board, [route("3n", "A1-0", "A3-0")])
    assert err.value.rule == "minor_route"
    assert revenue(board) == 0


def test_a_major_does_not_stop_at_a_sugar_field():
    board = line(city(20), sugar(10), city(30), tokens={0: [["A"]]}, trains=["3"])
    assert revenue(board) == 0
    with pytest.raises(RouteViolation) as err:
        validate(board, [route("3", "A1-0", "A3-0", "A5-0")])
    assert err.value.rule == "sugar_field"


# -- sugar and wagons ------------------------------------------------------------------------------------


def mill_star(trains: list, **options) -> dict:
    """Mill 20 in the middle; harbors above and below; the company's 30 and 40 to the right."""
    cells = star(
        mill(20, edges=(0, 3, 4, 5)),
        harbor(edges=(0,)),
        harbor(edges=(3,)),
        city(30, edges=(1,)),
        city(40, edges=(2,)),
        tokens={"B2": [["A"]], "B4": [["A"]]},
    )
    return cuba(cells, trains, **options)


@pytest.mark.parametrize(
    "cubes, expected",
    [
        (3, 220),  # 60 + 70, both through the mill to a harbor: 3 cubes (2 + 1) * 30
        (1, 160),  # the trains compete for one cube: 130 + 30
        (0, 130),
        (9, 250),  # two 2-wagons full: 130 + 4 * 30
    ],
)
def test_trains_share_the_sugar_supply(cubes, expected):
    board = mill_star([{"name": "3", "wagon": 2}, {"name": "3", "wagon": 2}], sugar={"A3-0": cubes})
    answer = solve(board)
    assert answer["revenue"] == expected
    assert answer["sugar"]["cubes"] == min(cubes, 4)
    assert sum(r["sugar"] for r in answer["routes"]) == min(cubes, 4)
    assert validate(board, answer["routes"])["revenue"] == expected


def test_a_supply_of_a_billion_cubes_is_carried_at_once():
    """A mill holding 10^9 cubes (the most a position may give) and a 10^9
    wagon: the flows carry them in one augmenting path, not a cube at a time
    (the solve ran minutes past a 5 s limit, the validator likewise)."""
    most = 10**9
    board = line(harbor(), mill(20), tokens={1: [["A"]]}, trains=[{"name": "2", "wagon": most}], sugar={"A3-0": most})
    started = time.perf_counter()
    answer = solve(board, time_limit=5)
    assert (answer["status"], answer["revenue"], answer["sugar"]["cubes"]) == ("optimal", 30 * most + 30, most)
    assert validate(board, answer["routes"], time_limit=5)["revenue"] == 30 * most + 30
    assert time.perf_counter() - started < 10  # both within their limits
    assert max_flow([most, 5], [(0, 1), (1,)], {0: most, 1: most}) == [{0: most}, {1: 5}]


def test_more_than_64_fc_cities_are_searched_plainly():
    """66 cities on a line, 65 of them holding an FC token: past the 64 the
    coupled search's bit sets hold, the plain search answers (it was
    refused, naming an options.sugar the position does not have)."""
    cells = [city(10, (0, 3)) for _ in range(66)]
    tokens = {0: [["A"]], **{k: [["FC"]] for k in range(1, 66)}}
    answer = solve(line(*cells, tokens=tokens, trains=["3"]))
    assert (answer["status"], answer["revenue"]) == ("optimal", 20)  # passing an FC city costs its 20 fee


def test_no_wagon_no_sugar():
    assert revenue(mill_star(["3", "3"], sugar={"A3-0": 3})) == 130


def wagon_line(trains: list, **options) -> dict:
    return line(
        harbor(),
        mill(20),
        city(30),
        mill(20),
        harbor(),
        tokens={2: [["A"]]},
        trains=trains,
        sugar={"A3-0": 2, "A7-0": 1},
        **options,
    )


def test_the_optimiser_assigns_the_wagons():
    board = wagon_line(["3", "3"], wagons=[1, 2])
    answer = solve(board)
    # routes 60 + 60; the 2-wagon goes to the train past the mill with 2 cubes: 3 cubes = 90
    assert answer["revenue"] == 210
    wagons = {
        r["nodes"][1] if r["nodes"][0] in ("A1-0", "A9-0") else r["nodes"][-2]: r["wagon"] for r in answer["routes"]
    }
    assert wagons == {"A3-0": 2, "A7-0": 1}


def test_a_proposal_may_pin_its_wagon():
    board = wagon_line(["3", "3"], wagons=[1, 2])
    routes = [dict(route("3", "A1-0", "A3-0", "A5-0"), wagon=1), route("3", "A5-0", "A7-0", "A9-0")]
    assert validate(board, routes)["revenue"] == 180  # 120 + (1 + 1) * 30
    assert validate(board, [route("3", "A1-0", "A3-0", "A5-0"), route("3", "A5-0", "A7-0", "A9-0")])["revenue"] == 210
    with pytest.raises(RouteViolation) as err:
        validate(board, [dict(route("3", "A1-0", "A3-0", "A5-0"), wagon=3)])
    assert err.value.rule == "wagon"
    for bad in ("2", None, 1.5, True, -1):  # not a capacity: bad input, not a broken rule
        with pytest.raises(PositionError) as named:
            validate(board, [dict(route("3", "A1-0", "A3-0", "A5-0"), wagon=bad)])
        assert named.value.where == "routes[0].wagon"


def test_a_pool_of_many_wagons_is_cut_to_the_largest_the_trains_can_take():
    """Thirty wagons for two trains: every assignment of the pool was tried
    (16 wagons took 29 s past a 2 s limit, 30 never ended); only the two largest
    can matter. A proposal may still pin a small one."""
    board = wagon_line(["3", "3"], wagons=[1] * 30 + [2])
    t0 = time.process_time()
    assert revenue(board) == 210  # as with the wagons [1, 2]
    assert time.process_time() - t0 < 5
    routes = [dict(route("3", "A1-0", "A3-0", "A5-0"), wagon=1), route("3", "A5-0", "A7-0", "A9-0")]
    assert validate(board, routes)["revenue"] == 180


@pytest.mark.parametrize("pin", [{}, {"wagon": 3}])
def test_trains_of_one_name_differing_in_obsolete_and_wagon(pin):
    """An obsolete 3 carrying a 3-wagon beside a plain 3: the route mill - city
    - harbor pays 40 on the plain 3 (no wagon), or 30 on the obsolete one (the
    harbor beyond its range) with 3 cubes delivered, 90. The validator once
    scored the plain 3's route with the other train's wagon (130), and with
    the wagon named refused it (no 3-wagon in options.wagons)."""
    board = line(
        mill(20, edges=(0,)),
        city(10),
        harbor(edges=(3,)),
        tokens={0: [["B"]], 1: [["A"]]},
        trains=[{"name": "3", "wagon": 3, "obsolete": True}, "3"],
        sugar={"A1-0": 3},
    )
    assert revenue(board) == 120
    answer = validate(board, [dict(route("3", "A1-0", "A3-0", "A5-0"), **pin)])
    assert (answer["revenue"], answer["sugar"]["cubes"]) == (120, 3)


def test_a_route_only_one_train_of_a_name_runs_carries_that_trains_wagon():
    """A 2 (one harbor beyond its range) runs harbor - mill - mill; the
    obsolete 2 with the 1-wagon cannot (one stop and the harbor), so no cube
    is delivered: 20, not 20 + 30."""
    board = line(
        harbor(edges=(0,)),
        mill(20),
        mill(0, edges=(3,)),
        tokens={2: [["A"]]},
        trains=[{"name": "2", "obsolete": True, "wagon": 1}, "2"],
        sugar={"A3-0": 1, "A5-0": 2},
    )
    assert revenue(board) == 20
    assert validate(board, [route("2", "A1-0", "A3-0", "A5-0")])["revenue"] == 20


def test_sugar_needs_a_harbor_end():
    board = line(
        city(30), mill(20), city(10), tokens={0: [["A"]]}, trains=[{"name": "3", "wagon": 3}], sugar={"A3-0": 3}
    )
    assert revenue(board) == 60


# -- FC tokens ---------------------------------------------------------------------------------------------


def fc_line(trains: list, **options) -> dict:
    return line(city(30), city(40), city(50), tokens={0: [["A"]], 1: [["FC"]]}, trains=trains, **options)


def test_fc_fee_paid_when_it_pays_off():
    answer = solve(fc_line(["3"]))
    assert answer["revenue"] == 100  # 30 + 40 + 50 - 20
    assert answer["fees"] == {"paid": ["A3-0"], "amount": 20}
    assert answer["routes"][0]["fc_passed"] == ["A3-0"]


def test_fc_fee_not_paid_when_it_does_not():
    answer = solve(fc_line(["3"], fc_fee=60))
    assert answer["revenue"] == 70  # 30 + 40, ending at the FC city; 120 - 60 would be less
    assert answer["fees"] == {"paid": [], "amount": 0}


def test_a_plus_train_ignores_one_fc_token_free():
    answer = solve(fc_line(["3+"]))
    assert answer["revenue"] == 120
    assert answer["fees"]["amount"] == 0 and answer["routes"][0]["fc_free"] == "A3-0"


def fc_star(trains: list) -> dict:
    cells = star(
        city(10, edges=(0, 3, 4, 5)),
        city(20, edges=(0,)),
        city(30, edges=(3,)),
        city(40, edges=(1,)),
        city(50, edges=(2,)),
        tokens={"A3": [["FC"]], "A1": [["A"]], "B2": [["A"]]},
    )
    return cuba(cells, trains)


@pytest.mark.parametrize(
    "trains, expected, fee",
    [
        (["3", "3"], 140, 20),  # 60 + 100, the FC city paid once for both trains
        (["3+", "3"], 140, 20),  # the + train's free ignore does not cover the other train
        (["3+", "3+"], 160, 0),
        (["2", "2"], 80, 0),  # 30 + 50, both end at the FC city
    ],
)
def test_fc_fee_per_token_per_round(trains, expected, fee):
    answer = solve(fc_star(trains))
    assert answer["revenue"] == expected and answer["fees"]["amount"] == fee
    assert validate(fc_star(trains), answer["routes"])["revenue"] == expected


def test_a_city_stays_blocked_by_other_tokens():
    board = line(city(30), city(40, slots=2), city(50), tokens={0: [["A"]], 1: [["B", "B"]]}, trains=["3"])
    assert revenue(board) == 70
    with pytest.raises(RouteViolation) as err:
        validate(board, [route("3", "A1-0", "A3-0", "A5-0")])
    assert err.value.rule == "blocked_city"
    board = line(city(30), city(40, slots=2), city(50), tokens={0: [["A"]], 1: [["FC", "B"]]}, trains=["3"])
    assert revenue(board) == 100  # ignoring the FC token frees a slot


def test_ignoring_an_fc_token_does_not_stand_for_the_company_own():
    """A + train may pass the FC's city free, but its route still needs one of
    the company's tokens: A's only token lies off the line, so nothing runs."""
    board = line(city(30), city(40), city(50), tokens={1: [["FC"]]}, trains=["3+"])
    board["hexes"].append(cell("C1", city(5), tokens=[["A"]]))
    assert revenue(board) == 0
    with pytest.raises(RouteViolation) as err:
        validate(board, [route("3+", "A1-0", "A3-0", "A5-0")])
    assert err.value.rule == "no_token"


# -- the FC's income ------------------------------------------------------------------------------------------


def fc_board(trains: list) -> dict:
    havana = "city=revenue:50,groups:Havana;city=revenue:50,groups:Havana;path=a:0,b:_0;path=a:3,b:_1"
    cells = column(city(20), city(30), city(40), mill(10), tokens={0: [["FC"]], 1: [["FC"]], 2: [["FC"]]})
    cells.append(cell("A9", havana, tokens=[["FC"], ["FC"]]))
    return cuba(cells, trains, company="FC", sugar={"A7-0": 3})


@pytest.mark.parametrize(
    "trains, expected",
    [
        (["1"], 80),  # Havana 50 + 3 cubes * 10
        (["2"], 120),  # 50 + 40 + 30
        (["1", "8"], 170),  # the longest range: 50 + 40 + 30 + 20 + 30 (Havana once)
        ([], 30),
    ],
)
def test_fc_income(trains, expected):
    answer = solve(fc_board(trains))
    assert answer["revenue"] == expected and answer["routes"] == []
    assert answer["fc_income"]["sugar"] == 30
    assert validate(fc_board(trains), [])["revenue"] == expected
    with pytest.raises(RouteViolation) as err:
        validate(fc_board(trains), [route("1", "A1-0", "A3-0")])
    assert err.value.rule == "fc_runs"


@pytest.mark.parametrize(
    "routes, where",
    [("garbage", "routes"), ([{"train": "2"}], "routes[0].nodes"), (["A1-0"], "routes[0]"), ({}, "routes")],
)
def test_a_malformed_proposal_for_the_fc_is_a_position_error_as_in_every_game(routes, where):
    """The proposal's shape is read first (it was the route violation fc_runs)."""
    for board in (fc_board(["2"]), line(city(20), city(30), tokens={0: [["A"]]}, trains=["2"])):
        with pytest.raises(PositionError) as err:
            validate(board, routes)
        assert err.value.where == where
    with pytest.raises(PositionError) as err:
        validate(fc_board(["2"]), [{"train": "X"}])
    assert err.value.where == "routes[0].nodes"


def test_the_fcs_validation_has_the_validation_shape():
    """``{"routes", "revenue"}`` with the game's parts (answer-format.md), not the solve answer."""
    answer, checked = solve(fc_board(["2"])), validate(fc_board(["2"]), {"routes": []})
    assert set(answer) - set(checked) == {"status", "bound", "solver", "stats"}
    assert checked == {k: answer[k] for k in ("company", "revenue", "routes", "fc_income", "parts")}


# -- bad input ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change, where",
    [
        (lambda b: b.update(options={"sugar": {"A3-0": 2}}), "options.sugar.A3-0"),  # not a mill
        (lambda b: b.update(options={"sugar": {"Z9-0": 2}}), "options.sugar.Z9-0"),
        (lambda b: b.update(options={"sugar": {"A5-0": -1}}), "options.sugar.A5-0"),
        (lambda b: b.update(options={"sugar": [1]}), "options.sugar"),
        (lambda b: b.update(options={"wagons": [0]}), "options.wagons"),
        (lambda b: b.update(options={"wagons": 2}), "options.wagons"),
        (lambda b: b.update(options={"fc_fee": -5}), "options.fc_fee"),
        (lambda b: b.update(options={"machines": {"A": [10]}}), "options.machines.A"),  # A is a major
        (lambda b: b.update(options={"machines": {"M": "10"}}), "options.machines.M"),
        (
            lambda b: b.update(options={"bonuses": [{"type": "visit", "cells": ["A1"], "amount": 10}]}),
            "options.bonuses",
        ),
        (lambda b: b.update(options={"last_round": True}), "options.last_round"),
        (lambda b: b.update(trains=["7"]), "trains[0]"),
        (lambda b: b.update(trains=["1"]), "trains[0]"),
        (lambda b: b.update(trains=["2", "2n"]), "trains"),
        (lambda b: b.update(trains=[{"name": "2n", "wagon": 1}]), "trains[0].wagon"),
        (lambda b: b.update(trains=[{"name": "2", "wagon": "big"}]), "trains[0].wagon"),
        (lambda b: b.update(trains=[{"name": "3", "obsolete": "yes"}]), "trains[0].obsolete"),
        (lambda b: b.update(trains=[{"name": "2n", "obsolete": True}]), "trains[0].obsolete"),
        (lambda b: b.update(trains=[{"name": "3", "distance": 3}]), "trains[0].distance"),
        (lambda b: b.update(trains=[{"name": "3", "multiplier": 2}]), "trains[0].multiplier"),
        (lambda b: b["hexes"][0].update(code=city(10, kind="harbor")), "cell A1"),
        (lambda b: b["hexes"][1].update(code=town(10, kind="mill")), "cell A3"),
        (lambda b: b["hexes"][1].update(code=city(10, kind="port")), "cell A3"),
    ],
)
def test_bad_input_is_named(change, where):
    board = line(harbor(), city(20), mill(30), tokens={1: [["A"]]}, trains=["3"])
    change(board)
    with pytest.raises(PositionError) as err:
        load_position(board)
    assert err.value.where == where, err.value


def test_minor_wagons_option_is_refused():
    with pytest.raises(PositionError) as err:
        load_position(minor_line(["2n"], wagons=[1]))
    assert err.value.where == "options.wagons"


# -- the fixture ---------------------------------------------------------------------------------------------------


def test_fixture_major_and_minor():
    data = json.loads((ROOT / "fixtures" / "cuba-small.json").read_text())
    major = solve(data)
    # the 5 (2-wagon) runs harbor - Havana - Matanzas mill - harbor: 10 + 40 + 30 + 10 = 90 and 2 cubes (60);
    # the 3+ runs Havana - B2 - harbor past the FC city free: 40 + 20 + 10 = 70
    assert major["revenue"] == 220 and major["fees"]["amount"] == 0 and major["sugar"]["cubes"] == 2
    assert {r["train"]: r["revenue"] for r in major["routes"]} == {"5": 90, "3+": 70}
    minor = solve(dict(data, company="HG", trains=["2n", "3n"]))
    # mill 30 + field 20 = 50, mill 30 + fields 20 + 10 = 60, one 10 machine
    assert minor["revenue"] == 120 and minor["machines"] == 10
    fc = solve(dict(data, company="FC", trains=["2"]))
    assert fc["revenue"] == 90  # Havana 40 + B2 20 + 3 unshipped cubes * 10
    # what is not a route's revenue is listed in parts, and everything adds up
    assert [(p["name"], p["amount"]) for p in major["parts"]] == [("sugar", 60)]
    assert [(p["name"], p["amount"]) for p in minor["parts"]] == [("machines", 10)]
    assert [(p["name"], p["amount"]) for p in fc["parts"]] == [("FC cities", 60), ("unshipped sugar", 30)]
    for answer in (major, minor, fc):
        assert (
            sum(r["revenue"] for r in answer["routes"]) + sum(p["amount"] for p in answer["parts"]) == answer["revenue"]
        )


def test_fees_are_a_negative_part():
    board = fc_line(["3"])
    answer = solve(board)
    assert [(p["name"], p["amount"]) for p in answer["parts"]] == [("FC fees", -20)]
    assert sum(r["revenue"] for r in answer["routes"]) - 20 == answer["revenue"] == 100


# -- time limit -------------------------------------------------------------------------------------------------


def test_time_limit_answers_feasible_with_a_true_bound():
    board = mill_star([{"name": "3", "wagon": 2}, {"name": "3", "wagon": 2}], sugar={"A3-0": 3})
    answer = solve(board, time_limit=1e-9)
    assert answer["status"] == "feasible"
    assert answer["revenue"] <= 220 <= answer["bound"]


# -- exactness: the search against every combination -----------------------------------------------------------


def test_max_flow_matches_brute_force():
    rng = random.Random(7)
    for _ in range(300):
        trains = rng.randint(1, 3)
        supply = {m: rng.randint(0, 3) for m in range(3)}
        caps = [rng.randint(0, 3) for _ in range(trains)]
        mills = [tuple(m for m in supply if rng.random() < 0.5) for _ in range(trains)]
        flows = max_flow(caps, mills, supply)
        for t, f in enumerate(flows):
            assert sum(f.values()) <= caps[t] and set(f) <= set(mills[t])
        for m, cubes in supply.items():
            assert sum(f.get(m, 0) for f in flows) <= cubes
        pairs = [(t, m) for t in range(trains) for m in mills[t]]
        best = 0
        for amounts in itertools.product(range(4), repeat=len(pairs)):
            load = [0] * trains
            used = dict.fromkeys(supply, 0)
            for (t, m), a in zip(pairs, amounts):
                load[t] += a
                used[m] += a
            if all(load[t] <= caps[t] for t in range(trains)) and all(used[m] <= supply[m] for m in supply):
                best = max(best, sum(amounts))
        assert sum(sum(f.values()) for f in flows) == best


FLAT = {0: (0, 2), 1: (-1, 1), 2: (-1, -1), 3: (0, -2), 4: (1, -1), 5: (1, 1)}


def random_board(rng: random.Random) -> dict:
    """Three columns of flat hexes (A1..A7, B2..B6, C1..C7): random links
    between neighbours, a random stop (or plain track) in each linked cell."""
    coords = [(x, y) for x in range(3) for y in range(x % 2, 7, 2)]
    links: dict[tuple[int, int], list[int]] = {c: [] for c in coords}
    for x, y in coords:
        for edge in (0, 4, 5):
            dx, dy = FLAT[edge]
            other = (x + dx, y + dy)
            if other in links and rng.random() < 0.6:
                links[(x, y)].append(edge)
                links[other].append((edge + 3) % 6)
    cells, sugar_at = [], {}
    for (x, y), edges in links.items():
        if not edges:
            continue
        cid = f"{'ABC'[x]}{y + 1}"
        roll, value, tokens = rng.random(), rng.choice((10, 20, 30, 40)), None
        if roll < 0.55:
            kind = rng.choice(("", "", "mill"))
            code = city(value, edges, **({"kind": kind} if kind else {}))
            tokens = [[rng.choice(("A", "A", "FC", "FC", "B", None))]]
            if kind:
                sugar_at[f"{cid}-0"] = rng.randint(0, 3)
        elif roll < 0.75:
            code = harbor(value, edges)
        elif roll < 0.8 or len(edges) < 2:
            code = town(value, edges)
        else:
            code = track(*zip(edges[::2], edges[1::2]))
        cells.append(cell(cid, code, tokens=tokens))
    names = ["2", "3", "3+", "4D", {"name": "4", "obsolete": True}, "5+"]
    trains = []
    for _ in range(rng.choice((1, 2, 2, 3))):
        train = rng.choice(names)
        if rng.random() < 0.4:
            train = dict(train if isinstance(train, dict) else {"name": train}, wagon=rng.randint(1, 2))
        trains.append(train)
    options = {"sugar": sugar_at, "fc_fee": rng.choice((10, 20, 50))}
    if rng.random() < 0.5:
        options["wagons"] = rng.sample([1, 2, 3], rng.randint(1, 2))
    return position(cells, trains, game=GAME, options=options)


def test_search_matches_brute_force_on_random_boards():
    rng = random.Random(18)
    checked = 0
    for _ in range(60):
        board = random_board(rng)
        answer = solve(board)
        assert answer["status"] == "optimal"
        loaded = load_position(board)
        game = Game(loaded)
        ids = game.graph.stop_ids
        per_train, complete = list_runs(game, float("inf"))
        assert complete
        best = 0
        for combo in itertools.product(*[[None] + runs for runs in per_train]):
            chosen = [r for r in combo if r is not None]
            if any(a.mask & b.mask for a, b in itertools.combinations(chosen, 2)):
                continue
            proposal = []
            for r in chosen:
                train = loaded.trains[r.route.train]
                rj = route(
                    train.name,
                    *[ids[s] for s in r.route.stops],
                    hexes=[list(game.graph.oriented_cells(c, s)) for c, s in zip(r.route.conns, r.route.stops)],
                )
                if train.wagon:
                    rj["wagon"] = train.wagon
                proposal.append(rj)
            best = max(best, validate_cuba(loaded, proposal, game)["revenue"])
            checked += 1
        assert answer["revenue"] == best, board
        assert validate(board, answer["routes"])["revenue"] == best
    assert checked > 100
