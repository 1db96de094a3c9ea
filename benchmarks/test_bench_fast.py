"""Fast solver speed on the corpus (pytest-benchmark).

- ``test_bench_navig18xx``: the three 1867 final-round companies that
  navig18xx publishes as its benchmark (navig18xx: 7.1 s, 149 s, 424 s on
  this kind of machine; targets: each under 1 s, GW under 0.1 s).
- ``test_bench_generic_corpus``: every generic corpus position solved once
  per round; ``extra_info`` and the terminal carry the median and worst
  per-position time (targets: median under 10 ms, none over 2 s) and the
  median speed-up on the 18xx.games auto-router.

Times include compiling the position's track graph, not loading the JSON.
``benchmarks/fast_table.py`` prints the per-position table.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import pytest
from paths import CORPUS

from routecalc.graph import compile_position
from routecalc.model import load_position
from routecalc.solvers.fast import solve_fast, warm_up

GENERIC = CORPUS / "generic"
NAVIG = ["GW", "CO", "CNR"]
GENERIC_FILES = sorted(GENERIC.glob("*/*.json"))


def load(path: Path):
    data = json.loads(path.read_text())
    return load_position(data), data["reference"]


def solve(position):
    return solve_fast(position, compile_position(position))


def report(request, line: str) -> None:
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
            reporter.write("\n")
            reporter.write_line(line)


@pytest.mark.parametrize("company", NAVIG)
def test_bench_navig18xx(benchmark, company):
    warm_up()
    position, reference = load(GENERIC / "1867" / f"navig18xx_1867_bc_{company}.json")
    benchmark.group = "navig18xx 1867 final round"
    answer = benchmark.pedantic(solve, args=(position,), rounds=5, warmup_rounds=1, iterations=1)
    assert answer["revenue"] == reference["oracle"]["total"] and answer["status"] == "optimal"
    benchmark.extra_info.update(
        routes_enumerated=answer["stats"]["routes_enumerated"],
        navig18xx_seconds=reference["earlier_run"]["total_s"],
        revenue=answer["revenue"],
        navig18xx_revenue=reference["best"]["revenue"],
    )


def test_bench_generic_corpus(benchmark, request):
    warm_up()
    loaded = {f"{p.parent.name}/{p.stem}": load(p) for p in GENERIC_FILES}
    times: dict[str, list[float]] = {name: [] for name in loaded}
    revenues: dict[str, int] = {}

    def solve_all() -> None:
        for name, (position, _) in loaded.items():
            started = time.perf_counter()
            revenues[name] = solve(position)["revenue"]
            times[name].append(time.perf_counter() - started)

    benchmark.group = "generic corpus"
    benchmark.pedantic(solve_all, rounds=3, warmup_rounds=1, iterations=1)
    ours = {name: min(ts) for name, ts in times.items()}
    auto = {name: ref["autorouter"]["seconds"] for name, (_, ref) in loaded.items() if "autorouter" in ref}
    worst = max(ours, key=ours.get)
    summary = {
        "positions": len(ours),
        "median_ms": round(1000 * statistics.median(ours.values()), 2),
        "worst_ms": round(1000 * ours[worst], 2),
        "worst_position": worst,
        "over_10ms": sum(t > 0.01 for t in ours.values()),
        "over_2s": sum(t > 2 for t in ours.values()),
        "median_autorouter_over_fast": round(statistics.median(auto[n] / ours[n] for n in auto), 1),
    }
    benchmark.extra_info.update(summary)
    report(request, "generic corpus, fast solver: " + ", ".join(f"{k} {v}" for k, v in summary.items()))
    assert all(revenues[name] == ref["oracle"]["total"] for name, (_, ref) in loaded.items())
