"""18Ireland: solve time of every corpus position against the 18xx.games auto-router.

Each position is one benchmark (default solver, graph compilation included,
loading excluded); ``extra_info`` carries the auto-router's time for that
position (``reference.autorouter.seconds``, Ruby, same kind of machine). The
corpus benchmark solves them all per round and reports the median and worst
per-position time beside the auto-router's.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import pytest
from paths import CORPUS

from routecalc.api import solve
from routecalc.model import load_position
from routecalc.solvers import DEFAULT_SOLVER

IRELAND = CORPUS / "18Ireland"
FILES = sorted(IRELAND.glob("*.json"))


def load(path: Path):
    data = json.loads(path.read_text())
    return load_position(data), data["reference"]


def floor(reference: dict) -> int:
    """The revenue an optimiser must reach: the players' run and the auto-router's."""
    return max(reference["recorded"]["total"] or 0, reference["autorouter"]["total"] or 0)


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_bench_solve_18ireland(benchmark, path):
    position, reference = load(path)
    benchmark.group = "18Ireland solve"
    benchmark.extra_info.update(solver=DEFAULT_SOLVER, autorouter_seconds=reference["autorouter"]["seconds"])
    answer = benchmark.pedantic(solve, args=(position,), rounds=5, warmup_rounds=1, iterations=1)
    assert answer["revenue"] >= floor(reference)


def test_bench_18ireland_corpus(benchmark, request):
    loaded = {path.stem: load(path) for path in FILES}
    times: dict[str, list[float]] = {stem: [] for stem in loaded}
    revenues: dict[str, int] = {}

    def solve_all() -> None:
        for stem, (position, _) in loaded.items():
            started = time.perf_counter()
            revenues[stem] = solve(position)["revenue"]
            times[stem].append(time.perf_counter() - started)

    benchmark.group = "18Ireland corpus"
    benchmark.pedantic(solve_all, rounds=3, warmup_rounds=1, iterations=1)
    ours = {stem: min(ts) for stem, ts in times.items()}
    auto = {stem: reference["autorouter"]["seconds"] for stem, (_, reference) in loaded.items()}
    worst = max(ours, key=ours.get)
    summary = {
        "solver": DEFAULT_SOLVER,
        "positions": len(ours),
        "median_s": round(statistics.median(ours.values()), 4),
        "worst_s": round(ours[worst], 4),
        "worst_position": worst,
        "autorouter_median_s": round(statistics.median(auto.values()), 4),
        "autorouter_worst_s": round(max(auto.values()), 4),
        "median_speedup": round(statistics.median(auto[s] / ours[s] for s in ours), 1),
        "faster_than_autorouter": sum(ours[s] < auto[s] for s in ours),
    }
    benchmark.extra_info.update(summary)
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
            reporter.write("\n")
            reporter.write_line("18Ireland corpus: " + ", ".join(f"{k} {v}" for k, v in summary.items()))
    assert all(revenues[stem] >= floor(reference) for stem, (_, reference) in loaded.items())
