"""The coupled choice of 18Cuba as a numba branch and bound.

One listed route or none per train, track-disjoint, maximising

    routes' revenue + 30 x cubes delivered - fee x FC cities paid (+ machines)

where the cubes are a maximum flow from the mills' shared supply to the
wagons of harbor-ending trains (over every assignment of the pool's wagons)
and the paid cities the cheapest cover (a ``+`` train ignores one FC city
it passes for free, which frees the city when every train passing it does).

Each train's routes are sorted by potential: revenue plus the most sugar
its best wagon could carry from the mills it passes. A node's value is the
exact value of the routes chosen so far (valid on its own: the other trains
may run nothing); no completion beats that value plus, for each later
train, the potential of its first route that fits the track used so far,
since revenue adds up, each later train carries at most its potential's
sugar and the fee cover only grows. The first fitting routes are carried
down the stack (deeper, more track is used, so none before them fits). A
route passing FC cities no earlier route passes pays for them (but one, on
a ``+`` train): it is left out at once when that alone sinks its bound.
The sugar the potentials count is also capped as a whole: no choice adds
more than the supply or the wagons hold beyond what the routes before
deliver, so the trains' revenues (the most a route that fits earns) plus
that cap bound them too; so do the potentials less each later train's
share of the FC cities it passes that no route before does (a ``+`` train
taking none of them: it may ignore one); and so do the exact best revenues of the later
trains on their own, which the fast solver's combination kernel finds
first (:func:`suffix_revenues`).
Identical trains (same routes, same wagon) take routes in list order.

The search is resumable: it returns PAUSED after ``budget`` nodes, or once
its valuations have tried ``work_budget`` wagon assignments and fee covers
(a node's cost grows with them: 2,000 nodes of twenty ``+`` trains took
0.15 s), with its stack in :class:`ChoiceState`, so the caller watches the
clock, reports progress and counts the work (the auto choice of
:mod:`.cuba_coupled`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .. import deadline
from ..kernels import combination as comb
from ..solvers.fast import COMBINATION_CHUNK

DONE, PAUSED = 0, 1
#: Routes scanned past a train's first fitting one for its most revenue.
SCAN = 64


class ChoiceLists(NamedTuple):
    """Per train (in search order) its routes sorted by potential, concatenated."""

    mask: np.ndarray  # uint64[R, W]
    revenue: np.ndarray  # int64[R]
    potential: np.ndarray  # int64[R]
    mills: np.ndarray  # uint64[R]
    fc: np.ndarray  # uint64[R]
    offset: np.ndarray  # int64[n]
    count: np.ndarray  # int64[n]
    same: np.ndarray  # bool[n]: identical to train i - 1
    own: np.ndarray  # int64[n]: the train's own wagon (0: none)
    plus: np.ndarray  # bool[n]: ignores one FC city free
    supply: np.ndarray  # int64[M]
    pool: np.ndarray  # int64[P]: wagons to assign
    fee: int
    machines: int
    cube: int
    suffix_revenue: np.ndarray  # int64[n + 1]: most revenue trains i.. earn together (routes alone)


class ChoiceState(NamedTuple):
    level: np.ndarray  # [i]: the train being decided (-1: done)
    next_r: np.ndarray  # int64[n]: next list index; count: the "none" branch; count + 1: done
    chosen: np.ndarray  # int64[n]: row (into the lists) or -1
    used: np.ndarray  # uint64[n + 1, W]
    value: np.ndarray  # int64[n + 1]: exact value of the choice before train i
    cubes: np.ndarray  # int64[n + 1]: cubes the choice before train i delivers
    first: np.ndarray  # int64[n, n]: row i: first route of each train j >= i that fits used[i]
    rest: np.ndarray  # int64[n + 1]: no trains after i earn more (their first fitting routes' potentials)
    top_revenue: np.ndarray  # int64[n + 1]: train i earns no more revenue on a route that fits used[i]
    rest_revenue: np.ndarray  # int64[n + 1]: nor the trains after i, together
    rest_fees: np.ndarray  # int64[n + 1]: rest less a share of the fees the later trains must pay
    best: np.ndarray  # [best value]
    choice: np.ndarray  # int64[n]: best rows (-1: none)
    nodes: np.ndarray  # [nodes]
    work: np.ndarray  # [wagon assignments and fee covers the valuations tried]


def new_state(lists: ChoiceLists, start: int = 0) -> ChoiceState:
    """A fresh search; ``start``: an incumbent value it must beat."""
    n, words = len(lists.count), lists.mask.shape[1]
    return ChoiceState(
        np.zeros(1, np.int64),
        np.zeros(n, np.int64),
        np.full(n, -1, np.int64),
        np.zeros((n + 1, words), np.uint64),
        np.zeros(n + 1, np.int64),
        np.zeros(n + 1, np.int64),
        np.zeros((max(n, 1), max(n, 1)), np.int64),
        np.zeros(n + 1, np.int64),
        np.zeros(n + 1, np.int64),
        np.zeros(n + 1, np.int64),
        np.zeros(n + 1, np.int64),
        np.full(1, start, np.int64),
        np.full(n, -1, np.int64),
        np.zeros(1, np.int64),
        np.zeros(1, np.int64),
    )


@njit(cache=True, nogil=True)
def _popcount(x):
    c = 0
    while x:
        x &= x - np.uint64(1)
        c += 1
    return c


@njit(cache=True, nogil=True)
def _advance(digits, top):
    """The next combination of digits 0..top[j] (a mixed-radix counter); False after the last."""
    for j in range(len(digits)):
        digits[j] += 1
        if digits[j] <= top[j]:
            return True
        digits[j] = 0
    return False


@njit(cache=True, nogil=True)
def _max_flow(caps, mills, supply):
    """Most cubes from the mills (``supply``) to trains (``caps``, ``mills`` a
    bit set each): augmenting paths, each carrying as many cubes as it can (a
    cube at a time took seconds at a supply of 10^9, which a position may hold)."""
    n, m = len(caps), len(supply)
    flow = np.zeros((n, m), np.int64)
    left = supply.copy()
    load = np.zeros(n, np.int64)
    parent_t = np.zeros(n, np.int64)
    parent_m = np.zeros(n, np.int64)
    seen = np.zeros(n, np.bool_)
    queue = np.zeros(n, np.int64)
    total = 0
    for t in range(n):
        while load[t] < caps[t]:
            seen[:] = False
            seen[t] = True
            queue[0] = t
            head, tail = 0, 1
            end_t, end_m = -1, -1
            while head < tail and end_t < 0:
                u = queue[head]
                head += 1
                for k in range(m):
                    if not (mills[u] >> np.uint64(k)) & np.uint64(1):
                        continue
                    if left[k] > 0:
                        end_t, end_m = u, k
                        break
                    for v in range(n):
                        if not seen[v] and flow[v, k] > 0:
                            seen[v] = True
                            parent_t[v], parent_m[v] = u, k
                            queue[tail] = v
                            tail += 1
            if end_t < 0:
                break
            amount = min(left[end_m], caps[t] - load[t])
            v = end_t
            while v != t:  # v gives cubes of parent_m[v] to parent_t[v]
                amount = min(amount, flow[v, parent_m[v]])
                v = parent_t[v]
            left[end_m] -= amount
            flow[end_t, end_m] += amount
            v = end_t
            while v != t:
                flow[v, parent_m[v]] -= amount
                flow[parent_t[v], parent_m[v]] += amount
                v = parent_t[v]
            load[t] += amount
            total += amount
    return total


@njit(cache=True, nogil=True)
def sugar_cubes(own, mills, supply, pool):
    """Most cubes the trains (own wagon, mills carried from) deliver, over
    every assignment of the pool's wagons to trains without one (one each)."""
    n, p = len(own), len(pool)
    takers = np.zeros(n, np.int64)
    k = 0
    for t in range(n):
        if own[t] == 0 and mills[t] != 0:
            takers[k] = t
            k += 1
    # most any assignment could give: each train's best wagon, the supply it reaches
    reach = np.uint64(0)
    for t in range(n):
        reach |= mills[t]
    reachable = 0
    for m in range(len(supply)):
        if (reach >> np.uint64(m)) & np.uint64(1):
            reachable += supply[m]
    caps = own.copy()
    best = -1
    digits = np.zeros(p, np.int64)  # pool wagon j goes to takers[digits[j] - 1], 0: none
    top = np.full(p, k, np.int64)
    while True:
        ok = True
        for t in range(n):
            caps[t] = own[t]
        for j in range(p):
            if digits[j]:
                t = takers[digits[j] - 1]
                if caps[t]:
                    ok = False
                    break
                caps[t] = pool[j]
        if ok:
            cubes = _max_flow(caps, mills, supply)
            if cubes > best:
                best = cubes
                if best >= reachable:
                    return best
        if not _advance(digits, top):
            return best


