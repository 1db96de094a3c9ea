"""Which visited stops pay: the one implementation, shared by the validator
(through :func:`routecalc.scoring.best_payment`) and the fast solver's route
enumeration.

The choice is a greedy over a matroid: each distance group has ``pay``
slots, and with ``fill`` the first group's unused slots take stops of any
group. For a matroid the greedy by value is optimal, also when a set of
stops is forced in first; the only stops worth forcing are a token stop
(the token rule) and stops in bonus cells (bonuses depend on where the
paying stops are), so the search tries each token stop times every subset
of bonus stops.

A :class:`PayTable` holds one train's arrays over the graph's stops
(:func:`routecalc.scoring.pay_table` builds it); bonuses are bit sets: bit
``j`` of ``sets[s]`` says stop ``s`` lies in a cell of bonus cell set ``j``,
and bonus ``b`` reads the sets ``first[b] .. first[b] + count[b] - 1``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

VISIT, CONNECT = 0, 1


class PayTable(NamedTuple):
    weight: np.ndarray  # int64[N]: worth times the group multiplier
    group: np.ndarray  # int64[N]: distance group of the stop for this train, -1 = may not visit
    token: np.ndarray  # bool[N]: holds a token of the company
    cell: np.ndarray  # int64[N]
    sets: np.ndarray  # uint64[N]: bonus cell sets the stop's cell is in
    pay: np.ndarray  # int64[G]
    fill: bool
    every: bool  # every visited stop pays (no choice)
    multiplier: int
    bonus_kind: np.ndarray  # int64[B]: VISIT or CONNECT
    bonus_first: np.ndarray  # int64[B]
    bonus_count: np.ndarray  # int64[B]
    bonus_amount: np.ndarray  # int64[B]
    bonus_multiplied: np.ndarray  # bool[B]


@njit(cache=True, nogil=True)
def route_value(route, n, paid, pt):
    """Revenue of the paying stops ``route[i]`` with ``paid[i]`` (i < n), bonuses included."""
    total = 0
    any_sets = np.uint64(0)
    for i in range(n):
        if paid[i]:
            total += pt.weight[route[i]]
            any_sets |= pt.sets[route[i]]
    mult_bonus = 0
    plain_bonus = 0
    for b in range(len(pt.bonus_kind)):
        amount = 0
        first = pt.bonus_first[b]
        if pt.bonus_kind[b] == VISIT:
            bit = np.uint64(1) << np.uint64(first)
            distinct = 0
            for i in range(n):
                if paid[i] and pt.sets[route[i]] & bit:
                    seen = False
                    for j in range(i):
                        if paid[j] and pt.sets[route[j]] & bit and pt.cell[route[j]] == pt.cell[route[i]]:
                            seen = True
                            break
                    if not seen:
                        distinct += 1
            amount = pt.bonus_amount[b] * distinct
        else:
            amount = pt.bonus_amount[b]
            for j in range(first, first + pt.bonus_count[b]):
                if not any_sets & (np.uint64(1) << np.uint64(j)):
                    amount = 0
                    break
        if pt.bonus_multiplied[b]:
            mult_bonus += amount
        else:
            plain_bonus += amount
    return (total + mult_bonus) * pt.multiplier + plain_bonus


@njit(cache=True, nogil=True)
def _take(s, room, fill, pt):
    """Give stop ``s`` a pay slot if one is free (its group's, or with fill the first group's)."""
    g = pt.group[s]
    if room[g] > 0:
        room[g] -= 1
        return True
    if fill and g != 0 and room[0] > 0:
        room[0] -= 1
        return True
    return False


@njit(cache=True, nogil=True)
def best_payment(route, n, pt, paid_out):
    """Best revenue of the stops ``route[:n]`` (limits already hold), with
    ``paid_out[i]`` set for each paying stop; -1 when no choice of paying
    stops includes a company token."""
    has_token = False
    for i in range(n):
        if pt.token[route[i]]:
            has_token = True
    if not has_token:
        return -1
    if pt.every:
        for i in range(n):
            paid_out[i] = True
        return route_value(route, n, paid_out, pt)

    # Stops by weight, best first; ties keep route order (a stable insertion sort).
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        j = i
        while j > 0 and pt.weight[route[order[j - 1]]] < pt.weight[route[i]]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    special = np.empty(n, dtype=np.int64)
    room = np.empty(len(pt.pay), dtype=np.int64)
    paid = np.zeros(n, dtype=np.bool_)
    combo = np.empty(n, dtype=np.int64)
    best = -1
    for t in range(n):
        if not pt.token[route[t]]:
            continue
        num_special = 0
        for i in range(n):
            if i != t and pt.sets[route[i]] != 0:
                special[num_special] = i
                num_special += 1
        for k in range(num_special + 1):
            for i in range(k):
                combo[i] = i
            while True:
                # forced: the token stop, then the chosen bonus stops; then the rest by weight
                for g in range(len(pt.pay)):
                    room[g] = pt.pay[g]
                for i in range(n):
                    paid[i] = False
                ok = _take(route[t], room, pt.fill, pt)
                paid[t] = True
                for i in range(k):
                    if not ok:
                        break
                    ok = _take(route[special[combo[i]]], room, pt.fill, pt)
                    paid[special[combo[i]]] = True
                if ok:
                    for j in range(n):
                        i = order[j]
                        if not paid[i] and _take(route[i], room, pt.fill, pt):
                            paid[i] = True
                    revenue = route_value(route, n, paid, pt)
                    if revenue > best:
                        best = revenue
                        for i in range(n):
                            paid_out[i] = paid[i]
                # next k-combination of the special stops, in lexicographic order
                i = k - 1
                while i >= 0 and combo[i] == num_special - k + i:
                    i -= 1
                if i < 0:
                    break
                combo[i] += 1
                for j in range(i + 1, k):
                    combo[j] = combo[j - 1] + 1
    return best


@njit(cache=True, nogil=True)
def max_route_value(stops, pt):
    """An upper bound on the revenue of any route over some of ``stops``:
    the unforced greedy over all of them plus every bonus in full."""
    n = len(stops)
    order = np.argsort(-pt.weight[stops], kind="mergesort")
    room = pt.pay.copy()
    total = 0
    for j in range(n):
        s = stops[order[j]]
        if pt.group[s] >= 0 and pt.weight[s] > 0 and _take(s, room, pt.fill, pt):
            total += pt.weight[s]
    mult_bonus = 0
    plain_bonus = 0
    for b in range(len(pt.bonus_kind)):
        amount = pt.bonus_amount[b]
        if pt.bonus_kind[b] == VISIT:
            bit = np.uint64(1) << np.uint64(pt.bonus_first[b])
            amount *= np.sum((pt.sets[stops] & bit) != 0)  # at most one per stop in its cells
        if pt.bonus_multiplied[b]:
            mult_bonus += amount
        else:
            plain_bonus += amount
    return (total + mult_bonus) * pt.multiplier + plain_bonus
