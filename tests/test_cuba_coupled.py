"""18Cuba on the kernels (games/cuba_coupled.py) against the reference
search (the plain listing and whole-choice branch and bound): random boards
by hypothesis, both paths of the coupled choice (branch and bound, CP-SAT),
and the whole-board benchmark positions with short trains."""

from __future__ import annotations

import copy
import json
import random
import time
from pathlib import Path

import numpy as np
import pytest
from boards import column, letters, route
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_cuba import NARROW, city, cuba, harbor, line, mill, mill_star, random_board, sugar

from routecalc.api import solve, validate
from routecalc.games import cuba_choice
from routecalc.games.cuba import solve_cuba
from routecalc.games.cuba_coupled import solve_cuba_coupled
from routecalc.limits import Limits
from routecalc.model import load_position

BOARD = Path(__file__).resolve().parent.parent / "fixtures" / "cuba-board"
QUICK = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def agree(board: dict, **kw) -> dict:
    position = load_position(board)
    new = solve_cuba_coupled(position, Limits(), **kw)
    old = solve_cuba(position, Limits())
    assert new["status"] == old["status"] == "optimal"
    assert new["revenue"] == old["revenue"], board
    assert validate(board, new["routes"])["revenue"] == new["revenue"]
    return new


@QUICK
@given(st.integers(0, 2**32))
def test_branch_and_bound_equals_reference_on_random_boards(seed):
    assert agree(random_board(random.Random(seed)))["solver"] in ("cuba-bb", "cuba")


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32))
def test_cpsat_choice_equals_reference_on_random_boards(seed):
    agree(random_board(random.Random(seed)), choice_nodes=1)


@pytest.mark.parametrize("trains, machines, expected", [(["2n"], [20], 20), (["2n", "2n"], [10, 40], 50)])
@pytest.mark.parametrize("choice_nodes", [None, 1])
def test_a_minor_runs_a_route_worth_nothing_for_its_machines(trains, machines, expected, choice_nodes):
    """The machines pay once the minor runs at all: its only route, mill 0
    and field 0, earns them. The listing keeps routes earning nothing for
    such a minor, and neither path of the choice leaves them out."""
    board = line(
        mill(0, path=NARROW),
        sugar(0, path=NARROW),
        tokens={0: [["M"]]},
        trains=trains,
        company="M",
        machines={"M": machines},
    )
    kw = {} if choice_nodes is None else {"choice_nodes": choice_nodes}
    answer = agree(board, **kw)
    assert (answer["revenue"], answer["machines"], len(answer["routes"])) == (expected, expected, 1)


def test_the_answer_says_which_path_answered():
    board = mill_star([{"name": "3", "wagon": 2}, {"name": "3", "wagon": 2}], sugar={"A3-0": 3})
    answer = solve(board)
    assert answer["solver"] == "cuba-bb" and answer["revenue"] == 220
    assert "branch and bound finished" in answer["stats"]["auto"]["why"]
    forced = solve_cuba_coupled(load_position(board), Limits(), choice_nodes=1)
    assert forced["solver"] in ("cuba-bb", "cuba-cpsat") and forced["revenue"] == 220


def test_sugar_and_fees_in_the_kernel_value():
    """The numba terms against hand counts: a shared mill, pool wagons, a + train's free ignore."""
    supply, pool = np.array([2, 1], np.int64), np.array([2], np.int64)
    own = np.array([1, 0], np.int64)
    both = np.array([0b01, 0b01], np.uint64)
    assert cuba_choice.sugar_cubes(own, both, supply, pool) == 2  # mill 0 has 2 cubes for both trains
    apart = np.array([0b01, 0b10], np.uint64)
    assert cuba_choice.sugar_cubes(own, apart, supply, pool) == 2  # 1 from mill 0, 1 (all) from mill 1
    assert cuba_choice.sugar_cubes(np.array([0, 0], np.int64), apart, supply, pool) == 2  # one wagon only
    plus = np.array([True, False])
    assert cuba_choice.fees_paid(np.array([0b11, 0], np.uint64), plus) == 1  # one city ignored free
    assert cuba_choice.fees_paid(np.array([0b01, 0b01], np.uint64), plus) == 1  # the other train pays it
    assert cuba_choice.fees_paid(np.array([0b01, 0b01], np.uint64), np.array([True, True])) == 0


SHORT = {"major": [{"name": "4", "wagon": 2}, "3+", "2"], "minor": ["2n", "3n"]}