@njit(cache=True, nogil=True)
def fees_paid(fc, plus):
    """Fewest FC cities to pay for: each ``+`` train may ignore one city it
    passes; a city is free when every train passing it ignores it."""
    n = len(fc)
    passed = np.uint64(0)
    for t in range(n):
        passed |= fc[t]
    total = _popcount(passed)
    if total == 0:
        return 0
    choosers = np.zeros(n, np.int64)
    k = 0
    for t in range(n):
        if plus[t] and fc[t] != 0:
            choosers[k] = t
            k += 1
    if k == 0:
        return total
    digits = np.zeros(k, np.int64)  # chooser j ignores its digits[j]-th city (0: none)
    top = np.array([_popcount(fc[choosers[j]]) for j in range(k)], np.int64)
    best = total
    while True:
        freed = passed
        for j in range(k):
            t = choosers[j]
            pick = np.uint64(0)
            if digits[j]:
                x, d = fc[t], digits[j]
                while d > 1:
                    x &= x - np.uint64(1)
                    d -= 1
                pick = x & (~x + np.uint64(1))
            # cities this train passes stay paid unless it ignores them
            freed &= ~(fc[t] & ~pick)
        for t in range(n):
            if not (plus[t] and fc[t] != 0):
                freed &= ~fc[t]
        paid = total - _popcount(freed)
        if paid < best:
            best = paid
        if not _advance(digits, top):
            return best


