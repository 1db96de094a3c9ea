"""Every solver finds the same optimum on random small boards.

The reference solver (plain enumeration, brute-force payment) is the
oracle; CP-SAT (no enumeration), set packing, the fast solver and auto must
reach exactly its revenue, with routes the validator accepts and scores at
that revenue. Small boards always send auto to the fast solver, so its
other two paths are forced as well: a one-route budget (CP-SAT seeded from
a cut enumeration) and a combination search that never finishes (packing).
Express, ``n+m``, ``fill`` and multiplier trains come from the shared
strategy; :func:`express_positions` makes sure enough boards carry them.
"""

from __future__ import annotations

import time
from pathlib import Path
from unittest import mock

import pytest
from boards import city, line_board, visit_bonus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import positions

from routecalc import api, load_position_file
from routecalc.errors import PositionError
from routecalc.graph import compile_position
from routecalc.model import load_position
from routecalc.routes import answer
from routecalc.scoring import train_tables
from routecalc.solvers import SOLVERS, Limits, auto
from routecalc.solvers.cpsat import LISTED_PARAMETERS, WHOLE_MODEL_PARAMETERS, PathModel
from routecalc.solvers.fast import Clock, enumerate_company
from routecalc.validate import RouteSetValidator

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def auto_via_cpsat(position, graph, limits: Limits) -> dict:
    """Auto with a one-route enumeration budget: the CP-SAT path."""
    with mock.patch.object(auto, "ROUTE_BUDGET", 1):
        return auto.solve_auto(position, graph)


def auto_via_packing(position, graph, limits: Limits) -> dict:
    """Auto whose fast combination search never finishes: the packing path."""
    stalled = ([], 10**9, {})  # no routes, and a bound nothing reaches
    with mock.patch.object(auto, "combine_company", return_value=stalled):
        return auto.solve_auto(position, graph)


def whole_model_with_listed_trains(position, graph, limits: Limits) -> dict:
    """CP-SAT's whole model with every other train (the first, the third...)
    chosen among its listed routes, the others as paths: the model auto
    builds where some trains' listings finish and others' explode."""
    tables = train_tables(graph)
    listed = enumerate_company(graph, tables, None, Clock(None, None))
    choices = {t: listed[t] for t in range(0, len(tables), 2) if listed[t].complete}
    model = PathModel(graph, tables, listed=choices)
    model.tighten()
    status, routes, bound, _ = model.solve(settings={**WHOLE_MODEL_PARAMETERS, **LISTED_PARAMETERS})
    return answer(graph, tables, routes, time.perf_counter(), solver="cpsat", status=status, bound=bound)


CHECKED = {name: SOLVERS[name] for name in ("cpsat", "packing", "fast", "auto")}
CHECKED.update(
    {
        "auto via cpsat": auto_via_cpsat,
        "auto via packing": auto_via_packing,
        "whole model, listed trains": whole_model_with_listed_trains,
    }
)

#: trains whose paying stops are a choice, or whose revenue is multiplied
CHOICE_TRAINS = st.sampled_from(
    [
        "2E",
        "3E",
        "1E",
        {"name": "3x2", "distance": 3, "multiplier": 2},
        {
            "name": "2+2f",
            "fill": True,
            "distance": [
                {"nodes": ["city", "offboard"], "pay": 2, "visit": 2},
                {"nodes": ["town"], "pay": 2, "visit": 2},
            ],
        },
        {
            "name": "3F",
            "fill": True,
            "distance": [
                {"nodes": ["city", "offboard"], "pay": 3, "visit": 3},
                {"nodes": ["town"], "pay": 0, "visit": 99},
            ],
        },
        {
            "name": "2+2E",
            "multiplier": 2,
            "fill": True,
            "distance": [
                {"nodes": ["offboard"], "pay": 2, "visit": 2},
                {"nodes": ["city", "town"], "pay": 0, "visit": 99},
            ],
        },
        {
            "name": "2+1x",
            "distance": [
                {"nodes": ["city"], "pay": 2, "visit": 3, "multiplier": 2},
                {"nodes": ["town", "offboard"], "pay": 1, "visit": 2},
            ],
        },
    ]
)


#: trains as long as the board: the stress positions' diesels, 8E and 1867 8
LONG_TRAINS = st.sampled_from(
    [
        "D",
        "8E",
        {
            "name": "8F",
            "fill": True,
            "distance": [
                {"nodes": ["city", "offboard"], "pay": 8, "visit": 8},
                {"nodes": ["town"], "pay": 0, "visit": 99},
            ],
        },
    ]
)


@st.composite
def long_train_positions(draw) -> dict:
    """A random position with two long trains before its own (CP-SAT then
    asks whether their single-train maxima are earned together)."""
    position = draw(positions(max_trains=1))
    position["trains"] = [draw(LONG_TRAINS), draw(LONG_TRAINS)] + position["trains"]
    return position


