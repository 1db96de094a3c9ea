"""Where the service runs the engine: worker processes, or threads.

In worker processes (the default) no request's Python work -- reading a
position, compiling it, building a model, the 18Cuba and 18XS searches --
holds the GIL of the process that serves HTTP, so ``/healthz`` and every
refusal answer in milliseconds whatever runs. Each worker loads the kernels
and CP-SAT when it starts. A job is cancelled through its deadline (the
search stops at its next check and the worker is free at once); a worker
still busy :data:`KILL_AFTER` s after its job was cancelled or its limit
passed is killed and replaced, so nothing holds a worker for ever.

Threads (:class:`ThreadWorkers`) run the jobs in the service's own process:
for an app whose solver registry is changed at run time (solvers
registered after start-up are served only there).
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import logging
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

from routecalc import deadline
from routecalc.errors import TimeLimitError
from routecalc.games import warm_up_all

LOG = logging.getLogger("routecalc.service")
#: Seconds a worker may go on past its job's limit (or its cancel) before it is killed and replaced.
KILL_AFTER = 5.0
#: Seconds a worker has to start (import, load the kernels and CP-SAT) before it is given up.
START_TIMEOUT = 300.0


class ClientGone(Exception):
    """The client hung up before its answer was ready; its work was cancelled."""


class WorkerLost(Exception):
    """A worker process died or was killed with a job on it."""


def run_job(fn: Callable, args: tuple, seconds: float, handle: deadline.Deadline) -> Any:
    """``fn(*args)`` under a ``seconds`` deadline from now that ``handle`` can cancel."""
    if handle.cancelled:
        raise ClientGone()
    with deadline.within(deadline=deadline.Deadline(seconds, parent=handle)):
        return fn(*args)


class ThreadWorkers:
    """Jobs in a pool of threads of this process."""

    def __init__(self, size: int):
        self.size = size
        self.running = 0
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    async def start(self) -> None:
        # kernels and CP-SAT loaded before the first request, so no request's limit pays for them
        await asyncio.wrap_future(self._executor().submit(warm_up_engine))

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:  # made at start-up, or at first use where no lifespan runs (a mounted app)
            self._pool = ThreadPoolExecutor(self.size, thread_name_prefix="solve")
        return self._pool

    def stop(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def submit(self, fn: Callable, args: tuple, seconds: float) -> tuple[asyncio.Future, Callable[[], None]]:
        """The job's future and what cancels it."""
        handle = deadline.Deadline(None)

        def job():
            with self._lock:
                self.running += 1
            try:
                return run_job(fn, args, seconds, handle)
            finally:
                with self._lock:
                    self.running -= 1

        return asyncio.wrap_future(self._executor().submit(job)), handle.cancel


def warm_up_engine() -> None:
    """Kernels (the route solvers' and the games' own searches') and CP-SAT
    loaded before the first request, so that no request waits for them."""
    warm_up_all(lambda line: None, cpsat=True)


