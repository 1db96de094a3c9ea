"""``routecalc batch`` on a slice of the corpus: in-process, as a command
(local processes), and resumed after a real run was killed.

Every line must parse, name its file and solver, and carry the corpus
optimum as its revenue; a killed run resumed writes each position once.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import suppress
from pathlib import Path

import pytest
from conftest import CORPUS, ROOT

from routecalc import batch
from routecalc.batch import (
    MAX_BATCH,
    Job,
    Settings,
    WorkQueue,
    batch_size,
    jobs_for,
    read_inputs,
    read_results,
    run_batch,
)
from routecalc.cli import main as cli_main
from routecalc.errors import PositionError

#: Every 25th corpus position (20, all four corpus games).
SLICE = sorted(CORPUS.rglob("*.json"))[::25]
ROUTECALC = [sys.executable, "-m", "routecalc.cli"]


def optimum(path: Path) -> int:
    return json.loads(path.read_text())["reference"]["oracle"]["total"]


def check_lines(lines: list[dict], files: list[Path], solver: str = "auto") -> None:
    """One line per file, the corpus optimum, proven optimal."""
    assert sorted(line["file"] for line in lines) == sorted(str(f) for f in files)
    for line in lines:
        assert line["solver"] == solver and "error" not in line, line
        want = optimum(Path(line["file"]))
        assert line["answer"]["revenue"] == want, f"{line['file']}: {line['answer']['revenue']}, optimum {want}"
        assert line["answer"]["status"] == "optimal"
        assert line["reference"]["optimum"] == want
        assert line["seconds"] >= 0 and line["cpu_seconds"] >= 0 and line["node"]


def test_slice_covers_every_corpus_game():
    assert {p.parent.name for p in SLICE} == {"1830", "1867", "18Chesapeake", "18Ireland"}


def test_inputs_from_files_folders_and_json_lines(tmp_path):
    lines = tmp_path / "positions.jsonl"
    lines.write_text(SLICE[0].read_text().replace("\n", "") + "\n\n{not json\n" + json.dumps({"hexes": 3}) + "\n")
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    items = read_inputs([SLICE[1], CORPUS / "generic" / "1867", lines, bad, SLICE[1]])
    keys = [item.key for item in items]
    assert keys[0] == str(SLICE[1]) and keys.count(str(SLICE[1])) == 1  # each file once
    assert len([k for k in keys if "/1867/" in k]) == len(list((CORPUS / "generic" / "1867").glob("*.json")))
    by_key = {item.key: item for item in items}
    assert by_key[f"{lines}:1"].reference["optimum"] == optimum(SLICE[0])
    assert by_key[f"{lines}:1"].position == json.loads(SLICE[0].read_text())["position"]
    assert f"{lines}:2" not in by_key  # a blank line is no position
    assert "invalid JSON" in by_key[f"{lines}:3"].error[1]
    assert by_key[str(bad)].error[0] == str(bad)

    out = tmp_path / "out.jsonl"
    wanted = [by_key[f"{lines}:3"], by_key[f"{lines}:4"], by_key[str(bad)], by_key[f"{lines}:1"]]
    run = run_batch(jobs_for(wanted, ["auto"]), out, Settings(), engine="inline")
    records = {r["file"]: r for r in read_results(out)}
    assert run.summary.count == 4 and run.summary.errors == 3 and run.summary.optimal == 1
    assert records[f"{lines}:3"]["error"]["kind"] == "PositionError"
    assert records[f"{lines}:4"]["error"]["where"] == "format"  # {"hexes": 3} lacks the format first
    assert "invalid JSON" in records[str(bad)]["error"]["message"]
    assert records[f"{lines}:1"]["answer"]["revenue"] == optimum(SLICE[0])


def test_a_reading_limit_inside_a_json_lines_line_names_its_field(tmp_path):
    """As in a file of its own: the field past the limit is named, where the
    line alone was (a number of 20 digits in a revenue), and as the API names
    it (a field of the wrapper's position has no ``position.`` prefix)."""
    wrapper = json.loads(SLICE[0].read_text())
    wrapper["position"]["hexes"][0]["revenue"] = 10**19
    archive = tmp_path / "archive.jsonl"
    archive.write_text(json.dumps(wrapper) + "\n{not json\n")
    single = tmp_path / "single.json"
    single.write_text(json.dumps(wrapper))
    items = {item.key: item for item in read_inputs([archive, single])}
    where, message = items[f"{archive}:1"].error
    assert (where, message) == items[str(single)].error
    assert where == "hexes[0].revenue" and "out of range" in message
    assert items[f"{archive}:2"].error[0] == f"{archive}:2"


def test_a_json_lines_archive_breaks_only_at_newlines_and_a_bad_byte_spoils_one_line(tmp_path):
    wrapper = json.loads(SLICE[0].read_text())
    wrapper["reference"]["note"] = "one\u2028two\x0cthree"  # line breaks of Unicode inside a string
    archive = tmp_path / "archive.jsonl"
    archive.write_bytes(
        json.dumps(wrapper, ensure_ascii=False).encode()
        + b'\n{"note": "caf\xe9"}\n'
        + SLICE[1].read_bytes().replace(b"\n", b"")
        + b"\n"
    )
    items = {item.key: item for item in read_inputs([archive])}
    assert sorted(items) == [f"{archive}:{n}" for n in (1, 2, 3)]
    assert items[f"{archive}:1"].reference["optimum"] == optimum(SLICE[0])
    assert "invalid JSON" in items[f"{archive}:2"].error[1]
    assert items[f"{archive}:3"].position == json.loads(SLICE[1].read_text())["position"]


def test_each_file_is_read_once_however_named_and_never_the_results(tmp_path, monkeypatch):
    folder = tmp_path / "games"
    folder.mkdir()
    one = folder / "one.json"
    one.write_text(SLICE[0].read_text())
    (folder / "results.jsonl").write_text('{"file": "an earlier run"}\n')
    monkeypatch.chdir(tmp_path)
    items = read_inputs(["games/one.json", one, "games/../games", folder], folder / "results.jsonl")
    assert [item.key for item in items] == ["games/one.json"]


def test_an_input_that_is_the_output_is_refused_and_a_folder_written_is_not_read(tmp_path):
    """``-o`` naming an input emptied it and the run said 0 positions, exit 0;
    bench read its own table.json from an output folder inside the input."""
    archive = tmp_path / "archive.jsonl"
    archive.write_text(SLICE[0].read_text().replace("\n", " ") + "\n")
    with pytest.raises(PositionError) as err:
        read_inputs([archive], archive)
    assert err.value.where == "output" and "is an input too" in err.value.message
    assert archive.read_text().count("\n") == 1
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "table.json").write_text("[]")
    assert [item.key for item in read_inputs([tmp_path], tmp_path / "bench")] == [f"{archive}:1"]


