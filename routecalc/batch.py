"""Many positions at once: ``routecalc batch``.

Positions come from files, folders (searched recursively) or JSON-lines
files; each becomes one JSON line of the output (``file``, ``solver``,
``answer`` or the named ``error``, ``seconds`` and ``cpu_seconds`` of the
solve, the ``node`` and ``pid`` that ran it, and the corpus ``reference``
figures when the input is a corpus wrapper). Lines are written and flushed
as the results arrive, in completion order, so a crash or Ctrl-C loses
nothing written and ``resume`` skips what is already there.

Three engines run the same jobs: Ray (an embedded local instance, or an
existing cluster by address), local processes when Ray is not installed,
and the calling process itself. Every worker loads the kernels once and
solves whole batches of positions, not one task per position. An embedded
Ray starts in a thread while the calling process solves positions itself
from the same queue, until every Ray worker has its kernels loaded: the
seconds Ray takes to start are not seconds lost.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import logging
import os
import queue
import re
import resource
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import PositionError
from .model import read_json, unwrap

ENGINES = ("auto", "ray", "processes", "inline")
#: Batches handed to one worker before it returns any: the next is ready when one ends.
IN_FLIGHT_PER_WORKER = 2
#: Positions per batch at most; fewer when there are few positions per worker.
MAX_BATCH = 16
#: The embedded Ray's priority below the calling process, which solves beside it (``nice``).
RAY_NICENESS = 10
#: prctl(2): the signal a process gets when the thread that started it ends.
PR_SET_PDEATHSIG = 1
#: Seconds a cluster's address may take to accept a connection.
ADDRESS_TIMEOUT = 10.0
#: HTTP/2's connection opening (RFC 9113, 3.4) with an empty SETTINGS frame,
#: and the type of frame a server answers it with.
HTTP2_OPENING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
HTTP2_SETTINGS = 4
#: Seconds an external solver may run past the time limit before it is stopped.
EXTERNAL_GRACE = 5.0


@dataclass(frozen=True)
class Item:
    """One position read from the inputs; ``error`` instead when it cannot be read."""

    key: str  # the file, or ``file:line`` for a JSON-lines input
    position: dict | None = None  # the bare position (a corpus wrapper's reference is kept apart)
    reference: dict | None = None  # the wrapper's figures, see :func:`reference_figures`
    error: tuple[str, str] | None = None  # (where, message) of a PositionError: plain data crosses processes


@dataclass(frozen=True)
class Job:
    """One solver on one position."""

    item: Item
    solver: str


@dataclass(frozen=True)
class Settings:
    """What every worker needs besides the jobs."""

    time_limit: float | None = None
    route_limit: int | None = None
    externals: dict[str, str] = field(default_factory=dict)  # solver name -> "CMD {file}"


def reference_figures(reference: Any) -> dict[str, int]:
    """The corpus wrapper's figures by source: ``optimum`` (the oracle's, where it
    is certified exact), ``recorded`` (the player's run as the engine scores it),
    ``autorouter`` (18xx.games), ``navig18xx``."""

    def figure(source: str, key: str = "total") -> int | None:
        """A whole number the wrapper holds, or None (absent, or not a figure)."""
        part = reference.get(source) if isinstance(reference, dict) else None
        value = part.get(key) if isinstance(part, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    figures = {}
    oracle = reference.get("oracle") if isinstance(reference, dict) else None
    if isinstance(oracle, dict) and oracle.get("exact") is True and figure("oracle") is not None:
        figures["optimum"] = figure("oracle")
    recorded = figure("recorded")
    if recorded is None:  # old games store none: the engine's recomputed total stands in
        recorded = figure("recomputed")
    for name, value in (
        ("recorded", recorded),
        ("autorouter", figure("autorouter")),
        ("navig18xx", figure("best", "revenue")),
    ):
        if value is not None:
            figures[name] = value
    return figures


def _item(key: str, data: Any) -> Item:
    try:
        position = unwrap(data)
    except PositionError as exc:
        return Item(key, error=(exc.where, exc.message))
    reference = data.get("reference") if position is not data else None
    return Item(key, position, reference_figures(reference) or None)


def _read_lines(path: Path) -> Iterator[Item]:
    """One position a line. Lines end at a newline only (a JSON string may
    hold U+2028 and other line breaks of Unicode), and each is decoded on its
    own, so that a bad byte spoils only its own line."""
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        yield Item(str(path), error=(str(path), f"cannot read: {exc.strerror or exc}"))
        return
    for number, line in enumerate(lines, 1):
        if line.strip():
            key = f"{path}:{number}"
            try:
                yield _item(key, read_json(line))
            except PositionError as exc:  # the line, or the field past a reading limit
                yield Item(key, error=(key if exc.where == "json" else exc.where, exc.message))


def _read_file(path: Path) -> Iterator[Item]:
    if path.suffix in (".jsonl", ".ndjson"):
        yield from _read_lines(path)
        return
    try:
        yield _item(str(path), read_json(path))
    except PositionError as exc:
        yield Item(str(path), error=(exc.where, exc.message))


def read_inputs(inputs: Iterable[str | Path], output: Path | None = None) -> list[Item]:
    """The positions of files, folders (every ``*.json`` and ``*.jsonl`` below,
    sorted) and JSON-lines files, each once however it is named, in the order
    given; never the run's own ``output`` (batch's results file, or the folder
    bench writes its results and table to), which may lie in a folder read.
    An input given that is the output is refused: the run would empty it."""
    items: dict[str, Item] = {}
    mine = output.resolve() if output is not None else None
    seen: set[Path] = set()
    for given in inputs:
        path = Path(given)
        if mine is not None and not path.is_dir() and _written(path.resolve(), mine):
            raise PositionError("output", f"{given} is an input too: the results would overwrite it")
        files = (
            sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl", ".ndjson") and p.is_file())
            if path.is_dir()
            else [path]
        )
        for file in files:
            if (real := file.resolve()) in seen or (mine is not None and _written(real, mine)):
                continue
            seen.add(real)
            for item in _read_file(file):
                items.setdefault(item.key, item)
    return list(items.values())


def _written(file: Path, output: Path) -> bool:
    """Whether ``file`` is the run's output or lies in its output folder."""
    return file == output or output in file.parents


