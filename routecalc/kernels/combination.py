"""The best track-disjoint choice of one route (or none) per train.

Branch and bound over trains in a fixed order, each train's routes sorted
by revenue, best first. The bound at train ``i`` is ``opt[i + 1]``, the
exact optimum of the trains after ``i`` on their own; it comes from solving
the suffixes of the train list first, last train alone, then the last two,
and so on (as the Rails 18xx calculator does), each suffix starting from
the previous one's answer. A sorted list is left as soon as its next route
cannot beat the best total; identical trains (which share one route list)
take routes in increasing list order, and when one runs nothing the
identical ones after it run nothing either.

Like the enumeration, the kernel is resumable: it returns PAUSED after
``budget`` search nodes with its stack in :class:`CombState`.
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
    used: np.ndarray  # uint64[n + 1, W]: track used before train i
    total: np.ndarray  # int64[n + 1]: revenue before train i
    nodes: np.ndarray  # [search nodes]


def new_state(trains: int, words: int) -> CombState:
    return CombState(np.full(1, trains, np.int64), np.full(1, -1, np.int64), np.zeros(1, np.int64),
                      np.full(trains, -1, np.int64), np.zeros(trains + 1, np.int64), np.zeros(trains, np.int64),
                      np.full(trains, -1, np.int64), np.zeros((trains + 1, words), np.uint64),
                      np.zeros(trains + 1, np.int64), np.zeros(1, np.int64))


@njit(cache=True, nogil=True)
def _first_route(lists, st, i, s):
    """Where train i's list starts: after the identical train before it."""
    if i > s and lists.same_as_previous[i]:
        prev = st.chosen[i - 1]
        return lists.count[i] if prev < 0 else prev + 1
    return 0


@njit(cache=True, nogil=True)
def combine(lists, st, budget):
    """Run the search on from ``st``; returns DONE or PAUSED."""
    n = len(lists.count)
    words = lists.mask.shape[1]
    steps = 0
    while True:
        s = st.suffix[0]
        i = st.level[0]
        if i < s:
            # suffix s is solved (or none started yet): start the next one
            if s < n:
                st.opt[s] = st.best[0]
            if s == 0:
                return DONE
            s -= 1
            st.suffix[0] = s
            st.best[0] = st.opt[s + 1]
            st.choice[s] = -1
            st.level[0] = s
            st.used[s, :] = 0
            st.total[s] = 0
            st.next_r[s] = 0
            continue
        if steps >= budget:
            return PAUSED
        r = st.next_r[i]
        count = lists.count[i]
        if r < count:
            revenue = lists.revenue[lists.offset[i] + r]
            if st.total[i] + revenue + st.opt[i + 1] <= st.best[0]:
                st.next_r[i] = count  # the rest of the sorted list is no better
                continue
            st.next_r[i] = r + 1
            row = lists.offset[i] + r
            clash = False
            for w in range(words):
                if lists.mask[row, w] & st.used[i, w]:
                    clash = True
                    break
            if clash:
                continue
            steps += 1
            st.nodes[0] += 1
            st.chosen[i] = r
            total = st.total[i] + revenue
            if total > st.best[0]:
                st.best[0] = total
                for j in range(s, n):
                    st.choice[j] = st.chosen[j] if j <= i else -1
            if i + 1 < n:
                for w in range(words):
                    st.used[i + 1, w] = st.used[i, w] | lists.mask[row, w]
                st.total[i + 1] = total
                st.next_r[i + 1] = _first_route(lists, st, i + 1, s)
                st.level[0] = i + 1
        elif r == count:
            st.next_r[i] = count + 1
            if i + 1 < n and st.total[i] + st.opt[i + 1] > st.best[0]:
                steps += 1
                st.nodes[0] += 1
                st.chosen[i] = -1
                st.used[i + 1, :] = st.used[i, :]
                st.total[i + 1] = st.total[i]
                st.next_r[i + 1] = _first_route(lists, st, i + 1, s)
                st.level[0] = i + 1
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
