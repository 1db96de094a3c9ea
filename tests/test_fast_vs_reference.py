"""The fast solver against the reference solver on random small boards.

The reference solver lists every valid route with the validator's own
check and pays each by brute force; the fast solver must find exactly its
optimum, list exactly as many valid routes, and answer routes the
validator accepts at the revenue it claims. The payment kernel (shared by
the validator and the fast solver) must match the brute force on every
route the reference lists. Limits and progress are checked on corpus
positions with known optima.
"""

from __future__ import annotations

from itertools import combinations, product
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import CORPUS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import positions

from routecalc import api, cli
from routecalc.errors import PositionError
from routecalc.graph import compile_position
from routecalc.kernels import combination as comb
from routecalc.model import load_position, load_position_file
from routecalc.scoring import best_payment, train_tables
from routecalc.solvers import fast, packing
from routecalc.solvers.fast import solve_fast
from routecalc.solvers.reference import enumerate_routes, solve_reference
from routecalc.validate import RouteSetValidator

CNR = CORPUS / "generic" / "1867" / "navig18xx_1867_bc_CNR.json"  # oracle 1150
needs_corpus = pytest.mark.skipif(not CNR.exists(), reason="corpus not present")


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=3, max_size=5, token_rate=0.5))
def test_fast_equals_reference(position_json):
    position = load_position(position_json)
    graph = compile_position(position)
    want = solve_reference(position, graph)
    got = solve_fast(position, graph)
    assert got["revenue"] == want["revenue"]
    assert got["status"] == "optimal" and got["bound"] == got["revenue"]
    assert got["stats"]["routes_enumerated"] == want["stats"]["routes_enumerated"]
    validator = RouteSetValidator(position, graph)
    checked = validator.validate(got["routes"])
    assert checked["revenue"] == got["revenue"]
    assert [r["revenue"] for r in checked["routes"]] == [r["revenue"] for r in got["routes"]]
    # Stopped early, the answer is still valid and its bound still true.
    limited = solve_fast(position, graph, route_limit=2)
    assert limited["revenue"] <= want["revenue"] <= limited["bound"]
    assert validator.validate(limited["routes"])["revenue"] == limited["revenue"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=3, max_size=5, token_rate=0.5))
def test_paused_and_regrown_searches_give_the_same_answer(position_json):
    """Kernels stopped every few steps, buffers starting at one route: same answer."""
    position = load_position(position_json)
    graph = compile_position(position)
    want = solve_fast(position, graph)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast, "CHUNK", 3)
        patch.setattr(fast, "COMBINATION_CHUNK", 3)
        patch.setattr(fast, "FIRST_BUFFER", 1)
        got = solve_fast(position, graph)
    assert (got["revenue"], got["status"]) == (want["revenue"], "optimal")
    assert got["stats"]["routes_enumerated"] == want["stats"]["routes_enumerated"]
    assert got["stats"]["routes_kept"] == want["stats"]["routes_kept"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(max_trains=2))
def test_payment_kernel_equals_brute_force(position_json):
    """Every valid route the reference lists is paid alike by the kernel."""
    position = load_position(position_json)
    graph = compile_position(position)
    bonuses = position.rules.bonuses(position)
    for table in train_tables(graph):
        for route in enumerate_routes(graph, table)[0]:
            revenue, paid = best_payment(route.stops, table, graph, bonuses)
            assert revenue == route.revenue, (route.stops, route.paid, paid)


def test_fast_is_registered():
    position = load_position_file(cli.DEMO_FIXTURE)
    answer = api.solve(position, "fast")
    assert answer["solver"] == "fast" and answer["revenue"] == solve_reference(position)["revenue"]


@needs_corpus
def test_route_limit_gives_feasible_answer_with_true_bound():
    position = load_position_file(CNR)
    answer = solve_fast(position, route_limit=500)
    assert answer["status"] == "feasible"
    assert answer["revenue"] <= 1150 <= answer["bound"]
    assert RouteSetValidator(position).validate(answer["routes"])["revenue"] == answer["revenue"]


@needs_corpus
def test_route_cap_gives_feasible_answer_with_true_bound(monkeypatch):
    monkeypatch.setattr(fast, "MAX_ROUTES", 100)  # memory guard, whatever route_limit says
    answer = solve_fast(load_position_file(CNR), route_limit=10**6)
    assert answer["status"] == "feasible" and answer["revenue"] <= 1150 <= answer["bound"]
    assert answer["stats"]["routes_kept"] <= 200


