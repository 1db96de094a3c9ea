"""18Cuba's answer: routes from the numba kernels, the coupled choice by
branch and bound or CP-SAT.

The routes come from :mod:`.cuba_routes`. The choice of one route per train
with the wagons, the sugar flow and the FC fees is first searched by the
numba branch and bound of :mod:`.cuba_choice`, whose bound is tight when
the sugar potentials and fees of the best routes are nearly earned. When it
has not finished within ``CHOICE_NODES`` nodes (counted work, never the
clock), the choice goes to the CP-SAT model of :mod:`.cuba_cpsat` over the
listed routes, seeded with the best choice found and given only the routes
that could still beat it. The answer's ``solver`` says which path answered
(``cuba-bb`` or ``cuba-cpsat``) and ``stats`` why.

A time limit stops either part with status ``feasible`` and a true bound.
The chosen routes are checked once more by the reference search's route
rules and scoring (:class:`~routecalc.games.cuba.Game`): the kernels and the
reference must agree on every figure.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import solvers
from ..board import Position
from ..limits import Limits
from ..model import load_position
from ..routes import Route
from ..rules.cuba import CUBE_INCOME, FC, is_plus
from ..scoring import pay_table
from ..solvers.fast import Clock, ceiling, rebuild
from . import cuba_choice as bb
from .cuba import WAGON_ORDERS, Game, Run, fc_income, solve_cuba  # the reference: answer form and scoring
from .cuba_routes import CubaRoutes, CubaStops, list_routes

#: A tiny 18Cuba position (a mill between two harbors, FC's token in it, two
#: company cities, a wagon and sugar) whose solve brings in the game's numba
#: kernels: the listing's annotation and the choice's branch and bound.
WARM_UP_POSITION = {
    "format": 1,
    "game": "18Cuba",
    "layout": "flat",
    "phase": {"name": "5", "colors": ["yellow", "green", "brown"]},
    "hexes": [
        {"id": "A1", "code": "offboard=revenue:10,kind:harbor;path=a:0,b:_0"},
        {
            "id": "A3",
            "code": "city=revenue:20,kind:mill;path=a:0,b:_0;path=a:3,b:_0;path=a:4,b:_0;path=a:5,b:_0",
            "tokens": [["FC"]],
        },
        {"id": "A5", "code": "offboard=revenue:10,kind:harbor;path=a:3,b:_0"},
        {"id": "B2", "code": "city=revenue:30;path=a:1,b:_0", "tokens": [["A"]]},
        {"id": "B4", "code": "city=revenue:40;path=a:2,b:_0", "tokens": [["A"]]},
    ],
    "company": "A",
    "trains": ["2", {"name": "3+", "wagon": 2}],
    "options": {"sugar": {"A3-0": 2}, "wagons": [1]},
}
_warm = threading.Lock()
_warmed = False


def warm_up() -> None:
    """Load the kernels an 18Cuba solve runs (from numba's disk cache, or
    compiled into it: 5-8 s of CPU the first time) by solving a tiny
    position, so that no solve's time limit pays for them; once a process."""
    global _warmed
    with _warm:
        if not _warmed:
            solvers.warm_up()
            solve_cuba_coupled(load_position(WARM_UP_POSITION), Limits())
            _warmed = True


#: Branch-and-bound nodes a search takes in one turn (the two searches share their best between turns).
CHUNK = 2_000
#: Wagon assignments and fee covers the valuations try between two looks at the clock (some
#: milliseconds): a turn's nodes cost more with more runs to value (:func:`.cuba_choice._orders`).
WORK_CHUNK = 200_000
#: Nodes the branch and bound may take before the choice goes to CP-SAT.
CHOICE_NODES = 400_000
#: Work units (words of track compared) for the trains' revenue-only suffix optima.
SUFFIX_WORK = 20_000_000


