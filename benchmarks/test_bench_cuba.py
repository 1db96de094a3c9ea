"""18Cuba on the whole board (``fixtures/cuba-board``, written by
``make_cuba_fixtures.py``): the kernels' answer (branch and bound or
CP-SAT) against the reference search in the same run, each position's
group pairing the two. The reference runs under a time limit (it does not
finish the dense three-train positions); ``extra_info`` records the routes
listed, the path that answered and the CPU seconds. ``cuba_table.py``
prints the same as a table."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from routecalc.api import solve
from routecalc.games.cuba import solve_cuba
from routecalc.limits import Limits
from routecalc.model import load_position

BOARD = Path(__file__).resolve().parents[1] / "fixtures" / "cuba-board"
NAMES = sorted(p.stem for p in BOARD.glob("*.json"))
REFERENCE_SECONDS = 10.0


@pytest.mark.parametrize("name", NAMES)
def test_bench_cuba_board(benchmark, name):
    position = load_position(json.loads((BOARD / f"{name}.json").read_text()))
    benchmark.group = f"18Cuba board {name}"
    cpu = time.process_time()
    answer = benchmark.pedantic(solve, args=(position,), rounds=5, warmup_rounds=1, iterations=1)
    benchmark.extra_info.update(
        routes=answer["stats"].get("routes_kept", 0),
        path=answer["solver"],
        cpu_seconds_per_round=round((time.process_time() - cpu) / 6, 4),
    )
    assert answer["status"] == "optimal"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_bench_cuba_board_reference(benchmark, name):
    position = load_position(json.loads((BOARD / f"{name}.json").read_text()))
    benchmark.group = f"18Cuba board {name}"
    cpu = time.process_time()
    old = benchmark.pedantic(solve_cuba, args=(position, Limits(time_limit=REFERENCE_SECONDS)), rounds=1, iterations=1)
    benchmark.extra_info.update(status=old["status"], cpu_seconds=round(time.process_time() - cpu, 4))
    if old["status"] == "optimal":
        assert solve(position)["revenue"] == old["revenue"]
