"""Trains and scoring: catalogue names and train objects as distance groups,
stop values per train, distance limits, bonuses, and the choice of paying
stops checked against a brute force over every choice."""

from __future__ import annotations

import pytest
from boards import city, line_board, offboard, town
from hypothesis import given, settings
from hypothesis import strategies as st

from routecalc import load_position
from routecalc.graph import compile_position
from routecalc.rules.base import Bonus
from routecalc.scoring import best_payment, bonus_amount, train_tables, within_limits
from routecalc.solvers.reference import exhaustive_payment
from routecalc.trains import UNLIMITED, DistanceGroup, generic_train

ALL = frozenset({"city", "town", "offboard"})


# -- the generic catalogue --------------------------------------------------------------


@pytest.mark.parametrize(
    "name, groups",
    [
        ("4", (DistanceGroup(ALL, 4, 4),)),
        ("3+2", (DistanceGroup(frozenset({"city", "offboard"}), 3, 3), DistanceGroup(frozenset({"town"}), 2, 2))),
        ("D", (DistanceGroup(ALL, UNLIMITED, UNLIMITED),)),
        ("6E", (DistanceGroup(ALL, 6, UNLIMITED),)),
    ],
)
def test_generic_catalogue(name, groups):
    train = generic_train(name, "trains[0]")
    assert train.groups == groups
    assert (train.multiplier, train.fill, train.hex_limit, train.gauge) == (1, False, None, "broad")
    assert train.diesel is (name == "D")


def test_every_stop_pays_unless_the_train_chooses():
    assert generic_train("4", "t").pays_every_stop
    assert generic_train("3+2", "t").pays_every_stop
    assert not generic_train("6E", "t").pays_every_stop


def load(*codes, trains, **kwargs):
    pos = load_position(line_board(*codes, trains=trains, **kwargs))
    return pos, compile_position(pos)


def test_train_objects_become_distance_groups():
    pos, _ = load(
        city(10),
        trains=[
            {
                "name": "5+5E",
                "multiplier": 2,
                "fill": True,
                "distance": [
                    {"nodes": ["offboard"], "pay": 5, "visit": 5},
                    {"nodes": ["city", "town"], "pay": 0, "visit": 99, "multiplier": 3},
                ],
            },
            {"name": "4", "distance": 4},
            {"name": "3+1"},
            {"name": "4E", "multiplier": 2},
        ],
    )
    plus_e, four, three_one, four_e = pos.trains
    assert plus_e.groups == (
        DistanceGroup(frozenset({"offboard"}), 5, 5),
        DistanceGroup(frozenset({"city", "town"}), 0, 99, 3),
    )
    assert (plus_e.multiplier, plus_e.fill) == (2, True)
    assert four.groups == (DistanceGroup(ALL, 4, 4),)
    assert three_one.groups == generic_train("3+1", "t").groups  # a bare name is the catalogue's train
    assert (four_e.groups, four_e.multiplier) == (generic_train("4E", "t").groups, 2)


def test_ignored_train_keys_are_accepted():
    pos, _ = load(city(10), trains=[{"name": "4", "price": 300, "rusts_on": "D", "num": 3}])
    assert pos.trains[0].groups == (DistanceGroup(ALL, 4, 4),)


# -- train tables -----------------------------------------------------------------------


def test_train_tables_read_values_per_train():
    pos, graph = load(city(20), town(10), offboard("yellow_20|brown_40|diesel_60"), trains=["2", "D", "2+1"])
    two, diesel, plus = train_tables(graph)
    order = [graph.stop(n) for n in ("A1-0", "A3-0", "A5-0")]
    assert list(two.value[order]) == [20, 10, 40]
    assert list(diesel.value[order]) == [20, 10, 60]
    assert list(two.group_of) == [0, 0, 0]
    assert list(plus.group_of) == [0, 1, 0]  # city, town, offboard
    assert (list(plus.pay), list(plus.visit)) == ([2, 1], [2, 1])
    assert list(two.feeder) == [0, 0, 0]
    assert two.hex_limit == -1 and two.gauge_bit == 1


def test_types_outside_the_groups_may_not_be_visited():
    pos, graph = load(
        city(20), town(10), trains=[{"name": "c", "distance": [{"nodes": ["city"], "pay": 1, "visit": 1}]}]
    )
    (table,) = train_tables(graph)
    assert list(table.group_of) == [0, -1, -1]


# -- limits -------------------------------------------------------------------------------


def test_within_limits():
    pos, graph = load(city(20), town(10), city(30), town(5), trains=["2+1", "3"])
    plus, three = train_tables(graph)
    stops = [graph.stop(f"A{i}-0") for i in (1, 3, 5, 7)]
    assert within_limits(stops[:3], 2, plus, graph) is None
    assert "visits 2 town stops, the 2+1 visits at most 1" in within_limits(stops, 3, plus, graph)
    assert within_limits(stops[:3], 2, three, graph) is None
    assert "visits 4 city/offboard/town stops, the 3 visits at most 3" in within_limits(stops, 3, three, graph)


