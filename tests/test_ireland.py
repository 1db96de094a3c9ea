"""18Ireland: hex trains, broad gauge only, narrow-gauge feeders, and the
two real games of the bundled corpus (fixtures/corpus/18Ireland) checked figure by figure.

Hand-built boards are flat hexes; ``N`` marks narrow track. Company ``CO``
operates. The corpus part skips positions whose recorded routes the
18xx.games engine could not recompute (no ``recomputed.per_route``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import boards
import pytest
from conftest import CORPUS

from routecalc.api import solve, validate
from routecalc.errors import PositionError, RouteViolation
from routecalc.graph import compile_position
from routecalc.model import load_position
from routecalc.rules.ireland import HEX_TRAINS

IRELAND = CORPUS / "18Ireland"
FILES = sorted(IRELAND.glob("*.json"))
N = ",track:narrow"


def board(hexes: list[dict], trains: list) -> dict:
    return boards.position(
        hexes, trains, game="18Ireland", company="CO", phase={"name": "4", "colors": ["yellow", "green"]}
    )


def rule_violation(position: dict, routes: list[dict]) -> str:
    with pytest.raises(RouteViolation) as err:
        validate(position, routes)
    return err.value.rule


# -- trains -----------------------------------------------------------------


def test_catalogue_hex_trains_pay_every_stop():
    position = load_position(board([{"id": "A1", "code": ""}], [*HEX_TRAINS, "D"]))
    limits = {t.name: t.hex_limit for t in position.trains}
    assert limits == {"1H'": 1, "2H'": 2, "3H'": 3, "2H": 2, "4H": 4, "6H": 6, "8H": 8, "10H": 10, "D": None}
    assert all(t.pays_every_stop and t.multiplier == 1 for t in position.trains)
    assert all(g.visit >= 999 for t in position.trains for g in t.groups)


def test_unknown_train_and_bad_distance_are_named():
    with pytest.raises(PositionError, match=r"trains\[0\].*unknown 18Ireland train '5'.*2H"):
        load_position(board([{"id": "A1", "code": ""}], ["5"]))
    with pytest.raises(PositionError, match=r"trains\[1\].*cell edges"):
        load_position(board([{"id": "A1", "code": ""}], ["2H", {"name": "3H", "distance": [{"nodes": ["city"]}]}]))


def test_train_object_distance_counts_edges():
    position = load_position(board([{"id": "A1", "code": ""}], [{"name": "5H", "distance": 5, "price": 1}]))
    assert position.trains[0].hex_limit == 5


def test_a_distance_written_as_a_float_of_whole_value_is_that_whole_number():
    """1.0 is the whole number 1 (it was refused as "a whole number >= 1; got 1")."""
    position = load_position(board([{"id": "A1", "code": ""}], [{"name": "6H", "distance": 1.0}]))
    assert position.trains[0].hex_limit == 1
    with pytest.raises(PositionError, match=r"whole number >= 1; got 1\.5"):
        load_position(board([{"id": "A1", "code": ""}], [{"name": "6H", "distance": 1.5}]))


# -- hex distance ---------------------------------------------------------------


def line(trains: list) -> dict:
    """A1 city (token) with a town in the same cell, A5 town, A9 city: 0 + 2 + 2 edges."""
    return board(
        [
            {"id": "A1", "code": "city=revenue:30;town=revenue:10;path=a:_0,b:_1;path=a:_1,b:0", "tokens": [["CO"]]},
            {"id": "A3", "code": "path=a:3,b:0"},
            {"id": "A5", "code": "town=revenue:20;path=a:3,b:_0;path=a:_0,b:0"},
            {"id": "A7", "code": "path=a:3,b:0"},
            {"id": "A9", "code": "city=revenue:40;path=a:3,b:_0"},
        ],
        trains,
    )


def test_distance_counts_crossed_cell_edges_not_stops():
    position = line(["2H", "4H"])
    two = {"train": "2H", "nodes": ["A1-0", "A1-1", "A5-0"]}
    assert validate(position, [two])["revenue"] == 30 + 10 + 20  # 3 stops, 2 edges
    four = {"train": "4H", "nodes": ["A1-0", "A1-1", "A5-0", "A9-0"]}
    assert validate(position, [four])["revenue"] == 100
    assert rule_violation(line(["2H"]), [{"train": "2H", "nodes": ["A1-1", "A5-0", "A9-0"]}]) == "too_long"


def test_moving_inside_a_cell_is_free():
    assert validate(line(["1H'"]), [{"train": "1H'", "nodes": ["A1-0", "A1-1"]}])["revenue"] == 40
    assert solve(line(["1H'"]))["revenue"] == 30 + 10  # A5 is two edges away


def test_solver_uses_the_whole_hex_allowance():
    assert solve(line(["2H"]))["revenue"] == 60
    assert solve(line(["3H'"]))["revenue"] == 60  # A9 needs a fourth edge
    assert solve(line(["4H"]))["revenue"] == 100
    answer = solve(line(["D"]))
    assert answer["revenue"] == 100
    assert answer["routes"][0]["nodes"] in (["A1-0", "A1-1", "A5-0", "A9-0"], ["A9-0", "A5-0", "A1-1", "A1-0"])


def test_no_single_stop_run():
    assert rule_violation(line(["1H'"]), [{"train": "1H'", "nodes": ["A1-0"]}]) == "too_few_stops"


# -- gauge ----------------------------------------------------------------------


def gauge_board(track: str) -> dict:
    return board(
        [
            {"id": "A1", "code": f"city=revenue:30;path=a:0,b:_0,track:{track}", "tokens": [["CO"]]},
            {"id": "A3", "code": f"city=revenue:20;path=a:3,b:_0,track:{track}"},
        ],
        ["2H"],
    )


def test_trains_run_on_broad_and_dual_track_only():
    route = [{"train": "2H", "nodes": ["A1-0", "A3-0"]}]
    assert rule_violation(gauge_board("narrow"), route) == "wrong_gauge"
    assert solve(gauge_board("narrow"))["revenue"] == 0
    assert validate(gauge_board("dual"), route)["revenue"] == 50
    assert solve(gauge_board("dual"))["revenue"] == 50


# -- narrow-gauge feeders -----------------------------------------------------------


def feeder_board(trains: list) -> dict:
    """S (A1) and X (A5) joined by broad track through A3; X also runs on to Y (A7).

    Narrow: S - T1 (B2, 10) - T2 (B4, a city of 20 full of another company's
    tokens) - X (a town with broad paths, 20); X - T3 (B6, 40).
    """
    return board(
        [
            {"id": "A1", "code": "city=revenue:30;path=a:0,b:_0;path=a:5,b:_0" + N, "tokens": [["CO"]]},
            {"id": "A3", "code": "path=a:3,b:0"},
            {"id": "A5", "code": f"town=revenue:20;path=a:3,b:_0;path=a:0,b:_0;path=a:4,b:_0{N};path=a:5,b:_0{N}"},
            {"id": "A7", "code": "city=revenue:10;path=a:3,b:_0", "tokens": [["CO"]]},
            {"id": "B2", "code": f"town=revenue:10;path=a:2,b:_0{N};path=a:_0,b:0{N}"},
            {"id": "B4", "code": f"city=revenue:20;path=a:3,b:_0{N};path=a:1,b:_0{N}", "tokens": [["OTHER"]]},
            {"id": "B6", "code": "town=revenue:40;path=a:2,b:_0" + N},
        ],
        trains,
    )


def feeders_by_id(position_json: dict) -> dict[str, int]:
    """What the feeders add to each stop for the position's first train."""
    position = load_position(position_json)
    rules, train = position.rules, position.trains[0]
    return {
        position.nodes[n].id: sum(rules.stop_value(position.nodes[f], train, position) for f in fed)
        for n, fed in rules.feeders(position).items()
    }


