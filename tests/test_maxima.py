"""Single-train maxima by branch and bound (:mod:`routecalc.solvers.maxima`,
the bound of :mod:`routecalc.kernels.longest`) against the plain searches:
the reference solver's listing of every route on small random boards, the
fast solver's complete enumeration on larger ones with long trains (D,
express, 1867 trains that pass towns for free), and CP-SAT on the stress
fixtures."""

from __future__ import annotations

import json
from unittest import mock

import numpy as np
import pytest
from conftest import ROOT
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import positions

from routecalc import api
from routecalc.graph import BLOCKED, END_ONLY, TOKEN, compile_position
from routecalc.kernels.longest import new_chain_work, route_bound, track_points
from routecalc.model import load_position, load_position_file
from routecalc.scoring import pay_table, train_tables
from routecalc.solvers import auto, fast
from routecalc.solvers import maxima as branch_and_bound
from routecalc.solvers.fast import Clock, enumerate_company, graph_arrays
from routecalc.solvers.maxima import single_train_maximum, track_of
from routecalc.solvers.reference import enumerate_routes
from routecalc.validate import RouteSetValidator, check_route

STRESS = sorted((ROOT / "fixtures").glob("stress-*.json"))

#: Trains whose routes explode on a big board.
LONG_TRAINS = (
    "D",
    "8",
    "5E",
    "8E",
    {
        "name": "5F",
        "fill": True,
        "distance": [{"nodes": ["city", "offboard"], "pay": 5, "visit": 5}, {"nodes": ["town"], "pay": 0, "visit": 99}],
    },
    {
        "name": "4+4E",
        "fill": True,
        "multiplier": 2,
        "distance": [{"nodes": ["offboard"], "pay": 4, "visit": 4}, {"nodes": ["city", "town"], "pay": 0, "visit": 99}],
    },
    {
        "name": "6E",
        "distance": [
            {"nodes": ["city", "offboard"], "pay": 6, "visit": 99},
            {"nodes": ["town"], "pay": 0, "visit": 99},
        ],
    },
)


def maximum(graph, t: int, known: int = 0) -> int | None:
    table = train_tables(graph)[t]
    found = single_train_maximum(graph, t, table, known, Clock(None, None), None)
    if found.route is not None:
        assert found.route.revenue == found.revenue > known
        check_route(found.route.stops, found.route.conns, table, graph)  # raises on a broken rule
    return found.revenue


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=3, max_size=5, token_rate=0.5), st.integers(0, 2**32 - 1))
def test_maxima_on_the_track_another_route_leaves_equal_the_reference_searchs(position_json, seed):
    """With the pieces of some route taken, the branch and bound finds the
    best of the routes the reference search lists that use none of them."""
    position = load_position(position_json)
    graph = compile_position(position)
    tables = train_tables(graph)
    rng = np.random.default_rng(seed)
    for t, table in enumerate(tables):
        routes, finished = enumerate_routes(graph, train_tables(graph)[rng.integers(len(tables))])
        assert finished
        assume(routes)
        taken = track_of(graph, routes[rng.integers(len(routes))])
        mine, _ = enumerate_routes(graph, table)
        clear = [r.revenue for r in mine if not (track_of(graph, r) & taken).any()]
        found = single_train_maximum(graph, t, table, 0, Clock(None, None), None, taken=taken)
        assert (found.revenue or 0) == max(clear, default=0)
        if found.route is not None:
            assert not (track_of(graph, found.route) & taken).any()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=3, max_size=5, token_rate=0.5))
def test_maxima_equal_the_reference_searchs(position_json):
    assert_maxima_equal_the_reference_searchs(position_json)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=3, max_size=5, token_rate=0.5, switches=True))
def test_maxima_on_track_that_forks_equal_the_reference_searchs(position_json):
    """Switches (track forking at a cell edge) are merged into their stems
    in the bound's graph (:func:`~routecalc.kernels.longest.track_points`)."""
    assert_maxima_equal_the_reference_searchs(position_json)


def assert_maxima_equal_the_reference_searchs(position_json) -> None:
    position = load_position(position_json)
    graph = compile_position(position)
    for t, table in enumerate(train_tables(graph)):
        routes, finished = enumerate_routes(graph, table)
        assert finished
        best = max((r.revenue for r in routes), default=0)
        assert maximum(graph, t) == best
        assert maximum(graph, t, best) == best  # a known route earning the maximum: nothing beats it
        assert maximum(graph, t, best // 2) == best


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=4, max_size=7, max_trains=1, token_rate=0.3), st.sampled_from(LONG_TRAINS))
def test_maxima_of_long_trains_equal_the_enumerations(position_json, train):
    position = load_position({**position_json, "trains": [train]})
    graph = compile_position(position)
    listed = enumerate_company(graph, train_tables(graph), None, Clock(None, None))[0]
    assert listed.complete
    assert maximum(graph, 0) == listed.upper
    assert maximum(graph, 0, int(np.min(listed.revenue, initial=0))) == listed.upper


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    positions(min_size=4, max_size=7, max_trains=1, token_rate=0.3), st.sampled_from(LONG_TRAINS), st.integers(1, 40)
)
def test_a_search_run_on_after_its_step_limit_takes_the_steps_of_one_search(position_json, train, limit):
    """Stopped every ``limit`` steps and run on from there, the branch and
    bound proves the same maximum in the same steps in all as one search
    (a search started again would take the steps before the stop twice)."""
    position = load_position({**position_json, "trains": [train]})
    graph = compile_position(position)
    table = train_tables(graph)[0]
    whole = single_train_maximum(graph, 0, table, 0, Clock(None, None), None)
    steps, paused, found = 0, None, None
    while found is None or found.paused is not None:
        found = single_train_maximum(graph, 0, table, 0, Clock(None, None), limit, paused)
        assert found.steps <= limit
        steps, paused = steps + found.steps, found.paused
    assert (found.revenue, steps) == (whole.revenue, whole.steps)


