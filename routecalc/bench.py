"""Solvers against each other and against the corpus figures: ``routecalc bench``.

Every solver (and every ``--external`` command) runs on every position
through :mod:`routecalc.batch`, so a benchmark scales the way a batch does
and its raw figures are the batch's results file. The report is computed
from that file alone: a Markdown table per solver (solved, optimal, equal
to the certified optimum, below a reference figure, median / p90 / worst
seconds, total CPU seconds, total time as a ratio to the fastest solver) and
two plots (SVG and PNG): seconds per position per solver on a log scale, and
revenue against the reference.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .batch import Job, Settings, jobs_for, read_inputs, read_results

RESULTS = "results.jsonl"
REPORT = "report.md"
PLOTS = ("times", "revenue")


@dataclass
class SolverRow:
    """One solver's line of the table."""

    solver: str
    positions: int
    solved: int  # an answer, not an error
    optimal: int  # status optimal
    certified: int  # positions with a certified optimum
    equal_optimum: int
    below_reference: int  # revenue under a figure another tool or a player reached
    median: float
    p90: float
    worst: float
    total: float
    cpu: float
    ratio: float = 1.0  # total seconds over the fastest solver's

    def cells(self) -> list[str]:
        return [
            self.solver,
            str(self.positions),
            str(self.solved),
            str(self.optimal),
            f"{self.equal_optimum}/{self.certified}",
            str(self.below_reference),
            f"{self.median:.4f}",
            f"{self.p90:.4f}",
            f"{self.worst:.4f}",
            f"{self.total:.2f}",
            f"{self.cpu:.2f}",
            f"{self.ratio:.2f}",
        ]


HEADER = [
    "solver",
    "positions",
    "solved",
    "optimal",
    "= optimum",
    "below a reference",
    "median s",
    "p90 s",
    "worst s",
    "total s",
    "CPU s",
    "x best",
]


def revenue(record: dict) -> int | None:
    return record["answer"]["revenue"] if "answer" in record else None


def p90(values: Sequence[float]) -> float:
    """The 90th percentile (nearest rank) of the values."""
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * 9 // 10) - 1)]


def others_best(record: dict) -> int | None:
    """The best figure a player or another tool reached (not the oracle's optimum)."""
    return max((v for k, v in (record.get("reference") or {}).items() if k != "optimum"), default=None)


def below_others(record: dict) -> bool:
    got, best = revenue(record), others_best(record)
    return got is not None and best is not None and got < best


def row_of(solver: str, records: Sequence[dict]) -> SolverRow:
    seconds = [r["seconds"] for r in records]
    certified = [r for r in records if "optimum" in (r.get("reference") or {})]
    below = [r for r in records if below_others(r)]
    return SolverRow(
        solver=solver,
        positions=len(records),
        solved=sum("answer" in r for r in records),
        optimal=sum((r.get("answer") or {}).get("status") == "optimal" for r in records),
        certified=len(certified),
        equal_optimum=sum(revenue(r) == r["reference"]["optimum"] for r in certified),
        below_reference=len(below),
        median=statistics.median(seconds),
        p90=p90(seconds),
        worst=max(seconds),
        total=sum(seconds),
        cpu=sum(r.get("cpu_seconds", 0.0) for r in records),
    )


def table(results: Sequence[dict], solvers: Sequence[str]) -> list[SolverRow]:
    """The table's rows, in the order the solvers were given."""
    rows = [
        row_of(solver, [r for r in results if r["solver"] == solver])
        for solver in solvers
        if any(r["solver"] == solver for r in results)
    ]
    # the baseline answered every position: a tool that fails at once is not the fastest
    whole = [row for row in rows if row.solved == row.positions] or [row for row in rows if row.solved]
    best = min((row.total for row in whole), default=0.0)
    for row in rows:
        row.ratio = row.total / best if best > 0 else 1.0
    return rows


