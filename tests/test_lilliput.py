"""18Lilliput: free towns and harbours, metropolises and Mildendo in range,
Mildendo at route ends, D trains doubled, obsolete trains at half pay
(rounded down, per train), a doubled last round.

Boards are columns of squares ``A1, A2, ...`` (edge 0 leads to the next
cell, edge 2 back); company ``A`` operates. Every figure is checked by
every solver against the reference (:func:`test_solvers_agree.check_agreement`),
so each hand-computed revenue is also an agreement test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import boards
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import positions
from test_solvers_agree import check_agreement

from routecalc.api import solve, validate
from routecalc.errors import PositionError, RouteViolation
from routecalc.model import load_position
from routecalc.rules.lilliput import TRAINS

CITY, TOWN = "city", "town"
RING = Path(__file__).resolve().parents[1] / "fixtures" / "lilliput-mildendo-ring.json"


def sq(part: str, revenue: int, *, end: bool = False, **keys) -> str:
    """A stop on the column: joined up and down, or only up when ``end``."""
    return boards.stop(part, revenue, edges=(2,) if end else (0, 2), **keys)


def board(*codes: str, trains: list, token_at: int = 0, options: dict | None = None) -> dict:
    """A column of squares with company A's token on the city at ``token_at``
    (in its first slot)."""

    def token(code: str) -> list:
        slots = re.search(r"slots:(\d+)", code)
        return [["A"] + [None] * (int(slots.group(1)) - 1 if slots else 0)]

    cells = [
        boards.cell(f"A{i + 1}", code, tokens=token(code) if i == token_at else None) for i, code in enumerate(codes)
    ]
    return boards.position(cells, trains, game="18Lilliput", layout="square", options=options)


def violation(position: dict, routes: list[dict]) -> str:
    with pytest.raises(RouteViolation) as err:
        validate(position, routes)
    return err.value.rule


def nodes(n: int) -> list[str]:
    return [f"A{i + 1}-0" for i in range(n)]


# -- trains -----------------------------------------------------------------


def test_catalogue():
    position = load_position(board(sq(CITY, 10), trains=list(TRAINS)))
    got = {
        t.name: ([(sorted(g.categories), g.pay, g.visit) for g in t.groups], t.multiplier, t.divisor)
        for t in position.trains
    }
    free = (["town"], 999, 999)
    assert got == {
        "2": ([(["city"], 2, 2), free], 1, 1),
        "3": ([(["city"], 3, 3), free], 1, 1),
        "4": ([(["city"], 4, 4), free], 1, 1),
        "5": ([(["city"], 5, 5), free], 1, 1),
        "3D": ([(["city"], 3, 3), free], 2, 1),
        "4D": ([(["city"], 4, 4), free], 2, 1),
    }
    obsolete = load_position(board(sq(CITY, 10), trains=[{"name": "4", "obsolete": True}])).trains[0]
    assert (obsolete.obsolete, obsolete.divisor, obsolete.factor) == (True, 2, 1)


@pytest.mark.parametrize(
    ("trains", "where", "message"),
    [
        (["2", "6"], r"trains\[1\]", r"unknown 18Lilliput train '6' \(known: 2, 3, 4, 5, 3D, 4D\)"),
        (["D"], r"trains\[0\]", r"unknown 18Lilliput train 'D'"),
        ([{"name": "2", "obsolete": "yes"}], r"trains\[0\]", "obsolete must be true or false"),
        ([{"name": "2", "wagon": 1}], r"trains\[0\]", "unknown train key 'wagon'"),
    ],
)
def test_bad_trains_are_named(trains, where, message):
    with pytest.raises(PositionError, match=f"{where}.*{message}"):
        load_position(board(sq(CITY, 10), trains=trains))


@pytest.mark.parametrize(
    ("code", "options", "where", "message"),
    [
        (sq("offboard", 20, end=True), None, "cell A2", "no offboards"),
        (sq(TOWN, 20, kind="metropolis"), None, "cell A2", "a metropolis is a city in 18Lilliput, not a town"),
        (sq(CITY, 20, kind="harbor"), None, "cell A2", "a harbor is a town or offboard"),
        (sq(CITY, 20, kind="sugar"), None, "cell A2", "kind 'sugar' has no meaning in 18Lilliput"),
        (sq(CITY, 20), {"last_round": 1}, "options.last_round", "true or false"),
        (sq(CITY, 20), {"machines": {}}, "options.machines", "unknown option for 18Lilliput"),
    ],
)
def test_bad_boards_and_options_are_named(code, options, where, message):
    with pytest.raises(PositionError, match=f"{where}.*{message}"):
        load_position(board(sq(CITY, 10), code, trains=["2"], options=options))


# -- range -------------------------------------------------------------------


def test_towns_and_harbours_are_free_beyond_the_range():
    # 20 (token) - town 10 - harbour 10 - town 10 - 30 - town 5 - 40
    codes = (
        sq(CITY, 20),
        sq(TOWN, 10),
        sq(TOWN, 10, kind="harbor"),
        sq(TOWN, 10),
        sq(CITY, 30),
        sq(TOWN, 5),
        sq(CITY, 40, end=True),
    )
    # A 2-train takes both cities and every town between and after them, not the 40.
    assert check_agreement(board(*codes, trains=["2"])) == 20 + 10 + 10 + 10 + 30 + 5
    assert check_agreement(board(*codes, trains=["3"])) == 125
    assert violation(board(*codes, trains=["2"]), [boards.route("2", *nodes(7))]) == "too_long"
    scored = validate(board(*codes, trains=["2"]), [boards.route("2", *nodes(6))])
    assert scored["revenue"] == 85
    assert [s["value"] for s in scored["routes"][0]["stops"]] == [20, 10, 10, 10, 30, 5]


def test_offboard_harbours_end_routes_for_free():
    # harbour 20 - 20 (token) - 30 - harbour 20: both cities and both harbours
    codes = (
        boards.stop("offboard", 20, edges=(0,), kind="harbor"),
        sq(CITY, 20),
        sq(CITY, 30),
        sq("offboard", 20, end=True, kind="harbor"),
    )
    assert check_agreement(board(*codes, trains=["2"], token_at=1)) == 90


def test_metropolis_and_mildendo_count_in_the_range():
    # 20 - metropolis 50 (token) - Mildendo 60 at the end
    codes = (sq(CITY, 20), sq(CITY, 50, kind="metropolis"), sq(CITY, 60, end=True, kind="mildendo"))
    assert check_agreement(board(*codes, trains=["2"], token_at=1)) == 50 + 60
    assert check_agreement(board(*codes, trains=["3"], token_at=1)) == 130
    assert violation(board(*codes, trains=["2"], token_at=1), [boards.route("2", *nodes(3))]) == "too_long"


def test_mildendo_only_starts_or_ends_a_route():
    # 20 (token) - town 10 - Mildendo 100 - 30: the route stops at Mildendo
    codes = (sq(CITY, 20), sq(TOWN, 10), sq(CITY, 100, kind="mildendo"), sq(CITY, 30, end=True))
    position = board(*codes, trains=["4"])
    assert check_agreement(position) == 130
    assert violation(position, [boards.route("4", *nodes(4))]) == "terminal_passed"
    with pytest.raises(RouteViolation, match="passes through A3-0, which only ends a route"):
        validate(position, [boards.route("4", *nodes(4))])
    assert validate(position, [boards.route("4", *nodes(3)[::-1])])["revenue"] == 130


def test_mildendo_offboard_tile():
    codes = (sq(CITY, 20), sq(TOWN, 10), sq("offboard", 60, end=True, kind="mildendo"))
    assert check_agreement(board(*codes, trains=["2"])) == 90


# -- revenue -------------------------------------------------------------------

D_LINE = (sq(CITY, 20), sq(TOWN, 10), sq(CITY, 30), sq(CITY, 40), sq(CITY, 50, end=True))


@pytest.mark.parametrize(("train", "revenue"), [("3", 100), ("3D", 200), ("4", 150), ("4D", 300)])
def test_d_trains_double_the_route(train, revenue):
    assert check_agreement(board(*D_LINE, trains=[train])) == revenue


ODD = (sq(CITY, 20), sq(TOWN, 5), sq(CITY, 30, end=True))  # 55


@pytest.mark.parametrize(
    ("train", "options", "revenue"),
    [
        ({"name": "2", "obsolete": True}, None, 27),  # 55 / 2
        ({"name": "3D", "obsolete": True}, None, 55),  # doubled first: 110 / 2
        ("2", {"last_round": True}, 110),
        ("3D", {"last_round": True}, 220),
        ({"name": "2", "obsolete": True}, {"last_round": True}, 54),  # rounded before the doubling
        ("2", {"last_round": False}, 55),
    ],
)
def test_obsolete_halves_rounding_down_and_last_round_doubles(train, options, revenue):
    position = board(*ODD, trains=[train], options=options)
    assert check_agreement(position) == revenue
    route = solve(position)["routes"][0]
    assert route["revenue"] == revenue
    assert sum(s["value"] for s in route["stops"]) == 55  # stop values stay as printed


def test_obsolete_trains_round_each_route_down():
    # 30 - town 5 - 20 (token, two slots) - town 5 - 30: two routes of 55 meet at the token
    codes = (sq(CITY, 30), sq(TOWN, 5), sq(CITY, 20, slots=2), sq(TOWN, 5), sq(CITY, 30, end=True))
    obsolete = {"name": "2", "obsolete": True}
    assert check_agreement(board(*codes, trains=["2", "2"], token_at=2)) == 110
    assert check_agreement(board(*codes, trains=[obsolete, obsolete], token_at=2)) == 27 + 27
    answer = solve(board(*codes, trains=[obsolete, obsolete], token_at=2, options={"last_round": True}))
    assert [r["revenue"] for r in answer["routes"]] == [54, 54]
    assert answer["revenue"] == answer["bound"] == 108


def test_trains_of_one_name_may_differ_in_obsolete():
    """Routes name their train by name only: the validator gives them to the
    2 and the obsolete 2 the way that pays most, whatever their order."""
    codes = (sq(CITY, 30), sq(TOWN, 5), sq(CITY, 40, slots=2), sq(TOWN, 5), sq(CITY, 20, end=True))
    position = board(*codes, trains=["2", {"name": "2", "obsolete": True}], token_at=2)
    assert check_agreement(position) == 75 + 32  # the 2 runs up (75), the obsolete 2 down (65 / 2)
    up, down = {"train": "2", "nodes": nodes(3)}, {"train": "2", "nodes": nodes(5)[2:]}
    assert validate(position, [up, down])["revenue"] == validate(position, [down, up])["revenue"] == 107


def test_last_round_doubles_the_company_total():
    # 20 - town 10 - 30 - 40 (token, two slots) - 50: the 3D runs up to the 20
    # (40 + 30 + 10 + 20, doubled: 200), the 2 down to the 50 (90); taking
    # town, 30, 40 and 50 for the 3D (260) would leave the 2 nothing.
    codes = (sq(CITY, 20), sq(TOWN, 10), sq(CITY, 30), sq(CITY, 40, slots=2), sq(CITY, 50, end=True))
    assert check_agreement(board(*codes, trains=["3D", "2"], token_at=3)) == 290
    answer = solve(board(*codes, trains=["3D", "2"], token_at=3, options={"last_round": True}))
    assert [r["revenue"] for r in answer["routes"]] == [400, 180]
    assert check_agreement(board(*codes, trains=["3D", "2"], token_at=3, options={"last_round": True})) == 580


# -- a small map ----------------------------------------------------------------


def test_mildendo_ring_fixture():
    """Slamecksan (SL) on its metropolis C2 (30) next to Mildendo C3 (40) in
    phase 6: a 3D and an obsolete 3. Around C2: the harbour C1 (20) above,
    B2 (30) then Glimigrim's full B3 (20) to the left, the town D2 (10) then
    E2 (40) to the right. The 3D runs E2-D2-C2-C3 (cities E2, C2, Mildendo:
    120, doubled 240); the obsolete 3 runs C1-C2-B2-B3 (harbour free: 100,
    halved 50)."""
    position = json.loads(RING.read_text())
    assert check_agreement(position) == 290
    answer = solve(position)
    assert sorted((r["train"], r["revenue"]) for r in answer["routes"]) == [("3", 50), ("3D", 240)]
    assert check_agreement({**position, "options": {"last_round": True}}) == 580
    assert check_agreement({**position, "trains": ["3D"]}) == 240
    assert violation(position, [boards.route("3D", "C2-0", "C3-0", "C4-0")]) == "terminal_passed"
    assert violation(position, [boards.route("3", "C2-0", "B2-0", "B3-0", "A3-0")]) == "blocked_city"
    assert (
        violation(
            position, [boards.route("3", "C1-0", "C2-0", "B2-0", "B3-0"), boards.route("3D", "B3-0", "B2-0", "C2-0")]
        )
        == "track_reused"
    )


# -- every solver agrees on random boards -------------------------------------------


def _lilliput_node(draw, part: str) -> str:
    """A node part of the shared strategy's tiles given an 18Lilliput kind
    (offboards always), its flat revenue sometimes 5 more (odd halves)."""
    kinds = {
        "city": (None, None, "metropolis", "mildendo"),
        "town": (None, "harbor"),
        "offboard": ("harbor", "mildendo"),
    }[part.split("=", 1)[0]]
    kind = draw(st.sampled_from(kinds))
    if draw(st.booleans()):
        part = re.sub(r"revenue:(\d+)(?=,|$)", lambda m: f"revenue:{int(m.group(1)) + 5}", part)
    return f"{part},kind:{kind}" if kind else part


@st.composite
def lilliput_positions(draw) -> dict:
    """A random square board of the shared strategy read as 18Lilliput: kinds
    on its stops, 1-2 catalogue trains (each obsolete or not), sometimes
    the last round."""
    position = draw(positions(layouts=("square",), max_size=4, max_trains=1))
    position["game"] = "18Lilliput"
    for cell in position["hexes"]:
        cell["code"] = ";".join(
            _lilliput_node(draw, part) if re.match(r"(city|town|offboard)=", part) else part
            for part in cell["code"].split(";")
            if part
        )
    names = draw(st.lists(st.sampled_from(list(TRAINS)), min_size=1, max_size=2))
    position["trains"] = [{"name": n, "obsolete": True} if draw(st.booleans()) else n for n in names]
    if draw(st.booleans()):
        position.setdefault("options", {})["last_round"] = draw(st.booleans())
    return position


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lilliput_positions())
def test_solvers_agree_on_random_lilliput_boards(position_json):
    check_agreement(position_json)
