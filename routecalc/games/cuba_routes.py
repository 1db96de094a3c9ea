"""18Cuba's routes from the numba kernels, with what the coupled terms need.

The rule set says what the game's words mean as graph flags
(:meth:`~routecalc.rules.cuba.CubaRules.stop_roles`: a major never stops at a
sugar field, a minor only at its mill, at an end, and at sugar fields; mills
with cubes load and harbors unload). The enumeration kernel of the fast
solver then walks each train as the rule set's catalogue holds it (a major
one stop beyond its range, every stop paying) and lists every route no
sub-route dominates.

The one rule the payment kernel cannot say is which stop a major's route
beyond its range does not pay: not the cheapest stop (the kernel's choice)
but a harbor at an end. A small numba pass over the listed walks reads it:
a route one stop beyond the range needs a harbor end, which pays 0 (the
cheaper, with two); the same pass reads what the coupled choice needs, the
mills with cubes a harbor-ending route carries from and the FC cities it
passes through. The kernel's price is the true one within the range and
above it beyond, and a route one stop beyond has no longer sub-route beyond,
so the kernel's dominance (a sub-route earning as much, on less track,
passing fewer FC cities and, by the cargo flags, carrying the same sugar)
drops no route the choice needs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..graph import END_ONLY, HOME_END, NO_STOP, TrackGraph
from ..kernels import enumeration as enum
from ..rules.cuba import reach
from ..scoring import TrainTable, pay_table, train_tables
from ..solvers.fast import Clock, TrainRoutes, enumerate_train, graph_arrays


@dataclass
class CubaStops:
    """The stops the coupled terms count, numbered for bit sets (at most 64 each)."""

    mills: list[int]  # stops of mills with cubes (bit i: mills[i])
    supply: np.ndarray  # int64: cubes at each
    fc: list[int]  # stops of FC-blocked cities (bit i: fc[i])

    @classmethod
    def of(cls, graph: TrackGraph) -> CubaStops | None:
        """The board's mills with cubes and FC cities; None past 64 of either,
        which the bit sets cannot hold."""
        position = graph.position
        sugar = position.options.get("sugar", {})
        nodes = [position.nodes[int(i)] for i in graph.stop_node]
        mills = [s for s, n in enumerate(nodes) if n.kind == "mill" and sugar.get(n.id, 0) > 0]
        fc = [s for s, n in enumerate(nodes) if position.rules.fc_blocked(n, position.company)]
        if len(mills) > 64 or len(fc) > 64:
            return None
        return cls(mills, np.array([sugar[graph.stop_ids[s]] for s in mills], np.int64), fc)


@dataclass
class CubaRoutes:
    """The listed routes of one kind of train (name and obsolete), as the
    kernels found them, with their coupled terms (row k of each array)."""

    found: TrainRoutes  # the kernels' listing
    keep: np.ndarray  # int64: the listing's routes valid by the harbor rule
    revenue: np.ndarray  # int64: their revenue
    mills: np.ndarray  # uint64: bit i = mills[i] carried from (a harbor end only)
    fc: np.ndarray  # uint64: bit i = FC city fc[i] passed through

    @property
    def count(self) -> int:
        return len(self.keep)

    @property
    def mask(self) -> np.ndarray:
        return self.found.mask[self.keep]

    def walk_row(self, k: int) -> int:
        """The kernel buffer's row of route k."""
        return int(self.found.rows[self.keep[k]])


