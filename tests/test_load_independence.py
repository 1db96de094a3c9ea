"""Auto takes the same path, and gives the same answer, at any machine load.

Its choices are made on counts of work (routes listed, kernel steps, words
compared, CP-SAT's deterministic time), never on the clock. The test runs
one position twice: once with the real clock and once with the clock the
solvers read running 100 times fast, as on a machine 100 times slower (the
old one-second enumeration budget ended after 10 ms of real time there and
tipped auto to CP-SAT). Path, answer and work counts must be identical.
"""

from __future__ import annotations

import json
import time
from unittest import mock

import pytest
from conftest import CORPUS, ROOT
from ortools.sat.python import cp_model

from routecalc import api, load_position_file
from routecalc.graph import compile_position
from routecalc.solvers import auto, cpsat, fast, packing

#: A corpus position whose enumeration takes some 0.1 s (84,000 kernel steps).
BIG = CORPUS / "generic" / "1867" / "navig18xx_1867_bc_CNR.json"
SMALL = CORPUS / "generic" / "1867" / "21268-a994.json"
SLOWER = 100.0


class SlowClock:
    """The ``time`` module, with ``perf_counter`` running ``SLOWER`` times fast."""

    def __init__(self) -> None:
        self.origin = time.perf_counter()

    def perf_counter(self) -> float:
        return self.origin + SLOWER * (time.perf_counter() - self.origin)

    def __getattr__(self, name: str):
        return getattr(time, name)


def solve(path, slow: bool, **limits) -> dict:
    position = load_position_file(path)
    graph = compile_position(position)
    if not slow:
        return auto.solve_auto(position, graph, **limits)
    clock = SlowClock()
    with (
        mock.patch.object(auto, "time", clock),
        mock.patch.object(fast, "time", clock),
        mock.patch.object(packing, "time", clock),
        mock.patch.object(cpsat, "time", clock),
    ):
        return auto.solve_auto(position, graph, **limits)


def path_and_answer(result: dict) -> dict:
    """Everything but the seconds taken."""
    stats = {k: v for k, v in result["stats"].items() if k != "seconds"}
    return {**result, "stats": stats}


@pytest.mark.parametrize("time_limit", [None, 1000.0])
def test_fast_path_at_any_clock_speed(time_limit):
    fast.warm_up()
    idle, loaded = solve(BIG, False, time_limit=time_limit), solve(BIG, True, time_limit=time_limit)
    assert idle["solver"] == "fast" and idle["status"] == "optimal"
    assert idle["stats"]["enumeration_steps"] > 50_000
    assert path_and_answer(loaded) == path_and_answer(idle)


def test_cpsat_path_at_any_clock_speed():
    """Enumeration stopped by its step budget: the CP-SAT continuation, whose
    first steps are budgeted in CP-SAT's deterministic time."""
    with mock.patch.object(auto, "ENUMERATION_STEPS", 500):
        idle = solve(SMALL, False, time_limit=600.0)
        loaded = solve(SMALL, True, time_limit=600.0)
    assert idle["solver"] == "cpsat" and idle["status"] == "optimal"
    assert "500 steps" in idle["stats"]["auto"]["why"]
    assert path_and_answer(loaded) == path_and_answer(idle)


def test_demanded_maxima_at_any_clock_speed():
    """stress-1867-express-8: the 8's maximum proven by a CP-SAT demand of
    its bound, and a set earning both maxima found by branch and bound, each
    within a count of work."""
    path = ROOT / "fixtures" / "stress-1867-express-8.json"
    idle = solve(path, False, time_limit=600.0)
    loaded = solve(path, True, time_limit=600.0)
    assert (idle["revenue"], idle["status"]) == (1380, "optimal")
    assert idle["stats"]["auto"]["maxima"]["8"]["cpsat_route"] == 560
    assert path_and_answer(loaded) == path_and_answer(idle)


def cuba_heavy_board() -> dict:
    """An 18Cuba major with five trains and six pool wagons: more wagon
    orders than the branch and bound takes, so CP-SAT's choice answers."""
    data = json.loads((ROOT / "fixtures" / "cuba-board" / "major-dense-03-fee40.json").read_text())
    data["trains"] = ["8", "8", "4D", "4", "4"]
    data.setdefault("options", {})["wagons"] = [1, 2, 3, 1, 2, 3]
    return data


def test_every_cp_sat_search_runs_one_worker():
    """Several CP-SAT workers race and share what they find: the same position
    gave other routes (and other fees) each run, all optimal, on 18Cuba's
    choice and on the packing of listed routes. One worker is deterministic."""
    workers: list[int] = []
    plain = cp_model.CpSolver.solve

    def solve_counted(self, model, callback=None):
        workers.append(self.parameters.num_workers)
        return plain(self, model, callback)

    with mock.patch.object(cp_model.CpSolver, "solve", solve_counted):
        answer = api.solve(cuba_heavy_board())
        assert answer["solver"] == "cuba-cpsat" and answer["revenue"] == 970
        stalled = ([], 10**9, {})  # the fast combination never finishes: the packing path
        with mock.patch.object(auto, "combine_company", return_value=stalled):
            assert solve(SMALL, False)["solver"] == "packing"
    assert workers and set(workers) == {1}