def parse_external(specs: Sequence[str]) -> dict[str, str]:
    """Solver names for ``--external`` commands: ``NAME=CMD {file}`` names one,
    a bare ``CMD {file}`` is ``external`` (``external2``... for more)."""
    named = {}
    for number, spec in enumerate(specs, 1):
        match = re.match(r"^([A-Za-z][\w.-]*)=(.+)$", spec)
        name, command = (
            (match.group(1), match.group(2)) if match else ("external" if number == 1 else f"external{number}", spec)
        )
        if "{file}" not in command:
            raise PositionError("external", f"{command!r} has no {{file}} for the position file")
        named[name] = command
    return named


# --- the worker side ----------------------------------------------------------------------


def _run_external(command: str, position: dict, time_limit: float | None) -> dict:
    """Run another solver on a position file; its standard output is the answer."""
    with tempfile.TemporaryDirectory(prefix="routecalc-") as folder:
        file = Path(folder) / "position.json"
        file.write_text(json.dumps(position))
        argv = [part.replace("{file}", str(file)) for part in shlex.split(command)]
        timeout = time_limit + EXTERNAL_GRACE if time_limit else None
        try:
            # a session of its own, so that a timeout kills what it started too (a
            # wrapper script's own children went on running)
            with subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
            ) as child:
                try:
                    stdout, stderr = child.communicate(timeout=timeout)
                except subprocess.TimeoutExpired:
                    with suppress(ProcessLookupError):
                        os.killpg(child.pid, signal.SIGKILL)
                    child.communicate()
                    raise PositionError("external", f"{argv[0]} ran past the time limit ({time_limit} s)") from None
        except OSError as exc:
            raise PositionError("external", f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    if child.returncode != 0:
        last = (stderr.strip().splitlines() or stdout.strip().splitlines() or [""])[-1]
        raise PositionError("external", f"{argv[0]} exited with status {child.returncode}: {last}")
    try:
        answer = json.loads(stdout)
    except json.JSONDecodeError:
        raise PositionError("external", f"{argv[0]} printed no JSON answer") from None
    revenue = answer.get("revenue") if isinstance(answer, dict) else None
    if not isinstance(revenue, int) or isinstance(revenue, bool):
        raise PositionError("external", f"{argv[0]} printed no answer with an integer revenue")
    if answer.get("status", "feasible") not in ("optimal", "feasible"):  # none: not proven
        raise PositionError("external", f"{argv[0]} printed a status other than optimal or feasible")
    return answer


def cpu_seconds() -> float:
    """CPU time of this process and of the children it waited for (an external solver)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def solve_job(job: Job, settings: Settings, node: str) -> dict:
    """The result line of one job; any failure becomes a named error, never a lost line."""
    from . import api

    record: dict[str, Any] = {"file": job.item.key, "solver": job.solver}
    if job.solver not in settings.externals:
        _warm_game(job.item.position)
    wall, cpu = time.perf_counter(), cpu_seconds()
    try:
        position = job.item.position
        if position is None:
            raise PositionError(*(job.item.error or ("position", "missing")))
        if job.solver in settings.externals:
            record["answer"] = _run_external(settings.externals[job.solver], position, settings.time_limit)
        else:
            record["answer"] = api.solve(
                position, job.solver, time_limit=settings.time_limit, route_limit=settings.route_limit
            )
    except PositionError as exc:
        record["error"] = {"kind": "PositionError", "message": str(exc), "where": exc.where}
    except Exception as exc:  # noqa: BLE001 - one position's fault must not end a run of thousands
        record["error"] = {"kind": type(exc).__name__, "message": str(exc), "where": None}
    record["seconds"] = round(time.perf_counter() - wall, 6)
    record["cpu_seconds"] = round(cpu_seconds() - cpu, 6)
    record["node"], record["pid"] = node, os.getpid()
    if job.item.reference:
        record["reference"] = job.item.reference
    return record


def _warm_game(position: dict | None) -> None:
    """The kernels of the position's game's own search (18Cuba's) loaded
    before its job's clock starts, as a worker loads the route kernels at its
    start: the first 18Cuba job of a worker took 0.2 s more for them, 5-8 s
    on a node where they were not compiled yet. Once a process; a game with
    no search of its own, or none named, loads nothing."""
    from .games import question

    game = position.get("game") if isinstance(position, dict) else None
    warm_up = question(game).warm_up if isinstance(game, str) else None
    if warm_up is not None:
        warm_up()


def _warm(solvers: Iterable[str]) -> None:
    from .solvers import KERNEL_SOLVERS, warm_up

    if set(solvers) & KERNEL_SOLVERS:
        warm_up()


class BatchWorker:
    """A worker that loads the kernels once, then solves batch after batch
    (a Ray actor, or the state of a local process)."""

    def __init__(self, solvers: Sequence[str], settings: Settings, node: str | None = None):
        _warm(solvers)
        self.settings = settings
        self.node = node or _ray_node() or socket.gethostname()

    def solve(self, jobs: Sequence[Job]) -> list[dict]:
        return [solve_job(job, self.settings, self.node) for job in jobs]


def _ray_node() -> str | None:
    try:
        import ray
    except ImportError:
        return None
    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else None


_process_worker: BatchWorker | None = None


def _start_process(solvers: Sequence[str], settings: Settings, parent: int) -> None:
    """A pool worker's start: it dies with the process that started it (a
    ``kill -9`` of a batch left its idle workers waiting on their queue)."""
    global _process_worker
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)  # gone before the signal was asked for
    _process_worker = BatchWorker(solvers, settings, socket.gethostname())


def _process_batch(jobs: Sequence[Job]) -> list[dict]:
    assert _process_worker is not None, "the pool's initializer starts the worker"
    return _process_worker.solve(jobs)


# --- the engines: jobs in, result lines out in completion order ----------------------------


def batch_size(remaining: int, workers: int) -> int:
    """Positions per task: big enough that a task's overhead is small, small
    enough that every worker gets several of what is left (the last ones
    balance the load)."""
    return max(1, min(MAX_BATCH, remaining // (workers * 4 * IN_FLIGHT_PER_WORKER)))


class WorkQueue:
    """The jobs not yet handed out, shared by the threads that hand them out:
    each job is taken exactly once, by whoever asks first."""

    def __init__(self, jobs: Iterable[Job]):
        self._jobs = deque(jobs)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._jobs)

    def take(self, workers: int, size: int | None = None) -> list[Job]:
        """The next batch: ``size`` jobs, or as many as :func:`batch_size` gives for what is left."""
        with self._lock:
            count = min(size or batch_size(len(self._jobs), workers), len(self._jobs))
            return [self._jobs.popleft() for _ in range(count)]

    def give_back(self, jobs: Iterable[Job]) -> None:
        """Jobs taken and never done (their worker went away): next in line again."""
        with self._lock:
            self._jobs.extendleft(reversed(list(jobs)))


def _solvers(jobs: Sequence[Job]) -> list[str]:
    return sorted({job.solver for job in jobs})


def run_inline(jobs: Sequence[Job], settings: Settings) -> Iterator[dict]:
    worker = BatchWorker(_solvers(jobs), settings, socket.gethostname())
    for job in jobs:
        yield solve_job(job, worker.settings, worker.node)


def run_processes(
    jobs: Sequence[Job], settings: Settings, workers: int | None = None, batch_size: int | None = None
) -> Iterator[dict]:
    """The jobs on a pool of local worker processes. A worker that dies (the
    OOM killer, a signal) breaks the pool and every batch it held; those jobs
    then run one at a time on a pool of one worker, so that only a job that
    breaks its worker again gets a line naming the error, and a new pool
    takes the jobs not yet handed out."""
    workers = workers or os.cpu_count() or 1
    solvers = _solvers(jobs)
    work = WorkQueue(jobs)
    while len(work):
        broken = yield from _pool_run(work, solvers, settings, workers, batch_size, workers * IN_FLIGHT_PER_WORKER)
        if broken:
            alone = WorkQueue(broken[0])
            while len(alone):
                again = yield from _pool_run(alone, solvers, settings, 1, 1, 1)
                if again:
                    yield from _lost_batch(*again)


def _pool_run(
    work: WorkQueue, solvers: list[str], settings: Settings, workers: int, batch_size: int | None, in_flight: int
) -> Generator[dict, None, tuple[list[Job], Exception] | None]:
    """Hand ``work`` out to a new pool, at most ``in_flight`` batches at once,
    and yield the lines; return the jobs of the batches it held when it
    broke, and why, or None once the work is done."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    # spawn, not fork: the parent may hold threads (OR-Tools, numba) that a fork would copy mid-state
    pool = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_process,
        initargs=(solvers, settings, os.getpid()),
    )
    running: dict = {}  # future -> its batch
    held: list[Job] = []  # the jobs of the batches the broken pool took down
    broke: Exception | None = None
    try:
        while True:
            while broke is None and len(work) and len(running) < in_flight:
                batch = work.take(workers, batch_size)
                try:
                    running[pool.submit(_process_batch, batch)] = batch
                except BrokenProcessPool as exc:  # broken since the last batch came back
                    work.give_back(batch)
                    broke = exc
            if not running:
                return (held, broke) if broke is not None else None
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                batch = running.pop(future)
                try:
                    yield from future.result()
                except BrokenProcessPool as exc:
                    held += batch
                    broke = exc
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def ray_available() -> bool:
    """Whether Ray is installed, without importing it (0.5 s the calling process need not pay: Ray runs apart)."""
    return importlib.util.find_spec("ray") is not None


