"""Automatic choice: the fast solver while enumeration is affordable, CP-SAT
where it explodes.

The enumeration size is found out by trying: the fast solver's enumeration
kernel lists each train's routes within a budget of routes and seconds.

- Finished within it: the fast solver's combination search runs on those
  routes, and its answer is returned when the search finishes. If it
  stalls, the routes are packed with CP-SAT instead (:mod:`.packing`).
- Stopped by the budget (long trains on a big board: diesels, express
  trains, 1867 trains that pass towns for free): CP-SAT, which does not
  enumerate, solves the whole problem, seeded with the best route set the
  listed routes give, capped by the single-train maxima (exact for the
  trains whose enumeration finished, the fast solver's ceiling for the
  others).

The answer's ``solver`` names the solver that produced it and
``stats["auto"]`` says why that one ran.
"""

from __future__ import annotations

import time
from typing import Callable

from ..graph import TrackGraph
from ..model import Position
from ..routes import answer
from ..rules import require_route_engine
from ..scoring import train_tables
from .cpsat import solve_cpsat
from .fast import ENUMERATION_SHARE, Clock, combine_company, enumerate_company, listed_routes
from .packing import greedy_choice, pack_routes

#: Routes per train, and seconds for all trains, that enumeration may take
#: before auto calls the position too big for the fast solver.
ROUTE_BUDGET = 1_000_000
ENUMERATION_SECONDS = 1.0
#: Seconds the fast solver's combination search may take before auto packs
#: the routes with CP-SAT instead.
COMBINATION_SECONDS = 2.0


def _left(time_limit: float | None, started: float) -> float | None:
    return None if time_limit is None else max(0.01, time_limit - (time.perf_counter() - started))


def solve_auto(position: Position, graph: TrackGraph, *, time_limit: float | None = None,
               route_limit: int | None = None, progress: Callable[[float], None] | None = None) -> dict:
    """The fast solver within the enumeration budget, else CP-SAT."""
    require_route_engine(position.rules)
    started = time.perf_counter()
    tables = train_tables(graph)
    budget = ROUTE_BUDGET if route_limit is None else min(ROUTE_BUDGET, route_limit)
    seconds = ENUMERATION_SECONDS if time_limit is None else min(ENUMERATION_SECONDS, time_limit / 3)
    listed = enumerate_company(graph, tables, budget, Clock(seconds / ENUMERATION_SHARE, progress))
    distinct = {id(found): found for found in listed}.values()
    count = sum(found.enumerated for found in distinct)
    took = time.perf_counter() - started
    limits = f"{budget:,} routes per train, {seconds:g} s"

    if all(found.complete for found in listed):
        search = COMBINATION_SECONDS if time_limit is None else min(COMBINATION_SECONDS, _left(time_limit, started))
        routes, bound, stats = combine_company(graph, tables, listed, Clock(search, progress))
        if bound == sum(r.revenue for r in routes):
            return answer(graph, tables, routes, solver="fast", **stats, seconds=round(time.perf_counter() - started, 4),
                          auto={"solver": "fast", "why": (
                              f"enumeration finished within the budget ({limits}): {count:,} routes in {took:.3g} s")})
        status, routes, bound, stats = pack_routes(listed, graph, _left(time_limit, started))
        return answer(graph, tables, routes, solver="packing", status=status, bound=bound, **stats,
                      seconds=round(time.perf_counter() - started, 4),
                      auto={"solver": "packing", "why": (
                          f"enumeration finished ({count:,} routes) but the fast combination search did not "
                          f"within {search:g} s: the routes packed with CP-SAT")})

    seed = listed_routes(greedy_choice(listed), listed, graph)
    maxima = {t: found.upper for t, found in enumerate(listed) if found.complete}
    ceiling = sum(found.upper for found in listed)
    result = solve_cpsat(position, graph, time_limit=_left(time_limit, started),
                         progress=progress, hint=seed, known_bound=ceiling, known_maxima=maxima)
    result["stats"]["auto"] = {"solver": "cpsat", "why": (
        f"enumeration stopped at the budget ({limits}) after {count:,} routes: CP-SAT, seeded with "
        f"{sum(r.revenue for r in seed)} from the listed routes, at most {ceiling} by the single-train maxima")}
    result["stats"]["seconds"] = round(time.perf_counter() - started, 4)
    return result
