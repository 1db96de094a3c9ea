"""The whole problem as one CP-SAT model: no route enumeration.

Enumerating every route explodes with long trains on big boards (diesels,
8-trains, express trains); this model grows only with the board. Per train
it chooses a path through the stop graph with ``AddCircuit``: one circuit
node per stop the train could reach, a self loop that skips the stop, and a
dummy node whose arcs mark where the route starts and ends. Each arc
between two stops stands for one of the connections joining them, and a
connection literal is shared with the track pieces it uses, so "no piece
twice" (inside a route and between routes) is one ``AddAtMostOne`` per
piece. Distance, groups, blocked and terminal stops, gauge, ``no_hex_twice``,
the choice of paying stops (express, ``n+m``, ``fill``), multipliers and
bonuses are linear constraints over the visit and pay literals (a train's
divisor, rounded down, is one division constraint), and the objective is
the company's revenue. The model that proves the whole maximum also takes
redundant constraints that tighten CP-SAT's relaxation
(:meth:`PathModel.tighten`). A train whose every route is listed (auto's
finished listings) may instead choose one of them, a literal a route
sharing the same at-most-one per piece: the relaxation of a choice is the
train's exact hull, a path's with a stop limit is not.

The model reads the same compiled arrays as every solver (the
:class:`~routecalc.graph.TrackGraph` and the per-train
:class:`~routecalc.scoring.TrainTable`), so the rules live in one place.
Its routes are re-checked and re-scored by the validator's own functions
before they are returned.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from .. import deadline
from ..errors import TimeLimitError
from ..graph import BLOCKED, END_ONLY, TOKEN, TrackGraph, compile_position
from ..model import Position
from ..routes import Route, answer
from ..rules import require_route_engine
from ..scoring import TrainTable, pay_table, train_tables
from ..validate import check_route, score_route
from . import sat
from .fast import TrainRoutes, ceiling, listed_routes, piece_rows
from .maxima import track_of

DUMMY = 0  # circuit node of route ends; stop k of a train is circuit node k + 1
#: CP-SAT settings: cuts on the circuits' linear relaxation, since proving
#: the bound is what takes time.
SAT_PARAMETERS = {"linearization_level": 2}
#: CP-SAT settings added for the whole model that proves the maximum (the
#: last step of :func:`solve_cpsat`): search for a set earning the
#: objective's upper bound first (use_objective_lb_search), so each step
#: finds one or lowers the bound; the bound of the capped whole model
#: comes close to the optimum early (stress-express: 1050 at 0.16 s, the
#: optimum 1040). Median deterministic time over seeds 0-15 and 16-31,
#: the whole model as auto builds it: stress-express 1.04 -> 0.78 and
#: 1.36 -> 0.85, stress-1867-two-d 2.85 -> 1.78 and 2.85 -> 1.91
#: (api.solve CPU at the default seed 1.74 -> 1.46 s and 2.73 -> 2.52 s).
#: Set for every model, it finds other single routes, so the whole model
#: starts from another set (stress-1867-two-d: 1290, not 1260), whose
#: proof it shortens less (2.91 -> 2.73 and 2.53 -> 2.19): the other
#: models keep the plain settings.
#: And an LP row (cut or constraint) inactive at 5 optimal LP solves in a
#: row leaves the LP (max_consecutive_inactive_count, default 100): the
#: proof's work is mostly LP solves (two-d: 111 conflicts, 18,000 LP
#: iterations over 1,095 cuts), and a smaller LP makes each cheaper. Over
#: seeds 0-23, the whole model as auto builds it, the same run: two-d's
#: median deterministic time 1.89 -> 0.88 (mean 2.22 -> 1.09, 23 of 24
#: faster), CPU median 1.70 -> 1.30 s (mean 1.88 -> 1.50: deterministic
#: time undercounts the rows taken in again); stress-express from the
#: first set 1020 1.05 -> 0.44 (CPU 0.98 -> 0.64 s), from the exchange's
#: 1040 (its proof alone, seeds 0-11) 0.23 -> 0.20 (CPU 0.36 -> 0.43 s).
#: 10 and 20 gain less (two-d 1.06 and 1.23, express from 1020 0.49 and
#: 0.68), 3 loses on express (0.46), 40 gains little (two-d 1.65).
#: And no Chvátal-Gomory cuts (add_cg_cuts): they cost LP work the proof
#: does not repay. The whole model as auto builds it, seeds 0-23:
#: two-d's median deterministic time 0.88 -> 0.77, CPU median 1.19 -> 0.94 s
#: (mean 1.39 -> 1.02, the slowest seed 4.3 -> 1.6 s); stress-express's
#: CPU 0.41 -> 0.34 s. Without the zero-half cuts as well: two-d 2.6 s.
#: Nor MIR cuts (add_mir_cuts), for the same reason: auto on the 67 of 200
#: dense boards (corpus boards with more track on 50-100 % of the cells,
#: long trains) that reach the whole model and took over 0.5 s, CPU summed
#: 106.5 -> 94.8 s at the default seed and 104.9 -> 94.2 s at seed 1 (44
#: and 45 boards faster), every answer the same; the whole model as auto
#: builds it, seeds 0-23: two-d's CPU median 1.16 -> 1.00 s, express's
#: 0.35 -> 0.30 s; the CP-SAT solver on the 500 corpus positions the same
#: (10.4 and 9.5 s -> 10.2 and 9.3 s). Without clique cuts as well: two-d
#: slower (1.08 s).
#: And every constraint in the LP from the start (add_lp_constraints_lazily
#: off), not only those the LP solution violates: with rows dropped after 5
#: inactive solves, the search no longer takes rows in batch by batch at
#: every node. The whole model as auto builds it, seeds 0-23: two-d's CPU
#: median 0.97 -> 0.75 s (mean 1.07 -> 0.85, the slowest seed 2.42 ->
#: 1.64 s), stress-express's mean 0.34 -> 0.31 s (the slowest 0.94 ->
#: 0.40 s); at the default seed two-d 1.28 -> 0.69 s, express 0.94 -> 0.26
#: s. Auto on the 67 dense boards, CPU summed: 83.2 -> 79.5 s at the
#: default seed (39 faster, 27 slower, the worst by 1.6 s), 83.6 -> 86.3 s
#: at seed 2, 83.3 -> 77.3 s at seed 3, answers the same. It pays only
#: with the inactive rows dropped (the two-d's D alone with this setting
#: and no other: 0.15 -> 0.31 s).
LP_PARAMETERS = {
    "max_consecutive_inactive_count": 5,
    "add_cg_cuts": False,
    "add_mir_cuts": False,
    "add_lp_constraints_lazily": False,
}
WHOLE_MODEL_PARAMETERS = {"use_objective_lb_search": True, **LP_PARAMETERS}
#: CP-SAT settings added for a whole model with trains chosen among listed
#: routes (``PathModel(listed=...)``): no probing in presolve, which tries
#: each of its thousands of route literals (three rounds of 0.7 s on a board
#: with a 4, 4, 6 and D, whose proof then takes 1.5 s in all).
LISTED_PARAMETERS = {"cp_model_probing_level": 0}
#: CP-SAT settings added for one kind of train solved alone
#: (:func:`single_train_maxima`): the whole model's LP settings, without its
#: search at the objective's bound. Each route's model is small and its
#: bound is the proof's cost, as in the whole model. Auto on the 67 dense
#: boards, CPU summed: 95.5 -> 86.5 s at the default seed (48 faster, 18
#: slower, the worst by 4.7 s), 113.1 -> 88.8 s at seed 2; on 24 boards with
#: three or four shorter trains reaching CP-SAT (10 s limit) 51.4 -> 44.3 s,
#: and one of them proven (1260) where it was not (1220 feasible); every
#: other answer the same. stress-1867-express-8 over twelve seeds: median
#: 0.62 -> 0.29 s, mean 1.16 -> 0.49 s; the two-d's D alone: median 0.13 ->
#: 0.09 s. The CP-SAT solver on the 500 corpus positions the same (12.7
#: and 13.1 s -> 11.7 and 13.0 s, all optimal).
SINGLE_MODEL_PARAMETERS = LP_PARAMETERS
#: CP-SAT deterministic time (about seconds of one idle core) at most for
#: asking whether the single-train maxima are earned together
#: (:func:`maxima_together`): the stress positions answer within 1.
TOGETHER_WORK = 2.0
#: Track terms (a connection's literal once per track piece it uses, summed
#: over the trains modelled as paths) above which no model is built: past
#: its time limit CP-SAT went on loading a dense 48-cell board's D (46,000
#: connections, 1.7 million terms) for 20 s after its presolve, which no
#: limit stops. The stress positions need 350-3,800 terms, the dense boards
#: of benchmarks/dense_boards.py at most 2,100.
MAX_TRACK_TERMS = 100_000


class ModelTooBig(Exception):
    """A model over :data:`MAX_TRACK_TERMS`: its trains are bounded by their
    single-train ceilings instead, and the routes known answer."""


@dataclass
class _TrainVars:
    """The literals of one train's path."""

    run: cp_model.IntVar
    stops: list[int]  # candidate stops, circuit node i + 1
    visit: dict[int, cp_model.IntVar] = field(default_factory=dict)
    pay: dict[int, cp_model.IntVar] = field(default_factory=dict)
    start: dict[int, cp_model.IntVar] = field(default_factory=dict)
    end: dict[int, cp_model.IntVar] = field(default_factory=dict)
    arc: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)  # stop -> stop
    use: dict[int, cp_model.IntVar] = field(default_factory=dict)  # connection
    revenue: cp_model.IntVar | None = None
    derived: list = field(default_factory=list)  # (var, fn(paid stop set) -> value) for hints
    listed: TrainRoutes | None = None  # a train chosen among listed routes: its list
    choice: list = field(default_factory=list)  # a literal per listed route


