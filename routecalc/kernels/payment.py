"""Which visited stops pay: the one implementation, shared by the validator
(through :func:`routecalc.scoring.best_payment`) and the fast solver's route
enumeration.

The choice is a greedy over a matroid: each distance group has ``pay``
slots, and with ``fill`` the slots the first group's visited stops leave
unused take stops of the other groups. For a matroid the greedy by value
is optimal, also when a set of stops is forced in first; the only stops
worth forcing are a token stop (the token rule) and stops in bonus cells
(bonuses depend on where the paying stops are), so the search tries each
token stop times every subset of bonus stops.

A :class:`PayTable` holds one train's arrays over the graph's stops
(:func:`routecalc.scoring.pay_table` builds it); bonuses are bit sets: bit
``j`` of ``sets[s]`` says stop ``s`` lies in a cell of bonus cell set ``j``,
and bonus ``b`` reads the sets ``first[b] .. first[b] + count[b] - 1``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types

from .cache import kernel, record

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
    divisor: int  # the revenue is floor(raw / divisor) * factor (Train.payout)
    factor: int
    bonus_kind: np.ndarray  # int64[B]: VISIT or CONNECT
    bonus_first: np.ndarray  # int64[B]
    bonus_count: np.ndarray  # int64[B]
    bonus_amount: np.ndarray  # int64[B]
    bonus_multiplied: np.ndarray  # bool[B]


class PayWork(NamedTuple):
    """The route to pay and scratch space, sized for the longest route
    (allocated once per enumeration, not once per route)."""

    route: np.ndarray  # int64: the visited stops
    paid_out: np.ndarray  # bool: the best choice found
    order: np.ndarray  # int64: route positions by weight, best first
    special: np.ndarray  # int64: positions of stops in bonus cells
    combo: np.ndarray  # int64: the bonus stops forced now
    paid: np.ndarray  # bool: the choice being built
    room: np.ndarray  # int64[G + 1]: free pay slots per group, then the first group's left to fill


def pay_work(route: np.ndarray, groups: int) -> PayWork:
    """Work space for paying ``route`` (any prefix of it), which it holds
    (not a copy). Allocated in Python: a kernel that allocates arrays would
    import numba's array library (some 70 ms) when loaded from the cache."""
    n = len(route)
    return PayWork(
        route,
        np.zeros(n, np.bool_),
        np.zeros(n, np.int64),
        np.zeros(n, np.int64),
        np.zeros(n, np.int64),
        np.zeros(n, np.bool_),
        np.zeros(max(groups, 1) + 1, np.int64),
    )


_i64, _u64, _bool = types.int64[::1], types.uint64[::1], types.boolean[::1]
#: numba types of the tuples, as the solvers build them.
PAY_TABLE = record(
    PayTable,
    _i64,
    _i64,
    _bool,
    _i64,
    _u64,
    _i64,
    types.boolean,
    types.boolean,
    types.int64,
    types.int64,
    types.int64,
    _i64,
    _i64,
    _i64,
    _i64,
    _bool,
)
PAY_WORK = record(PayWork, _i64, _bool, _i64, _i64, _i64, _bool, _i64)