def test_batch_to_an_output_it_cannot_write_is_named(tmp_path, capsys):
    code = cli_main(["batch", str(SLICE[0]), "-o", str(tmp_path / "none" / "out.jsonl"), "--no-progress"])
    assert code == 2
    error = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert error["where"] == "output" and "No such file or directory" in error["error"]


@pytest.mark.parametrize(
    "printed, said",
    [
        ('{"revenue": true, "status": "optimal"}', "integer revenue"),
        ('{"revenue": 90, "status": "great"}', "a status other than optimal or feasible"),
    ],
)
def test_an_external_answer_without_a_revenue_and_status_is_an_error(tmp_path, printed, said):
    """``{"revenue": true}`` was taken as an answer, counted as solved."""
    script = tmp_path / "tool.py"
    script.write_text(f"print({printed!r})")
    with pytest.raises(PositionError) as err:
        batch._run_external(f"{sys.executable} {script} {{file}}", {}, None)
    assert said in err.value.message


def test_an_external_solver_past_its_limit_is_stopped_with_what_it_started(tmp_path, monkeypatch):
    """A wrapper's own child (a sleep) went on running after the timeout."""
    monkeypatch.setattr(batch, "EXTERNAL_GRACE", 0.2)
    marker = tmp_path / "child.pid"
    script = tmp_path / "hang.sh"
    script.write_text(f"#!/bin/sh\nsleep 1000 &\necho $! > {marker}\nwait\n")
    script.chmod(0o755)
    with pytest.raises(PositionError, match="ran past the time limit"):
        batch._run_external(f"{script} {{file}}", {}, 0.1)
    pid = int(marker.read_text())
    for _ in range(50):  # the kill is sent: the child is gone, or a zombie until something reaps it
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
                break
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the wrapper's child {pid} still runs")


