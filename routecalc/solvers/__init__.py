"""Solvers by name. Each takes a position, its compiled graph and the limits,
and returns the answer dict of the spec (routes, revenue, status, bound).

A solver's module is imported when it first runs: naming the solvers
(the CLI's options) imports neither numba nor OR-Tools.
"""

from __future__ import annotations

from collections.abc import Callable

from ..limits import Limits


def _reference(position, graph, limits: Limits) -> dict:
    from .reference import solve_reference

    return solve_reference(position, graph, time_limit=limits.time_limit)


def _fast(position, graph, limits: Limits) -> dict:
    from .fast import solve_fast

    return solve_fast(
        position, graph, time_limit=limits.time_limit, route_limit=limits.route_limit, progress=limits.progress
    )


def _cpsat(position, graph, limits: Limits) -> dict:
    from .cpsat import solve_cpsat

    return solve_cpsat(position, graph, time_limit=limits.time_limit, progress=limits.progress)


def _packing(position, graph, limits: Limits) -> dict:
    from .packing import solve_packing

    return solve_packing(position, graph, time_limit=limits.time_limit, route_limit=limits.route_limit)


def _auto(position, graph, limits: Limits) -> dict:
    from .auto import solve_auto

    return solve_auto(
        position, graph, time_limit=limits.time_limit, route_limit=limits.route_limit, progress=limits.progress
    )


SOLVERS: dict[str, Callable] = {
    "auto": _auto,
    "fast": _fast,
    "reference": _reference,
    "cpsat": _cpsat,
    "packing": _packing,
}
DEFAULT_SOLVER = "auto"
#: Solvers that run the numba kernels (worth warming up before the first solve).
KERNEL_SOLVERS = frozenset({"auto", "fast", "packing"})


def warm_up(report: Callable[[str], None] | None = None, *, cpsat: bool = False) -> dict:
    """Get the kernel solvers ready before the first request (the CLI and the
    service call it at start): their modules imported and every kernel
    specialisation they call loaded from numba's disk cache, or compiled and
    cached when it is not there (``report`` gets the progress lines; default
    standard error). ``cpsat`` also imports CP-SAT (ortools, 0.5-1.5 s), so that
    no request's time limit pays for it: a long-running service wants that, a
    one-shot ``routecalc solve`` does not. Returns the counts of
    :func:`routecalc.kernels.cache.load`."""
    from ..kernels import cache
    from . import auto, fast  # noqa: F401  (the default solver's modules)

    if cpsat:
        from . import cpsat as _  # noqa: F401
    return cache.load(report)