def test_feeder_chain_passes_tokens_and_ends_at_a_broad_station():
    feeders = feeders_by_id(feeder_board(["2H"]))
    assert feeders["A1-0"] == 10 + 20  # T1, T2 (blocked city: tokens do not stop the walk); X ends it
    assert feeders["A5-0"] == 40 + 20 + 10  # T3, T2, T1; S ends it
    assert "A7-0" not in feeders


def test_a_d_train_is_fed_the_diesel_value():
    """A town on narrow track worth yellow_10|diesel_50 feeds a D its 50 (every
    value a D is paid is its diesel_ entry) and a 2H its 10: the D was fed 10."""
    hexes = [
        {"id": "A1", "code": "city=revenue:20;path=a:0,b:_0" + f";path=a:5,b:_0{N}", "tokens": [["CO"]]},
        {"id": "A3", "code": "town=revenue:10;path=a:3,b:_0"},
        {"id": "B2", "code": f"town=revenue:yellow_10|diesel_50;path=a:2,b:_0{N}"},
    ]
    for train, fed in (("D", 50), ("2H", 10)):
        answer = solve(board(hexes, [train]))
        assert (answer["revenue"], answer["status"]) == (20 + 10 + fed, "optimal")
        checked = validate(board(hexes, [train]), [{"train": train, "nodes": ["A1-0", "A3-0"]}])
        assert checked["revenue"] == 20 + 10 + fed
        assert {"node": "A1-0", "type": "city", "value": 20, "narrow": fed} in checked["routes"][0]["stops"]