@njit(cache=True, nogil=True)
def choice_value(lists, rows):
    """Exact value of running these rows (-1: the train runs nothing)."""
    return _choice(lists, rows)[0]


#: A valuation's work counted at most (its products overflow past it), and a search's.
MOST_WORK = 1 << 40
MOST_SEARCH_WORK = 1 << 62


@njit(cache=True, nogil=True)
def _orders(own, mills, plus, fc, wagons, fee):
    """Wagon assignments (of ``wagons`` pool wagons) plus fee covers that
    :func:`sugar_cubes` and :func:`fees_paid` try at most for these runs."""
    n = len(own)
    takers = 0
    for t in range(n):
        takers += 1 if own[t] == 0 and mills[t] != 0 else 0
    assignments = 1
    for _ in range(wagons):
        assignments = min(assignments * (takers + 1), MOST_WORK)
    covers = 1
    if fee:
        for t in range(n):
            if plus[t] and fc[t] != 0:
                covers = min(covers * (_popcount(fc[t]) + 1), MOST_WORK)
    return assignments + covers


@njit(cache=True, nogil=True)
def _choice(lists, rows):
    """(exact value, cubes delivered, work: :func:`_orders`) of running these rows."""
    n = len(rows)
    own = np.zeros(n, np.int64)
    mills = np.zeros(n, np.uint64)
    fc = np.zeros(n, np.uint64)
    plus = np.zeros(n, np.bool_)
    revenue = 0
    runs = 0
    for t in range(n):
        r = rows[t]
        if r < 0:
            continue
        own[runs] = lists.own[t]
        mills[runs] = lists.mills[r]
        fc[runs] = lists.fc[r]
        plus[runs] = lists.plus[t]
        revenue += lists.revenue[r]
        runs += 1
    if runs == 0:
        return 0, 0, 0
    cubes = 0
    if len(lists.supply):
        cubes = sugar_cubes(own[:runs], mills[:runs], lists.supply, lists.pool)
    paid = fees_paid(fc[:runs], plus[:runs]) if lists.fee else 0
    wagons = len(lists.pool) if len(lists.supply) else 0
    work = _orders(own[:runs], mills[:runs], plus[:runs], fc[:runs], wagons, lists.fee)
    return revenue + lists.cube * cubes - lists.fee * paid + lists.machines, cubes, work


