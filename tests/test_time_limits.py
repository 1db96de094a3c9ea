"""Every solver keeps to its time limit on boards it cannot finish.

A stopped solve answers ``feasible`` with the best route set found (the
validator agrees with its revenue) and a true upper bound. The stress
fixtures' optima are proven by CP-SAT without a limit
(benchmarks/test_bench_cpsat.py). The elapsed-time check is loose: it is
not a speed test but a guard against solves that ignore the limit, which
took from 40 s to several minutes before.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from boards import city, line_board

from routecalc import load_position, load_position_file
from routecalc.graph import compile_position
from routecalc.scoring import train_tables
from routecalc.solvers import SOLVERS, Limits
from routecalc.solvers.fast import Clock, enumerate_company
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