def test_past_the_time_limit_the_search_builds_nothing():
    """Auto's searches for a better first set ran after the limit, each
    building its bound's graph of the track left (a tenth of a second and
    more on a board of 2,000 cells: a 5 s limit answered after 6.1 s)."""
    graph = compile_position(load_position_file(ROOT / "fixtures" / "stress-1867-two-d.json"))
    table = train_tables(graph)[0]
    with mock.patch.object(branch_and_bound, "track_points") as built:
        found = single_train_maximum(graph, 0, table, 0, Clock(1e-9, None), None)
    assert (found.revenue, found.route, found.steps, found.paused, built.call_count) == (None, None, 0, None, 0)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    positions(min_size=4, max_size=7, max_trains=1, token_rate=0.3), st.sampled_from(("8", "5E", "8E", LONG_TRAINS[-1]))
)
def test_the_thresholds_alone_cut_what_the_lists_cut(position_json, train):
    """Trains with one way to fill their slots, no connect bonus and no visit limit below them:
    the bound without its best-weights lists is never looser (the lists'
    groups are summed instead, which is sometimes tighter: short chains are
    not mixed), so the search takes no more steps to the same maximum."""
    position = load_position({**position_json, "trains": [train]})
    graph = compile_position(position)
    table = train_tables(graph)[0]
    prices = pay_table(table, graph, position.rules.bonuses(position))
    assume(not branch_and_bound.lists_needed(prices, branch_and_bound.thresholds(prices)))
    without = single_train_maximum(graph, 0, table, 0, Clock(None, None), None)
    with mock.patch.object(branch_and_bound, "lists_needed", lambda *_: True):
        kept = single_train_maximum(graph, 0, table, 0, Clock(None, None), None)
    assert without.revenue == kept.revenue and without.steps <= kept.steps


def test_the_branch_and_bound_takes_no_step_past_the_clock():
    """Called once the time limit has passed (auto's second search, after
    the caps demanded together took the rest), it stops before its first
    step; with time left it looks at the clock every BOUNDED_CHUNK steps
    (stress-1867-two-d's D: some 50,000 steps to prove its 860)."""
    position = load_position_file(ROOT / "fixtures" / "stress-1867-two-d.json")
    graph = compile_position(position)
    table = train_tables(graph)[0]
    late = single_train_maximum(graph, 0, table, 859, Clock(0.0, None), None)
    assert (late.revenue, late.steps) == (None, 0)
    ticks = iter(range(1_000_000))
    with mock.patch("time.perf_counter", lambda: float(next(ticks))):
        stopped = single_train_maximum(graph, 0, table, 859, Clock(10.0, None), None)
    assert stopped.revenue is None and 0 < stopped.steps <= 10 * fast.BOUNDED_CHUNK


def test_no_train_is_enumerated_after_one_runs_out_of_work():
    """stress-1828-d-8e: the D runs out of its half of the steps, so the 8E
    lists nothing (the fast solver cannot answer without both)."""
    graph = compile_position(load_position_file(ROOT / "fixtures" / "stress-1828-d-8e.json"))
    listed = enumerate_company(graph, train_tables(graph), auto.ROUTE_BUDGET, Clock(None, None), 20_000)
    assert (listed[0].out_of_work, listed[0].steps) == (True, 10_000)
    assert (listed[1].out_of_work, listed[1].steps, len(listed[1].revenue)) == (True, 0, 0)


def stress_maxima(path) -> list[tuple[int, str, object]]:
    """Per kind of train of a stress fixture whose enumeration stops at auto's
    budget: (train, name, what auto's branch and bound finds from the best
    listed route within MAXIMUM_STEPS)."""
    position = load_position_file(path)
    graph = compile_position(position)
    tables = train_tables(graph)
    listed = enumerate_company(graph, tables, auto.ROUTE_BUDGET, Clock(None, None), auto.ENUMERATION_STEPS)
    out = []
    for t, found in enumerate(listed):
        if not found.complete and all(other is not found for other in listed[:t]):
            known = int(found.revenue[0]) if len(found.revenue) else 0
            search = single_train_maximum(graph, t, tables[t], known, Clock(None, None), auto.MAXIMUM_STEPS)
            assert search.steps <= auto.MAXIMUM_STEPS
            out.append((t, tables[t].train.name, search))
    return out


