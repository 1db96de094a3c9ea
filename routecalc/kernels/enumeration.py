"""Every valid route of one train: an explicit-stack depth-first search.

A route holds at least one company token, so the search starts at token
stops only. From a start ``T`` it grows a first leg (A); at any point it may
instead grow a second leg (B) from ``T`` in another direction, and the route
is A reversed, then B. Each route is produced once:

- from its lowest-numbered token stop (the walk never enters a token stop
  numbered below ``T``);
- with B's first connection after A's in ``T``'s adjacency list (the pair
  (B, A) is the same route reversed).

Every state of the stack with two or more stops is a structurally valid
route (the walk never passes a blocked city, an offboard or a terminal
path, never reuses track, stop or group, never exceeds the train's limits),
so each one is priced by :func:`~.payment.pay`. A route is kept
only when it earns more than every route on its stack below it: those are
sub-routes (a subset of its track), so a kept sub-route dominates it in any
combination. Cargo (``LOAD`` / ``UNLOAD`` stop flags, 18Cuba's sugar) is
the exception: a route that picks up cargo it can deliver, where its
sub-routes could not, is compared only with the sub-routes that carry the
same (those on the stack since the cargo changed). The search writes kept
routes into preallocated buffers and returns FULL when they run out, PAUSED
after ``budget`` steps, LIMIT after ``route_limit`` kept routes; it resumes
from its :class:`DfsState` where it stopped, so the caller can grow
buffers, watch the clock and report progress between calls.

With a :class:`Prune` floor above zero the search is a branch and bound for
the train's best route: it keeps only routes earning at least the floor,
each raising the floor above itself, and leaves a route unextended when
:func:`~.longest.route_bound` says no route through it reaches the floor.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types

from ..graph import BLOCKED, END_ONLY, LOAD, UNLOAD
from .cache import kernel, record
from .longest import CHAIN_WORK, TRACK_POINTS, ChainWork, TrackPoints, new_chain_work, route_bound
from .payment import PAY_TABLE, PAY_WORK, PayWork, pay, pay_work

DONE, PAUSED, FULL, LIMIT = 0, 1, 2, 3


class GraphArrays(NamedTuple):
    """The :class:`~routecalc.graph.TrackGraph` arrays the search reads."""

    adj_start: np.ndarray  # int64[N + 1]
    adj_conn: np.ndarray  # int64[M]
    adj_other: np.ndarray  # int64[M]
    flags: np.ndarray  # int64[N]
    groups: np.ndarray  # uint64[N]
    cell: np.ndarray  # int64[N]
    conn_mask: np.ndarray  # uint64[C, W]
    conn_cells: np.ndarray  # uint64[C, WC]
    conn_edges: np.ndarray  # int64[C]
    conn_gauge: np.ndarray  # int64[C]
    conn_revisits: np.ndarray  # bool[C]


class Walk(NamedTuple):
    """How far one train may run (its stop groups are in the PayTable)."""

    visit: np.ndarray  # int64[G]: stops per distance group
    hex_limit: int  # crossed cell edges, -1: not counted
    gauge_bit: int  # conn_gauge bit the train needs
    no_hex_twice: bool


class DfsState(NamedTuple):
    """The search stack, one row per depth; scalars are 1-element arrays."""

    token_i: np.ndarray  # next start in ``tokens``
    depth: np.ndarray  # top of the stack, -1 between starts
    stop: np.ndarray  # stop at each depth (depth 0: the start T)
    conn: np.ndarray  # connection that reached it
    adj_k: np.ndarray  # adjacency entry that reached it
    next_k: np.ndarray  # next adjacency entry to try
    phase: np.ndarray  # 0: extend the current leg, 1: start leg B from T
    leg_b: np.ndarray  # bool: the top leg is B
    split: np.ndarray  # connections in leg A
    closed: np.ndarray  # bool: the current leg cannot go on
    pass_t: np.ndarray  # bool: the route may pass through T
    mask: np.ndarray  # uint64[D, W]: track used
    cells: np.ndarray  # uint64[D, WC]: cells entered (no_hex_twice)
    groups: np.ndarray  # uint64[D]
    count: np.ndarray  # int64[D, G]: stops per distance group
    edges: np.ndarray  # int64[D]
    best: np.ndarray  # best revenue of a route on the stack so far
    on_path: np.ndarray  # bool[N]
    stats: np.ndarray  # [valid routes seen, steps]
    work: PayWork  # paying the route on the stack (``stop``)


class Prune(NamedTuple):
    """Whether to list every route (``floor[0] == 0``; -1: routes earning
    nothing too, for an 18Cuba minor whose machines pay once it runs at all)
    or to search for the best one, earning ``floor[0]`` or more."""

    floor: np.ndarray  # int64[1]: routes earning less are neither kept nor extended
    points: TrackPoints  # the graph of the bound
    chain: ChainWork
    cut: np.ndarray  # int64[1]: routes left unextended by the bound


def new_prune(
    groups: int,
    floor: int = 0,
    points: TrackPoints | None = None,
    thresholds: np.ndarray | None = None,
    lists: bool = True,
    visit_prices: np.ndarray | None = None,
) -> Prune:
    """Every route (``floor`` 0), or the best one earning ``floor`` or more
    (``points``: the train's :func:`~.longest.track_points`; ``thresholds``,
    ``lists`` and ``visit_prices``: those of the bound,
    :func:`~.longest.new_chain_work`)."""
    none = np.zeros(0, np.int64)
    points = points or TrackPoints(np.zeros(1, np.int64), none, none)
    chain = new_chain_work(len(points.piece), groups, thresholds, lists, visit_prices)
    return Prune(np.full(1, floor, np.int64), points, chain, np.zeros(1, np.int64))


class RouteBuffer(NamedTuple):
    """Kept routes: track mask, revenue, and the walk to rebuild them."""

    mask: np.ndarray  # uint64[R, W]
    revenue: np.ndarray  # int64[R]
    origin: np.ndarray  # int64[R]: the start T
    start: np.ndarray  # int64[R]: offset in ``conns``
    length: np.ndarray  # int64[R]: connections (leg A, then leg B)
    split: np.ndarray  # int64[R]: connections in leg A
    conns: np.ndarray  # int64[K]
    used: np.ndarray  # [routes, conns] filled


def new_state(num_stops: int, words: int, cell_words: int, groups: int) -> DfsState:
    depth = num_stops + 1
    stop = np.zeros(depth, np.int64)
    return DfsState(
        token_i=np.zeros(1, np.int64),
        depth=np.full(1, -1, np.int64),
        stop=stop,
        conn=np.zeros(depth, np.int64),
        adj_k=np.zeros(depth, np.int64),
        next_k=np.zeros(depth, np.int64),
        phase=np.zeros(depth, np.int64),
        leg_b=np.zeros(depth, np.bool_),
        split=np.zeros(depth, np.int64),
        closed=np.zeros(depth, np.bool_),
        pass_t=np.zeros(depth, np.bool_),
        mask=np.zeros((depth, words), np.uint64),
        cells=np.zeros((depth, cell_words), np.uint64),
        groups=np.zeros(depth, np.uint64),
        count=np.zeros((depth, groups), np.int64),
        edges=np.zeros(depth, np.int64),
        best=np.zeros(depth, np.int64),
        on_path=np.zeros(num_stops, np.bool_),
        stats=np.zeros(2, np.int64),
        work=pay_work(stop, groups),
    )


def new_buffer(routes: int, conns: int, words: int) -> RouteBuffer:
    """Room for ``routes`` routes of ``conns`` connections in all, not zeroed:
    the search writes every entry of a route before counting it used (only
    the counts start at zero). Zeroed room for a 500,000-step listing (some
    70 MB) cost stress-1867-two-d 0.05 s where the allocator reused memory
    and had to clear it."""
    return RouteBuffer(
        np.empty((routes, words), np.uint64),
        np.empty(routes, np.int64),
        np.empty(routes, np.int64),
        np.empty(routes, np.int64),
        np.empty(routes, np.int64),
        np.empty(routes, np.int64),
        np.empty(conns, np.int64),
        np.zeros(2, np.int64),
    )


def grown(buf: RouteBuffer) -> RouteBuffer:
    """The same routes in a buffer with twice the room for routes, or for
    connections if the routes still fit (long routes fill those first).
    Only the arrays that ran out are copied, into room not zeroed (the
    search writes every entry before counting it used): on a big board the
    connections of a D train's routes run to tens of MB."""
    if buf.used[0] < buf.revenue.shape[0]:
        return buf._replace(conns=_doubled(buf.conns))
    return buf._replace(**{name: _doubled(getattr(buf, name)) for name in ROUTE_FIELDS})


