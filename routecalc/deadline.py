"""The time limit of one request, seen by every phase of its work.

An entry point (the API's ``solve``, a CLI run, a service request) opens a
:class:`Deadline` with :func:`within`; reading the position, compiling it,
listing routes and every solver phase below then look at the same clock
through :func:`current` / :func:`check`, so the limit covers the whole run,
not only the search. The deadline lives in a context variable: each thread
(each service request) has its own.

A deadline can also be cancelled (the service does so when a client hangs
up): every check then fails at once and the hooks registered with
:meth:`Deadline.on_cancel` run (CP-SAT's ``stop_search``), so abandoned work
frees its thread at the next check. The clock only stops work here; it
never chooses how the work is done.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from .errors import TimeLimitError

#: Seconds past its limit that work with no partial answer (reading a position,
#: compiling it, building a model) may go on before it is stopped: a small
#: position read with a tiny limit is still solved (``feasible``). Within the
#: promise that a run with a limit of T answers within T + 1 s.
GRACE = 0.5


class Deadline:
    """A point in ``time.perf_counter`` time (or none) and a cancel flag."""

    def __init__(self, seconds: float | None, parent: Deadline | None = None):
        self.started = time.perf_counter()
        self.at = None if seconds is None else self.started + seconds
        self.parent = parent  # an enclosing deadline: its cancelling stops this one too
        self._cancelled = False
        self._hooks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    @property
    def cancelled(self) -> bool:
        return self._cancelled or (self.parent is not None and self.parent.cancelled)

    def left(self) -> float | None:
        """Seconds left (never below zero), or None without a limit."""
        return None if self.at is None else max(0.0, self.at - time.perf_counter())

    def expired(self) -> bool:
        return self.cancelled or (self.at is not None and time.perf_counter() >= self.at)

    def check(self, doing: str) -> None:
        """Raise :class:`TimeLimitError` naming what was being done if the
        limit passed GRACE ago (work that has no partial answer may finish
        a little late rather than answer nothing), or at once if cancelled."""
        if self.cancelled:
            raise TimeLimitError(f"cancelled while {doing} (the client went away)")
        if self.at is not None and time.perf_counter() >= self.at + GRACE:
            # Not the seconds: a run hands on what is left of its limit after
            # reading (the CLI) or a share of it (a drawing), so the same
            # input would name other limits by where it came from.
            raise TimeLimitError(f"ran out while {doing}")

    def cancel(self) -> None:
        """Stop the work: checks fail from now on and the cancel hooks run."""
        with self._lock:
            self._cancelled = True
            hooks = list(self._hooks)
        for hook in hooks:
            hook()

    @contextmanager
    def on_cancel(self, hook: Callable[[], None]) -> Iterator[None]:
        """Run ``hook`` if the deadline is cancelled while the block runs."""
        with self._lock:
            self._hooks.append(hook)
        try:
            if self.parent is None:
                if self.cancelled:
                    hook()
                yield
            else:
                with self.parent.on_cancel(hook):
                    if self.cancelled:
                        hook()
                    yield
        finally:
            with self._lock:
                self._hooks.remove(hook)


_current: ContextVar[Deadline | None] = ContextVar("routecalc_deadline", default=None)


def current() -> Deadline | None:
    return _current.get()


@contextmanager
def within(seconds: float | None = None, deadline: Deadline | None = None) -> Iterator[Deadline]:
    """Run the block under a deadline: ``deadline`` itself, or one ``seconds``
    from now; an enclosing deadline that ends sooner still holds."""
    outer = _current.get()
    if deadline is None:
        if (
            outer is not None
            and outer.at is not None
            and (seconds is None or outer.at - time.perf_counter() <= seconds)
        ):
            yield outer
            return
        deadline = Deadline(seconds, parent=outer)
    mine = deadline
    token = _current.set(mine)
    try:
        yield mine
    finally:
        _current.reset(token)


@contextmanager
def paused() -> Iterator[None]:
    """Run a block that is not the request's own work (the kernels' one-off
    compile after an install): the current deadline moves on by the time it
    takes, so that the answer does not depend on whether the cache was warm."""
    deadline = _current.get()
    started = time.perf_counter()
    try:
        yield
    finally:
        if deadline is not None and deadline.at is not None:
            deadline.at += time.perf_counter() - started


def check(doing: str) -> None:
    """Fail with :class:`TimeLimitError` if the current deadline has passed."""
    deadline = _current.get()
    if deadline is not None:
        deadline.check(doing)


def expired() -> bool:
    deadline = _current.get()
    return deadline is not None and deadline.expired()


def clip(seconds: float | None) -> float | None:
    """``seconds``, or less if the current deadline leaves less."""
    deadline = _current.get()
    left = None if deadline is None else deadline.left()
    if left is None:
        return seconds
    return left if seconds is None else min(seconds, left)


class Ticker:
    """Cheap checks inside a hot Python loop: the clock is read every ``every`` calls."""

    def __init__(self, doing: str, every: int = 256):
        self.doing = doing
        self.every = every
        self.count = 0
        self.deadline = _current.get()

    def tick(self) -> None:
        if self.deadline is None:
            return
        self.count += 1
        if self.count % self.every == 0:
            self.deadline.check(self.doing)
