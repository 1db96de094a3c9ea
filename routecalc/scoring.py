"""What a route earns: stop values per train and the choice of paying stops.

:func:`train_tables` asks the rule set, once per train, what every stop is
worth to that train and how the train counts distance; the validator and
every solver read these tables, so the rules live in one place.
:func:`best_payment` chooses the paying stops of a visited sequence (express
trains, ``n+m`` towns, 1867 ``fill``), keeping the token requirement and
bonuses in mind.

The choice is a greedy over a matroid: each group has ``pay`` slots, and
with ``fill`` the first group's unused slots take stops of any group. For a
matroid the greedy by value is optimal, also when a set of stops is forced
in first; the only stops worth forcing are a token stop (the token rule) and
stops in bonus cells (bonuses depend on where the paying stops are), so the
search tries one token stop times every subset of bonus stops.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .graph import CATEGORY_CODES, TOKEN, TrackGraph
from .rules.base import Bonus
from .trains import Train


@dataclass
class TrainTable:
    """One train compiled against one graph."""

    train: Train
    value: np.ndarray  # int64[N]: stop value for this train (before multipliers)
    feeder: np.ndarray  # int64[N]: extra revenue when the stop pays (18Ireland)
    group_of: np.ndarray  # int8[3]: distance group of each category, -1 = may not visit
    pay: np.ndarray  # int64[G]
    visit: np.ndarray  # int64[G]
    group_mult: np.ndarray  # int64[G]
    hex_limit: int  # -1: distance counts stops
    gauge_bit: int  # connection gauge bit this train needs

    @property
    def worth(self) -> np.ndarray:
        return self.value + self.feeder


def train_tables(graph: TrackGraph) -> list[TrainTable]:
    position = graph.position
    rules = position.rules
    feeders = rules.feeders(position)
    out = []
    for train in position.trains:
        stops = [position.nodes[i] for i in graph.stop_node]
        value = np.array([rules.stop_value(n, train, position) for n in stops], dtype=np.int64)
        feeder = np.array([feeders.get(int(i), 0) for i in graph.stop_node], dtype=np.int64)
        group_of = np.full(3, -1, dtype=np.int8)
        for g, group in enumerate(train.groups):
            for cat in group.categories:
                group_of[CATEGORY_CODES[cat]] = g
        out.append(TrainTable(
            train=train, value=value, feeder=feeder, group_of=group_of,
            pay=np.array([g.pay for g in train.groups], dtype=np.int64),
            visit=np.array([g.visit for g in train.groups], dtype=np.int64),
            group_mult=np.array([g.multiplier for g in train.groups], dtype=np.int64),
            hex_limit=-1 if train.hex_limit is None else train.hex_limit,
            gauge_bit=graph.usable_gauge_bit(rules.usable_tracks(train))))
    return out


def within_limits(stops: list[int], edges: int, table: TrainTable, graph: TrackGraph) -> str | None:
    """None if the train may visit these stops over ``edges`` crossings, else why not."""
    if table.hex_limit >= 0 and edges > table.hex_limit:
        return f"crosses {edges} cell edges, the {table.train.name} runs {table.hex_limit}"
    counts = np.zeros(len(table.pay), dtype=np.int64)
    for s in stops:
        g = table.group_of[graph.category[s]]
        if g < 0:
            return f"a {table.train.name} may not visit {graph.stop_ids[s]}"
        counts[g] += 1
    for g, n in enumerate(counts):
        if n > table.visit[g]:
            cats = "/".join(sorted(table.train.groups[g].categories))
            return f"visits {n} {cats} stops, the {table.train.name} visits at most {table.visit[g]}"
    return None


def bonus_amount(paid: list[int], bonuses: list[Bonus], graph: TrackGraph) -> tuple[int, int]:
    """(multiplied, unmultiplied) bonus earned by a set of paying stops."""
    cells = {graph.cell_ids[graph.cell[s]] for s in paid}
    multiplied = plain = 0
    for bonus in bonuses:
        if bonus.type == "visit":
            amount = bonus.amount * len(cells & bonus.sets[0])
        else:
            amount = bonus.amount if all(cells & s for s in bonus.sets) else 0
        if bonus.multiplied:
            multiplied += amount
        else:
            plain += amount
    return multiplied, plain


def route_revenue(paid: list[int], table: TrainTable, graph: TrackGraph, bonuses: list[Bonus],
                  weights: dict[int, int]) -> int:
    mult_bonus, plain_bonus = bonus_amount(paid, bonuses, graph)
    return (sum(weights[s] for s in paid) + mult_bonus) * table.train.multiplier + plain_bonus


def _weights(stops: list[int], table: TrainTable, graph: TrackGraph) -> dict[int, int]:
    worth = table.worth
    return {s: int(worth[s]) * int(table.group_mult[table.group_of[graph.category[s]]]) for s in stops}


def _greedy(forced: tuple[int, ...], stops: list[int], weights: dict[int, int], table: TrainTable,
            graph: TrackGraph) -> list[int] | None:
    """Forced stops first, then the rest by weight, while the slots allow."""
    room = [int(p) for p in table.pay]
    fill = table.train.fill
    paid: list[int] = []

    def take(s: int) -> bool:
        g = int(table.group_of[graph.category[s]])
        if room[g] > 0:
            room[g] -= 1
        elif fill and g != 0 and room[0] > 0:
            room[0] -= 1
        else:
            return False
        paid.append(s)
        return True

    for s in forced:
        if not take(s):
            return None
    for s in sorted((s for s in stops if s not in forced), key=lambda s: -weights[s]):
        take(s)
    return paid


def best_payment(stops: list[int], table: TrainTable, graph: TrackGraph,
                 bonuses: list[Bonus]) -> tuple[int, list[int]] | None:
    """Best (revenue, paying stops) for a visited sequence, or None if no
    choice of paying stops includes a company token. Limits must already hold."""
    weights = _weights(stops, table, graph)
    tokens = [s for s in stops if graph.flags[s] & TOKEN]
    if not tokens:
        return None
    if table.train.pays_every_stop:
        return route_revenue(stops, table, graph, bonuses, weights), list(stops)
    bonus_cells = set().union(*(s for b in bonuses for s in b.sets)) if bonuses else set()
    special = [s for s in stops if graph.cell_ids[graph.cell[s]] in bonus_cells]
    best: tuple[int, list[int]] | None = None
    for token in tokens:
        for k in range(len(special) + 1):
            for subset in combinations([s for s in special if s != token], k):
                paid = _greedy((token,) + subset, stops, weights, table, graph)
                if paid is None:
                    continue
                revenue = route_revenue(paid, table, graph, bonuses, weights)
                if best is None or revenue > best[0]:
                    best = (revenue, paid)
    return best