@pytest.mark.parametrize(
    "reference", ["see the notes", [1], {"oracle": "exact"}, {"oracle": {"total": "90", "exact": True}}]
)
def test_a_reference_that_holds_no_figures_is_no_reference(tmp_path, reference):
    """The engine does not read the wrapper's reference: an odd one costs the
    run nothing, its position is solved."""
    wrapped = tmp_path / "odd.json"
    wrapped.write_text(json.dumps({"position": json.loads(SLICE[0].read_text())["position"], "reference": reference}))
    (item,) = read_inputs([wrapped])
    assert item.error is None and not item.reference


def test_batch_in_process_on_the_slice(tmp_path):
    out = tmp_path / "results.jsonl"
    run = run_batch(jobs_for(read_inputs(SLICE), ["auto"]), out, Settings(), engine="inline")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    check_lines(lines, SLICE)
    summary = run.summary
    assert (summary.count, summary.optimal, summary.feasible, summary.errors) == (len(SLICE), len(SLICE), 0, 0)
    assert summary.certified == summary.equal_optimum == len(SLICE)
    assert summary.total_seconds == pytest.approx(sum(line["seconds"] for line in lines))


def test_a_games_own_kernels_load_before_its_jobs_clock(tmp_path, monkeypatch):
    """An 18Cuba job's seconds leave out its game's one-off kernel load (0.2 s
    from the disk cache, 5-8 s compiled after an install), as a worker's
    route kernels are: here a load made to take 1 s, once a process."""
    from dataclasses import replace

    from routecalc import games

    loads: list[float] = []

    def slow_load() -> None:
        if not loads:
            time.sleep(1.0)
        loads.append(time.perf_counter())

    cuba = games.QUESTIONS["18Cuba"]
    assert cuba.warm_up is not None
    cuba.warm_up()  # the real kernels in, so that only the stand-in's second is to leave out
    monkeypatch.setitem(games.QUESTIONS, "18Cuba", replace(cuba, warm_up=slow_load))
    out = tmp_path / "results.jsonl"
    jobs = jobs_for(read_inputs([ROOT / "fixtures" / "cuba-small.json"]), ["auto"])
    run_batch(jobs, out, Settings(), engine="inline")
    (line,) = [json.loads(text) for text in out.read_text().splitlines()]
    assert line["answer"]["status"] == "optimal" and loads
    assert line["seconds"] < 1.0


