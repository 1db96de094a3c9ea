"""An optimistic bound on what a route can still earn, for the branch and
bound search of one train's best route (the enumeration kernel with a
rising floor, :class:`~.enumeration.Prune`).

A route grows from its open ends (the end of the leg being grown, and the
start ``T`` while the second leg has not begun) through ``G'``: the stops
the route may still visit (not on it, not a token stop it must not enter,
not of a used stop group or of a distance group with no visits left) and
the crossings and junctions its track has not used (:class:`TrackPoints`:
a route is a simple path through them).
A simple path leaving an open end ``s`` visits the blocks (biconnected
components) of ``G'`` along one chain of its block-cut tree rooted at
``s``: once it leaves a block through a cut vertex it cannot come back. So
the stops one end can still collect are bounded by the best root-to-leaf
chain, not by everything reachable. A stop that only ends a route (an
offboard, a blocked city) is a leaf block of its own beside each stop it
touches, so two chains may end at the same one where a path holds it once.
Where two chains are taken together (from the root, or below a block of
it) each sum pairs them only if they end at different such stops: per
point and sum, the best chain below it, the stop it ends at and the best
chain below it that ends elsewhere (an upper bound on every chain not
ending there, so every pair of chains a path can take, from two children,
is counted). Stress-1828-d-8e's 8E kept its bound at 440 over its maximum
430 for 170,698 steps, with the offboard F2 (70, beside five stops)
ending both chains from its token at E11; it now proves 430 in 26 steps.

Two bounds come out of one pass, and the lower counts:

- lists: per distance group a chain holds either its best ``k`` stop
  weights (``k``: the visits the train has left there, at most the slots
  its stops can pay in) or, for a group whose every stop pays (a diesel),
  the sum of them all. Of the chains below a block only one is taken, so a
  block's value is its own stops merged with the element-wise best of its
  children's lists: at least each one. The route's stops and those
  candidates are paid by the greedy unforced choice;
- thresholds: no choice of at most ``P`` paying stops (``P`` the train's
  pay slots) earns more than ``P * theta`` plus what each stop it may pay
  earns above ``theta``, for any ``theta >= 0``. That excess is one number
  per chain, so the best chain is exact, with no element-wise mixing of
  chains (an express train's one rich offboard down one chain and many
  middling stops down another). Each ``theta`` of
  :attr:`ChainWork.thresholds` is tried.

Where a distance group's visits run out before its pay slots (an 1867 8:
eight cities and offboards, towns free), each ``theta`` may come with a
price ``lambda >= 0`` on a visit left there (:attr:`ChainWork.visit_price`):
the bound adds ``lambda`` times the visits left, and each stop of the group
off the route earns ``lambda`` less, so the two open ends share the visits
left (with one ``lambda`` per chain it is the best ``k`` of them, no chains
mixed). A chain below a stop of the group passes it, paid or not, so it is
charged that visit where the stop earns less than ``lambda``: an offboard
behind a poor city is not free. A connect bonus whose stop is off the route
gives up ``lambda`` more too. Any ``lambda`` gives a true bound.

Where every stop weight the train may be paid is a ``theta`` tried, the
train has one way to fill its pay slots (no ``fill``), no connect bonus,
and no group's visits left fall below its slots, the thresholds are never looser than the lists
(with ``theta`` the ``P``-th best listed weight, no chain holds more than
the list's ``P`` weights above it, each at most the list's), so such a
group is summed, not listed (:attr:`ChainWork.lists`): a third less work
a step, and never more steps (the same on stress-1828-d-8e's 8E and
stress-express's 8E and 6E; summing can be tighter, as it mixes no chains).

The two open ends of a route not yet grown both ways are one root: the
extensions and the route make one simple path through it, down at most two
of its chains, or into one of its blocks and down two chains below that.
Every bonus the route's stops and the stops it can still pay could earn is
added; in the threshold bounds a connect bonus the route's stops do not
earn yet counts only down chains with a stop it needs (1867's Timmins
bonus, counted everywhere, kept most routes above the floor). A train paid
for every stop it visits has one threshold, 0: a chain's stops summed, so
its open bonuses are counted the same way (stress-1867-two-d's D, whose
bonus needs the offboard D2, which only ends a route: 653,802 -> 51,788
steps to prove its 860). No extension of the route earns more.

A connect bonus is paid only with a paying stop of each of its cell sets:
where the best such stop weighs less than ``theta``, the slot it holds
earns that much less than ``theta`` (see ``price_bonuses``). Where a
distance group may be visited only a few more times, the points every path
from the open ends to which passes more of its stops are left out of
``G'`` first (a breadth-first search by that count).

Blocks come from Tarjan's depth-first search, iterative, one per route (its
open ends as one root), in O(points + their links).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types

from ..graph import BLOCKED, END_ONLY, PIECE_PATH, TrackGraph
from .cache import kernel, record
from .payment import PAY_TABLE, VISIT

#: Longest best-weights list per distance group; a group that could pay more
#: stops is summed whole instead (an over-estimate).
MOST_LISTED = 16
#: Bonuses at most (each has a cell set; PayTable.sets has 64 bits).
MOST_BONUSES = 64
#: No chain of this kind (the open-bonus sums).
NONE = -(1 << 40)
#: The end of a chain (ChainWork.down_end, acc_end) that is no end-only
#: stop; one not known (the best chain that does not end where another does).
NO_END, SOME_END = -1, -2
#: Slots of ChainWork.acc_*: a block's own stops; the best and second best
#: chains below its stops; the best and second best chains from the root,
#: the best two-chain path through it; the result; scratch. In the sums
#: BELOW_2 and ROOT_2 hold the best two chains together instead.
OWN, BELOW, BELOW_2, ROOT, ROOT_2, THROUGH, RESULT, SPARE = range(8)
SLOTS = 8


class TrackPoints(NamedTuple):
    """The graph the bound searches (CSR): the stops (numbers 0..N-1), then
    the crossings and junctions, the points where track can be shared. Each
    connection of the train's gauge is a walk from stop to stop through its
    points, so a route, whose connections share no piece, is a simple path
    here; in the stop graph a junction joining k stops looks like a clique
    of them, here it is the cut vertex it is."""

    start: np.ndarray  # int64[M + 1]
    other: np.ndarray  # int64[E]: the neighbouring point of each entry
    piece: np.ndarray  # int64[M]: the track piece of a point, -1 for a stop


def track_points(graph: TrackGraph, gauge_bit: int) -> TrackPoints:
    """The :class:`TrackPoints` of the connections a train of ``gauge_bit``
    may use. A point with two neighbours becomes a line between them and one
    with fewer goes: a path through it is a path along that line, and a
    route whose track passes it uses the points at both ends of the line, so
    the search sees the same paths. A junction that every connection through
    it passes between one neighbour (its stem) and another (a switch: no
    connection turns between two branches) is merged into its stem: a route
    through it passes the stem beside it, so the search sees every route,
    and none that turns from branch to branch (stress-1867-two-d's D went
    27-62-61-60-59-13 through three such switches, 20 over its maximum)."""
    n = graph.num_stops
    near: dict[int, set[int]] = {v: set() for v in range(n)}
    piece_of: dict[int, int] = {}
    walks: list[list[int]] = []
    for c, pieces in enumerate(graph.conn_pieces):
        if not int(graph.conn_gauge[c]) & gauge_bit:
            continue
        walk = [int(graph.conn_a[c])]
        for bit in pieces:
            if graph.piece_kind[bit] != PIECE_PATH:
                walk.append(n + bit)
                piece_of[n + bit] = bit
                near.setdefault(n + bit, set())
        walk.append(int(graph.conn_b[c]))
        walks.append(walk)
        for a, b in zip(walk, walk[1:]):
            if a != b:
                near[a].add(b)
                near[b].add(a)
    merged_into: dict[int, int] = {}
    _drop_lines(near, n, [v for v in near if v >= n])
    while _merge_switches(near, n, walks, merged_into, graph.flags):
        pass
    number = {v: i for i, v in enumerate(sorted(near))}
    start = np.zeros(len(number) + 1, np.int64)
    other: list[int] = []
    piece = np.full(len(number), -1, np.int64)
    for v, i in number.items():
        other += sorted(number[u] for u in near[v])
        start[i + 1] = len(other)
        if v >= n:
            piece[i] = piece_of[v]
    return TrackPoints(start, np.array(other, np.int64), piece)


def _drop_lines(near: dict[int, set[int]], n: int, lines: list[int]) -> None:
    """Of ``lines`` (points), each with two neighbours or fewer becomes a
    line between them (:func:`track_points`), and so on for its neighbours."""
    while lines:
        v = lines.pop()
        if v < n or v not in near or len(near[v]) > 2:
            continue
        ends = near.pop(v)
        for u in ends:
            near[u].discard(v)
        if len(ends) == 2:
            a, b = ends
            near[a].add(b)
            near[b].add(a)
        lines += [u for u in ends if u >= n and len(near[u]) <= 2]


def _merge_switches(
    near: dict[int, set[int]], n: int, walks: list[list[int]], merged_into: dict[int, int], flags: np.ndarray
) -> bool:
    """Merges each junction whose every connection passes one neighbour of
    it (its stem) into that stem (:func:`track_points`); whether any was.
    The connections are read as walks over the points left, merged points
    read as what they were merged into."""

    def now(v: int) -> int:
        while v in merged_into:
            v = merged_into[v]
        return v

    turns: dict[int, set[tuple[int, int]]] = {}
    for walk in walks:
        left: list[int] = []
        for v in map(now, walk):
            if v in near and (not left or left[-1] != v):
                left.append(v)
        for a, j, b in zip(left, left[1:], left[2:]):
            if j >= n:
                turns.setdefault(j, set()).add((a, b))
    merged = False
    for j, pairs in turns.items():
        if j not in near or now(j) != j:
            continue
        stems = set.intersection(*({a, b} for a, b in pairs)) & near[j]
        stem = min((x for x in stems if x >= n or flags[x] & (END_ONLY | BLOCKED)), default=-1)
        if stem < 0 or now(stem) != stem:
            continue
        merged_into[j] = stem
        branches = near.pop(j) - {stem}
        near[stem].discard(j)
        for u in branches:
            near[u].discard(j)
            near[u].add(stem)
            near[stem].add(u)
        _drop_lines(near, n, [stem, *branches])
        merged = True
    return merged


class ChainWork(NamedTuple):
    """Scratch space of :func:`route_bound`, allocated once per search."""

    seen: np.ndarray  # int64[N]: search stamp that discovered the stop
    disc: np.ndarray  # int64[N]: discovery time
    low: np.ndarray  # int64[N]: lowest discovery time reachable below
    parent: np.ndarray  # int64[N]
    next_k: np.ndarray  # int64[N]: next adjacency entry to look at
    path: np.ndarray  # int64[N]: the depth-first stack
    pending: np.ndarray  # int64[N]: stops of the blocks not closed yet
    thresholds: np.ndarray  # int64[T]: the values theta of the threshold bounds
    visit_price: np.ndarray  # int64[T]: with each theta, the price lambda of a visit left (see route_bound)
    down_sum: np.ndarray  # int64[N, G + T]: best chain below the stop, summed groups, then per theta
    down_top: np.ndarray  # int64[N, G, K]: best chain below the stop, listed groups (falling)
    acc_sum: np.ndarray  # int64[SLOTS, G + T]: chains being put together (the slots below), as down_sum
    down_open: np.ndarray  # int64[N, T]: as the threshold sums, of the chains with a stop an open bonus needs
    down_end: np.ndarray  # int64[N, G + T]: the end-only stop the best chain (down_sum) ends at, NO_END
    down_alt: np.ndarray  # int64[N, G + T]: the best chain below the stop not ending there
    acc_end: np.ndarray  # int64[SLOTS, G + T]: as down_end, for the slots
    acc_alt: np.ndarray  # int64[SLOTS, G + T]: as down_alt, for the slots
    acc_open: np.ndarray  # int64[SLOTS, T]
    acc_top: np.ndarray  # int64[SLOTS, G, K]: the same, listed groups
    listed: np.ndarray  # int64[G]: list length per group, -1: summed
    width: np.ndarray  # int64[G]: list length per group, 0: summed
    paying: np.ndarray  # int64[N + GK]: weights to pay, falling
    paying_group: np.ndarray  # int64[N + GK]: their distance groups
    room: np.ndarray  # int64[G]
    reached: np.ndarray  # int64[N]: search stamp that reached the stop (as a stop the route may pay)
    stamp: np.ndarray  # int64[1]
    lists: np.ndarray  # int64[1]: 0 when the thresholds bound at least as tight (groups with room summed)
    bonus_least: np.ndarray  # int64[MOST_BONUSES]: per possible connect bonus, its cell sets' least best payable weight
    bonus_open: np.ndarray  # int64[MOST_BONUSES]: 1 for a connect bonus the route's stops do not meet yet
    visits_to: np.ndarray  # int64[N]: fewest stops of one distance group on a path from an open end to the point
    out_of_reach: np.ndarray  # int64[N]: search stamp of the points no extension reaches within its visits left
    set_near: np.ndarray  # int64[64]: per bonus cell set, its best payable weight on the route or of an unpriced group
    set_far: np.ndarray  # int64[64]: per bonus cell set, its best payable weight off the route, of a priced group
    bonus_cost: np.ndarray  # int64[MOST_BONUSES]: per possible connect bonus, the pay it gives up (one theta, lambda)


def new_chain_work(
    num_stops: int,
    groups: int,
    thresholds: np.ndarray | None = None,
    lists: bool = True,
    visit_prices: np.ndarray | None = None,
) -> ChainWork:
    """Scratch space for a train with ``groups`` distance groups and these
    ``thresholds`` (Python-side, as every kernel's arrays are), each with
    its price of a visit left (``visit_prices``, 0 if not given); ``lists``
    False when the thresholds are every weight the train may be paid and it
    has no ``fill``."""
    g, k = max(groups, 1), MOST_LISTED
    n = np.zeros(num_stops, np.int64)
    thresholds = np.zeros(0, np.int64) if thresholds is None else thresholds
    visit_prices = np.zeros(len(thresholds), np.int64) if visit_prices is None else visit_prices
    sums = g + len(thresholds)
    return ChainWork(
        n.copy(),
        n.copy(),
        n.copy(),
        n.copy(),
        n.copy(),
        n.copy(),
        n.copy(),
        np.ascontiguousarray(thresholds, dtype=np.int64),
        np.ascontiguousarray(visit_prices, dtype=np.int64),
        np.zeros((num_stops, sums), np.int64),
        np.zeros((num_stops, g, k), np.int64),
        np.zeros((SLOTS, sums), np.int64),
        np.zeros((num_stops, len(thresholds)), np.int64),
        np.zeros((num_stops, sums), np.int64),
        np.zeros((num_stops, sums), np.int64),
        np.zeros((SLOTS, sums), np.int64),
        np.zeros((SLOTS, sums), np.int64),
        np.zeros((SLOTS, len(thresholds)), np.int64),
        np.zeros((SLOTS, g, k), np.int64),
        np.zeros(g, np.int64),
        np.zeros(g, np.int64),
        np.zeros(num_stops + g * k, np.int64),
        np.zeros(num_stops + g * k, np.int64),
        np.zeros(g, np.int64),
        n.copy(),
        np.zeros(1, np.int64),
        np.full(1, int(lists), np.int64),
        np.zeros(MOST_BONUSES, np.int64),
        np.zeros(MOST_BONUSES, np.int64),
        n.copy(),
        n.copy(),
        np.zeros(64, np.int64),
        np.zeros(64, np.int64),
        np.zeros(MOST_BONUSES, np.int64),
    )


_i64, _u64, _bool = types.int64[::1], types.uint64[::1], types.boolean[::1]
_i64_2d, _i64_3d, _u64_2d = types.int64[:, ::1], types.int64[:, :, ::1], types.uint64[:, ::1]
TRACK_POINTS = record(TrackPoints, _i64, _i64, _i64)
CHAIN_WORK = record(
    ChainWork, *(_i64,) * 9, _i64_2d, _i64_3d, *(_i64_2d,) * 7, _i64_3d, *(_i64,) * 15
)  # one type a field, in ChainWork's order


@kernel(
    (
        _i64,
        _i64,
        _i64,
        _i64,
        _u64,
        PAY_TABLE,
        _i64,
        _i64,
        types.int64,
        _i64,
        types.uint64,
        _u64,
        types.int64,
        types.int64,
        _bool,
        CHAIN_WORK,
    )
)
def route_bound(
    point_start,
    point_other,
    point_piece,
    flags,
    stop_groups,
    pt,
    visit,
    route,
    length,
    count,
    used_groups,
    mask,
    end_a,
    end_b,
    on_path,
    cw,
):
    """No route through ``route[:length]`` (itself included) earns more.

    The graph is :class:`TrackPoints` (``point_*``); ``count``: the route's
    stops per distance group, ``used_groups`` its stop groups, ``mask`` its
    track pieces; ``end_a``, ``end_b``: its open ends (-1: none)."""
    weight, group, token, pay_slots = pt.weight, pt.group, pt.token, pt.pay
    seen, disc, low, parent, next_k = cw.seen, cw.disc, cw.low, cw.parent, cw.next_k
    path, pending, down_sum, down_top = cw.path, cw.pending, cw.down_sum, cw.down_top
    acc_sum, acc_top, listed, width, room = cw.acc_sum, cw.acc_top, cw.listed, cw.width, cw.room
    paying, paying_group, reached, thresholds = cw.paying, cw.paying_group, cw.reached, cw.thresholds
    visit_price, set_near, set_far, bonus_cost = cw.visit_price, cw.set_near, cw.set_far, cw.bonus_cost
    down_open, acc_open = cw.down_open, cw.acc_open
    down_end, down_alt, acc_end, acc_alt = cw.down_end, cw.down_alt, cw.acc_end, cw.acc_alt
    bonus_least, bonus_open = cw.bonus_least, cw.bonus_open
    visits_to, out_of_reach = cw.visits_to, cw.out_of_reach
    num_thresholds = len(thresholds)
    num_stops = len(flags)
    num_groups = len(pay_slots)
    num_sums = num_groups + len(thresholds)
    first = route[0]
    cw.stamp[0] += 1
    stamp = cw.stamp[0]  # marks the stops this call reaches

    # per group: how many of its best stops a chain lists (-1: all, summed)
    for j in range(num_groups):
        left = visit[j] - count[j]
        can_pay = pay_slots[j] + (pay_slots[0] if pt.fill and j != 0 else 0)
        if left <= 0 or can_pay <= 0:
            listed[j] = 0
        elif (
            pt.every
            or can_pay >= num_stops
            or min(left, can_pay) > MOST_LISTED
            or (cw.lists[0] == 0 and left >= can_pay)
        ):
            listed[j] = -1
        else:
            listed[j] = min(left, can_pay)
        width[j] = max(listed[j], 0)

    # the groups whose visits run out before their pay slots: each visit
    # left there is priced (bit j of ``priced``), and their visits left
    priced = 0
    priced_left = 0
    for j in range(num_groups):
        can_pay = pay_slots[j] + (pay_slots[0] if pt.fill and j != 0 else 0)
        if visit[j] <= can_pay and visit[j] > count[j]:
            priced |= 1 << j
            priced_left += visit[j] - count[j]

    # the cell sets of the connect bonuses the route's stops do not meet yet
    need = np.uint64(0)
    for b in range(len(pt.bonus_kind)):
        if pt.bonus_kind[b] == VISIT:
            continue
        for j in range(pt.bonus_first[b], pt.bonus_first[b] + pt.bonus_count[b]):
            bit = np.uint64(1) << np.uint64(j)
            met = False
            for i in range(length):
                if pt.sets[route[i]] & bit:
                    met = True
            if not met:
                need |= bit

    def needed(v):
        """Is v a stop an open connect bonus needs (and the train may pay)?"""
        return v < num_stops and listed[group[v]] != 0 and (pt.sets[v] & need) != 0

    def payable(v):
        """May the train pay stop v (of the route), in its group or by fill?"""
        grp = group[v]
        return pay_slots[grp] > 0 or (pt.fill and grp != 0 and pay_slots[0] > 0)

    def none_open(row):
        for t in range(num_thresholds):
            row[t] = NONE

    def pair_open(pair, best, sums, opened):
        """acc_open[pair]: the best two chains together with a stop an open
        bonus needs, once a chain (its threshold ``sums``, and ``opened``:
        those of it with a needed stop) is offered beside those of slot
        ``best`` (before ``best`` takes it). Two chains ending at one
        end-only stop are paired too: more, never less."""
        for t in range(num_thresholds):
            if opened[t] > NONE:
                acc_open[pair, t] = max(acc_open[pair, t], opened[t] + acc_sum[best, num_groups + t])
            if acc_open[best, t] > NONE:
                acc_open[pair, t] = max(acc_open[pair, t], sums[num_groups + t] + acc_open[best, t])

    def best_open(row, other_row):
        for t in range(num_thresholds):
            if other_row[t] > row[t]:
                row[t] = other_row[t]

    def allowed(v):
        """May an extension of the route pass point v?"""
        if out_of_reach[v] == stamp:
            return False
        if v >= num_stops:
            bit = point_piece[v]
            return (mask[bit >> 6] & (np.uint64(1) << np.uint64(bit & 63))) == 0
        grp = group[v]
        if on_path[v] or grp < 0 or count[grp] >= visit[grp]:
            return False
        if token[v] and v < first:
            return False
        return (stop_groups[v] & used_groups) == 0

    def clear(sums, top):
        for j in range(num_sums):
            sums[j] = 0
        for j in range(num_groups):
            for i in range(width[j]):
                top[j, i] = 0

    def keep_best(sums, top, other_sums, other_top):
        """sums / top become the element-wise best of themselves and the others:
        at least as much as either, for any number of stops taken (the
        sums: already so, by :func:`merged`)."""
        for j in range(num_sums):
            if other_sums[j] > sums[j]:
                sums[j] = other_sums[j]
        for j in range(num_groups):
            for i in range(width[j]):
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
        """Stop v counted in a chain's lists and threshold sums."""
        if v >= num_stops:
            return
        j = group[v]
        if weight[v] <= 0 or listed[j] == 0:
            return
        if listed[j] < 0:
            sums[j] += weight[v]
        else:
            insert(top, j, weight[v])
        visits = (priced >> j) & 1
        for t in range(len(thresholds)):
            above = weight[v] - thresholds[t] - visits * visit_price[t]
            if above > 0:
                sums[num_groups + t] += above

    def keep_two(a, b, other_top):
        """Slots a / b become the element-wise best and second best of
        themselves and the others (the lists; the sums: :func:`paired`)."""
        for j in range(num_groups):
            for i in range(width[j]):
                x = other_top[j, i]
                if x > acc_top[a, j, i]:
                    acc_top[b, j, i] = acc_top[a, j, i]
                    acc_top[a, j, i] = x
                elif x > acc_top[b, j, i]:
                    acc_top[b, j, i] = x

    def merge_into(a, b):
        """Slot a takes slot b's listed stops too (the best listed[j] of
        both; the sums apart)."""
        for j in range(num_groups):
            for i in range(width[j]):
                insert(acc_top[a], j, acc_top[b, j, i])

    def copy_top(a, b):
        for j in range(num_groups):
            for i in range(width[j]):
                acc_top[a, j, i] = acc_top[b, j, i]

    def merged(best, best_end, best_alt, x, end, alt):
        """A chain's best sum, its end and its best not ending
        there, once a child's chains are offered too: x, ending at ``end``,
        and alt, ending elsewhere. Two chains ending at one end-only stop
        are one too many (the stop is a leaf beside each stop it touches).
        Scalars only: arrays passed to a helper are counted references."""
        apart = end < 0 or best_end != end
        higher = x > best
        best_alt = (best if higher else max(best_alt, x)) if apart else best_alt
        best_end = end if higher else best_end
        best = max(best, x)
        higher = alt > best
        best_alt = best if higher else max(best_alt, alt)
        best_end = SOME_END if higher else best_end
        return max(best, alt), best_end, best_alt

    def paired(best, best_end, best_alt, x, end, alt):
        """The best two chains together, one of them a child's (x ending at
        ``end``, or alt ending elsewhere), the other one of an earlier
        child's (best ending at best_end, or best_alt ending elsewhere)."""
        apart = end < 0 or best_end != end
        return max(x + (best if apart else best_alt), alt + best)

    def hand_up(v, root):
        """Slot OWN, a chain below v, offered to v's best chains (to the
        root's two best when v is the root)."""
        if v == root:
            keep_two(ROOT, ROOT_2, acc_top[OWN])
            pair_open(ROOT_2, ROOT, acc_sum[OWN], acc_open[OWN])
            best_open(acc_open[ROOT], acc_open[OWN])
            for j in range(num_sums):
                best, end, alt = acc_sum[ROOT, j], acc_end[ROOT, j], acc_alt[ROOT, j]
                x, x_end, x_alt = acc_sum[OWN, j], acc_end[OWN, j], acc_alt[OWN, j]
                acc_sum[ROOT_2, j] = max(acc_sum[ROOT_2, j], paired(best, end, alt, x, x_end, x_alt))
                acc_sum[ROOT, j], acc_end[ROOT, j], acc_alt[ROOT, j] = merged(best, end, alt, x, x_end, x_alt)
        else:
            for j in range(num_sums):
                best, end, alt = down_sum[v, j], down_end[v, j], down_alt[v, j]
                x, x_end, x_alt = acc_sum[OWN, j], acc_end[OWN, j], acc_alt[OWN, j]
                down_sum[v, j], down_end[v, j], down_alt[v, j] = merged(best, end, alt, x, x_end, x_alt)
            keep_best(down_sum[v], down_top[v], acc_sum[OWN], acc_top[OWN])
            best_open(down_open[v], acc_open[OWN])

    def extensions(s, other):
        """What the route's extensions from open end s (and from ``other``,
        -1 or the second open end) can collect, into slot RESULT. With two
        ends both are one root z: the two extensions and z make one simple
        path through z, down at most two chains of z's block-cut tree, or
        through one block of z and down two chains below it."""
        seen[s] = stamp
        disc[s] = 1
        low[s] = 1
        parent[s] = -1
        next_k[s] = point_start[s]
        clear(down_sum[s], down_top[s])
        for slot in (ROOT, ROOT_2, THROUGH):
            clear(acc_sum[slot], acc_top[slot])
            for j in range(num_sums):
                acc_end[slot, j] = NO_END
                acc_alt[slot, j] = 0
            none_open(acc_open[slot])
        second = False  # the root's connections: s's, then other's
        clock = 1
        depth = 1
        path[0] = s
        held = 0
        while depth > 0:
            v = path[depth - 1]
            if v == s and next_k[v] == point_start[v + 1] and other >= 0 and not second:
                second = True
                next_k[v] = point_start[other]
            end = point_start[other + 1] if v == s and second else point_start[v + 1]
            if next_k[v] < end:
                k = next_k[v]
                next_k[v] = k + 1
                w = point_other[k]
                if w == other:
                    w = s
                if w == parent[v] or w == v:
                    continue
                if seen[w] == stamp:
                    if disc[w] < low[v]:
                        low[v] = disc[w]
                    continue
                if not allowed(w):
                    continue
                if w >= num_stops:
                    pass  # a crossing or junction: no stop, no weight
                elif listed[group[w]] != 0:
                    reached[w] = stamp
                if w < num_stops and flags[w] & (END_ONLY | BLOCKED):
                    # a leaf block of its own below v: the chain ends there
                    clear(acc_sum[OWN], acc_top[OWN])
                    add_stop(acc_sum[OWN], acc_top[OWN], w)
                    for t in range(num_thresholds):
                        acc_open[OWN, t] = acc_sum[OWN, num_groups + t] if needed(w) else NONE
                    for j in range(num_sums):
                        acc_end[OWN, j] = w
                        acc_alt[OWN, j] = 0
                    hand_up(v, s)
                    continue
                clock += 1
                seen[w] = stamp
                disc[w] = clock
                low[w] = clock
                parent[w] = v
                next_k[w] = point_start[w]
                clear(down_sum[w], down_top[w])
                for j in range(num_sums):
                    down_end[w, j] = NO_END
                    down_alt[w, j] = 0
                none_open(down_open[w])
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
            for j in range(num_sums):
                acc_end[BELOW, j] = NO_END
                acc_alt[BELOW, j] = 0
            none_open(acc_open[BELOW])
            none_open(acc_open[BELOW_2])
            has_needed = False
            through = p == s and other >= 0  # a path through the root may go in and out of this block
            while True:
                held -= 1
                u = pending[held]
                if u < num_stops and (priced >> group[u]) & 1:
                    # a chain below u passes u: a visit, paid or not
                    for t in range(num_thresholds):
                        short = max(weight[u] - thresholds[t], 0) - visit_price[t]
                        if short < 0:
                            down_sum[u, num_groups + t] += short
                            down_alt[u, num_groups + t] += short
                            if down_open[u, t] > NONE:
                                down_open[u, t] += short
                add_stop(acc_sum[OWN], acc_top[OWN], u)
                has_needed |= needed(u)
                keep_two(BELOW, BELOW_2, down_top[u])
                if through:
                    pair_open(BELOW_2, BELOW, down_sum[u], down_open[u])
                best_open(acc_open[BELOW], down_open[u])
                for j in range(num_sums):
                    best, end, alt = acc_sum[BELOW, j], acc_end[BELOW, j], acc_alt[BELOW, j]
                    x, x_end, x_alt = down_sum[u, j], down_end[u, j], down_alt[u, j]
                    if through:
                        acc_sum[BELOW_2, j] = max(acc_sum[BELOW_2, j], paired(best, end, alt, x, x_end, x_alt))
                    acc_sum[BELOW, j], acc_end[BELOW, j], acc_alt[BELOW, j] = merged(best, end, alt, x, x_end, x_alt)
                if u == v:
                    break
            # the chains through this block with a needed stop: in it, or below
            for t in range(num_thresholds):
                own = acc_sum[OWN, num_groups + t]
                below = acc_sum[BELOW, num_groups + t]
                if has_needed:
                    acc_open[OWN, t] = own + below
                    acc_open[SPARE, t] = own + acc_sum[BELOW_2, num_groups + t]
                elif acc_open[BELOW, t] > NONE:
                    acc_open[OWN, t] = own + acc_open[BELOW, t]
                    acc_open[SPARE, t] = own + acc_open[BELOW_2, t]
                else:
                    acc_open[OWN, t] = NONE
                    acc_open[SPARE, t] = NONE
            if through:
                best_open(acc_open[THROUGH], acc_open[SPARE])
                copy_top(SPARE, OWN)
                merge_into(SPARE, BELOW)
                merge_into(SPARE, BELOW_2)
                for j in range(num_sums):
                    acc_sum[SPARE, j] = acc_sum[OWN, j] + acc_sum[BELOW_2, j]
                keep_best(acc_sum[THROUGH], acc_top[THROUGH], acc_sum[SPARE], acc_top[SPARE])
            merge_into(OWN, BELOW)
            for j in range(num_sums):
                own = acc_sum[OWN, j]
                acc_sum[OWN, j] = own + acc_sum[BELOW, j]
                acc_end[OWN, j] = acc_end[BELOW, j]
                acc_alt[OWN, j] = own + acc_alt[BELOW, j]
            hand_up(p, s)
        copy_top(RESULT, ROOT)
        for t in range(num_thresholds):
            acc_open[RESULT, t] = acc_open[ROOT, t]
        for j in range(num_sums):
            acc_sum[RESULT, j] = acc_sum[ROOT, j] if other < 0 else max(acc_sum[ROOT_2, j], acc_sum[THROUGH, j])
        if other >= 0:
            for t in range(num_thresholds):
                acc_open[RESULT, t] = acc_open[ROOT_2, t]
            best_open(acc_open[RESULT], acc_open[THROUGH])
            merge_into(RESULT, ROOT_2)
            keep_best(acc_sum[RESULT], acc_top[RESULT], acc_sum[THROUGH], acc_top[THROUGH])

    def within_visits(j, s, other):
        """Marks out of reach the points every path from the open ends s
        and ``other`` (-1: none) to which passes more stops of distance
        group j than the route may still visit: no extension takes them (an
        8 of 1867, paying the cities it visits and passing towns free, after
        six cities may pass two more, so it reaches only what towns lead
        to). A breadth-first search by the count, the stops of each count
        found from the last through points that add none."""
        left = visit[j] - count[j]
        for v in range(len(visits_to)):
            visits_to[v] = left + 1
        visits_to[s] = 0
        path[0] = s  # the points of the count being searched
        now = 1
        if other >= 0:
            visits_to[other] = 0
            path[1] = other
            now = 2
        level = 0
        while now > 0 and level <= left:
            later = 0  # points one count further, on pending[]
            while now > 0:
                now -= 1
                v = path[now]
                ends_here = v != s and v != other and v < num_stops and flags[v] & (END_ONLY | BLOCKED)
                if visits_to[v] != level or ends_here:
                    continue  # found again with fewer, or a route ends there
                for k in range(point_start[v], point_start[v + 1]):
                    w = point_other[k]
                    if visits_to[w] <= level or not allowed(w):
                        continue
                    if w < num_stops and group[w] == j:
                        if visits_to[w] > level + 1:
                            visits_to[w] = level + 1
                            pending[later] = w
                            later += 1
                    else:
                        visits_to[w] = level
                        path[now] = w
                        now += 1
            for i in range(later):
                path[i] = pending[i]
            now = later
            level += 1
        for v in range(len(visits_to)):
            if visits_to[v] > left:
                out_of_reach[v] = stamp

    for j in range(num_groups):
        if 0 < visit[j] - count[j] < num_stops and max(end_a, end_b) >= 0:
            within_visits(j, max(end_a, end_b), min(end_a, end_b))

    if end_a >= 0:
        extensions(end_a, end_b)
    elif end_b >= 0:
        extensions(end_b, -1)
    else:
        clear(acc_sum[RESULT], acc_top[RESULT])
        none_open(acc_open[RESULT])

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
        for i in range(width[j]):
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
    # every bonus the route's stops and the stops it can still pay could earn
    # (a visit bonus per stop, not per cell: more, never less); the open
    # connect bonuses apart, and only those still possible: each of its cell
    # sets with a stop the route may pay (on it or reached)
    visit_times = 0  # multiplied
    visit_plain = 0
    sure_times = 0
    sure_plain = 0
    open_times = 0
    open_plain = 0
    for b in range(len(pt.bonus_kind)):
        first_set = pt.bonus_first[b]
        times = pt.bonus_multiplied[b]
        bonus_least[b] = NONE
        if pt.bonus_kind[b] == VISIT:
            bit = np.uint64(1) << np.uint64(first_set)
            for v in range(num_stops):
                if (on_path[v] or reached[v] == stamp) and pt.sets[v] & bit:
                    if times:
                        visit_times += pt.bonus_amount[b]
                    else:
                        visit_plain += pt.bonus_amount[b]
            continue
        met_all = True
        least = -NONE
        for j in range(first_set, first_set + pt.bonus_count[b]):
            bit = np.uint64(1) << np.uint64(j)
            met_all &= not need & bit
            near = NONE
            far = NONE
            for v in range(num_stops):
                if not pt.sets[v] & bit:
                    continue
                if on_path[v] and payable(v):
                    near = max(near, weight[v])
                elif reached[v] == stamp and (priced >> group[v]) & 1:
                    far = max(far, weight[v])
                elif reached[v] == stamp:
                    near = max(near, weight[v])
            set_near[j] = near
            set_far[j] = far
            least = min(least, max(near, far))
        if least == NONE:
            continue
        bonus_least[b] = least
        bonus_open[b] = not met_all
        if met_all and times:
            sure_times += pt.bonus_amount[b]
        elif met_all:
            sure_plain += pt.bonus_amount[b]
        elif times:
            open_times += pt.bonus_amount[b]
        else:
            open_plain += pt.bonus_amount[b]
    multiplier = pt.multiplier
    most = (total + visit_times + sure_times + open_times) * multiplier + visit_plain + sure_plain + open_plain

    def price_bonuses(theta, price):
        """Each possible connect bonus's cost (``bonus_cost``) in a threshold
        bound at theta with a visit left priced ``price``. A bonus is paid
        only with a paying stop of each of its cell sets, so one whose best
        such stop weighs ``least`` below theta holds a pay slot that earns
        theta - least less than ``slots * theta`` counts for it, and one off
        the route of a priced group takes a visit too (theta + price - least
        less) (1867's Timmins bonus needs D2, 40, paid:
        stress-1867-express-8's 5+5E was bounded by five stops of 60 and
        more plus the bonus; its 8, with one visit left, by the best city
        and the bonus)."""
        for b in range(len(pt.bonus_kind)):
            if bonus_least[b] == NONE:
                continue
            least = -NONE
            for j in range(pt.bonus_first[b], pt.bonus_first[b] + pt.bonus_count[b]):
                least = min(least, max(set_near[j], set_far[j] - price))
            bonus_cost[b] = max(theta - least, 0) * multiplier

    def connect_bonuses(with_open):
        """The most the possible connect bonuses (the open ones only
        ``with_open``) add to the threshold bound ``price_bonuses`` last
        priced: bonuses taken together cost at least the dearest one's
        cost."""
        bonuses = 0
        for b in range(len(pt.bonus_kind)):
            if bonus_least[b] == NONE or (bonus_open[b] and not with_open):
                continue
            cost = bonus_cost[b]
            earned = -cost
            for c in range(len(pt.bonus_kind)):
                if bonus_least[c] == NONE or (bonus_open[c] and not with_open):
                    continue
                if bonus_cost[c] <= cost:
                    earned += pt.bonus_amount[c] * (multiplier if pt.bonus_multiplied[c] else 1)
            bonuses = max(bonuses, earned)
        return bonuses

    # the threshold bounds: no choice of at most ``slots`` paying stops earns
    # more than slots * theta plus what each stop earns above theta. The
    # open connect bonuses count only down chains with a stop they need.
    slots = 0
    for j in range(num_groups):
        slots += pay_slots[j]
    for t in range(num_thresholds):
        theta = thresholds[t]
        price = visit_price[t]
        fixed = slots * theta + price * priced_left
        for i in range(length):
            v = route[i]
            if payable(v) and weight[v] > theta:
                fixed += weight[v] - theta
        plain = (fixed + visit_times) * multiplier + visit_plain
        price_bonuses(theta, price)
        bound = plain + acc_sum[RESULT, num_groups + t] * multiplier + connect_bonuses(False)
        if acc_open[RESULT, t] > NONE and open_times + open_plain > 0:
            opened = plain + acc_open[RESULT, t] * multiplier + connect_bonuses(True)
            bound = max(bound, opened)
        if bound < most:
            most = bound
    return most // pt.divisor * pt.factor