def test_the_diesel_of_stress_1828_is_proven_within_the_step_budget():
    """stress-1828-d-8e's D: 950, which CP-SAT proves alone in some 12 s of
    CPU (the slow test below checks it again); the branch and bound within
    auto's budget, from the 640 the enumeration listed."""
    found = {name: search for _, name, search in stress_maxima(ROOT / "fixtures" / "stress-1828-d-8e.json")}
    assert found["D"].revenue == 950
    assert found["D"].route is not None and found["D"].route.revenue == 950


@pytest.mark.slow
@pytest.mark.parametrize("path", STRESS, ids=lambda p: p.stem)
def test_each_stress_fixtures_maxima_are_the_ones_cp_sat_proves(path):
    """Where the branch and bound finishes within auto's budget its maximum
    is CP-SAT's; where it does not, its best route earns no more."""
    from routecalc.solvers.cpsat import PathModel

    position = load_position_file(path)
    graph = compile_position(position)
    tables = train_tables(graph)
    for t, name, search in stress_maxima(path):
        status, _, most, _ = PathModel(graph, tables, [t]).solve(None)
        assert status == "optimal"
        where = json.dumps({"fixture": path.stem, "train": name})
        if search.revenue is not None:
            assert search.revenue == most, where
        if search.route is not None:
            assert search.route.revenue <= most, where


@pytest.fixture
def handed(monkeypatch) -> dict:
    """What auto hands CP-SAT, which is not run (its answer has no routes)."""
    from routecalc.solvers import cpsat

    given_to: dict = {}

    def stand_in(position, graph, **given):
        given_to.update(given)
        return {"stats": {}}

    monkeypatch.setattr(cpsat, "solve_cpsat", stand_in)
    return given_to


def test_auto_hands_cp_sat_the_maxima_it_proved(monkeypatch, handed):
    """stress-1828-d-8e (a D, then an 8E): auto's enumeration stops at its
    budget; the branch and bound proves both maxima within MAXIMUM_STEPS,
    from the listed routes (the 8E's 430 in a few hundred steps, where it
    took 170,000 before the bound paired no two chains ending at one
    offboard), so CP-SAT solves neither train alone. With fewer steps it
    proves neither, CP-SAT's short tries prove neither within SINGLE_WORK,
    and asked again once the caps demanded together have not settled them,
    the branch and bound proves both within PROOF_STEPS more."""
    position = load_position_file(ROOT / "fixtures" / "stress-1828-d-8e.json")
    assert [train.name for train in position.trains] == ["D", "8E"]
    answer = auto.solve_auto(position, compile_position(position))
    assert handed["known_maxima"] == {0: 950, 1: 430}
    assert [(r.train, r.revenue) for r in handed["known_routes"]] == [(0, 950), (1, 430)]
    assert [(r.train, r.revenue) for r in handed["hint"]] == [(0, 950), (1, 430)]  # the 8E on the track left
    maxima = answer["stats"]["auto"]["maxima"]
    assert maxima["D"] == {"maximum": 950, "steps": maxima["D"]["steps"]} and maxima["D"]["steps"] < 10_000
    assert maxima["8E"] == {"maximum": 430, "steps": maxima["8E"]["steps"]} and maxima["8E"]["steps"] < 1_000

    monkeypatch.setattr(auto, "MAXIMUM_STEPS", 100)
    answer = auto.solve_auto(position, compile_position(position))
    assert handed["known_maxima"] == {}
    maxima = answer["stats"]["auto"]["maxima"]
    assert [maxima[name]["steps"] for name in ("D", "8E")] == [100, 100]
    assert maxima["D"]["cpsat_route"] < 950 < maxima["D"]["cpsat_bound"]
    assert maxima["8E"]["cpsat_route"] < 430 < maxima["8E"]["cpsat_bound"]
    proven, routes = handed["prove_maxima"]([0, 1])
    assert proven == {0: 950, 1: 430} and [(r.train, r.revenue) for r in routes] == [(0, 950), (1, 430)]
    assert (maxima["D"]["maximum"], maxima["8E"]["maximum"]) == (950, 430)
    assert all(100 < maxima[name]["steps"] <= 100 + auto.PROOF_STEPS for name in ("D", "8E"))


def test_auto_demands_the_caps_together_within_less_work(handed):
    """Auto has looked for a set earning the maxima by branch and bound
    before it hands CP-SAT the position: its demand of the caps together
    gets less work than the cpsat solver's own."""
    from routecalc.solvers import cpsat

    position = load_position_file(ROOT / "fixtures" / "stress-express.json")
    auto.solve_auto(position, compile_position(position))
    assert handed["together_work"] == auto.TOGETHER_WORK < cpsat.TOGETHER_WORK


