"""The reference solver on the generic corpus: it finds the independent
oracle's optimum where that is exact, at least the recorded and the
auto-router's revenue everywhere, and routes the validator accepts.

The default run takes every third position of each game whose size, the
number of routes the 18xx.games auto-router enumerated for it
(``reference.autorouter.routes_per_train``, known before solving), is at
most ``DEFAULT_ROUTE_LIMIT``; the plain exhaustive solver grows with that
count. ``pytest -m slow`` runs every position of the corpus.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CORPUS

from routecalc import load_position, validate
from routecalc.solvers.reference import solve_reference

GENERIC = CORPUS / "generic"
GAMES = ("1830", "18Chesapeake", "1867")
DEFAULT_STEP = 3
DEFAULT_ROUTE_LIMIT = 1000


def route_count(path: Path) -> int | None:
    """Routes the auto-router enumerated (None where it did not run)."""
    autorouter = json.loads(path.read_text())["reference"].get("autorouter") or {}
    per_train = autorouter.get("routes_per_train")
    return sum(per_train.values()) if per_train else None


def corpus_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


ALL = [p for game in GAMES for p in sorted((GENERIC / game).glob("*.json"))]
DEFAULT = [
    p
    for game in GAMES
    for p in sorted((GENERIC / game).glob("*.json"))[::DEFAULT_STEP]
    if (route_count(p) or DEFAULT_ROUTE_LIMIT + 1) <= DEFAULT_ROUTE_LIMIT
]


def check(path: Path) -> None:
    data = json.loads(path.read_text())
    reference = data["reference"]
    position = load_position(data)
    answer = solve_reference(position)
    name, revenue = corpus_id(path), answer["revenue"]
    assert answer["status"] == "optimal" and answer["bound"] == revenue
    oracle = reference["oracle"]
    if oracle["exact"]:
        assert revenue == oracle["total"], f"{name}: reference {revenue}, oracle {oracle['total']}"
    # Old games store no recorded total: the engine's recomputed one stands in.
    recorded = (reference.get("recorded") or {}).get("total")
    if recorded is None and reference.get("recorded"):
        recorded = reference["recomputed"]["total"]
    if recorded is not None:
        assert revenue >= recorded, f"{name}: reference {revenue} below recorded {recorded}"
    autorouter = (reference.get("autorouter") or {}).get("total")
    if autorouter is not None:
        assert revenue >= autorouter, f"{name}: reference {revenue} below auto-router {autorouter}"
    # The routes it returns are ones the validator accepts, for the same figures.
    checked = validate(position, answer["routes"])
    assert checked["revenue"] == revenue
    assert [r["revenue"] for r in checked["routes"]] == [r["revenue"] for r in answer["routes"]]


def test_default_subset_covers_every_game():
    counts = {game: sum(p.parent.name == game for p in DEFAULT) for game in GAMES}
    assert all(n >= 20 for n in counts.values()), counts


@pytest.mark.parametrize("path", DEFAULT, ids=[corpus_id(p) for p in DEFAULT])
def test_reference_solver_on_the_default_subset(path):
    check(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", ALL, ids=[corpus_id(p) for p in ALL])
def test_reference_solver_on_the_whole_corpus(path):
    check(path)
