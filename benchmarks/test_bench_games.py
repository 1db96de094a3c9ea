"""The seed games' bundled examples: the default solver against the plain
reference solver in the same run (each benchmark's group pairs the two).

18XS has its own search (no route solvers), so it is timed alone; its
``extra_info`` records the walk steps the search took.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from routecalc import load_position_file
from routecalc.api import solve

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ROUTE_GAMES = ["lilliput-mildendo-ring", "c2c-d-destination"]


@pytest.mark.parametrize("solver", ["auto", "reference"])
@pytest.mark.parametrize("name", ROUTE_GAMES)
def test_bench_seed_game(benchmark, name, solver):
    position = load_position_file(FIXTURES / f"{name}.json")
    benchmark.group = f"seed game {name}"
    answer = benchmark.pedantic(solve, args=(position, solver), rounds=5, warmup_rounds=1, iterations=1)
    assert answer["status"] == "optimal"
    assert answer["revenue"] == solve(position, "reference")["revenue"]


def test_bench_18xs_plan(benchmark):
    position = load_position_file(FIXTURES / "xs-small.json")
    benchmark.group = "seed game 18XS"
    answer = benchmark.pedantic(solve, args=(position,), rounds=5, warmup_rounds=1, iterations=1)
    benchmark.extra_info["walk_steps"] = answer["stats"]["walk_steps"]
    assert (answer["status"], answer["revenue"]) == ("optimal", sum(t["income"] for t in answer["plan"]))