def test_feeders_count_per_stop_and_per_train():
    position = feeder_board(["2H", "1H'"])
    result = validate(
        position, [{"train": "2H", "nodes": ["A1-0", "A5-0"]}, {"train": "1H'", "nodes": ["A5-0", "A7-0"]}]
    )
    first, second = result["routes"]
    # T1 and T2 feed both stops of the first route, X's feeders count again for the second train.
    assert first["revenue"] == (30 + 30) + (20 + 70)
    assert second["revenue"] == (20 + 70) + 10
    assert first["stops"] == [
        {"node": "A1-0", "type": "city", "value": 30, "narrow": 30},
        {"node": "A5-0", "type": "town", "value": 20, "narrow": 70},
    ]
    assert solve(position)["revenue"] == result["revenue"] == 250


def test_broad_pathed_town_ends_the_walk_unpaid():
    # B2 carries a broad path as well: S gets nothing, even for the narrow town C3 beyond it.
    hexes = [
        {"id": "A1", "code": "city=revenue:30;path=a:0,b:_0;path=a:5,b:_0" + N, "tokens": [["CO"]]},
        {"id": "B2", "code": f"town=revenue:10;path=a:2,b:_0{N};path=a:_0,b:5{N};path=a:_0,b:0"},
        {"id": "C3", "code": "town=revenue:40;path=a:2,b:_0" + N},
    ]
    feeders = feeders_by_id(board(hexes, ["2H"]))
    assert "A1-0" not in feeders
    assert feeders["B2-0"] == 40


def test_dual_track_is_walked_but_a_dual_pathed_node_ends_the_walk():
    # A1 - B2 (dual plain track) - C3 narrow town: fed. A1 - A3 town with a dual path: not fed, nor A5 beyond.
    hexes = [
        {"id": "A1", "code": "city=revenue:30;path=a:5,b:_0,track:dual;path=a:0,b:_0" + N, "tokens": [["CO"]]},
        {"id": "B2", "code": "path=a:2,b:5,track:dual"},
        {"id": "C3", "code": "town=revenue:10;path=a:2,b:_0" + N},
        {"id": "A3", "code": f"town=revenue:20;path=a:3,b:_0{N};path=a:_0,b:0,track:dual"},
        {"id": "A5", "code": "town=revenue:40;path=a:3,b:_0,track:dual"},
    ]
    assert feeders_by_id(board(hexes, ["2H"]))["A1-0"] == 10


def test_narrow_junction_feeds_both_branches():
    hexes = [
        {"id": "A1", "code": "city=revenue:30;path=a:0,b:_0" + N, "tokens": [["CO"]]},
        {"id": "A3", "code": f"junction;path=a:3,b:_0{N};path=a:_0,b:0{N};path=a:_0,b:5{N}"},
        {"id": "A5", "code": "town=revenue:10;path=a:3,b:_0" + N},
        {"id": "B4", "code": "town=revenue:20;path=a:2,b:_0" + N},
    ]
    assert feeders_by_id(board(hexes, ["2H"]))["A1-0"] == 30


