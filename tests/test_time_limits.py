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