def solve_cuba_coupled(position: Position, limits: Limits, choice_nodes: int = CHOICE_NODES) -> dict:
    """The best 18Cuba answer of the operating company; ``choice_nodes``:
    the branch and bound's share of the work before CP-SAT takes over."""
    clock = Clock(limits.time_limit, limits.progress)
    if position.company == FC:
        return fc_income(position)
    game = Game(position)
    graph = game.graph
    # the kernels value a choice over every order of the pool's wagons: past WAGON_ORDERS of them
    # (a count of work, not the clock), CP-SAT's model of the choice assigns the wagons instead
    heavy = (sum(1 for t in position.trains if not t.wagon) + 1) ** len(game.pool) > WAGON_ORDERS
    if heavy:
        choice_nodes = 0
    stops = CubaStops.of(graph)
    if stops is None:  # over 64 mills with cubes or FC cities (a count): the plain search of every run
        return solve_cuba(position, limits)
    tables, listed = list_routes(graph, stops, limits.route_limit, clock, worthless=game.machines > 0)
    complete = all(found.found.complete for found in listed)
    # Two searches, the trains richest first and poorest first (which is
    # faster depends on the board), take turns by chunks of nodes and share
    # the best value: the first to finish proves it. Where no branch and
    # bound runs (heavy), CP-SAT reads the first's lists only, without the
    # suffix optima (those two lists took 0.3 s on a 20-train board, unwatched)
    searching = choice_nodes > 0
    searches = [
        Search(*choice_lists(game, stops, listed, richest, searching))
        for richest in (True, False)[: max(len(listed), 1) if searching else 1]
    ]
    best, pick = 0, []  # the best value and its routes: (train, listing number) pairs
    status, nodes = (bb.PAUSED if listed else bb.DONE), 0  # no trains: nothing to choose
    while not clock.out_of_time() and status != bb.DONE and nodes < choice_nodes:
        for search in searches:
            search.state.best[0] = max(int(search.state.best[0]), best)
            before = int(search.state.best[0])
            status = search.turn(min(CHUNK, max(choice_nodes - nodes, 1)), clock)
            nodes = sum(int(x.state.nodes[0]) for x in searches)
            if int(search.state.best[0]) > before:
                best, pick = int(search.state.best[0]), search.pick()
            if status == bb.DONE:
                break
        clock.report(0.5 + 0.5 * max(_share(x.lists, x.state) for x in searches))
    lists, order, sorts = searches[0].lists, searches[0].order, searches[0].sorts
    rows = searches[0].rows(pick)

    def runs_of(rows: list[int]) -> list[Run]:
        out = []
        for i, row in enumerate(rows):
            if row < 0:
                continue
            t = order[i]
            found = listed[t]
            k = int(sorts[i][row - int(lists.offset[i])])
            route_stops, conns = rebuild(graph, found.found.buffer, found.walk_row(k))
            out.append(game.cuba_route(Route(t, route_stops, conns)))
        return out

    if heavy and listed:
        # no branch and bound ran: CP-SAT starts from each train's richest route on the track left
        rows = first_fit(lists)
        best = game.score_choice(runs_of(rows)).value
    stats = {
        "routes_enumerated": sum(f.found.enumerated for f in _distinct(listed)),
        "routes_kept": sum(f.count for f in _distinct(listed)),
        "nodes": nodes,
    }
    if status == bb.DONE:
        bound, solver = best, "cuba-bb"
        why = f"branch and bound finished in {stats['nodes']:,} nodes"
    else:
        bound = _static_bound(lists)
        solver = "cuba-bb"
        why = "the time limit stopped the branch and bound"
        if not clock.out_of_time():
            from .cuba_cpsat import solve_choice

            left = None if limits.time_limit is None else max(0.01, limits.time_limit - clock.seconds())
            found, bound, cp_stats = solve_choice(lists, rows, best, left)
            # a stopped CP-SAT may answer a choice worth less than its seed
            worth = (
                game.score_choice(runs_of(found)).value if heavy else bb.choice_value(lists, np.array(found, np.int64))
            )
            if worth >= best:
                rows = found
            stats.update(cp_stats)
            built = not cp_stats["cpsat_status"].startswith("not built")
            solver = "cuba-cpsat" if built else "cuba-bb"
            why = (
                f"branch and bound unfinished after {choice_nodes:,} nodes: CP-SAT over the "
                f"{cp_stats['routes_modelled']:,} routes that could beat its {best}"
                if built
                else f"branch and bound unfinished after {choice_nodes:,} nodes: CP-SAT's model of the choice "
                f"was {cp_stats['cpsat_status']}"
            )
    runs = runs_of(rows)
    extras = game.score_choice(runs)
    value = extras.value if heavy else int(bb.choice_value(lists, np.array(rows, np.int64)))
    if extras.value != value:
        raise AssertionError(f"the kernels value an 18Cuba choice {value}, the reference {extras.value}")
    if not complete:
        wagons = [t.wagon for t in position.trains if t.wagon] + game.pool
        bound = max(
            bound,
            sum(ceiling(pay_table(t, graph, [])) for t in tables)
            + game.machines
            + CUBE_INCOME * min(int(stops.supply.sum()), sum(wagons)),
        )
    bound = max(bound, extras.value)
    out = game.answer(runs, extras)
    if clock.reported:
        clock.report(1.0)
    out.update(
        status="optimal" if bound == extras.value else "feasible",
        bound=int(bound),
        solver=solver,
        stats={**stats, "auto": {"solver": solver, "why": why}, "seconds": clock.seconds()},
    )
    return out


