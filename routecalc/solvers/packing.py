"""Set packing over enumerated routes, solved by CP-SAT.

For the middle ground: enumeration finishes, but the routes are many and
hard to combine (a branch and bound over route lists stalls when the good
routes of different trains overlap). The fast solver's kernels list every
non-dominated route of each train; every route is then one literal, each
train runs at most one route (``AddAtMostOne`` per train) and each track
piece carries at most one route (``AddAtMostOne`` per piece).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict

import numpy as np

from ..graph import TrackGraph
from ..model import Position
from ..routes import Route, answer
from .fast import ENUMERATION_SHARE, TrainRoutes, enumerate_position, listed_routes, piece_rows

#: Routes packed per second of the time limit given at most (the model's size
#: is set by the limit asked for, never by the time left on the clock, so the
#: same limit packs the same routes on any machine): building and loading
#: the model costs some 65 microseconds a route, and CP-SAT needs time too.
PACKED_PER_SECOND = 5_000
MIN_PACKED = 2_000
#: The same for the track pieces of the packed routes, summed (the model's
#: literals in its at-most-one constraints), and their most whatever the
#: limit: long routes make a far bigger model a route, and CP-SAT's presolve
#: does not stop at its time limit. On a late 1867 board with two D trains
#: (309,555 routes, 58 pieces each) 40,000 routes, 2.3 million pieces,
#: overran a 21 s limit by 10 s, and 150,000 a 60 s limit by 200 s; 5,000
#: routes (290,000 pieces) took 1.2 s.
PACKED_PIECES_PER_SECOND = 60_000
MOST_PACKED_PIECES = 1_000_000


#: Routes compared at once when looking for the best one clear of the track taken.
CLEAR_BLOCK = 4096


def greedy_choice(per_train: list[TrainRoutes]) -> list[tuple[int, int]]:
    """A quick route set as (train, row) pairs: each train in turn (richest
    first) takes its best route clear of the track already taken."""
    taken = np.zeros(per_train[0].mask.shape[1] if per_train else 1, dtype=np.uint64)
    chosen = []
    for t in sorted(range(len(per_train)), key=lambda t: -int(per_train[t].revenue.max(initial=0))):
        k = _first_clear(per_train[t].mask, taken)
        if k is not None:
            taken |= per_train[t].mask[k]
            chosen.append((t, k))
    return chosen


def _first_clear(mask: np.ndarray, taken: np.ndarray) -> int | None:
    """The first row of ``mask`` (the best route: rows come best first) that
    shares no piece with ``taken``, looked for a block of rows at a time: a
    D train's 232,000 routes on a big board, all compared at once, took a
    tenth of a second for the first row."""
    for start in range(0, len(mask), CLEAR_BLOCK):
        clear = np.flatnonzero(~np.any(mask[start : start + CLEAR_BLOCK] & taken, axis=1))
        if len(clear):
            return start + int(clear[0])
    return None


def pack_routes(
    listed: list[TrainRoutes], graph: TrackGraph, time_limit: float | None = None, size_for: float | None = None
) -> tuple[str, list[Route], int, dict]:
    """(status, chosen routes, upper bound, statistics) of the best track-disjoint
    choice of one route or none per train among the listed routes.

    Only routes that could beat the greedy set become literals
    (:func:`_useful`). Under a time limit at
    most ``PACKED_PER_SECOND`` routes and ``PACKED_PIECES_PER_SECOND`` of
    their track pieces a second of ``size_for`` (the limit the caller was
    given; default ``time_limit``, which otherwise only stops CP-SAT), and
    never more than ``MOST_PACKED_PIECES``, are packed, those losing least
    against their train's best route, and the greedy set's; a set using a
    left-out route earns at most that route plus the other trains' best,
    which caps the bound. Without a solution from CP-SAT in time the greedy
    set is the answer.
    """
    from ortools.sat.python import cp_model  # only when CP-SAT runs

    from . import sat

    started = time.perf_counter()
    greedy, floor, best, useful = _useful(listed)
    useful, missed = _most_promising(useful, listed, best, time_limit if size_for is None else size_for)
    for t, k in greedy:  # the greedy set stays among the literals: no answer earns less
        if k not in useful[t]:
            useful[t] = np.append(useful[t], k)

    model = cp_model.CpModel()
    literals: list[list[tuple[int, cp_model.IntVar]]] = []
    on_piece: dict[int, list[cp_model.IntVar]] = defaultdict(list)
    for t, (found, rows) in enumerate(zip(listed, useful)):
        lits = [(int(k), model.new_bool_var(f"r{t}_{k}")) for k in rows]
        if len(lits) > 1:
            model.add_at_most_one(lit for _, lit in lits)
        for p, at in piece_rows(found.mask[rows]).items():
            on_piece[p].extend(lits[i][1] for i in at)
        literals.append(lits)
    for lits in on_piece.values():
        if len(lits) > 1:
            model.add_at_most_one(lits)
    total = sum(int(found.revenue[k]) * lit for found, lits in zip(listed, literals) for k, lit in lits)
    model.maximize(total)
    in_greedy = set(greedy)
    for t, lits in enumerate(literals):
        for k, lit in lits:
            model.add_hint(lit, (t, k) in in_greedy)
    model.add(total >= floor)  # the greedy set is among the literals
    solver = sat.new_solver()
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(0.01, time_limit - (time.perf_counter() - started))
    code = sat.solve(solver, model)
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        choice = [(t, k) for t, lits in enumerate(literals) for k, lit in lits if solver.boolean_value(lit)]
        bound = math.floor(solver.best_objective_bound + 1e-6)
    else:  # no solution in time, and CP-SAT reports no usable bound: each train's best route
        choice, bound = greedy, sum(best)
    chosen = listed_routes(choice, listed, graph)
    revenue = sum(r.revenue for r in chosen)
    bound = max(revenue, min(bound, sum(best)), missed or 0)  # no train earns more than its best route
    stats = {
        "cpsat_status": solver.status_name(code),
        "branches": solver.num_branches,
        "routes_packed": sum(len(lits) for lits in literals),
    }
    return "optimal" if bound == revenue else "feasible", chosen, bound, stats


def _useful(listed: list[TrainRoutes]) -> tuple[list[tuple[int, int]], int, list[int], list[np.ndarray]]:
    """(the greedy set, its revenue, each train's best revenue, the rows of
    each train's routes that could beat the greedy set): a route earning
    ``r`` for train ``t`` is useful only if ``r`` plus the other trains'
    best routes reaches the greedy revenue."""
    greedy = greedy_choice(listed)
    floor = sum(int(listed[t].revenue[k]) for t, k in greedy)
    best = [int(found.revenue.max(initial=0)) for found in listed]
    useful = [
        np.flatnonzero((found.revenue > 0) & (found.revenue + sum(best) - best[t] >= floor))
        for t, found in enumerate(listed)
    ]
    return greedy, floor, best, useful


def packs_whole(listed: list[TrainRoutes], size_for: float | None) -> bool:
    """Whether :func:`pack_routes` with ``size_for`` would pack every useful
    route, none cut for its size, so that its optimum is the optimum of
    the listed routes: counts of routes and track pieces only."""
    return _fits(*_sizes(_useful(listed)[3], listed, size_for))


def _sizes(useful: list[np.ndarray], listed: list[TrainRoutes], size_for: float | None) -> tuple[np.ndarray, int, int]:
    """(the track pieces of each useful route, all trains' in a row; the
    routes and the pieces that a ``size_for`` seconds limit affords, never
    more than ``MOST_PACKED_PIECES``)."""
    pieces = np.concatenate(
        [np.zeros(0, np.int64)] + [_piece_counts(listed[t].mask[rows]) for t, rows in enumerate(useful)]
    )
    routes_cap = len(pieces) if size_for is None else max(MIN_PACKED, int(PACKED_PER_SECOND * size_for))
    pieces_cap = MOST_PACKED_PIECES
    if size_for is not None:
        pieces_cap = min(int(PACKED_PIECES_PER_SECOND * max(size_for, 1.0)), MOST_PACKED_PIECES)
    return pieces, routes_cap, pieces_cap


def _fits(pieces: np.ndarray, routes_cap: int, pieces_cap: int) -> bool:
    return len(pieces) <= routes_cap and pieces.sum() <= pieces_cap


def _most_promising(
    useful: list[np.ndarray], listed: list[TrainRoutes], best: list[int], size_for: float | None
) -> tuple[list[np.ndarray], int | None]:
    """The useful rows cut to what a ``size_for`` seconds limit affords (in
    routes, and in their track pieces, summed) and to ``MOST_PACKED_PIECES``,
    those losing least against their train's best route first; and the most
    a route set using a left-out route earns (None: none left out)."""
    pieces, routes_cap, pieces_cap = _sizes(useful, listed, size_for)
    if _fits(pieces, routes_cap, pieces_cap):
        return useful, None
    loss = np.concatenate([best[t] - listed[t].revenue[rows] for t, rows in enumerate(useful)])
    order = np.argsort(loss, kind="stable")
    cap = min(routes_cap, max(1, int(np.searchsorted(np.cumsum(pieces[order]), pieces_cap, side="right"))))
    keep = np.zeros(len(loss), np.bool_)
    keep[order[:cap]] = True
    kept, missed, at = [], 0, 0
    for t, rows in enumerate(useful):
        mine = keep[at : at + len(rows)]
        at += len(rows)
        kept.append(rows[mine])
        if not mine.all():
            missed = max(missed, int(listed[t].revenue[rows[~mine]].max()) + sum(best) - best[t])
    return kept, missed


def _piece_counts(mask: np.ndarray) -> np.ndarray:
    """The track pieces of each route (its mask row's set bits): 0.02 s for
    309,555 D routes, where unpacking the bits took 2.7 s."""
    return np.bitwise_count(mask).sum(axis=1, dtype=np.int64)


def solve_packing(
    position: Position,
    graph: TrackGraph | None = None,
    *,
    time_limit: float | None = None,
    route_limit: int | None = None,
) -> dict:
    """Enumerate every train's routes, then pack them with CP-SAT."""
    clock, graph, tables, per_train = enumerate_position(position, graph, time_limit, route_limit, None)
    left = None if time_limit is None else max(0.01, time_limit - clock.seconds())
    # the model is sized for the share of the limit the enumeration leaves, whatever the clock says
    size_for = None if time_limit is None else time_limit * (1 - ENUMERATION_SHARE)
    status, routes, bound, stats = pack_routes(per_train, graph, left, size_for)
    if not all(found.complete for found in per_train):
        # A limit cut the enumeration: the packing's optimum bounds only the listed routes.
        status, bound = "feasible", max(sum(found.upper for found in per_train), bound)
    return answer(
        graph,
        tables,
        routes,
        clock.started,
        solver="packing",
        status=status,
        bound=bound,
        routes_enumerated=sum(found.enumerated for found in per_train),
        routes_kept=sum(len(found.revenue) for found in per_train),
        **stats,
    )