@dataclass
class EngineFigures:
    """What starting and stopping the engine cost (Ray's overhead, stated in the summary)."""

    engine: str = ""
    init_seconds: float | None = None  # ray.init: the local instance started, or the cluster joined
    ready_seconds: float | None = None  # from the start until every worker had loaded the kernels
    stop_seconds: float | None = None  # ray.shutdown (the local instance's processes stopped)
    workers: int = 0
    driver_jobs: int = 0  # jobs the calling process solved itself while the workers started

    def text(self) -> str:
        if self.engine != "ray":
            return ""
        if self.init_seconds is None:
            parts = ["Ray was still starting when the work was done"]
        else:
            parts = [f"Ray started in {self.init_seconds:.2f} s"]
        if self.ready_seconds is not None:
            parts.append(f"its {self.workers} workers ready after {self.ready_seconds:.2f} s")
        if self.driver_jobs:
            parts.append(f"{self.driver_jobs} solved in the calling process meanwhile")
        if self.stop_seconds is not None:
            parts.append(f"stopped in {self.stop_seconds:.2f} s")
        return ", ".join(parts)


def _lost_batch(batch: Sequence[Job], exc: Exception) -> list[dict]:
    """Lines naming a dead worker's error on each position of its batch."""
    message = str(exc).splitlines()[0]
    return [
        {
            "file": job.item.key,
            "solver": job.solver,
            "error": {"kind": type(exc).__name__, "message": message, "where": None},
            "seconds": 0.0,
            "cpu_seconds": 0.0,
            "node": None,
            "pid": None,
        }
        for job in batch
    ]