@dataclass
class Reach:
    """Where one train can go: its candidate stops and connections, and each
    stop's distance in stops from the nearest company token."""

    stops: list[int]
    conns: list[int]
    hops: dict[int, int]


def candidate_stops(graph: TrackGraph, table: TrainTable, taken: np.ndarray | None = None) -> Reach:
    """Stops and connections the train might use: right gauge and stop
    categories, none of the ``taken`` track pieces (mask words), and within
    its reach of a company token (every stop of a route is joined to the
    route's token stop by the route itself, whose inner stops neither block
    nor only end routes)."""
    no_hex_twice = bool(graph.position.options.get("no_hex_twice"))
    allowed = table.group_of[graph.category] >= 0
    usable = [
        c
        for c in range(len(graph.conn_a))
        if graph.conn_gauge[c] & table.gauge_bit
        and allowed[graph.conn_a[c]]
        and allowed[graph.conn_b[c]]
        and not (no_hex_twice and graph.conn_revisits[c])
        and (table.hex_limit < 0 or graph.conn_edges[c] <= table.hex_limit)
        and not (taken is not None and (graph.conn_mask[c] & taken).any())
    ]
    near: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for c in usable:
        a, b = int(graph.conn_a[c]), int(graph.conn_b[c])
        near[a].append((b, int(graph.conn_edges[c])))
        near[b].append((a, int(graph.conn_edges[c])))
    max_hops = min(int(table.visit.sum()), graph.num_stops) - 1
    sources = [s for s in range(graph.num_stops) if graph.flags[s] & TOKEN and allowed[s]]
    hops = _distances(sources, near, graph, lambda e: 1)
    reach = {s for s, h in hops.items() if h <= max_hops}
    if table.hex_limit >= 0:
        edges = _distances(sources, near, graph, lambda e: e)
        reach &= {s for s, e in edges.items() if e <= table.hex_limit}
    conns = [c for c in usable if graph.conn_a[c] in reach and graph.conn_b[c] in reach]
    return Reach(sorted(reach), conns, {s: hops[s] for s in reach})


def _distances(sources: list[int], near, graph: TrackGraph, weight) -> dict[int, int]:
    """Shortest distances from the sources, never passing through a stop that
    blocks or only ends routes (label correcting: a stop whose distance
    drops is queued again, so any whole weights >= 0 work)."""
    dist = {s: 0 for s in sources}
    queue = deque(sources)
    while queue:
        s = queue.popleft()
        if graph.flags[s] & (END_ONLY | BLOCKED) and not graph.flags[s] & TOKEN:
            continue
        for t, e in near[s]:
            d = dist[s] + weight(e)
            if d < dist.get(t, math.inf):
                dist[t] = d
                if weight(e) == 0:
                    queue.appendleft(t)
                else:
                    queue.append(t)
    return dist


