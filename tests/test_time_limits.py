"""Every solver keeps to its time limit on boards it cannot finish.

A stopped solve answers ``feasible`` with the best route set found (the
validator agrees with its revenue) and a true upper bound. The stress
fixtures' optima are proven by CP-SAT without a limit
(benchmarks/test_bench_cpsat.py). The elapsed-time check is loose: it is
not a speed test but a guard against solves that ignore the limit, which
took from 40 s to several minutes before.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from boards import city, line_board

from routecalc import api, deadline, load_position, load_position_file
from routecalc.cli import main as cli_main
from routecalc.errors import PositionError, TimeLimitError
from routecalc.graph import compile_position
from routecalc.scoring import train_tables
from routecalc.solvers import SOLVERS, Limits, packing
from routecalc.solvers.fast import ENUMERATION_SHARE, Clock, enumerate_company
from routecalc.solvers.packing import pack_routes
from routecalc.validate import RouteSetValidator

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
STRESS = {"stress-1867-two-d.json": 1490, "stress-express.json": 1040}
LIMIT = 1.0


@pytest.mark.parametrize("fixture", sorted(STRESS))
@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_a_stopped_solve_is_feasible_with_a_true_bound(solver, fixture):
    position = load_position_file(FIXTURES / fixture)
    t0 = time.perf_counter()
    answer = SOLVERS[solver](position, compile_position(position), Limits(time_limit=LIMIT))
    waited = time.perf_counter() - t0
    optimum = STRESS[fixture]
    if answer["status"] == "optimal":
        assert answer["revenue"] == answer["bound"] == optimum
    else:
        assert answer["status"] == "feasible"
        assert answer["revenue"] <= optimum <= answer["bound"]
    assert RouteSetValidator(position).validate(answer["routes"])["revenue"] == answer["revenue"]
    assert waited < LIMIT + 4, f"{solver} took {waited:.1f} s under a {LIMIT:g} s limit"


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_a_limit_the_solve_stays_within_changes_nothing(solver):
    position = load_position(line_board(city(20), city(30), city(40), trains=["2", "3"]))
    answer = SOLVERS[solver](position, compile_position(position), Limits(time_limit=30.0))
    assert (answer["status"], answer["revenue"], answer["bound"]) == ("optimal", 90, 90)


def test_packing_cut_to_the_time_limit_keeps_a_true_bound():
    """Packing under a tiny time limit packs only the most promising routes;
    the bound still covers every left-out route."""
    position = load_position_file(FIXTURES / "stress-c2c-size-8.json")
    graph = compile_position(position)
    tables = train_tables(graph)
    listed = enumerate_company(graph, tables, None, Clock(None, None))
    whole_status, whole, whole_bound, _ = pack_routes(listed, graph)
    optimum = sum(r.revenue for r in whole)
    assert whole_status == "optimal" and whole_bound == optimum
    status, routes, bound, stats = pack_routes(listed, graph, time_limit=0.01)
    assert stats["routes_packed"] < sum(len(found.revenue) for found in listed)
    assert sum(r.revenue for r in routes) <= optimum <= bound
    assert status == ("optimal" if bound == optimum else "feasible")


@pytest.mark.slow
def test_packing_many_long_routes_keeps_to_the_limit():
    """A late 1867 board with more track and two D trains: enumeration
    lists 309,555 routes of some 58 track pieces each, too many to combine.
    Packed by the routes a 20 s limit affords (50,000), CP-SAT's presolve
    alone took some 40 s; cut by their pieces too, the answer comes in
    time, and it earns no less than the greedy set (1010)."""
    position = load_position_file(FIXTURES / "limits" / "1867-gw-two-d.json")
    t0 = time.perf_counter()
    answer = SOLVERS["packing"](position, compile_position(position), Limits(time_limit=20.0))
    waited = time.perf_counter() - t0
    assert answer["status"] == "feasible" and 1010 <= answer["revenue"] <= 1080 <= answer["bound"]
    assert RouteSetValidator(position).validate(answer["routes"])["revenue"] == answer["revenue"]
    assert waited < 20.0 + 2, f"{waited:.1f} s under a 20 s limit"


def _routes_of(pieces: list[int], revenues: list[int]) -> SimpleNamespace:
    """A train's listed routes as packing reads them: each route's own run
    of ``pieces`` track pieces (none shared), and its revenue, best first."""
    mask = np.zeros((len(pieces), 2), np.uint64)
    at = 0
    for row, count in enumerate(pieces):
        for bit in range(at, at + count):
            mask[row, bit // 64] |= np.uint64(1) << np.uint64(bit % 64)
        at += count
    return SimpleNamespace(mask=mask, revenue=np.asarray(revenues, np.int64))


def test_packing_is_cut_to_the_pieces_the_limit_affords(monkeypatch):
    """Long routes make a big model a route: the packed routes are cut by
    their track pieces, summed, as well as by their number (CP-SAT's presolve
    overran a 60 s limit by 200 s on 150,000 D routes of 58 pieces). The
    cut keeps those losing least against their train's best route, and a
    set using a left-out one earns at most it plus the other train's best."""
    monkeypatch.setattr(packing, "PACKED_PIECES_PER_SECOND", 25)
    long_ones = _routes_of([10, 10, 10], [90, 80, 70])
    short_ones = _routes_of([2, 2], [50, 40])
    listed = [long_ones, short_ones]
    useful = [np.arange(3), np.arange(2)]
    kept, missed = packing._most_promising(useful, listed, [90, 50], size_for=1.0)
    # losses 0, 10, 20 (10 pieces each) and 0, 10 (2 each): 25 pieces hold all but the 20
    assert [rows.tolist() for rows in kept] == [[0, 1], [0, 1]]
    assert missed == 70 + 50
    monkeypatch.setattr(packing, "PACKED_PIECES_PER_SECOND", 10**6)
    assert packing._most_promising(useful, listed, [90, 50], size_for=1.0) == (useful, None)