def test_auto_reaches_the_maxima_led_by_each_route_in_turn(handed):
    """stress-1867-express-8 (a 5+5E, then an 8): neither maximum is proven
    within the branch and bound's steps; CP-SAT proves the 5+5E's 820 alone,
    and a CP-SAT demand of the 8's bound finds its 560 route. Led by the
    5+5E's 820, the 8 cannot earn 560; led by the 8's route, the 5+5E finds
    a route of 820 on the track left: a set earning both maxima, handed to
    CP-SAT as optimal."""
    position = load_position_file(ROOT / "fixtures" / "stress-1867-express-8.json")
    graph = compile_position(position)
    answer = auto.solve_auto(position, graph)
    maxima = answer["stats"]["auto"]["maxima"]
    assert maxima["5+5E"]["steps"] == maxima["8"]["steps"] == auto.MAXIMUM_STEPS
    assert (maxima["5+5E"]["cpsat_bound"], maxima["5+5E"]["cpsat_route"]) == (820, 820)
    assert (maxima["8"]["cpsat_bound"], maxima["8"]["cpsat_route"]) == (560, 560)
    assert handed["known_maxima"] == {0: 820, 1: 560}
    assert [(r.train, r.revenue) for r in handed["hint"]] == [(1, 560), (0, 820)]
    from routecalc.solvers.cpsat import PathModel

    five = next(r for r in handed["known_routes"] if r.train == 0)
    eight = PathModel(graph, train_tables(graph), [1], track_of(graph, five))
    eight.demand_train(1, 560)
    assert eight.solve(None, work=10.0)[0] == "infeasible"


def test_auto_hands_cp_sat_its_first_set_exchanged(handed):
    """stress-express (an 8E at most 430, a 6E at most 700, not earned
    together): auto's first set is the 6E's 700, then the 8E's best route on
    the track left, 320, proven by branch and bound in a few hundred steps;
    CP-SAT's own first set (its searches of the track left) earns the same.
    The exchange of track (the 6E kept off an end of the 8E's best route)
    then finds 680 + 360, the optimum 1040, and CP-SAT is told not to
    search a first set."""
    from routecalc.solvers.cpsat import one_by_one

    position = load_position_file(ROOT / "fixtures" / "stress-express.json")
    graph = compile_position(position)
    auto.solve_auto(position, graph)
    assert handed["first_set"] is True
    assert sorted((r.train, r.revenue) for r in handed["hint"]) == [(0, 360), (1, 680)]
    assert (
        RouteSetValidator(position).validate([r.to_json(graph, train_tables(graph)[r.train]) for r in handed["hint"]])[
            "revenue"
        ]
        == 1040
    )
    caps, known = handed["known_caps"], handed["known_routes"]
    chosen = one_by_one(graph, train_tables(graph), known, caps, None)
    assert [(r.train, r.revenue) for r in chosen] == [(1, 700), (0, 320)]
    listed = enumerate_company(graph, train_tables(graph), auto.ROUTE_BUDGET, Clock(None, None), auto.ENUMERATION_STEPS)
    first, finished = auto._first_set(graph, listed, caps, known, Clock(None, None))
    assert finished and [(r.train, r.revenue) for r in first] == [(1, 700), (0, 320)]


def _counting(monkeypatch) -> list[tuple[int, int]]:
    """The step limit and steps of each branch and bound auto runs."""
    searches: list[tuple[int, int]] = []

    def counted(*args, **kwargs):
        found = single_train_maximum(*args, **kwargs)
        searches.append((args[5], found.steps))
        return found

    monkeypatch.setattr(auto, "single_train_maximum", counted)
    return searches


def _failing(monkeypatch) -> list[int]:
    """Every branch and bound auto runs fails at its step limit; the limits."""
    asked: list[int] = []

    def fails(graph, t, table, known, clock, step_limit, paused=None, taken=None):
        asked.append(step_limit)
        return branch_and_bound.Maximum(None, None, step_limit, 0, None)

    monkeypatch.setattr(auto, "single_train_maximum", fails)
    return asked


def _express_first_set() -> tuple:
    """stress-express as auto has it before the exchange: (position, graph,
    listed, maxima, caps, best routes, first set)."""
    position = load_position_file(ROOT / "fixtures" / "stress-express.json")
    graph = compile_position(position)
    tables = train_tables(graph)
    clock = Clock(None, None)
    listed = enumerate_company(graph, tables, auto.ROUTE_BUDGET, clock, auto.ENUMERATION_STEPS)
    maxima, caps, best, _ = auto._maxima(graph, tables, listed, clock, {})
    first, _ = auto._first_set(graph, listed, caps, best, clock)
    return position, graph, listed, maxima, caps, best, first


