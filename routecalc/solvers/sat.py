"""CP-SAT's solver as every model of the engine runs it."""

from __future__ import annotations

import threading

from ortools.sat.python import cp_model


def new_solver() -> cp_model.CpSolver:
    """A solver with one search worker, which gives the same answer each run
    (several workers answered other routes and fees for one position), and
    which leaves Ctrl-C to Python (:func:`solve`): by default CP-SAT takes
    SIGINT for itself while it solves and then sets it back to the system's
    default, so a ``routecalc batch`` went on past a Ctrl-C, wrote the
    stopped solve as a result, and the next Ctrl-C killed it without its
    clean-up. One worker is also the faster: CP-SAT's single full search
    (LP, cuts, hint search) proved the stress positions 2-10x faster on two
    cores than any two-worker portfolio tried (default, default_lp + core,
    max_lp + core, max_lp + quick_restart, interleaved), which split the
    cores between weaker searches."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.catch_sigint_signal = False
    return solver


def solve(solver: cp_model.CpSolver, model: cp_model.CpModel, callback=None) -> int:
    """``solver.solve(model, callback)``, stopped by Ctrl-C: Python raises
    KeyboardInterrupt only in the main thread and only between its own steps,
    so there the search runs in a thread of its own while the main thread
    waits, and a Ctrl-C stops the search and is raised at once, not when the
    search reaches its time limit."""
    if threading.current_thread() is not threading.main_thread():
        return solver.solve(model, callback)
    done: list[int] = []
    failed: list[BaseException] = []  # raised in the search's thread: raised again here
    ended = threading.Event()  # waited on, not the thread: a join that Ctrl-C cut aborted the process at its exit

    def run() -> None:
        try:
            done.append(solver.solve(model, callback))
        except BaseException as exc:  # noqa: BLE001 (handed to the waiting thread)
            failed.append(exc)
        finally:
            ended.set()

    threading.Thread(target=run, name="CP-SAT", daemon=True).start()
    try:
        while not ended.wait(0.1):
            pass
    except KeyboardInterrupt:
        solver.stop_search()
        ended.wait()
        raise
    if failed:
        raise failed[0]
    return done[0]
