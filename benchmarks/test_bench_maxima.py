"""The single-train branch and bound on the stress positions' express trains
(pytest-benchmark), its bound with and without the best-weights lists in
the same run (1828 8E: 4.0 -> 3.2 ms, express 8E: 2.6 -> 2.0 ms, load 1.8;
3.6 -> 2.6 s and 1.8 -> 1.3 s before the bound paired no two chains ending
at one offboard). Where the threshold bounds are at least as tight (one way to
fill the pay slots, no connect bonus, no visit limit below them, every paid weight a
threshold) the lists are not kept (:mod:`routecalc.kernels.longest`).

The search starts from one below the train's maximum, as auto's does from
the best route known, so each round proves the maximum; ``extra_info``
has the steps.
"""

from __future__ import annotations

from unittest import mock

import pytest
from paths import ROOT

from routecalc.graph import compile_position
from routecalc.model import load_position_file
from routecalc.scoring import train_tables
from routecalc.solvers import maxima
from routecalc.solvers.fast import Clock, warm_up

#: (fixture, train, its maximum): the express trains auto proves by branch
#: and bound (1828's 8E) or could (express's 8E).
EXPRESS = [("stress-1828-d-8e", "8E", 430), ("stress-express", "8E", 430)]


@pytest.mark.parametrize("lists", ["kept", "dropped"])
@pytest.mark.parametrize(("fixture", "train", "most"), EXPRESS, ids=[f"{f}-{t}" for f, t, _ in EXPRESS])
def test_bench_express_maximum(benchmark, fixture, train, most, lists):
    warm_up()
    graph = compile_position(load_position_file(ROOT / "fixtures" / f"{fixture}.json"))
    tables = train_tables(graph)
    t = next(i for i, table in enumerate(tables) if table.train.name == train)
    benchmark.group = f"{fixture} {train}: maximum by branch and bound"

    needed = maxima.lists_needed

    def search():
        with mock.patch.object(maxima, "lists_needed", lambda *given: lists == "kept" or needed(*given)):
            return maxima.single_train_maximum(graph, t, tables[t], most - 1, Clock(None, None), None)

    found = benchmark.pedantic(search, rounds=3, warmup_rounds=1, iterations=1)
    assert found.revenue == most
    benchmark.extra_info.update(steps=found.steps, cut=found.cut)
