"""Print the fast solver's benchmark table over the bundled corpus.

For each position: routes enumerated, the fast solver's time (best of
``--rounds`` solves, graph compilation included, loading excluded), the
peer's time on this kind of machine and the ratio peer / fast. The peer is
navig18xx for its three 1867 final-round files (``reference.earlier_run``,
the faster of the two navig18xx timings the corpus README describes) and
the 18xx.games auto-router for the recorded games
(``reference.autorouter.seconds``). Every answer is checked against the
oracle before it is timed.

    .venv/bin/python benchmarks/fast_table.py            # summary, navig files, slowest positions
    .venv/bin/python benchmarks/fast_table.py --all      # every position
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from paths import CORPUS

from routecalc.graph import compile_position
from routecalc.model import load_position
from routecalc.solvers.fast import solve_fast, warm_up


def peer(reference: dict) -> tuple[str, float | None]:
    if "earlier_run" in reference:
        return "navig18xx", reference["earlier_run"]["total_s"]
    if "autorouter" in reference:
        return "autorouter", reference["autorouter"]["seconds"]
    return "-", None


def measure(path: Path, rounds: int) -> dict | None:
    data = json.loads(path.read_text())
    position = load_position(data)
    if not position.rules.route_engine:
        return None
    reference = data["reference"]
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        answer = solve_fast(position, compile_position(position))
        times.append(time.perf_counter() - started)
    if reference["oracle"]["exact"] and answer["revenue"] != reference["oracle"]["total"]:
        raise SystemExit(f"{path}: fast {answer['revenue']} != oracle {reference['oracle']['total']}")
    name, seconds = peer(reference)
    return {
        "position": f"{path.parent.name}/{path.stem}",
        "revenue": answer["revenue"],
        "routes": answer["stats"]["routes_enumerated"],
        "fast_s": min(times),
        "peer": name,
        "peer_s": seconds,
        "ratio": seconds / min(times) if seconds else None,
    }


def row(r: dict) -> str:
    peer_s = f"{r['peer_s']:9.3f}" if r["peer_s"] is not None else f"{'-':>9}"
    ratio = f"{r['ratio']:9.0f}x" if r["ratio"] is not None else f"{'-':>10}"
    return (
        f"{r['position']:40} {r['revenue']:6} {r['routes']:9} {1000 * r['fast_s']:10.2f} "
        f"{r['peer']:>10} {peer_s} {ratio}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="one line per position")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--slowest", type=int, default=10)
    args = parser.parse_args()
    warm_up()
    results = [r for p in sorted(CORPUS.glob("*/**/*.json")) if (r := measure(p, args.rounds))]
    header = f"{'position':40} {'rev':>6} {'routes':>9} {'fast ms':>10} {'peer':>10} {'peer s':>9} {'ratio':>10}"
    print(header)
    print("-" * len(header))
    navig = [r for r in results if r["peer"] == "navig18xx"]
    shown = (
        results
        if args.all
        else navig + sorted((r for r in results if r not in navig), key=lambda r: -r["fast_s"])[: args.slowest]
    )
    for r in shown:
        print(row(r))
    print()
    groups: dict[str, list[dict]] = {}
    for r in results:
        groups.setdefault(r["position"].split("/")[0], []).append(r)
    groups["all"] = results
    for name, rs in groups.items():
        ts = [r["fast_s"] for r in rs]
        ratios = [r["ratio"] for r in rs if r["ratio"] is not None]
        print(
            f"{name:14} {len(rs):4} positions: median {1000 * statistics.median(ts):7.2f} ms, "
            f"worst {1000 * max(ts):8.2f} ms, over 10 ms {sum(t > 0.01 for t in ts):3}, "
            f"over 2 s {sum(t > 2 for t in ts)}, median peer/fast {statistics.median(ratios):8.0f}x"
        )


if __name__ == "__main__":
    main()
