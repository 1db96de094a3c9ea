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
so each one is priced by :func:`~.payment.best_payment`. A route is kept
only when it earns more than every route on its stack below it: those are
sub-routes (a subset of its track), so a kept sub-route dominates it in any
combination. The search writes kept routes into preallocated buffers and
returns FULL when they run out, PAUSED after ``budget`` steps, LIMIT after
``route_limit`` kept routes; it resumes from its :class:`DfsState` where it
stopped, so the caller can grow buffers, watch the clock and report
progress between calls.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .payment import best_payment

DONE, PAUSED, FULL, LIMIT = 0, 1, 2, 3
# stop flags of routecalc.graph
END_ONLY, BLOCKED = 1, 2


class GraphArrays(NamedTuple):
    """The :class:`~routecalc.graph.TrackGraph` arrays the search reads."""

    adj_start: np.ndarray  # int64[N + 1]
    adj_conn: np.ndarray  # int64[M]
    adj_other: np.ndarray  # int64[M]
    adj_forward: np.ndarray  # int64[M]
    flags: np.ndarray  # int64[N]
    groups: np.ndarray  # uint64[N]
    cell: np.ndarray  # int64[N]
    conn_mask: np.ndarray  # uint64[C, W]
    conn_cells: np.ndarray  # uint64[C, WC]
    conn_edges: np.ndarray  # int64[C]
    conn_gauge: np.ndarray  # int64[C]
    conn_terminal: np.ndarray  # int64[C]
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
    return DfsState(
        token_i=np.zeros(1, np.int64), depth=np.full(1, -1, np.int64),
        stop=np.zeros(depth, np.int64), conn=np.zeros(depth, np.int64), adj_k=np.zeros(depth, np.int64),
        next_k=np.zeros(depth, np.int64), phase=np.zeros(depth, np.int64), leg_b=np.zeros(depth, np.bool_),
        split=np.zeros(depth, np.int64), closed=np.zeros(depth, np.bool_), pass_t=np.zeros(depth, np.bool_),
        mask=np.zeros((depth, words), np.uint64), cells=np.zeros((depth, cell_words), np.uint64),
        groups=np.zeros(depth, np.uint64), count=np.zeros((depth, groups), np.int64),
        edges=np.zeros(depth, np.int64), best=np.zeros(depth, np.int64),
        on_path=np.zeros(num_stops, np.bool_), stats=np.zeros(2, np.int64))


def new_buffer(routes: int, conns: int, words: int) -> RouteBuffer:
    return RouteBuffer(np.zeros((routes, words), np.uint64), np.zeros(routes, np.int64),
                       np.zeros(routes, np.int64), np.zeros(routes, np.int64), np.zeros(routes, np.int64),
                       np.zeros(routes, np.int64), np.zeros(conns, np.int64), np.zeros(2, np.int64))


def grown(buf: RouteBuffer) -> RouteBuffer:
    """A buffer twice as large holding the same routes."""
    routes, conns = buf.revenue.shape[0], buf.conns.shape[0]
    out = new_buffer(2 * routes, 2 * conns, buf.mask.shape[1])
    for old, new in zip(buf, out):
        new[:len(old)] = old
    return out


@njit(cache=True, nogil=True, inline="always")
def _can_move(g, walk, pt, st, d, k, frm, first):
    """May the route at depth ``d`` go on along adjacency entry ``k`` of stop
    ``frm``? ``first``: the connection is the first of the whole route."""
    c = g.adj_conn[k]
    nxt = g.adj_other[k]
    if not g.conn_gauge[c] & walk.gauge_bit or st.on_path[nxt]:
        return False
    if pt.token[nxt] and nxt < st.stop[0]:
        return False  # this route is found from its lowest token stop
    grp = pt.group[nxt]
    if grp < 0 or st.count[d, grp] >= walk.visit[grp] or g.groups[nxt] & st.groups[d]:
        return False
    start_terminal = g.conn_terminal[c] & (1 if g.adj_forward[k] else 2)
    if start_terminal and not first:
        return False
    if walk.hex_limit >= 0 and st.edges[d] + g.conn_edges[c] > walk.hex_limit:
        return False
    for w in range(st.mask.shape[1]):
        if g.conn_mask[c, w] & st.mask[d, w]:
            return False
    if walk.no_hex_twice:
        if g.conn_revisits[c]:
            return False
        here = g.cell[frm]
        for w in range(st.cells.shape[1]):
            new = g.conn_cells[c, w]
            if w == here >> 6:
                new &= ~(np.uint64(1) << np.uint64(here & 63))
            if new & st.cells[d, w]:
                return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _push(g, pt, st, d, k, leg_b):
    """Move along adjacency entry ``k`` to depth ``d + 1``."""
    e = d + 1
    c = g.adj_conn[k]
    nxt = g.adj_other[k]
    forward = g.adj_forward[k]
    st.stop[e] = nxt
    st.conn[e] = c
    st.adj_k[e] = k
    st.next_k[e] = g.adj_start[nxt]
    st.phase[e] = 0
    st.leg_b[e] = leg_b
    st.split[e] = st.split[d] if leg_b else e
    far_terminal = g.conn_terminal[c] & (2 if forward else 1)
    st.closed[e] = (g.flags[nxt] & (END_ONLY | BLOCKED)) != 0 or far_terminal != 0
    if d == 0:
        start_terminal = g.conn_terminal[c] & (1 if forward else 2)
        st.pass_t[e] = (g.flags[st.stop[0]] & (END_ONLY | BLOCKED)) == 0 and start_terminal == 0
    else:
        st.pass_t[e] = st.pass_t[d]
    for w in range(st.mask.shape[1]):
        st.mask[e, w] = st.mask[d, w] | g.conn_mask[c, w]
    for w in range(st.cells.shape[1]):
        st.cells[e, w] = st.cells[d, w] | g.conn_cells[c, w]
    st.groups[e] = st.groups[d] | g.groups[nxt]
    for j in range(st.count.shape[1]):
        st.count[e, j] = st.count[d, j]
    st.count[e, pt.group[nxt]] += 1
    st.edges[e] = st.edges[d] + g.conn_edges[c]
    st.on_path[nxt] = True
    st.depth[0] = e