@njit(cache=True, nogil=True)
def search(lists, st, budget, work_budget):
    """Run the branch and bound on from ``st`` for ``budget`` nodes or
    ``work_budget`` units of the valuations' work; returns DONE or PAUSED."""
    mask, potential, offset, count, same = lists.mask, lists.potential, lists.offset, lists.count, lists.same
    level, next_r, chosen, used, value, best, choice, nodes = (
        st.level,
        st.next_r,
        st.chosen,
        st.used,
        st.value,
        st.best,
        st.choice,
        st.nodes,
    )
    first, rest, cubes, top_revenue, rest_revenue = st.first, st.rest, st.cubes, st.top_revenue, st.rest_revenue
    rest_fees = st.rest_fees
    revenue = lists.revenue
    n = len(count)
    words = mask.shape[1]
    # no choice delivers more sugar than the supply or all the wagons hold
    wagons = 0
    for t in range(n):
        wagons += lists.own[t]
    for size in lists.pool:
        wagons += size
    supply = 0
    for cubes_at in lists.supply:
        supply += cubes_at
    sugar_cap = lists.cube * min(supply, wagons)

    def fits(row, i):
        for w in range(words):
            if mask[row, w] & used[i, w]:
                return False
        return True

    def open_level(i):
        """Find, for each train j >= i, its first route that fits used[i]
        (no earlier than above: the track only grows), and bound the trains after i."""
        total = 0
        total_revenue = 0
        total_fees = 0
        # FC cities the later trains' routes pass that no route before does
        # are paid for; a city passed by several is paid once, so each of
        # the later trains without a free ignore bears a share
        passed = np.uint64(0)
        for j in range(i):
            if chosen[j] >= 0:
                passed |= lists.fc[chosen[j]]
        sharing = 0
        for j in range(i + 1, n):
            sharing += 0 if lists.plus[j] else 1
        for j in range(i, n):
            r = first[i - 1, j] if i > 0 else 0
            while r < count[j] and not fits(offset[j] + r, i):
                r += 1
            first[i, j] = r
            # the most revenue of a fitting route: scan on while the potential
            # (revenue + sugar) could beat it, at most SCAN routes
            top = 0
            k = r
            while k < count[j] and k < r + SCAN and potential[offset[j] + k] > top:
                if revenue[offset[j] + k] > top and fits(offset[j] + k, i):
                    top = revenue[offset[j] + k]
                k += 1
            if k < count[j] and k == r + SCAN:
                top = max(top, potential[offset[j] + k])
            if j == i:
                top_revenue[i] = top
            elif r < count[j]:
                total += potential[offset[j] + r]
                total_revenue += top
                share = potential[offset[j] + r]
                if lists.fee and not lists.plus[j]:
                    share = 0
                    k = r
                    while k < count[j] and k < r + SCAN and potential[offset[j] + k] > share:
                        row = offset[j] + k
                        if fits(row, i):
                            due = lists.fee * _popcount(lists.fc[row] & ~passed) // sharing
                            share = max(share, potential[row] - due)
                        k += 1
                    if k < count[j] and k == r + SCAN:
                        share = max(share, potential[offset[j] + k])
                total_fees += share
        rest[i] = total
        rest_revenue[i] = total_revenue
        rest_fees[i] = total_fees

    if nodes[0] == 0 and n:
        open_level(0)
    stop_at = nodes[0] + budget
    stop_work = st.work[0] + work_budget
    while True:
        i = level[0]
        if i < 0:
            return DONE
        if nodes[0] >= stop_at or st.work[0] >= stop_work:
            return PAUSED
        r = next_r[i]
        c = count[i]
        ran = False
        passed = np.uint64(0)  # FC cities the routes before train i pass
        for j in range(i):
            ran |= chosen[j] >= 0
            if chosen[j] >= 0:
                passed |= lists.fc[chosen[j]]
        base = value[i] if ran else lists.machines  # the machines count once, when a train runs
        more_sugar = max(sugar_cap - lists.cube * (cubes[i] if ran else 0), 0)
        if r < c:
            # routes before the first that fits clash; identical trains take
            # routes in list order, and after one that runs nothing none runs
            lo = first[i, i]
            if i > 0 and same[i]:
                lo = max(lo, chosen[i - 1] - offset[i - 1] + 1 if chosen[i - 1] >= 0 else c)
            if r < lo:
                next_r[i] = min(lo, c)
                continue
            row = offset[i] + r
            if base + potential[row] + min(rest[i], rest_fees[i]) <= best[0]:
                next_r[i] = c  # the rest of the sorted list is no better
                continue
            next_r[i] = r + 1
            if not fits(row, i):
                continue
            later = min(rest_revenue[i], lists.suffix_revenue[i + 1])
            if base + revenue[row] + later + more_sugar <= best[0]:
                continue  # its revenue, the later trains' and all the sugar left
            if lists.fee:
                # the FC cities no route before passes are paid for (a + train may ignore one)
                new_cities = _popcount(lists.fc[row] & ~passed) - (1 if lists.plus[i] else 0)
                if new_cities > 0 and base + potential[row] - lists.fee * new_cities + rest[i] <= best[0]:
                    continue
        elif r == c:
            next_r[i] = c + 1  # train i runs nothing
            if (
                i + 1 == n
                or base + min(rest[i], rest_fees[i], min(rest_revenue[i], lists.suffix_revenue[i + 1]) + more_sugar)
                <= best[0]
            ):
                continue
            row = -1
        else:
            level[0] = i - 1
            continue
        nodes[0] += 1
        chosen[i] = row
        v = value[i]
        delivered = cubes[i]
        if row >= 0:
            for j in range(i + 1, n):
                chosen[j] = -1
            v, delivered, work = _choice(lists, chosen)
            st.work[0] = min(st.work[0] + work, MOST_SEARCH_WORK)
            ran = True
            if v > best[0]:
                best[0] = v
                for j in range(n):
                    choice[j] = chosen[j] if j <= i else -1
        if i + 1 < n and (v if ran else lists.machines) + rest[i] > best[0]:
            for w in range(words):
                used[i + 1, w] = used[i, w] | (mask[row, w] if row >= 0 else np.uint64(0))
            open_level(i + 1)
            head = potential[offset[i + 1] + first[i + 1, i + 1]] if first[i + 1, i + 1] < count[i + 1] else 0
            left = max(sugar_cap - lists.cube * (delivered if ran else 0), 0)
            later = min(top_revenue[i + 1] + rest_revenue[i + 1], lists.suffix_revenue[i + 1])
            if (v if ran else lists.machines) + min(head + min(rest[i + 1], rest_fees[i + 1]), later + left) > best[0]:
                value[i + 1] = v
                cubes[i + 1] = delivered
                next_r[i + 1] = 0
                level[0] = i + 1