NOTHING = object()  # no line has come from Ray yet


def ray_driver(
    conn,
    caller: int,
    solvers: Sequence[str],
    settings: Settings,
    address: str | None,
    workers: int | None,
    helped: bool,
) -> None:
    """The Ray driver, in a process and a process group of its own (so that
    stopping Ray, or abandoning its start when the work is done first, is
    killing that group, not Ray's graceful stop of 1.3 s; the same session, so
    the same scheduler group as the calling process, where a lower priority
    counts): starts Ray (or joins a cluster), one actor per CPU, and keeps
    each ready actor two batches deep with jobs asked from the calling
    process over ``conn``. It dies with the calling process (``caller``):
    on Linux by the parent-death signal, elsewhere within a second of
    noticing.

    ``helped``: the calling process solves from the same queue, so an actor
    gets work only once its kernels are loaded, and Ray runs at a lower
    priority (:data:`RAY_NICENESS`): its start-up takes the CPU the calling
    process leaves, not the calling process's. Otherwise each actor gets its
    two batches at once, queued behind its start-up (every node gets work
    even when there is little).

    It sends ``("started", workers)``, ``("ready",)`` once every actor has its
    kernels loaded, ``("take", count)`` answered with up to ``count`` batches
    (none: the work is done), ``("lines", records)`` and ``("error", message)``."""
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != caller:
        return  # gone already
    os.setpgid(0, 0)
    if helped and os.nice(0) < RAY_NICENESS:  # not started at that priority already (see RayEngine)
        os.nice(RAY_NICENESS)
    try:
        import ray

        # Ray's default for the embedded instance, token authentication, without the notice it prints
        logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)
        ray.init(
            address=address or "local",
            num_cpus=None if address else workers,
            include_dashboard=False,
            log_to_driver=False,
            logging_level="ERROR",
            configure_logging=False,
        )
        if address:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            workers = max(1, min(workers or cpus, cpus))
        count = workers or 1
        conn.send(("started", count))
        spread = ray.remote(num_cpus=1)(BatchWorker).options(scheduling_strategy="SPREAD")
        actors = [spread.remote(solvers, settings) for _ in range(count)]
        # an empty batch is the actor's "ready": it answers once its kernels are loaded
        running: dict[Any, tuple[Any, list[Job]]] = {actor.solve.remote([]): (actor, []) for actor in actors}
        for actor in [] if helped else actors:
            conn.send(("take", IN_FLIGHT_PER_WORKER))
            for batch in conn.recv():
                running[actor.solve.remote(batch)] = (actor, batch)
        ready = 0
        while running and os.getppid() == caller:
            done, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
            for ref in done:
                actor, batch = running.pop(ref)
                try:
                    records = ray.get(ref)
                except ray.exceptions.RayError as exc:  # the worker died: name it on each of its positions
                    records, actor = _lost_batch(batch, exc), None
                if records:
                    conn.send(("lines", records))
                if actor is None:
                    continue
                if not batch:
                    ready += 1
                    if ready == len(actors):
                        conn.send(("ready",))
                wanted = 1 if batch else IN_FLIGHT_PER_WORKER if helped else 0
                if wanted:
                    conn.send(("take", wanted))
                    for more in conn.recv():
                        running[actor.solve.remote(more)] = (actor, more)
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the calling process has gone
    except Exception as exc:  # noqa: BLE001 - the calling process raises it
        first = (str(exc).strip().splitlines() or [""])[0]
        with suppress(OSError):
            conn.send(("error", f"{type(exc).__name__}: {first}"))


