"""The best track-disjoint choice of one route (or none) per train.

Branch and bound over trains in a fixed order, each train's routes sorted
by revenue, best first. Two bounds on what the trains after ``i`` can add:

- ``opt[i + 1]``, the exact optimum of those trains on their own, from
  solving the suffixes of the train list first (last train alone, then the
  last two, ...; as the Rails 18xx calculator does), each suffix starting
  from the previous one's answer;
- once routes are chosen for the trains before ``i``, the sum over later
  trains of the best route of each that fits the track used so far (the
  first fitting one in its sorted list). If those routes also fit each
  other they are the best completion: it is recorded and the search goes
  no deeper.

A sorted list is left as soon as its next route cannot beat the best
total; identical trains (which share one route list) take routes in
increasing list order, and when one runs nothing the identical ones after
it run nothing either.

Finding the first route that fits is most of the work. A piece index (per
piece, a bit per route) tries 64 routes at once; the first fitting route of
each later train is carried down the stack (deeper, more track is used, so
nothing before it fits); and for each route the first route of the next
train that fits it alone is remembered, since the same route comes back
under many others.

Like the enumeration, the kernel is resumable: it returns PAUSED after
about ``budget`` units of work with its stack in :class:`CombState`. A unit
is one word of track compared (a route against the used track, or one
piece's block of the index), so a pause comes after a near-fixed time
however long the route lists are.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload

from .cache import kernel, record

DONE, PAUSED = 0, 1


class RouteLists(NamedTuple):
    """The trains' sorted route lists, concatenated."""

    mask: np.ndarray  # uint64[R, W]
    revenue: np.ndarray  # int64[R], best first within each list
    offset: np.ndarray  # int64[n]: where train i's list starts
    count: np.ndarray  # int64[n]
    same_as_previous: np.ndarray  # bool[n]: train i is identical to train i - 1
    index: np.ndarray  # uint64[P, B]: bit b of block k: route 64 k + b uses piece P (shape (0, 0): none)
    block0: np.ndarray  # int64[n]: first block of train i's list in ``index``


class CombState(NamedTuple):
    suffix: np.ndarray  # [s]: the suffix being solved, trains s..n-1
    level: np.ndarray  # [i]: the train being decided
    best: np.ndarray  # [best total of the suffix so far]
    choice: np.ndarray  # int64[n]: best routes found (list index, -1: none)
    opt: np.ndarray  # int64[n + 1]: exact suffix optima found so far (opt[n] = 0)
    next_r: np.ndarray  # int64[n]: next list index to try; count: the "none" branch; count+1: done
    chosen: np.ndarray  # int64[n]
    used: np.ndarray  # uint64[n + 1, W]: track used before train i (row n: scratch)
    total: np.ndarray  # int64[n + 1]: revenue before train i
    rest: np.ndarray  # int64[n]: bound on the trains after i, below the current node of train i
    first: np.ndarray  # int64[n, n]: row i: first route of each train j >= i that fits used[i]
    pieces: np.ndarray  # int64[n + 1, 64 W]: the pieces of used[i]
    num_pieces: np.ndarray  # int64[n + 1]
    partner: np.ndarray  # int64[sum of counts]: for route r of train i < n - 1 (at partner_at[i] + r), the
    #   first route of train i + 1 that fits it (after it if identical); -1: not known yet
    partner_at: np.ndarray  # int64[n]
    nodes: np.ndarray  # [search nodes]
    work: np.ndarray  # [units of work done]: words of track compared


#: The piece index is left out above this size (then routes are tried one by
#: one), or when filling it would set more bits than MAX_INDEX_BITS (a bit
#: for each piece of each route, each a write at random into the index: on a
#: board of 2,000 cells, 65,536 D routes set 195 million bits of a 140 MB
#: index in some 5 s, past any time limit). The fixtures' largest set 11
#: million bits (0.012 s).
MAX_INDEX_BYTES = 256 * 2**20
MAX_INDEX_BITS = 40_000_000


