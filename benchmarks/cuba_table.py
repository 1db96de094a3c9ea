"""The 18Cuba whole-board table: per position of ``fixtures/cuba-board``,
the routes the kernels listed and the time (wall and CPU seconds) of the
kernels' answer against the reference search (``routecalc.games.cuba``) in
the same run; the reference runs under a time limit and its status says
whether it finished.

Run ``python benchmarks/cuba_table.py [reference seconds]`` from the
repository root (after one solve, so the kernels are warm); the pytest
benchmarks are in ``test_bench_cuba.py``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from paths import ROOT

from routecalc.api import solve
from routecalc.games.cuba import solve_cuba
from routecalc.limits import Limits
from routecalc.model import load_position

BOARD = ROOT / "fixtures" / "cuba-board"


def timed(call, *args, **kw):
    wall, cpu = time.perf_counter(), time.process_time()
    out = call(*args, **kw)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def table(reference_limit: float) -> list[dict]:
    solve(load_position(json.loads((BOARD / "major-01-fee0.json").read_text())))  # warm kernels
    rows = []
    for path in sorted(BOARD.glob("*.json")):
        position = load_position(json.loads(path.read_text()))
        new, wall, cpu = min((timed(solve, position) for _ in range(3)), key=lambda r: r[1])
        old, old_wall, old_cpu = timed(solve_cuba, position, Limits(time_limit=reference_limit))
        rows.append(
            {
                "position": path.stem,
                "routes": new["stats"].get("routes_kept", 0),
                "path": new["solver"],
                "revenue": new["revenue"],
                "status": new["status"],
                "ms": 1000 * wall,
                "cpu_ms": 1000 * cpu,
                "ref_revenue": old["revenue"],
                "ref_status": old["status"],
                "ref_s": old_wall,
                "ref_cpu_s": old_cpu,
            }
        )
    return rows


def main() -> None:
    limit = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    rows = table(limit)
    print("| position | routes listed | path | revenue | new ms (CPU ms) | reference s (CPU s) | reference |")
    print("|---|---:|---|---:|---:|---:|---|")
    for r in rows:
        print(
            f"| {r['position']} | {r['routes']:,} | {r['path']} | {r['revenue']} ({r['status']}) | "
            f"{r['ms']:.1f} ({r['cpu_ms']:.1f}) | {r['ref_s']:.2f} ({r['ref_cpu_s']:.2f}) | "
            f"{r['ref_revenue']} ({r['ref_status']}) |"
        )
    times = [r["ms"] for r in rows]
    print(
        f"\nnew: median {statistics.median(times):.1f} ms, max {max(times):.1f} ms; "
        f"all optimal: {all(r['status'] == 'optimal' for r in rows)}; "
        f"equal where the reference finished: "
        f"{all(r['revenue'] == r['ref_revenue'] for r in rows if r['ref_status'] == 'optimal')}"
    )


if __name__ == "__main__":
    main()