def test_batch_command_in_local_processes(tmp_path):
    out = tmp_path / "results.jsonl"
    done = subprocess.run(
        [
            *ROUTECALC,
            "batch",
            *map(str, SLICE[:10]),
            "-o",
            str(out),
            "--engine",
            "processes",
            "--workers",
            "2",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    check_lines(lines, SLICE[:10])
    assert len({line["pid"] for line in lines}) <= 2
    assert "10 positions: 10 optimal, 0 feasible, 0 errors" in done.stderr
    assert "equal to the certified optimum 10/10" in done.stderr


def test_resume_after_a_killed_run_writes_each_position_once(tmp_path):
    files = sorted(CORPUS.rglob("*.json"))[::6]  # 84 positions: some seconds, killed long before the end
    out = tmp_path / "results.jsonl"
    command = [*ROUTECALC, "batch", *map(str, files), "-o", str(out), "--engine", "inline", "--no-progress"]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while (not out.exists() or out.read_text().count("\n") < 5) and first.poll() is None:
            assert time.monotonic() < deadline, "the first run wrote nothing"
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)
    finally:
        first.wait()
    assert first.returncode == -signal.SIGKILL, "the run ended before it was killed"
    written = read_results(out)
    assert 5 <= len(written) < len(files)
    with out.open("a") as cut:  # a line a crash cut short: dropped on resume
        cut.write(json.dumps(written[0])[:40])

    second = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=300, check=False)
    assert second.returncode == 0, second.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]  # every line parses: the cut one is gone
    check_lines(lines, files)
    assert lines[: len(written)] == written  # the first run's lines are kept as they were
    assert f"{len(files) - len(written)} solved" in second.stderr
    assert f"{len(written)} already in" in second.stderr


