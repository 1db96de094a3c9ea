"""An optimistic bound on what a route can still earn, for the branch and
bound search of one train's best route (the enumeration kernel with a
rising floor, :class:`~.enumeration.Prune`).

A route grows from its open ends (the end of the leg being grown, and the
start ``T`` while the second leg has not begun) through ``G'``: the stops
the route may still visit (not on it, not a token stop it must not enter,
not of a used stop group or of a distance group with no visits left) and
the connections of the train's gauge whose track the route has not used.
A simple path leaving an open end ``s`` visits the blocks (biconnected
components) of ``G'`` along one chain of its block-cut tree rooted at
``s``: once it leaves a block through a cut vertex it cannot come back. So
the stops one end can still collect are bounded by the best root-to-leaf
chain, not by everything reachable, which on a board the route has cut in
two is about half. A stop that only ends a route (an offboard, a blocked
city) is a leaf block of its own beside each stop it touches.

Per distance group a chain holds either its best ``k`` stop weights (``k``:
the visits the train has left there, at most the slots its stops can pay
in) or, for a group whose every stop pays (a diesel), the sum of them all.
Of two chains below a block only one is taken, so a block's value is its
own stops merged with the element-wise best of its children's lists: an
over-estimate of each one, never less. Two open ends are bounded apart and
added (their paths are disjoint). The route's stops and those candidates
are then paid by the greedy unforced choice, with every bonus: no
extension of the route earns more.

Blocks come from Tarjan's depth-first search, iterative, once per open end,
in O(stops + connections).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types

from ..graph import BLOCKED, END_ONLY
from .cache import kernel, record
from .payment import PAY_TABLE

#: Longest best-weights list per distance group; a group that could pay more
#: stops is summed whole instead (an over-estimate).
MOST_LISTED = 16
#: Slots of ChainWork.acc_*: a block's own stops; the best and second best
#: chains below its stops; the best and second best chains from the root,
#: the best two-chain path through it; the result; scratch.
OWN, BELOW, BELOW_2, ROOT, ROOT_2, THROUGH, RESULT, SPARE = range(8)
SLOTS = 8


class ChainWork(NamedTuple):
    """Scratch space of :func:`route_bound`, allocated once per search."""

    seen: np.ndarray  # int64[N]: search stamp that discovered the stop
    disc: np.ndarray  # int64[N]: discovery time
    low: np.ndarray  # int64[N]: lowest discovery time reachable below
    parent: np.ndarray  # int64[N]
    next_k: np.ndarray  # int64[N]: next adjacency entry to look at
    path: np.ndarray  # int64[N]: the depth-first stack
    pending: np.ndarray  # int64[N]: stops of the blocks not closed yet
    down_sum: np.ndarray  # int64[N, G]: best chain below the stop, summed groups
    down_top: np.ndarray  # int64[N, G, K]: best chain below the stop, listed groups (falling)
    acc_sum: np.ndarray  # int64[SLOTS, G]: chains being put together (the slots below), summed groups
    acc_top: np.ndarray  # int64[SLOTS, G, K]: the same, listed groups
    listed: np.ndarray  # int64[G]: list length per group, -1: summed
    paying: np.ndarray  # int64[N + GK]: weights to pay, falling
    paying_group: np.ndarray  # int64[N + GK]: their distance groups
    room: np.ndarray  # int64[G]
    stamp: np.ndarray  # int64[1]


def new_chain_work(num_stops: int, groups: int) -> ChainWork:
    """Scratch space for a train with ``groups`` distance groups (Python-side,
    as every kernel's arrays are)."""
    g, k = max(groups, 1), MOST_LISTED
    n = np.zeros(num_stops, np.int64)
    return ChainWork(
        n.copy(),
        n.copy(),
        n.copy(),
        n.copy(),
        n.copy(),
        n.copy(),
        n.copy(),
        np.zeros((num_stops, g), np.int64),
        np.zeros((num_stops, g, k), np.int64),
        np.zeros((SLOTS, g), np.int64),
        np.zeros((SLOTS, g, k), np.int64),
        np.zeros(g, np.int64),
        np.zeros(num_stops + g * k, np.int64),
        np.zeros(num_stops + g * k, np.int64),
        np.zeros(g, np.int64),
        np.zeros(1, np.int64),
    )


_i64, _u64, _bool = types.int64[::1], types.uint64[::1], types.boolean[::1]
_i64_2d, _i64_3d, _u64_2d = types.int64[:, ::1], types.int64[:, :, ::1], types.uint64[:, ::1]
CHAIN_WORK = record(
    ChainWork,
    _i64,
    _i64,
    _i64,
    _i64,
    _i64,
    _i64,
    _i64,
    _i64_2d,
    _i64_3d,
    _i64_2d,
    _i64_3d,
    _i64,
    _i64,
    _i64,
    _i64,
    _i64,
)


@kernel(
    (
        _i64,
        _i64,
        _i64,
        _i64,
        _u64_2d,
        _i64,
        _u64,
        PAY_TABLE,
        _i64,
        types.int64,
        _i64,
        types.int64,
        _i64,
        types.uint64,
        _u64,
        types.int64,
        types.int64,
        _bool,
        _i64,
        CHAIN_WORK,
    )
)
def route_bound(
    adj_start,
    adj_conn,
    adj_other,
    conn_gauge,
    conn_mask,
    flags,
    stop_groups,
    pt,
    visit,
    gauge_bit,
    route,
    length,
    count,
    used_groups,
    mask,
    end_a,
    end_b,
    on_path,
    bonus_most,
    cw,
):
    """No route through ``route[:length]`` (itself included) earns more.

    ``count``: its stops per distance group, ``used_groups`` its stop
    groups, ``mask`` its track; ``end_a``, ``end_b``: its open ends (-1:
    none); ``bonus_most``: every bonus, multiplied and plain."""
    weight, group, token, pay_slots = pt.weight, pt.group, pt.token, pt.pay
    seen, disc, low, parent, next_k = cw.seen, cw.disc, cw.low, cw.parent, cw.next_k
    path, pending, down_sum, down_top = cw.path, cw.pending, cw.down_sum, cw.down_top
    acc_sum, acc_top, listed, room = cw.acc_sum, cw.acc_top, cw.listed, cw.room
    paying, paying_group = cw.paying, cw.paying_group
    num_stops = len(flags)
    num_groups = len(pay_slots)
    words = mask.shape[0]
    first = route[0]

    # per group: how many of its best stops a chain lists (-1: all, summed)
    for j in range(num_groups):
        left = visit[j] - count[j]
        can_pay = pay_slots[j] + (pay_slots[0] if pt.fill and j != 0 else 0)
        if left <= 0 or can_pay <= 0:
            listed[j] = 0
        elif pt.every or can_pay >= num_stops or min(left, can_pay) > MOST_LISTED:
            listed[j] = -1
        else:
            listed[j] = min(left, can_pay)

    def allowed(v):
        """May an extension of the route visit stop v?"""
        grp = group[v]
        if on_path[v] or grp < 0 or count[grp] >= visit[grp]:
            return False
        if token[v] and v < first:
            return False
        return (stop_groups[v] & used_groups) == 0

    def usable(k):
        c = adj_conn[k]
        if not conn_gauge[c] & gauge_bit:
            return False
        for w in range(words):
            if conn_mask[c, w] & mask[w]:
                return False
        return True

    def clear(sums, top):
        for j in range(num_groups):
            sums[j] = 0
            for i in range(MOST_LISTED):
                top[j, i] = 0

    def keep_best(sums, top, other_sums, other_top):
        """sums / top become the element-wise best of themselves and the others:
        at least as much as either, for any number of stops taken."""
        for j in range(num_groups):
            if other_sums[j] > sums[j]:
                sums[j] = other_sums[j]
            for i in range(MOST_LISTED):
                if other_top[j, i] > top[j, i]:
                    top[j, i] = other_top[j, i]

    def insert(top, j, value):
        """Put value into the falling list top[j] (its first listed[j] places)."""
        n = listed[j]
        if n <= 0 or value <= top[j, n - 1]:
            return
        i = n - 1
        while i > 0 and top[j, i - 1] < value:
            top[j, i] = top[j, i - 1]
            i -= 1
        top[j, i] = value

    def add_stop(sums, top, v):
        """Stop v counted in a chain's lists."""
        j = group[v]
        if weight[v] <= 0 or listed[j] == 0:
            return
        if listed[j] < 0:
            sums[j] += weight[v]
        else:
            insert(top, j, weight[v])

    def keep_two(a, b, other_sums, other_top):
        """Slots a / b become the element-wise best and second best of
        themselves and the others."""
        for j in range(num_groups):
            x = other_sums[j]
            if x > acc_sum[a, j]:
                acc_sum[b, j] = acc_sum[a, j]
                acc_sum[a, j] = x
            elif x > acc_sum[b, j]:
                acc_sum[b, j] = x
            for i in range(MOST_LISTED):
                x = other_top[j, i]
                if x > acc_top[a, j, i]:
                    acc_top[b, j, i] = acc_top[a, j, i]
                    acc_top[a, j, i] = x
                elif x > acc_top[b, j, i]:
                    acc_top[b, j, i] = x

    def merge_into(a, b):
        """Slot a takes slot b's stops too (the best listed[j] of both)."""
        for j in range(num_groups):
            acc_sum[a, j] += acc_sum[b, j]
            for i in range(max(listed[j], 0)):
                insert(acc_top[a], j, acc_top[b, j, i])

    def copy_slot(a, b):
        for j in range(num_groups):
            acc_sum[a, j] = acc_sum[b, j]
            for i in range(MOST_LISTED):
                acc_top[a, j, i] = acc_top[b, j, i]

    def extensions(s, other):
        """What the route's extensions from open end s (and from ``other``,
        -1 or the second open end) can collect, into slot RESULT. With two
        ends both are one root z: the two extensions and z make one simple
        path through z, down at most two chains of z's block-cut tree, or
        through one block of z and down two chains below it."""
        cw.stamp[0] += 1
        stamp = cw.stamp[0]
        seen[s] = stamp
        disc[s] = 1
        low[s] = 1
        parent[s] = -1
        next_k[s] = adj_start[s]
        clear(down_sum[s], down_top[s])
        for slot in (ROOT, ROOT_2, THROUGH):
            clear(acc_sum[slot], acc_top[slot])
        second = False  # the root's connections: s's, then other's
        clock = 1
        depth = 1
        path[0] = s
        held = 0
        while depth > 0:
            v = path[depth - 1]
            if v == s and next_k[v] == adj_start[v + 1] and other >= 0 and not second:
                second = True
                next_k[v] = adj_start[other]
            end = adj_start[other + 1] if v == s and second else adj_start[v + 1]
            if next_k[v] < end:
                k = next_k[v]
                next_k[v] = k + 1
                w = adj_other[k]
                if w == other:
                    w = s
                if w == parent[v] or w == v or not usable(k):
                    continue
                if seen[w] == stamp:
                    if disc[w] < low[v]:
                        low[v] = disc[w]
                    continue
                if not allowed(w):
                    continue
                if flags[w] & (END_ONLY | BLOCKED):
                    # a leaf block of its own below v: the chain ends there
                    clear(acc_sum[OWN], acc_top[OWN])
                    add_stop(acc_sum[OWN], acc_top[OWN], w)
                    if v == s:
                        keep_two(ROOT, ROOT_2, acc_sum[OWN], acc_top[OWN])
                    else:
                        keep_best(down_sum[v], down_top[v], acc_sum[OWN], acc_top[OWN])
                    continue
                clock += 1
                seen[w] = stamp
                disc[w] = clock
                low[w] = clock
                parent[w] = v
                next_k[w] = adj_start[w]
                clear(down_sum[w], down_top[w])
                path[depth] = w
                depth += 1
                pending[held] = w
                held += 1
                continue
            depth -= 1
            p = parent[v]
            if p < 0:
                continue
            if low[v] < low[p]:
                low[p] = low[v]
            if low[v] < disc[p]:
                continue
            # a block closes below p: its stops are the pending ones down to v;
            # a chain through it takes them all and goes on below one of them
            for slot in (OWN, BELOW, BELOW_2):
                clear(acc_sum[slot], acc_top[slot])
            while True:
                held -= 1
                u = pending[held]
                add_stop(acc_sum[OWN], acc_top[OWN], u)
                keep_two(BELOW, BELOW_2, down_sum[u], down_top[u])
                if u == v:
                    break
            if p == s and other >= 0:
                # a path through the root may also go in and out of this block
                copy_slot(SPARE, OWN)
                merge_into(SPARE, BELOW)
                merge_into(SPARE, BELOW_2)
                keep_best(acc_sum[THROUGH], acc_top[THROUGH], acc_sum[SPARE], acc_top[SPARE])
            merge_into(OWN, BELOW)
            if p == s:
                keep_two(ROOT, ROOT_2, acc_sum[OWN], acc_top[OWN])
            else:
                keep_best(down_sum[p], down_top[p], acc_sum[OWN], acc_top[OWN])
        copy_slot(RESULT, ROOT)
        if other >= 0:
            merge_into(RESULT, ROOT_2)
            keep_best(acc_sum[RESULT], acc_top[RESULT], acc_sum[THROUGH], acc_top[THROUGH])

    if end_a >= 0:
        extensions(end_a, end_b)
    elif end_b >= 0:
        extensions(end_b, -1)
    else:
        clear(acc_sum[RESULT], acc_top[RESULT])

    # the route's stops and the candidates, paid by the greedy unforced choice
    n = 0
    extra = 0
    for i in range(length):
        v = route[i]
        if pt.every:
            extra += max(weight[v], 0)
        else:
            paying[n] = weight[v]
            paying_group[n] = group[v]
            n += 1
    for j in range(num_groups):
        extra += acc_sum[RESULT, j]
        for i in range(max(listed[j], 0)):
            if acc_top[RESULT, j, i] > 0:
                paying[n] = acc_top[RESULT, j, i]
                paying_group[n] = j
                n += 1
    for i in range(1, n):  # falling weights (insertion sort: a few dozen entries)
        value, grp = paying[i], paying_group[i]
        j = i
        while j > 0 and paying[j - 1] < value:
            paying[j] = paying[j - 1]
            paying_group[j] = paying_group[j - 1]
            j -= 1
        paying[j] = value
        paying_group[j] = grp
    for j in range(num_groups):
        room[j] = pay_slots[j]
    total = extra
    for i in range(n):
        grp = paying_group[i]
        if room[grp] > 0:
            room[grp] -= 1
            total += paying[i]
        elif pt.fill and grp != 0 and room[0] > 0:
            room[0] -= 1
            total += paying[i]
    raw = (total + bonus_most[0]) * pt.multiplier + bonus_most[1]
    return raw // pt.divisor * pt.factor