class Search:
    """One branch and bound: its lists, trains' order, route orders and state."""

    def __init__(self, lists: bb.ChoiceLists, order: list[int], sorts: list[np.ndarray]):
        self.lists, self.order, self.sorts = lists, order, sorts
        self.state = bb.new_state(lists)

    def turn(self, budget: int, clock: Clock) -> int:
        """Run ``budget`` nodes on, looking at the clock every ``WORK_CHUNK``
        units of work (the pauses resume the search exactly: without a limit
        a turn is the same as in one run); DONE or PAUSED."""
        stop = int(self.state.nodes[0]) + budget
        while True:
            status = bb.search(self.lists, self.state, stop - int(self.state.nodes[0]), WORK_CHUNK)
            if status == bb.DONE or int(self.state.nodes[0]) >= stop or clock.out_of_time():
                return status

    def pick(self) -> list[tuple[int, int]]:
        """The best choice found, as (train, listing number) pairs."""
        offset = self.lists.offset
        return [
            (self.order[i], int(self.sorts[i][r - int(offset[i])])) for i, r in enumerate(self.state.choice) if r >= 0
        ]

    def rows(self, pick: list[tuple[int, int]]) -> list[int]:
        """A choice as rows of these lists (-1: the train runs nothing)."""
        out = [-1] * len(self.order)
        for t, k in pick:
            i = self.order.index(t)
            out[i] = int(self.lists.offset[i]) + int(np.flatnonzero(self.sorts[i] == k)[0])
        return out