def test_a_junction_with_broad_track_ends_the_walk():
    """A junction is a node: with a broad path of its own it ends the walk
    like a broad station (the walk once went through, and C3's 10 fed A1)."""
    hexes = [
        {"id": "A1", "code": "city=revenue:20;path=a:0,b:_0;path=a:5,b:_0" + N, "tokens": [["CO"]]},
        {"id": "A3", "code": "city=revenue:30;path=a:3,b:_0"},
        {"id": "B2", "code": f"junction;path=a:2,b:_0{N};path=a:0,b:_0;path=a:5,b:_0{N}"},
        {"id": "C3", "code": "town=revenue:10;path=a:2,b:_0" + N},
    ]
    assert "A1-0" not in feeders_by_id(board(hexes, ["2H"]))
    assert solve(board(hexes, ["2H"]))["revenue"] == 50
    narrow = [
        dict(h, code=h["code"].replace("path=a:0,b:_0;", f"path=a:0,b:_0{N};")) if h["id"] == "B2" else h for h in hexes
    ]
    assert feeders_by_id(board(narrow, ["2H"]))["A1-0"] == 10  # all narrow: passed


def test_a_broad_station_reached_twice_still_ends_the_walk():
    """route-rules.md: the first node with a broad path ends the walk. Here the
    broad-pathed town C5 is reached along two narrow tracks (via B4 and via C3);
    T2 (D6, 40) lies beyond it and does not feed S. (18xx.games' depth-first
    walk enters a node it has already met and would count T2 for S: 50.)"""
    hexes = [
        {"id": "A1", "code": "city=revenue:30;path=a:0,b:_0;path=a:5,b:_0" + N, "tokens": [["CO"]]},
        {"id": "B2", "code": f"town=revenue:10;path=a:2,b:_0{N};path=a:0,b:_0{N};path=a:5,b:_0{N}"},
        {"id": "B4", "code": "path=a:3,b:5" + N},
        {"id": "C3", "code": "path=a:2,b:0" + N},
        {"id": "C5", "code": f"town=revenue:20;path=a:3,b:_0{N};path=a:2,b:_0{N};path=a:5,b:_0{N};path=a:0,b:_0"},
        {"id": "D6", "code": "town=revenue:40;path=a:2,b:_0" + N},
    ]
    feeders = feeders_by_id(board(hexes, ["2H"]))
    assert feeders["A1-0"] == 10
    assert feeders["C5-0"] == 40 + 10


# -- the corpus: two real games ---------------------------------------------------------


def corpus_ids(files):
    return [f.stem for f in files]


def load(path: Path) -> tuple[dict, dict]:
    data = json.loads(path.read_text())
    return data["position"], data["reference"]


def recomputed_routes(reference: dict) -> list[int] | None:
    """18xx.games' own revenue per recorded route, or None where it could not recompute them."""
    recomputed = reference.get("recomputed")
    if not isinstance(recomputed, dict) or recomputed.get("error"):
        return None
    per_route = recomputed.get("per_route")
    if not isinstance(per_route, list) or not all(isinstance(x, int) for x in per_route):
        return None
    return per_route


def test_corpus_is_present():
    assert len(FILES) >= 100, f"expected the 18Ireland corpus in {IRELAND}"


@pytest.mark.parametrize("path", FILES, ids=corpus_ids(FILES))
def test_validator_reproduces_18xx_games_revenue(path):
    position, reference = load(path)
    expected = recomputed_routes(reference)
    if expected is None:
        pytest.skip("18xx.games could not recompute the recorded routes")
    result = validate(position, reference["recorded"]["routes"])
    got = [r["revenue"] for r in result["routes"]]
    assert got == expected, f"{path.name}: routecalc {got}, 18xx.games {expected}"
    narrow = [sum(s.get("narrow", 0) for s in r["stops"]) for r in result["routes"]]
    shown = [_narrow_in(r.get("revenue_str", "")) for r in reference["recorded"]["routes"]]
    assert narrow == shown, f"{path.name}: narrow-gauge revenue {narrow}, 18xx.games shows {shown}"


def _narrow_in(revenue_str: str) -> int:
    """The feeder amount 18xx.games prints in a route's revenue string ("... (Narrow: £30)")."""
    marker = "(Narrow: "
    if marker not in revenue_str:
        return 0
    amount = revenue_str.split(marker, 1)[1].split(")", 1)[0]
    return int("".join(ch for ch in amount if ch.isdigit()))


