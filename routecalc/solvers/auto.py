"""Automatic choice: the fast solver while enumeration is affordable, CP-SAT
where it explodes.

The enumeration size is found out by trying: the fast solver runs with a
budget of routes per train and of seconds. Finished within it, its answer
is optimal and is returned. Otherwise (long trains on a big board: diesels,
express trains, 1867 trains that pass towns for free) CP-SAT, which does not
enumerate, solves the whole problem, seeded with the fast solver's best
route set and capped by its bound (the single-train maxima). The answer's
``solver`` names the solver whose search proved it and
``stats["auto"]`` says why that one ran.
"""

from __future__ import annotations

import time
from typing import Callable

from ..errors import RouteViolation
from ..graph import TrackGraph
from ..model import Position
from ..validate import RouteSetValidator
from .cpsat import solve_cpsat
from .fast import solve_fast

#: Routes per train the fast solver may enumerate before auto turns to CP-SAT.
ROUTE_BUDGET = 100_000
#: Seconds the fast solver may take before auto turns to CP-SAT.
FAST_SECONDS = 1.0


def _scaled(progress: Callable[[float], None] | None, low: float, high: float):
    if progress is None:
        return None
    return lambda fraction: progress(low + (high - low) * fraction)


def solve_auto(position: Position, graph: TrackGraph, *, time_limit: float | None = None,
               route_limit: int | None = None, progress: Callable[[float], None] | None = None) -> dict:
    """Fast solver within its budget, else CP-SAT seeded with what it found."""
    started = time.perf_counter()
    seconds = FAST_SECONDS if time_limit is None else min(FAST_SECONDS, time_limit / 2)
    routes = ROUTE_BUDGET if route_limit is None else min(ROUTE_BUDGET, route_limit)
    fast = solve_fast(position, graph, time_limit=seconds, route_limit=routes,
                      progress=_scaled(progress, 0.0, 0.5))
    tried = {key: fast[key] for key in ("status", "revenue", "bound")}
    tried.update(routes_enumerated=fast["stats"]["routes_enumerated"], seconds=fast["stats"]["seconds"])
    if fast["status"] == "optimal":
        fast["stats"]["auto"] = {"solver": "fast", "why": (
            f"enumeration and combination finished within the budget ({routes:,} routes per train, "
            f"{seconds:g} s): {tried['routes_enumerated']:,} routes in {tried['seconds']:g} s")}
        return fast

    why = (f"the fast solver stopped at its budget ({routes:,} routes per train, {seconds:g} s) with "
           f"{fast['revenue']} of at most {fast['bound']} after {tried['routes_enumerated']:,} routes: "
           "CP-SAT, seeded with its routes and capped by its bound")
    try:
        hint = RouteSetValidator(position, graph).routes(fast["routes"])
    except RouteViolation:
        # Same-named trains of different kinds: the route form cannot say which
        # ran which route, so the seed is dropped (CP-SAT finds its own).
        hint = []
    left = None if time_limit is None else max(0.01, time_limit - (time.perf_counter() - started))
    result = solve_cpsat(position, graph, time_limit=left, progress=_scaled(progress, 0.5, 1.0), hint=hint,
                         known_bound=fast["bound"])
    result["stats"]["auto"] = {"solver": "cpsat", "why": why, "fast": tried}
    result["stats"]["seconds"] = round(time.perf_counter() - started, 4)
    return result
