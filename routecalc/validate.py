"""Check proposed routes and score them, or name the rule they break.

:func:`check_route` holds the per-route rules in one place; the reference
solver builds its routes through the same function, so a route it finds is
by construction one the validator accepts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import deadline
from .errors import PositionError, RouteViolation, shown
from .graph import BLOCKED, END_ONLY, TrackGraph, compile_position
from .model import MAX_TRAINS, Position
from .routes import Route
from .rules import require_route_engine
from .scoring import TrainTable, best_payment, train_tables, within_limits
from .trains import UNLIMITED

#: Rules a route can break on one of the tracks that join its stops along the
#: same cells and keep on another.
TRACK_RULES = frozenset({"track_reused", "reversal", "terminal_passed"})
#: Connections the search for another way of taking such tracks may take and
#: check for one route set (some 10-30 ms): a proposal that breaks a rule on
#: every way is refused within it (the first reading's rule is named). Real
#: boards have one or two ways; lanes on every edge of a long route have
#: thousands.
PICK_STEPS = 20_000


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


def route_list(routes_json: Any) -> list:
    """The proposal's routes (a list, or ``{"routes": [...]}``), at most a company's trains."""
    if isinstance(routes_json, dict) and "routes" in routes_json:
        routes_json = routes_json["routes"]
    if not isinstance(routes_json, list):
        raise PositionError("routes", 'must be a list of routes or {"routes": [...]}')
    if len(routes_json) > MAX_TRAINS:
        raise PositionError("routes", f"{len(routes_json)} routes (a company runs at most {MAX_TRAINS} trains)")
    return routes_json


def route_train(rj: Any, i: int) -> str:
    """Route ``i`` is an object; the name of the train it names."""
    if not isinstance(rj, dict):
        raise PositionError(f"routes[{i}]", "must be an object")
    name = rj.get("train")
    if not isinstance(name, str):
        got = "missing" if name is None else f"must be a train's name (a string), got {shown(name)}"
        raise PositionError(f"routes[{i}].train", got)
    return name


def route_nodes(rj: dict, i: int) -> list[str]:
    """The node ids route ``i`` lists."""
    nodes = rj.get("nodes")
    if not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes):
        raise PositionError(f"routes[{i}].nodes", "must be a list of node ids")
    return nodes


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
        seeding a search with another solver's answer use it): of its
        readings, the one whose routes pay most."""
        return max(self.readings(routes_json), key=lambda routes: sum(r.revenue for r in routes))

    def readings(self, routes_json: Any) -> Iterator[list[Route]]:
        """Each valid way of giving the proposal's routes to the company's
        trains (:meth:`_assignments`), checked and scored; where none is
        valid, the first one's broken rule is raised."""
        routes_json = route_list(routes_json)
        free = list(range(len(self.position.trains)))
        first = [self._train(rj, i, free) for i, rj in enumerate(routes_json)]
        error, valid = None, False
        for trains in self._assignments(routes_json, first):
            try:
                routes = self._scored(routes_json, trains)
            except RouteViolation as exc:
                error = error or exc
                continue
            valid = True
            yield routes
        if not valid:
            assert error is not None  # the first assignment is always tried
            raise error

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
            for i, j in zip(at, most_valid_pay([[pays[i, trains[k]] for k in mine] for i in at])):
                chosen[i] = mine[j]
        if chosen != first:
            yield chosen

    def _alone(self, rj: Any, i: int, train: int) -> int | None:
        """The revenue of route ``i`` run alone by ``train``, or None if it breaks a rule."""
        try:
            return self._scored([rj], [train], first=i)[0].revenue
        except RouteViolation:
            return None

    def _game_rules(self, rj: dict, route: Route, i: int) -> int:
        """The revenue of a route the generic checks passed, by the game's own
        rules (a subclass's hook; raises RouteViolation): here, as scored."""
        return route.revenue

    def _scored(self, routes_json: list, trains: list[int], first: int = 0) -> list[Route]:
        """The routes, run by ``trains``, checked and scored; or the first
        broken rule. Each route first takes, between two stops, the first
        track no route before it uses. Where tracks along the same cells join
        two stops more than once (a junction beside a stop, lanes) and that
        reading breaks a rule, every other way of taking them is tried (a
        depth-first search over the routes, at most ``PICK_STEPS`` tracks
        taken) before the first reading's broken rule is named, so neither
        the order of the routes nor the direction a route is read decides.
        ``first``: the number of the first route (for messages)."""
        try:
            return self._first_reading(routes_json, trains, first)
        except RouteViolation as exc:
            if exc.rule not in TRACK_RULES:
                raise
            found = self._any_reading(routes_json, trains, first)
            if found is None:
                raise
            return found

    def _first_reading(self, routes_json: list, trains: list[int], first: int) -> list[Route]:
        routes: list[Route] = []
        used: dict[int, int] = {}
        for i, (rj, train) in enumerate(zip(routes_json, trains), first):
            stops = self._stops(rj, i)
            conns = self._first_free(self._tracks(rj, i, stops, train), set(used))
            route = self._route(rj, i, train, stops, conns)
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

    def _any_reading(self, routes_json: list, trains: list[int], first: int) -> list[Route] | None:
        """The first valid way of taking the routes' tracks, or None."""
        try:
            parsed = [
                (rj, i, train, stops, self._tracks(rj, i, stops, train))
                for i, (rj, train) in enumerate(zip(routes_json, trains), first)
                for stops in [self._stops(rj, i)]
            ]
        except RouteViolation:
            return None  # a route no track choice mends
        steps = [PICK_STEPS]

        def extend(k: int, used: frozenset[int]) -> list[Route] | None:
            if k == len(parsed):
                return []
            rj, i, train, stops, tracks = parsed[k]
            for conns in self._picks(tracks, used, steps):
                steps[0] -= len(conns)  # checking it costs about as much as taking it
                try:
                    route = self._route(rj, i, train, stops, conns)
                except RouteViolation:
                    continue
                rest = extend(k + 1, used.union(*(self.graph.conn_pieces[c] for c in conns)))
                if rest is not None:
                    return [route, *rest]
            return None

        return extend(0, frozenset())

    def _route(self, rj: dict, i: int, train: int, stops: list[int], conns: list[int]) -> Route:
        """Route ``i`` on these connections, checked and scored by the generic and the game's rules."""
        route = Route(train, stops, conns)
        check_route(stops, conns, self.tables[train], self.graph, i)
        score_route(route, self.tables[train], self.graph, i)
        self._game_rules(rj, route, i)
        return route

    def _train(self, rj: Any, i: int, free: list[int]) -> int:
        name = route_train(rj, i)
        for k in free:
            if self.position.trains[k].name == name:
                free.remove(k)
                return k
        if any(t.name == name for t in self.position.trains):
            raise RouteViolation("unknown_train", f"more routes than {name!r} trains", i)
        raise RouteViolation("unknown_train", f"the company has no {name!r} train", i)

    def _stops(self, rj: dict, i: int) -> list[int]:
        nodes = route_nodes(rj, i)
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
        skip = rj.get("skip", [])  # not read: the route is paid at best, its own skip answered
        if not isinstance(skip, list) or not all(isinstance(n, str) for n in skip):
            raise PositionError(f"routes[{i}].skip", "must be a list of node ids")
        for j, n in enumerate(skip):
            if n not in nodes:
                raise PositionError(f"routes[{i}].skip[{j}]", f"{n!r} is not one of the route's nodes")
        return out

    def _tracks(self, rj: dict, i: int, stops: list[int], train: int) -> list[list[int]]:
        """Per consecutive pair of stops, the connections the route may take
        there: along its ``hexes`` (needed where the cells differ), on track
        of its train's gauge."""
        hexes = rj.get("hexes")
        if hexes is not None and (not isinstance(hexes, list) or len(hexes) != max(len(stops) - 1, 0)):
            raise PositionError(f"routes[{i}].hexes", "must hold one cell list per consecutive node pair")
        table = self.tables[train]
        tracks: list[list[int]] = []
        for j in range(len(stops) - 1):
            s, t = stops[j], stops[j + 1]
            ids = self.graph.stop_ids
            candidates = self.graph.connections_between(s, t)
            if hexes is not None:
                want = hexes[j]
                if not isinstance(want, list) or not all(isinstance(cell, str) for cell in want):
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
            tracks.append(fitting)
        return tracks

    def _first_free(self, tracks: list[list[int]], used: set[int]) -> list[int]:
        """The first connection of each pair that shares no track with ``used``
        or the route so far (else the first: the checks then name the clash)."""
        conns: list[int] = []
        for fitting in tracks:
            mine = set().union(*(self.graph.conn_pieces[c] for c in conns)) if conns else set()
            free = [c for c in fitting if not (used | mine).intersection(self.graph.conn_pieces[c])]
            conns.append((free or fitting)[0])
        return conns

    def _picks(self, tracks: list[list[int]], used: frozenset[int], steps: list[int]) -> Iterator[list[int]]:
        """Every way of taking one connection of each pair with no piece of
        track twice or in ``used``, first-free first, while ``steps[0]``
        (connections taken and checked, shared by one search) lasts."""
        conns: list[int] = []
        taken: list[frozenset[int]] = [used]
        options = [iter(tracks[0])] if tracks else []
        while options:
            c = next(options[-1], None)
            if c is None:
                options.pop()
                if conns:
                    conns.pop()
                    taken.pop()
                continue
            pieces = self.graph.conn_pieces[c]
            if taken[-1].intersection(pieces):
                continue
            steps[0] -= 1
            if steps[0] < 0:
                return
            conns.append(c)
            taken.append(taken[-1].union(pieces))
            if len(conns) == len(tracks):
                yield list(conns)
                conns.pop()
                taken.pop()
            else:
                options.append(iter(tracks[len(conns)]))


def most_valid_pay(pays: list[list[int | None]]) -> list[int]:
    """Column of each row in an assignment of rows to distinct columns with
    the most valid pairs (``None``: not valid) and, among those, the most
    pay: a valid pair weighs more than all the pay of any assignment."""
    top = 1 + sum(max((v for v in row if v is not None), default=0) for row in pays)
    return best_assignment([[0 if v is None else top + v for v in row] for row in pays])


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