def test_the_exchange_finds_express_optimum_within_its_steps(monkeypatch):
    """stress-express: from the first set 700 + 320 the exchange finds the
    optimum 1040 (the 6E's 680, the 8E's 360) within EXCHANGED_STEPS, each
    search charged SEARCH_STEPS; with no steps it keeps the first set."""
    position, graph, listed, maxima, caps, best, first = _express_first_set()
    tables, clock = train_tables(graph), Clock(None, None)
    assert (maxima, sum(r.revenue for r in first)) == ({0: 430, 1: 700}, 1020)
    searches = _counting(monkeypatch)
    better = auto._exchanged(graph, listed, caps, best, first, clock)
    assert sorted((r.train, r.revenue) for r in better) == [(0, 360), (1, 680)]
    assert RouteSetValidator(position).validate([r.to_json(graph, tables[r.train]) for r in better])["revenue"] == 1040
    assert all(steps <= limit <= auto.EXCHANGE_STEPS for limit, steps in searches)
    assert sum(steps + auto.SEARCH_STEPS for _, steps in searches) <= auto.EXCHANGED_STEPS
    monkeypatch.setattr(auto, "EXCHANGED_STEPS", 0)
    assert auto._exchanged(graph, listed, caps, best, first, clock) == first


def test_the_exchange_improves_a_first_set_on_a_line():
    """A line of cities 10-40-20-50-10, the token on the 20, a 3 and a 2:
    the 3's best route (40-20-50, 110) leaves the 2 no track, so the first
    set earns 110. The 2 keeping its best route (20-50) from the 3, the 3
    takes 10-40-20 (70) and the 2 its 70: 140, the optimum."""
    from boards import city, line_board

    position = load_position(line_board(*map(city, (10, 40, 20, 50, 10)), trains=["3", "2"], token_at=2))
    graph = compile_position(position)
    tables = train_tables(graph)
    clock = Clock(None, None)
    listed = enumerate_company(graph, tables, auto.ROUTE_BUDGET, clock, auto.ENUMERATION_STEPS)
    best = fast.listed_routes([(t, 0) for t in range(2)], listed, graph)  # each train's best listed route
    caps = {r.train: r.revenue for r in best}
    assert caps == {0: 110, 1: 70}
    first, finished = auto._first_set(graph, listed, caps, best, clock)
    assert [(r.train, r.revenue) for r in first] == [(0, 110)] and not finished
    better = auto._exchanged(graph, listed, caps, best, first, clock)
    assert sorted((r.train, r.revenue) for r in better) == [(0, 70), (1, 70)]
    assert RouteSetValidator(position).validate([r.to_json(graph, tables[r.train]) for r in better])["revenue"] == 140


def test_the_exchange_keeps_to_its_steps(monkeypatch):
    """Every search failing at its step limit: the searches take
    EXCHANGE_STEPS each, charged SEARCH_STEPS more, until EXCHANGED_STEPS
    run out (500 + 250, then the 250 left), and the set is unchanged."""
    _, graph, listed, _, caps, best, first = _express_first_set()
    clock = Clock(None, None)
    asked = _failing(monkeypatch)
    monkeypatch.setattr(auto, "EXCHANGED_STEPS", 1000)
    assert auto._exchanged(graph, listed, caps, best, first, clock) == first
    assert asked == [500, 250]


def test_the_best_responses_move_every_train_on_a_line():
    """A line of cities 10-20-30-40, the token on the 30, two 2s: from a set
    where one earns 20-30 (50) and the other nothing, the first takes its
    best route on the track the other leaves (30-40, 70), then the other
    its best on what is left (20-30, 50): 120, the optimum."""
    from boards import city, line_board

    position = load_position(line_board(*map(city, (10, 20, 30, 40)), trains=["2", "2"], token_at=2))
    graph = compile_position(position)
    tables = train_tables(graph)
    clock = Clock(None, None)
    listed = enumerate_company(graph, tables, auto.ROUTE_BUDGET, clock, auto.ENUMERATION_STEPS)
    row = next(k for k in range(len(listed[0].revenue)) if listed[0].revenue[k] == 50)
    start = fast.listed_routes([(0, row)], listed, graph)
    better = auto._best_responses(graph, listed, {0: 70, 1: 70}, start, clock)
    assert sorted((r.train, r.revenue) for r in better) == [(0, 70), (1, 50)]
    assert RouteSetValidator(position).validate([r.to_json(graph, tables[r.train]) for r in better])["revenue"] == 120


def test_the_best_responses_keep_to_their_steps(monkeypatch):
    """Every search failing at its step limit: each takes RESPONSE_STEPS,
    charged SEARCH_STEPS more, until RESPONSES_STEPS run out, and the set
    is unchanged; a train already at its cap is not searched."""
    _, graph, listed, _, caps, best, first = _express_first_set()
    clock = Clock(None, None)
    asked = _failing(monkeypatch)
    monkeypatch.setattr(auto, "RESPONSES_STEPS", 3000)
    above = {t: 10**6 for t in caps}  # no train at its cap
    assert auto._best_responses(graph, listed, above, first, clock) == first
    assert asked == [2000, 750]
    asked.clear()
    assert auto._best_responses(graph, listed, {t: 0 for t in caps}, first, clock) == first
    assert asked == []