STALLED = ["1867-two-d-stalled.json", "chesapeake-d-8e-stalled.json"]


@pytest.mark.parametrize("name", STALLED)
def test_a_finished_listing_too_big_to_pack_goes_to_the_path_model(name):
    """Enumeration finishes but the combination search stalls, and packing
    every useful route would pass packing's size limits: auto once packed
    the routes cut to those limits and answered 950 (bound 1210) and 670
    (bound 790), feasible in 2-4 s under a 20 s limit. CP-SAT's path model,
    whose size does not grow with the routes, with each train's maximum
    from its finished listing, proves the optimum."""
    path = FIXTURES / "limits" / name
    position = load_position_file(path)
    graph = compile_position(position)
    listed = enumerate_company(graph, train_tables(graph), None, Clock(None, None))
    assert all(found.complete for found in listed)
    size_for = 20.0 * (1 - ENUMERATION_SHARE)
    assert not packing.packs_whole(listed, size_for)
    answer = SOLVERS["auto"](position, graph, Limits(time_limit=20.0))
    optimum = json.loads(path.read_text())["reference"]["optimum"]
    assert (answer["status"], answer["revenue"], answer["bound"]) == ("optimal", optimum, optimum)
    assert answer["solver"] == "cpsat" and "packing them all" in answer["stats"]["auto"]["why"]
    assert RouteSetValidator(position).validate(answer["routes"])["revenue"] == optimum


def test_packing_whole_is_judged_by_routes_and_pieces(monkeypatch):
    """Auto packs a finished listing only when nothing would be cut."""
    listed = [_routes_of([10, 10, 10], [90, 80, 70]), _routes_of([2, 2], [50, 40])]
    # the second train's routes share the first's track: the greedy set earns 90, and all 5 routes
    # (34 track pieces) could beat it
    assert packing.packs_whole(listed, 1.0)
    monkeypatch.setattr(packing, "PACKED_PIECES_PER_SECOND", 33)
    assert not packing.packs_whole(listed, 1.0)
    assert packing.packs_whole(listed, None)  # without a limit only MOST_PACKED_PIECES counts
    monkeypatch.setattr(packing, "MOST_PACKED_PIECES", 33)
    assert not packing.packs_whole(listed, None)
    monkeypatch.setattr(packing, "MOST_PACKED_PIECES", 34)
    monkeypatch.setattr(packing, "MIN_PACKED", 4)
    monkeypatch.setattr(packing, "PACKED_PER_SECOND", 4)
    assert packing.packs_whole(listed, None)
    assert not packing.packs_whole(listed, 1.0) and packing.packs_whole(listed, 2.0)  # 4 routes, then 8


