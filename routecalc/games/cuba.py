"""18Cuba answers: the route rules on top of the engine's, the coupled
extras (sugar, wagons, FC fees) and an exact search over whole choices.

Every train's valid routes are listed by the reference solver's exhaustive
walk (the engine's generic checks) and filtered by :func:`cuba_route` (the
game's route rules). A branch and bound then picks one route or none per
train; a choice's exact value is :meth:`Game.value` (maximum flow of cubes
over every wagon assignment, cheapest cover of the FC fees, both remembered
per trains and the mills or FC cities their routes pass, which repeat across
the many choices), and the bound of a route is its revenue plus the most
sugar it could carry, which no choice can beat since fees are never negative.
Figures: three trains with 27,000 routes on a 10 x 20 random board take
about 6 s, most of it the listing; a time limit stops either part with
status ``feasible`` and a true bound.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field, replace
from itertools import product
from typing import Any

from .. import deadline as run_deadline
from ..board import Position
from ..errors import PositionError, RouteViolation, TimeLimitError
from ..graph import TOKEN, compile_position
from ..limits import Limits
from ..routes import Route
from ..rules.cuba import CUBE_INCOME, DEFAULT_FC_FEE, FC, UNSHIPPED_INCOME, is_plus, reach
from ..scoring import pay_table, train_tables
from ..solvers.fast import ceiling
from ..solvers.reference import enumerate_routes
from ..trains import Train
from ..validate import RouteSetValidator, mask_of, most_valid_pay, route_list, route_nodes, route_train


@dataclass
class Run:
    """A valid route of one train with what the coupled terms need."""

    route: Route
    mask: int
    mills: tuple[int, ...]  # mill stops with cubes on them (only when the route ends in a harbor)
    fc: frozenset[int]  # FC-blocked cities it passes through
    potential: int = 0  # revenue + the most sugar income it could carry


@dataclass
class Extras:
    """The coupled terms of a choice of runs (indices into the choice)."""

    value: int
    cubes: list[dict[int, int]]  # per run: mill stop -> cubes
    wagons: list[int]  # per run: capacity carried (0: none)
    paid: list[int]  # FC cities paid for
    free: list[int | None]  # per run: the FC city a + train ignores free
    machines: int = 0
    fee: int = 0
    cube_total: int = 0
    route_total: int = 0
    by_mill: dict[int, int] = field(default_factory=dict)


def _model_time() -> float | None:
    """Seconds a wagon model may take: to the limit, and its grace (it has no partial answer)."""
    left = run_deadline.clip(None)
    return None if left is None else left + run_deadline.GRACE


#: Assignments of the pool's wagons to trains tried one by one at most; more go to one CP-SAT model.
WAGON_ORDERS = 5_000


class Game:
    """One position compiled for 18Cuba."""

    def __init__(self, position: Position):
        self.position = position
        self.graph = compile_position(position)
        self.tables = train_tables(self.graph)
        g = self.graph
        nodes = [position.nodes[int(i)] for i in g.stop_node]
        self.kind = [n.kind for n in nodes]
        self.fc_blocked = [position.rules.fc_blocked(n, position.company) for n in nodes]
        sugar = position.options.get("sugar", {})
        self.supply = {s: int(sugar.get(g.stop_ids[s], 0)) for s in range(g.num_stops) if self.kind[s] == "mill"}
        self.fee = int(position.options.get("fc_fee", DEFAULT_FC_FEE))
        #: every wagon of options.wagons (a proposal may pin any of them)
        self.wagons = sorted(position.options.get("wagons", []), reverse=True)
        # the wagons a choice may use: no more than the trains without a wagon of their own take, and
        # then the largest (a larger wagon in place of a smaller one never carries less)
        self.pool = self.wagons[: sum(1 for t in position.trains if not t.wagon)]
        self.minor = any(t.gauge == "narrow" for t in position.trains)
        self.machines = sum(position.options.get("machines", {}).get(position.company, [])) if self.minor else 0
        self._sugar: dict[tuple, tuple[int, list[int], list[dict[int, int]]]] = {}
        self._fees: dict[tuple, tuple[list[int], list[int | None]]] = {}

    # -- one route ------------------------------------------------------------
    def cuba_route(self, route: Route, route_no: int | None = None) -> Run:
        """Apply the game's route rules to a route the generic checks passed;
        set its revenue and paying stops. Raises RouteViolation."""
        g, table = self.graph, self.tables[route.train]
        train, stops, ids = table.train, route.stops, self.graph.stop_ids

        def fail(rule: str, detail: str):
            raise RouteViolation(rule, detail, route_no)

        paid = list(stops)
        if train.gauge == "narrow":
            if any(self.kind[s] == "harbor" for s in stops):
                fail("narrow_harbor", f"a {train.name} never enters a harbor")
            home = [e for e in (stops[0], stops[-1]) if self.kind[e] == "mill" and g.flags[e] & TOKEN]
            if not home:
                fail(
                    "minor_route",
                    f"one end must be the company's own sugar mill (home token), not "
                    f"{ids[stops[0]]} or {ids[stops[-1]]}",
                )
            others = list(stops[1:]) if home[0] == stops[0] else list(stops[:-1])
            bad = [s for s in others if self.kind[s] != "sugar"]
            if bad:
                fail("minor_route", f"a minor's route stops only at its mill and sugar fields, not {ids[bad[0]]}")
        else:
            fields = [s for s in stops if self.kind[s] == "sugar"]
            if fields:
                fail("sugar_field", f"a major's {train.name} does not stop at the sugar field {ids[fields[0]]}")
            if len(stops) > reach(train):
                ends = [e for e in (stops[0], stops[-1]) if self.kind[e] == "harbor"]
                if not ends:
                    fail(
                        "too_long",
                        f"visits {len(stops)} stops, the {train.name} runs {reach(train)} "
                        "(one more only to a harbor beyond its range)",
                    )
                paid.remove(min(ends, key=lambda s: int(table.value[s])))
        if not any(g.flags[s] & TOKEN for s in paid):
            fail("no_token", f"no paying stop holds a {self.position.company} token")
        route.paid = paid
        route.revenue = train.payout(sum(int(table.value[s]) for s in paid) * train.multiplier)
        harbor_end = self.kind[stops[0]] == "harbor" or self.kind[stops[-1]] == "harbor"
        mills = tuple(s for s in stops if self.kind[s] == "mill" and self.supply[s] > 0) if harbor_end else ()
        fc = frozenset(s for s in stops[1:-1] if self.fc_blocked[s])
        run = Run(route, mask_of(route.conns, g), mills, fc)
        run.potential = route.revenue + CUBE_INCOME * min(
            self.most_wagon(route.train), sum(self.supply[m] for m in mills)
        )
        return run

    def most_wagon(self, train: int) -> int:
        own = self.position.trains[train].wagon
        return own or (self.pool[0] if self.pool else 0)

    # -- a whole choice ---------------------------------------------------------
    def value(self, runs: list[Run]) -> int:
        """Exact value of running these routes (the search's leaf score)."""
        if not runs:
            return 0
        return (
            sum(r.route.revenue for r in runs)
            + self.machines
            + CUBE_INCOME * self.sugar(runs, {})[0]
            - self.fee * len(self.fee_cover(runs)[0])
        )

    def score_choice(self, runs: list[Run], pinned: dict[int, int] | None = None) -> Extras:
        """The value and its parts: revenues, the best sugar over every wagon
        assignment, the cheapest fee cover. ``pinned`` fixes pool wagons on
        some runs (run index -> capacity; a proposal's choice)."""
        cubes, caps, flows = self.sugar(runs, pinned or {})
        paid, free = self.fee_cover(runs)
        route_total = sum(r.route.revenue for r in runs)
        machines = self.machines if runs else 0
        fee = self.fee * len(paid)
        by_mill: dict[int, int] = {}
        for f in flows:
            for m, n in f.items():
                by_mill[m] = by_mill.get(m, 0) + n
        return Extras(
            route_total + CUBE_INCOME * cubes + machines - fee,
            flows,
            caps,
            paid,
            free,
            machines,
            fee,
            cubes,
            route_total,
            by_mill,
        )

    def sugar(self, runs: list[Run], pinned: dict[int, int]) -> tuple[int, list[int], list[dict[int, int]]]:
        """(cubes, wagon per run, cubes per run and mill): the most cubes over
        every assignment of the pool's wagons; remembered per trains and mills."""
        key = tuple((r.route.train, r.mills, pinned.get(i, 0)) for i, r in enumerate(runs))
        if key in self._sugar:
            return self._sugar[key]
        own = [self.position.trains[r.route.train].wagon for r in runs]
        free_runs = [i for i, r in enumerate(runs) if not own[i] and i not in pinned and r.mills]
        pool = list(self.wagons)
        for cap in pinned.values():
            pool.remove(cap)
        del pool[len(free_runs) :]  # the largest left, one for each run that could take one
        best: tuple[int, list[int], list[dict[int, int]]] | None = None
        mills = [r.mills for r in runs]
        if (len(free_runs) + 1) ** len(pool) > WAGON_ORDERS:
            best = self._sugar_model(runs, own, pinned, pool, mills)
        for target in [] if best else product([None] + free_runs, repeat=len(pool)):
            chosen = [t for t in target if t is not None]
            if len(set(chosen)) != len(chosen):
                continue
            caps = [own[i] or pinned.get(i, 0) for i in range(len(runs))]
            for cap, t in zip(pool, target):
                if t is not None:
                    caps[t] = cap
            flows = max_flow(caps, mills, self.supply)
            total = sum(sum(f.values()) for f in flows)
            if best is None or total > best[0]:
                best = (total, caps, flows)
        assert best is not None
        self._sugar[key] = best
        return best

    def _sugar_model(
        self, runs: list[Run], own: list[int], pinned: dict[int, int], pool: list[int], mills: list[tuple[int, ...]]
    ) -> tuple[int, list[int], list[dict[int, int]]]:
        """:meth:`sugar` by one CP-SAT model, for pools with too many assignments to try."""
        from .cuba_cpsat import assign_wagons

        choices = [[(i, own[i] or pinned.get(i, 0))] for i in range(len(runs))]  # each its own train
        run_deadline.check("assigning the pool's wagons")
        counts = dict.fromkeys(range(len(runs)), 1)
        chosen = assign_wagons(choices, counts, set(pinned), pool, mills, self.supply, _model_time())
        if chosen is None:
            raise TimeLimitError("ran out while assigning the pool's wagons")
        flows = max_flow(chosen[1], mills, self.supply)
        return sum(sum(f.values()) for f in flows), chosen[1], flows

    def fee_cover(self, runs: list[Run]) -> tuple[list[int], list[int | None]]:
        """FC cities to pay for and each + train's free ignore, cheapest first;
        remembered per trains and FC cities passed."""
        key = tuple((r.route.train, r.fc) for r in runs)
        if key in self._fees:
            return self._fees[key]
        options = [[None] + sorted(r.fc) if is_plus(self.position.trains[r.route.train]) else [None] for r in runs]
        best: tuple[list[int], list[int | None]] | None = None
        passed = sorted(set().union(*(r.fc for r in runs))) if runs else []
        for free in product(*options):
            paid = [c for c in passed if any(c in r.fc and free[i] != c for i, r in enumerate(runs))]
            if best is None or len(paid) < len(best[0]):
                best = (paid, list(free))
        assert best is not None
        self._fees[key] = best
        return best

    # -- the answer ---------------------------------------------------------------
    def answer(self, runs: list[Run], extras: Extras) -> dict:
        ids = self.graph.stop_ids
        order = sorted(range(len(runs)), key=lambda i: runs[i].route.train)
        out_routes = []
        for i in order:
            run = runs[i]
            rj = run.route.to_json(self.graph, self.tables[run.route.train])
            rj["sugar"] = sum(extras.cubes[i].values())
            if extras.wagons[i]:
                rj["wagon"] = extras.wagons[i]
            if run.fc:
                rj["fc_passed"] = [ids[s] for s in sorted(run.fc)]
            if extras.free[i] is not None:
                rj["fc_free"] = ids[extras.free[i]]
            out_routes.append(rj)
        out = {
            "company": self.position.company,
            "revenue": int(extras.value),
            "routes": out_routes,
            "routes_revenue": int(extras.route_total),
            "sugar": {
                "cubes": extras.cube_total,
                "income": CUBE_INCOME * extras.cube_total,
                "by_mill": {ids[m]: n for m, n in sorted(extras.by_mill.items()) if n},
            },
            "fees": {"paid": [ids[s] for s in extras.paid], "amount": extras.fee},
        }
        if self.minor:
            out["machines"] = extras.machines
        out["parts"] = [
            part
            for part in (
                {
                    "name": "sugar",
                    "detail": f"{extras.cube_total} cubes delivered",
                    "amount": CUBE_INCOME * extras.cube_total,
                },
                {"name": "machines", "detail": "the minor's machines", "amount": extras.machines if self.minor else 0},
                {"name": "FC fees", "detail": " ".join(ids[s] for s in extras.paid), "amount": -extras.fee},
            )
            if part["amount"]
        ]
        return out


def max_flow(caps: list[int], mills: list[tuple[int, ...]], supply: dict[int, int]) -> list[dict[int, int]]:
    """Cubes per train and mill: a maximum flow from the mills' supply to the
    trains' wagons, by shortest augmenting paths each carrying as many cubes
    as it can (a cube at a time took minutes at a supply of 10^9, which a
    position may hold)."""
    flows: list[dict[int, int]] = [{} for _ in caps]
    left = dict(supply)
    carried = [0] * len(caps)
    takers: dict[int, list[int]] = {}  # the trains that can carry from each mill
    for t, ms in enumerate(mills):
        for m in ms:
            takers.setdefault(m, []).append(t)
    while True:
        # breadth first from the mills with cubes left, through trains that can give up a mill's
        # cubes to take another's, to a train with room in its wagon
        came: dict[tuple[str, int], tuple[str, int] | None] = {("mill", m): None for m in left if left[m] > 0}
        queue = deque(came)
        end: tuple[str, int] | None = None
        while queue and end is None:
            kind, x = queue.popleft()
            if kind == "mill":
                for t in takers.get(x, []):
                    if ("train", t) not in came:
                        came["train", t] = (kind, x)
                        if carried[t] < caps[t]:
                            end = ("train", t)
                            break
                        queue.append(("train", t))
            else:
                for m, n in flows[x].items():
                    if n > 0 and ("mill", m) not in came:
                        came["mill", m] = (kind, x)
                        queue.append(("mill", m))
        if end is None:
            return [{m: n for m, n in f.items() if n} for f in flows]
        path = [end]
        while (step := came[path[-1]]) is not None:
            path.append(step)
        path.reverse()  # mill, train, mill, train, ..., train
        amount = min(left[path[0][1]], caps[end[1]] - carried[end[1]])
        for j in range(2, len(path), 2):  # a train giving up cubes of the mill after it
            amount = min(amount, flows[path[j - 1][1]][path[j][1]])
        left[path[0][1]] -= amount
        carried[end[1]] += amount
        for j in range(0, len(path), 2):
            m, t = path[j][1], path[j + 1][1]
            flows[t][m] = flows[t].get(m, 0) + amount
            if j:
                flows[path[j - 1][1]][m] -= amount


def list_runs(game: Game, deadline: float) -> tuple[list[list[Run]], bool]:
    """Every valid route of every train, and whether the listing finished."""
    per_train, complete = [], True
    for i, table in enumerate(game.tables):
        routes, finished = enumerate_routes(game.graph, table, deadline)
        complete &= finished
        runs = []
        for route in routes:
            route.train = i
            try:
                runs.append(game.cuba_route(route))
            except RouteViolation:
                continue
        per_train.append(runs)
    return per_train, complete


def best_choice(game: Game, per_train: list[list[Run]], deadline: float) -> tuple[list[Run], Extras, bool]:
    """Branch and bound over one run or none per train; exact at the leaves.
    Trains with the most routes are decided first (measured: fewer nodes)."""
    lists = sorted((sorted(rs, key=lambda r: -r.potential) for rs in per_train), key=lambda rs: -len(rs))
    n = len(lists)
    rest = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        rest[i] = rest[i + 1] + (lists[i][0].potential if lists[i] else 0)
    best_runs: list[Run] = []
    best = 0
    finished = True

    def search(i: int, used: int, upper: int, chosen: list[Run]) -> None:
        nonlocal best, best_runs, finished
        if not finished or time.perf_counter() > deadline:
            finished = False
            return
        if upper + rest[i] + game.machines <= best:
            return
        if i == n:
            value = game.value(chosen)
            if value > best:
                best, best_runs = value, list(chosen)
            return
        for run in lists[i]:
            if upper + run.potential + rest[i + 1] + game.machines <= best:
                break
            if not run.mask & used:
                chosen.append(run)
                search(i + 1, used | run.mask, upper + run.potential, chosen)
                chosen.pop()
        search(i + 1, used, upper, chosen)

    search(0, 0, 0, [])
    return best_runs, game.score_choice(best_runs), finished


def solve_cuba(position: Position, limits: Limits) -> dict:
    started = time.perf_counter()
    if position.company == FC:
        return fc_income(position)
    game = Game(position)
    deadline = math.inf if limits.time_limit is None else started + limits.time_limit
    per_train, complete = list_runs(game, (started + deadline) / 2)
    runs, extras, finished = best_choice(game, per_train, deadline)
    if complete and finished:
        bound = extras.value
    elif complete:
        bound = sum(max((r.potential for r in rs), default=0) for rs in per_train) + game.machines
    else:  # a train's route earns at most its engine ceiling; sugar at most the supply each wagon can hold
        wagons = [t.wagon for t in position.trains if t.wagon] + game.pool
        bound = (
            sum(ceiling(pay_table(t, game.graph, [])) for t in game.tables)
            + game.machines
            + CUBE_INCOME * min(sum(game.supply.values()), sum(wagons))
        )
    bound = max(bound, extras.value)
    out = game.answer(runs, extras)
    out.update(
        status="optimal" if bound == extras.value else "feasible",
        bound=int(bound),
        solver="cuba",
        stats={"routes_enumerated": sum(len(r) for r in per_train), "seconds": round(time.perf_counter() - started, 4)},
    )
    return out


#: Readings of a proposal :class:`CubaValidator` prices at most, each a way of
#: giving its routes to kinds of train of one name (a company holds a few).
MOST_READINGS = 256


class CubaValidator(RouteSetValidator):
    """The route validator with 18Cuba's route rules (:meth:`Game.cuba_route`)
    on top of the generic checks, pairing a route first with a train that
    carries the ``wagon`` the route names (its own wagon, else none of its
    own); where trains of one name differ (obsolete, their wagons) the base
    class's matching gives the routes to them by these rules."""

    route_engine_only = False

    def __init__(self, position: Position, game: Game):
        super().__init__(position, game.graph)
        self.game = game

    def _game_rules(self, rj: dict, route: Route, i: int) -> int:
        want, own = rj.get("wagon", 0), self.position.trains[route.train].wagon
        if want and own and want != own:
            raise RouteViolation(
                "wagon", f"the {self.position.trains[route.train].name} carries its own {own}-wagon", i
            )
        return self.game.cuba_route(route, i).route.revenue

    def _assignments(self, routes_json: list, first: list[int]) -> Iterator[list[int]]:
        """Where trains of one name differ in more than their wagon (an
        obsolete 3 beside a 3), the ways of giving the routes to those kinds
        of train: a route's pay and the sugar its train's wagon carries both
        change with it, so :func:`validate_cuba` prices each reading whole
        (the generic matching weighs the routes' pay alone). Every way for
        the routes that may carry sugar (they end in a harbor and pass a
        mill with cubes), at most ``MOST_READINGS``; the other routes only
        change their own pay, so for each of those ways they take the kinds
        left by a maximum-pay matching. A route naming a ``wagon`` goes to a
        train carrying it, else to one carrying none (a pool wagon). Trains
        differing only in their wagons are :func:`best_trains`'s to choose
        among. Past ``MOST_READINGS`` ways, the generic readings."""
        trains = self.position.trains
        kinds: dict[str, dict[Train, list[int]]] = {}
        for k, t in enumerate(trains):
            kinds.setdefault(t.name, {}).setdefault(replace(t, wagon=0), []).append(k)
        options = [list(kinds[trains[k].name]) for k in first]
        carriers = [i for i, rj in enumerate(routes_json) if len(options[i]) > 1 and self._may_carry(rj, i)]
        if all(len(o) == 1 for o in options) or math.prod(len(options[i]) for i in carriers) > MOST_READINGS:
            yield from super()._assignments(routes_json, first)
            return
        yield first
        seen = {tuple(first)}
        pins = [rj.get("wagon", 0) for rj in routes_json]
        others = [i for i in range(len(first)) if len(options[i]) > 1 and i not in carriers]
        pays = {
            (i, kind): self._alone(routes_json[i], i, self._like(kinds[trains[first[i]].name][kind], pins[i]))
            for i in others
            for kind in options[i]
        }
        counts = {kind: len(ks) for members in kinds.values() for kind, ks in members.items()}
        for carried in product(*(options[i] for i in carriers)):
            run_deadline.check("giving trains of one name to routes")
            chosen = [options[i][0] for i in range(len(first))]
            for i, kind in zip(carriers, carried):
                chosen[i] = kind
            if not self._matched(others, chosen, pays, counts, carriers):
                continue
            taken: set[int] = set()
            picked = [0] * len(first)
            for i in sorted(range(len(first)), key=lambda i: not pins[i]):  # the named wagons first
                spare = [k for k in kinds[trains[first[i]].name][chosen[i]] if k not in taken]
                fits = [k for k in spare if trains[k].wagon == pins[i]] + [k for k in spare if not trains[k].wagon]
                if not (fits if pins[i] else spare):
                    break
                picked[i] = (fits if pins[i] else spare)[0]
                taken.add(picked[i])
            else:
                if tuple(picked) not in seen:
                    seen.add(tuple(picked))
                    yield picked

    def _like(self, members: list[int], pin: int) -> int:
        """A train of a kind that may run a route naming the ``pin`` wagon (0: none)."""
        return next((k for k in members if self.position.trains[k].wagon in (0, pin)), members[0])

    def _may_carry(self, rj: Any, i: int) -> bool:
        """Whether the route ends in a harbor and passes a mill with cubes."""
        stops = self._stops(rj, i)
        kind, supply = self.game.kind, self.game.supply
        return (
            bool(stops) and "harbor" in (kind[stops[0]], kind[stops[-1]]) and any(supply.get(s, 0) > 0 for s in stops)
        )

    @staticmethod
    def _matched(
        others: list[int],
        chosen: list[Train],
        pays: dict[tuple[int, Train], int | None],
        counts: dict[Train, int],
        carriers: list[int],
    ) -> bool:
        """Give the ``others`` routes the kinds of train of their name that the
        ``carriers`` leave (``counts``: trains of each kind), by a maximum-pay
        matching per name (valid pairs first), into ``chosen``; False when
        the carriers take more trains of a kind than there are."""
        left = dict(counts)
        for i in carriers:
            left[chosen[i]] -= 1
            if left[chosen[i]] < 0:
                return False
        for name in dict.fromkeys(chosen[i].name for i in others):
            mine = [i for i in others if chosen[i].name == name]
            slots = [kind for kind, n in left.items() if kind.name == name for _ in range(n)]
            for i, j in zip(mine, most_valid_pay([[pays[i, kind] for kind in slots] for i in mine])):
                chosen[i] = slots[j]
        return True

    def _train(self, rj: Any, i: int, free: list[int]) -> int:
        if isinstance(rj, dict):
            trains, want = self.position.trains, rj.get("wagon", 0)
            if isinstance(want, bool) or not isinstance(want, int) or want < 0:
                raise PositionError(f"routes[{i}].wagon", "must be a wagon's capacity, a whole number >= 0")
            for wagon in (want, 0):
                for k in free:
                    if trains[k].name == rj.get("train") and trains[k].wagon == wagon:
                        free.remove(k)
                        return k
        return super()._train(rj, i, free)


#: Keys of the FC's income that a solve answers and a validation does not (answer-format.md).
SOLVE_ONLY = ("status", "bound", "solver", "stats")


def validate_cuba(position: Position, proposal: Any, game: Game | None = None) -> dict:
    """Score a proposed route set: the routes must be valid; sugar, wagons
    (unless a route names its ``wagon``) and fees are then the best the routes allow,
    over every reading of the routes by the company's trains (:meth:`CubaValidator._assignments`).
    ``game``: the position already compiled (callers checking many proposals)."""
    if position.company == FC:
        routes = route_list(proposal)  # a malformed proposal is a PositionError, as in every game
        for i, rj in enumerate(routes):
            route_train(rj, i)
            route_nodes(rj, i)
        if routes:
            raise RouteViolation("fc_runs", "the FC runs no routes: its income is its token cities and the sugar")
        return {k: v for k, v in fc_income(position).items() if k not in SOLVE_ONLY}
    game = game or Game(position)
    raw = proposal["routes"] if isinstance(proposal, dict) and "routes" in proposal else proposal
    best: tuple[list[Run], Extras] | None = None
    error: RouteViolation | None = None
    for routes in CubaValidator(position, game).readings(proposal):
        try:
            runs, extras = _priced(game, routes, raw)
        except RouteViolation as exc:  # a wagon the reading's trains cannot carry
            error = error or exc
            continue
        if best is None or extras.value > best[1].value:
            best = runs, extras
    if best is None:
        assert error is not None  # readings yields at least one valid reading or raises
        raise error
    return game.answer(*best)


def _priced(game: Game, routes: list[Route], raw: list) -> tuple[list[Run], Extras]:
    """A reading's runs and its best sugar, wagons and fees, with the wagons
    the routes name pinned."""
    position = game.position
    runs = [game.cuba_route(r, i) for i, r in enumerate(routes)]
    pinned: dict[int, int] = {}
    pool = list(game.wagons)
    for i, (rj, run) in enumerate(zip(raw, runs)):
        if "wagon" not in rj:
            continue
        cap, train = rj["wagon"], position.trains[run.route.train]
        if train.wagon:
            if cap != train.wagon:
                raise RouteViolation("wagon", f"the {train.name} carries its own {train.wagon}-wagon", i)
            continue
        if cap not in pool:
            raise RouteViolation("wagon", f"no {cap!r}-wagon left in options.wagons", i)
        pool.remove(cap)
        pinned[i] = cap
    return best_trains(game, runs, [i for i, rj in enumerate(raw) if "wagon" not in rj], pinned)


def best_trains(game: Game, runs: list[Run], free: list[int], pinned: dict[int, int]) -> tuple[list[Run], Extras]:
    """The routes that name no wagon given the trains of their kind (their
    name and state, the wagon aside) the way that pays most: a route is valid
    on any train of its kind, only the sugar it carries changes. Where the wagons
    of the trains to choose from differ, one CP-SAT model picks trains, pool
    wagons and cubes together (ten trains of a name have 3.6 million orders)."""
    trains = game.position.trains
    taken = {runs[i].route.train for i in range(len(runs)) if i not in free}
    spare: dict[tuple[Train, int], list[int]] = {}  # trains to choose from by kind and wagon
    for k, t in enumerate(trains):
        if k not in taken:
            spare.setdefault((replace(t, wagon=0), t.wagon), []).append(k)
    choices: list[list[tuple[Hashable, int]]] = []
    for i, run in enumerate(runs):
        kind = replace(trains[run.route.train], wagon=0)
        if i in free:
            choices.append([(key, key[1]) for key in spare if key[0] == kind])
        else:
            choices.append([(("fixed", i), pinned.get(i) or trains[run.route.train].wagon)])
    if all(len(options) == 1 for options in choices):
        return runs, game.score_choice(runs, pinned)  # the trains to choose from are alike
    from .cuba_cpsat import assign_wagons

    pool = list(game.wagons)
    for cap in pinned.values():
        pool.remove(cap)
    counts: dict[Hashable, int] = {kind: len(ks) for kind, ks in spare.items()}
    counts.update({("fixed", i): 1 for i in range(len(runs)) if i not in free})
    run_deadline.check("giving trains of one name to routes")
    chosen = assign_wagons(
        choices, counts, set(pinned), pool[: len(runs)], [r.mills for r in runs], game.supply, _model_time()
    )
    if chosen is None:
        raise TimeLimitError("ran out while giving trains of one name to routes")
    given = {kind: list(ks) for kind, ks in spare.items()}
    picked = [
        run.route.train if i not in free else given[kind].pop(0) for i, (run, kind) in enumerate(zip(runs, chosen[0]))
    ]
    tried = [replace(run, route=replace(run.route, train=k)) for run, k in zip(runs, picked)]
    return tried, game.score_choice(tried, pinned)


def fc_income(position: Position) -> dict:
    """The FC's income: its best ``range`` token cities and the unshipped cubes."""
    rng = max((reach(t) for t in position.trains), default=0)
    best: dict[object, tuple[int, str]] = {}
    for node in position.nodes:
        if node.type != "city" or FC not in node.tokens:
            continue
        value = node.revenue.value(position.phase_colors)
        key = node.groups[0] if node.groups else node.id
        if key not in best or value > best[key][0]:
            best[key] = (value, node.id)
    cities = sorted(best.values(), reverse=True)[:rng]
    cubes = sum(position.options.get("sugar", {}).values())
    income = sum(v for v, _ in cities) + UNSHIPPED_INCOME * cubes
    return {
        "company": FC,
        "revenue": income,
        "status": "optimal",
        "bound": income,
        "routes": [],
        "fc_income": {
            "range": rng,
            "cities": [{"node": n, "value": v} for v, n in cities],
            "cubes": cubes,
            "sugar": UNSHIPPED_INCOME * cubes,
            "income": income,
        },
        "parts": [
            {"name": "FC cities", "detail": " ".join(n for _, n in cities), "amount": sum(v for v, _ in cities)},
            {"name": "unshipped sugar", "detail": f"{cubes} cubes", "amount": UNSHIPPED_INCOME * cubes},
        ],
        "solver": "cuba",
        "stats": {},
    }