def _start_and_watch(process, niceness: int, started: threading.Event) -> None:
    """Start the Ray driver and wait for its end. On Linux a thread's priority
    is its own and what it starts inherits it, so the driver runs at
    ``niceness`` from its first instruction (its interpreter's start and
    imports too); and the driver's parent-death signal fires when the thread
    that started it ends, so this thread lives as long as the driver."""
    try:
        if niceness and sys.platform == "linux":
            os.nice(niceness)
        process.start()
    finally:
        started.set()
    process.join()


class RayEngine:
    """The calling process's side of :func:`ray_driver`: a thread answering its
    requests from the shared queue and passing its lines on (``results``:
    lists of lines, the error it reported, ``None`` once it has gone).
    ``outstanding`` holds the jobs handed over and not yet back, so that the
    work is done exactly when the queue and it are both empty."""

    def __init__(
        self, work: WorkQueue, solvers: Sequence[str], settings: Settings, address, workers, size, figures, helps
    ):
        import multiprocessing

        self.work, self.size, self.figures = work, size, figures
        self.workers = (workers or 1) + helps  # the batch sizes count the calling process too
        self.lock = threading.Lock()
        self.outstanding: dict[tuple[str, str], Job] = {}
        self.results: queue.Queue[list[dict] | BaseException | None] = queue.Queue()
        self.started = time.perf_counter()
        context = multiprocessing.get_context("spawn")
        self.conn, theirs = context.Pipe()
        self.process = context.Process(
            target=ray_driver,
            args=(theirs, os.getpid(), solvers, settings, address, workers, helps),
            name="routecalc-ray",
            daemon=True,
        )
        started = threading.Event()
        self.watcher = threading.Thread(
            target=_start_and_watch,
            args=(self.process, RAY_NICENESS if helps else 0, started),
            name="routecalc-ray-watch",
            daemon=True,
        )
        self.watcher.start()
        started.wait()
        theirs.close()
        if self.process.pid is None:
            raise RuntimeError("the Ray driver process did not start")
        self.broker = threading.Thread(target=self._serve, name="routecalc-ray-broker", daemon=True)
        self.broker.start()

    def _serve(self) -> None:
        try:
            while True:
                message = self.conn.recv()
                kind = message[0]
                if kind == "take":
                    with self.lock:
                        batches = [
                            batch for _ in range(message[1]) if (batch := self.work.take(self.workers, self.size))
                        ]
                        self.outstanding.update(((job.item.key, job.solver), job) for batch in batches for job in batch)
                    self.conn.send(batches)
                elif kind == "lines":
                    with self.lock:
                        self.results.put(message[1])
                        for record in message[1]:
                            self.outstanding.pop((record["file"], record["solver"]), None)
                elif kind == "started":
                    self.figures.init_seconds = time.perf_counter() - self.started
                    self.figures.workers = message[1]
                elif kind == "ready":
                    self.figures.ready_seconds = time.perf_counter() - self.started
                elif kind == "error":
                    self.results.put(RuntimeError(f"Ray: {message[1]}"))
        except (EOFError, OSError):
            pass
        finally:
            self.results.put(None)

    def finished(self) -> bool:
        with self.lock:
            return not len(self.work) and not self.outstanding

    def take_back(self) -> list[Job]:
        """The jobs handed over and never answered (the driver process is gone)."""
        with self.lock:
            jobs, self.outstanding = list(self.outstanding.values()), {}
            return jobs

    def stop(self) -> None:
        stopping = time.perf_counter()
        if self.process.pid is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # Ray's processes: the driver's group
            except (ProcessLookupError, PermissionError):
                pass  # not yet in a group of its own, hence not yet starting Ray
            self.process.kill()
        self.watcher.join()
        self.conn.close()
        self.broker.join()
        self.figures.stop_seconds = time.perf_counter() - stopping


