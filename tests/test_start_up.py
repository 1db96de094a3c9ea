"""A fresh ``routecalc solve``: what it imports, what it loads, in which
order, and that the kernels leave the interpreter to other threads.

Each case runs the command in a new process (``routecalc.cli.main``) and
reports the modules and kernel specialisations that process ended with.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from numba import typeof

from routecalc.graph import TOKEN, compile_position
from routecalc.kernels import enumeration as enum
from routecalc.kernels.cache import KERNELS, sample
from routecalc.model import load_position_file
from routecalc.scoring import pay_table, train_tables
from routecalc.solvers import fast, warm_up

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SMALL = FIXTURES / "1830-late.json"  # the fast solver answers 320

CHILD = """
import json, sys
from routecalc.cli import main
code = main(sys.argv[1:])
modules = sorted(sys.modules)
from routecalc.kernels.cache import KERNELS, sample
print(json.dumps({"code": code, "modules": modules,
                  "loaded": {k.name: [str(s) for s in k.dispatcher.overloads] for k in KERNELS},
                  "declared": {k.name: [str(s) for s in k.signatures] for k in KERNELS}}))
"""

#: Nothing of the service, the pretty printer, CP-SAT or the drawing on the
#: way to a fast solver's answer.
NOT_ON_THE_SOLVE_PATH = (
    "service",
    "uvicorn",
    "fastapi",
    "starlette",
    "pydantic",
    "rich",
    "ortools",
    "routecalc.render",
    "routecalc.solvers.cpsat",
)


def run_cli(*argv: str) -> tuple[dict, str, str]:
    """(what the process ended with, its standard output before that, its standard error)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *argv], check=False, capture_output=True, text=True, timeout=300
    )
    out, _, last = done.stdout.rstrip("\n").rpartition("\n")
    return json.loads(last), out, done.stderr


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in NOT_ON_THE_SOLVE_PATH)]


@pytest.fixture(scope="module", autouse=True)
def warm_cache():
    warm_up()  # the kernels in the disk cache, as after the first run


def test_a_fast_solve_imports_no_service_printer_or_cp_sat_and_loads_the_declared_kernels():
    ended, out, err = run_cli("solve", str(SMALL))
    assert ended["code"] == 0
    answer = json.loads(out)
    assert (answer["revenue"], answer["status"], answer["solver"]) == (320, "optimal", "fast")
    assert heavy(ended["modules"]) == []
    assert ended["loaded"] == ended["declared"]  # each specialisation once, none typed anew
    assert err == ""  # a warm cache: nothing compiled


def test_pretty_imports_the_printer():
    ended, out, _ = run_cli("solve", str(SMALL), "--pretty")
    assert ended["code"] == 0
    assert "320" in out
    assert "rich" in heavy(ended["modules"])


def test_bad_json_is_reported_before_numba_is_imported(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": 1,')
    ended, out, _ = run_cli("solve", str(bad))
    assert ended["code"] == 2
    assert json.loads(out)["where"] == str(bad)
    assert "numba" not in ended["modules"]


def test_a_bad_position_is_reported_before_numba_is_imported(tmp_path):
    data = json.loads(SMALL.read_text())
    data["trains"] = ["banana"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    ended, out, _ = run_cli("solve", str(bad))
    assert ended["code"] == 2
    assert json.loads(out)["where"] == "trains[0]"
    assert "numba" not in ended["modules"]


def test_the_declared_signatures_are_the_types_numba_sees():
    """Each declared argument type is what numba's typeof makes of a value
    of it (array layouts, tuple kinds), so a declared specialisation is the
    one a call finds."""
    for k in KERNELS:
        for signature in k.signatures:
            assert tuple(typeof(sample(t)) for t in signature) == signature, k.name


def test_every_kernel_releases_the_gil():
    assert KERNELS
    assert all(k.dispatcher.targetoptions.get("nogil") for k in KERNELS)


def test_the_interpreter_runs_on_while_a_kernel_searches():
    """The main thread keeps running Python while another thread is inside
    the enumeration kernel: with the GIL held it could not run at all."""
    position = load_position_file(FIXTURES / "stress-1867-two-d.json")
    graph = compile_position(position)
    table = train_tables(graph)[0]
    arrays = fast.graph_arrays(graph)
    prices = pay_table(table, graph, position.rules.bonuses(position))
    tokens = np.flatnonzero(graph.flags & TOKEN).astype(np.int64)
    walk = enum.Walk(table.visit.astype(np.int64), int(table.hex_limit), int(table.gauge_bit), False)
    state = enum.new_state(graph.num_stops, arrays.conn_mask.shape[1], arrays.conn_cells.shape[1], len(table.pay))
    buf = enum.new_buffer(1 << 18, 1 << 22, arrays.conn_mask.shape[1])
    inside: list[float] = []

    def search():
        inside.append(time.perf_counter())
        enum.enumerate_routes(arrays, walk, prices, tokens, state, buf, 150_000, 1 << 30, enum.new_prune(1))
        inside.append(time.perf_counter())

    worker = threading.Thread(target=search)
    ticks: list[float] = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    assert state.stats[1] == 150_000  # a search long enough to tell
    start, end = inside
    middle = (start + (end - start) / 4, end - (end - start) / 4)  # well inside the kernel
    assert sum(middle[0] < t < middle[1] for t in ticks) > 0
