"""18XS turn plans: the search over memoised turn states against the plain
reference search, on the same boards in the same run (each benchmark group
pairs the two for one board and number of actions).

Boards (fixtures written by ``make_xs_fixtures.py``): issue 17's 3 x 3 board
with three LCs, its 5 x 5 trail mesh, and three boards the size of the seed's
map (8 x 8) with LCs, ports and white cubes. The reference runs under a time
limit of ``REFERENCE_LIMIT`` seconds, where it would run for minutes; it then
answers ``feasible``. ``extra_info`` records the revenue, the status and the
CPU seconds of the solve.

    .venv/bin/pytest benchmarks/test_bench_xs.py --benchmark-only
    .venv/bin/python benchmarks/test_bench_xs.py [LIMIT [BOARD:ACTIONS ...]]  # the table, 2-8 actions
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from routecalc.games.xs import solve_xs
from routecalc.games.xs_plan import solve_plan
from routecalc.limits import Limits
from routecalc.model import load_position

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REFERENCE_LIMIT = 10.0
CASES = (
    [("xs-three-lcs", a) for a in (4, 5, 6, 7, 8)]
    + [("xs-mesh-5x5", a) for a in (2, 4, 6, 8)]
    + [(f"xs-seed-size-{i}", a) for i in (1, 2, 3) for a in (2, 4, 6, 8)]
)
#: The table's cases: every number of actions from 2 to 8 on the seed-size boards.
TABLE_CASES = (
    [("xs-three-lcs", a) for a in (4, 5, 6, 7, 8)]
    + [("xs-mesh-5x5", a) for a in (2, 4, 6, 8)]
    + [(f"xs-seed-size-{i}", a) for i in (1, 2, 3) for a in range(2, 9)]
)
SEARCHES = {
    "new": lambda position: solve_plan(position, Limits()),
    "reference": lambda position: solve_xs(position, Limits(REFERENCE_LIMIT)),
}


def board(name: str, actions: int):
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    data["options"]["actions"] = actions
    return load_position(data)


def timed(search: str, position) -> tuple[dict, float]:
    started = time.process_time()
    answer = SEARCHES[search](position)
    return answer, time.process_time() - started


@pytest.mark.parametrize("search", ["new", "reference"])
@pytest.mark.parametrize("name, actions", CASES)
def test_bench_xs_plan(benchmark, name, actions, search):
    position = board(name, actions)
    benchmark.group = f"18XS {name}, {actions} actions"
    rounds = 3 if search == "new" else 1
    answer, cpu = benchmark.pedantic(timed, args=(search, position), rounds=rounds, iterations=1)
    benchmark.extra_info.update(revenue=answer["revenue"], status=answer["status"], cpu_seconds=round(cpu, 4))
    if search == "new":
        assert answer["status"] == "optimal"
        reference = solve_xs(position, Limits(REFERENCE_LIMIT))
        if reference["status"] == "optimal":
            assert answer["revenue"] == reference["revenue"]
        assert answer["revenue"] >= reference["revenue"]


def table(cases=TABLE_CASES) -> None:
    """Both searches on every case, one after the other: wall and CPU seconds, ratio reference / new."""
    print("| actions | board | reference s (CPU s) | new s (CPU s) | ratio | revenue: reference / new |")
    print("|---|---|---|---|---|---|")
    for name, actions in cases:
        position = board(name, actions)
        row = {}
        for search in ("reference", "new"):
            started = time.perf_counter()
            answer, cpu = timed(search, position)
            row[search] = (time.perf_counter() - started, cpu, answer)
        ref, new = row["reference"], row["new"]
        stopped = " (stopped)" if ref[2]["status"] != "optimal" else ""
        ratio = ref[1] / new[1] if new[1] else float("inf")
        print(
            f"| {actions} | {name} | {ref[0]:.3f} ({ref[1]:.3f}){stopped} | {new[0]:.3f} ({new[1]:.3f}) | "
            f"{'>' if stopped else ''}{ratio:.0f}x | {ref[2]['revenue']} / {new[2]['revenue']} |",
            flush=True,
        )


if __name__ == "__main__":
    # arguments: the reference's time limit in seconds, then BOARD:ACTIONS cases (default: all)
    if len(sys.argv) > 1:
        REFERENCE_LIMIT = float(sys.argv[1])
    table([(n, int(a)) for n, a in (arg.split(":") for arg in sys.argv[2:])] or TABLE_CASES)