def test_the_leaders_share_the_steps_of_one(monkeypatch):
    """Three trains, every search on the track left failing at its step
    limit: the leaders share what one leader's searches may take
    (MAXIMUM_STEPS for each train but one), so the first two leaders' first
    searches take it all and the third leader gets no search."""
    from boards import city, line_board

    position = load_position(line_board(city(20), city(30), city(40), trains=["2", "3", "4"], token_at=1))
    graph = compile_position(position)
    tables = train_tables(graph)
    listed = enumerate_company(graph, tables, auto.ROUTE_BUDGET, Clock(None, None), auto.ENUMERATION_STEPS)
    best = fast.listed_routes([(t, 0) for t in range(3)], listed, graph)  # each train's best listed route
    asked = _failing(monkeypatch)
    monkeypatch.setattr(auto, "MAXIMUM_STEPS", 100)
    caps = {r.train: r.revenue for r in best}
    assert auto._maxima_reached(graph, listed, caps, best, Clock(None, None)) == []
    assert asked == [100, 100]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=3, max_size=4, max_trains=2, token_rate=0.5))
def test_auto_through_the_branch_and_bound_and_cp_sat_finds_the_reference_optimum(position_json):
    """Enumeration stopped after a few steps: auto takes the maxima of the
    branch and bound to CP-SAT, and the answer is still the optimum."""
    from routecalc.solvers.reference import solve_reference

    position = load_position(position_json)
    graph = compile_position(position)
    want = solve_reference(position, graph)["revenue"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(auto, "ENUMERATION_STEPS", 3)
        got = auto.solve_auto(position, graph)
    assert (got["status"], got["revenue"], got["bound"]) == ("optimal", want, want)
    assert RouteSetValidator(position).validate(got["routes"])["revenue"] == want


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=3, max_size=4, max_trains=3, token_rate=0.5))
def test_the_exchanged_set_is_valid_and_no_worse_than_the_first(position_json):
    """On random boards: the exchange's set, and the best responses' from
    it, validate, earn what they say, at least the set they start from and
    at most the reference optimum."""
    from routecalc.routes import answer
    from routecalc.solvers.reference import solve_reference

    position = load_position(position_json)
    graph = compile_position(position)
    tables = train_tables(graph)
    clock = Clock(None, None)
    listed = enumerate_company(graph, tables, auto.ROUTE_BUDGET, clock, auto.ENUMERATION_STEPS)
    best = fast.listed_routes([(t, 0) for t in range(len(tables)) if len(listed[t].revenue)], listed, graph)
    assume(len(tables) > 1 and best)
    caps = {t: found.upper for t, found in enumerate(listed)}
    first, _ = auto._first_set(graph, listed, caps, best, clock)
    better = auto._exchanged(graph, listed, caps, best, first, clock)
    responded = auto._best_responses(graph, listed, caps, better, clock)
    optimum = solve_reference(position, graph)["revenue"]
    for routes, least in ((better, first), (responded, better)):
        revenue = sum(r.revenue for r in routes)
        checked = answer(graph, tables, routes, 0.0, solver="auto")["routes"]
        assert RouteSetValidator(position).validate(checked)["revenue"] == revenue
        assert sum(r.revenue for r in least) <= revenue <= optimum


def bound_after(graph, table, prices, chain, points, stops: list[int], conns: list[int], open_start: bool) -> int:
    """route_bound of the route ``stops`` (``stops[0]`` its start T), the
    branch and bound's way: open at its last stop unless that one only
    ends a route, and at T too while ``open_start``."""
    masks = graph_arrays(graph).conn_mask
    route = np.zeros(graph.num_stops + 1, np.int64)
    route[: len(stops)] = stops
    count = np.zeros(len(table.pay), np.int64)
    used = np.uint64(0)
    mask = np.zeros(masks.shape[1], np.uint64)
    on_path = np.zeros(graph.num_stops, np.bool_)
    for s in stops:
        count[prices.group[s]] += 1
        used |= graph.groups[s]
        on_path[s] = True
    for c in conns:
        mask |= masks[c]
    last = stops[-1]
    end_a = -1 if graph.flags[last] & (END_ONLY | BLOCKED) else last
    end_b = stops[0] if open_start else -1
    return route_bound(
        points.start, points.other, points.piece, graph.flags, graph.groups, prices, table.visit.astype(np.int64),
        route, len(stops), count, used, mask, end_a, end_b, on_path, chain,
    )  # fmt: skip


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=3, max_size=5, token_rate=0.5))
def test_the_bound_is_never_below_a_route_through_what_it_bounds(position_json):
    """On every start of the richest routes (from their lowest token stop T,
    each of the two ways round: the first leg grown stop by stop, with T
    still open, then the second), route_bound is at least the route's
    revenue: whatever it leaves out (two chains ending at one end-only stop,
    the paired chains of :func:`~routecalc.kernels.longest.route_bound`)
    no route earns."""
    check_the_bound_on_the_richest_routes(load_position(position_json))