@njit(cache=True, nogil=True, inline="always")
def _start(g, walk, pt, st, t):
    """Put start ``t`` on the empty stack; False if the train cannot stop there."""
    grp = pt.group[t]
    if grp < 0 or walk.visit[grp] < 1:
        return False
    st.stop[0] = t
    st.next_k[0] = g.adj_start[t]
    st.phase[0] = 0
    st.leg_b[0] = False
    st.split[0] = 0
    st.closed[0] = False
    st.mask[0, :] = 0
    st.cells[0, :] = 0
    here = g.cell[t]
    st.cells[0, here >> 6] = np.uint64(1) << np.uint64(here & 63)
    st.groups[0] = g.groups[t]
    st.count[0, :] = 0
    st.count[0, grp] = 1
    st.edges[0] = 0
    st.best[0] = 0
    st.on_path[t] = True
    st.depth[0] = 0
    return True


@njit(cache=True, nogil=True)
def enumerate_routes(g, walk, pt, tokens, st, out, budget, route_limit):
    """Run the search on from ``st``; returns DONE, PAUSED, FULL or LIMIT."""
    paid = np.zeros(st.stop.shape[0], dtype=np.bool_)
    cap_routes = out.revenue.shape[0]
    cap_conns = out.conns.shape[0]
    steps = 0
    while True:
        d = st.depth[0]
        if d < 0:
            i = st.token_i[0]
            if i >= len(tokens):
                return DONE
            st.token_i[0] = i + 1
            _start(g, walk, pt, st, tokens[i])
            continue
        if out.used[0] >= cap_routes or out.used[1] + d + 1 > cap_conns:
            return FULL
        if steps >= budget:
            return PAUSED
        moved = False
        if st.phase[d] == 0:
            cur = st.stop[d]
            if not st.closed[d]:
                end = g.adj_start[cur + 1]
                while st.next_k[d] < end:
                    k = st.next_k[d]
                    st.next_k[d] = k + 1
                    if _can_move(g, walk, pt, st, d, k, cur, d == 0):
                        _push(g, pt, st, d, k, st.leg_b[d])
                        moved = True
                        break
            if not moved and not st.leg_b[d] and d >= 1 and st.pass_t[d]:
                st.phase[d] = 1
                st.next_k[d] = st.adj_k[1] + 1
        if not moved and st.phase[d] == 1:
            t = st.stop[0]
            end = g.adj_start[t + 1]
            while st.next_k[d] < end:
                k = st.next_k[d]
                st.next_k[d] = k + 1
                if _can_move(g, walk, pt, st, d, k, t, False):
                    _push(g, pt, st, d, k, True)
                    moved = True
                    break
        if not moved:
            st.on_path[st.stop[d]] = False
            st.depth[0] = d - 1
            continue

        steps += 1
        st.stats[1] += 1
        e = d + 1
        revenue = best_payment(st.stop, e + 1, pt, paid)
        st.best[e] = st.best[d]
        if revenue >= 0:
            st.stats[0] += 1
        if revenue > st.best[d]:
            st.best[e] = revenue
            r = out.used[0]
            at = out.used[1]
            out.mask[r, :] = st.mask[e, :]
            out.revenue[r] = revenue
            out.origin[r] = st.stop[0]
            out.start[r] = at
            out.length[r] = e
            out.split[r] = st.split[e]
            for j in range(e):
                out.conns[at + j] = st.conn[j + 1]
            out.used[0] = r + 1
            out.used[1] = at + e
            if r + 1 >= route_limit:
                return LIMIT
