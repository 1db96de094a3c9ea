"""Solvers by name. Each takes a position, its compiled graph and the limits,
and returns the answer dict of the spec (routes, revenue, status, bound)."""

from __future__ import annotations

from collections.abc import Callable

from ..limits import Limits
from .reference import solve_reference


def _reference(position, graph, limits: Limits) -> dict:
    return solve_reference(position, graph, time_limit=limits.time_limit)


def _fast(position, graph, limits: Limits) -> dict:
    from .fast import solve_fast
    return solve_fast(position, graph, time_limit=limits.time_limit, route_limit=limits.route_limit,
                      progress=limits.progress)


def _cpsat(position, graph, limits: Limits) -> dict:
    from .cpsat import solve_cpsat
    return solve_cpsat(position, graph, time_limit=limits.time_limit, progress=limits.progress)


def _packing(position, graph, limits: Limits) -> dict:
    from .packing import solve_packing
    return solve_packing(position, graph, time_limit=limits.time_limit, route_limit=limits.route_limit)


def _auto(position, graph, limits: Limits) -> dict:
    from .auto import solve_auto
    return solve_auto(position, graph, time_limit=limits.time_limit, route_limit=limits.route_limit,
                      progress=limits.progress)


SOLVERS: dict[str, Callable] = {"auto": _auto, "fast": _fast, "reference": _reference, "cpsat": _cpsat,
                                "packing": _packing}
DEFAULT_SOLVER = "auto"
#: Solvers that run the numba kernels (worth warming up before the first solve).
KERNEL_SOLVERS = frozenset({"auto", "fast", "packing"})


def warm_up() -> None:
    """Compile (or load from the disk cache) the fast solver's kernels before
    the first request; the CLI and the service call it at start."""
    from .fast import warm_up as warm_fast
    warm_fast()
