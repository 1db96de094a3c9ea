"""Automatic choice: the fast solver while enumeration is affordable, CP-SAT
where it explodes.

Every choice is made on counts of work, never on the clock, so the same
position with the same limits takes the same path on an idle machine and on
a loaded one; the time limit only stops a search (the answer is then the
best found, ``status: feasible``, with a true bound).

The enumeration size is found out by trying: the fast solver's enumeration
kernel lists each train's routes within a budget of routes kept per train
(``ROUTE_BUDGET``) and kernel steps for all trains (``ENUMERATION_STEPS``).

- Finished within it: the fast solver's combination search runs on those
  routes within ``COMBINATION_WORK`` units of its work, and its answer is
  returned when the search finishes. If it stalls, the routes are packed
  with CP-SAT instead (:mod:`.packing`).
- Stopped by the time limit before the budget: the clock only stops a
  search, so the answer is the fast solver's, the best set of the routes
  listed so far, ``feasible`` with a true bound.
- Stopped by the budget (long trains on a big board: diesels, express
  trains, 1867 trains that pass towns for free): what was listed is kept.
  The combination search picks the best set of the listed routes (within
  ``SEED_WORK``). Each kind of train whose enumeration did not finish
  is solved alone by CP-SAT within ``SINGLE_WORK`` (deterministic time);
  where that does not prove its maximum, by branch and bound
  (:mod:`.maxima`, within ``MAXIMUM_STEPS`` kernel steps, from the best
  route known), which proves in milliseconds some maxima CP-SAT takes
  seconds over (stress-1828-d-8e's D). CP-SAT, which does not enumerate,
  then solves the whole problem seeded with that set and those routes,
  capped by the single-train maxima or, where one is unproven, CP-SAT's
  bounds, first demanded together: those known it does not prove again.

The answer's ``solver`` names the solver that produced it and
``stats["auto"]`` says why that one ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..graph import TrackGraph
from ..model import Position
from ..routes import Route, answer
from ..rules import require_route_engine
from ..scoring import TrainTable, train_tables
from .fast import ENUMERATION_SHARE, Clock, TrainRoutes, combine_company, enumerate_company, listed_routes
from .maxima import single_train_maximum
from .packing import greedy_choice, pack_routes

#: Routes kept per train, and enumeration kernel steps (routes extended) for
#: all trains, that enumeration may take before auto calls the position too
#: big for the fast solver: some 0.3-0.5 s of one core, six times what the
#: largest corpus position takes (84,000 steps).
ROUTE_BUDGET = 1_000_000
ENUMERATION_STEPS = 500_000
#: Units of the combination kernel's work (words of track compared) before
#: auto packs the routes with CP-SAT instead: some 1-2 s of one core.
COMBINATION_WORK = 200_000_000
#: The same, for the best set of the routes an unfinished enumeration listed
#: (a seed for CP-SAT, not a proof).
SEED_WORK = 10_000_000
#: Enumeration kernel steps (routes extended, each bounded) the branch and
#: bound may take for one kind of train's single-train maximum before CP-SAT
#: proves it instead: some 0.1-0.2 s of one core (stress-1828-d-8e's D takes
#: 6,252; its 8E 170,900, where CP-SAT takes 6 s, but a larger budget cost
#: stress-1867-express-8, whose trains it does not prove in 10x that, 4 s more).
MAXIMUM_STEPS = 10_000
#: CP-SAT deterministic time (about seconds of one idle core) for all the
#: kinds of trains solved alone before the branch and bound takes those it
#: did not prove: most long trains are proven in a tenth of it.
SINGLE_WORK = 0.25


def _left(time_limit: float | None, started: float) -> float | None:
    return None if time_limit is None else max(0.01, time_limit - (time.perf_counter() - started))


def _chosen(
    graph: TrackGraph, tables: list[TrainTable], routes: list[Route], started: float, solver: str, why: str, **fields
) -> dict:
    """The answer of the solver auto chose, its ``stats["auto"]`` saying why."""
    out = answer(graph, tables, routes, started, solver=solver, **fields)
    out["stats"]["auto"] = {"solver": solver, "why": why}
    return out


def solve_auto(
    position: Position,
    graph: TrackGraph,
    *,
    time_limit: float | None = None,
    route_limit: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict:
    """The fast solver within the enumeration budget, else CP-SAT."""
    require_route_engine(position.rules)
    started = time.perf_counter()
    tables = train_tables(graph)
    budget = ROUTE_BUDGET if route_limit is None else min(ROUTE_BUDGET, route_limit)
    # the clock stops the enumeration at ENUMERATION_SHARE of the limit; the budget decides the path
    listed = enumerate_company(graph, tables, budget, Clock(time_limit, progress), ENUMERATION_STEPS)
    distinct = {id(found): found for found in listed}.values()
    count = sum(found.enumerated for found in distinct)
    steps = sum(found.steps for found in distinct)
    limits = f"{budget:,} routes per train, {ENUMERATION_STEPS:,} steps"
    work = f"{COMBINATION_WORK:,} units of work"
    complete = all(found.complete for found in listed)
    routes, bound, stats = combine_company(
        graph, tables, listed, Clock(_left(time_limit, started), progress), COMBINATION_WORK if complete else SEED_WORK
    )

    revenue = sum(r.revenue for r in routes)
    if complete and bound == revenue:
        why = (
            f"enumeration finished within the budget ({limits}): {count:,} routes in "
            f"{steps:,} steps, combined within {work}"
        )
        return _chosen(graph, tables, routes, started, "fast", why, **stats)
    stalled = stats.get("combination_work", COMBINATION_WORK) >= COMBINATION_WORK
    if (complete and not stalled) or not (complete or any(found.out_of_work for found in listed)):
        why = (
            f"the time limit stopped the fast solver within its work budget ({limits}, {work}) "
            f"after {count:,} routes: the best set of the routes listed, with a true bound"
        )
        return _chosen(graph, tables, routes, started, "fast", why, bound=bound, **stats)
    if complete:
        size_for = None if time_limit is None else time_limit * (1 - ENUMERATION_SHARE)  # not the time left
        status, routes, bound, packed = pack_routes(listed, graph, _left(time_limit, started), size_for)
        why = (
            f"enumeration finished ({count:,} routes) but the fast combination search did not "
            f"within {work}: the routes packed with CP-SAT"
        )
        return _chosen(graph, tables, routes, started, "packing", why, status=status, bound=bound, **packed)

    from .cpsat import solve_cpsat  # OR-Tools only when CP-SAT runs

    greedy = listed_routes(greedy_choice(listed), listed, graph)
    if sum(r.revenue for r in greedy) > sum(r.revenue for r in routes):
        routes = greedy  # the combination search stopped before it reached the greedy set
    maxima, caps, best, searched = _maxima(graph, tables, listed, Clock(_left(time_limit, started), progress))
    ceiling = sum(caps.values())
    result = solve_cpsat(
        position,
        graph,
        time_limit=_left(time_limit, started),
        progress=progress,
        hint=routes,
        known_maxima=maxima,
        known_caps=caps,
        known_routes=best,
    )
    result["stats"]["auto"] = {
        "solver": "cpsat",
        "why": (
            f"enumeration stopped at the budget ({limits}) after {count:,} routes: CP-SAT, seeded with "
            f"{sum(r.revenue for r in routes)} from the listed routes, at most {ceiling} by the single-train maxima"
        ),
        "maxima": searched,
    }
    result["stats"]["seconds"] = round(time.perf_counter() - started, 4)
    return result


def _maxima(
    graph: TrackGraph, tables: list[TrainTable], listed: list[TrainRoutes], clock: Clock
) -> tuple[dict[int, int], int, list[Route], dict]:
    """The single-train maxima known before the whole model: each finished
    enumeration's; each other kind of train's by CP-SAT alone within
    ``SINGLE_WORK``, and where that does not prove it, by branch and bound
    within ``MAXIMUM_STEPS`` from the best route known. Returns them by
    train, the sum of every train's maximum or upper bound, the best
    routes found (a train's each), and what was done per kind (CP-SAT's
    bound; the best revenue known after it, listed or CP-SAT's; the
    branch and bound's steps and maximum, None unknown). A kind neither
    proves is solved alone again inside :func:`.cpsat.solve_cpsat`, from
    scratch: CP-SAT does not resume a search."""
    from .cpsat import single_train_maxima  # OR-Tools only when CP-SAT runs

    maxima = {t: found.upper for t, found in enumerate(listed) if found.complete}
    left = None if clock.time_limit is None else clock.started + clock.time_limit
    bounds, routes = single_train_maxima(graph, tables, SINGLE_WORK, maxima, left)
    best = {r.train: r for r in routes}
    searched: dict = {}
    for t, found in enumerate(listed):
        name = found.table.train.name
        if t in maxima or name in searched:
            continue
        kind = [i for i, other in enumerate(listed) if other is found]
        known = max([int(found.revenue[0]) if len(found.revenue) else 0] + [best[i].revenue for i in kind if i in best])
        searched[name] = {"cpsat_bound": bounds[t], "cpsat_route": known}
        if known >= bounds[t]:
            maxima.update({i: known for i in kind})
            continue
        maximum = single_train_maximum(graph, t, found.table, known, clock, MAXIMUM_STEPS)
        searched[name].update(maximum=maximum.revenue, steps=maximum.steps)
        if maximum.route is not None:
            best[t] = maximum.route
        if maximum.revenue is not None:
            maxima.update({i: maximum.revenue for i in kind})
    caps = {t: maxima.get(t, min(found.upper, bounds[t])) for t, found in enumerate(listed)}
    return maxima, caps, list(best.values()), searched