@pytest.mark.parametrize("path", FILES, ids=corpus_ids(FILES))
def test_hex_distance_matches_recorded_routes(path):
    """The edges the engine counts are the cells 18xx.games lists minus one, and
    a route that uses its whole allowance is too long for a train one edge shorter."""
    position, reference = load(path)
    graph = compile_position(load_position(position))
    for i, route in enumerate(reference["recorded"]["routes"]):
        checked = validate(position, [route])["routes"][0]
        assert checked["hexes"] == route["hexes"]
        edges = 0
        for a, b, cells in zip(route["nodes"], route["nodes"][1:], route["hexes"]):
            start = graph.stop(a)
            used = [
                c
                for c in graph.connections_between(start, graph.stop(b))
                if list(graph.oriented_cells(c, start)) == cells
            ]
            assert [int(graph.conn_edges[c]) for c in used] == [len(cells) - 1]
            edges += len(cells) - 1
        limit = HEX_TRAINS.get(route["train"])
        assert limit is not None and edges <= limit
        if edges == limit and edges > 1:
            shorter = copy.deepcopy(position)
            shorter["trains"] = [{"name": route["train"], "distance": limit - 1}]
            assert rule_violation(shorter, [route]) == "too_long", f"{path.name} route {i}"


GAINS: dict[str, tuple[int, int]] = {}


@pytest.fixture(scope="module")
def gains_report(request):
    """Print, once the optimiser tests ran, where the optimiser beat the players or the auto-router."""
    yield GAINS
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not GAINS:
        return
    above_recorded = {k: g for k, (g, _) in GAINS.items() if g > 0}
    above_auto = {k: g for k, (_, g) in GAINS.items() if g > 0}
    line = (
        f"18Ireland optimiser on {len(GAINS)} positions: above the recorded run on {len(above_recorded)}"
        + (
            f" (largest +{max(above_recorded.values())} at {max(above_recorded, key=above_recorded.get)})"
            if above_recorded
            else ""
        )
        + f", above the auto-router on {len(above_auto)}"
        + (f" (largest +{max(above_auto.values())})" if above_auto else "")
    )
    with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        reporter.write("\n")
        reporter.write_line(line)


@pytest.mark.parametrize("path", FILES, ids=corpus_ids(FILES))
def test_optimiser_meets_recorded_autorouter_and_oracle(path, gains_report):
    position, reference = load(path)
    answer = solve(position)
    recorded = reference["recorded"]["total"]
    if recorded is None:
        per_route = recomputed_routes(reference)
        recorded = sum(per_route) if per_route is not None else 0
    auto = reference["autorouter"]["total"] or 0
    oracle = reference["oracle"]
    assert answer["revenue"] >= recorded, f"{path.name}: {answer['revenue']} below the recorded {recorded}"
    assert answer["revenue"] >= auto, f"{path.name}: {answer['revenue']} below the auto-router's {auto}"
    if oracle["exact"]:
        assert answer["revenue"] == oracle["total"], f"{path.name}: {answer['revenue']}, optimum {oracle['total']}"
    checked = validate(position, answer["routes"])
    assert checked["revenue"] == answer["revenue"]
    assert [r["revenue"] for r in checked["routes"]] == [r["revenue"] for r in answer["routes"]]
    gains_report[path.stem] = (answer["revenue"] - recorded, answer["revenue"] - auto)


#: Every tenth brown-phase position (long routes, many feeders).
LATE = [f for f in FILES if "brown" in json.loads(f.read_text())["position"]["phase"]["colors"]][::10]


@pytest.mark.parametrize("trains", [["D"], ["10H", "8H"], ["6H", "4H", "2H", "1H'"]], ids=["D", "10H+8H", "mixed"])
@pytest.mark.parametrize("path", LATE, ids=corpus_ids(LATE))
def test_default_solver_agrees_with_reference_on_other_trains(path, trains):
    """Late boards with trains their companies did not own: an unlimited D, long and short H trains."""
    position, _ = load(path)
    position = {**position, "trains": trains}
    fast, plain = solve(position), solve(position, "reference")
    assert fast["revenue"] == plain["revenue"], (
        f"{path.name} {trains}: {fast['revenue']} vs reference {plain['revenue']}"
    )
    assert validate(position, fast["routes"])["revenue"] == fast["revenue"]
