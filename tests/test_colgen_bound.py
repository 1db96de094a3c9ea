"""The experiment benchmarks/colgen_bound.py (the route-based bound by
column generation, measured for issue 12 and not used by the engine) gives
true bounds: on random boards, from two routes listed per train, its bound
is never below the optimum the fast solver proves, and when CP-SAT proves
that no route improves the LP, the bound is the LP's value."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from strategies import positions

from routecalc.graph import compile_position
from routecalc.model import load_position
from routecalc.scoring import train_tables
from routecalc.solvers.fast import Clock, enumerate_company, solve_fast

_spec = importlib.util.spec_from_file_location("colgen_bound", ROOT / "benchmarks" / "colgen_bound.py")
assert _spec is not None and _spec.loader is not None
pytestmark = pytest.mark.slow  # guards a benchmark, not the engine

colgen = sys.modules["colgen_bound"] = importlib.util.module_from_spec(_spec)  # dataclasses look their module up
_spec.loader.exec_module(colgen)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(min_size=3, max_size=4, token_rate=0.5))
def test_the_column_bound_is_never_below_the_optimum(position_json):
    position = load_position(position_json)
    graph = compile_position(position)
    tables = train_tables(graph)
    optimum = solve_fast(position, graph)["revenue"]
    listed = enumerate_company(graph, tables, 2, Clock(None, None))  # two routes a train: the pricing finds the rest
    found = colgen.column_bound(graph, tables, listed, [], float("-inf"), 5.0, 200)
    assert found.bound is not None and found.bound >= optimum - 1e-6
    if found.complete:
        assert found.lp >= optimum - 1e-6  # the LP relaxes the choice of routes
        assert found.lp - 1e-6 <= found.bound <= found.lp + 0.1  # prices rounded down by at most 1/SCALE a connection
    prices = np.random.default_rng(0).random(graph.num_pieces)
    for train in listed:
        expected = colgen.piece_rows(train.mask)[:, : graph.num_pieces] @ prices if len(train.mask) else np.zeros(0)
        assert np.allclose(colgen.mask_costs(train.mask, prices), expected)