def run_ray(
    jobs: Sequence[Job],
    settings: Settings,
    address: str | None = None,
    workers: int | None = None,
    batch_size: int | None = None,
    figures: EngineFigures | None = None,
    driver_helps: bool | None = None,
) -> Iterator[dict]:
    """Jobs on Ray actors, one per CPU of the cluster (spread over its nodes),
    each fed the next batch as soon as one of its two comes back.

    ``driver_helps`` (default: with the embedded Ray, whose CPUs are this
    machine's) makes the calling process one of the workers: Ray gets the
    other CPUs, and this process solves jobs from the same queue from the
    start, while Ray is still starting (and whatever is left if Ray fails)."""
    figures = figures or EngineFigures()
    figures.engine = "ray"
    helps = address is None if driver_helps is None else driver_helps
    if helps and not address:
        workers = max(1, (workers or os.cpu_count() or 1) - 1)
    work = WorkQueue(jobs)
    # the kernels loaded here first: the first solve does not wait behind Ray's start
    helper = BatchWorker(_solvers(jobs), settings, socket.gethostname()) if helps else None
    engine = RayEngine(work, _solvers(jobs), settings, address, workers, batch_size, figures, helps)
    gone = False  # the driver process has ended (its error, if any, raised already)
    try:
        while True:
            try:
                got = engine.results.get_nowait()
            except queue.Empty:
                got = NOTHING
            if got is NOTHING:
                job = work.take(1, 1) if helper else []
                if helper and job:
                    yield solve_job(job[0], settings, helper.node)
                    figures.driver_jobs += 1
                    continue
                if engine.finished():
                    break
                if gone:
                    lost = engine.take_back()
                    if not helps:
                        left = len(work) + len(lost)
                        raise RuntimeError(f"Ray stopped with {left} positions to go; rerun with --resume")
                    work.give_back(lost)
                    continue
                got = engine.results.get()
            if got is None:
                gone = True
            elif isinstance(got, BaseException):
                raise got
            else:
                yield from got
    finally:
        engine.stop()


def check_address(address: str) -> None:
    """A ``HOST:PORT`` where no Ray cluster listens is a named error, not a
    ray.init that waits for minutes: nothing accepts the connection, or
    what does is not a gRPC server (a Ray head's control store is one, and
    answers HTTP/2's opening with a SETTINGS frame). A cluster set up for
    TLS (``RAY_USE_TLS``) is only asked to accept the connection."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return  # another form Ray understands (ray://..., auto): Ray says what is wrong
    try:
        with socket.create_connection((host, int(port)), timeout=ADDRESS_TIMEOUT) as link:
            if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
                return
            link.sendall(HTTP2_OPENING)
            first = _received(link, 9)  # a frame header: length (3 bytes), type, flags, stream
    except OSError as exc:
        raise PositionError("address", f"no Ray cluster answers at {address}: {exc.strerror or exc}") from None
    if len(first) < 9 or first[3] != HTTP2_SETTINGS:
        raise PositionError("address", f"what answers at {address} is not a Ray cluster (it does not speak gRPC)")


def _received(link: socket.socket, size: int) -> bytes:
    """Up to ``size`` bytes, fewer if the other side closes or goes quiet."""
    data = b""
    with suppress(TimeoutError):
        while len(data) < size and (chunk := link.recv(size - len(data))):
            data += chunk
    return data


def run_jobs(
    jobs: Sequence[Job],
    settings: Settings,
    engine: str = "auto",
    address: str | None = None,
    workers: int | None = None,
    batch_size: int | None = None,
    figures: EngineFigures | None = None,
    driver_helps: bool | None = None,
) -> Iterator[dict]:
    """Result lines of the jobs, in completion order, from the engine chosen
    (named in ``figures``, with what its start and stop cost); ``driver_helps``
    as for :func:`run_ray`."""
    figures = figures or EngineFigures()
    if engine == "auto":
        engine = "ray" if address or ray_available() else "processes"
    if address and engine != "ray":
        raise PositionError("address", f"a cluster address needs the ray engine, not {engine!r}")
    if address:
        check_address(address)
    if engine == "ray":
        if not ray_available():
            raise PositionError("engine", "Ray is not installed: pip install 'routecalc[cluster]'")
        return run_ray(jobs, settings, address, workers, batch_size, figures, driver_helps)
    figures.engine = engine
    if engine == "processes":
        return run_processes(jobs, settings, workers, batch_size)
    if engine == "inline":
        return run_inline(jobs, settings)
    raise PositionError("engine", f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")


# --- the output file ----------------------------------------------------------------------


def read_results(path: Path) -> list[dict]:
    """The complete lines of a results file (a line cut short by a crash is left out)."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def _open_output(path: Path, resume: bool):
    """The results file for appending: empty, or (resuming) cut after its last complete line."""
    try:
        if not resume or not path.exists():
            return path.open("w")
        text = path.read_bytes()
        keep = text.rfind(b"\n") + 1
        if keep < len(text):
            with path.open("r+b") as out:
                out.truncate(keep)
        return path.open("a")
    except OSError as exc:
        raise PositionError("output", f"cannot write {path}: {exc.strerror or exc}") from None


