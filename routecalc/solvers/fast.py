"""The fast exact solver: numba route enumeration, then branch and bound.

For each distinct train the enumeration kernel lists every valid route
(priced by the payment kernel the validator also uses) and keeps those not
dominated by a sub-route; routes over the same track keep the best. The
combination kernel then picks the best track-disjoint set. Both kernels
run in chunks of work, so between chunks this module grows buffers,
watches the limits and reports progress. The limits are counts of work
(routes kept, enumeration steps, words of track compared: a caller such as
:mod:`.auto` decides on them, the same on any machine) and ``time_limit``,
which only stops a search. When a limit stops the search the answer is the
best set found, ``status: feasible``, with a true upper bound.

The chosen routes are rebuilt as :class:`~routecalc.routes.Route` and scored
again by the validator's :func:`~routecalc.validate.score_route`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import deadline
from ..graph import TOKEN, TrackGraph, compile_position
from ..kernels import combination as comb
from ..kernels import enumeration as enum
from ..kernels.payment import VISIT, PayTable, pay, pay_work
from ..limits import check_limits
from ..model import Position, load_position
from ..routes import Route, answer
from ..rules import require_route_engine
from ..scoring import TrainTable, pay_table, train_tables
from ..validate import score_route

#: Kernel steps between two looks at the clock (some milliseconds): routes
#: extended by the enumeration, words of track compared by the combination.
CHUNK = 20_000
#: The same for the branch and bound, whose steps each bound the route too
#: (6-8 times the work): some 40 ms of one idle core.
BOUNDED_CHUNK = 2_500
COMBINATION_CHUNK = 2_000_000
#: Share of the time limit the enumeration may use: the rest is left for
#: sorting out its routes and for the combination search.
ENUMERATION_SHARE = 0.5
#: Kernel steps a budgeted enumeration (``step_limit``) takes before it is
#: judged by its projected size, and how many times its step limit that
#: projection may be before the search stops as out of work, where it would
#: only spend its budget to the end: the exploding stress positions project
#: 1-20 million steps by 60,000 (their searches stopping at 250,000-500,000
#: steps, some 0.4-0.8 s). Most searches that finish project less than they
#: take, or a few times more (a late 1867 board's D: 553,000 at 40,000
#: steps, done in 95,000); of 400 corpus boards given more track on some
#: cells, one stopped where it would have finished (two D trains, 14
#: million projected, done in 310,000 steps), a board whose 309,555 routes
#: the fast solver then failed to combine and CP-SAT proves in 0.5 s.
#: From ``PROBE_STEPS`` more steps on, a listing is also judged by the pace
#: of its share since the probe (:func:`_hopeless`): of 137 listings over
#: 40,000 steps on 300 such boards with 10-100 % of their cells given more
#: track, 30 stopped earlier (5.6 million steps in all, most of them at
#: 120,000 where they ran to 140,000-500,000), and none that finishes within its
#: limit stopped that the share alone let run.
PROBE_STEPS = 50_000
OUTLOOK = 4
#: Initial route buffer size (grown by doubling).
FIRST_BUFFER = 4096
#: Routes kept per train at most whatever the limits say (some hundred MB):
#: beyond it the answer is ``feasible``, with a true bound, not a crash.
MAX_ROUTES = 2_000_000


@dataclass
class TrainRoutes:
    """The kept routes of one distinct train, best first."""

    table: TrainTable
    mask: np.ndarray
    revenue: np.ndarray
    buffer: enum.RouteBuffer  # the walks, to rebuild the chosen routes
    rows: np.ndarray  # buffer row of each kept route
    enumerated: int  # valid routes met, dominated ones included
    complete: bool
    upper: int  # no route of this train earns more
    steps: int  # enumeration kernel steps taken (routes extended)
    out_of_work: bool  # unfinished because the route or step limit ran out (not the clock)
    search: enum.DfsState | None = None  # where the search stopped, to run on from (``enumerate_train``'s ``resume``)


def graph_arrays(graph: TrackGraph) -> enum.GraphArrays:
    i64 = np.int64
    return enum.GraphArrays(
        graph.adj_start.astype(i64),
        graph.adj_conn.astype(i64),
        graph.adj_other.astype(i64),
        graph.flags.astype(i64),
        graph.groups.astype(np.uint64),
        graph.cell.astype(i64),
        np.ascontiguousarray(graph.conn_mask, dtype=np.uint64),
        np.ascontiguousarray(graph.conn_cells, dtype=np.uint64),
        graph.conn_edges.astype(i64),
        graph.conn_gauge.astype(i64),
        graph.conn_revisits.astype(np.bool_),
    )


class Clock:
    """The deadline and the progress callback of one solve."""

    def __init__(self, time_limit: float | None, progress: Callable[[float], None] | None):
        self.started = time.perf_counter()
        self.time_limit = time_limit
        self.progress = progress
        self.reported = False

    def out_of_time(self, share: float = 1.0) -> bool:
        """Whether ``share`` of the time limit has passed (a look that a
        budget of work may count: 18XS's ``_Budget``)."""
        return self.past(share)

    def past(self, share: float = 1.0) -> bool:
        """The same, a look that no budget counts: for looks that come with
        no fixed count of work."""
        return (
            self.time_limit is not None and time.perf_counter() - self.started >= share * self.time_limit
        ) or deadline.expired()

    def report(self, fraction: float) -> None:
        if self.progress is not None:
            self.reported = True
            self.progress(min(max(fraction, 0.0), 1.0))

    def seconds(self) -> float:
        return round(time.perf_counter() - self.started, 4)


def enumerate_train(
    graph: TrackGraph,
    arrays: enum.GraphArrays,
    table: TrainTable,
    prices: PayTable,
    route_limit: int | None,
    clock: Clock,
    share: tuple[float, float],
    step_limit: int | None = None,
    prune: enum.Prune | None = None,
    resume: TrainRoutes | None = None,
) -> TrainRoutes:
    """Every non-dominated route of one train (or as many as the limits
    allow: ``route_limit`` routes kept, ``step_limit`` kernel steps, counted
    from the search's start); with ``prune``, the routes of its branch and
    bound for the best route; with ``resume``, the same search run on from
    where it stopped."""
    tokens = np.flatnonzero(graph.flags & TOKEN).astype(np.int64)
    walk = enum.Walk(
        table.visit.astype(np.int64),
        int(table.hex_limit),
        int(table.gauge_bit),
        bool(graph.position.options.get("no_hex_twice")),
    )
    if resume is not None and resume.search is not None:
        state, buf = resume.search, resume.buffer
    else:
        state = enum.new_state(graph.num_stops, arrays.conn_mask.shape[1], arrays.conn_cells.shape[1], len(table.pay))
        # room for a route a step: fresh room is only mapped in once written, and growing a
        # buffer to the 250,000 routes of stress-1828-d-8e's D mapped in as much again, copied
        rows = FIRST_BUFFER if step_limit is None else max(FIRST_BUFFER, min(step_limit, MAX_ROUTES))
        buf = enum.new_buffer(rows, 8 * rows, arrays.conn_mask.shape[1])
    limit = min(route_limit or MAX_ROUTES, MAX_ROUTES)
    prune = prune or enum.new_prune(len(table.pay))
    most = BOUNDED_CHUNK if prune.floor[0] > 0 else CHUNK
    hopeless = False
    probe: tuple[int, float] | None = None  # (steps, share done) when first judged
    while True:
        chunk = most if step_limit is None else min(most, step_limit - int(state.stats[1]))
        if chunk <= 0 or clock.out_of_time(ENUMERATION_SHARE):  # the clock may have run out before the search began
            status = enum.PAUSED
            break
        status = enum.enumerate_routes(arrays, walk, prices, tokens, state, buf, chunk, limit, prune)
        if status == enum.FULL and not clock.out_of_time(ENUMERATION_SHARE):
            buf = enum.grown(buf)
            continue
        if status != enum.PAUSED:
            break
        done = share_done(graph, state, len(tokens))
        clock.report(share[0] + share[1] * done)
        taken = int(state.stats[1])
        if step_limit is not None and prune.floor[0] <= 0 and taken >= PROBE_STEPS:
            probe = probe or (taken, done)
            if _hopeless(taken, done, step_limit, probe):
                hopeless = True
                break
    complete = status == enum.DONE
    out_of_work = status == enum.LIMIT or (
        status == enum.PAUSED and step_limit is not None and (hopeless or int(state.stats[1]) >= step_limit)
    )
    kept = int(buf.used[0])
    mask, revenue = buf.mask[:kept], buf.revenue[:kept]
    keep = best_of_each_track(mask, revenue)
    best = int(revenue[keep[0]]) if len(keep) else 0
    upper = best if complete else max(best, ceiling(prices))
    return TrainRoutes(
        table,
        np.ascontiguousarray(mask[keep]),
        revenue[keep].copy(),
        buf,
        keep,
        int(state.stats[0]),
        complete,
        upper,
        int(state.stats[1]),
        out_of_work,
        state,
    )


def best_of_each_track(mask: np.ndarray, revenue: np.ndarray) -> np.ndarray:
    """Rows to keep, best first: of routes over the same track (``mask`` rows),
    the best (the first in revenue order). Rows are told apart by a 64-bit
    hash, and only rows of equal hashes are compared whole: sorting the rows
    themselves took over a second for a D train's 50,000 routes on a big
    board, and hashing a reordered copy of them most of the enumeration's
    time on stress-c2c-size-8; a word at a time down the columns took 22 ms
    of its 119,000 routes, the rows' products 3 ms (a collision of hashes
    only keeps a duplicate, never drops a route)."""
    order = np.argsort(-revenue, kind="stable")
    hashes = mask @ _multipliers(mask.shape[1])  # modulo 2**64, row by row: no copy of the rows
    by_hash = order[np.argsort(hashes[order], kind="stable")]  # revenue order within a hash
    new = np.ones(len(mask), np.bool_)
    same_hash = np.flatnonzero(hashes[by_hash[1:]] == hashes[by_hash[:-1]])
    new[same_hash + 1] = ~(mask[by_hash[same_hash + 1]] == mask[by_hash[same_hash]]).all(axis=1)
    kept = np.zeros(len(mask), np.bool_)
    kept[by_hash[new]] = True
    return order[kept[order]]


@lru_cache(maxsize=64)
def _multipliers(words: int) -> np.ndarray:
    """Odd 64-bit multipliers of the track hash, one a mask word: drawn once
    per board width (a board has one), not at each listing."""
    multipliers = np.random.default_rng(0).integers(1, 2**63, words, dtype=np.uint64) | np.uint64(1)
    multipliers.flags.writeable = False
    return multipliers


def ceiling(table: PayTable) -> int:
    """No route of the train earns more: its best paying stops on the whole
    board (the payment kernel with every stop a token) plus every bonus,
    divided and scaled as the train's revenue is; nothing without a token."""
    if not table.token.any():
        return 0
    stops = np.flatnonzero((table.group >= 0) & (table.weight > 0)).astype(np.int64)
    anywhere = table._replace(token=np.ones_like(table.token), bonus_kind=table.bonus_kind[:0], divisor=1, factor=1)
    routes = [stops]
    if table.fill:
        # a route visiting only its k best first-group stops leaves the rest of
        # their slots to the other groups: the best k is not known beforehand
        first = stops[table.group[stops] == 0]
        first = first[np.argsort(-table.weight[first], kind="stable")]
        others = stops[table.group[stops] != 0]
        routes = [np.concatenate([first[:k], others]) for k in range(min(int(table.pay[0]), len(first)) + 1)]
    best = max(max(int(pay(len(r), anywhere, pay_work(r, len(table.pay)))) for r in routes), 0)
    bonus = 0
    visitable = np.flatnonzero(table.group >= 0)  # a visit bonus counts stops worth nothing too
    for b, kind in enumerate(table.bonus_kind):
        amount = int(table.bonus_amount[b]) * (table.multiplier if table.bonus_multiplied[b] else 1)
        if kind == VISIT:
            bit = np.uint64(1) << np.uint64(table.bonus_first[b])
            amount *= len(set(table.cell[visitable[(table.sets[visitable] & bit) != 0]]))
        bonus += amount
    return (best + bonus) // table.divisor * table.factor


def share_done(graph: TrackGraph, state: enum.DfsState, starts: int) -> float:
    """The share of the search behind it, from the stack alone, as if every
    branch were as big as its siblings: a route's branches are the
    adjacency entries of its end (none where it is closed), then, where a
    second leg may begin, those of its start; each start is a ``1 / starts``
    share. It never falls as the search goes on."""
    current = int(state.token_i[0])  # the start under way is the one before it
    if state.depth[0] < 0:
        return current / max(starts, 1)
    adj_start, origin = graph.adj_start, int(state.stop[0])
    behind, width = 0.0, 1.0
    for e in range(1, int(state.depth[0]) + 1):
        d, end = e - 1, int(state.stop[e - 1])
        extensions = 0 if state.closed[d] else int(adj_start[end + 1] - adj_start[end])
        second_legs = int(adj_start[origin + 1] - adj_start[origin]) if _may_branch(state, d) else 0
        if state.leg_b[e] and not state.leg_b[d]:  # the second leg's first move
            branch = extensions + int(state.adj_k[e] - adj_start[origin])
        else:
            branch = int(state.adj_k[e] - adj_start[end])
        width /= max(extensions + second_legs, 1)
        behind += width * branch
    return (current - 1 + behind) / max(starts, 1)


def _may_branch(state: enum.DfsState, d: int) -> bool:
    """Whether the route at depth d may begin a second leg at its start (as
    :func:`~routecalc.kernels.enumeration.enumerate_routes` decides)."""
    return d > 0 and not state.leg_b[d] and bool(state.pass_t[d])


def _hopeless(steps: int, done: float, step_limit: int, probe: tuple[int, float]) -> bool:
    """Whether a listing ``done`` of the way through after ``steps`` steps
    projects past ``OUTLOOK`` times its step limit: by its share done, or,
    from ``PROBE_STEPS`` steps after the probe (``probe``: the steps and
    share done when first judged, after ``PROBE_STEPS``) on, by the pace
    of its share since then. Deep in one branch of a big tree the share
    hardly moves (a D on a dense 1830 board: 0.363 from 40,000 steps to
    130,000), so the share alone projects only a few times the steps
    taken, and the listing ran on to its limit. Counts of work only."""
    most = OUTLOOK * step_limit
    if steps > most * done:
        return True
    if steps < probe[0] + PROBE_STEPS:
        return False
    gained = done - probe[1]
    return gained <= 0 or steps + (1 - done) * (steps - probe[0]) / gained > most


def rebuild(graph: TrackGraph, buf: enum.RouteBuffer, row: int) -> tuple[list[int], list[int]]:
    """Stops and connections of a kept route: leg A reversed, then leg B."""
    origin, split = int(buf.origin[row]), int(buf.split[row])
    conns = buf.conns[buf.start[row] : buf.start[row] + buf.length[row]]

    def leg(cs) -> list[int]:
        stops = [origin]
        for c in cs:
            a, b = int(graph.conn_a[c]), int(graph.conn_b[c])
            stops.append(b if stops[-1] == a else a)
        return stops

    leg_a, leg_b = [int(c) for c in conns[:split]], [int(c) for c in conns[split:]]
    return leg(leg_a)[::-1] + leg(leg_b)[1:], leg_a[::-1] + leg_b


def enumerate_company(
    graph: TrackGraph, tables: list[TrainTable], route_limit: int | None, clock: Clock, step_limit: int | None = None
) -> list[TrainRoutes]:
    """Each train's routes, in the order of ``tables`` (identical trains share
    one :class:`TrainRoutes`). The enumeration stops after ``step_limit``
    kernel steps for all trains together (shared evenly, what a train leaves
    going to the trains after it, so that each lists its best routes near
    its tokens), or at ``ENUMERATION_SHARE`` of the clock's time limit;
    trains it did not reach list nothing. Once one train runs out of its
    share the trains after it are not enumerated: the fast solver needs
    every train's routes, and the searches that take over find the others'
    maxima for less (stress-1867-towns: 0.44 -> 0.18 s of enumeration)."""
    check_limits(route_limit=route_limit)
    bonuses = graph.position.rules.bonuses(graph.position)
    arrays = graph_arrays(graph)
    distinct = list(dict.fromkeys(table.train for table in tables))
    found: dict = {}
    steps = 0
    for table in tables:
        if table.train in found:
            continue
        j = distinct.index(table.train)
        prices = pay_table(table, graph, bonuses)
        if step_limit is not None and (steps >= step_limit or any(f.out_of_work for f in found.values())):
            found[table.train] = _nothing(graph, table, prices, out_of_work=True)
        elif clock.out_of_time(ENUMERATION_SHARE):
            found[table.train] = _nothing(graph, table, prices, out_of_work=False)
        else:
            share = (0.5 * j / len(distinct), 0.5 / len(distinct))
            allowance = None if step_limit is None else (step_limit - steps) // (len(distinct) - j)
            found[table.train] = enumerate_train(graph, arrays, table, prices, route_limit, clock, share, allowance)
            steps += found[table.train].steps
    return [found[table.train] for table in tables]


def listed_routes(choice: list[tuple[int, int]], listed: list[TrainRoutes], graph: TrackGraph) -> list[Route]:
    """Chosen listed routes, (train, row) pairs, as :class:`Route` objects
    scored again by the validator (which must agree with the kernel)."""
    routes = []
    for t, k in choice:
        found = listed[t]
        stops, conns = rebuild(graph, found.buffer, int(found.rows[k]))
        route = score_route(Route(t, stops, conns), found.table, graph)
        if route.revenue != found.revenue[k]:
            raise AssertionError(f"the payment kernel priced a route {found.revenue[k]}, the validator {route.revenue}")
        routes.append(route)
    return routes


def piece_rows(mask: np.ndarray) -> dict[int, np.ndarray]:
    """Track piece -> rows of the routes (mask words, a row a route) that use it:
    the at-most-one constraints of a model with a literal a route."""
    out = {}
    for w in range(mask.shape[1]):
        for b in range(64):
            rows = np.flatnonzero((mask[:, w] >> np.uint64(b)) & np.uint64(1))
            if len(rows):
                out[64 * w + b] = rows
    return out


def combine_company(
    graph: TrackGraph, tables: list[TrainTable], listed: list[TrainRoutes], clock: Clock, work_limit: int | None = None
) -> tuple[list[Route], int, dict]:
    """(routes, upper bound, statistics): the best track-disjoint choice of
    one listed route or none per train, by the combination kernel within
    ``work_limit`` units of its work (words of track compared) and the
    clock; the routes are optimal when the bound equals their revenue."""
    # Search order: trains with the richest routes first; identical trains side by side.
    distinct = list(dict.fromkeys(id(found) for found in listed))
    order = sorted(range(len(tables)), key=lambda i: (-listed[i].upper, distinct.index(id(listed[i])), i))
    lists = _route_lists(order, listed)
    state = comb.new_state(lists)
    while True:
        chunk = COMBINATION_CHUNK if work_limit is None else min(COMBINATION_CHUNK, work_limit - int(state.work[0]))
        if chunk <= 0:
            status = comb.PAUSED
            break
        status = comb.combine(lists, state, chunk)
        if status == comb.DONE or clock.out_of_time():
            break
        s = int(state.suffix[0])
        clock.report(0.5 + 0.5 * (len(order) - 1 - s + _suffix_share(lists, state)) / max(len(order), 1))
    routes = listed_routes([(order[pos], int(r)) for pos, r in enumerate(state.choice) if r >= 0], listed, graph)
    revenue = sum(r.revenue for r in routes)
    if not all(found.complete for found in listed):
        bound = sum(found.upper for found in listed)
    elif status == comb.DONE:
        bound = revenue
    else:
        bound = comb.suffix_bound(lists, state)
    if clock.reported:
        clock.report(1.0)
    return (
        routes,
        max(bound, revenue),
        {
            "routes_enumerated": sum(found.enumerated for found in listed),
            "routes_kept": sum(len(found.revenue) for found in listed),
            "nodes": int(state.nodes[0]),
            "enumeration_steps": sum({id(found): found.steps for found in listed}.values()),
            "combination_work": int(state.work[0]),
        },
    )


def enumerate_position(
    position: Position,
    graph: TrackGraph | None,
    time_limit: float | None,
    route_limit: int | None,
    progress: Callable[[float], None] | None,
) -> tuple[Clock, TrackGraph, list[TrainTable], list[TrainRoutes]]:
    """How a solve over enumerated routes starts: its clock (started before
    the position is compiled), the compiled graph, the train tables and each
    train's routes (:func:`enumerate_company`)."""
    require_route_engine(position.rules)
    clock = Clock(time_limit, progress)
    graph = graph or compile_position(position)
    tables = train_tables(graph)
    return clock, graph, tables, enumerate_company(graph, tables, route_limit, clock)


def solve_fast(
    position: Position,
    graph: TrackGraph | None = None,
    *,
    time_limit: float | None = None,
    route_limit: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict:
    """Best routes of the operating company: exact unless a limit stops it."""
    clock, graph, tables, listed = enumerate_position(position, graph, time_limit, route_limit, progress)
    routes, bound, stats = combine_company(graph, tables, listed, clock)
    return answer(graph, tables, routes, clock.started, solver="fast", bound=bound, **stats)


def _nothing(graph: TrackGraph, table: TrainTable, prices: PayTable, out_of_work: bool) -> TrainRoutes:
    """A train the limits left no time or work to enumerate."""
    words = graph.conn_mask.shape[1]
    return TrainRoutes(
        table,
        np.zeros((0, words), np.uint64),
        np.zeros(0, np.int64),
        enum.new_buffer(1, 1, words),
        np.zeros(0, np.int64),
        0,
        False,
        ceiling(prices),
        0,
        out_of_work,
    )


def _route_lists(order: list[int], listed: list[TrainRoutes]) -> comb.RouteLists:
    """The route lists in search order (identical trains share theirs)."""
    distinct = list(dict.fromkeys(id(listed[i]) for i in order))
    first = {id(found): found for found in listed}
    return comb.route_lists(
        [first[k].mask for k in distinct],
        [first[k].revenue for k in distinct],
        [distinct.index(id(listed[i])) for i in order],
    )


def _suffix_share(lists: comb.RouteLists, state: comb.CombState) -> float:
    s = int(state.suffix[0])
    if s >= len(lists.count) or not lists.count[s]:
        return 0.0
    return min(int(state.next_r[s]) / int(lists.count[s]), 1.0)


def warm_up() -> float:
    """Compile or load the kernels by solving a tiny position; returns seconds taken."""
    started = time.perf_counter()
    tiny = {
        "format": 1,
        "game": "generic",
        "layout": "flat",
        "phase": {"name": "2", "colors": ["yellow"]},
        "company": "A",
        "trains": [
            "2",
            "2E",
            {
                "name": "2+2",
                "distance": [
                    {"nodes": ["city", "offboard"], "pay": 2, "visit": 2},
                    {"nodes": ["town"], "pay": 0, "visit": 9},
                ],
                "fill": True,
            },
        ],
        "options": {"bonuses": [{"type": "visit", "cells": ["A1"], "amount": 10}]},
        "hexes": [
            {"id": "A1", "code": "city=revenue:20;path=a:0,b:_0", "tokens": [["A"]]},
            {"id": "A3", "code": "town=revenue:10;path=a:3,b:_0;path=a:_0,b:0"},
            {"id": "A5", "code": "offboard=revenue:30;path=a:3,b:_0"},
        ],
    }
    position = load_position(tiny)
    solve_fast(position)
    solve_fast(position, route_limit=1)  # the bound of an unfinished enumeration
    return time.perf_counter() - started