def test_packing_bounds_a_set_by_each_trains_best_route(monkeypatch):
    """CP-SAT stopped before its bound means anything (it reports the sum of
    every route's revenue): no set earns more than each train's best route."""
    from ortools.sat.python import cp_model

    position = load_position(line_board(city(20), city(30), city(40), trains=["2", "3"]))
    graph = compile_position(position)
    listed = enumerate_company(graph, train_tables(graph), None, Clock(None, None))
    monkeypatch.setattr(cp_model.CpSolver, "best_objective_bound", property(lambda self: 10**6))
    status, routes, bound, _ = pack_routes(listed, graph)
    assert bound == int(listed[0].revenue[0]) + int(listed[1].revenue[0]) == 50 + 90


SLOW_IMPORT = """
import importlib.abc, sys, time

class SlowOrtools(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "ortools":
            time.sleep({pause})  # a cold disk or a loaded machine: the import that the first CP-SAT solve pays
        return None

sys.meta_path.insert(0, SlowOrtools())
from routecalc import api, load_position_file
assert "ortools" not in sys.modules
position = load_position_file({fixture!r})
t0 = time.perf_counter()
answer = api.solve(position, solver="cpsat", time_limit={limit})
print(round(time.perf_counter() - t0, 3), answer["status"])
"""


def test_the_first_cp_sat_solve_counts_the_ortools_import_in_its_limit():
    """A fresh process's first CP-SAT solve imports ortools inside the
    request's limit: with the import made to take 2 s and a limit of 2.5 s,
    the answer comes within the limit's 1 s promise, where a clock started
    after the import would answer after 4.5 s (this board is not proven in
    2.5 s)."""
    import subprocess
    import sys

    pause, limit = 2.0, 2.5
    script = SLOW_IMPORT.format(pause=pause, limit=limit, fixture=str(FIXTURES / "stress-1828-d-8e.json"))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    seconds, status = run.stdout.split()
    assert status == "feasible"
    assert float(seconds) < limit + 1.0, seconds


def test_the_kernels_first_load_is_not_counted_in_the_limit(monkeypatch):
    """The first solve after an install compiles the kernels (a minute on two
    busy cores). That is not the request's work: with it in the limit, the
    first of ``make slow``'s dense boards in a fresh clone answered 300 of at
    most 1860 within 30 s, where 630 is proven in 0.1 s. The CLI and the
    service load the kernels before their limits start; the API pauses its
    clock while it loads them."""
    api.warm_up()  # the real load first: this test's own solve must not compile
    loads: list[float] = []

    def slow_load() -> None:
        loads.append(1.0)
        time.sleep(1.6)  # past the limit and its grace: counted, the solve would stop

    monkeypatch.setattr(api, "warm_up", slow_load)
    answer = api.solve(line_board(city(20), city(30), city(40), trains=["3"]), time_limit=1.0)
    assert loads == [1.0]
    assert (answer["status"], answer["revenue"]) == ("optimal", 90)


@pytest.mark.parametrize(
    "limits, where",
    [
        ({"time_limit": 0}, "time_limit"),
        ({"time_limit": -1.0}, "time_limit"),
        ({"time_limit": float("nan")}, "time_limit"),
        ({"time_limit": "3"}, "time_limit"),
        ({"time_limit": True}, "time_limit"),
        ({"time_limit": float("inf")}, "time_limit"),
        ({"time_limit": 10**400}, "time_limit"),
        ({"route_limit": 0}, "route_limit"),
        ({"route_limit": "5"}, "route_limit"),
        ({"route_limit": 2.0}, "route_limit"),
    ],
)
def test_a_limit_that_is_none_is_named(limits, where):
    with pytest.raises(PositionError) as err:
        api.solve(line_board(city(20), city(30), trains=["2"]), **limits)
    assert err.value.where == where


def test_numbers_of_any_kind_are_limits():
    board = line_board(city(20), city(30), trains=["2"])
    assert api.solve(board, time_limit=np.float32(5), route_limit=np.int64(100))["revenue"] == 50


