"""CP-SAT's solver as every model of the engine runs it."""

from __future__ import annotations

from ortools.sat.python import cp_model


def new_solver() -> cp_model.CpSolver:
    """A solver with one search worker, which gives the same answer each run
    (several workers answered other routes and fees for one position), and
    which leaves Ctrl-C to Python: by default CP-SAT takes SIGINT for itself
    while it solves and then sets it back to the system's default, so a
    ``routecalc batch`` went on past a Ctrl-C, wrote the stopped solve as a
    result, and the next Ctrl-C killed it without its clean-up. A stopped
    search is ended by the deadline's cancel hooks instead. One worker is
    also the faster: CP-SAT's single full search (LP, cuts, hint search)
    proved the stress positions 2-10x faster on two cores than any
    two-worker portfolio tried (default, default_lp + core, max_lp + core,
    max_lp + quick_restart, interleaved), which split the cores between
    weaker searches."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.catch_sigint_signal = False
    return solver