def suffix_revenues(masks: list[np.ndarray], revenues: list[np.ndarray], budget: int) -> np.ndarray:
    """Per train i of the search order, the most revenue trains i.. earn
    together (track-disjoint, routes' revenue only): the combination
    kernel's suffix optima. Beyond ``budget`` units of its work, or the
    time limit (looked at every ``COMBINATION_CHUNK`` units: the whole
    budget, unwatched, took 0.1-0.2 s a call on a 20-train board), the
    unsolved suffixes get the sum of their trains' best routes."""
    n = len(masks)
    tops = [int(r.max(initial=0)) for r in revenues]
    out = np.array([sum(tops[i:]) for i in range(n + 1)], np.int64)
    if not n or budget <= 0:
        return out
    sorts = [np.argsort(-r, kind="stable") for r in revenues]
    lists = comb.route_lists(
        [m[o] for m, o in zip(masks, sorts)], [r[o] for r, o in zip(revenues, sorts)], list(range(n))
    )
    state = comb.new_state(lists)
    done = False
    while not done and int(state.work[0]) < budget and not deadline.expired():
        chunk = min(COMBINATION_CHUNK, budget - int(state.work[0]))
        done = comb.combine(lists, state, chunk) == comb.DONE
    solved = 0 if done else int(state.suffix[0]) + 1  # suffixes solved so far: solved..n-1
    for i in range(solved, n):
        out[i] = min(out[i], int(state.opt[i]))
    return out