def list_routes(
    graph: TrackGraph, stops: CubaStops, route_limit: int | None, clock: Clock, worthless: bool = False
) -> tuple[list[TrainTable], list[CubaRoutes]]:
    """Per train of the position: its kernel table and its listed routes
    (trains of one kind share one listing); ``worthless``: routes earning
    nothing are listed too (a minor's machines pay once it runs at all)."""
    arrays = graph_arrays(graph)
    flags = arrays.flags | np.where(arrays.flags & HOME_END, END_ONLY, 0)
    arrays = arrays._replace(flags=flags.astype(np.int64))
    # trains differing only in their wagon walk alike
    tables = [dataclasses.replace(t, train=dataclasses.replace(t.train, wagon=0)) for t in train_tables(graph)]
    kinds = list(dict.fromkeys(t.train for t in tables))
    listed: dict = {}
    harbor = np.array([graph.position.nodes[int(i)].kind == "harbor" for i in graph.stop_node], np.bool_)
    mill_bit = _bits(graph.num_stops, stops.mills)
    fc_bit = _bits(graph.num_stops, stops.fc)
    for table in tables:
        if table.train in listed:
            continue
        j = kinds.index(table.train)
        prices = pay_table(table, graph, [])
        prices = prices._replace(group=np.where(graph.flags & NO_STOP, -1, prices.group).astype(np.int64))
        found = enumerate_train(
            graph,
            arrays,
            table,
            prices,
            route_limit,
            clock,
            (0.5 * j / len(kinds), 0.5 / len(kinds)),
            prune=enum.new_prune(len(table.pay), floor=-1) if worthless else None,
        )
        buf = found.buffer
        n = len(found.rows)
        revenue, mills, fc = found.revenue.copy(), np.zeros(n, np.uint64), np.zeros(n, np.uint64)
        beyond = reach(table.train) if table.train.gauge == "broad" else -1
        _annotate(
            buf.origin,
            buf.start,
            buf.length,
            buf.split,
            buf.conns,
            graph.conn_a.astype(np.int64),
            graph.conn_b.astype(np.int64),
            found.rows.astype(np.int64),
            mill_bit,
            fc_bit,
            harbor,
            (graph.flags & HOME_END) != 0,
            prices.weight * table.train.multiplier,
            beyond,
            revenue,
            mills,
            fc,
        )
        keep = np.flatnonzero(revenue >= 0)
        listed[table.train] = CubaRoutes(found, keep, revenue[keep], mills[keep], fc[keep])
    return tables, [listed[t.train] for t in tables]


def _bits(num_stops: int, which: list[int]) -> np.ndarray:
    out = np.zeros(num_stops, np.uint64)
    for i, s in enumerate(which):
        out[s] = np.uint64(1) << np.uint64(i)
    return out


@njit(cache=True, nogil=True)
def _annotate(
    origin,
    start,
    length,
    split,
    conns,
    conn_a,
    conn_b,
    rows,
    mill_bit,
    fc_bit,
    harbor,
    home,
    worth,
    reach,
    out_revenue,
    out_mills,
    out_fc,
):
    """Walk each listed route (leg A and leg B from its origin) for the mills
    it stops at and the FC cities it passes through; a route with more stops
    than ``reach`` (-1: none is limited so) loses its cheaper harbor end's
    ``worth``, or without one is invalid (revenue -1), as is a minor's route
    from one of its ``home`` mills to another (its other stops are fields)."""
    for k in range(len(rows)):
        r = rows[k]
        o, s0, n, sp = origin[r], start[r], length[r], split[r]
        mills = mill_bit[o]
        fcs = np.uint64(0)
        ends = np.zeros(2, np.int64)
        for leg in range(2):
            cur = o
            lo, hi = (s0, s0 + sp) if leg == 0 else (s0 + sp, s0 + n)
            for j in range(lo, hi):
                c = conns[j]
                cur = conn_b[c] if conn_a[c] == cur else conn_a[c]
                mills |= mill_bit[cur]
                if j < hi - 1:
                    fcs |= fc_bit[cur]  # passed through (not the leg's end)
            ends[leg] = cur
        if home[ends[0]] and home[ends[1]]:
            out_revenue[k] = -1
            continue
        if sp > 0 and n > sp:
            fcs |= fc_bit[o]  # the origin lies between the legs
        harbor_end = harbor[ends[0]] or harbor[ends[1]]
        if reach >= 0 and n + 1 > reach:
            if not harbor_end:
                out_revenue[k] = -1
                continue
            cheaper = -1
            for e in ends:
                if harbor[e] and (cheaper < 0 or worth[e] < cheaper):
                    cheaper = worth[e]
            out_revenue[k] -= cheaper
        out_mills[k] = mills if harbor_end else np.uint64(0)
        out_fc[k] = fcs