@needs_corpus
def test_time_limit_gives_feasible_answer_with_true_bound(monkeypatch):
    monkeypatch.setattr(fast, "CHUNK", 50)  # look at the clock often
    position = load_position_file(CNR)
    answer = solve_fast(position, time_limit=1e-6)
    assert answer["status"] == "feasible"
    assert answer["revenue"] <= 1150 <= answer["bound"]
    assert RouteSetValidator(position).validate(answer["routes"])["revenue"] == answer["revenue"]


@needs_corpus
def test_progress_reports_growing_fractions(monkeypatch):
    monkeypatch.setattr(fast, "CHUNK", 2000)
    seen: list[float] = []
    answer = solve_fast(load_position_file(CNR), progress=seen.append)
    assert answer["revenue"] == 1150 and answer["status"] == "optimal"
    assert len(seen) > 3
    assert seen == sorted(seen) and 0 <= seen[0] and seen[-1] == 1.0


def test_progress_is_quiet_on_short_solves():
    seen: list[float] = []
    solve_fast(load_position_file(cli.DEMO_FIXTURE), progress=seen.append)
    assert seen == []


@pytest.mark.parametrize("limit", [0, -3, 2.5, True])
def test_bad_route_limit_is_a_position_error(limit):
    with pytest.raises(PositionError, match="route_limit"):
        solve_fast(load_position_file(cli.DEMO_FIXTURE), route_limit=limit)


def test_identical_trains_share_one_list_and_stay_exact():
    """Three identical trains: enumerated once, answer equals the reference."""
    position = load_position_file(cli.DEMO_FIXTURE)
    position.trains = [position.trains[0]] * 3
    got, want = solve_fast(position), solve_reference(position)
    assert got["revenue"] == want["revenue"]
    assert got["stats"]["routes_enumerated"] == want["stats"]["routes_enumerated"]


def test_warm_up_solves_its_tiny_position():
    assert fast.warm_up() > 0


@needs_corpus
def test_cli_progress_and_route_limit(capsys):
    assert cli.main(["solve", str(CNR), "--solver", "fast", "--progress", "--route-limit", "300"]) == 0
    import json

    answer = json.loads(capsys.readouterr().out)
    assert answer["status"] == "feasible" and answer["bound"] >= 1150 >= answer["revenue"]
    assert answer["stats"]["routes_kept"] <= 600


@st.composite
def route_lists(draw):
    """Random sorted route lists: up to 4 trains with short lists, or 2 with
    long ones over two mask words (the piece index then spans several
    blocks; drawn from a seeded generator, which is quicker); runs of
    identical trains share a list."""
    long = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32)))
    short_masks = st.lists(st.integers(0, 11), min_size=1, max_size=6).map(lambda ps: sum({1 << p for p in ps}))
    lists, same = [], []
    for i in range(2 if long else draw(st.integers(1, 4))):
        if i and draw(st.booleans()):
            lists.append(lists[-1])
            same.append(True)
            continue
        if long:
            routes = [
                (int(rng.integers(1, 61)), sum({1 << int(p) for p in rng.integers(0, 128, rng.integers(1, 7))}))
                for _ in range(rng.integers(65, 91))
            ]
        else:
            routes = draw(st.lists(st.tuples(st.integers(1, 60), short_masks), max_size=12))
        lists.append(sorted(routes, key=lambda r: -r[0]))
        same.append(False)
    return lists, same


def brute_force(lists) -> int:
    """Best total over every choice of a route or none per train, masks disjoint
    (a route given to two identical trains overlaps itself, masks being non-empty)."""
    best = 0
    for pick in product(*[[None, *rs] for rs in lists]):
        chosen = [route for route in pick if route is not None]
        if not any(a[1] & b[1] for a, b in combinations(chosen, 2)):
            best = max(best, sum(revenue for revenue, _ in chosen))
    return best


