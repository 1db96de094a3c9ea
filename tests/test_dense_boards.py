"""Boards made from corpus positions with more track and long trains, the
kind a user builds to try the engine (and the kind where enumeration
explodes, or finishes but cannot be combined): auto's answer validates,
and where auto and CP-SAT both prove an optimum it is the same one. The
boards are drawn with fixed seeds: 24 in the default run (some 10 s on two
cores), 96 more with ``make slow``.

Such sweeps found auto packing a finished listing cut to its limits (11 of
630 boards answered ``feasible``, up to 140 short), fixed by sending those
to CP-SAT's path model (fixtures/limits)."""

from __future__ import annotations

import copy
import json
import random
import sys

import pytest
from conftest import CORPUS, ROOT

from routecalc import api
from routecalc.model import load_position
from routecalc.validate import RouteSetValidator

sys.path.insert(0, str(ROOT / "benchmarks"))
from make_stress_fixtures import EXPRESS_1867, _1867_train, densify_code  # noqa: E402

TRAINS = [
    ["D", "D"],
    ["5", "D"],
    ["6", "8"],
    ["D", "8E"],
    ["8E", "6E"],
    ["5", "6", "D"],
    ["6", "6", "D"],
    [_1867_train("8", 8), EXPRESS_1867],
]
BOARDS = sorted((CORPUS / "generic").glob("*/*.json"))


def dense_board(seed: int) -> dict:
    """A corpus position, more track on a share of its cells, long trains."""
    rng = random.Random(seed)
    position = copy.deepcopy(json.loads(rng.choice(BOARDS).read_text())["position"])
    share = rng.choice([0.3, 0.5, 0.8])
    for cell in position["hexes"]:
        if rng.random() < share:
            cell["code"] = densify_code(cell["code"])
    position["trains"] = copy.deepcopy(rng.choice(TRAINS))
    return position


SEEDS = [*range(24), *(pytest.param(seed, marks=pytest.mark.slow) for seed in range(24, 120))]


@pytest.mark.parametrize("seed", SEEDS)
def test_auto_on_a_dense_board_agrees_with_cp_sat(seed):
    position = dense_board(seed)
    auto = api.solve(position, time_limit=30)
    cpsat = api.solve(position, solver="cpsat", time_limit=30)
    assert RouteSetValidator(load_position(position)).validate(auto["routes"])["revenue"] == auto["revenue"]
    assert auto["revenue"] <= cpsat["bound"] and cpsat["revenue"] <= auto["bound"]
    if auto["status"] == cpsat["status"] == "optimal":
        assert auto["revenue"] == cpsat["revenue"]
    assert auto["status"] == "optimal", f"auto: {auto['revenue']} of at most {auto['bound']} within 30 s"
