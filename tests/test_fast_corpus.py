"""The fast solver on every real position of the bundled corpus (fixtures/corpus).

Per position: exactly the oracle's total where the oracle is exact, at
least the recorded run (as the 18xx.games engine scores it), at least the
18xx.games auto-router and navig18xx, routes the validator accepts at the
claimed revenue, ``status: optimal``. :func:`test_runs_the_others_missed`
prints the positions where it beats the players or the other tools, with
both figures. Positions of games whose rule set is not written yet are
skipped.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from conftest import CORPUS

from routecalc.model import load_position
from routecalc.solvers.fast import solve_fast
from routecalc.validate import RouteSetValidator

FILES = sorted(CORPUS.glob("*/**/*.json"))


@cache
def solved(path: Path):
    """(reference, answer, validated) for one corpus file; None if its game has its own search."""
    data = json.loads(path.read_text())
    position = load_position(data)
    if not position.rules.route_engine:
        return None
    answer = solve_fast(position)
    return data["reference"], answer, RouteSetValidator(position).validate(answer["routes"])


def others(reference: dict) -> dict[str, int]:
    """What the players and the other tools got on this position."""
    figures = {}
    if "recomputed" in reference:
        figures["recorded"] = reference["recomputed"]["total"]
    if reference.get("autorouter", {}).get("total") is not None:
        figures["autorouter"] = reference["autorouter"]["total"]
    if "best" in reference:
        figures["navig18xx"] = reference["best"]["revenue"]
    return figures


def test_corpus_is_present():
    assert len(FILES) >= 500, f"expected the 500 corpus positions under {CORPUS}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fast_solves_corpus_position(path):
    result = solved(path)
    if result is None:
        pytest.skip("a game answered by its own search, not the fast solver")
    reference, answer, validated = result
    oracle = reference["oracle"]
    if oracle["exact"]:
        assert answer["revenue"] == oracle["total"]
    for source, figure in others(reference).items():
        assert answer["revenue"] >= figure, f"below the {source} total {figure}"
    assert answer["status"] == "optimal" and answer["bound"] == answer["revenue"]
    assert validated["revenue"] == answer["revenue"]
    assert [r["revenue"] for r in validated["routes"]] == [r["revenue"] for r in answer["routes"]]


def test_runs_the_others_missed(capsys):
    """List every position where the fast solver earns more than the players
    or another tool, with both figures; each such run is validated."""
    lines = []
    for path in FILES:
        result = solved(path)
        if result is None:
            continue
        reference, answer, validated = result
        assert validated["revenue"] == answer["revenue"]
        beaten = {k: v for k, v in others(reference).items() if answer["revenue"] > v}
        if beaten:
            lines.append(
                f"{path.parent.name}/{path.name}: fast {answer['revenue']}, "
                + ", ".join(f"{k} {v}" for k, v in beaten.items())
            )
    with capsys.disabled():
        print(f"\n{len(lines)} corpus positions where the fast solver beats the players or another tool:")
        print("\n".join(lines))