#: The fields of :class:`RouteBuffer` with a row per route.
ROUTE_FIELDS = ("mask", "revenue", "origin", "start", "length", "split")


def _doubled(rows: np.ndarray) -> np.ndarray:
    out = np.empty((2 * len(rows), *rows.shape[1:]), rows.dtype)
    out[: len(rows)] = rows
    return out


_i64, _u64, _bool = types.int64[::1], types.uint64[::1], types.boolean[::1]
_u64_2d, _i64_2d = types.uint64[:, ::1], types.int64[:, ::1]
#: numba types of the tuples, as the fast solver builds them.
GRAPH_ARRAYS = record(GraphArrays, _i64, _i64, _i64, _i64, _u64, _i64, _u64_2d, _u64_2d, _i64, _i64, _bool)
WALK = record(Walk, _i64, types.int64, types.int64, types.boolean)
DFS_STATE = record(
    DfsState,
    *(_i64,) * 7,
    _bool,
    _i64,
    _bool,
    _bool,
    _u64_2d,
    _u64_2d,
    _u64,
    _i64_2d,
    _i64,
    _i64,
    _bool,
    _i64,
    PAY_WORK,
)
ROUTE_BUFFER = record(RouteBuffer, _u64_2d, _i64, _i64, _i64, _i64, _i64, _i64, _i64)
PRUNE = record(Prune, _i64, TRACK_POINTS, CHAIN_WORK, _i64)


