"""A bound on the best route set over routes, not track: the linear
relaxation of choosing routes (Dantzig-Wolfe), by column generation.

The master LP picks, for each kind of train (identical trains), at most as
many routes as it has trains, each track piece used by at most one route,
most revenue first; its variables are routes (columns), only those listed
so far. Its dual prices ``pi`` (one a track piece) and ``mu`` (one a kind)
price the routes not listed: a route of kind ``k`` improves the LP when its
revenue less the prices of its pieces beats ``mu[k]``. The routes an
unfinished enumeration listed are priced first (a sum per route); when
none of them improves, the enumeration kernel with costs on the
connections (:func:`~routecalc.kernels.enumeration.new_prune`) finds each
kind's route of the best reduced revenue, within a count of kernel steps.

For any prices ``pi >= 0``, no route set earns more than ``sum(pi)`` plus,
for each kind, its trains times the best reduced revenue of its routes (or
0): each route's revenue is at most its pieces' prices plus that. So every
iteration whose pricing finished for every kind gives a true bound, the
lowest of which is kept; it meets the LP's value when no route improves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from ortools.linear_solver import pywraplp

from ..graph import TrackGraph
from ..kernels import enumeration as enum
from ..kernels.longest import track_points
from ..routes import Route
from ..scoring import TrainTable, pay_table
from .fast import Clock, TrainRoutes, enumerate_train, graph_arrays
from .maxima import richest_first, thresholds

#: Listed routes of each kind that start the master LP (the richest), and
#: that enter it per kind and iteration when their reduced revenue is best.
FIRST_COLUMNS = 2000
NEW_COLUMNS = 200
#: Reduced revenue a route must beat to enter (the LP's own tolerance).
EPSILON = 1e-6


@dataclass
class Kind:
    """One kind of train: its trains, table and routes known (the pool)."""

    trains: list[int]
    table: TrainTable
    pool_mask: np.ndarray  # uint64[R, W]: listed routes not yet columns
    pool_revenue: np.ndarray  # int64[R]


@dataclass
class RouteBound:
    """What the column generation found out."""

    bound: float | None  # no route set earns more (None: no pricing finished for every kind)
    lp: float  # the master LP's last value (a bound only when nothing improves it)
    iterations: int
    columns: int
    search_steps: int  # enumeration kernel steps of the searches for routes
    pricing_rounds: int  # iterations priced by CP-SAT (each gives a bound)
    complete: bool  # the LP is solved over all routes (its value is the bound)
    history: list[tuple[float, float | None]] = field(default_factory=list)  # (LP, bound) per iteration
    cpu: dict[str, float] = field(default_factory=lambda: dict.fromkeys(("master", "pool", "search", "cpsat"), 0.0))


def piece_rows(masks: np.ndarray) -> np.ndarray:
    """Each route's track pieces, as a boolean row per route."""
    return np.unpackbits(np.ascontiguousarray(masks).view(np.uint8), axis=1, bitorder="little").astype(bool)