@dataclass
class Summary:
    """The figures a person wants at the end of a run."""

    count: int
    optimal: int
    feasible: int
    errors: int
    total_seconds: float
    median_seconds: float
    cpu_seconds: float
    certified: int  # positions with a certified optimum
    equal_optimum: int  # ... and the answer equal to it

    @classmethod
    def of(cls, records: Sequence[dict]) -> Summary:
        statuses = [(r.get("answer") or {}).get("status") for r in records]
        seconds = [r["seconds"] for r in records]
        optima = [
            (r["answer"]["revenue"] if "answer" in r else None, r["reference"]["optimum"])
            for r in records
            if "optimum" in (r.get("reference") or {})
        ]
        return cls(
            count=len(records),
            optimal=statuses.count("optimal"),
            feasible=statuses.count("feasible"),
            errors=sum("error" in r for r in records),
            total_seconds=sum(seconds),
            median_seconds=statistics.median(seconds) if seconds else 0.0,
            cpu_seconds=sum(r.get("cpu_seconds", 0.0) for r in records),
            certified=len(optima),
            equal_optimum=sum(got == want for got, want in optima),
        )

    def text(self) -> str:
        line = (
            f"{self.count} positions: {self.optimal} optimal, {self.feasible} feasible, {self.errors} errors; "
            f"solve time total {self.total_seconds:.2f} s (CPU {self.cpu_seconds:.2f} s), "
            f"median {self.median_seconds * 1000:.1f} ms"
        )
        if self.certified:
            line += f"; equal to the certified optimum {self.equal_optimum}/{self.certified}"
        return line


@dataclass
class Run:
    """What one call of :func:`run_batch` did."""

    written: int  # lines written by this run
    skipped: int  # jobs already in the output (resume)
    wall_seconds: float
    start_seconds: float  # until the first line arrived: the engine's start-up (workers, kernels) and one batch
    summary: Summary  # of the whole output file
    nodes: dict[str, int]  # lines of this run per node
    engine: EngineFigures  # the engine that ran and what its start and stop cost


def todo(jobs: Sequence[Job], output: Path, resume: bool) -> list[Job]:
    """The jobs still to run: all of them, or (resuming) those without a line
    in the output, however the run that wrote it named their files
    (``a.json``, ``./a.json``, its absolute path)."""
    if not resume:
        return list(jobs)
    same = SameInput()
    done = {(same(r.get("file")), r.get("solver")) for r in read_results(output)}
    return [job for job in jobs if (same(job.item.key), job.solver) not in done]


class SameInput:
    """An input's key (a file, or ``file:line`` in a JSON-lines file) with its
    file's real path, so that two names of one file match; a key naming no
    file here is kept as it is. Each file is looked up once (an archive's
    lines share theirs)."""

    def __init__(self) -> None:
        self.real: dict[str, str | None] = {}

    def _file(self, name: str) -> str | None:
        if name not in self.real:
            path = Path(name)
            self.real[name] = str(path.resolve()) if path.is_file() else None
        return self.real[name]

    def __call__(self, key: object) -> object:
        if not isinstance(key, str):
            return key
        if (real := self._file(key)) is not None:
            return real
        head, colon, line = key.rpartition(":")
        if colon and line.isdigit() and (real := self._file(head)) is not None:
            return f"{real}:{line}"
        return key