# -- bonuses -------------------------------------------------------------------------------


def test_bonus_amount_splits_multiplied_and_plain():
    pos, graph = load(city(20), city(30), city(40), trains=["3"])
    a1, a3, a5 = (graph.stop(f"A{i}-0") for i in (1, 3, 5))
    bonuses = [
        Bonus("visit", (frozenset({"A1", "A3", "A7"}),), 10, False),
        Bonus("connect", (frozenset({"A1"}), frozenset({"A5"})), 40, True),
    ]
    assert bonus_amount([a1, a3], bonuses, graph) == (0, 20)
    assert bonus_amount([a1, a3, a5], bonuses, graph) == (40, 20)
    assert bonus_amount([a5], bonuses, graph) == (0, 0)


# -- the choice of paying stops ------------------------------------------------------------


def test_best_payment_reports_paying_stops():
    pos, graph = load(city(20), town(60), city(10), city(50), trains=["2E"])
    (table,) = train_tables(graph)
    stops = [graph.stop(f"A{i}-0") for i in (1, 3, 5, 7)]
    assert best_payment(stops, table, graph, []) == (80, [stops[0], stops[1]])


def test_best_payment_without_a_token_is_none():
    pos, graph = load(city(20), city(30), trains=["2"], token_at=5)
    (table,) = train_tables(graph)
    assert best_payment([graph.stop("A1-0"), graph.stop("A3-0")], table, graph, []) is None


STOP_KIND = st.sampled_from(["city", "town"])
GROUP = st.fixed_dictionaries({"pay": st.integers(0, 4), "visit": st.integers(1, 99), "multiplier": st.integers(1, 3)})


@st.composite
def payment_case(draw):
    """A line of stops (offboards at the ends only), a train that can visit
    them all, a token somewhere, maybe bonuses."""
    n = draw(st.integers(2, 7))
    kinds = [draw(st.sampled_from(["city", "offboard"])) if i in (0, n - 1) else draw(STOP_KIND) for i in range(n)]
    values = [draw(st.integers(0, 9)) * 10 for _ in range(n)]
    cities = [i for i, k in enumerate(kinds) if k == "city"]
    token_at = draw(st.sampled_from(cities)) if cities else None
    split = draw(
        st.sampled_from(
            [
                (("city", "town", "offboard"),),
                (("city", "offboard"), ("town",)),
                (("offboard",), ("city", "town")),
                (("city",), ("town", "offboard")),
            ]
        )
    )
    groups = []
    for nodes in split:
        g = draw(GROUP)
        groups.append({"nodes": list(nodes), "pay": g["pay"], "visit": 99, "multiplier": g["multiplier"]})
    train = {"name": "x", "distance": groups, "fill": draw(st.booleans()), "multiplier": draw(st.integers(1, 2))}
    cells = [f"A{2 * i + 1}" for i in range(n)]
    bonuses = []
    if draw(st.booleans()):
        bonuses.append(
            {
                "type": "visit",
                "cells": draw(st.lists(st.sampled_from(cells), min_size=1, max_size=3)),
                "amount": draw(st.integers(1, 6)) * 10,
                "multiplied": draw(st.booleans()),
            }
        )
    if draw(st.booleans()):
        sets = draw(st.lists(st.lists(st.sampled_from(cells), min_size=1, max_size=2), min_size=1, max_size=2))
        bonuses.append(
            {"type": "connect", "sets": sets, "amount": draw(st.integers(1, 6)) * 10, "multiplied": draw(st.booleans())}
        )
    codes = [{"city": city, "town": town, "offboard": offboard}[k](v) for k, v in zip(kinds, values)]
    return codes, token_at, train, bonuses


@settings(max_examples=150, deadline=None)
@given(payment_case())
def test_best_payment_matches_brute_force(case):
    codes, token_at, train, bonuses = case
    options = {"bonuses": bonuses} if bonuses else None
    pos = load_position(
        line_board(*codes, trains=[train], token_at=token_at if token_at is not None else 99, options=options)
    )
    graph = compile_position(pos)
    (table,) = train_tables(graph)
    stops = list(range(graph.num_stops))
    rules_bonuses = pos.rules.bonuses(pos)
    fast = best_payment(stops, table, graph, rules_bonuses)
    slow = exhaustive_payment(stops, table, graph, rules_bonuses)
    assert (fast is None) == (slow is None)
    if fast is not None:
        assert fast[0] == slow[0]
        assert any(graph.flags[s] & 4 for s in fast[1])  # a token stop pays