class PathModel:
    """The CP-SAT model of the company's trains (all of them, or some).

    Identical trains are left interchangeable: asking them to take their
    routes in falling revenue order (as this model once did) doubled the
    deterministic time of stress-1867-two-d's proof (two D trains: median
    8.4 against 4.0 over eight CP-SAT seeds), and CP-SAT finds the
    trains' symmetry in presolve by itself."""

    def __init__(
        self,
        graph: TrackGraph,
        tables: list[TrainTable],
        trains: list[int] | None = None,
        taken: np.ndarray | None = None,
        listed: dict[int, TrainRoutes] | None = None,
    ):
        """``trains``: the trains modelled (default all); ``taken``: track
        pieces (mask words) that other routes already use; ``listed``: trains
        whose every route is listed (their kind's finished listing, best
        first), each modelled as a choice among its routes (:meth:`_choice`)
        instead of a path."""
        self.graph = graph
        self.taken = taken
        self.tables = tables
        self.trains = list(range(len(tables))) if trains is None else list(trains)
        self.model = cp_model.CpModel()
        self.bonuses = graph.position.rules.bonuses(graph.position)
        self.vars: dict[int, _TrainVars] = {}
        self.ceiling = 0  # no route set earns more (the revenue variables' upper ends)
        self.demands = False  # some train must earn a given revenue (demand_train)
        pieces: dict[int, list] = defaultdict(list)
        on_piece: dict[int, dict[int, np.ndarray]] = {}  # a listing's piece -> rows, by id
        reaches = {t: candidate_stops(graph, tables[t], taken) for t in self.trains if not (listed and t in listed)}
        terms = sum(len(graph.conn_pieces[c]) for reach in reaches.values() for c in reach.conns)
        if terms > MAX_TRACK_TERMS:
            raise ModelTooBig(f"{terms:,} track terms, over the {MAX_TRACK_TERMS:,} a CP-SAT model is given")
        for t in self.trains:
            if listed and t in listed:
                tv = self._choice(t, listed[t])
                if id(listed[t]) not in on_piece:  # identical trains share one list
                    on_piece[id(listed[t])] = piece_rows(listed[t].mask)
                for p, rows in on_piece[id(listed[t])].items():
                    pieces[p].extend(tv.choice[k] for k in rows)
            else:
                tv = self._train(t, reaches[t])
                for c, lit in tv.use.items():
                    for p in graph.conn_pieces[c]:
                        pieces[p].append(lit)
            self.vars[t] = tv
        for lits in pieces.values():
            if len(lits) > 1:
                self.model.add_at_most_one(lits)
        self.objective = sum(tv.revenue for tv in self.vars.values())
        self.model.maximize(self.objective)

    # -- building ---------------------------------------------------------
    def _train(self, t: int, reach: Reach) -> _TrainVars:
        m, graph, table = self.model, self.graph, self.tables[t]
        stops, conns = reach.stops, reach.conns
        tv = _TrainVars(run=m.new_bool_var(f"run{t}"), stops=stops)
        if not stops:
            m.add(tv.run == 0)
        node = {s: i + 1 for i, s in enumerate(stops)}
        arcs = [(DUMMY, DUMMY, tv.run.negated())]
        ticker = deadline.Ticker("building the CP-SAT model", every=64)
        for s in stops:
            ticker.tick()
            v = tv.visit[s] = m.new_bool_var(f"v{t}_{s}")
            tv.start[s] = m.new_bool_var(f"start{t}_{s}")
            tv.end[s] = m.new_bool_var(f"end{t}_{s}")
            arcs += [(node[s], node[s], v.negated()), (DUMMY, node[s], tv.start[s]), (node[s], DUMMY, tv.end[s])]
            m.add_implication(v, tv.run)
            m.add(tv.start[s] + tv.end[s] <= 1)  # at least two stops
            if graph.flags[s] & (END_ONLY | BLOCKED):
                m.add(tv.start[s] + tv.end[s] >= v)
        between: dict[tuple[int, int], list[int]] = defaultdict(list)
        for c in conns:
            ticker.tick()
            tv.use[c] = m.new_bool_var(f"u{t}_{c}")
            between[int(graph.conn_a[c]), int(graph.conn_b[c])].append(c)
        for (a, b), cs in between.items():
            ab = tv.arc[a, b] = m.new_bool_var(f"a{t}_{a}_{b}")
            ba = tv.arc[b, a] = m.new_bool_var(f"a{t}_{b}_{a}")
            arcs += [(node[a], node[b], ab), (node[b], node[a], ba)]
            m.add(sum(tv.use[c] for c in cs) == ab + ba)
        m.add_circuit(arcs)
        # The route's start precedes its end in stop order: each route once.
        m.add(sum(node[s] * tv.start[s] for s in stops) + 1 <= sum(node[s] * tv.end[s] for s in stops)).only_enforce_if(
            tv.run
        )
        self._limits(tv, table, reach)
        self._payment(t, tv, table)
        return tv

    def _choice(self, t: int, found: TrainRoutes) -> _TrainVars:
        """Train ``t`` as one of its listed routes or none: a literal per
        route. Its LP is the hull of the train's routes, far tighter than a
        path's: on dense boards with a 4, 5 and 6 listed in a few thousand
        routes beside a D that lists too many, the whole model proves the
        optimum in a fraction of the time (docs/architecture.md)."""
        m = self.model
        tv = _TrainVars(run=m.new_bool_var(f"run{t}"), stops=[], listed=found)
        tv.choice = [m.new_bool_var(f"r{t}_{k}") for k in range(len(found.revenue))]
        m.add(sum(tv.choice) == tv.run)
        top = int(found.revenue[0]) if len(found.revenue) else 0
        tv.revenue = m.new_int_var(0, top, f"rev{t}")
        m.add(tv.revenue == sum(int(r) * x for r, x in zip(found.revenue, tv.choice)))
        self.ceiling += top
        return tv

    def tighten(self) -> None:
        """Redundant constraints, true of every route set, that CP-SAT's
        relaxation misses: they shorten the proof of a maximum
        (stress-1867-two-d answered: mean deterministic time 4.48 -> 3.08
        over eighteen CP-SAT seeds, 16 of them faster; stress-express, whose
        proof is mostly the search for its optimum, unchanged: 2.63 -> 2.58),
        but they slow the search for a set that earns given revenues (the
        demand of :func:`maxima_together` on stress-1867-express-8 ran out
        of its work on two seeds of six), so only the whole model takes them.

        - A route's ends are among its stops, two of them at least: a stop
          starts or ends it only if visited, and not both (``<= visit``,
          where the model says ``<= 1``).
        - :meth:`_exits_shared`.
        """
        m = self.model
        for tv in self.vars.values():
            for s in tv.stops:
                m.add(tv.start[s] + tv.end[s] <= tv.visit[s])
        self._exits_shared()

    def _exits_shared(self) -> None:
        """The trains' routes at a stop use no more connections there than the
        stop has exits: a route passing through a stop uses two of the
        connections that meet there, one ending there uses one, and no two
        of them (in one route or two) share the track piece they leave the
        stop by. CP-SAT's first relaxation of stress-1867-two-d's two D
        trains, without the single-train caps, falls from 1900 to 1770 with
        it (the optimum is 1490)."""
        graph, m = self.graph, self.model
        exits: dict[int, set[int]] = defaultdict(set)
        for tv in self.vars.values():
            for c in tv.use:
                exits[int(graph.conn_a[c])].add(graph.conn_pieces[c][0])
                exits[int(graph.conn_b[c])].add(graph.conn_pieces[c][-1])
        for s, pieces in exits.items():
            routes = [tv for tv in self.vars.values() if s in tv.visit]
            if len(pieces) < 2 * len(routes) and len(routes) > 1:  # else two per route always fit
                m.add(sum(2 * tv.visit[s] - tv.start[s] - tv.end[s] for tv in routes) <= len(pieces))

    def _limits(self, tv: _TrainVars, table: TrainTable, reach: Reach) -> None:
        m, graph, conns = self.model, self.graph, reach.conns
        by_group: dict[int, list[int]] = defaultdict(list)
        for s in tv.stops:
            by_group[int(table.group_of[graph.category[s]])].append(s)
        for g, members in by_group.items():
            if len(members) > table.visit[g]:
                m.add(sum(tv.visit[s] for s in members) <= int(table.visit[g]))
        for bit in range(len(graph.group_names)):
            members = [s for s in tv.stops if int(graph.groups[s]) >> bit & 1]
            if len(members) > 1:
                m.add_at_most_one(tv.visit[s] for s in members)
        if table.hex_limit >= 0:
            m.add(sum(int(graph.conn_edges[c]) * tv.use[c] for c in conns) <= table.hex_limit)
        if graph.position.options.get("no_hex_twice"):
            self._cells_once(tv, conns)
        if table.visit.sum() < len(tv.stops):
            self._levels(tv, reach)

    def _levels(self, tv: _TrainVars, reach: Reach) -> None:
        """A route reaching a stop ``d`` stops away from every token visits a
        stop at each distance 1..d-1 on the way there (distances along a
        route change by at most one a step): with a stop limit, far stops
        cost the stops between. Redundant, but it tightens the LP bound."""
        level: dict[int, list] = defaultdict(list)
        for s in tv.stops:
            level[reach.hops[s]].append(tv.visit[s])
        ticker = deadline.Ticker("building the CP-SAT model", every=16)
        for s in tv.stops:
            for d in range(1, reach.hops[s]):
                ticker.tick()
                self.model.add(sum(level[d]) >= tv.visit[s])

    def _cells_once(self, tv: _TrainVars, conns: list[int]) -> None:
        """Each cell entered at most once: its stops on the route, plus the
        connections passing through it, minus connections that stay inside
        it (their two stops share one entry)."""
        graph = self.graph
        entries: dict[str, list] = defaultdict(list)
        inside: dict[str, list] = defaultdict(list)
        for s in tv.stops:
            entries[graph.cell_ids[graph.cell[s]]].append(tv.visit[s])
        for c in conns:
            seq = graph.conn_cell_seq[c]
            if len(seq) == 1:
                inside[seq[0]].append(tv.use[c])
            for cell in seq[1:-1]:
                entries[cell].append(tv.use[c])
        for cell, items in entries.items():
            if len(items) > 1:
                self.model.add(sum(items) - sum(inside[cell]) <= 1)

    def _payment(self, t: int, tv: _TrainVars, table: TrainTable) -> None:
        m, graph = self.model, self.graph
        cat_group = table.group_of[graph.category]
        if table.train.pays_every_stop:
            tv.pay = tv.visit
        else:
            counts: dict[int, list] = defaultdict(list)
            for s in tv.stops:
                p = tv.pay[s] = m.new_bool_var(f"p{t}_{s}")
                m.add_implication(p, tv.visit[s])
                counts[int(cat_group[s])].append(p)
            overflow = []
            for g, lits in sorted(counts.items()):
                pay = int(table.pay[g])
                if table.train.fill and g != 0 and len(lits) > pay:
                    extra = m.new_int_var(0, len(lits), f"over{t}_{g}")
                    m.add(extra >= sum(lits) - pay)
                    tv.derived.append(
                        (extra, lambda paid, g=g, pay=pay: max(0, sum(1 for s in paid if cat_group[s] == g) - pay))
                    )
                    overflow.append(extra)
                elif len(lits) > pay:
                    m.add(sum(lits) <= pay)
            if overflow:  # other groups' stops paid in the slots the first group's visits leave unused
                first = [tv.visit[s] for s in tv.stops if cat_group[s] == 0]
                pay0 = int(table.pay[0])
                if len(first) <= pay0 or int(table.visit[0]) <= pay0:
                    m.add(sum(first) + sum(overflow) <= pay0)
                else:
                    spare = m.new_int_var(0, pay0, f"spare{t}")
                    m.add_max_equality(spare, [0, pay0 - sum(first)])
                    m.add(sum(overflow) <= spare)
        m.add(sum(tv.pay[s] for s in tv.stops if graph.flags[s] & TOKEN) >= tv.run)

        weight = table.worth * table.group_mult[np.maximum(cat_group, 0)]
        stops_value = sum(int(weight[s]) * tv.pay[s] for s in tv.stops)
        multiplied, plain = self._bonuses(t, tv)
        train = table.train
        bonus_top = sum(b.amount * (len(b.sets[0]) if b.type == "visit" else 1) for b in self.bonuses)
        top = train.multiplier * (sum(max(0, int(weight[s])) for s in tv.stops) + bonus_top) + bonus_top
        raw = train.multiplier * (stops_value + multiplied) + plain
        tv.revenue = m.new_int_var(0, train.payout(int(top)), f"rev{t}")
        self.ceiling += train.payout(int(top))
        if train.divisor == 1:
            m.add(tv.revenue == train.factor * raw)
        else:  # Train.payout: floor(raw / divisor) * factor
            raw_var = m.new_int_var(0, int(top), f"raw{t}")
            m.add(raw_var == raw)
            share = m.new_int_var(0, int(top) // train.divisor, f"share{t}")
            m.add_division_equality(share, raw_var, train.divisor)
            m.add(tv.revenue == train.factor * share)

    def _bonuses(self, t: int, tv: _TrainVars) -> tuple:
        """Bonus revenue (multiplied, plain) as expressions of the pay literals."""
        m, graph = self.model, self.graph
        in_cell: dict[str, list] = defaultdict(list)
        for s in tv.stops:
            in_cell[graph.cell_ids[graph.cell[s]]].append(tv.pay[s])
        paid_in: dict[str, cp_model.IntVar] = {}

        def cell_paid(cell: str):
            if cell not in in_cell:
                return None
            if cell not in paid_in:
                y = paid_in[cell] = m.new_bool_var(f"cell{t}_{cell}")
                m.add_max_equality(y, in_cell[cell])
                tv.derived.append(
                    (y, lambda paid, cell=cell: int(any(graph.cell_ids[graph.cell[s]] == cell for s in paid)))
                )
            return paid_in[cell]

        multiplied, plain = 0, 0
        for k, bonus in enumerate(self.bonuses):
            if bonus.type == "visit":
                amount = bonus.amount * sum(y for y in map(cell_paid, sorted(bonus.sets[0])) if y is not None)
            else:
                per_set = [[y for y in map(cell_paid, sorted(cells)) if y is not None] for cells in bonus.sets]
                if not all(per_set):
                    continue  # a set this train cannot reach: never earned
                got = m.new_bool_var(f"bonus{t}_{k}")
                any_of = []
                for j, lits in enumerate(per_set):
                    any_of.append(m.new_bool_var(f"set{t}_{k}_{j}"))
                    m.add_max_equality(any_of[-1], lits)
                    tv.derived.append(
                        (
                            any_of[-1],
                            lambda paid, cells=bonus.sets[j]: int(
                                any(graph.cell_ids[graph.cell[s]] in cells for s in paid)
                            ),
                        )
                    )
                m.add_min_equality(got, any_of)
                tv.derived.append(
                    (
                        got,
                        lambda paid, sets=bonus.sets: int(
                            all(any(graph.cell_ids[graph.cell[s]] in cells for s in paid) for cells in sets)
                        ),
                    )
                )
                amount = bonus.amount * got
            if bonus.multiplied:
                multiplied += amount
            else:
                plain += amount
        return multiplied, plain

    # -- hints and bounds ---------------------------------------------------
    def bound_train(self, t: int, most: int) -> None:
        """Train ``t`` earns at most ``most`` (a known single-train maximum)."""
        self.model.add(self.vars[t].revenue <= most)

    def demand_train(self, t: int, revenue: int) -> None:
        """Train ``t`` earns exactly ``revenue``: the model may then have no
        solution, which :meth:`solve` reports as ``infeasible``. Demand no
        less than an upper bound on the train's maximum: where the model
        chooses which stops to pay (express trains), a demand below it may
        be met by a route paid less than it earns, which :meth:`solve`
        rejects as a score that differs from the validator's."""
        self.model.add(self.vars[t].revenue == revenue)
        self.demands = True

    def at_most(self, revenue: int) -> None:
        """No route set earns more than ``revenue`` (a known upper bound)."""
        self.model.add(self.objective <= revenue)

    def at_least(self, revenue: int) -> None:
        """A route set earning ``revenue`` is known: ask for no less."""
        self.model.add(self.objective >= revenue)

    def hint(self, routes: list[Route]) -> None:
        """Start the search from known routes (one per train at most)."""
        by_train = {r.train: r for r in routes}
        for t, tv in self.vars.items():
            route = by_train.get(t)
            if tv.listed is not None:
                self._hint_choice(tv, route)
                continue
            stops = route.stops if route else []
            if stops and stops[0] > stops[-1]:
                stops = stops[::-1]
            on = set(stops)
            paid = set(route.paid) if route else set()
            conns = set(route.conns) if route else set()
            pairs = set(zip(stops, stops[1:]))
            m = self.model
            m.add_hint(tv.run, bool(route))
            for s in tv.stops:
                m.add_hint(tv.visit[s], s in on)
                m.add_hint(tv.start[s], bool(stops) and s == stops[0])
                m.add_hint(tv.end[s], bool(stops) and s == stops[-1])
                if tv.pay is not tv.visit:
                    m.add_hint(tv.pay[s], s in paid)
            for (a, b), lit in tv.arc.items():
                m.add_hint(lit, (a, b) in pairs)
            for c, lit in tv.use.items():
                m.add_hint(lit, c in conns)
            for var, fn in tv.derived:
                m.add_hint(var, fn(paid))
            m.add_hint(tv.revenue, route.revenue if route else 0)

    def _hint_choice(self, tv: _TrainVars, route: Route | None) -> None:
        """Hint the listed route with the route's track (kept once per
        track, the richest), or none."""
        assert tv.listed is not None
        row = -1
        if route is not None:
            same = np.flatnonzero((tv.listed.mask == track_of(self.graph, route)).all(axis=1))
            row = int(same[0]) if len(same) else -1
        self.model.add_hint(tv.run, row >= 0)
        for k, x in enumerate(tv.choice):
            self.model.add_hint(x, k == row)
        self.model.add_hint(tv.revenue, int(tv.listed.revenue[row]) if row >= 0 else 0)

    # -- solving ------------------------------------------------------------
    def solve(
        self, time_limit: float | None = None, progress=None, work: float | None = None, settings: dict | None = None
    ) -> tuple[str, list[Route], int, dict]:
        """(status, scored routes, upper bound, CP-SAT statistics); the status
        is ``infeasible`` when no route set meets :meth:`demand_train`. ``work``:
        CP-SAT's deterministic time (a count of work, about seconds on an
        idle machine) that the search may take, the same on any machine;
        ``time_limit`` only stops it. ``settings``: CP-SAT parameters on top
        of ``SAT_PARAMETERS`` (``WHOLE_MODEL_PARAMETERS``)."""
        solver = sat.new_solver()
        for key, value in {**SAT_PARAMETERS, **(settings or {})}.items():
            setattr(solver.parameters, key, value)
        time_limit = deadline.clip(time_limit)  # the ortools import and the model build count too
        if time_limit is not None:
            solver.parameters.max_time_in_seconds = max(0.0, float(time_limit))
        if work is not None:
            solver.parameters.max_deterministic_time = float(work)
        callback = _Progress(progress) if progress else None
        running = deadline.current()
        if running is None:
            code = sat.solve(solver, self.model, callback)
        else:
            with running.on_cancel(solver.stop_search):
                code = sat.solve(solver, self.model, callback)
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            routes = [self._route(t, tv, solver) for t, tv in self.vars.items() if solver.boolean_value(tv.run)]
        elif code == cp_model.UNKNOWN or (code == cp_model.INFEASIBLE and self.demands):
            routes = []
        else:
            raise RuntimeError(
                f"CP-SAT answered {solver.status_name(code)} on a model that always "
                f"has a solution (no routes): {solver.solution_info()}"
            )
        revenue = _revenue(routes)
        if code == cp_model.INFEASIBLE:
            status, bound = "infeasible", -1  # no route set earns what was demanded
        elif code == cp_model.OPTIMAL:
            status, bound = "optimal", revenue
            if revenue != round(solver.objective_value):
                raise RuntimeError(
                    f"CP-SAT optimum {solver.objective_value} differs from the "
                    f"validator's score {revenue} of its routes"
                )
        else:
            status = "feasible"
            # Without a solution (UNKNOWN) CP-SAT still reports its bound once
            # its presolve has finished; stopped before that, it reports 0, no
            # bound (the model always has a solution: no routes).
            best = solver.best_objective_bound
            if code == cp_model.UNKNOWN and best <= 0:
                best = math.inf
            bound = max(revenue, math.floor(best + 1e-6) if math.isfinite(best) else self.ceiling)
        stats = {
            "cpsat_status": solver.status_name(code),
            "branches": solver.num_branches,
            "conflicts": solver.num_conflicts,
            "workers": solver.parameters.num_workers,
            "variables": len(self.model.proto.variables),
            "constraints": len(self.model.proto.constraints),
        }
        return status, routes, bound, stats

    def _route(self, t: int, tv: _TrainVars, solver: cp_model.CpSolver) -> Route:
        """Read train t's path (or listed route) and score it with the
        validator's functions."""
        graph = self.graph
        if tv.listed is not None:
            k = next(k for k, x in enumerate(tv.choice) if solver.boolean_value(x))
            return listed_routes([(t, k)], [tv.listed] * (t + 1), graph)[0]  # train t's list
        nxt = {a: b for (a, b), lit in tv.arc.items() if solver.boolean_value(lit)}
        stop = next(s for s in tv.stops if solver.boolean_value(tv.start[s]))
        stops = [stop]
        conns = []
        while stop in nxt:
            following = nxt[stop]
            c = next(
                c for c in graph.connections_between(stop, following) if c in tv.use and solver.boolean_value(tv.use[c])
            )
            stops.append(following)
            conns.append(c)
            stop = following
        route = Route(t, stops, conns)
        check_route(stops, conns, self.tables[t], graph)
        return score_route(route, self.tables[t], graph)


class _Progress(cp_model.CpSolverSolutionCallback):
    """Reports the share of the bound reached so far at each new solution."""

    def __init__(self, report):
        super().__init__()
        self.report = report

    def on_solution_callback(self) -> None:
        bound = self.best_objective_bound
        self.report(min(1.0, self.objective_value / bound) if bound > 0 else 1.0)


def identical_trains(tables: list[TrainTable]) -> list[list[int]]:
    """Train indices grouped by kind: same train and same stop values."""
    kinds: list[list[int]] = []
    for t, table in enumerate(tables):
        for members in kinds:
            first = tables[members[0]]
            if first.train == table.train and np.array_equal(first.worth, table.worth):
                members.append(t)
                break
        else:
            kinds.append([t])
    return kinds


def single_train_maxima(
    graph: TrackGraph,
    tables: list[TrainTable],
    work: float | None,
    known: dict[int, int],
    deadline: float | None = None,
    found: list[Route] | None = None,
) -> tuple[dict[int, int], list[Route]]:
    """Each kind of train solved alone, unless ``known`` holds its maximum
    already: (upper bound per train, the best route of each kind solved).
    Where the search stops short of its bound, a route earning the bound is
    demanded (:func:`reach_bound`). ``work``: CP-SAT deterministic time for
    each kind's search and again for its demand, shared among the kinds;
    ``deadline``: a ``time.perf_counter()`` value that stops them.
    ``found``: routes known (auto's branch and bound's); a kind's richest
    is its search's floor, which asks for no less: then mostly the bound
    is left to prove (stress-1867-two-d's D above its 840, twelve CP-SAT
    seeds: 0.61 -> 0.28 of deterministic time in all). It is not the
    search's hint: hinted with its 500 route, stress-1867-express-8's 8
    took 0.36 -> 1.40 (its floor alone 0.47), and at two of eight seeds
    ran out of its work, which cost auto's whole answer seconds (seed 7:
    4.0 s, 0.4 s with the floor alone)."""
    bounds = dict(known)
    kinds = []
    for members in identical_trains(tables):
        given = [known[t] for t in members if t in known]  # one train's maximum is its kind's
        if given:
            bounds.update({t: min(given) for t in members if t not in known})
        else:
            kinds.append(members)
    best: list[Route] = []
    for members in kinds:
        share = None if work is None else work / len(kinds)
        try:
            model = PathModel(graph, tables, members[:1])
            start = max((r for r in found or [] if r.train in members), key=lambda r: r.revenue, default=None)
            if start is not None:
                model.at_least(start.revenue)
            _, routes, bound, _ = model.solve(_until(deadline), work=share, settings=SINGLE_MODEL_PARAMETERS)
            if bound > _revenue(routes):
                reached, bound = reach_bound(graph, tables, members[0], bound, share, deadline)
                routes = reached or routes
        except (TimeLimitError, ModelTooBig):
            _unless_cancelled()
            routes, bound = [], train_ceiling(graph, tables[members[0]])
        bounds.update({t: bound for t in members})
        best += routes
    return bounds, best


def train_ceiling(graph: TrackGraph, table: TrainTable) -> int:
    """What the train could earn at most if every stop it may visit paid its best."""
    return ceiling(pay_table(table, graph, graph.position.rules.bonuses(graph.position)))


def _unless_cancelled() -> None:
    """Raise TimeLimitError if the request was cancelled (the client went
    away): only a limit that ran out, or a model too big, leaves an answer
    to give."""
    running = deadline.current()
    if running is not None and running.cancelled:
        running.check("building a CP-SAT model")


def reach_bound(
    graph: TrackGraph, tables: list[TrainTable], t: int, bound: int, work: float | None, deadline: float | None = None
) -> tuple[list[Route], int]:
    """Train ``t`` alone demanded its upper ``bound``: (a route earning it,
    the bound); when none does, (no route, the bound less one); when
    ``work`` or the ``deadline`` ran out first, (no route, the bound).
    Maximising alone may not find a route a demand finds at once:
    stress-1867-express-8's 8 (towns free, its best route passes 25 of
    them) earns 140 after 2.0 of deterministic time with its bound 560
    proven at once, where demanding 560 finds its route in 0.07 s."""
    model = PathModel(graph, tables, [t])
    model.demand_train(t, bound)
    status, routes, _, _ = model.solve(_until(deadline), work=work)
    if status == "infeasible":
        return [], bound - 1
    return routes, bound


def one_by_one(
    graph: TrackGraph,
    tables: list[TrainTable],
    first: list[Route],
    caps: dict[int, int],
    work: float | None,
    deadline: float | None = None,
) -> list[Route]:
    """A first route set: the richest of the ``first`` routes, then each
    further train's best route on the track left over (trains by falling
    cap), or its richest ``first`` route that fits there when that earns
    more (the search stopped by the clock finds none); ``work`` and
    ``deadline`` as for :func:`single_train_maxima`."""
    chosen = sorted(first, key=lambda r: -r.revenue)[:1]
    order = sorted((t for t in caps if not any(r.train == t for r in chosen)), key=lambda t: -caps[t])
    for t in order:
        share = None if work is None else work / len(order)
        taken = track_of(graph, *chosen)
        _, routes, _, _ = PathModel(graph, tables, [t], taken).solve(_until(deadline), work=share)
        fits = [r for r in first if r.train == t and not (track_of(graph, r) & taken).any()]
        chosen += sorted(routes + fits, key=lambda r: -r.revenue)[:1]
    return chosen


def maxima_together(
    graph: TrackGraph, tables: list[TrainTable], caps: dict[int, int], work: float, deadline: float | None = None
) -> tuple[str, list[Route]]:
    """Whether every train can earn its cap (its single-train maximum, or a
    bound on it) at once, on track-disjoint routes: ``optimal`` with those
    routes (no set earns more), ``infeasible`` (every set earns less than
    the caps' sum), or ``feasible`` with no routes when ``work`` (CP-SAT
    deterministic time) or the ``deadline`` ran out first. Demanding each
    train's revenue is a far smaller search than maximising the total: on
    the stress positions it answers in a fraction of the time the whole
    model takes to prove its bound."""
    model = PathModel(graph, tables)
    for t, most in caps.items():
        model.demand_train(t, most)
    status, routes, _, _ = model.solve(_until(deadline), work=work)
    if routes and _revenue(routes) == sum(caps.values()):
        return "optimal", routes
    return status, []


def _proven(caps: dict[int, int], maxima: dict[int, int], routes: list[Route], tables: list[TrainTable]) -> bool:
    """Whether every train's cap is its maximum: known, or earned by one of
    the ``routes`` of its kind (a route earning an upper bound proves it)."""
    earned: dict[int, int] = {}
    for members in identical_trains(tables):
        top = max((r.revenue for r in routes if r.train in members), default=-1)
        earned.update({t: top for t in members})
    return all(t in maxima or earned[t] >= cap for t, cap in caps.items())


def _revenue(routes: list[Route]) -> int:
    """What a route set earns."""
    return sum(r.revenue for r in routes)


def _together_work(share: float | None, most: float) -> float:
    """CP-SAT deterministic time for :func:`maxima_together`: at most
    ``most``, and at most a step's ``share`` of the time limit."""
    return most if share is None else min(share, most)


def _until(deadline: float | None) -> float | None:
    """Seconds left before ``deadline`` (a ``time.perf_counter()`` value)."""
    return None if deadline is None else max(0.01, deadline - time.perf_counter())


def _answer(
    graph: TrackGraph, tables: list[TrainTable], routes: list[Route], started: float, bound: int, **stats
) -> dict:
    """CP-SAT's answer: optimal when the routes earn ``bound`` (a bound below
    their revenue is raised to it)."""
    revenue = _revenue(routes)
    return answer(graph, tables, routes, started, solver="cpsat", bound=max(bound, revenue), **stats)


def solve_cpsat(
    position: Position,
    graph: TrackGraph | None = None,
    *,
    time_limit: float | None = None,
    progress=None,
    hint: list[Route] | None = None,
    known_bound: int | None = None,
    known_maxima: dict[int, int] | None = None,
    known_caps: dict[int, int] | None = None,
    known_routes: list[Route] | None = None,
    prove_maxima: Callable[[list[int]], tuple[dict[int, int], list[Route]]] | None = None,
    first_set: bool = False,
    together_work: float = TOGETHER_WORK,
    listed: dict[int, TrainRoutes] | None = None,
) -> dict:
    """Best route set by CP-SAT.

    With several trains, each kind of train is first solved alone (unless
    ``known_maxima`` gives its maximum): the maximum caps that train in the
    whole model. The richest single route and then each further train's
    best route on the track left over make a first solution, often already
    the optimum, which the caps then prove. Short of the caps, where some
    cap is a bound only, a model demanding each train's cap
    (:func:`maxima_together`, a bounded amount of work) finds a set that
    earns them all, proven optimal, or shows that none does, which lowers
    the bound. Where every cap is a proven maximum, the whole model's
    search at the objective's upper bound asks for their sum first, so it
    is not demanded apart: on 67 boards made from the corpus (more track,
    long trains) that took auto over 0.5 s, the CPU summed over three
    CP-SAT seeds went 335 -> 309 s, stress-1867-two-d's median (twelve
    seeds) 1.50 -> 1.28 s, stress-express's 0.59 -> 0.49 s. ``hint``
    routes (a known route
    set) seed the search and ``known_bound`` caps the total;
    ``known_routes`` (single routes, a train's each, not a set: the best
    routes found by searches of one train alone) are candidates for the
    first solution beside the routes of the trains solved alone here:
    CP-SAT may take far longer to find such a route than the search that
    proved its maximum took (stress-1828-d-8e: 12 s for the D's 950 with
    the 950 known).

    Under a time limit the first steps get a quarter of it each in CP-SAT's
    deterministic time (work, not seconds, so the path taken is the same on
    a loaded machine); the clock only stops them at the time limit.

    ``known_caps`` (every train's, its maximum or an upper bound on it)
    cap the total, and when some are bounds only they are demanded together
    first: a set that earns them all is optimal without proving each
    train's maximum alone (stress-1867-express-8: CP-SAT's bounds after a
    short search of each train alone, 820 and 560, are earned together).
    Where they are not, ``prove_maxima`` (the trains whose maximum is still
    unknown -> the maxima it proves, and the best routes it found) is asked
    before CP-SAT solves those trains alone: a caller's search that costs
    more than the demand (auto's branch and bound: stress-1828-d-8e's 8E
    took 2.5 s with an earlier bound, where CP-SAT alone takes 6 s).
    ``first_set``: the ``hint`` is the first set already (found by the
    caller's search of the track left), so none is searched here.
    ``together_work``: CP-SAT deterministic time for each demand of the
    caps together (``TOGETHER_WORK``). ``listed``: trains the whole model
    chooses among their listed routes (finished listings, see
    :class:`PathModel`); the ``known_caps`` are then taken as they are,
    neither demanded together nor proven train by train first.
    """
    require_route_engine(position.rules)
    started = time.perf_counter()
    graph = graph or compile_position(position)
    tables = train_tables(graph)
    hint = list(hint or [])
    caps: dict[int, int] = {}
    if listed and known_caps:
        # Trains choosing among listed routes: the whole model proves more for
        # less than a train alone proving its cap first (a D's maximum took 5.5
        # s beside a listed 5 and 6; the whole model alone 1 s).
        known_maxima = {**known_caps, **(known_maxima or {})}
    try:
        share = None if time_limit is None else time_limit / 4
        ends_at = None if time_limit is None else started + time_limit
        if known_caps:
            total = sum(known_caps.values())
            known_bound = total if known_bound is None else min(known_bound, total)
            if total <= _revenue(hint):  # the seed earns every cap: no train's maximum is left to prove
                return _answer(graph, tables, hint, started, total, proof="single-train bounds, earned by the seed")
        if len(tables) > 1 and known_caps and len(known_caps) > len(known_maxima or {}):
            together, routes = maxima_together(graph, tables, known_caps, _together_work(share, together_work), ends_at)
            if together == "optimal":
                return _answer(graph, tables, routes, started, total, proof="single-train bounds, reached together")
            if together == "infeasible":
                known_bound = min(known_bound, total - 1)
        unknown = [t for t in range(len(tables)) if t not in (known_maxima or {})]
        if len(tables) > 1 and prove_maxima is not None and unknown:
            proven, found = prove_maxima(unknown)
            known_maxima = {**(known_maxima or {}), **proven}
            known_routes = list(known_routes or []) + found
        if len(tables) > 1:
            caps, singles = single_train_maxima(graph, tables, share, known_maxima or {}, ends_at, known_routes)
            singles += known_routes or []
            if sum(caps.values()) > _revenue(hint) and not first_set:
                first = one_by_one(graph, tables, singles + hint, caps, share, ends_at)
                if _revenue(first) > _revenue(hint):
                    hint = first
            proof = "single-train maxima"
            if sum(caps.values()) > _revenue(hint) and not _proven(caps, known_maxima or {}, singles, tables):
                together, routes = maxima_together(graph, tables, caps, _together_work(share, together_work), ends_at)
                if together == "optimal":
                    hint, proof = routes, "single-train maxima, reached together"
                elif together == "infeasible":
                    below = sum(caps.values()) - 1
                    known_bound = below if known_bound is None else min(known_bound, below)
            if sum(caps.values()) <= _revenue(hint):
                return _answer(graph, tables, hint, started, sum(caps.values()), proof=proof)
        left = None if time_limit is None else max(0.01, time_limit - (time.perf_counter() - started))
        model = PathModel(graph, tables, listed=listed)
        model.tighten()
        if hint:
            model.hint(hint)
            model.at_least(_revenue(hint))
        for t, most in caps.items():
            model.bound_train(t, most)
        if known_bound is not None:
            model.at_most(known_bound)
        settings = {**WHOLE_MODEL_PARAMETERS, **LISTED_PARAMETERS} if listed else WHOLE_MODEL_PARAMETERS
        status, routes, bound, stats = model.solve(left, progress, settings=settings)
        if _revenue(hint) > _revenue(routes):
            routes = hint  # the solver ran out of time before it found the hinted set again
        if caps:
            bound = min(bound, sum(caps.values()))
        if known_bound is not None:
            bound = min(bound, known_bound)
        if listed:  # the trains that chose among listed routes, by name: their routes
            stats["listed_routes"] = {tables[t].train.name: len(found.revenue) for t, found in sorted(listed.items())}
        return _answer(graph, tables, routes, started, bound, **stats, proof="whole model")
    except (TimeLimitError, ModelTooBig) as stopped:
        _unless_cancelled()
        # the limit ran out while a model was built, or it was too big to build: the best routes
        # known, and a true bound
        bounds = [sum(train_ceiling(graph, table) for table in tables)]
        bounds += [known_bound] if known_bound is not None else []
        bounds += [sum(caps.values())] if len(caps) == len(tables) else []
        why = "the time limit stopped the model build" if isinstance(stopped, TimeLimitError) else str(stopped)
        return _answer(graph, tables, hint, started, min(bounds), proof=why)
