"""18C2C "D": the destination or transcontinental proof (``options.connect``).

Can one of the company's trains run a valid route with a stop in a ``from``
cell and a stop in a ``to`` cell? The answer's ``connect`` part is the
shortest such route that a train runs folded, else one a D train runs
unfolded (:func:`routecalc.rules.c2c.unfolded`), else none; see
:mod:`routecalc.rules.c2c` for the rule and the answer's shape.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np

from ..board import Position
from ..errors import RouteViolation
from ..graph import BLOCKED, END_ONLY, TOKEN, TrackGraph
from ..limits import Limits
from ..routes import Route
from ..rules.c2c import unfolded
from ..scoring import TrainTable, train_tables
from ..trains import Train, all_stops
from ..validate import check_route, mask_of, score_route

#: share of the time limit the connect query always gets, even after a long solve
MIN_QUERY_SHARE = 0.1


def add_connect(position: Position, graph: TrackGraph, answer: dict, limits: Limits) -> dict:
    """The route solvers' answer with the ``connect`` part, when the position asks for it."""
    if "connect" in position.options:
        deadline = math.inf
        if limits.time_limit is not None:
            spent = answer.get("stats", {}).get("seconds", 0.0)
            left = max(limits.time_limit - spent, MIN_QUERY_SHARE * limits.time_limit)
            deadline = time.perf_counter() + left
        answer["connect"] = connect_query(graph, *position.options["connect"], deadline)
    return answer


def connect_query(graph: TrackGraph, sources: frozenset[str], targets: frozenset[str], deadline: float) -> dict:
    """The ``connect`` part of the answer: the shortest valid route with a stop
    in a ``sources`` cell and one in a ``targets`` cell that a train runs
    folded, else one a D train runs unfolded, else none."""
    position = graph.position
    folded = [(i, t.groups[0].visit) for i, t in enumerate(position.trains)]
    opened = [(i, 2 * n) for i, n in folded if position.trains[i].double_token_stops]
    longest = max((n for _, n in folded + opened), default=0)
    probe = train_table(graph, Train("probe", all_stops(longest))) if longest >= 2 else None
    found, finished = _shortest_route(graph, probe, sources, targets, deadline) if probe else (None, True)
    out: dict[str, Any] = {"possible": found is not None, "route": None, "unfolded": False, "status": "exact"}
    if found is None:
        if not finished:
            out.update(possible=None, unfolded=None, status="unknown")
        return out
    stops, conns = found
    size = len(stops)
    fits = [i for i, n in folded if n >= size]
    if fits:
        i, table = fits[0], train_tables(graph)[fits[0]]
    else:
        i = next(i for i, n in opened if n >= size)
        table = train_table(graph, unfolded(position.trains[i]))
        out["unfolded"] = True
    route = score_route(Route(i, stops, conns), table, graph)
    out["route"] = route.to_json(graph, table)
    return out


def train_table(graph: TrackGraph, train: Train) -> TrainTable:
    """The train table of a train the company does not hold (a probe, an unfolded D)."""
    return train_tables(replace(graph, position=replace(graph.position, trains=[train])))[0]


def _shortest_route(
    graph: TrackGraph, table: TrainTable, sources: frozenset[str], targets: frozenset[str], deadline: float
) -> tuple[tuple[list[int], list[int]] | None, bool]:
    """(stops, connections) of a fewest-stop valid route of ``table``'s train
    with a stop in both cell sets and a company token, or None; and whether
    the search finished before ``deadline``.

    Iterative deepening over the route's stop count. A shortest such route
    ends, at both ends, at a stop that is a source, a target or a token
    (else dropping that end would leave a shorter one), so walks start only
    there and grow at one end. Every walk of two stops or more is checked by
    the validator's :func:`check_route`; a walk that breaks a rule is not
    grown (growing never mends a broken rule). Walks that cannot reach a
    missing source, target or token within the stops left are cut.
    """
    cell_of = [graph.cell_ids[c] for c in graph.cell]
    need = [
        (1 if cell_of[s] in sources else 0) | (2 if cell_of[s] in targets else 0) | (4 if graph.flags[s] & TOKEN else 0)
        for s in range(graph.num_stops)
    ]
    usable = [c for c in range(len(graph.conn_a)) if graph.conn_gauge[c] & table.gauge_bit]
    hops = {bit: _hops(graph, usable, {s for s in range(graph.num_stops) if need[s] & bit}) for bit in (1, 2, 4)}
    masks = [mask_of([c], graph) for c in range(len(graph.conn_a))]
    starts = [s for s in range(graph.num_stops) if need[s] and table.group_of[graph.category[s]] >= 0]
    limit = int(table.visit.sum())

    class Stopped(Exception):
        pass

    def grow(stops: list[int], conns: list[int], used: int, met: int, size: int):
        if time.perf_counter() > deadline:
            raise Stopped
        cur = stops[-1]
        if len(stops) >= 2:
            try:
                check_route(stops, conns, table, graph)
            except RouteViolation:
                return None
            if met == 7:
                return list(stops), list(conns)
            if graph.flags[cur] & (END_ONLY | BLOCKED):
                return None
        left = size - len(stops)
        if any(not met & bit and hops[bit][cur] > left for bit in (1, 2, 4)):
            return None
        for k in range(graph.adj_start[cur], graph.adj_start[cur + 1]):
            c, nxt = int(graph.adj_conn[k]), int(graph.adj_other[k])
            if nxt in stops or masks[c] & used or not graph.conn_gauge[c] & table.gauge_bit:
                continue
            stops.append(nxt)
            conns.append(c)
            found = grow(stops, conns, used | masks[c], met | need[nxt], size)
            stops.pop()
            conns.pop()
            if found:
                return found
        return None

    try:
        for size in range(2, limit + 1):
            for s in starts:
                found = grow([s], [], 0, need[s], size)
                if found:
                    return found, True
    except Stopped:
        return None, False
    return None, True


def _hops(graph: TrackGraph, usable: list[int], goals: set[int]) -> np.ndarray:
    """For every stop, the fewest further stops a walk from it needs to reach
    one of ``goals`` (a lower bound: track sharing is ignored; a walk passes
    no offboard or blocked city on the way)."""
    far = graph.num_stops + 1
    out = np.full(graph.num_stops, far, dtype=np.int64)
    links: dict[int, set[int]] = {}
    for c in usable:
        a, b = int(graph.conn_a[c]), int(graph.conn_b[c])
        links.setdefault(a, set()).add(b)
        links.setdefault(b, set()).add(a)
    frontier = sorted(goals)
    out[frontier] = 0
    while frontier:
        nxt = []
        for v in frontier:
            if v not in goals and graph.flags[v] & (END_ONLY | BLOCKED):
                continue  # a walk only ends there
            for u in links.get(v, ()):
                if out[u] == far:
                    out[u] = out[v] + 1
                    nxt.append(u)
        frontier = nxt
    return out