@pytest.mark.parametrize("name", sorted(p.stem for p in BOARD.glob("*.json")))
def test_board_positions_with_short_trains_equal_reference(name):
    board = copy.deepcopy(json.loads((BOARD / f"{name}.json").read_text()))
    kind = name.split("-")[0]
    if kind in SHORT:
        board["trains"] = SHORT[kind]
    answer = agree(board)
    assert answer["revenue"] > 0


@pytest.mark.parametrize("flip", [False, True])
def test_validate_gives_same_name_trains_the_way_that_pays_most(flip):
    """Two 3-trains, one with a 2-wagon: the route from the mill to a harbor
    gets the wagon whichever order the proposal lists the routes in."""
    board = mill_star([{"name": "3", "wagon": 2}, "3"], sugar={"A3-0": 2})
    routes = [route("3", "B4-0", "A3-0", "A5-0"), route("3", "B2-0", "A3-0")]  # 40+20+10 and 30+20
    if flip:
        routes.reverse()
    answer = validate(board, routes)
    assert answer["revenue"] == 120 + 2 * 30 <= solve(board)["revenue"]
    assert [r.get("wagon") for r in answer["routes"] if r["nodes"][0] == "B4-0"] == [2]


def harbor_columns(n: int, trains: list, **options) -> tuple[dict, list[dict]]:
    """``n`` columns harbor - mill - city (a token), and the 3-train route down each."""
    cells = []
    for k in range(n):
        cells += column(harbor(), mill(20), city(30), letter=letters(2 * k), tokens={2: [["A"]]})
    board = cuba(cells, trains, **options)
    routes = [route("3", f"{letters(2 * k)}1-0", f"{letters(2 * k)}3-0", f"{letters(2 * k)}5-0") for k in range(n)]
    return board, routes


@pytest.mark.parametrize("n", [6, 10])
def test_a_pool_of_many_different_wagons_goes_to_one_model_not_every_order(n):
    """``n`` 3-trains, the pool's wagons 1..n, mills of 1..n cubes: the kernels
    valued each choice over every order of the wagons ((n + 1)^n: ten trains
    ran past a 10 s limit for minutes); past WAGON_ORDERS CP-SAT assigns them.
    The best gives each wagon the mill of its size."""
    sugar = {f"{letters(2 * k)}3-0": k + 1 for k in range(n)}
    board, routes = harbor_columns(n, ["3"] * n, sugar=sugar, wagons=list(range(1, n + 1)))
    t0 = time.process_time()
    answer = agree(board) if n <= 6 else solve(board, time_limit=10)
    assert time.process_time() - t0 < 10
    best = n * (10 + 20 + 30) + 30 * sum(range(1, n + 1))
    assert (answer["status"], answer["revenue"]) == ("optimal", best)
    assert validate(board, routes)["revenue"] == best


def test_twelve_same_name_trains_are_given_their_routes_by_one_model_not_every_order():
    """Twelve 3-trains with wagons 0..11 and twelve harbor-mill-city routes whose
    mills hold 0..11 cubes: the best assignment (each wagon to the mill of its
    size, 66 cubes) whichever order the routes come in; trying every order of
    the trains (479 million) never finished."""
    n = 12
    sugar = {f"{letters(2 * k)}3-0": k for k in range(n)}
    board, routes = harbor_columns(n, [{"name": "3", "wagon": w} for w in range(n)], sugar=sugar)
    for order in (routes, routes[::-1]):
        t0 = time.process_time()
        answer = validate(board, order)
        assert time.process_time() - t0 < 5
        assert answer["sugar"]["cubes"] == sum(range(n))
        assert answer["revenue"] == n * (10 + 20 + 30) + 30 * sum(range(n))
        assert sorted(r.get("wagon", 0) for r in answer["routes"]) == list(range(n))


def test_time_limit_on_the_board_gives_a_true_bound():
    board = json.loads((BOARD / "major-03-fee40.json").read_text())
    best = solve(board)
    seen: list[float] = []
    cut = solve(board, time_limit=1e-6, progress=seen.append)
    assert cut["status"] in ("feasible", "optimal")
    assert cut["revenue"] <= best["revenue"] <= cut["bound"]
    assert all(0.0 <= f <= 1.0 for f in seen)


def test_a_major_without_trains_earns_nothing():
    board = json.loads((BOARD / "major-01-fee0.json").read_text())
    board["trains"] = []
    answer = solve(board)
    assert (answer["revenue"], answer["routes"], answer["status"]) == (0, [], "optimal")


