"""What a route earns: stop values per train and the choice of paying stops.

:func:`train_tables` asks the rule set, once per train, what every stop is
worth to that train and how the train counts distance; the validator and
every solver read these tables, so the rules live in one place.
:func:`best_payment` chooses the paying stops of a visited sequence (express
trains, ``n+m`` towns, 1867 ``fill``), keeping the token requirement and
bonuses in mind. The choice itself is the numba kernel of
:mod:`routecalc.kernels.payment`, which the fast solver calls on every route
it enumerates: one implementation for validating and for solving.
:func:`route_revenue` is the plain Python sum the reference solver uses to
price its brute-force choices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .errors import PositionError
from .graph import CATEGORY_CODES, TOKEN, TrackGraph
from .kernels.payment import CONNECT, VISIT, PayTable, pay, pay_work
from .trains import Train

if TYPE_CHECKING:  # the rule sets import scoring
    from .rules.base import Bonus


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
        feeder = np.array(
            [
                sum(rules.stop_value(position.nodes[n], train, position) for n in feeders.get(int(i), ()))
                for i in graph.stop_node
            ],
            dtype=np.int64,
        )
        group_of = np.full(3, -1, dtype=np.int8)
        for g, group in enumerate(train.groups):
            for cat in group.categories:
                group_of[CATEGORY_CODES[cat]] = g
        out.append(
            TrainTable(
                train=train,
                value=value,
                feeder=feeder,
                group_of=group_of,
                pay=np.array([g.pay for g in train.groups], dtype=np.int64),
                visit=np.array([g.visit for g in train.groups], dtype=np.int64),
                group_mult=np.array([g.multiplier for g in train.groups], dtype=np.int64),
                hex_limit=-1 if train.hex_limit is None else train.hex_limit,
                gauge_bit=graph.usable_gauge_bit(rules.usable_tracks(train)),
            )
        )
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


def route_revenue(
    paid: list[int], table: TrainTable, graph: TrackGraph, bonuses: list[Bonus], weights: dict[int, int]
) -> int:
    mult_bonus, plain_bonus = bonus_amount(paid, bonuses, graph)
    return table.train.payout((sum(weights[s] for s in paid) + mult_bonus) * table.train.multiplier + plain_bonus)


def pay_table(table: TrainTable, graph: TrackGraph, bonuses: list[Bonus]) -> PayTable:
    """The arrays the payment kernel reads for one train (and the position's bonuses)."""
    group = table.group_of[graph.category].astype(np.int64)
    mult = np.where(group >= 0, table.group_mult[np.maximum(group, 0)], 0)
    cell_sets = [s for b in bonuses for s in b.sets]
    if len(cell_sets) > 64:
        raise PositionError("options.bonuses", "more than 64 cell sets in all bonuses")
    sets = np.zeros(graph.num_stops, dtype=np.uint64)
    cell_ids = [graph.cell_ids[c] for c in graph.cell]
    for j, cells in enumerate(cell_sets):
        for s, cell in enumerate(cell_ids):
            if cell in cells:
                sets[s] |= np.uint64(1) << np.uint64(j)
    first = np.cumsum([0] + [len(b.sets) for b in bonuses])[:-1]
    return PayTable(
        weight=(table.worth * mult).astype(np.int64),
        group=group,
        token=(graph.flags & TOKEN) != 0,
        cell=graph.cell.astype(np.int64),
        sets=sets,
        pay=table.pay.astype(np.int64),
        fill=bool(table.train.fill),
        every=bool(table.train.pays_every_stop),
        multiplier=int(table.train.multiplier),
        divisor=int(table.train.divisor),
        factor=int(table.train.factor),
        bonus_kind=np.array([VISIT if b.type == "visit" else CONNECT for b in bonuses], dtype=np.int64),
        bonus_first=np.array(first, dtype=np.int64),
        bonus_count=np.array([len(b.sets) for b in bonuses], dtype=np.int64),
        bonus_amount=np.array([b.amount for b in bonuses], dtype=np.int64),
        bonus_multiplied=np.array([b.multiplied for b in bonuses], dtype=np.bool_),
    )


def best_payment(
    stops: list[int], table: TrainTable, graph: TrackGraph, bonuses: list[Bonus]
) -> tuple[int, list[int]] | None:
    """Best (revenue, paying stops) for a visited sequence, or None if no
    choice of paying stops includes a company token. Limits must already hold."""
    work = pay_work(np.array(stops, dtype=np.int64), len(table.pay))
    revenue = pay(len(stops), pay_table(table, graph, bonuses), work)
    if revenue < 0:
        return None
    return int(revenue), [s for s, p in zip(stops, work.paid_out) if p]
