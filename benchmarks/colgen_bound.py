"""The route-based (Dantzig-Wolfe) bound of the stress positions, by column
generation: measured for issue 12, not used by the engine.

The master LP picks, for each kind of train (identical trains), at most as
many routes as it has trains, each track piece (the engine's conflict unit:
a bit of ``conn_mask``) in at most one route, most revenue first; its
variables are routes (columns), only those entered so far. Its dual prices
``pi`` (one a piece) and ``mu`` (one a kind) price the other routes: a
route of kind ``k`` improves the LP when its revenue less its pieces'
prices beats ``mu[k]``. The routes auto's budgeted enumeration listed are
priced first (a sum a route); when none improves, CP-SAT prices each kind:
its single-train model (:class:`~routecalc.solvers.cpsat.PathModel`) with
the pieces' prices taken off the revenue, within a count of deterministic
time, every improving solution it meets entering the LP.

For any prices ``pi >= 0`` no route set earns more than ``sum(pi)`` plus,
for each kind, its trains times the best reduced revenue of its routes (or
0); CP-SAT's bound on that is true even when its search stops short, so
each CP-SAT round gives a true bound. Without the optimum's own LP, the LP
over the routes entered so far is a lower bound of the Dantzig-Wolfe bound:
above the optimum plus the revenue step, the bound cannot prove it.

One row per fixture (``fixtures/stress-*.json``, the four slow ones by
default): the recorded optimum; the enumeration and seed auto starts from
(its budgets), the LP's last value and the best bound, iterations, columns,
CP-SAT pricing rounds, CPU seconds by part (this process, CP-SAT included),
and auto's CPU seconds on the same position in the same run.

    .venv/bin/python benchmarks/colgen_bound.py [--work 1.0] [--iterations 300]
        [--no-auto] [fixture ...]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from ortools.linear_solver import pywraplp
from ortools.sat.python import cp_model

from routecalc.graph import TrackGraph, compile_position
from routecalc.model import load_position_file
from routecalc.routes import Route
from routecalc.scoring import TrainTable, train_tables
from routecalc.solvers import SOLVERS, Limits, warm_up
from routecalc.solvers.auto import ENUMERATION_STEPS, ROUTE_BUDGET, SEED_WORK
from routecalc.solvers.cpsat import PathModel
from routecalc.solvers.fast import Clock, TrainRoutes, combine_company, enumerate_company

ROOT = Path(__file__).resolve().parent.parent
SLOW = ("stress-1828-d-8e", "stress-1867-express-8", "stress-1867-two-d", "stress-express")
#: Listed routes of each kind that start the master LP (the richest), and
#: that enter it per kind and iteration, those of the best reduced revenue.
FIRST_COLUMNS = 2000
NEW_COLUMNS = 200
#: Reduced revenue a route must beat to enter (the LP's own tolerance).
EPSILON = 1e-6
#: Prices are scaled to whole numbers for CP-SAT and rounded down: a
#: route's reduced revenue can only be over-estimated, the bound stays true.
SCALE = 1000


@dataclass
class Kind:
    """One kind of train: its trains and the listed routes not yet columns."""

    trains: list[int]
    pool_mask: np.ndarray  # uint64[R, W]
    pool_revenue: np.ndarray  # int64[R]


@dataclass
class RouteBound:
    """What the column generation found out."""

    bound: float | None = None  # no route set earns more (None: no CP-SAT round yet)
    lp: float = 0.0  # the master LP's last value
    iterations: int = 0
    columns: int = 0
    pricing_rounds: int = 0  # iterations priced by CP-SAT (each gives a bound)
    complete: bool = False  # CP-SAT proved that no route improves the LP: its value is the bound
    history: list[tuple[float, float | None]] = field(default_factory=list)  # (LP, bound) per iteration
    cpu: dict[str, float] = field(default_factory=lambda: dict.fromkeys(("master", "pool", "cpsat"), 0.0))


def piece_rows(masks: np.ndarray) -> np.ndarray:
    """Each route's track pieces, a boolean row a route."""
    return np.unpackbits(np.ascontiguousarray(masks).view(np.uint8), axis=1, bitorder="little").astype(bool)