@pytest.mark.parametrize(
    "option, value", [("--time-limit", "0"), ("--time-limit", "nan"), ("--time-limit", "inf"), ("--route-limit", "0")]
)
def test_the_command_line_refuses_a_limit_that_is_none(option, value, capsys):
    with pytest.raises(SystemExit) as stop:
        cli_main(["solve", str(FIXTURES / "1830-late.json"), option, value])
    assert stop.value.code == 2
    assert option in capsys.readouterr().err


def test_an_18cuba_choice_too_big_to_model_keeps_to_the_limit():
    """Eight trains and eight wagons on an 80-cell board: some 24,000 routes
    a train, whose CP-SAT choice model took 10 s to build under a 1 s limit.
    The build stops with the limit; the answer is feasible with a true bound.
    Too many wagon orders for the branch and bound, the choice starts from
    each train's richest route on the track left (it answered 0 before),
    and the routes answered earn what the validator pays them. That seed
    answers, so the build stops at the limit, not past its grace (this
    thread's CPU was 1.55 s under the 1 s limit, 1.06 s now)."""
    position = load_position_file(FIXTURES / "limits" / "cuba-eight-wagons.json")
    t0, cpu = time.perf_counter(), time.thread_time()
    answer = api.solve(position, time_limit=LIMIT)
    waited, used = time.perf_counter() - t0, time.thread_time() - cpu
    assert answer["status"] == "feasible" and 0 < answer["revenue"] <= answer["bound"]
    assert answer["stats"]["cpsat_status"].startswith("not built")
    assert waited < LIMIT + 4, f"took {waited:.1f} s under a {LIMIT:g} s limit"
    assert used < LIMIT + deadline.GRACE, f"{used:.2f} s of CPU under a {LIMIT:g} s limit"
    assert api.validate(position, answer["routes"])["revenue"] == answer["revenue"]


def test_an_18cuba_choice_past_the_routes_a_model_is_given_is_not_handed_to_cp_sat():
    """Under a 15 s limit the same board's model was built (193,492 routes)
    and CP-SAT, which loads and presolves before it looks at its limit or a
    stop, answered 7-8 s past the limit (an audit), having found nothing.
    Past MAX_MODELLED_ROUTES (a count, whatever the limit) the seed answers."""
    from routecalc.games import cuba_cpsat

    answer = api.solve(load_position_file(FIXTURES / "limits" / "cuba-eight-wagons.json"), time_limit=15)
    said = f"not built: 193,492 routes, over the {cuba_cpsat.MAX_MODELLED_ROUTES:,} a CP-SAT model is given"
    assert (answer["solver"], answer["status"], answer["stats"]["cpsat_status"]) == ("cuba-bb", "feasible", said)
    assert 0 < answer["revenue"] <= answer["bound"]


def test_validating_on_a_board_too_big_to_compile_keeps_to_the_limit(tmp_path, capsys):
    """Twenty cells whose track joins every pair of their sides: the tracks
    between two stops grow exponentially, and validating even no routes
    compiled the board for minutes. The validator keeps to its limit (the
    API's ``time_limit``, the CLI's ``--time-limit``) and names it."""
    path = FIXTURES / "limits" / "every-side-joined.json"
    t0 = time.perf_counter()
    with pytest.raises(TimeLimitError, match="compiling"):
        api.validate(load_position_file(path), [], time_limit=LIMIT)
    assert time.perf_counter() - t0 < LIMIT + 4
    routes = tmp_path / "routes.json"
    routes.write_text("[]")
    t0 = time.perf_counter()
    assert cli_main(["validate", str(path), str(routes), "--time-limit", "1"]) == 2
    assert time.perf_counter() - t0 < LIMIT + 4
    assert '"where": "time_limit"' in capsys.readouterr().out


def test_the_time_limit_message_names_no_share_of_the_limit():
    """The CLI hands the solve what reading left of the limit, a drawing a
    share of it: the message named that (``the 2.41299 s limit`` under
    ``--time-limit 3``), so one input read differently by where it came from."""
    with pytest.raises(TimeLimitError) as err, deadline.within(0.001):
        time.sleep(deadline.GRACE + 0.01)
        deadline.check("compiling the track graph")
    assert str(err.value) == "time_limit: ran out while compiling the track graph"
