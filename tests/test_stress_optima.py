"""The stress fixtures' recorded optima (``reference.optimum``, written by
benchmarks/make_stress_fixtures.py).

The default run checks that each fixture records an optimum and the
solvers that proved it, and that the fast solver under a short limit
brackets it (revenue <= optimum <= bound). With ``-m slow`` each recorded solver proves
the optimum again with no limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT

from routecalc import load_position_file
from routecalc.graph import compile_position
from routecalc.solvers import SOLVERS, Limits
from routecalc.validate import RouteSetValidator

STRESS = sorted((ROOT / "fixtures").glob("stress-*.json"))


def recorded(path: Path) -> dict:
    return json.loads(path.read_text())["reference"]


@pytest.mark.parametrize("path", STRESS, ids=lambda p: p.stem)
def test_each_stress_fixture_records_its_optimum(path):
    reference = recorded(path)
    assert isinstance(reference["optimum"], int) and reference["optimum"] > 0
    assert len(set(reference["proved_by"])) >= 2 and set(reference["proved_by"]) <= set(SOLVERS)


@pytest.mark.parametrize("path", STRESS, ids=lambda p: p.stem)
def test_the_fast_solver_under_a_short_limit_brackets_the_optimum(path):
    """A cheap check against a true bound from another solver (the kernels)."""
    position = load_position_file(path)
    answer = SOLVERS["fast"](position, compile_position(position), Limits(time_limit=0.3))
    optimum = recorded(path)["optimum"]
    assert answer["revenue"] <= optimum <= answer["bound"]
    assert answer["status"] == ("optimal" if answer["bound"] == optimum == answer["revenue"] else "feasible")


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["auto", "cpsat", "fast"])
@pytest.mark.parametrize("path", STRESS, ids=lambda p: p.stem)
def test_the_recorded_solvers_prove_the_optimum(path, solver):
    reference = recorded(path)
    if solver not in reference["proved_by"]:
        pytest.skip(f"{solver} is not among the solvers that proved {path.stem}")
    position = load_position_file(path)
    answer = SOLVERS[solver](position, compile_position(position), Limits())
    assert (answer["status"], answer["revenue"], answer["bound"]) == ("optimal",) + (reference["optimum"],) * 2
    assert RouteSetValidator(position).validate(answer["routes"])["revenue"] == answer["revenue"]