#: 1867-style trains that visit few cities and pass towns free: their visits
#: left are priced in the bound (and each city a chain passes is charged).
FEW_VISITS = tuple(
    {
        "name": f"{n}F",
        "fill": True,
        "distance": [{"nodes": ["city", "offboard"], "pay": n, "visit": n}, {"nodes": ["town"], "pay": 0, "visit": 99}],
    }
    for n in (2, 3)
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=4, max_size=6, max_trains=1, token_rate=0.3), st.sampled_from(FEW_VISITS))
def test_the_bound_with_visits_priced_is_never_below_a_route_through_what_it_bounds(position_json, train):
    """The same for trains whose visits run out before their pay slots, on
    larger boards (each price of a visit left, and the visit a chain below a
    city makes there, is checked against every rich route)."""
    check_the_bound_on_the_richest_routes(load_position({**position_json, "trains": [train]}))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=3, max_size=5, token_rate=0.5, switches=True))
def test_the_bound_on_track_that_forks_is_never_below_a_route_through_it(position_json):
    """The same where track forks at cell edges: no route turns from one
    branch of a switch to another, and each passes the stem it is merged
    into."""
    check_the_bound_on_the_richest_routes(load_position(position_json))


def check_the_bound_on_the_richest_routes(position) -> None:
    graph = compile_position(position)
    for table in train_tables(graph):
        routes, finished = enumerate_routes(graph, table)
        assert finished
        prices = pay_table(table, graph, position.rules.bonuses(position))
        points = track_points(graph, int(table.gauge_bit))
        values = branch_and_bound.thresholds(prices)
        thetas, lambdas = branch_and_bound.visit_prices(prices, table.visit.astype(np.int64), values)
        lists = branch_and_bound.lists_needed(prices, values)
        chain = new_chain_work(len(points.piece), len(table.pay), thetas, lists, lambdas)
        for route in sorted(routes, key=lambda r: -r.revenue)[:20]:
            start = route.stops.index(min(s for s in route.stops if graph.flags[s] & TOKEN))
            back = (route.stops[start::-1], route.conns[:start][::-1])
            ahead = (route.stops[start:], route.conns[start:])
            for (first, first_conns), (second, second_conns) in ((back, ahead), (ahead, back)):
                for k in range(2, len(first) + 1):
                    most = bound_after(graph, table, prices, chain, points, first[:k], first_conns[: k - 1], True)
                    assert most >= route.revenue, (route.stops, first[:k])
                for k in range(2, len(second) + 1):
                    stops, conns = first + second[1:k], first_conns + second_conns[: k - 1]
                    most = bound_after(graph, table, prices, chain, points, stops, conns, False)
                    assert most >= route.revenue, (route.stops, stops)


@pytest.mark.parametrize(
    ("fixture", "train", "most", "steps"), [("1828-d-8e", 1, 430, 26), ("express", 0, 430, 13), ("express", 1, 700, 13)]
)
def test_the_bound_pairs_no_two_chains_ending_at_one_offboard(fixture, train, most, steps):
    """The express trains of the stress fixtures, proving their maxima from
    them: an offboard beside several stops (stress-1828's F2, 70, beside
    five) was counted at both ends of a route, keeping the bound 10 above
    the 8E's 430 for 170,698 steps (85,387 and 323,783 on stress-express's
    8E and 6E); paired only where their chains end apart, a few dozen."""
    graph = compile_position(load_position_file(ROOT / "fixtures" / f"stress-{fixture}.json"))
    table = train_tables(graph)[train]
    found = single_train_maximum(graph, train, table, most, Clock(None, None), None)
    assert (found.revenue, found.route, found.steps) == (most, None, steps)


@pytest.mark.parametrize(
    ("fixture", "train", "most", "steps"),
    [("1867-express-8", 0, 820, 17), ("1867-towns", 0, 360, 5_972), ("1867-towns", 1, 450, 17)],
)
def test_the_bound_charges_a_connect_bonus_its_stop_and_a_train_its_visits_left(fixture, train, most, steps):
    """1867's trains from their maxima: the Timmins bonus is paid only with
    D2 (40) paid too, so it holds one of the 5+5E's five pay slots (the
    bound was five stops of 60 and more plus the bonus, 860, and proved
    nothing in 2,000,000 steps), and its open chains were paired with
    themselves (towns' 7: 9,189 steps); a 5 that may visit two more cities
    reaches only what towns lead to within two (towns' 5: 35,099 -> 21,587),
    and each visit left is priced, each city a chain passes charged (21,587
    -> 6,812; 5,972 since switches are merged into their stems)."""
    graph = compile_position(load_position_file(ROOT / "fixtures" / f"stress-{fixture}.json"))
    table = train_tables(graph)[train]
    found = single_train_maximum(graph, train, table, most, Clock(None, None), 100_000)
    assert (found.revenue, found.route, found.steps) == (most, None, steps)