_i64, _bool, _u64_2d, _i64_2d = types.int64[::1], types.boolean[::1], types.uint64[:, ::1], types.int64[:, ::1]
#: numba types of the tuples, as the fast solver builds them.
ROUTE_LISTS = record(RouteLists, _u64_2d, _i64, _i64, _i64, _bool, _u64_2d, _i64)
COMB_STATE = record(CombState, *(_i64,) * 7, _u64_2d, _i64, _i64, _i64_2d, _i64_2d, *(_i64,) * 5)


def lowest_bit(x):
    """The place of the lowest set bit of ``x`` (not 0): one instruction in
    the compiled kernels, Python's integers where numba's JIT is off."""
    x = int(x)
    return (x & -x).bit_length() - 1


@overload(lowest_bit)
def _lowest_bit_compiled(x):
    return lambda x: trailing_zeros(x)


@kernel((_u64_2d, _u64_2d, types.int64))
def _fill_index(mask, index, first_block):
    """Set bit r % 64 of index[p, first_block + r // 64] for each piece p of
    route r, visiting only the set bits of each mask word."""
    one = np.uint64(1)
    for r in range(mask.shape[0]):
        bit = one << np.uint64(r & 63)
        block = first_block + (r >> 6)
        for w in range(mask.shape[1]):
            x = mask[r, w]
            while x:
                index[64 * w + lowest_bit(x), block] |= bit
                x &= x - one  # the lowest set bit cleared


