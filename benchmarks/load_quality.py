"""Answer quality under machine load: the stress set, idle and loaded.

Solves every ``fixtures/stress-*.json`` in process with auto (the default
solver) and a time limit (10 s, the page's default), first on the machine
as it is, then with two CPU-bound busy processes per core running beside
it. Prints one table, idle and loaded side by side: revenue, status, bound,
wall seconds and CPU seconds of the solving process (CP-SAT's threads
included), and the recorded optimum (``reference.optimum``, proved by two
solvers when the fixture was made). Auto decides on counts of work, so the
loaded run takes the same path and gives the same answer, only later.

    .venv/bin/python benchmarks/load_quality.py [--limit 10] [--busy-per-core 2] [--json out.json]

Above the table, the CPU seconds of two fixed workloads run idle first
(:func:`machine_speed`): the machine is shared and its speed moves from day
to day, so these say how fast it was when the table was made.

Exit status 1 when a loaded answer is not the recorded optimum.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
from paths import ROOT

from routecalc import load_position_file
from routecalc.graph import compile_position
from routecalc.solvers import SOLVERS, Limits, warm_up

STRESS = sorted((ROOT / "fixtures").glob("stress-*.json"))


def cpu_seconds() -> float:
    """CPU time of this process, all threads, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def machine_speed() -> dict[str, float]:
    """CPU seconds of two fixed workloads, so tables from different days
    (the machine is shared, its speed moves) can be compared: CP-SAT's
    deterministic time 0.5 on a fixed model (one worker, as the engine runs
    it; the search stops at that work, not at a time), and a fixed Python
    loop."""
    from ortools.sat.python import cp_model

    rng = np.random.default_rng(12)
    weights, values = rng.integers(10, 100, (6, 120)), rng.integers(10, 100, 120)
    model = cp_model.CpModel()
    take = [model.new_bool_var(f"x{i}") for i in range(len(values))]
    for row in weights:
        model.add(sum(int(w) * x for w, x in zip(row, take)) <= int(row.sum() // 3))
    model.maximize(sum(int(v) * x for v, x in zip(values, take)))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_deterministic_time = 0.5
    started = cpu_seconds()
    solver.solve(model)
    cpsat = cpu_seconds() - started
    started, x = cpu_seconds(), 0
    for _ in range(5_000_000):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return {"cpsat_work_cpu_s": round(cpsat, 2), "python_loop_cpu_s": round(cpu_seconds() - started, 2)}


def busy() -> None:
    """Keep one core busy until terminated."""
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF


def solve(path: Path, limit: float, solver: str) -> dict:
    position = load_position_file(path)
    started_cpu, started = cpu_seconds(), time.perf_counter()
    answer = SOLVERS[solver](position, compile_position(position), Limits(time_limit=limit))
    wall, cpu = time.perf_counter() - started, cpu_seconds() - started_cpu
    return {
        "revenue": answer["revenue"],
        "status": answer["status"],
        "bound": answer["bound"],
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "solver": answer["solver"],
        "path": answer["stats"].get("auto", {}).get("solver", answer["solver"]),
    }


def run_set(paths: list[Path], limit: float, solver: str) -> dict[str, dict]:
    return {path.stem: solve(path, limit, solver) for path in paths}


def loaded(paths: list[Path], limit: float, solver: str, per_core: int) -> tuple[dict[str, dict], float]:
    """The set solved beside ``per_core`` busy processes per core; also the load average seen."""
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=busy, daemon=True) for _ in range(per_core * (os.cpu_count() or 1))]
    for w in workers:
        w.start()
    try:
        time.sleep(2.0)  # let the load build up
        results = run_set(paths, limit, solver)
        load = os.getloadavg()[0]
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.join(10)
    return results, load


def table(idle: dict[str, dict], busy_run: dict[str, dict], optima: dict[str, int | None]) -> list[str]:
    def cells(r: dict) -> str:
        return (
            f"{r['revenue']:>5} {r['status']:>8} {r['bound']:>6} {r['wall_s']:>6.2f} {r['cpu_s']:>6.2f} {r['path']:>7}"
        )

    side = f"{'rev':>5} {'status':>8} {'bound':>6} {'wall s':>6} {'CPU s':>6} {'path':>7}"
    head = f"{'fixture':24} {'optimum':>7} | idle: {side} | loaded: {side}"
    lines = [head, "-" * len(head)]
    for name, result in idle.items():
        optimum = optima.get(name)
        lines.append(
            f"{name:24} {optimum if optimum is not None else '-':>7} | {'':6}{cells(result)} | "
            f"{'':8}{cells(busy_run[name])}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=10.0, help="time limit per solve, seconds")
    parser.add_argument("--busy-per-core", type=int, default=2, help="busy processes per core in the loaded run")
    parser.add_argument("--solver", default="auto", choices=sorted(SOLVERS))
    parser.add_argument("--only", nargs="*", help="fixture names (stems) to run")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    paths = [p for p in STRESS if not args.only or p.stem in args.only]
    optima = {p.stem: json.loads(p.read_text())["reference"].get("optimum") for p in paths}
    warm_up(cpsat=True)  # as the service starts: no solve pays for importing CP-SAT (some 0.3 s of CPU)
    speed = machine_speed()
    idle = run_set(paths, args.limit, args.solver)
    busy_run, load = loaded(paths, args.limit, args.solver, args.busy_per_core)
    print(
        f"{args.solver}, {args.limit:g} s limit; loaded: {args.busy_per_core} busy processes per core "
        f"({os.cpu_count()} cores), load average {load:.1f}"
    )
    print(
        f"this machine, idle: CP-SAT's deterministic time 0.5 on a fixed model {speed['cpsat_work_cpu_s']:.2f} s "
        f"of CPU, a fixed Python loop {speed['python_loop_cpu_s']:.2f} s"
    )
    print("\n".join(table(idle, busy_run, optima)))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "limit": args.limit,
                    "load_average": load,
                    "machine_speed": speed,
                    "optima": optima,
                    "idle": idle,
                    "loaded": busy_run,
                },
                indent=2,
            )
        )
    wrong = [
        name
        for name, r in busy_run.items()
        if optima[name] is not None and (r["status"], r["revenue"]) != ("optimal", optima[name])
    ]
    if wrong:
        print("not the proven optimum under load:", ", ".join(wrong))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
