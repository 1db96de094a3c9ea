"""The reference solver: plain, exhaustive, obviously correct.

Every valid route of every train is listed by a depth-first walk over the
track graph, each checked by the validator's own :func:`check_route`, and
paid by trying every admissible set of paying stops (no greedy). The best
track-disjoint combination, one route or none per train, is then found by
a plain branch and bound. It exists to check the fast solvers; it is slow
on big boards with long trains, so it keeps to a time limit like the others:
the listing may take half of it, and an unfinished search answers
``feasible`` with a true bound.
"""

from __future__ import annotations

import math
import time
from itertools import combinations

from ..deadline import expired
from ..errors import RouteViolation
from ..graph import BLOCKED, END_ONLY, TOKEN, TrackGraph, compile_position
from ..model import Position
from ..routes import Route, answer
from ..rules import require_route_engine
from ..scoring import TrainTable, pay_table, route_revenue, train_tables, within_limits
from ..validate import check_route, mask_of
from .fast import ceiling


def exhaustive_payment(stops: list[int], table: TrainTable, graph: TrackGraph, bonuses) -> tuple[int, list[int]] | None:
    """Best revenue over every admissible set of paying stops (brute force)."""
    worth = table.worth
    weights = {s: int(worth[s]) * int(table.group_mult[table.group_of[graph.category[s]]]) for s in stops}
    pay = [int(p) for p in table.pay]
    fill = table.train.fill
    # fill: the slots the first group's visited stops leave unused pay stops of the other groups
    spare = max(0, pay[0] - sum(1 for s in stops if table.group_of[graph.category[s]] == 0)) if fill else 0
    best = None
    # A train that pays every stop it visits has one admissible set: all of them.
    sizes = [len(stops)] if table.train.pays_every_stop else range(len(stops), 0, -1)
    for k in sizes:
        for paid in combinations(stops, k):
            counts = [0] * len(pay)
            for s in paid:
                counts[table.group_of[graph.category[s]]] += 1
            over = sum(max(0, n - p) for n, p in zip(counts[1:], pay[1:]))
            fits = counts[0] <= pay[0] and over <= spare
            if not fits or not any(graph.flags[s] & TOKEN for s in paid):
                continue
            revenue = route_revenue(list(paid), table, graph, bonuses, weights)
            if best is None or revenue > best[0]:
                best = (revenue, list(paid))
    return best


def enumerate_routes(graph: TrackGraph, table: TrainTable, deadline: float = math.inf) -> tuple[list[Route], bool]:
    """Every valid route of one train, each once (not also reversed), and
    whether the listing finished before ``deadline`` (a ``perf_counter`` time)."""
    bonuses = graph.position.rules.bonuses(graph.position)
    found: list[Route] = []
    finished = True

    # depth-first, on a stack of its own: a route may pass thousands of stops (a D train), past
    # Python's recursion limit; children are pushed in reverse so that they are visited in order
    stack = [([s], [], 0, int(graph.groups[s]), 0) for s in reversed(range(graph.num_stops))]
    while stack:
        if time.perf_counter() > deadline or expired():  # expired: also a request cancelled
            finished = False
            break
        stops, conns, used, groups, edges = stack.pop()
        cur = stops[-1]
        if len(stops) >= 2:
            if stops[0] < cur:
                try:
                    check_route(stops, conns, table, graph)
                except RouteViolation:
                    pass
                else:
                    paid = exhaustive_payment(stops, table, graph, bonuses)
                    if paid is not None:
                        found.append(Route(-1, list(stops), list(conns), paid[0], paid[1]))
            if graph.flags[cur] & (END_ONLY | BLOCKED):
                continue
        children = []
        for k in range(graph.adj_start[cur], graph.adj_start[cur + 1]):
            c, nxt = int(graph.adj_conn[k]), int(graph.adj_other[k])
            mask = mask_of([c], graph)
            if nxt in stops or mask & used or int(graph.groups[nxt]) & groups:
                continue
            if not graph.conn_gauge[c] & table.gauge_bit:
                continue
            new_edges = edges + int(graph.conn_edges[c])
            if within_limits(stops + [nxt], new_edges, table, graph):
                continue
            children.append((stops + [nxt], conns + [c], used | mask, groups | int(graph.groups[nxt]), new_edges))
        stack.extend(reversed(children))
    return found, finished


def best_combination(
    per_train: list[list[Route]], graph: TrackGraph, deadline: float = math.inf
) -> tuple[list[Route], int, bool]:
    """Best track-disjoint choice of one route or none per train; returns
    (routes, nodes searched, whether the search finished before ``deadline``)."""
    lists = [sorted(rs, key=lambda r: -r.revenue) for rs in per_train]
    masks = [[mask_of(r.conns, graph) for r in rs] for rs in lists]
    n = len(lists)
    rest = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        rest[i] = rest[i + 1] + (lists[i][0].revenue if lists[i] else 0)
    best: list = [0, []]
    nodes = 0
    finished = True

    def search(i: int, used: int, total: int, chosen: list[Route]) -> None:
        nonlocal nodes, finished
        if not finished or time.perf_counter() > deadline or expired():
            finished = False
            return
        nodes += 1
        if total > best[0]:
            best[0], best[1] = total, list(chosen)
        if i == n or total + rest[i] <= best[0]:
            return
        for route, mask in zip(lists[i], masks[i]):
            if total + route.revenue + rest[i + 1] <= best[0]:
                break
            if not mask & used:
                chosen.append(route)
                search(i + 1, used | mask, total + route.revenue, chosen)
                chosen.pop()
        search(i + 1, used, total, chosen)

    search(0, 0, 0, [])
    return best[1], nodes, finished


def solve_reference(position: Position, graph: TrackGraph | None = None, *, time_limit: float | None = None) -> dict:
    """Best routes by exhaustive listing; exact unless ``time_limit`` stops it."""
    require_route_engine(position.rules)
    started = time.perf_counter()
    deadline = math.inf if time_limit is None else started + time_limit
    graph = graph or compile_position(position)
    tables = train_tables(graph)
    bonuses = position.rules.bonuses(position)
    per_train, complete, most = [], True, 0
    for i, table in enumerate(tables):
        routes, finished = enumerate_routes(graph, table, (started + deadline) / 2)
        for r in routes:
            r.train = i
        per_train.append(routes)
        complete &= finished
        if finished:
            most += max((r.revenue for r in routes), default=0)
        else:  # no route of the train earns more than the fast solver's ceiling
            most += ceiling(pay_table(table, graph, bonuses))
    chosen, nodes, finished = best_combination(per_train, graph, deadline)
    revenue = sum(r.revenue for r in chosen)
    bound = revenue if complete and finished else max(most, revenue)
    return answer(
        graph,
        tables,
        chosen,
        started,
        solver="reference",
        bound=bound,
        routes_enumerated=sum(len(r) for r in per_train),
        nodes=nodes,
    )