def route_lists(masks: list[np.ndarray], revenues: list[np.ndarray], which: list[int]) -> RouteLists:
    """Concatenate distinct route lists (``masks[k]``: uint64[R_k, W] and
    ``revenues[k]``, best first) for trains that use list ``which[i]``;
    consecutive trains with the same list are identical."""
    words = masks[0].shape[1] if masks else 1
    starts = np.cumsum([0] + [len(r) for r in revenues])
    blocks = [(len(r) + 63) // 64 for r in revenues]
    block_starts = np.cumsum([0] + blocks)
    index = np.zeros((0, 0), np.uint64)
    # a train with routes, the others with none (a lone train, or one whose enumeration stopped
    # before the others'), never looks for routes that fit another's: a D train's index on a big
    # board took longer to fill than its whole limit
    with_routes = sum(len(revenues[k]) > 0 for k in which)
    if (
        with_routes > 1
        and 64 * words * block_starts[-1] * 8 <= MAX_INDEX_BYTES
        and sum(int(np.bitwise_count(mask).sum()) for mask in masks) <= MAX_INDEX_BITS
    ):
        index = np.zeros((64 * words, block_starts[-1]), np.uint64)
        for k, mask in enumerate(masks):
            _fill_index(np.ascontiguousarray(mask, dtype=np.uint64), index, block_starts[k])
    return RouteLists(
        _joined(masks, words),
        np.concatenate(revenues).astype(np.int64) if revenues else np.zeros(0, np.int64),
        np.array([starts[k] for k in which], np.int64),
        np.array([len(revenues[k]) for k in which], np.int64),
        np.array([i > 0 and which[i - 1] == k for i, k in enumerate(which)], np.bool_),
        index,
        np.array([block_starts[k] for k in which], np.int64),
    )


def _joined(masks: list[np.ndarray], words: int) -> np.ndarray:
    """The lists' masks in one array: the one list with routes as it is (a
    D train's routes on a big board are tens of MB, mapped in again by a
    copy)."""
    full = [mask for mask in masks if len(mask)]
    if len(full) == 1:
        return np.ascontiguousarray(full[0], dtype=np.uint64)
    return np.ascontiguousarray(np.concatenate(masks)) if masks else np.zeros((0, words), np.uint64)


def new_state(lists: RouteLists) -> CombState:
    trains, words = len(lists.count), lists.mask.shape[1]
    partner_at = np.cumsum(np.concatenate([[0], lists.count]))
    return CombState(
        np.full(1, trains, np.int64),
        np.full(1, -1, np.int64),
        np.zeros(1, np.int64),
        np.full(trains, -1, np.int64),
        np.zeros(trains + 1, np.int64),
        np.zeros(trains, np.int64),
        np.full(trains, -1, np.int64),
        np.zeros((trains + 1, words), np.uint64),
        np.zeros(trains + 1, np.int64),
        np.zeros(trains, np.int64),
        np.zeros((trains, trains), np.int64),
        np.zeros((trains + 1, 64 * words), np.int64),
        np.zeros(trains + 1, np.int64),
        np.full(partner_at[-1], -1, np.int64),
        partner_at[:-1].astype(np.int64),
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
    )


@kernel((ROUTE_LISTS, COMB_STATE, types.int64))
def combine(lists, st, budget):
    """Run the search on from ``st``; returns DONE or PAUSED."""
    mask, revenue, offset, count, same = lists.mask, lists.revenue, lists.offset, lists.count, lists.same_as_previous
    index, block0 = lists.index, lists.block0
    best, choice, opt, next_r, chosen, used, total, rest, first = (
        st.best,
        st.choice,
        st.opt,
        st.next_r,
        st.chosen,
        st.used,
        st.total,
        st.rest,
        st.first,
    )
    pieces, num_pieces, partner, partner_at, work = st.pieces, st.num_pieces, st.partner, st.partner_at, st.work
    n = len(count)
    words = mask.shape[1]
    indexed = index.shape[0] > 0
    one = np.uint64(1)

    def clashes(row, i):
        for w in range(words):
            if mask[row, w] & used[i, w]:
                return True
        return False

    def list_pieces(i):
        """The pieces of used[i], for the index."""
        k = 0
        for w in range(words):
            x = used[i, w]
            while x:
                pieces[i, k] = 64 * w + lowest_bit(x)
                k += 1
                x &= x - one
        num_pieces[i] = k

    def first_fit(j, start, i):
        """The first route of train j's list from ``start`` that fits used[i]
        (count[j]: none). With the index, 64 routes are tried at once: a
        route fits when none of the used pieces' bits has it."""
        if start >= count[j]:
            return count[j]
        if not indexed:
            r = start
            while r < count[j] and clashes(offset[j] + r, i):
                r += 1
            work[0] += (r - start + 1) * words
            return r
        block = start >> 6
        skip = start & 63
        for b in range(block, (count[j] + 63) >> 6):
            work[0] += num_pieces[i] + 1
            taken = np.uint64(0)
            for q in range(num_pieces[i]):
                taken |= index[pieces[i, q], block0[j] + b]
            free = ~taken
            if skip:
                free &= ~np.uint64(0) << np.uint64(skip)
                skip = 0
            if free:
                return min(64 * b + lowest_bit(free), count[j])
        return count[j]

    def record(i, s):
        """The chosen routes of trains s..i-1, then the first ones that fit, are the best so far."""
        for j in range(s, n):
            if j < i:
                choice[j] = chosen[j]
            else:
                choice[j] = first[i, j] if first[i, j] < count[j] else -1

    def partner_of(i, r):
        """The first route of train i + 1 that fits route r of train i
        (remembered: the same route comes back under many others)."""
        at = partner_at[i] + r
        if partner[at] < 0:
            row = offset[i] + r
            for w in range(words):
                used[n, w] = mask[row, w]
            list_pieces(n)
            partner[at] = first_fit(i + 1, r + 1 if same[i + 1] else 0, n)
            for w in range(words):
                used[n, w] = 0
        return partner[at]

    def open_level(i, s, floor):
        """Decide whether train i (the track before it in used[i]) is worth
        searching: bound the trains i.. by the best route of each that fits
        the track used so far (each alone; train i's is at ``floor`` or
        later). If those routes fit each other too, they are the best
        completion: record it and search no deeper."""
        bound = total[i]
        if bound + opt[i] <= best[0]:
            return
        if floor < count[i] and bound + revenue[offset[i] + floor] + opt[i + 1] <= best[0]:
            return
        list_pieces(i)
        for j in range(i, n):
            # routes before the first that fit the track of the node above clash here too
            start = first[i - 1, j] if j > i else max(first[i - 1, j], floor)
            if j > s and same[j]:
                # after the route of the identical train before it: the one
                # chosen (train i - 1) or at best the one found (trains i..)
                before = chosen[i - 1] if j == i else first[i, j - 1]
                start = max(start, count[j] if before < 0 or before >= count[j] else before + 1)
            r = first_fit(j, start, i)
            first[i, j] = r
            if r < count[j]:
                bound += revenue[offset[j] + r]
            if bound + opt[j + 1] <= best[0]:
                return
        # the bound beats the best: are the first routes a solution?
        fits = True
        for j in range(i, n):
            if first[i, j] < count[j]:
                row = offset[j] + first[i, j]
                if clashes(row, n):
                    fits = False
                    break
                for w in range(words):
                    used[n, w] |= mask[row, w]
        for w in range(words):
            used[n, w] = 0
        if fits:
            best[0] = bound
            record(i, s)
            return
        next_r[i] = first[i, i]
        rest[i] = min(
            opt[i + 1], bound - total[i] - (revenue[offset[i] + first[i, i]] if first[i, i] < count[i] else 0)
        )
        st.level[0] = i

    stop_at = work[0] + budget
    while True:
        s = st.suffix[0]
        i = st.level[0]
        if i < s:
            # suffix s is solved (or none started yet): start the next one
            if s < n:
                opt[s] = best[0]
            if s == 0:
                return DONE
            s -= 1
            st.suffix[0] = s
            best[0] = opt[s + 1]
            choice[s] = -1
            st.level[0] = s
            used[s, :] = 0
            total[s] = 0
            next_r[s] = 0
            rest[s] = opt[s + 1]
            first[s, :] = 0
            num_pieces[s] = 0
            continue
        if work[0] >= stop_at:
            return PAUSED
        r = next_r[i]
        c = count[i]
        if r < c and total[i] + revenue[offset[i] + r] + rest[i] > best[0]:
            work[0] += 1
            r = first_fit(i, r, i)  # routes that clash are skipped at once
            row = offset[i] + r
            if r >= c or total[i] + revenue[row] + rest[i] <= best[0]:
                next_r[i] = c  # the rest of the sorted list is no better
                continue
            next_r[i] = r + 1
            earned = revenue[row]
        elif r <= c:
            next_r[i] = c + 1  # train i runs nothing
            if i + 1 == n or total[i] + rest[i] <= best[0]:
                continue
            r = -1
            earned = 0
        else:
            st.level[0] = i - 1
            continue
        st.nodes[0] += 1
        chosen[i] = r
        if total[i] + earned > best[0]:
            best[0] = total[i] + earned
            for j in range(s, n):
                choice[j] = chosen[j] if j <= i else -1
        if i + 1 < n:
            for w in range(words):
                used[i + 1, w] = used[i, w] | (mask[offset[i] + r, w] if r >= 0 else np.uint64(0))
            total[i + 1] = total[i] + earned
            open_level(i + 1, s, partner_of(i, r) if r >= 0 else 0)


def suffix_bound(lists: RouteLists, st: CombState) -> int:
    """A true upper bound on the optimum while the search is unfinished: the
    best route of each train before the current suffix, plus the best the
    suffix can still reach (its first train's next untried route, or the
    one being explored)."""
    s = int(st.suffix[0])
    n = len(lists.count)
    if s >= n:
        return int(sum(int(lists.revenue[lists.offset[i]]) for i in range(n) if lists.count[i]))
    head = sum(int(lists.revenue[lists.offset[i]]) for i in range(s) if lists.count[i])
    r = int(st.next_r[s]) - (1 if st.level[0] > s else 0)
    open_route = int(lists.revenue[lists.offset[s] + max(r, 0)]) if 0 <= r < lists.count[s] else 0
    return head + max(int(st.best[0]), open_route + int(st.opt[s + 1]))