def mask_costs(masks: np.ndarray, price: np.ndarray) -> np.ndarray:
    """Each mask row's pieces' prices summed, by a table a byte."""
    if len(masks) == 0:
        return np.zeros(0)
    octets = np.ascontiguousarray(masks).view(np.uint8)
    width = octets.shape[1]
    padded = np.zeros(width * 8)
    padded[: len(price)] = price
    bits = (np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1
    table = padded.reshape(width, 8) @ bits.T  # [byte position, byte value]
    return table[np.arange(width)[None, :], octets].sum(axis=1)


def route_mask(graph: TrackGraph, route: Route) -> np.ndarray:
    return np.bitwise_or.reduce(graph.conn_mask[route.conns].astype(np.uint64), axis=0)


class Master:
    """The master LP (GLOP) over the routes entered so far."""

    def __init__(self, kinds: list[Kind], pieces: int) -> None:
        self.solver = pywraplp.Solver.CreateSolver("GLOP")
        self.objective = self.solver.Objective()
        self.objective.SetMaximization()
        self.kind_rows = [self.solver.Constraint(0, len(kind.trains)) for kind in kinds]
        self.piece_rows: list[pywraplp.Constraint | None] = [None] * pieces
        self.columns = 0

    def add(self, k: int, masks: np.ndarray, revenue: np.ndarray) -> None:
        """Routes of kind ``k`` (track masks, revenues) as new columns."""
        for rows, earns in zip(piece_rows(masks), revenue):
            x = self.solver.NumVar(0, 1, "")
            self.objective.SetCoefficient(x, float(earns))
            self.kind_rows[k].SetCoefficient(x, 1)
            for p in np.flatnonzero(rows[: len(self.piece_rows)]):
                row = self.piece_rows[p]
                if row is None:
                    row = self.piece_rows[p] = self.solver.Constraint(0, 1)
                row.SetCoefficient(x, 1)
            self.columns += 1

    def solve(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(value, piece prices, kind prices), the prices clipped at 0 (any
        prices >= 0 give a true bound)."""
        if self.solver.Solve() != pywraplp.Solver.OPTIMAL:
            raise RuntimeError("the master LP was not solved to optimality")
        pi = np.array([0.0 if row is None else max(row.dual_value(), 0.0) for row in self.piece_rows])
        mu = np.array([max(row.dual_value(), 0.0) for row in self.kind_rows])
        return self.objective.Value(), pi, mu


class Pricer:
    """One kind's pricing: its single-train CP-SAT model, the pieces' prices
    (scaled, rounded down) taken off its revenue."""

    def __init__(self, graph: TrackGraph, tables: list[TrainTable], t: int) -> None:
        self.graph, self.t = graph, t
        self.path = PathModel(graph, tables, [t])
        self.vars = self.path.vars[t]

    def best(self, pi: np.ndarray, gain: float, work: float) -> tuple[list[Route], float, bool]:
        """(the routes met whose reduced revenue beats ``gain``, a bound on
        the best reduced revenue, whether CP-SAT proved it)."""
        conns = list(self.vars.use)
        cost = np.floor(mask_costs(self.graph.conn_mask[conns].astype(np.uint64), pi) * SCALE).astype(np.int64)
        tv = self.vars
        self.path.model.maximize(SCALE * tv.revenue - sum(int(k) * tv.use[c] for c, k in zip(conns, cost) if k))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.linearization_level = 2
        solver.parameters.max_deterministic_time = work
        routes: list[Route] = []
        path, t = self.path, self.t

        class Collect(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                if self.objective_value / SCALE > gain and self.boolean_value(tv.run):
                    routes.append(path._route(t, tv, self))  # the validator re-scores it

        code = solver.solve(self.path.model, Collect())
        if code == cp_model.OPTIMAL:
            return routes, solver.objective_value / SCALE, True
        if code == cp_model.FEASIBLE:
            return routes, solver.best_objective_bound / SCALE, False
        return routes, float(self.path.ceiling), False


def column_bound(
    graph: TrackGraph,
    tables: list[TrainTable],
    listed: list[TrainRoutes],
    known: list[Route],
    target: float,
    work: float,
    iterations: int,
) -> RouteBound:
    """The route-based bound of the best route set, from the routes
    ``listed`` (each train's, identical trains sharing) and ``known``: until
    the bound is below ``target``, ``iterations`` LP solves, or a CP-SAT
    round (``work`` deterministic time a kind) that finds no route."""
    kinds = []
    for i in dict.fromkeys(id(found) for found in listed):
        trains = [t for t, found in enumerate(listed) if id(found) == i]
        found = listed[trains[0]]
        kinds.append(Kind(trains, found.mask[FIRST_COLUMNS:], found.revenue[FIRST_COLUMNS:]))
    master = Master(kinds, graph.num_pieces)
    for k, kind in enumerate(kinds):
        found = listed[kind.trains[0]]
        master.add(k, found.mask[:FIRST_COLUMNS], found.revenue[:FIRST_COLUMNS])
    for route in known:
        k = next(k for k, kind in enumerate(kinds) if route.train in kind.trains)
        master.add(k, route_mask(graph, route)[None, :], np.array([route.revenue]))
    pricers = [Pricer(graph, tables, kind.trains[0]) for kind in kinds]
    out = RouteBound()
    words = graph.conn_mask.shape[1]
    for _ in range(iterations):
        tick = time.process_time()
        out.lp, pi, mu = master.solve()
        out.cpu["master"] += time.process_time() - tick
        out.iterations += 1
        tick = time.process_time()
        added = 0
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
        bound = None
        if not added:
            tick = time.process_time()
            bound, exact = float(pi.sum()), True
            for k, kind in enumerate(kinds):
                routes, gain, proved = pricers[k].best(pi, float(mu[k]) + EPSILON, work)
                masks = np.array([route_mask(graph, r) for r in routes], np.uint64).reshape(len(routes), words)
                revenue = np.array([r.revenue for r in routes], np.int64)
                better = revenue - mask_costs(masks, pi) > mu[k] + EPSILON  # not only at the rounded prices
                master.add(k, masks[better], revenue[better])
                bound += len(kind.trains) * max(gain, 0.0)
                exact &= proved
                added += int(better.sum())
            out.pricing_rounds += 1
            out.bound = bound if out.bound is None else min(out.bound, bound)
            out.complete = exact and not added
            out.cpu["cpsat"] += time.process_time() - tick
        out.history.append((out.lp, bound))
        if (out.bound is not None and out.bound < target) or not added:
            break
    out.columns = master.columns
    return out


def measure(path: Path, work: float, iterations: int, with_auto: bool) -> dict:
    """One fixture's row: the column generation from what auto lists, and auto."""
    position = load_position_file(path)
    optimum = json.loads(path.read_text())["reference"]["optimum"]
    graph = compile_position(position)
    tables = train_tables(graph)
    started = time.process_time()
    listed = enumerate_company(graph, tables, ROUTE_BUDGET, Clock(None, None), ENUMERATION_STEPS)
    seed, _, _ = combine_company(graph, tables, listed, Clock(None, None), SEED_WORK)
    listing = time.process_time() - started
    found = column_bound(graph, tables, listed, seed, optimum + 10, work, iterations)
    row = {
        "fixture": path.stem,
        "optimum": optimum,
        "seed": sum(r.revenue for r in seed),
        "lp": round(found.lp, 1),
        "bound": None if found.bound is None else round(found.bound, 1),
        "closes": found.bound is not None and found.bound < optimum + 10,
        "complete": found.complete,
        "iterations": found.iterations,
        "columns": found.columns,
        "cpsat_rounds": found.pricing_rounds,
        "listing_cpu_s": round(listing, 2),
        "cpu_s": round(time.process_time() - started, 2),
        **{f"{part}_cpu_s": round(seconds, 2) for part, seconds in found.cpu.items()},
    }
    if with_auto:
        started = time.process_time()
        answer = SOLVERS["auto"](position, graph, Limits())
        row["auto_cpu_s"] = round(time.process_time() - started, 2)
        row["auto_status"] = answer["status"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("fixtures", nargs="*", default=list(SLOW), help="stress fixture names (default: the slow four)")
    parser.add_argument("--work", type=float, default=1.0, help="CP-SAT deterministic time a kind a pricing round")
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--no-auto", action="store_true", help="leave out auto's row figures")
    args = parser.parse_args()
    warm_up()
    rows = [
        measure(ROOT / "fixtures" / f"{name}.json", args.work, args.iterations, not args.no_auto)
        for name in args.fixtures
    ]
    for row in rows:
        print(json.dumps(row))
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row.get(c, "")) for c in columns) + " |")


if __name__ == "__main__":
    main()