def test_the_open_ends_of_an_1867_8_share_its_visits_left():
    """stress-1867-express-8's 8 (eight cities and offboards, towns free;
    its maximum 560): from token T = 20 through 28, 36, 56 and 63, with
    three visits left to share between its two open ends, the bound was 560
    (the ends' chains each counted alone, the city 12 on the way to the 70
    offboards beyond it free); a price on each visit left and the visit a
    chain makes passing a city make it 550. From 559 every route from 20
    (540 at most) is cut within 500 steps, where it was not in 2,000,000."""
    graph = compile_position(load_position_file(ROOT / "fixtures" / "stress-1867-express-8.json"))
    table = train_tables(graph)[1]
    assert table.train.name == "8"
    prices = pay_table(table, graph, graph.position.rules.bonuses(graph.position))
    points = track_points(graph, int(table.gauge_bit))
    values = branch_and_bound.thresholds(prices)
    lists = branch_and_bound.lists_needed(prices, values)
    stops = [20, 28, 36, 56, 63]
    conns = [
        next(c for c in range(len(graph.conn_a)) if {graph.conn_a[c], graph.conn_b[c]} == {a, b})
        for a, b in zip(stops, stops[1:])
    ]
    most = {}
    for name, (thetas, lambdas) in {
        "alone": (values, np.zeros(len(values), np.int64)),
        "priced": branch_and_bound.visit_prices(prices, table.visit.astype(np.int64), values),
    }.items():
        chain = new_chain_work(len(points.piece), len(table.pay), thetas, lists, lambdas)
        most[name] = bound_after(graph, table, prices, chain, points, stops, conns, True)
    assert most == {"alone": 560, "priced": 550}
    found = single_train_maximum(graph, 1, table, 559, Clock(None, None), 500)
    assert found.paused is not None and found.steps == 500
    search = found.paused.found.search
    assert int(search.token_i[0]) > 1 and int(search.stop[0]) == 28  # past the start at 20


def test_a_train_paid_for_every_stop_counts_an_open_connect_bonus_only_down_chains_to_its_stop():
    """stress-1867-two-d's D, paid for every stop, from its maximum 860: the
    Timmins bonus (40, only with the offboard D2, which ends a route) was
    added to every chain, and the bound's graph let routes turn from one
    branch of a switch to another: 653,802 steps. With the threshold bound
    at 0 (a chain's stops summed) the bonus counts only down chains to D2,
    and switches are merged into their stems."""
    graph = compile_position(load_position_file(ROOT / "fixtures" / "stress-1867-two-d.json"))
    table = train_tables(graph)[0]
    found = single_train_maximum(graph, 0, table, 860, Clock(None, None), 100_000)
    assert (found.revenue, found.route, found.steps) == (860, None, 50_854)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(), st.integers(0, 2**32 - 1))
def test_richest_first_orders_each_stops_connections_by_falling_weight(position_json, seed):
    graph = compile_position(load_position(position_json))
    arrays = graph_arrays(graph)
    weight = np.random.default_rng(seed).integers(0, 5, graph.num_stops)
    ordered = branch_and_bound.richest_first(arrays, weight)
    for s in range(graph.num_stops):
        lo, hi = int(arrays.adj_start[s]), int(arrays.adj_start[s + 1])
        entries = list(zip(arrays.adj_other[lo:hi], arrays.adj_conn[lo:hi], strict=True))
        expected = sorted(entries, key=lambda entry: -weight[entry[0]])  # stable: ties keep the board's order
        got = list(zip(ordered.adj_other[lo:hi], ordered.adj_conn[lo:hi], strict=True))
        assert got == expected


def test_trains_of_one_name_and_two_kinds_keep_their_own_searches():
    """A 1867 8 given as a train object (cities 8, towns free, fill) beside
    the catalogue 8: auto remembered its branch and bound searches by train
    name, so the catalogue 8's paused search was run on for the other 8
    (AssertionError: the payment kernel priced a route 470, the validator
    490). Short budgets make both searches pause."""
    data = json.loads((ROOT / "fixtures" / "corpus" / "generic" / "1867" / "21268-a994.json").read_text())
    position = data["position"]
    towns_free = [{"nodes": ["city", "offboard"], "pay": 8, "visit": 8}, {"nodes": ["town"], "pay": 0, "visit": 99}]
    position["trains"] = [{"name": "8", "distance": towns_free, "fill": True}, "8"]
    optimum = api.solve(position, "cpsat")
    assert optimum["status"] == "optimal"
    with mock.patch.object(auto, "ENUMERATION_STEPS", 500), mock.patch.object(auto, "MAXIMUM_STEPS", 20):
        loaded = load_position(position)
        answer = auto.solve_auto(loaded, compile_position(loaded))
    assert (answer["status"], answer["revenue"]) == ("optimal", optimum["revenue"]) == ("optimal", 870)
    assert set(answer["stats"]["auto"]["maxima"]) == {"8 (train 1)", "8 (train 2)"}
