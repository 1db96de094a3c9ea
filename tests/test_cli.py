"""The ``routecalc`` command, in-process through ``routecalc.cli.main`` and
once as a real process: solve (one file, several, --pretty, --solver),
validate (exit 0, 1 on a violation, 2 on bad input) and demo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from boards import city, line_board, offboard, route, town
from conftest import CORPUS, ROOT

from routecalc import model
from routecalc.cli import connect_line, main
from routecalc.model import read_json

GENERIC = CORPUS / "generic"
CORPUS_FILE = GENERIC / "1830" / "1830_game_end_bank-a145.json"  # oracle 250, exact

# A 2 and a 3 on one line: the 3 takes offboard-city-city (40+30+20), the 2
# the other side (20+50); they meet at A5.
BOARD = line_board(offboard(40), city(30), city(20), town(50), city(10), token_at=2, trains=["3", "2"])
BEST = 90 + 70


def write(tmp_path: Path, name: str, data) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_the_kernels_are_loaded_before_the_first_solve_that_runs_them(tmp_path, capsys, monkeypatch):
    """An 18XS turn plan runs no kernel: the CLI loads them only once a
    file of another game comes (before its time limit starts)."""
    import routecalc.solvers

    loads: list[int] = []
    monkeypatch.setattr(routecalc.solvers, "warm_up", lambda: loads.append(1))
    xs = str(ROOT / "fixtures" / "xs-seed-size-1.json")
    assert main(["solve", xs, xs]) == 0 and loads == []
    assert main(["solve", xs, write(tmp_path, "p.json", BOARD), xs]) == 0 and loads == [1]
    capsys.readouterr()


def test_loading_the_kernels_takes_nothing_from_the_solves_limit(tmp_path, capsys, monkeypatch):
    """The limit covers reading the file, not the kernels' load, as in the API
    (it took 0.37 s of a 1 s limit, so the CLI's solves ran with less time).
    A clock that moves only while the kernels load: the solve gets it all."""
    from types import SimpleNamespace

    from routecalc import api, cli, deadline

    now = [100.0]
    monkeypatch.setattr(deadline, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    monkeypatch.setattr(cli, "ready_to_solve", lambda solver, game: now.__setitem__(0, now[0] + 5) or True)
    given: list[float | None] = []
    monkeypatch.setattr(api, "solve", lambda position, solver, **kw: given.append(kw["time_limit"]) or {"revenue": 0})
    assert main(["solve", write(tmp_path, "p.json", BOARD), "--time-limit", "10"]) == 0
    assert given == [10.0]
    capsys.readouterr()


def test_solve_one_file_prints_the_answer(tmp_path, capsys):
    code, out = run(capsys, "solve", write(tmp_path, "p.json", BOARD), "--solver", "reference")
    assert code == 0
    answer = json.loads(out)
    assert (answer["revenue"], answer["status"], answer["bound"]) == (BEST, "optimal", BEST)
    assert answer["solver"] == "reference"
    assert answer["company"] == "A"
    assert sorted(r["revenue"] for r in answer["routes"]) == [70, 90]
    assert {r["train"] for r in answer["routes"]} == {"2", "3"}


def test_solve_with_the_default_solver(tmp_path, capsys):
    code, out = run(capsys, "solve", write(tmp_path, "p.json", BOARD))
    assert code == 0
    assert json.loads(out)["revenue"] == BEST


def test_solve_accepts_the_corpus_wrapper(capsys):
    code, out = run(capsys, "solve", str(CORPUS_FILE), "--solver", "reference")
    assert code == 0
    assert json.loads(out)["revenue"] == 250


def test_solve_several_files_prints_one_line_each(tmp_path, capsys):
    small = line_board(city(20), city(30), trains=["2"])
    files = [write(tmp_path, "a.json", BOARD), write(tmp_path, "b.json", small)]
    code, out = run(capsys, "solve", *files, "--solver", "reference")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2
    answers = [json.loads(line) for line in lines]
    assert [(a["file"], a["revenue"]) for a in answers] == [(files[0], BEST), (files[1], 50)]


def test_solve_batch_goes_on_after_a_bad_file(tmp_path, capsys):
    files = [write(tmp_path, "bad.json", "{"), write(tmp_path, "good.json", BOARD)]
    code, out = run(capsys, "solve", *files, "--solver", "reference")
    assert code == 2
    bad, good = (json.loads(line) for line in out.splitlines())
    assert bad["file"] == files[0] and bad["where"] == files[0] and "invalid JSON" in bad["error"]
    assert good["revenue"] == BEST


def test_solve_pretty_prints_a_table(tmp_path, capsys):
    code, out = run(capsys, "solve", write(tmp_path, "p.json", BOARD), "--pretty", "--solver", "reference")
    assert code == 0
    assert "A1-0 - A3-0 - A5-0" in out or "A5-0 - A3-0 - A1-0" in out
    assert "total" in out and str(BEST) in out
    assert "status optimal" in out and "solver reference" in out


def test_solve_pretty_prints_18xs_transports(capsys):
    fixture = str(Path(__file__).resolve().parent.parent / "fixtures" / "xs-small.json")
    code, out = run(capsys, "solve", fixture, "--pretty")
    answer = json.loads(run(capsys, "solve", fixture)[1])
    assert code == 0
    for transport in answer["plan"]:
        assert f"{transport['cube']['color']} cube" in out and " - ".join(transport["cells"]) in out
    assert "total" in out and str(answer["revenue"]) in out and "status optimal" in out


def test_solve_pretty_prints_the_connect_proof(capsys):
    fixture = str(Path(__file__).resolve().parent.parent / "fixtures" / "c2c-d-destination.json")
    connect = json.loads(run(capsys, "solve", fixture)[1])["connect"]
    code, out = run(capsys, "solve", fixture, "--pretty")
    assert code == 0 and connect["possible"]
    route = connect["route"]
    assert f"connect: possible - {route['train']}" in out and " - ".join(route["nodes"]) in out
    assert ("unfolded" in out) == connect["unfolded"]


@pytest.mark.parametrize(
    "connect, said",
    [
        ({"possible": None, "route": None, "unfolded": None, "status": "unknown"}, "connect: unknown"),
        ({"possible": False, "route": None, "unfolded": False, "status": "exact"}, "connect: impossible"),
        (
            {
                "possible": True,
                "route": {"train": "3", "nodes": ["A1-0", "A3-0"]},
                "unfolded": False,
                "status": "exact",
            },
            "connect: possible - 3: A1-0 - A3-0",
        ),
    ],
)
def test_connect_line(connect, said):
    assert connect_line(connect).startswith(said)


@pytest.mark.parametrize(
    "content, where",
    [
        ("{", "p.json"),
        (json.dumps({"format": 1}), "game"),
        (json.dumps(line_board(city(20), trains=["9Z"])), "trains[0]"),
    ],
)
def test_solve_bad_input_exits_2_naming_the_field(tmp_path, capsys, content, where):
    path = write(tmp_path, "p.json", content)
    code, out = run(capsys, "solve", path, "--solver", "reference")
    assert code == 2
    error = json.loads(out)
    assert error["where"].endswith(where)
    assert "Traceback" not in out


def test_solve_reads_a_utf8_bom_as_the_service_does(tmp_path, capsys):
    """A file led by a UTF-8 byte order mark reads as the same bytes sent to
    the service do (``read_json`` of the bytes)."""
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(BOARD).encode())
    assert read_json(path) == read_json(path.read_bytes()) == BOARD
    code, out = run(capsys, "solve", str(path), "--solver", "reference")
    assert code == 0
    assert json.loads(out)["revenue"] == BEST


def test_solve_missing_file_exits_2(tmp_path, capsys):
    code, out = run(capsys, "solve", str(tmp_path / "none.json"))
    assert code == 2
    assert "file not found" in json.loads(out)["error"]


def test_unknown_solver_is_refused_by_the_parser(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["solve", write(tmp_path, "p.json", BOARD), "--solver", "nope"])
    assert exit_.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize(
    "option, value, said",
    [
        ("--threads", "0", "not a whole number of 1 or more"),  # every solve hung
        ("--threads", "-2", "not a whole number of 1 or more"),  # a traceback
        ("--port", "99999", "not a port number from 0 to 65535"),  # a traceback
        ("--max-body", "0", "not a whole number of 1 or more"),  # every POST refused
        ("--queue", "-1", "not a whole number of 0 or more"),
    ],
)
def test_serve_refuses_options_it_cannot_run_with(capsys, option, value, said):
    with pytest.raises(SystemExit) as exit_:
        main(["serve", f"{option}={value}"])
    assert exit_.value.code == 2
    assert said in capsys.readouterr().err


def test_a_file_that_never_ends_is_refused_at_the_size_cap(tmp_path, capsys, monkeypatch):
    """/dev/zero or an endless pipe filled the memory; past the cap it is named (exit 2)."""
    monkeypatch.setattr(model, "MAX_FILE_BYTES", 1_000)
    big = write(tmp_path, "p.json", {**BOARD, "padding": "x" * 2_000})
    code, out = run(capsys, "solve", big)
    assert code == 2
    assert json.loads(out)["error"].endswith("over 1,000 bytes: not a position or routes file")


def test_render_to_a_path_it_cannot_write_is_named(tmp_path, capsys):
    code, out = run(capsys, "render", write(tmp_path, "p.json", BOARD), "-o", str(tmp_path / "none" / "b.svg"))
    assert code == 2
    assert json.loads(out) == {
        "error": "cannot write: No such file or directory",
        "where": str(tmp_path / "none" / "b.svg"),
    }


# -- validate ----------------------------------------------------------------------------------

VALID = [route("3", "A1-0", "A3-0", "A5-0"), route("2", "A5-0", "A7-0")]


@pytest.mark.parametrize("routes", [{"routes": VALID}, VALID])
def test_validate_scores_routes(tmp_path, capsys, routes):
    pos, rts = write(tmp_path, "p.json", BOARD), write(tmp_path, "r.json", routes)
    code, out = run(capsys, "validate", pos, rts)
    assert code == 0
    result = json.loads(out)
    assert result["valid"] is True
    assert result["revenue"] == 90 + 70
    assert [r["revenue"] for r in result["routes"]] == [90, 70]
    assert result["routes"][0]["stops"][0] == {"node": "A1-0", "type": "offboard", "value": 40}


def test_validate_accepts_the_corpus_wrapper(tmp_path, capsys):
    data = json.loads(CORPUS_FILE.read_text())
    rts = write(tmp_path, "r.json", {"routes": data["reference"]["recorded"]["routes"]})
    code, out = run(capsys, "validate", str(CORPUS_FILE), rts)
    assert code == 0
    assert json.loads(out)["revenue"] == sum(data["reference"]["recomputed"]["per_route"])


def test_validate_violation_exits_1(tmp_path, capsys):
    routes = [route("3", "A1-0", "A3-0", "A5-0", "A7-0")]
    code, out = run(capsys, "validate", write(tmp_path, "p.json", BOARD), write(tmp_path, "r.json", routes))
    assert code == 1
    result = json.loads(out)
    assert result["valid"] is False
    assert result["violation"]["rule"] == "too_long"
    assert result["violation"]["route"] == 0


def test_validate_ambiguous_lists_choices(tmp_path, capsys):
    board = line_board(city(20, edges=(0, 5)), city(40, edges=(3, 4)))
    board["hexes"].append({"id": "B2", "code": "path=a:2,b:1"})
    code, out = run(
        capsys, "validate", write(tmp_path, "p.json", board), write(tmp_path, "r.json", [route("2", "A1-0", "A3-0")])
    )
    assert code == 1
    violation = json.loads(out)["violation"]
    assert violation["rule"] == "ambiguous"
    assert violation["choices"] == [["A1", "A3"], ["A1", "B2", "A3"]]


@pytest.mark.parametrize(
    "routes, where",
    [
        ("[", "r.json"),
        ('{"route": []}', "routes"),
        (json.dumps([route("2", "A1-0", "Q1-0")]), "routes[0].nodes[1]"),
    ],
)
def test_validate_bad_routes_exit_2(tmp_path, capsys, routes, where):
    code, out = run(capsys, "validate", write(tmp_path, "p.json", BOARD), write(tmp_path, "r.json", routes))
    assert code == 2
    assert json.loads(out)["where"].endswith(where)


def test_validate_bad_position_exits_2(tmp_path, capsys):
    bad = dict(BOARD, layout="round")
    code, out = run(capsys, "validate", write(tmp_path, "p.json", bad), write(tmp_path, "r.json", VALID))
    assert code == 2
    assert json.loads(out)["where"] == "layout"


# -- demo and a real process ---------------------------------------------------------------------


def test_demo_prints_the_bundled_example(capsys):
    code, out = run(capsys, "demo", "--solver", "reference")
    assert code == 0
    assert "1830-late.json" in out
    assert "total" in out and "status optimal" in out


def routecalc_command() -> list[str]:
    script = Path(sys.executable).parent / "routecalc"
    return [str(script)] if script.exists() else [sys.executable, "-m", "routecalc.cli"]


def test_the_installed_command(tmp_path):
    pos, rts = write(tmp_path, "p.json", BOARD), write(tmp_path, "r.json", {"routes": VALID})
    solved = subprocess.run(
        routecalc_command() + ["solve", pos, "--solver", "reference"], capture_output=True, text=True, timeout=120
    )
    assert solved.returncode == 0, solved.stderr
    assert json.loads(solved.stdout)["revenue"] == BEST
    checked = subprocess.run(routecalc_command() + ["validate", pos, rts], capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["revenue"] == BEST


def test_a_reader_that_goes_away_is_no_error(tmp_path):
    # ``routecalc solve ... | head``: the pipe closes before the answer is written.
    proc = subprocess.Popen(
        routecalc_command() + ["solve", write(tmp_path, "p.json", BOARD), "--solver", "reference"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in stderr
