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

Like the enumeration, the kernel is resumable: it returns PAUSED after
about ``budget`` steps (routes looked at) with its stack in
:class:`CombState`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

DONE, PAUSED = 0, 1


class RouteLists(NamedTuple):
    """The trains' sorted route lists, concatenated."""

    mask: np.ndarray  # uint64[R, W]
    revenue: np.ndarray  # int64[R], best first within each list
    offset: np.ndarray  # int64[n]: where train i's list starts
    count: np.ndarray  # int64[n]
    same_as_previous: np.ndarray  # bool[n]: train i is identical to train i - 1


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
    nodes: np.ndarray  # [search nodes]


def new_state(trains: int, words: int) -> CombState:
    return CombState(np.full(1, trains, np.int64), np.full(1, -1, np.int64), np.zeros(1, np.int64),
                      np.full(trains, -1, np.int64), np.zeros(trains + 1, np.int64), np.zeros(trains, np.int64),
                      np.full(trains, -1, np.int64), np.zeros((trains + 1, words), np.uint64),
                      np.zeros(trains + 1, np.int64), np.zeros(trains, np.int64), np.zeros(1, np.int64))


@njit(cache=True, nogil=True)
def combine(lists, st, budget):
    """Run the search on from ``st``; returns DONE or PAUSED."""
    mask, revenue, offset, count, same = lists.mask, lists.revenue, lists.offset, lists.count, \
        lists.same_as_previous
    best, choice, opt, next_r, chosen, used, total, rest = st.best, st.choice, st.opt, st.next_r, st.chosen, \
        st.used, st.total, st.rest
    n = len(count)
    words = mask.shape[1]
    first = np.zeros(n, np.int64)  # first route of each later train that fits the track used

    def clashes(row, i):
        for w in range(words):
            if mask[row, w] & used[i, w]:
                return True
        return False

    def record(upto, s):
        """The chosen routes of trains s..upto, then the ``first`` ones, are the best so far."""
        for j in range(s, n):
            if j <= upto:
                choice[j] = chosen[j]
            else:
                choice[j] = first[j] if first[j] < count[j] else -1

    def open_level(i, s):
        """Decide whether train i (the track before it in used[i]) is worth
        searching: bound the trains i.. by the best route of each that fits
        the track used so far (each alone). If those routes fit each other
        too, they are the best completion: record it and search no deeper.
        Returns the routes scanned."""
        bound = total[i]
        scanned = 0
        if bound + opt[i] <= best[0]:
            return scanned
        identical = True  # trains i..j all identical to train i - 1
        for j in range(i, n):
            identical = identical and j > s and same[j]
            start = 0
            if identical:
                start = count[j] if chosen[i - 1] < 0 else chosen[i - 1] + 1
            r = start
            while r < count[j] and clashes(offset[j] + r, i):
                r += 1
            scanned += r - start + 1
            first[j] = r
            if r < count[j]:
                bound += revenue[offset[j] + r]
            if bound + opt[j + 1] <= best[0]:
                return scanned
        # the bound beats the best: are the first routes a solution?
        fits = True
        for j in range(i, n):
            if first[j] < count[j]:
                row = offset[j] + first[j]
                if clashes(row, n):
                    fits = False
                    break
                for w in range(words):
                    used[n, w] |= mask[row, w]
        for w in range(words):
            used[n, w] = 0
        if fits:
            best[0] = bound
            record(i - 1, s)
            return scanned
        next_r[i] = first[i]
        rest[i] = min(opt[i + 1], bound - total[i] - (revenue[offset[i] + first[i]] if first[i] < count[i] else 0))
        st.level[0] = i
        return scanned

    steps = 0
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
            continue
        if steps >= budget:
            return PAUSED
        r = next_r[i]
        c = count[i]
        if r < c:
            row = offset[i] + r
            if total[i] + revenue[row] + rest[i] <= best[0]:
                next_r[i] = c  # the rest of the sorted list is no better
                continue
            next_r[i] = r + 1
            steps += 1
            if clashes(row, i):
                continue
            st.nodes[0] += 1
            chosen[i] = r
            if total[i] + revenue[row] > best[0]:
                best[0] = total[i] + revenue[row]
                for j in range(s, n):
                    choice[j] = chosen[j] if j <= i else -1
            if i + 1 < n:
                for w in range(words):
                    used[i + 1, w] = used[i, w] | mask[row, w]
                total[i + 1] = total[i] + revenue[row]
                steps += open_level(i + 1, s)
        elif r == c:
            next_r[i] = c + 1
            if i + 1 < n and total[i] + rest[i] > best[0]:
                st.nodes[0] += 1
                chosen[i] = -1
                used[i + 1, :] = used[i, :]
                total[i + 1] = total[i]
                steps += open_level(i + 1, s)
        else:
            st.level[0] = i - 1


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
