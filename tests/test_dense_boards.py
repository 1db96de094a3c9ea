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

import sys

import pytest
from conftest import ROOT

from routecalc import api
from routecalc.model import load_position
from routecalc.validate import RouteSetValidator

sys.path.insert(0, str(ROOT / "benchmarks"))
from dense_boards import LONG_TRAINS, dense_board  # noqa: E402

#: Shares of cells given more track: lighter than the benchmark's long set.
SHARES = (0.3, 0.5, 0.8)
SEEDS = [*range(24), *(pytest.param(seed, marks=pytest.mark.slow) for seed in range(24, 120))]


@pytest.mark.parametrize("seed", SEEDS)
def test_auto_on_a_dense_board_agrees_with_cp_sat(seed):
    position = dense_board(seed, LONG_TRAINS, SHARES)
    auto = api.solve(position, time_limit=30)
    cpsat = api.solve(position, solver="cpsat", time_limit=30)
    assert RouteSetValidator(load_position(position)).validate(auto["routes"])["revenue"] == auto["revenue"]
    assert auto["revenue"] <= cpsat["bound"] and cpsat["revenue"] <= auto["bound"]
    if auto["status"] == cpsat["status"] == "optimal":
        assert auto["revenue"] == cpsat["revenue"]
    assert auto["status"] == "optimal", f"auto: {auto['revenue']} of at most {auto['bound']} within 30 s"