@kernel((types.int64, PAY_TABLE, PAY_WORK))
def pay(n, pt, w):
    """Best revenue of the stops ``w.route[:n]`` (limits already hold), with
    ``w.paid_out[i]`` set for each paying stop; -1 when no choice of paying
    stops includes a company token. The choice maximises the raw revenue;
    the train's divisor and factor (:meth:`~routecalc.trains.Train.payout`)
    keep its order, so they apply once, to the best."""
    # Arrays come out of their tuples once and the helpers are closures:
    # numba would otherwise count references on every access and call.
    weight, group, token, cell, sets, pay_slots = pt.weight, pt.group, pt.token, pt.cell, pt.sets, pt.pay
    fill, multiplier, divisor, factor = pt.fill, pt.multiplier, pt.divisor, pt.factor
    bonus_kind, bonus_first, bonus_count = pt.bonus_kind, pt.bonus_first, pt.bonus_count
    bonus_amount, bonus_multiplied = pt.bonus_amount, pt.bonus_multiplied
    route, paid_out, order, special, combo, paid, room = (
        w.route,
        w.paid_out,
        w.order,
        w.special,
        w.combo,
        w.paid,
        w.room,
    )
    num_groups = len(pay_slots)

    def take(s):
        g = group[s]
        if room[g] > 0:
            room[g] -= 1
            return True
        if fill and g != 0 and room[num_groups] > 0:
            room[num_groups] -= 1
            return True
        return False

    def reset_room(first_visits):
        """Every group's pay slots; with ``fill``, the first group's slots its
        own visited stops leave unused go to the other groups (room[G])."""
        for g in range(num_groups):
            room[g] = pay_slots[g]
        room[num_groups] = max(0, pay_slots[0] - first_visits) if fill else 0

    def value(chosen):
        """Revenue of the stops route[i] with chosen[i], bonuses included."""
        total = 0
        any_sets = np.uint64(0)
        for i in range(n):
            if chosen[i]:
                total += weight[route[i]]
                any_sets |= sets[route[i]]
        mult_bonus = 0
        plain_bonus = 0
        for b in range(len(bonus_kind)):
            first = bonus_first[b]
            if bonus_kind[b] == VISIT:
                bit = np.uint64(1) << np.uint64(first)
                distinct = 0
                for i in range(n):
                    if chosen[i] and sets[route[i]] & bit:
                        seen = False
                        for j in range(i):
                            if chosen[j] and sets[route[j]] & bit and cell[route[j]] == cell[route[i]]:
                                seen = True
                                break
                        if not seen:
                            distinct += 1
                amount = bonus_amount[b] * distinct
            else:
                amount = bonus_amount[b]
                for j in range(first, first + bonus_count[b]):
                    if not any_sets & (np.uint64(1) << np.uint64(j)):
                        amount = 0
                        break
            if bonus_multiplied[b]:
                mult_bonus += amount
            else:
                plain_bonus += amount
        return (total + mult_bonus) * multiplier + plain_bonus

    has_token = False
    first_visits = 0
    for i in range(n):
        if token[route[i]]:
            has_token = True
        if group[route[i]] == 0:
            first_visits += 1
    if not has_token:
        return -1
    if pt.every:
        for i in range(n):
            paid_out[i] = True
        return value(paid_out) // divisor * factor

    # Stops by weight, best first; ties keep route order (a stable insertion sort).
    for i in range(n):
        j = i
        while j > 0 and weight[route[order[j - 1]]] < weight[route[i]]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    # No choice earns more than the unforced greedy with every bonus of the
    # route's stops: once a choice reaches that, the rest are not tried.
    reset_room(first_visits)
    unpaid = 0
    for j in range(n):
        i = order[j]
        paid[i] = True
        if not take(route[i]):
            unpaid += weight[route[i]]
    ceiling = value(paid) - unpaid * multiplier
    best = -1
    for t in range(n):
        if not token[route[t]]:
            continue
        num_special = 0
        for i in range(n):
            if i != t and sets[route[i]] != 0:
                special[num_special] = i
                num_special += 1
        for k in range(num_special + 1):
            for i in range(k):
                combo[i] = i
            while True:
                # forced: the token stop, then the chosen bonus stops; then the rest by weight
                reset_room(first_visits)
                for i in range(n):
                    paid[i] = False
                ok = take(route[t])
                paid[t] = True
                for i in range(k):
                    if not ok:
                        break
                    ok = take(route[special[combo[i]]])
                    paid[special[combo[i]]] = True
                if ok:
                    for j in range(n):
                        i = order[j]
                        if not paid[i] and take(route[i]):
                            paid[i] = True
                    revenue = value(paid)
                    if revenue > best:
                        best = revenue
                        for i in range(n):
                            paid_out[i] = paid[i]
                        if best >= ceiling:
                            return best // divisor * factor
                # next k-combination of the special stops, in lexicographic order
                i = k - 1
                while i >= 0 and combo[i] == num_special - k + i:
                    i -= 1
                if i < 0:
                    break
                combo[i] += 1
                for j in range(i + 1, k):
                    combo[j] = combo[j - 1] + 1
    return best // divisor * factor if best >= 0 else best
