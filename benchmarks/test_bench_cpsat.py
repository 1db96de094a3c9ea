"""CP-SAT and the automatic choice: corpus times and the stress positions.

- ``test_bench_cpsat_corpus``: CP-SAT on every corpus position (generic and
  18Ireland), and what auto chose there; the table (slowest positions,
  per-group medians) goes to the terminal, the figures to ``extra_info``.
- ``test_bench_auto_on_stress``: auto on each ``fixtures/stress-*.json``
  (built by ``make_stress_fixtures.py``, where enumeration explodes);
  target under 10 s with ``status: optimal``, the optimum checked against
  CP-SAT run alone.
- ``test_bench_fast_alone_on_stress``: what the fast solver does on them by
  itself within 30 s (its time, status, routes enumerated).

Run as a script for the whole per-position table::

    .venv/bin/python benchmarks/test_bench_cpsat.py
"""

from __future__ import annotations

import json
import statistics
import time
from functools import cache
from pathlib import Path

import pytest
from paths import CORPUS, ROOT

from routecalc.graph import compile_position
from routecalc.model import load_position
from routecalc.solvers import warm_up
from routecalc.solvers.auto import solve_auto
from routecalc.solvers.cpsat import solve_cpsat
from routecalc.solvers.fast import solve_fast
from routecalc.validate import RouteSetValidator

STRESS = sorted((ROOT / "fixtures").glob("stress-*.json"))
FAST_ALONE_SECONDS = 30.0


def corpus_positions():
    for path in sorted(CORPUS.glob("*/**/*.json")):
        data = json.loads(path.read_text())
        position = load_position(data)
        if position.rules.route_engine:
            yield f"{path.parent.name}/{path.stem}", position, data["reference"]["oracle"]


def timed(solver, position) -> tuple[dict, float]:
    started = time.perf_counter()
    answer = solver(position, compile_position(position))
    return answer, time.perf_counter() - started


def corpus_table() -> list[dict]:
    """One row per corpus position: CP-SAT's time, auto's choice and time."""
    warm_up()
    rows = []
    for name, position, oracle in corpus_positions():
        cp, cp_s = timed(solve_cpsat, position)
        auto, auto_s = timed(solve_auto, position)
        for answer in (cp, auto):
            if answer["status"] != "optimal" or (oracle["exact"] and answer["revenue"] != oracle["total"]):
                raise AssertionError(
                    f"{name}: {answer['solver']} {answer['revenue']} {answer['status']}, oracle {oracle}"
                )
        rows.append(
            {"position": name, "revenue": cp["revenue"], "cpsat_s": cp_s, "auto": auto["solver"], "auto_s": auto_s}
        )
    return rows


def format_table(rows: list[dict], slowest: int | None = None) -> list[str]:
    head = f"{'position':42} {'revenue':>7} {'cpsat ms':>9} {'auto ran':>8} {'auto ms':>8}"
    shown = rows if slowest is None else sorted(rows, key=lambda r: -r["cpsat_s"])[:slowest]
    lines = [head, "-" * len(head)]
    lines += [
        f"{r['position']:42} {r['revenue']:7} {1000 * r['cpsat_s']:9.1f} {r['auto']:>8} {1000 * r['auto_s']:8.1f}"
        for r in shown
    ]
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["position"].split("/")[0], []).append(r)
    groups["all"] = rows
    lines.append("")
    for name, rs in groups.items():
        cp = [r["cpsat_s"] for r in rs]
        choices = {s: sum(r["auto"] == s for r in rs) for s in sorted({r["auto"] for r in rs})}
        lines.append(
            f"{name:14} {len(rs):4} positions: cpsat median {1000 * statistics.median(cp):6.1f} ms, "
            f"worst {1000 * max(cp):7.1f} ms; auto median "
            f"{1000 * statistics.median(r['auto_s'] for r in rs):6.1f}"
            f" ms, ran {choices}"
        )
    return lines


def report(request, lines: list[str]) -> None:
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
            reporter.write("\n")
            for line in lines:
                reporter.write_line(line)


def test_bench_cpsat_corpus(benchmark, request):
    rows: list[dict] = []
    benchmark.group = "cpsat corpus"
    benchmark.pedantic(lambda: rows.extend(corpus_table()), rounds=1, iterations=1)
    cp = [r["cpsat_s"] for r in rows]
    benchmark.extra_info.update(
        positions=len(rows),
        cpsat_median_s=statistics.median(cp),
        cpsat_worst_s=max(cp),
        auto_ran={s: sum(r["auto"] == s for r in rows) for s in {r["auto"] for r in rows}},
    )
    report(request, format_table(rows, slowest=12))


@cache
def stress(path: Path):
    position = load_position(json.loads(path.read_text()))
    alone = solve_cpsat(position)
    assert alone["status"] == "optimal"
    return position, alone


@pytest.mark.parametrize("path", STRESS, ids=lambda p: p.stem)
def test_bench_auto_on_stress(benchmark, request, path):
    warm_up()
    position, alone = stress(path)
    benchmark.group = "stress: auto"
    answer = benchmark.pedantic(solve_auto, args=(position, compile_position(position)), rounds=3, iterations=1)
    assert (answer["status"], answer["revenue"]) == ("optimal", alone["revenue"])
    assert RouteSetValidator(position).validate(answer["routes"])["revenue"] == answer["revenue"]
    benchmark.extra_info.update(
        revenue=answer["revenue"],
        solver=answer["solver"],
        why=answer["stats"]["auto"]["why"],
        under_10_s=benchmark.stats.stats.max < 10,
    )
    report(
        request,
        [
            f"{path.stem}: auto {answer['revenue']} {answer['status']} by {answer['solver']} in "
            f"{benchmark.stats.stats.min:.2f}-{benchmark.stats.stats.max:.2f} s "
            f"(CP-SAT alone {alone['stats']['seconds']:.2f} s); {answer['stats']['auto']['why']}"
        ],
    )


@pytest.mark.parametrize("path", STRESS, ids=lambda p: p.stem)
def test_bench_fast_alone_on_stress(benchmark, request, path):
    warm_up()
    position, alone = stress(path)
    benchmark.group = "stress: fast solver alone"
    answer = benchmark.pedantic(
        solve_fast,
        args=(position, compile_position(position)),
        kwargs={"time_limit": FAST_ALONE_SECONDS},
        rounds=1,
        iterations=1,
    )
    assert answer["revenue"] <= alone["revenue"] <= answer["bound"]
    stats = answer["stats"]
    benchmark.extra_info.update(
        status=answer["status"],
        revenue=answer["revenue"],
        bound=answer["bound"],
        routes_enumerated=stats["routes_enumerated"],
    )
    report(
        request,
        [
            f"{path.stem}: fast alone {answer['status']} {answer['revenue']} (bound {answer['bound']}, "
            f"optimum {alone['revenue']}) after {stats['routes_enumerated']:,} routes in "
            f"{benchmark.stats.stats.min:.1f} s (limit {FAST_ALONE_SECONDS:g} s)"
        ],
    )


if __name__ == "__main__":
    print("\n".join(format_table(corpus_table())))