@kernel((GRAPH_ARRAYS, WALK, PAY_TABLE, _i64, DFS_STATE, ROUTE_BUFFER, types.int64, types.int64, PRUNE))
def enumerate_routes(g, walk, pt, tokens, st, out, budget, route_limit, prune):
    """Run the search on from ``st``; returns DONE, PAUSED, FULL or LIMIT."""
    # Arrays come out of their tuples once: inside the loop numba would count
    # references on every access. The helpers are closures, which numba
    # inlines, for the same reason.
    adj_start, adj_conn, adj_other = g.adj_start, g.adj_conn, g.adj_other
    flags, groups, cell = g.flags, g.groups, g.cell
    conn_mask, conn_cells, conn_edges = g.conn_mask, g.conn_cells, g.conn_edges
    conn_gauge, conn_revisits = g.conn_gauge, g.conn_revisits
    visit, hex_limit, gauge_bit, no_hex_twice = walk.visit, walk.hex_limit, walk.gauge_bit, walk.no_hex_twice
    token, group = pt.token, pt.group
    stop, conn, adj_k, next_k, phase = st.stop, st.conn, st.adj_k, st.next_k, st.phase
    leg_b, split, closed, pass_t = st.leg_b, st.split, st.closed, st.pass_t
    mask, cells, used_groups, count = st.mask, st.cells, st.groups, st.count
    edges, best, on_path, stats, depth = st.edges, st.best, st.on_path, st.stats, st.depth
    words, cell_words, num_groups = mask.shape[1], cells.shape[1], count.shape[1]
    out_mask, out_revenue, out_origin = out.mask, out.revenue, out.origin
    out_start, out_length, out_split, out_conns, out_used = out.start, out.length, out.split, out.conns, out.used
    cap_routes, cap_conns = out_revenue.shape[0], out_conns.shape[0]
    work = st.work
    floor, chain, cut = prune.floor, prune.chain, prune.cut
    point_start, point_other, point_piece = prune.points.start, prune.points.other, prune.points.piece

    def can_move(d, k, frm):
        """May the route at depth d go on along adjacency entry k of stop frm?"""
        c = adj_conn[k]
        nxt = adj_other[k]
        if not conn_gauge[c] & gauge_bit or on_path[nxt]:
            return False
        if token[nxt] and nxt < stop[0]:
            return False  # this route is found from its lowest token stop
        grp = group[nxt]
        if grp < 0 or count[d, grp] >= visit[grp] or groups[nxt] & used_groups[d]:
            return False
        if hex_limit >= 0 and edges[d] + conn_edges[c] > hex_limit:
            return False
        for w in range(words):
            if conn_mask[c, w] & mask[d, w]:
                return False
        if no_hex_twice:
            if conn_revisits[c]:
                return False
            here = cell[frm]
            for w in range(cell_words):
                new = conn_cells[c, w]
                if w == here >> 6:
                    new &= ~(np.uint64(1) << np.uint64(here & 63))
                if new & cells[d, w]:
                    return False
        return True

    def push(d, k, on_leg_b):
        """Move along adjacency entry k to depth d + 1."""
        e = d + 1
        c = adj_conn[k]
        nxt = adj_other[k]
        stop[e] = nxt
        conn[e] = c
        adj_k[e] = k
        next_k[e] = adj_start[nxt]
        phase[e] = 0
        leg_b[e] = on_leg_b
        split[e] = split[d] if on_leg_b else e
        closed[e] = (flags[nxt] & (END_ONLY | BLOCKED)) != 0
        if d == 0:
            pass_t[e] = (flags[stop[0]] & (END_ONLY | BLOCKED)) == 0
        else:
            pass_t[e] = pass_t[d]
        for w in range(words):
            mask[e, w] = mask[d, w] | conn_mask[c, w]
        for w in range(cell_words):
            cells[e, w] = cells[d, w] | conn_cells[c, w]
        used_groups[e] = used_groups[d] | groups[nxt]
        for j in range(num_groups):
            count[e, j] = count[d, j]
        count[e, group[nxt]] += 1
        edges[e] = edges[d] + conn_edges[c]
        on_path[nxt] = True
        depth[0] = e

    def start(t):
        """Put start t on the empty stack, unless the train cannot stop there."""
        grp = group[t]
        if grp < 0 or visit[grp] < 1:
            return
        stop[0] = t
        next_k[0] = adj_start[t]
        phase[0] = 0
        leg_b[0] = False
        split[0] = 0
        closed[0] = False
        for w in range(words):
            mask[0, w] = 0
        for w in range(cell_words):
            cells[0, w] = 0
        here = cell[t]
        cells[0, here >> 6] = np.uint64(1) << np.uint64(here & 63)
        used_groups[0] = groups[t]
        for j in range(num_groups):
            count[0, j] = 0
        count[0, grp] = 1
        edges[0] = 0
        best[0] = min(floor[0], 0)  # what the first route on the stack must beat
        on_path[t] = True
        depth[0] = 0

    steps = 0
    while True:
        d = depth[0]
        if d < 0:
            i = st.token_i[0]
            if i >= len(tokens):
                return DONE
            st.token_i[0] = i + 1
            start(tokens[i])
            continue
        if out_used[0] >= cap_routes or out_used[1] + d + 1 > cap_conns:
            return FULL
        if steps >= budget:
            return PAUSED
        moved = False
        while True:
            # phase 0: extend the current leg from its end; phase 1: start leg B at T
            frm = stop[d] if phase[d] == 0 else stop[0]
            end = next_k[d] if phase[d] == 0 and closed[d] else adj_start[frm + 1]
            while next_k[d] < end:
                k = next_k[d]
                next_k[d] = k + 1
                if can_move(d, k, frm):
                    push(d, k, leg_b[d] or phase[d] == 1)
                    moved = True
                    break
            if moved or phase[d] == 1 or leg_b[d] or d == 0 or not pass_t[d]:
                break
            phase[d] = 1
            next_k[d] = adj_k[1] + 1
        if not moved:
            on_path[stop[d]] = False
            depth[0] = d - 1
            continue

        steps += 1
        stats[1] += 1
        e = d + 1
        if floor[0] > 0:
            end_a = -1 if closed[e] else stop[e]
            end_b = stop[0] if pass_t[e] and not leg_b[e] else -1
            most = route_bound(
                point_start,
                point_other,
                point_piece,
                flags,
                groups,
                pt,
                visit,
                stop,
                e + 1,
                count[e],
                used_groups[e],
                mask[e],
                end_a,
                end_b,
                on_path,
                chain,
            )
            if most < floor[0]:
                cut[0] += 1  # no route through this one reaches the floor
                on_path[stop[e]] = False
                depth[0] = d
                continue
        revenue = pay(e + 1, pt, work)
        beat = best[d]
        role = flags[stop[e]]
        if role & (LOAD | UNLOAD):
            # does the cargo the route can deliver change here?
            loads = False
            unloads = False
            for j in range(e):
                loads |= (flags[stop[j]] & LOAD) != 0
                unloads |= (flags[stop[j]] & UNLOAD) != 0
            if (role & LOAD and unloads) or (role & UNLOAD and loads and not unloads):
                beat = -1
        best[e] = beat
        if revenue >= 0:
            stats[0] += 1
        if revenue > beat:
            best[e] = revenue
        if revenue > beat and revenue >= floor[0]:
            if floor[0] > 0:
                floor[0] = revenue + 1
            r = out_used[0]
            at = out_used[1]
            for w in range(words):
                out_mask[r, w] = mask[e, w]
            out_revenue[r] = revenue
            out_origin[r] = stop[0]
            out_start[r] = at
            out_length[r] = e
            out_split[r] = split[e]
            for j in range(e):
                out_conns[at + j] = conn[j + 1]
            out_used[0] = r + 1
            out_used[1] = at + e
            if r + 1 >= route_limit:
                return LIMIT
