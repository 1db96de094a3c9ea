"""``routecalc bench`` on a few corpus positions: the table's figures are those
of the results file, the plots are written, and external solvers are
measured and checked like routecalc's own (one that answers too little is
counted below the reference, one that fails is not counted as solved).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from conftest import CORPUS

from routecalc.bench import table as bench_table
from routecalc.cli import main

SLICE = sorted(CORPUS.rglob("*.json"))[7::100]  # 5 positions
ZERO = 'import json, sys; json.load(open(sys.argv[1])); print(json.dumps({"revenue": 0, "routes": []}))'
BROKEN = "import sys; sys.exit(3)"


def table_rows(report: str) -> dict[str, dict[str, str]]:
    """The report's Markdown table, by solver and column."""
    lines = [line for line in report.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    return {row[0]: dict(zip(header, row)) for row in rows}


def test_bench_table_and_plots_match_the_results(tmp_path, capsys):
    zero, broken = tmp_path / "zero.py", tmp_path / "broken.py"
    zero.write_text(ZERO)
    broken.write_text(BROKEN)
    out = tmp_path / "report"
    code = main(
        [
            "bench",
            *map(str, SLICE),
            "--solvers",
            "auto,fast,cpsat",
            "-o",
            str(out),
            "--engine",
            "inline",
            "--no-progress",
            "--external",
            f"zero={sys.executable} {zero} {{file}}",
            "--external",
            f"broken={sys.executable} {broken} {{file}}",
        ]
    )
    assert code == 2  # the broken solver answered no position
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(results) == 5 * len(SLICE)
    rows = table_rows((out / "report.md").read_text())
    assert list(rows) == ["auto", "fast", "cpsat", "zero", "broken"]
    assert capsys.readouterr().out.count("| auto |") == 1  # the table is printed too

    for solver, row in rows.items():
        lines = [r for r in results if r["solver"] == solver]
        seconds = sorted(r["seconds"] for r in lines)
        answered = [r for r in lines if "answer" in r]
        assert row["positions"] == str(len(lines)) == str(len(SLICE))
        assert row["solved"] == str(len(answered))
        assert row["optimal"] == str(sum(r["answer"].get("status") == "optimal" for r in answered))
        equal = sum(r["answer"]["revenue"] == r["reference"]["optimum"] for r in answered)
        assert row["= optimum"] == f"{equal}/{len(SLICE)}"
        others = [max(v for k, v in r["reference"].items() if k != "optimum") for r in answered]
        below = sum(r["answer"]["revenue"] < best for r, best in zip(answered, others))
        assert row["below a reference"] == str(below)
        assert row["median s"] == f"{statistics.median(seconds):.4f}"
        assert row["p90 s"] == f"{seconds[4]:.4f}"  # the 90th percentile of 5: the 5th
        assert row["worst s"] == f"{seconds[-1]:.4f}"
        assert row["total s"] == f"{sum(seconds):.2f}"
        assert row["CPU s"] == f"{sum(r['cpu_seconds'] for r in lines):.2f}"

    for solver in ("auto", "fast", "cpsat"):  # routecalc's solvers: every answer the certified optimum
        assert rows[solver]["solved"] == rows[solver]["optimal"] == "5"
        assert rows[solver]["= optimum"] == "5/5" and rows[solver]["below a reference"] == "0"
    assert rows["zero"]["solved"] == "5" and rows["zero"]["optimal"] == "0"
    assert rows["zero"]["= optimum"] == "0/5" and rows["zero"]["below a reference"] == "5"
    assert rows["broken"]["solved"] == "0"
    assert all("exited with status 3" in r["error"]["message"] for r in results if r["solver"] == "broken")
    totals = {solver: sum(r["seconds"] for r in results if r["solver"] == solver) for solver in rows}
    fastest = min(totals[solver] for solver in rows if solver != "broken")  # broken answered nothing: no baseline
    for solver, row in rows.items():
        assert row["x best"] == f"{totals[solver] / fastest:.2f}"

    for name in ("times", "revenue"):
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "<svg" in (out / f"{name}.svg").read_text()
    assert "certified optimum" in (out / "report.md").read_text()  # the misses are listed


def test_a_solver_that_fails_is_not_the_baseline():
    """A tool that fails at once (not installed) was the 'fastest', and every
    solver's time a ratio to its failures."""
    reference = {"optimum": 10}
    results = [
        {
            "solver": "fast",
            "file": f,
            "seconds": 0.5,
            "answer": {"revenue": 10, "status": "optimal"},
            "reference": reference,
        }
        for f in ("a", "b")
    ] + [
        {"solver": "gone", "file": f, "seconds": 0.01, "error": {"message": "not found"}, "reference": reference}
        for f in ("a", "b")
    ]
    rows = {row.solver: row for row in bench_table(results, ["fast", "gone"])}
    assert rows["fast"].ratio == 1.0 and rows["gone"].ratio == 0.02


def test_bench_resumes_into_the_same_results(tmp_path):
    out = tmp_path / "report"
    args = ["bench", str(SLICE[0]), "--solvers", "fast", "-o", str(out), "--engine", "inline", "--no-progress"]
    assert main(args) == 0
    first = (out / "results.jsonl").read_text()
    assert main([*args, "--resume", "--solvers", "fast,reference"]) == 0
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert (out / "results.jsonl").read_text().startswith(first)
    assert [line["solver"] for line in lines] == ["fast", "reference"]
    rows = table_rows((out / "report.md").read_text())
    assert rows["reference"]["= optimum"] == rows["fast"]["= optimum"] == "1/1"


def test_the_report_is_of_this_run_and_each_solver_once(tmp_path):
    """A resumed results file may hold other positions' lines: the table counts
    the positions and solvers asked for, each solver once."""
    out = tmp_path / "report"
    common = ["--solvers", "fast", "-o", str(out), "--engine", "inline", "--no-progress"]
    assert main(["bench", str(SLICE[0]), str(SLICE[1]), *common]) == 0
    assert main(["bench", str(SLICE[2]), *common, "--resume", "--solvers", "fast,fast"]) == 0
    rows = table_rows((out / "report.md").read_text())
    assert list(rows) == ["fast"] and rows["fast"]["positions"] == "1"
    assert len((out / "results.jsonl").read_text().splitlines()) == 3


def test_unknown_solver_is_named(tmp_path, capsys):
    code = main(["bench", str(SLICE[0]), "--solvers", "fast,nope", "-o", str(tmp_path), "--engine", "inline"])
    assert code == 2
    error = json.loads(capsys.readouterr().err)
    assert error["where"] == "solver" and "'nope'" in error["error"]
    assert not Path(tmp_path / "results.jsonl").exists()