def test_resume_knows_an_input_by_another_name_of_its_file(tmp_path, monkeypatch):
    """Resumed with the same files named otherwise (absolute, ``./``, through
    a folder and ``..``), nothing is solved again and the summary counts
    each position once (each was solved a second time, two lines apiece)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in").mkdir()
    single = tmp_path / "in" / "a.json"
    single.write_text(SLICE[0].read_text())
    archive = tmp_path / "in" / "archive.jsonl"
    archive.write_text("".join(p.read_text().replace("\n", "") + "\n" for p in SLICE[1:3]))
    out = tmp_path / "out.jsonl"
    named = read_inputs(["in/a.json", "in/archive.jsonl"])
    first = run_batch(jobs_for(named, ["fast"]), out, Settings(), engine="inline")
    assert (first.written, first.skipped) == (3, 0)
    again = read_inputs([str(single), "./in/../in/archive.jsonl"])
    second = run_batch(jobs_for(again, ["fast"]), out, Settings(), resume=True, engine="inline")
    assert (second.written, second.skipped, second.summary.count) == (0, 3, 3)
    assert len(read_results(out)) == 3


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.add(int(stat.parent.name))
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="prctl(2) is Linux's")
def test_a_killed_batch_takes_its_pool_workers_with_it(tmp_path):
    """``kill -9`` of a ``--engine processes`` run: its workers go too (they
    waited on their queue for a minute or more)."""
    files = sorted(CORPUS.rglob("*.json"))
    out = tmp_path / "results.jsonl"
    command = [*ROUTECALC, "batch", *map(str, files), "-o", str(out), "--engine", "processes", "--workers", "2"]
    run = subprocess.Popen([*command, "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while (not out.exists() or out.read_text().count("\n") < 2) and run.poll() is None:
            assert time.monotonic() < deadline, "the run wrote nothing"
            time.sleep(0.05)
        workers = _children(run.pid)
        assert len(workers) >= 2, workers  # the pool's two (and multiprocessing's resource tracker)
        os.kill(run.pid, signal.SIGKILL)
    finally:
        run.wait()
    assert run.returncode == -signal.SIGKILL, "the run ended before it was killed"
    deadline = time.monotonic() + 10
    while (alive := {pid for pid in workers if Path(f"/proc/{pid}").exists() and not _zombie(pid)}) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert not alive


def _zombie(pid: int) -> bool:
    with suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    return True


def test_work_queue_hands_each_job_out_once():
    """Threads taking batches at once get every job exactly once; jobs given
    back (their worker went away) come out next."""
    jobs = jobs_for(read_inputs(SLICE), ["auto", "fast", "cpsat", "reference"] * 25)
    work = WorkQueue(jobs)
    taken: list[list[Job]] = [[] for _ in range(4)]

    def drain(mine: list[Job]) -> None:
        while batch := work.take(workers=4):
            mine.extend(batch)

    threads = [threading.Thread(target=drain, args=(mine,)) for mine in taken]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(map(id, sum(taken, []))) == sorted(map(id, jobs)) and len(work) == 0
    work.give_back(jobs[:3])
    assert work.take(workers=1, size=2) == jobs[:2] and work.take(workers=1) == jobs[2:3]


def test_batch_size_by_what_is_left():
    assert batch_size(2000, 2) == MAX_BATCH  # many positions: full batches
    assert batch_size(160, 2) == 10  # four rounds of two in flight per worker
    assert batch_size(5, 2) == 1  # the last ones one by one


def test_a_cluster_address_nobody_answers_is_a_named_error(tmp_path):
    with socket.socket() as probe:  # a port just freed: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(PositionError) as raised:  # named before any ray.init could wait on it
        run_batch(
            jobs_for(read_inputs(SLICE[:1]), ["auto"]), tmp_path / "out.jsonl", Settings(), address=f"127.0.0.1:{port}"
        )
    assert raised.value.where == "address" and f"no Ray cluster answers at 127.0.0.1:{port}" in raised.value.message


@pytest.mark.parametrize("reply", [None, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"])
def test_an_address_that_answers_but_is_no_ray_cluster_is_a_named_error(tmp_path, monkeypatch, reply):
    """A server that accepts the connection and then says nothing, or speaks
    HTTP/1: named within the address timeout, not a ray.init that waits."""
    monkeypatch.setattr(batch, "ADDRESS_TIMEOUT", 0.5)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]

        def answer() -> None:
            link, _ = server.accept()
            with link:
                link.recv(64)
                if reply is not None:
                    link.sendall(reply)
                else:
                    time.sleep(1.5)

        serving = threading.Thread(target=answer)
        serving.start()
        started = time.perf_counter()
        with pytest.raises(PositionError) as raised:
            run_batch(
                jobs_for(read_inputs(SLICE[:1]), ["auto"]),
                tmp_path / "out.jsonl",
                Settings(),
                address=f"127.0.0.1:{port}",
            )
        waited = time.perf_counter() - started
        serving.join()
    assert raised.value.where == "address"
    assert f"what answers at 127.0.0.1:{port} is not a Ray cluster" in raised.value.message
    assert waited < 10  # the timeout (0.5 s), not Ray's minutes


@pytest.mark.parametrize("option", ["--workers", "--batch-size"])
def test_a_count_below_one_is_refused(tmp_path, option, capsys):
    with pytest.raises(SystemExit) as stop:
        cli_main(["batch", str(SLICE[0]), "-o", str(tmp_path / "out.jsonl"), option, "-1"])
    assert stop.value.code == 2 and option in capsys.readouterr().err


def test_a_job_that_kills_its_worker_is_named_and_the_rest_are_solved():
    """An external solver that kills the worker process running it (as the
    OOM killer would) breaks the pool: the batches it held run again one job
    at a time, so only that job gets an error line; every other is solved."""
    items = read_inputs(SLICE[:5])
    boom = f'{sys.executable} -c "import os; os.kill(os.getppid(), 9)" {{file}}'
    jobs = jobs_for(items, ["fast"]) + [Job(items[2], "boom")]
    lines = list(batch.run_processes(jobs, Settings(externals={"boom": boom}), workers=2, batch_size=2))
    assert sorted((r["file"], r["solver"]) for r in lines) == sorted((j.item.key, j.solver) for j in jobs)
    assert [(r["solver"], r["error"]["kind"]) for r in lines if "error" in r] == [("boom", "BrokenProcessPool")]


def test_inputs_that_hold_no_position_are_named(tmp_path, capsys):
    """An empty folder or JSON-lines file passed as "0 positions", exit 0."""
    (tmp_path / "empty.jsonl").write_text("")
    code = cli_main(["batch", str(tmp_path), "-o", str(tmp_path / "out.jsonl"), "--no-progress"])
    assert code == 2
    assert json.loads(capsys.readouterr().err.strip().splitlines()[-1])["where"] == "inputs"