@st.composite
def identical_train_positions(draw) -> dict:
    """A random position with two identical long trains and its own train
    twice: CP-SAT's models leave identical trains interchangeable, so
    either may run either route."""
    position = draw(positions(max_trains=1))
    long = draw(LONG_TRAINS)
    position["trains"] = [long, long] + position["trains"] * 2
    return position


@st.composite
def express_positions(draw) -> dict:
    """A random position whose first train is an express or multiplier train."""
    position = draw(positions(max_trains=2))
    position["trains"] = [draw(CHOICE_TRAINS)] + position["trains"]
    return position


def check_agreement(position_json: dict) -> int:
    position = load_position(position_json)
    graph = compile_position(position)
    expected = SOLVERS["reference"](position, graph, Limits())
    validator = RouteSetValidator(position, graph)
    for name, solver in CHECKED.items():
        got = solver(position, graph, Limits())
        assert (name, got["revenue"], got["status"]) == (name, expected["revenue"], "optimal")
        assert got["bound"] == got["revenue"]
        assert validator.validate(got["routes"])["revenue"] == expected["revenue"]
        if name == "auto via packing":
            assert got["solver"] == "packing"
    return expected["revenue"]


AGREE = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@AGREE
@given(positions())
def test_solvers_agree_on_random_boards(position_json):
    check_agreement(position_json)


@settings(AGREE, max_examples=150)
@given(express_positions())
def test_solvers_agree_with_express_and_multiplier_trains(position_json):
    check_agreement(position_json)


@settings(AGREE, max_examples=80)
@given(long_train_positions())
def test_solvers_agree_with_long_trains(position_json):
    check_agreement(position_json)


@settings(AGREE, max_examples=40)
@given(identical_train_positions())
def test_solvers_agree_with_identical_trains(position_json):
    check_agreement(position_json)


def test_the_agreement_is_not_vacuous():
    """At least one solver besides the reference is under test, and a board
    with a known revenue passes through the same check."""
    assert {"cpsat", "fast", "auto via cpsat"} <= set(CHECKED)
    board = line_board(
        city(20), city(30), city(40), trains=["2", {"name": "2x", "distance": 2, "multiplier": 2}], token_at=1
    )
    # token on the 30: the doubled 2-train runs 30+40 (140), the 2-train 20+30 (50)
    assert check_agreement(board) == 190
    # Two routes per train: the one-route budget stops the enumeration and CP-SAT runs.
    graph = compile_position(load_position(board))
    assert auto_via_cpsat(graph.position, graph, Limits())["solver"] == "cpsat"


def test_a_visit_bonus_on_a_worthless_stop_is_within_the_ceiling():
    """The single-train ceiling that caps auto's CP-SAT path counts a visit
    bonus on a stop worth nothing (it was left out: auto answered 20, optimal)."""
    board = line_board(city(10), city(10), city(0), trains=["3"], options=visit_bonus("A5", 10))
    position = load_position(board)
    for name, solve in CHECKED.items():
        answer = solve(position, compile_position(position), Limits())
        assert (name, answer["revenue"], answer["status"]) == (name, 30, "optimal")


@pytest.mark.parametrize("fixture", ["cuba-small.json", "xs-small.json"])
def test_games_with_their_own_search_are_refused_by_the_route_engine(fixture):
    """18Cuba and 18XS answer through their rule sets' hooks: a route solver
    or the route validator called directly says so instead of a wrong figure."""
    position = load_position_file(FIXTURES / fixture)
    for solve in SOLVERS.values():
        with pytest.raises(PositionError, match=f"{position.game} positions are answered by the game's own"):
            solve(position, compile_position(position), Limits())
    with pytest.raises(PositionError, match="own search"):
        RouteSetValidator(position)
    assert api.solve(position)["status"] == "optimal"


@pytest.mark.parametrize("game", ["generic", "18C2C-D", "18Lilliput", "18Ireland"])
@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_a_company_without_trains_earns_nothing_by_every_solver(game, solver):
    """No trains: every solver answers 0, proven (the packing solver raised
    on 18C2C-D and 18Lilliput boards, with nothing to pack)."""
    board = {
        "format": 1,
        "game": game,
        "layout": "square" if game in ("18C2C-D", "18Lilliput") else "flat",
        "phase": {"name": "2", "colors": ["yellow"]},
        "hexes": [{"id": "A1", "code": "city=revenue:10", "tokens": [["A"]]}],
        "company": "A",
        "trains": [],
    }
    answer = api.solve(board, solver)
    assert (answer["revenue"], answer["status"], answer["routes"]) == (0, "optimal", [])
