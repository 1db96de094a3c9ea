"""The validator against real play: for every generic corpus position with
recorded routes (1830, 18Chesapeake, 1867 on 18xx.games), it scores those
routes exactly as the 18xx.games engine recomputed them, route by route.

1867 needs ``no_hex_twice``, the Timmins ``connect`` bonus and ``fill``
trains; the navig18xx files have no recorded routes and are not here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CORPUS

from routecalc import load_position, validate

GENERIC = CORPUS / "generic"
FILES = sorted(GENERIC.glob("*/*.json"))


def _recorded(path: Path) -> bool:
    return bool(json.loads(path.read_text())["reference"].get("recorded"))


RECORDED = [p for p in FILES if _recorded(p)]


def corpus_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def test_corpus_is_present():
    assert len(FILES) == 361, f"expected the generic corpus (361 files) in {GENERIC}"
    counts = {game: sum(p.parent.name == game for p in RECORDED) for game in ("1830", "18Chesapeake", "1867")}
    assert counts == {"1830": 104, "18Chesapeake": 178, "1867": 76}


@pytest.mark.parametrize("path", RECORDED, ids=[corpus_id(p) for p in RECORDED])
def test_recorded_routes_score_as_recomputed(path):
    data = json.loads(path.read_text())
    reference = data["reference"]
    answer = validate(load_position(data), reference["recorded"]["routes"])
    got = [r["revenue"] for r in answer["routes"]]
    want = reference["recomputed"]["per_route"]
    assert got == want, f"{corpus_id(path)}: validator {got}, 18xx.games recomputed {want}"
    assert answer["revenue"] == sum(want)
    assert [r["nodes"] for r in answer["routes"]] == [r["nodes"] for r in reference["recorded"]["routes"]]