@settings(max_examples=300, deadline=None)
@given(route_lists())
def test_combination_kernel_equals_brute_force(data):
    lists, same = data
    distinct = list({id(rs): rs for rs in lists}.values())
    words = 2
    packed = comb.route_lists(
        [np.array([[m & (2**64 - 1), m >> 64] for _, m in rs], np.uint64).reshape(len(rs), words) for rs in distinct],
        [np.array([r for r, _ in rs], np.int64) for rs in distinct],
        [next(k for k, d in enumerate(distinct) if d is rs) for rs in lists],
    )
    assert list(packed.same_as_previous) == same
    want = brute_force(lists)
    state = comb.new_state(packed)
    budget = 1 if len(packed.revenue) < 64 else 50  # pauses after (nearly) every step: resuming is exercised
    while comb.combine(packed, state, budget) != comb.DONE:
        assert comb.suffix_bound(packed, state) >= want  # the bound of an interrupted search holds
    assert state.opt[0] == want
    picked = [(i, int(r)) for i, r in enumerate(state.choice) if r >= 0]
    assert sum(lists[i][r][0] for i, r in picked) == want
    routes = [(id(lists[i]), r) for i, r in picked]
    assert len(set(routes)) == len(routes)
    assert not any(lists[i][r][1] & lists[j][q][1] for (i, r), (j, q) in combinations(picked, 2))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.lists(st.integers(0, 3), min_size=2, max_size=2)), max_size=40))
def test_best_of_each_track_keeps_the_first_best_route_of_each_track(routes):
    """Of the routes over the same track (few tracks, so that many repeat) the
    one kept is the first of the richest, and the kept ones come best first."""
    revenue = np.array([r for r, _ in routes], np.int64)
    mask = np.array([m for _, m in routes], np.uint64).reshape(len(routes), 2)
    by_revenue = sorted(range(len(routes)), key=lambda i: -revenue[i])
    first: dict[tuple[int, ...], int] = {}
    for i in by_revenue:
        first.setdefault(tuple(routes[i][1]), i)
    want = [i for i in by_revenue if first[tuple(routes[i][1])] == i]
    assert list(fast.best_of_each_track(mask, revenue)) == want


def test_the_piece_index_is_built_only_when_two_trains_have_routes():
    """A list no other train's choice can clash with needs no index: on a big
    board a D train's index, next to an express train whose enumeration
    never began, was tens of MB filled for nothing."""
    routes = np.array([[1], [2], [3]], np.uint64)
    revenue = np.array([30, 20, 10], np.int64)
    nothing = np.zeros((0, 1), np.uint64), np.zeros(0, np.int64)
    alone = comb.route_lists([routes, nothing[0]], [revenue, nothing[1]], [0, 1])
    assert alone.index.shape == (0, 0)
    assert alone.mask is routes  # and its masks are not copied
    paired = comb.route_lists([routes], [revenue], [0, 0])
    assert paired.index.shape == (64, 1)
    assert list(paired.index[:2, 0]) == [0b101, 0b110]  # pieces 0 and 1: routes 0, 2 and 1, 2


def test_the_piece_index_is_left_out_past_its_bits(monkeypatch):
    """Filling the index is a write per piece of each route: past
    MAX_INDEX_BITS (65,536 D routes on a 2,000-cell board set 195 million,
    some 5 s, and a 1 s limit answered after 4 s) the routes are tried one by
    one instead. The three routes here set four bits."""
    routes = np.array([[1], [2], [3]], np.uint64)
    revenue = np.array([30, 20, 10], np.int64)
    monkeypatch.setattr(comb, "MAX_INDEX_BITS", 4)
    assert comb.route_lists([routes], [revenue], [0, 0]).index.shape == (64, 1)
    monkeypatch.setattr(comb, "MAX_INDEX_BITS", 3)
    assert comb.route_lists([routes], [revenue], [0, 0]).index.shape == (0, 0)


@settings(max_examples=200, deadline=None)
@given(route_lists(), st.sampled_from([1, 2, 3, 4096]))
def test_the_greedy_set_takes_each_trains_best_route_clear_of_the_track_taken(data, block):
    """Looked for a block of rows at a time, the greedy set is the plain one:
    richest train first, each its richest route sharing no piece with those
    chosen before (ties to the first listed)."""
    lists, _ = data
    per_train = [
        SimpleNamespace(
            mask=np.array([[m & (2**64 - 1), m >> 64] for _, m in rs], np.uint64).reshape(len(rs), 2),
            revenue=np.array([r for r, _ in rs], np.int64),
        )
        for rs in lists
    ]
    taken, want = 0, []
    for t in sorted(range(len(lists)), key=lambda t: -max((r for r, _ in lists[t]), default=0)):
        clear = [k for k, (_, m) in enumerate(lists[t]) if not m & taken]
        if clear:
            k = max(clear, key=lambda k: (lists[t][k][0], -k))
            taken |= lists[t][k][1]
            want.append((t, k))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(packing, "CLEAR_BLOCK", block)
        assert packing.greedy_choice(per_train) == want
