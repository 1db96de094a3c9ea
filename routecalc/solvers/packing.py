"""Set packing over enumerated routes, solved by CP-SAT.

For the middle ground: enumeration finishes, but the routes are many and
hard to combine (a branch and bound over route lists can stall when good
routes of different trains overlap). Every enumerated route is one literal;
each train runs at most one route (``AddAtMostOne`` per train) and each
track piece carries at most one route (``AddAtMostOne`` per piece).
"""

from __future__ import annotations

import math
import os
import time
from collections import defaultdict

from ortools.sat.python import cp_model

from ..graph import TrackGraph, compile_position
from ..model import Position
from ..routes import Route, answer
from ..rules import require_implemented
from ..scoring import train_tables
from .reference import enumerate_routes


def pack_routes(per_train: list[list[Route]], graph: TrackGraph, time_limit: float | None = None,
                hint: list[Route] | None = None) -> tuple[str, list[Route], int, dict]:
    """(status, chosen routes, upper bound, statistics) of the best track-disjoint
    choice of one route or none per train."""
    model = cp_model.CpModel()
    chosen: list[list[tuple[cp_model.IntVar, Route]]] = []
    on_piece: dict[int, list[cp_model.IntVar]] = defaultdict(list)
    for t, routes in enumerate(per_train):
        lits = []
        for k, route in enumerate(routes):
            lit = model.NewBoolVar(f"r{t}_{k}")
            lits.append((lit, route))
            for p in {p for c in route.conns for p in graph.conn_pieces[c]}:
                on_piece[p].append(lit)
        if len(lits) > 1:
            model.AddAtMostOne(lit for lit, _ in lits)
        chosen.append(lits)
    for lits in on_piece.values():
        if len(lits) > 1:
            model.AddAtMostOne(lits)
    model.Maximize(sum(route.revenue * lit for lits in chosen for lit, route in lits))
    if hint:
        wanted = {(r.train, tuple(r.stops), tuple(r.conns)) for r in hint}
        for lits in chosen:
            for lit, route in lits:
                model.AddHint(lit, (route.train, tuple(route.stops), tuple(route.conns)) in wanted)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = os.cpu_count() or 1
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    code = solver.Solve(model)
    picked = [route for lits in chosen for lit, route in lits
              if code in (cp_model.OPTIMAL, cp_model.FEASIBLE) and solver.BooleanValue(lit)]
    revenue = sum(r.revenue for r in picked)
    if code == cp_model.OPTIMAL:
        status, bound = "optimal", revenue
    elif code == cp_model.FEASIBLE:
        status, bound = "feasible", max(revenue, math.floor(solver.BestObjectiveBound() + 1e-6))
    else:  # no solution yet, and CP-SAT reports no usable bound: each train's best route
        status, bound = "feasible", sum(max((r.revenue for r in routes), default=0) for routes in per_train)
    return status, picked, bound, {"cpsat_status": solver.StatusName(code), "branches": solver.NumBranches()}


def solve_packing(position: Position, graph: TrackGraph | None = None, *,
                  time_limit: float | None = None) -> dict:
    """Enumerate every train's routes, then pack them with CP-SAT."""
    require_implemented(position.rules)
    started = time.perf_counter()
    graph = graph or compile_position(position)
    tables = train_tables(graph)
    per_train = []
    for t, table in enumerate(tables):
        routes = enumerate_routes(graph, table)
        for r in routes:
            r.train = t
        per_train.append(routes)
    left = None if time_limit is None else max(0.01, time_limit - (time.perf_counter() - started))
    status, routes, bound, stats = pack_routes(per_train, graph, left)
    return answer(graph, tables, routes, solver="packing", status=status, bound=bound,
                  routes_enumerated=sum(len(r) for r in per_train), **stats,
                  seconds=round(time.perf_counter() - started, 4))