def worker_main(jobs_fd: int, cancels_fd: int, preload: tuple[str, ...]) -> None:
    """A worker process: load the engine (and the ``preload`` modules, where the
    jobs' functions live), then run jobs until the pipe closes. A second thread
    listens for cancels of the job that runs."""
    jobs, cancels = Connection(jobs_fd), Connection(cancels_fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the server, which stops its workers
    warm_up_engine()
    for module in preload:
        importlib.import_module(module)
    lock = threading.Lock()
    current: list[Any] = [None, None, None]  # job number, its cancel handle, the last job cancelled

    def listen() -> None:
        while True:
            try:
                number = cancels.recv()
            except (EOFError, OSError):
                return
            with lock:
                current[2] = number  # a cancel that arrives before its job
                handle = current[1] if current[0] == number else None
            if handle is not None:
                handle.cancel()

    threading.Thread(target=listen, daemon=True).start()
    jobs.send("ready")
    while True:
        try:
            message = jobs.recv()
        except (EOFError, OSError):
            return
        number, fn, args, seconds = message
        handle = deadline.Deadline(None)
        with lock:
            current[:2] = [number, handle]
            if current[2] == number:
                handle.cancel()
        try:
            reply: tuple = (True, run_job(fn, args, seconds, handle))
        except Exception as exc:  # sent back: the service answers it (a named error, or a 500)
            reply = (False, exc)
        with lock:
            current[:2] = [None, None]
        try:
            jobs.send(reply)
        except Exception as exc:  # an answer or error that does not pickle: a bug, answered as one
            jobs.send((False, RuntimeError(f"unsendable result: {type(exc).__name__}: {exc}")))


class _Worker:
    """A worker process and its two pipes (jobs and answers; cancels). Started as
    ``python -c`` with this process's import path, not by ``multiprocessing``,
    whose spawn would run the server's main script again in every worker."""

    def __init__(self, preload: tuple[str, ...]) -> None:
        jobs, child_jobs = socket.socketpair()
        cancels, child_cancels = socket.socketpair()
        code = (
            f"import sys; sys.path[:0] = {sys.path!r}; from service.workers import worker_main; "
            f"worker_main({child_jobs.fileno()}, {child_cancels.fileno()}, {preload!r})"
        )
        fds = (child_jobs.fileno(), child_cancels.fileno())
        self.process = subprocess.Popen([sys.executable, "-c", code], pass_fds=fds, stdin=subprocess.DEVNULL)
        child_jobs.close()  # so that the worker's death ends a wait on its pipe
        child_cancels.close()
        self.jobs = Connection(jobs.detach())
        self.cancels = Connection(cancels.detach())

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(5)

    def close(self) -> None:
        self.jobs.close()
        self.cancels.close()


class ProcessWorkers:
    """Jobs in worker processes (started fresh: no locks or threads of the
    server inherited); each imports the ``preload`` modules when it starts,
    so that no job pays for importing its function."""

    def __init__(self, size: int, preload: tuple[str, ...] = ()):
        self.size = size
        self.preload = preload
        self.running = 0
        self._idle: asyncio.Queue[_Worker] | None = None
        self._all: set[_Worker] = set()
        self._numbers = itertools.count(1)
        self._started: asyncio.Future | None = None
        self._io: ThreadPoolExecutor | None = None

    async def start(self) -> None:
        if self._started is None:
            self._idle = asyncio.Queue()
            # blocking pipe reads and writes, off the event loop: two per worker
            self._io = ThreadPoolExecutor(2 * self.size + 2, thread_name_prefix="worker-io")
            self._started = asyncio.ensure_future(asyncio.gather(*(self._add() for _ in range(self.size))))
        await asyncio.shield(self._started)

    async def _add(self) -> None:
        """Start a worker and queue it as idle once its engine is loaded."""
        worker = _Worker(self.preload)
        self._all.add(worker)
        loop = asyncio.get_running_loop()
        ready = loop.run_in_executor(self._io, worker.jobs.poll, START_TIMEOUT)
        if not await ready or await loop.run_in_executor(self._io, worker.jobs.recv) != "ready":
            raise RuntimeError("a solve worker did not start")
        assert self._idle is not None
        self._idle.put_nowait(worker)

    def stop(self) -> None:
        for worker in list(self._all):
            worker.kill()
        self._all.clear()
        if self._io is not None:
            self._io.shutdown(wait=False, cancel_futures=True)
        self._started = self._io = None  # a later start begins afresh

    def submit(self, fn: Callable, args: tuple, seconds: float) -> tuple[asyncio.Future, Callable[[], None]]:
        """The job's future and what cancels it."""
        number = next(self._numbers)
        gone = asyncio.Event()
        state: dict[str, _Worker] = {}

        def cancel() -> None:
            gone.set()
            worker = state.get("on")
            if worker is not None:
                try:
                    worker.cancels.send(number)
                except OSError:
                    pass  # the worker is gone already

        task = asyncio.ensure_future(self._run(number, fn, args, seconds, gone, state))
        return task, cancel

    async def _run(
        self, number: int, fn: Callable, args: tuple, seconds: float, gone: asyncio.Event, state: dict
    ) -> Any:
        await self.start()
        assert self._idle is not None
        worker = await self._idle.get()
        if gone.is_set():
            self._idle.put_nowait(worker)
            raise ClientGone()
        loop = asyncio.get_running_loop()
        state["on"] = worker
        self.running += 1
        try:
            try:
                await loop.run_in_executor(self._io, worker.jobs.send, (number, fn, args, seconds))
            except OSError as exc:  # the worker died while idle
                await self._replace(worker, None)
                raise WorkerLost(f"the solve worker had died ({exc})") from exc
            reply = loop.run_in_executor(self._io, worker.jobs.recv)
            left = asyncio.ensure_future(gone.wait())
            await asyncio.wait(
                {reply, left}, timeout=seconds + deadline.GRACE + KILL_AFTER, return_when="FIRST_COMPLETED"
            )
            if not reply.done() and gone.is_set():  # cancelled: the search stops at its next check
                await asyncio.wait({reply}, timeout=KILL_AFTER)
            left.cancel()
            if not reply.done():
                LOG.warning("killing a solve worker that went on %g s past its job's limit or cancel", KILL_AFTER)
                await self._replace(worker, reply)
                raise TimeLimitError(f"ran out ({seconds:g} s) and the work did not stop: it was killed")
            try:
                ok, value = reply.result()
            except (EOFError, OSError) as exc:
                await self._replace(worker, reply)
                raise WorkerLost(f"the solve worker died ({exc or type(exc).__name__})") from exc
            except Exception as exc:  # an answer or error that does not unpickle here: a bug, answered as one
                ok, value = False, RuntimeError(f"unreadable reply from a solve worker: {exc!r}")
        finally:
            self.running -= 1
            state.pop("on", None)
        self._idle.put_nowait(worker)
        if not ok:
            raise value
        return value

    async def _replace(self, worker: _Worker, reply: asyncio.Future | None) -> None:
        """Kill a worker (its pending read ends) and start another in its place."""
        self._all.discard(worker)
        worker.kill()
        if reply is not None:
            await asyncio.wait({reply}, timeout=5)
        worker.close()
        task = asyncio.ensure_future(self._add())
        task.add_done_callback(lambda t: t.cancelled() or t.exception() and LOG.error("%s", t.exception()))