def markdown(rows: Sequence[SolverRow]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _misses(results: Sequence[dict]) -> list[str]:
    """The lines a reader must look at: errors, answers off the optimum or below a reference."""
    out = []
    for r in results:
        got, figures = revenue(r), r.get("reference") or {}
        if got is None:
            out.append(f"- {r['solver']} on {r['file']}: {r['error']['message']}")
        elif "optimum" in figures and got != figures["optimum"]:
            out.append(f"- {r['solver']} on {r['file']}: {got}, certified optimum {figures['optimum']}")
        elif below_others(r):
            out.append(f"- {r['solver']} on {r['file']}: {got}, below {figures}")
    return out


def plot(results: Sequence[dict], solvers: Sequence[str], folder: Path) -> list[Path]:
    """times.svg/png (seconds per position, log scale) and revenue.svg/png (against the reference)."""
    from matplotlib.figure import Figure

    by_solver = {s: {r["file"]: r for r in results if r["solver"] == s} for s in solvers}
    by_solver = {s: lines for s, lines in by_solver.items() if lines}
    first = next(iter(by_solver.values()), {})
    order = sorted(first, key=lambda file: first[file]["seconds"])  # positions by the first solver's time
    files = order + sorted({f for lines in by_solver.values() for f in lines} - set(order))

    times = Figure(figsize=(9, 5), layout="constrained")
    ax = times.subplots()
    for solver, lines in by_solver.items():
        xs = [i for i, f in enumerate(files) if f in lines]
        ax.plot(xs, [max(lines[files[i]]["seconds"], 1e-6) for i in xs], ".", markersize=3, label=solver)
    ax.set_yscale("log")
    ax.set_xlabel(f"position (ordered by {next(iter(by_solver), '')} time)")
    ax.set_ylabel("seconds (log scale)")
    ax.set_title("solve time per position")
    ax.legend()

    figure = Figure(figsize=(6, 6), layout="constrained")
    ax = figure.subplots()
    seen: list[int] = []
    for solver, lines in by_solver.items():
        pairs = [
            (want, got)
            for r in lines.values()
            if (want := _reference(r)) is not None and (got := revenue(r)) is not None
        ]
        if pairs:
            ax.plot(*zip(*pairs), "o", markersize=4, fillstyle="none", label=solver)
            seen += [v for pair in pairs for v in pair]
    if seen:
        ax.plot([min(seen), max(seen)], [min(seen), max(seen)], "-", color="grey", linewidth=0.8, label="equal")
    ax.set_xlabel("reference revenue (certified optimum, else the best other figure)")
    ax.set_ylabel("solver revenue")
    ax.set_title("revenue against the reference")
    ax.legend()

    written = []
    for name, fig in zip(PLOTS, (times, figure)):
        for suffix in ("svg", "png"):
            path = folder / f"{name}.{suffix}"
            fig.savefig(path, dpi=120)
            written.append(path)
    return written


def _reference(record: dict) -> int | None:
    figures = record.get("reference") or {}
    return figures.get("optimum", max(figures.values(), default=None))


def report(
    results_path: Path, folder: Path, solvers: Sequence[str], jobs: Sequence[Job] | None = None
) -> list[SolverRow]:
    """report.md and the plots, from the results file alone; with ``jobs``, from
    its lines for those jobs only (a resumed file may hold other runs' lines)."""
    results = read_results(results_path)
    if jobs is not None:
        asked = {(job.item.key, job.solver) for job in jobs}
        results = [r for r in results if (r["file"], r["solver"]) in asked]
    rows = table(results, solvers)
    misses = _misses(results)
    plot(results, solvers, folder)
    text = [
        "# routecalc bench",
        "",
        (
            f"{len({r['file'] for r in results})} positions, raw lines in `{results_path.name}`. Times are the "
            "seconds of each solve (wall, on the worker that ran it); CPU s adds up the workers' CPU time; "
            "x best is the total time over that of the fastest solver answering every position. "
            "'= optimum' counts answers equal to the "
            "certified optimum; 'below a reference' those under a figure a player or another tool reached."
        ),
        "",
        markdown(rows),
        "![seconds per position](times.svg)",
        "",
        "![revenue against the reference](revenue.svg)",
        "",
        f"## Errors and misses ({len(misses)})",
        "",
        *(misses or ["none"]),
        "",
    ]
    (folder / REPORT).write_text("\n".join(text))
    (folder / "table.json").write_text(json.dumps([row.__dict__ for row in rows], indent=1))
    return rows


def cli_bench(args) -> int:
    """``routecalc bench``: results, table and plots in the output folder; exit 0,
    2 when a position could not be solved (as ``batch``), 130 on Ctrl-C."""
    import sys

    from .batch import batch_command

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(
            json.dumps({"error": "bench: the plots need matplotlib: pip install 'routecalc[bench]'", "where": "bench"}),
            file=sys.stderr,
        )
        return 2
    solvers = list(dict.fromkeys(s.strip() for s in args.solvers.split(",") if s.strip()))
    folder = Path(args.output)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(json.dumps({"error": f"cannot make {folder}: {exc.strerror or exc}", "where": "output"}), file=sys.stderr)
        return 2

    chosen: list[Job] = []

    def jobs(settings: Settings) -> list[Job]:
        solvers.extend(name for name in settings.externals if name not in solvers)
        chosen.extend(jobs_for(read_inputs(args.inputs, folder), solvers))
        return chosen

    run = batch_command(args, jobs, folder / RESULTS)
    if isinstance(run, int):
        return run
    rows = report(folder / RESULTS, folder, solvers, chosen)
    print(
        f"{run.written} solves in {run.wall_seconds:.2f} s wall (the first after {run.start_seconds:.2f} s)",
        file=sys.stderr,
    )
    if run.engine.text():
        print(run.engine.text(), file=sys.stderr)
    print(markdown(rows))
    print(f"report: {folder / REPORT}; plots: {', '.join(f'{p}.svg/.png' for p in PLOTS)}", file=sys.stderr)
    return 2 if run.summary.errors else 0
