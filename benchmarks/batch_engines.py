"""``routecalc batch`` on the 500 corpus positions: the in-process loop,
local processes and the embedded local Ray, in the same run.

Each run is a fresh process doing what ``routecalc batch --engine E`` does
(reading the corpus, starting the engine, loading the kernels, solving,
writing the lines, stopping the engine), so every engine pays its own
start-up. The engines take turns round by round (the order rotated each
round), since the machine is shared and its load drifts; the ratios are to
the in-process loop of the same round. Per run:

- wall: from starting the process to its end (interpreter, imports, engine
  start and stop included), and the batch's own wall inside it;
- CPU: user + system seconds of the process and of everything it started,
  Ray's own processes included (this script is their subreaper, so every
  descendant is reaped here and counted), and of the solves alone;
- Ray: seconds until ``ray.init`` returned, until every actor had its
  kernels loaded, to stop it, and the positions the calling process solved
  meanwhile (the driver solves from the same queue while Ray starts);
  ``ray-alone`` is the same Ray with the calling process not solving (two
  actors, Ray's start-up paid in full: its overhead on its own);
- every line checked: 500 answers, all optimal, each equal to the corpus's
  certified optimum (the script fails otherwise);
- the load average before each run.

``--two-node`` then runs the batch against a real two-node Ray cluster on
loopback (``tests/loopback_cluster.py``, one CPU per node; started before
and stopped after its rounds, its start not counted: ``--address`` joins an
existing cluster).

    .venv/bin/python benchmarks/batch_engines.py [--rounds 3] [--two-node] [--json figures.json]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from paths import CORPUS, ROOT

ENGINES = ("inline", "processes", "ray", "ray-alone")
LABELS = {
    "inline": "in-process loop",
    "processes": "local processes",
    "ray": "local Ray",
    "ray-alone": "local Ray, its actors alone (the calling process not solving)",
    "two-node": "two-node Ray (loopback)",
}
PR_SET_CHILD_SUBREAPER = 36
REAP_SECONDS = 30.0  # how long a killed Ray's last processes may take to end before the run is reported


def run_one(engine: str, output: Path, address: str | None) -> None:
    """The child: one batch over the corpus, its figures as JSON on standard output."""
    from routecalc.batch import Settings, jobs_for, read_inputs, run_batch

    run = run_batch(
        jobs_for(read_inputs([CORPUS]), ["auto"]),
        output,
        Settings(time_limit=30.0),
        engine="ray" if address or engine == "ray-alone" else engine,
        address=address,
        driver_helps=False if engine == "ray-alone" else None,
    )
    print(
        json.dumps(
            {
                "written": run.written,
                "wall": run.wall_seconds,
                "first": run.start_seconds,
                "figures": asdict(run.engine),
                "nodes": run.nodes,
            }
        )
    )


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reap_all() -> int:
    """Wait for every descendant this subreaper inherited; the count still running after REAP_SECONDS."""
    deadline = time.monotonic() + REAP_SECONDS
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == 0:
            if time.monotonic() > deadline:
                return sum(1 for _ in _children())
            time.sleep(0.05)


def _children():
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1] == me:
                    yield int(entry)
            except OSError:
                continue


def check(output: Path) -> dict:
    """The lines of a run: 500, optimal, each equal to the certified optimum."""
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    files = sorted(str(p) for p in CORPUS.rglob("*.json"))
    assert sorted(line["file"] for line in lines) == files, f"{output}: {len(lines)} lines for {len(files)} positions"
    wrong = [
        line["file"]
        for line in lines
        if "error" in line
        or line["answer"]["status"] != "optimal"
        or line["answer"]["revenue"] != line["reference"]["optimum"]
    ]
    assert not wrong, f"{output}: {len(wrong)} answers not the certified optimum, first {wrong[0]}"
    return {
        "solve_cpu": sum(line["cpu_seconds"] for line in lines),
        "pids": len({(line["node"], line["pid"]) for line in lines}),
    }


def measure(engine: str, folder: Path, number: int, address: str | None = None, env: dict | None = None) -> dict:
    output = folder / f"{engine}-{number}.jsonl"
    load = os.getloadavg()[0]
    cpu = children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--one",
            engine,
            "--output",
            str(output),
            *(["--address", address] if address else []),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=ROOT,
    )
    wall = time.perf_counter() - started
    left = reap_all()
    if done.returncode != 0:
        raise SystemExit(f"{engine} failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "engine": engine,
        "round": number,
        "load": load,
        "process_wall": wall,
        "cpu": children_cpu() - cpu,
        "left_running": left,
        **figures,
        **check(output),
    }


def median(values) -> float:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def baseline(run: dict, inline: dict[int, dict]) -> float:
    """The in-process loop's wall to compare a run with: the same round's; for
    the two-node runs, which come after every round, the median of them all."""
    if run["engine"] == "two-node":
        return median(r["process_wall"] for r in inline.values())
    return inline[run["round"]]["process_wall"]


def table(runs: list[dict], count: int) -> str:
    inline = {run["round"]: run for run in runs if run["engine"] == "inline"}
    rows = [
        "| engine | runs | wall s (process) | ms per position | ratio to the in-process loop (same round) "
        "| batch wall s | CPU s (all processes) | CPU s (solves) | Ray init / ready / stop s "
        "| solved by the calling process | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for engine in dict.fromkeys(run["engine"] for run in runs):
        mine = [run for run in runs if run["engine"] == engine]
        walls = [run["process_wall"] for run in mine]
        ratios = [run["process_wall"] / baseline(run, inline) for run in mine]
        ray = [run["figures"] for run in mine if run["figures"]["engine"] == "ray"]
        ray_text = (
            " / ".join(
                f"{median(r[key] for r in ray):.2f}" if any(r[key] is not None for r in ray) else "-"
                for key in ("init_seconds", "ready_seconds", "stop_seconds")
            )
            if ray
            else ""
        )
        helped = f"{median(r['driver_jobs'] for r in ray):.0f} of {count}" if ray else ""
        rows.append(
            f"| {LABELS[engine]} | {len(mine)} | {median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) "
            f"| {median(walls) / count * 1000:.1f} "
            + (f"| {median(ratios):.2f} ({', '.join(f'{r:.2f}' for r in ratios)}) " if engine != "inline" else "| 1 ")
            + f"| {median(run['wall'] for run in mine):.2f} | {median(run['cpu'] for run in mine):.2f} "
            f"| {median(run['solve_cpu'] for run in mine):.2f} | {ray_text} | {helped} "
            f"| {min(run['load'] for run in mine):.1f}-{max(run['load'] for run in mine):.1f} |"
        )
    notes = [
        "",
        "Wall: from starting the process to its end. Ratios: to the in-process loop of the same round "
        "(two-node: to the median in-process loop; its rounds come after the others, the cluster running). "
        "CPU: the process and every descendant (Ray's processes too); for two-node the cluster's nodes "
        "are not descendants and not counted. Ray init / ready / stop: medians of the runs where Ray got "
        "that far (- none did: the calling process had solved everything first and Ray's start was abandoned).",
    ]
    return "\n".join(rows + notes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--two-node", action="store_true", help="also against a two-node loopback Ray cluster")
    parser.add_argument("--json", type=Path, help="every run's figures")
    parser.add_argument("--one", choices=[*ENGINES, "two-node"], help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_one(args.one, args.output, args.address)
        return 0

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    count = len(list(CORPUS.rglob("*.json")))
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="rc-engines-") as scratch:
        folder = Path(scratch)
        for number in range(args.rounds):
            order = ENGINES[number % len(ENGINES) :] + ENGINES[: number % len(ENGINES)]
            for engine in order:
                runs.append(measure(engine, folder, number))
                print(
                    f"round {number + 1} {engine}: {runs[-1]['process_wall']:.2f} s wall, "
                    f"{runs[-1]['cpu']:.2f} s CPU, load {runs[-1]['load']:.1f}",
                    file=sys.stderr,
                )
        if args.two_node:
            sys.path.insert(0, str(ROOT / "tests"))
            from loopback_cluster import loopback_cluster

            with loopback_cluster() as (address, env):
                for number in range(args.rounds):
                    runs.append(measure("two-node", folder, number, address, env))
                    print(f"two-node {number + 1}: {runs[-1]['process_wall']:.2f} s wall", file=sys.stderr)
    print(
        f"{count} corpus positions, solver auto; {args.rounds} rounds, engines in turn; "
        f"{os.cpu_count()} CPUs; load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n"
    )
    print(table(runs, count))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