def choice_lists(
    game: Game, stops: CubaStops, listed: list[CubaRoutes], richest_first: bool = True, suffix: bool = True
) -> tuple[bb.ChoiceLists, list[int], list[np.ndarray]]:
    """The branch and bound's lists: trains richest (or poorest) first, identical ones side
    by side; each train's routes sorted by potential (revenue + the most
    sugar its best wagon carries from the mills it passes). Also the trains'
    order and, per train in that order, the listing's number of each route.
    ``suffix`` False: the trains' suffix optima are only sums of their best
    routes (no search reads them)."""
    position = game.position
    trains = position.trains
    wagons = game.pool
    sugar = len(stops.mills) > 0 and (any(t.wagon for t in trains) or bool(wagons))
    supply_of = _supply_of(stops)
    per_train = []
    for t, found in enumerate(listed):
        best_wagon = trains[t].wagon or (max(wagons) if wagons else 0)
        cubes = np.minimum(best_wagon, supply_of(found.mills)) if sugar else np.zeros(found.count, np.int64)
        potential = found.revenue + CUBE_INCOME * cubes
        per_train.append((potential, np.argsort(-potential, kind="stable")))
    kinds = list(dict.fromkeys(id(f) for f in listed))
    sign = -1 if richest_first else 1
    order = sorted(
        range(len(listed)),
        key=lambda t: (sign * int(per_train[t][0].max(initial=0)), kinds.index(id(listed[t])), trains[t].wagon, t),
    )
    parts = {name: [] for name in ("mask", "revenue", "potential", "mills", "fc")}
    offset, count, same = [], [], []
    at = 0
    for i, t in enumerate(order):
        found, (potential, sort) = listed[t], per_train[t]
        parts["mask"].append(found.mask[sort])
        parts["revenue"].append(found.revenue[sort])
        parts["potential"].append(potential[sort])
        parts["mills"].append(found.mills[sort] if sugar else np.zeros(found.count, np.uint64))
        parts["fc"].append(found.fc[sort])
        offset.append(at)
        count.append(found.count)
        at += found.count
        prev = order[i - 1] if i else -1
        same.append(i > 0 and listed[prev] is found and trains[prev].wagon == trains[t].wagon)
    words = graph_words(listed)
    lists = bb.ChoiceLists(
        np.ascontiguousarray(np.concatenate(parts["mask"]) if at else np.zeros((0, words), np.uint64)),
        *(
            np.concatenate(parts[k]).astype(np.uint64 if k in ("mills", "fc") else np.int64)
            if at
            else np.zeros(0, np.uint64 if k in ("mills", "fc") else np.int64)
            for k in ("revenue", "potential", "mills", "fc")
        ),
        np.array(offset, np.int64),
        np.array(count, np.int64),
        np.array(same, np.bool_),
        np.array([trains[t].wagon for t in order], np.int64),
        np.array([is_plus(trains[t]) for t in order], np.bool_),
        stops.supply if sugar else np.zeros(0, np.int64),
        np.array(wagons if sugar else [], np.int64),
        int(game.fee) if stops.fc else 0,
        int(game.machines),
        CUBE_INCOME,
        bb.suffix_revenues(
            [listed[t].mask for t in order], [listed[t].revenue for t in order], SUFFIX_WORK if suffix else 0
        ),
    )
    return lists, order, [per_train[t][1] for t in order]


def first_fit(lists: bb.ChoiceLists) -> list[int]:
    """Rows of a choice: each train in the lists' order takes its route of
    most potential that shares no track with the routes taken before it."""
    taken = np.zeros(lists.mask.shape[1], np.uint64)
    rows = []
    for offset, count in zip(lists.offset, lists.count):
        free = ~(lists.mask[offset : offset + count] & taken).any(axis=1)
        # each train's rows are sorted by potential, richest first
        row = int(offset) + int(np.argmax(free)) if free.any() else -1
        if row >= 0:
            taken |= lists.mask[row]
        rows.append(row)
    return rows


def graph_words(listed: list[CubaRoutes]) -> int:
    return listed[0].found.mask.shape[1] if listed else 1


def _supply_of(stops: CubaStops):
    supply = stops.supply

    def total(mills: np.ndarray) -> np.ndarray:
        out = np.zeros(len(mills), np.int64)
        for i, cubes in enumerate(supply):
            out += np.where((mills >> np.uint64(i)) & np.uint64(1), cubes, 0)
        return out

    return total


def _distinct(listed: list[CubaRoutes]) -> list[CubaRoutes]:
    return list({id(f): f for f in listed}.values())


def _share(lists: bb.ChoiceLists, state: bb.ChoiceState) -> float:
    if not len(lists.count) or not lists.count[0]:
        return 0.0
    return min(int(state.next_r[0]) / (int(lists.count[0]) + 1), 1.0)


def _static_bound(lists: bb.ChoiceLists) -> int:
    """No choice earns more: each train's best potential, the machines once."""
    tops = [int(lists.potential[o]) for o, c in zip(lists.offset, lists.count) if c]
    return sum(tops) + (lists.machines if tops else 0)
