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
import os
import time
from collections import defaultdict

import numpy as np
from ortools.sat.python import cp_model

from ..graph import TrackGraph, compile_position
from ..model import Position
from ..routes import Route, answer
from ..rules import require_implemented
from ..scoring import TrainTable, pay_table, train_tables
from ..validate import score_route
from .fast import TrainRoutes, Clock, enumerate_train, graph_arrays, rebuild


def enumerate_company(graph: TrackGraph, tables: list[TrainTable], route_limit: int | None = None,
                      time_limit: float | None = None) -> list[TrainRoutes]:
    """Each train's routes from the fast enumeration kernel (identical trains
    share one list)."""
    clock = Clock(time_limit, None)
    arrays = graph_arrays(graph)
    bonuses = graph.position.rules.bonuses(graph.position)
    found: dict = {}
    for table in tables:
        if table.train not in found:
            found[table.train] = enumerate_train(graph, arrays, table, pay_table(table, graph, bonuses),
                                                 route_limit, clock, (0.0, 1.0))
    return [found[table.train] for table in tables]


def _pieces(mask: np.ndarray) -> dict[int, np.ndarray]:
    """Track piece -> rows of the routes that use it."""
    out = {}
    for w in range(mask.shape[1]):
        for b in range(64):
            rows = np.flatnonzero((mask[:, w] >> np.uint64(b)) & np.uint64(1))
            if len(rows):
                out[64 * w + b] = rows
    return out


def greedy_choice(per_train: list[TrainRoutes]) -> list[tuple[int, int]]:
    """A quick route set as (train, row) pairs: each train in turn (richest
    first) takes its best route clear of the track already taken."""
    taken = np.zeros(per_train[0].mask.shape[1] if per_train else 1, dtype=np.uint64)
    chosen = []
    for t in sorted(range(len(per_train)), key=lambda t: -int(per_train[t].revenue.max(initial=0))):
        found = per_train[t]
        clear = np.flatnonzero(~np.any(found.mask & taken, axis=1))
        if len(clear):
            k = int(clear[np.argmax(found.revenue[clear])])
            taken |= found.mask[k]
            chosen.append((t, k))
    return chosen


def chosen_routes(choice: list[tuple[int, int]], per_train: list[TrainRoutes], graph: TrackGraph) -> list[Route]:
    """The chosen listed routes as scored :class:`Route` objects."""
    routes = []
    for t, k in choice:
        found = per_train[t]
        stops, conns = rebuild(graph, found.buffer, int(found.rows[k]))
        route = score_route(Route(t, stops, conns), found.table, graph)
        if route.revenue != found.revenue[k]:
            raise RuntimeError(f"the kernel priced a route {found.revenue[k]}, the validator {route.revenue}")
        routes.append(route)
    return routes


def pack_routes(per_train: list[TrainRoutes], graph: TrackGraph, time_limit: float | None = None
                ) -> tuple[str, list[Route], int, dict]:
    """(status, chosen routes, upper bound, statistics) of the best track-disjoint
    choice of one route or none per train among the listed routes.

    Only routes that could beat the greedy set become literals: a route
    earning ``r`` for train ``t`` is useful only if ``r`` plus the other
    trains' best routes reaches the greedy revenue.
    """
    floor = sum(int(per_train[t].revenue[k]) for t, k in greedy_choice(per_train))
    best = [int(found.revenue.max(initial=0)) for found in per_train]
    model = cp_model.CpModel()
    literals: list[list[tuple[int, cp_model.IntVar]]] = []
    on_piece: dict[int, list[cp_model.IntVar]] = defaultdict(list)
    for t, found in enumerate(per_train):
        rows = np.flatnonzero((found.revenue > 0) & (found.revenue + sum(best) - best[t] >= floor))
        lits = [(int(k), model.NewBoolVar(f"r{t}_{k}")) for k in rows]
        if len(lits) > 1:
            model.AddAtMostOne(lit for _, lit in lits)
        for p, at in _pieces(found.mask[rows]).items():
            on_piece[p].extend(lits[i][1] for i in at)
        literals.append(lits)
    for lits in on_piece.values():
        if len(lits) > 1:
            model.AddAtMostOne(lits)
    total = sum(int(found.revenue[k]) * lit for found, lits in zip(per_train, literals) for k, lit in lits)
    model.Maximize(total)
    model.Add(total >= floor)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = os.cpu_count() or 1
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    code = solver.Solve(model)
    chosen = []
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        chosen = chosen_routes([(t, k) for t, lits in enumerate(literals) for k, lit in lits
                                if solver.BooleanValue(lit)], per_train, graph)
    revenue = sum(r.revenue for r in chosen)
    if code == cp_model.OPTIMAL:
        status, bound = "optimal", revenue
    elif code == cp_model.FEASIBLE:
        status, bound = "feasible", max(revenue, math.floor(solver.BestObjectiveBound() + 1e-6))
    else:  # no solution yet, and CP-SAT reports no usable bound: each train's best route
        status, bound = "feasible", sum(best)
    return status, chosen, bound, {"cpsat_status": solver.StatusName(code), "branches": solver.NumBranches(),
                                   "routes_packed": sum(len(lits) for lits in literals)}


def solve_packing(position: Position, graph: TrackGraph | None = None, *, time_limit: float | None = None,
                  route_limit: int | None = None) -> dict:
    """Enumerate every train's routes, then pack them with CP-SAT."""
    require_implemented(position.rules)
    started = time.perf_counter()
    graph = graph or compile_position(position)
    tables = train_tables(graph)
    per_train = enumerate_company(graph, tables, route_limit, time_limit)
    left = None if time_limit is None else max(0.01, time_limit - (time.perf_counter() - started))
    status, routes, bound, stats = pack_routes(per_train, graph, left)
    if not all(found.complete for found in per_train):
        # A limit cut the enumeration: the packing's optimum bounds only the listed routes.
        status, bound = "feasible", max(sum(found.upper for found in per_train), bound)
    return answer(graph, tables, routes, solver="packing", status=status, bound=bound,
                  routes_enumerated=sum(found.enumerated for found in per_train),
                  routes_kept=sum(len(found.revenue) for found in per_train), **stats,
                  seconds=round(time.perf_counter() - started, 4))