def test_no_suffix_optima_where_no_branch_and_bound_runs(monkeypatch):
    """Past WAGON_ORDERS no branch and bound runs: CP-SAT reads one train
    order's lists, and the suffix optima (20 million units of unwatched
    work each, for both orders: 0.3 s of a 20-train board) are not searched."""
    from routecalc.games import cuba_coupled

    cuba_coupled.warm_up()  # its tiny position runs the branch and bound
    budgets: list[int] = []
    real = cuba_choice.suffix_revenues

    def suffix_revenues(masks, revenues, budget):
        budgets.append(budget)
        return real(masks, revenues, budget)

    monkeypatch.setattr(cuba_choice, "suffix_revenues", suffix_revenues)
    n = 6  # 7^6 wagon orders
    board, _ = harbor_columns(n, ["3"] * n, sugar={f"{letters(2 * k)}3-0": k + 1 for k in range(n)}, wagons=[1] * n)
    answer = solve(board)
    assert answer["status"] == "optimal" and answer["stats"]["nodes"] == 0
    assert budgets == [0]


def _suffix_case() -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(7)
    masks = [rng.integers(0, 2**20, size=(40, 1), dtype=np.uint64) for _ in range(5)]
    return masks, [rng.integers(10, 100, size=40).astype(np.int64) for _ in range(5)]


def test_suffix_optima_look_at_the_limit_between_chunks(monkeypatch):
    """The suffix optima run in chunks of the combination kernel's work: in
    chunks they are the same as in one run; a limit that passes during the
    first chunk stops them after it, the unsolved suffixes bounded by their
    trains' best routes (a true bound, only looser)."""
    from routecalc import deadline
    from routecalc.kernels import combination as comb

    masks, revenues = _suffix_case()
    whole = cuba_choice.suffix_revenues(masks, revenues, 10**9)
    calls: list[int] = []
    real = comb.combine
    monkeypatch.setattr(cuba_choice, "COMBINATION_CHUNK", 50)

    def combine(lists, state, budget):
        calls.append(budget)
        return real(lists, state, budget)

    monkeypatch.setattr(comb, "combine", combine)
    assert (cuba_choice.suffix_revenues(masks, revenues, 10**9) == whole).all() and len(calls) > 2

    calls.clear()
    limit = deadline.Deadline(60.0)

    def combine_then_cancel(lists, state, budget):
        status = combine(lists, state, budget)
        limit.cancel()  # the deadline ends during the first chunk (expired, as past its limit)
        return status

    monkeypatch.setattr(comb, "combine", combine_then_cancel)
    with deadline.within(deadline=limit):
        cut = cuba_choice.suffix_revenues(masks, revenues, 10**9)
    tops = [int(r.max()) for r in revenues]
    assert calls == [50]
    assert (cut >= whole).all() and cut[0] == sum(tops)


def test_a_turn_of_the_branch_and_bound_looks_at_the_clock_between_slices_of_work(monkeypatch):
    """A turn's nodes cost more with more runs to value (every wagon order,
    every free ignore of the + trains: 2,000 nodes of twenty + trains took
    0.15 s unwatched); the kernel pauses every WORK_CHUNK units of that work
    for a look at the clock. Slices resume the search exactly: the same
    answer as in whole turns. A limit passing in the first slice stops the
    search after it, feasible with a true bound."""
    from routecalc import deadline
    from routecalc.games import cuba_coupled

    board = json.loads((BOARD / "major-02-fee20.json").read_text())
    cuba_coupled.warm_up()
    whole = solve(board)
    calls: list[int] = []
    real = cuba_choice.search

    def search(lists, state, budget, work_budget):
        calls.append(work_budget)
        return real(lists, state, budget, work_budget)

    monkeypatch.setattr(cuba_choice, "search", search)
    monkeypatch.setattr(cuba_coupled, "WORK_CHUNK", 3)
    sliced = solve(board)
    assert len(calls) > 2 * whole["stats"]["nodes"] // cuba_coupled.CHUNK + 2
    for key in ("revenue", "routes", "status", "bound"):
        assert sliced[key] == whole[key]
    assert sliced["stats"]["nodes"] == whole["stats"]["nodes"]

    calls.clear()
    limit = deadline.Deadline(60.0)

    def search_then_cancel(lists, state, budget, work_budget):
        status = search(lists, state, budget, work_budget)
        limit.cancel()  # the deadline ends during the first slice (expired, as past its limit)
        return status

    monkeypatch.setattr(cuba_choice, "search", search_then_cancel)
    with deadline.within(deadline=limit):
        cut = solve_cuba_coupled(load_position(board), Limits())
    assert calls == [3, 3]  # one slice of each train order's search, whose turns make one round
    assert cut["status"] == "feasible" and cut["revenue"] <= whole["revenue"] <= cut["bound"]
