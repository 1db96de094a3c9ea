"""Check proposed routes and score them, or name the rule they break.

:func:`check_route` holds the per-route rules in one place; the reference
solver builds its routes through the same function, so a route it finds is
by construction one the validator accepts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import deadline
from .errors import PositionError, RouteViolation
from .graph import BLOCKED, END_ONLY, TrackGraph, compile_position
from .model import MAX_TRAINS, Position
from .routes import Route
from .rules import require_route_engine
from .scoring import TrainTable, best_payment, train_tables, within_limits
from .trains import UNLIMITED


def mask_of(conns: list[int], graph: TrackGraph) -> int:
    """Python int bit set of the track pieces of some connections."""
    bits = 0
    for c in conns:
        for p in graph.conn_pieces[c]:
            bits |= 1 << p
    return bits


def check_route(
    stops: list[int], conns: list[int], table: TrainTable, graph: TrackGraph, route_no: int | None = None
) -> None:
    """Raise RouteViolation if the walk breaks a generic rule (scoring aside)."""

    def fail(rule: str, detail: str):
        raise RouteViolation(rule, detail, route_no)

    ids = graph.stop_ids
    if len(stops) < 2:
        fail("too_few_stops", "a route needs at least two stops")
    if len(set(stops)) != len(stops):
        twice = next(ids[s] for s in stops if stops.count(s) > 1)
        fail("node_twice", f"visits {twice} twice")
    seen_groups = 0
    for s in stops:
        g = int(graph.groups[s])
        if g & seen_groups:
            fail("group_twice", f"{ids[s]} is in a group the route already visited")
        seen_groups |= g
    for c in conns:
        if not graph.conn_gauge[c] & table.gauge_bit:
            fail("wrong_gauge", f"the {table.train.name} cannot use the track {'-'.join(graph.conn_cell_seq[c])}")
    used: set[int] = set()
    for i, c in enumerate(conns):
        pieces = graph.conn_pieces[c]
        if (
            i
            and graph.conn_pieces[conns[i - 1]][-1 if graph.conn_a[conns[i - 1]] == stops[i - 1] else 0]
            == pieces[0 if graph.conn_a[c] == stops[i] else -1]
        ):
            fail("reversal", f"leaves {ids[stops[i]]} on the track it came in on")
        shared = used.intersection(pieces)
        if shared:
            fail("track_reused", f"uses {graph.piece_label[min(shared)]} twice")
        used.update(pieces)
    for s in stops[1:-1]:
        if graph.flags[s] & END_ONLY:
            fail("terminal_passed", f"passes through {ids[s]}, which only ends a route")
        if graph.flags[s] & BLOCKED:
            fail("blocked_city", f"passes through {ids[s]}, whose slots are all taken by other companies")
    for i, (c, s) in enumerate(zip(conns, stops)):
        start_bit, end_bit = (1, 2) if graph.conn_a[c] == s else (2, 1)
        if graph.conn_terminal[c] & start_bit and i > 0:
            fail("terminal_passed", f"leaves {ids[s]} on a terminal path")
        if graph.conn_terminal[c] & end_bit and i < len(conns) - 1:
            fail("terminal_passed", f"passes through {ids[stops[i + 1]]} on a terminal path")
    if graph.position.options.get("no_hex_twice"):
        cells: list[str] = []
        for c, s in zip(conns, stops):
            seq = graph.oriented_cells(c, s)
            cells.extend(seq[1:] if cells and cells[-1] == seq[0] else seq)
        if len(set(cells)) != len(cells):
            twice = next(x for x in cells if cells.count(x) > 1)
            fail("hex_twice", f"enters cell {twice} twice")
    why = within_limits(stops, sum(int(graph.conn_edges[c]) for c in conns), table, graph)
    if why:
        fail("too_long", why)


def score_route(route: Route, table: TrainTable, graph: TrackGraph, route_no: int | None = None) -> Route:
    result = best_payment(route.stops, table, graph, graph.position.rules.bonuses(graph.position))
    if result is None:
        raise RouteViolation("no_token", f"no paying stop holds a {graph.position.company} token", route_no)
    route.revenue, route.paid = result
    return route


class RouteSetValidator:
    """Validate route sets against one compiled position."""

    #: whether the position's game must be one the route engine answers; a
    #: subclass written for a game with its own search (18Cuba's) says False
    route_engine_only = True

    def __init__(self, position: Position, graph: TrackGraph | None = None):
        if self.route_engine_only:
            require_route_engine(position.rules)
        self.position = position
        self.graph = graph or compile_position(position)
        self.tables = train_tables(self.graph)

    def validate(self, routes_json: Any) -> dict:
        """Scored routes and total, or raise RouteViolation / PositionError."""
        routes = self.routes(routes_json)
        return {
            "routes": [r.to_json(self.graph, self.tables[r.train]) for r in routes],
            "revenue": sum(r.revenue for r in routes),
        }

    def routes(self, routes_json: Any) -> list[Route]:
        """The scored :class:`Route` objects of a valid route set (solvers
        seeding a search with another solver's answer use it)."""
        if isinstance(routes_json, dict) and "routes" in routes_json:
            routes_json = routes_json["routes"]
        if not isinstance(routes_json, list):
            raise PositionError("routes", 'must be a list of routes or {"routes": [...]}')
        if len(routes_json) > MAX_TRAINS:
            raise PositionError("routes", f"{len(routes_json)} routes (a company runs at most {MAX_TRAINS} trains)")
        free = list(range(len(self.position.trains)))
        first = [self._train(rj, i, free) for i, rj in enumerate(routes_json)]
        best, error = None, None
        for trains in self._assignments(routes_json, first):
            try:
                routes = self._scored(routes_json, trains)
            except RouteViolation as exc:
                error = error or exc
                continue
            if best is None or sum(r.revenue for r in routes) > sum(r.revenue for r in best):
                best = routes
        if best is None:
            raise error
        return best

    def _assignments(self, routes_json: list, first: list[int]) -> Iterator[list[int]]:
        """Trains for the routes: the first free train of each route's name,
        then, where trains of one name differ (train objects with their own
        distance, say), the assignment of those trains to the routes of that
        name that makes the most routes valid and, among those, pays most (a
        maximum-weight matching over each route scored alone with each train,
        not every order). A proposal names trains only by name: the best
        valid reading counts."""
        yield first
        trains = self.position.trains
        chosen = list(first)
        for name in dict.fromkeys(trains[k].name for k in first):
            at = [i for i, k in enumerate(first) if trains[k].name == name]
            mine = [k for k, t in enumerate(trains) if t.name == name]
            if len({trains[k] for k in mine}) == 1:
                continue
            pays = {}  # (route, kind of train) -> revenue of the route alone, or None
            kinds = {trains[k]: k for k in mine}
            for i in at:
                for train, k in kinds.items():
                    deadline.check("matching routes to trains")
                    pays[i, train] = self._alone(routes_json[i], i, k)
            # valid pairs weigh more than any revenue, so that validity comes first
            top = 1 + sum(max((v for v in pays.values() if v is not None), default=0) for _ in at)
            weights = [[0 if (pay := pays[i, trains[k]]) is None else top + pay for k in mine] for i in at]
            for i, j in zip(at, best_assignment(weights)):
                chosen[i] = mine[j]
        if chosen != first:
            yield chosen

    def _alone(self, rj: Any, i: int, train: int) -> int | None:
        """The revenue of route ``i`` run alone by ``train``, or None if it breaks a rule."""
        try:
            stops = self._stops(rj, i)
            conns = self._connections(rj, i, stops, train, set())
            check_route(stops, conns, self.tables[train], self.graph, i)
            route = score_route(Route(train, stops, conns), self.tables[train], self.graph, i)
            return self._game_rules(rj, route, i)
        except RouteViolation:
            return None

    def _game_rules(self, rj: dict, route: Route, i: int) -> int:
        """The revenue of a route the generic checks passed, by the game's own
        rules (a subclass's hook; raises RouteViolation): here, as scored."""
        return route.revenue

    def _scored(self, routes_json: list, trains: list[int]) -> list[Route]:
        """The routes, run by ``trains``, checked and scored; or the first broken rule."""
        routes: list[Route] = []
        used: dict[int, int] = {}
        for i, (rj, train) in enumerate(zip(routes_json, trains)):
            stops = self._stops(rj, i)
            conns = self._connections(rj, i, stops, train, set(used))
            route = Route(train, stops, conns)
            check_route(stops, conns, self.tables[train], self.graph, i)
            score_route(route, self.tables[train], self.graph, i)
            self._game_rules(rj, route, i)
            for c in conns:
                for p in self.graph.conn_pieces[c]:
                    if p in used:
                        raise RouteViolation(
                            "track_reused", f"shares {self.graph.piece_label[p]} with route {used[p]}", i
                        )
            for c in conns:
                for p in self.graph.conn_pieces[c]:
                    used[p] = i
            routes.append(route)
        return routes

    def _train(self, rj: Any, i: int, free: list[int]) -> int:
        if not isinstance(rj, dict):
            raise PositionError(f"routes[{i}]", "must be an object")
        name = rj.get("train")
        if not isinstance(name, str):
            got = "missing" if name is None else f"must be a train's name, not a {type(name).__name__}"
            raise PositionError(f"routes[{i}].train", got)
        for k in free:
            if self.position.trains[k].name == name:
                free.remove(k)
                return k
        if any(t.name == name for t in self.position.trains):
            raise RouteViolation("unknown_train", f"more routes than {name!r} trains", i)
        raise RouteViolation("unknown_train", f"the company has no {name!r} train", i)

    def _stops(self, rj: dict, i: int) -> list[int]:
        nodes = rj.get("nodes")
        if not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes):
            raise PositionError(f"routes[{i}].nodes", "must be a list of node ids")
        if len(nodes) > UNLIMITED:
            raise PositionError(f"routes[{i}].nodes", f"{len(nodes)} stops (a route visits at most {UNLIMITED})")
        out = []
        for j, n in enumerate(nodes):
            if n not in self.position.node_index:
                raise PositionError(f"routes[{i}].nodes[{j}]", f"no node {n!r} on the board")
            s = int(self.graph.node_stop[self.position.node_index[n]])
            if s < 0:
                raise PositionError(f"routes[{i}].nodes[{j}]", f"{n} is a junction, not a stop")
            out.append(s)
        return out

    def _connections(self, rj: dict, i: int, stops: list[int], train: int, used: set[int]) -> list[int]:
        hexes = rj.get("hexes")
        if hexes is not None and (not isinstance(hexes, list) or len(hexes) != max(len(stops) - 1, 0)):
            raise PositionError(f"routes[{i}].hexes", "must hold one cell list per consecutive node pair")
        table = self.tables[train]
        conns: list[int] = []
        for j in range(len(stops) - 1):
            s, t = stops[j], stops[j + 1]
            ids = self.graph.stop_ids
            candidates = self.graph.connections_between(s, t)
            if hexes is not None:
                want = hexes[j]
                if not isinstance(want, list):
                    raise PositionError(f"routes[{i}].hexes[{j}]", "must be a list of cell ids")
                candidates = [c for c in candidates if list(self.graph.oriented_cells(c, s)) == want]
            if not candidates:
                via = f" along {hexes[j]}" if hexes is not None else ""
                raise RouteViolation("not_connected", f"no track joins {ids[s]} and {ids[t]}{via}", i)
            fitting = [c for c in candidates if self.graph.conn_gauge[c] & table.gauge_bit]
            if not fitting:
                raise RouteViolation(
                    "wrong_gauge", f"the {table.train.name} cannot use the track between {ids[s]} and {ids[t]}", i
                )
            choices = sorted({self.graph.oriented_cells(c, s) for c in fitting})
            if len(choices) > 1:
                raise RouteViolation(
                    "ambiguous",
                    f"several tracks join {ids[s]} and {ids[t]}; give 'hexes'",
                    i,
                    [list(ch) for ch in choices],
                )
            mine = set().union(*(self.graph.conn_pieces[c] for c in conns)) if conns else set()
            free = [c for c in fitting if not (used | mine).intersection(self.graph.conn_pieces[c])]
            conns.append((free or fitting)[0])
        return conns


def best_assignment(weights: list[list[int]]) -> list[int]:
    """Column of each row in a maximum-weight assignment of rows to distinct
    columns (at most as many rows as columns; weights >= 0): OR-Tools' linear
    sum assignment on the square matrix padded with rows of zeros."""
    from ortools.graph.python.linear_sum_assignment import SimpleLinearSumAssignment  # type: ignore[import-untyped]

    rows, cols = len(weights), len(weights[0]) if weights else 0
    top = max((w for row in weights for w in row), default=0)
    solver = SimpleLinearSumAssignment()
    for r in range(cols):
        for c in range(cols):
            solver.add_arc_with_cost(r, c, top - weights[r][c] if r < rows else 0)
    if solver.solve() != solver.OPTIMAL:
        raise RuntimeError("the assignment of trains to routes found no perfect matching on a complete matrix")
    return [solver.right_mate(r) for r in range(rows)]


def validate_routes(position: Position, routes_json: Any) -> dict:
    return RouteSetValidator(position).validate(routes_json)