def run_batch(
    jobs: Sequence[Job],
    output: Path,
    settings: Settings,
    *,
    resume: bool = False,
    engine: str = "auto",
    address: str | None = None,
    workers: int | None = None,
    batch_size: int | None = None,
    on_line: Callable[[dict], None] | None = None,
    driver_helps: bool | None = None,
) -> Run:
    """Solve the jobs into ``output``, one flushed line each as it arrives.

    ``resume`` keeps the lines already there and skips their (file, solver);
    ``driver_helps`` as for :func:`run_ray`."""
    output = Path(output)
    remaining = todo(jobs, output, resume)
    started = time.perf_counter()
    nodes: dict[str, int] = {}
    first = 0.0
    figures = EngineFigures()
    with _open_output(output, resume) as out:
        if remaining:
            for record in run_jobs(remaining, settings, engine, address, workers, batch_size, figures, driver_helps):
                first = first or time.perf_counter() - started
                out.write(json.dumps(record) + "\n")
                out.flush()
                nodes[str(record.get("node"))] = nodes.get(str(record.get("node")), 0) + 1
                if on_line:
                    on_line(record)
    wall = time.perf_counter() - started
    same = SameInput()
    wanted = {(same(job.item.key), job.solver) for job in jobs}
    mine = [r for r in read_results(output) if (same(r.get("file")), r.get("solver")) in wanted]
    return Run(len(remaining), len(jobs) - len(remaining), wall, first, Summary.of(mine), nodes, figures)


def jobs_for(items: Sequence[Item], solvers: Sequence[str]) -> list[Job]:
    """Every solver on every position, position by position (so the solvers
    share the machine's noise alike)."""
    return [Job(item, solver) for item in items for solver in solvers]


# --- the command --------------------------------------------------------------------------


@contextmanager
def progress_bar(total: int, enabled: bool) -> Iterator[Callable[[dict], None]]:
    """A callback per result line drawing a bar on standard error (done/total, rate, ETA), or one doing nothing."""
    if not enabled:
        yield lambda record: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task) -> Text:
            return Text(f"{task.speed:.1f}/s" if task.speed else "-/s", style="progress.data.speed")

    with Progress(
        "batch",
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        "ETA",
        TimeRemainingColumn(),
        console=Console(stderr=True),
    ) as shown:
        task = shown.add_task("batch", total=total)
        yield lambda record: shown.advance(task)


def check_solvers(solvers: Sequence[str], settings: Settings) -> None:
    from .solvers import SOLVERS

    known = [*SOLVERS, *settings.externals]
    for solver in solvers:
        if solver not in known:
            raise PositionError("solver", f"unknown solver {solver!r} (known: {', '.join(known)})")


def settings_of(args) -> Settings:
    return Settings(args.time_limit, args.route_limit, parse_external(args.external or []))


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def batch_command(args, jobs: Callable[[Settings], list[Job]], output: Path) -> Run | int:
    """The part ``batch`` and ``bench`` share: run the jobs with the command's
    options and a progress bar; an exit status instead when it cannot finish
    (2 bad input, 130 Ctrl-C: the lines written stay for ``--resume``).
    SIGTERM ends it as Ctrl-C does, the engine's workers stopped on the way."""
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        settings = settings_of(args)
        chosen = jobs(settings)
        if not chosen:  # a folder of no positions, an empty JSON-lines file: likely a wrong path
            raise PositionError("inputs", "no positions found (files *.json or *.jsonl, or folders holding them)")
        check_solvers(sorted({job.solver for job in chosen}), settings)
        count = len(todo(chosen, output, args.resume))
        with progress_bar(count, args.progress and count > 0) as advance:
            return run_batch(
                chosen,
                output,
                settings,
                resume=args.resume,
                engine=args.engine,
                address=args.address,
                workers=args.workers,
                batch_size=args.batch_size,
                on_line=advance,
            )
    except PositionError as exc:
        print(json.dumps({"error": str(exc), "where": exc.where}), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted: the lines written to {output} stay; --resume goes on from there", file=sys.stderr)
        return 130


def cli_batch(args) -> int:
    """``routecalc batch``: exit 0, 2 when a position could not be solved, 130 on Ctrl-C."""
    output = Path(args.output)
    run = batch_command(args, lambda settings: jobs_for(read_inputs(args.inputs, output), [args.solver]), output)
    if isinstance(run, int):
        return run
    nodes = ", ".join(f"{node} {count}" for node, count in sorted(run.nodes.items()))
    print(
        f"{run.written} solved in {run.wall_seconds:.2f} s wall (the first after {run.start_seconds:.2f} s)"
        + (f", {run.skipped} already in {output}" if run.skipped else "")
        + (f"; lines per node: {nodes}" if len(run.nodes) > 1 else ""),
        file=sys.stderr,
    )
    if run.engine.text():
        print(run.engine.text(), file=sys.stderr)
    print(run.summary.text(), file=sys.stderr)
    return 2 if run.summary.errors else 0