def mask_costs(masks: np.ndarray, price: np.ndarray) -> np.ndarray:
    """Each mask row's pieces' prices summed, by a table per byte."""
    if len(masks) == 0:
        return np.zeros(0)
    bytes_ = np.ascontiguousarray(masks).view(np.uint8)
    nbytes = bytes_.shape[1]
    padded = np.zeros(nbytes * 8)
    padded[: len(price)] = price
    bits = (np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1  # [256, 8]
    table = padded.reshape(nbytes, 8) @ bits.T  # [nbytes, 256]
    return table[np.arange(nbytes)[None, :], bytes_].sum(axis=1)


class Master:
    """The master LP over the routes entered so far."""

    def __init__(self, kinds: list[Kind], pieces: int) -> None:
        self.solver = pywraplp.Solver.CreateSolver("GLOP")
        self.objective = self.solver.Objective()
        self.objective.SetMaximization()
        self.kind_rows = [self.solver.Constraint(0, len(kind.trains), f"k{k}") for k, kind in enumerate(kinds)]
        self.piece_rows: list[pywraplp.Constraint | None] = [None] * pieces
        self.columns: list[tuple[int, np.ndarray, int]] = []  # (kind, mask, revenue)

    def add(self, k: int, masks: np.ndarray, revenue: np.ndarray) -> None:
        """Routes of kind ``k`` (track masks, revenues) as new columns."""
        for mask, rows, earns in zip(masks, piece_rows(masks), revenue):
            x = self.solver.NumVar(0, 1, "")
            self.objective.SetCoefficient(x, float(earns))
            self.columns.append((k, mask, int(earns)))
            self.kind_rows[k].SetCoefficient(x, 1)
            for p in np.flatnonzero(rows[: len(self.piece_rows)]):
                row = self.piece_rows[p]
                if row is None:
                    row = self.piece_rows[p] = self.solver.Constraint(0, 1, f"p{p}")
                row.SetCoefficient(x, 1)

    def solve(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(value, piece prices, kind prices), the prices clipped at 0."""
        if self.solver.Solve() != pywraplp.Solver.OPTIMAL:
            raise RuntimeError("the master LP was not solved to optimality")
        pi = np.array([0.0 if row is None else max(row.dual_value(), 0.0) for row in self.piece_rows])
        mu = np.array([max(row.dual_value(), 0.0) for row in self.kind_rows])
        return self.objective.Value(), pi, mu


class Pricer:
    """The exact pricing of one kind of train: the enumeration kernel's
    branch and bound for the route of the best reduced revenue."""

    def __init__(self, graph: TrackGraph, table: TrainTable) -> None:
        self.graph, self.table = graph, table
        self.prices = pay_table(table, graph, graph.position.rules.bonuses(graph.position))
        self.arrays = richest_first(graph_arrays(graph), self.prices.weight)
        self.points = track_points(graph, int(table.gauge_bit))
        self.thresholds = thresholds(self.prices)

    def best(self, pi: np.ndarray, gain: float, clock: Clock, step_limit: int | None) -> tuple[TrainRoutes, float]:
        """The routes found beating ``gain`` in reduced revenue under piece
        prices ``pi`` (each beating the one before; the last is the best
        when the search finished), and the best reduced revenue (``gain``
        when none beats it)."""
        cost = mask_costs(self.arrays.conn_mask, pi)
        prune = enum.new_prune(
            len(self.table.pay), 1, self.points, self.thresholds, (cost, gain, self.graph.num_stops)
        )
        found = enumerate_train(
            self.graph, self.arrays, self.table, self.prices, None, clock, (0.0, 0.0), step_limit, prune
        )
        return found, float(prune.gain[0])


def _route_mask(graph: TrackGraph, route: Route) -> np.ndarray:
    return np.bitwise_or.reduce(graph.conn_mask[route.conns].astype(np.uint64), axis=0)


def column_bound(
    graph: TrackGraph,
    tables: list[TrainTable],
    listed: list[TrainRoutes],
    known: list[Route],
    target: float,
    clock: Clock,
    search_steps: int,
    pricing_work: float,
    iterations: int,
) -> RouteBound:
    """The route-based bound of the best route set, from the routes
    ``listed`` (each train's, identical trains sharing) and ``known``.

    Each iteration prices the listed routes; when none improves the LP,
    the kernel's search (``search_steps`` kernel steps a kind) looks for
    more; when it finds none either, CP-SAT prices each kind within
    ``pricing_work`` deterministic time, which gives a true bound. It stops
    once the bound is below ``target``, after ``iterations`` LP solves, or
    when no pricing finds a route."""
    ids = list(dict.fromkeys(id(found) for found in listed))
    kinds: list[Kind] = []
    for i in ids:
        trains = [t for t, found in enumerate(listed) if id(found) == i]
        found = listed[trains[0]]
        kinds.append(Kind(trains, found.table, found.mask[FIRST_COLUMNS:], found.revenue[FIRST_COLUMNS:]))
    master = Master(kinds, graph.num_pieces)
    for k, kind in enumerate(kinds):
        found = listed[kind.trains[0]]
        master.add(k, found.mask[:FIRST_COLUMNS], found.revenue[:FIRST_COLUMNS])
    for route in known:
        k = next(k for k, kind in enumerate(kinds) if route.train in kind.trains)
        master.add(k, _route_mask(graph, route)[None, :], np.array([route.revenue]))
    searches = [Pricer(graph, kind.table) for kind in kinds]
    pricers = [CpsatPricer(graph, tables, kind.trains[0]) for kind in kinds]
    out = RouteBound(None, 0.0, 0, 0, 0, 0, False)
    words = graph.conn_mask.shape[1]
    for _ in range(iterations):
        tick = time.process_time()
        out.lp, pi, mu = master.solve()
        out.cpu["master"] += time.process_time() - tick
        out.iterations += 1
        bound = None
        added = 0
        tick = time.process_time()
        for k, kind in enumerate(kinds):  # the listed routes first
            reduced = kind.pool_revenue - mask_costs(kind.pool_mask, pi) - mu[k]
            better = np.flatnonzero(reduced > EPSILON)
            if len(better) > NEW_COLUMNS:
                better = better[np.argpartition(-reduced[better], NEW_COLUMNS)[:NEW_COLUMNS]]
            master.add(k, kind.pool_mask[better], kind.pool_revenue[better])
            keep = np.ones(len(kind.pool_revenue), bool)
            keep[better] = False
            kind.pool_mask, kind.pool_revenue = kind.pool_mask[keep], kind.pool_revenue[keep]
            added += len(better)
        out.cpu["pool"] += time.process_time() - tick
        tick = time.process_time()
        if not added and search_steps:
            for k, kind in enumerate(kinds):
                found, gain = searches[k].best(pi, float(mu[k]) + EPSILON, clock, search_steps)
                out.search_steps += found.steps
                master.add(k, found.mask, found.revenue)
                added += len(found.revenue)
        out.cpu["search"] += time.process_time() - tick
        tick = time.process_time()
        if not added:
            exact = True
            bound = float(pi.sum())
            for k, kind in enumerate(kinds):
                routes, gain, proved = pricers[k].best(pi, float(mu[k]) + EPSILON, pricing_work)
                exact &= proved
                masks = np.array([_route_mask(graph, r) for r in routes], np.uint64).reshape(len(routes), words)
                master.add(k, masks, np.array([r.revenue for r in routes]))
                bound += len(kind.trains) * max(gain, 0.0)
                added += len(routes)
            out.pricing_rounds += 1
            out.bound = bound if out.bound is None else min(out.bound, bound)
            out.complete = exact and not added
        out.cpu["cpsat"] += time.process_time() - tick
        out.history.append((out.lp, bound))
        if (out.bound is not None and out.bound < target) or not added:
            break
    out.columns = len(master.columns)
    return out


#: Prices are scaled to whole numbers for CP-SAT, rounded down (a route's
#: reduced revenue can then only be over-estimated: the bound stays true).
SCALE = 1000


class CpsatPricer:
    """The pricing of one kind of train by CP-SAT: its single-train model
    with the pieces' prices taken off the revenue. Its bound on the best
    reduced revenue is true even when the search stops short."""

    def __init__(self, graph: TrackGraph, tables: list[TrainTable], t: int) -> None:
        from .cpsat import PathModel

        self.graph = graph
        self.path = PathModel(graph, tables, [t])
        self.t = t
        self.vars = self.path.vars[t]

    def best(self, pi: np.ndarray, gain: float, work: float) -> tuple[list[Route], float, bool]:
        """(routes beating ``gain``, an upper bound on the best reduced
        revenue, whether CP-SAT proved it)."""
        from ortools.sat.python import cp_model

        conns = list(self.vars.use)
        cost = np.floor(mask_costs(self.graph.conn_mask[conns].astype(np.uint64), pi) * SCALE).astype(np.int64)
        model = self.path.model
        model.Maximize(SCALE * self.vars.revenue - sum(int(k) * self.vars.use[c] for c, k in zip(conns, cost) if k))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.linearization_level = 2
        solver.parameters.max_deterministic_time = work
        routes: list[Route] = []
        path, t, tv = self.path, self.t, self.vars

        class Collect(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                if self.ObjectiveValue() / SCALE > gain and self.BooleanValue(tv.run):
                    routes.append(path._route(t, tv, self))

        code = solver.Solve(model, Collect())
        if code == cp_model.OPTIMAL:
            return routes, solver.ObjectiveValue() / SCALE, True
        if code == cp_model.FEASIBLE:
            return routes, solver.BestObjectiveBound() / SCALE, False
        return routes, float(self.path.ceiling), False
