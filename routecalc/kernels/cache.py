"""The kernels and their disk cache: every kernel is declared with the
signatures a solve calls it with, and :func:`load` brings those
specialisations in once, from numba's disk cache, before the first solve.

numba's own cache hit first refreshes its whole compiler (it imports every
typing and lowering registry, about as long as importing numba again). A
cached kernel needs none of that, only the runtime's C helpers known to
LLVM's linker, so :class:`KernelCache` registers those and loads; a miss
still compiles through numba's full pipeline, and says so on standard error.

A kernel's entries are stamped with its own file and a digest of the files
beside it, the kernels it calls: numba's stamp alone kept a caller's old copy
of a changed callee.

The cache also survives what a shared machine does to it: an entry that is
truncated or garbled (each data file carries a checksum) is discarded and
compiled again, a cache that cannot be written is only a warning, and with
no writable cache location at all the kernels are compiled in memory, with
a warning, instead of failing at import.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import inspect
import pickle
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import llvmlite.binding as ll  # type: ignore[import-untyped]
import numpy as np
from numba import njit, typeof, types
from numba.core.caching import FunctionCache, IndexDataCacheFile, NullCache
from numba.np.numpy_support import as_dtype


class KernelCacheWarning(RuntimeWarning):
    """The kernels' disk cache is damaged or cannot be used."""


class DamagedEntry(Exception):
    """A cache data file whose checksum does not match its contents."""


@dataclass(frozen=True)
class Kernel:
    """A jitted kernel and the argument types it is called with."""

    dispatcher: Any  # numba's CPUDispatcher
    signatures: tuple[tuple[types.Type, ...], ...]

    @property
    def name(self) -> str:
        return self.dispatcher.py_func.__name__


#: Every kernel in definition order, callees before their callers.
KERNELS: list[Kernel] = []


def record(cls: type, *fields: types.Type) -> types.BaseTuple:
    """The numba type of the NamedTuple ``cls`` with these field types, as
    numba's ``typeof`` sees an instance."""
    if len(fields) != len(cls._fields):  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__name__} has {len(cls._fields)} fields, got {len(fields)} types")  # type: ignore[attr-defined]
    return types.BaseTuple.from_types(fields, cls)


def kernel(*signatures: tuple[types.Type, ...]) -> Callable:
    """``njit(nogil=True)`` with the disk cache of this module, declaring the
    argument types a solve calls the kernel with (loaded by :func:`load`).
    nogil: a long search in a thread leaves the interpreter to the others
    (the service's health check answers while it runs)."""

    def decorate(fn: Callable) -> Any:
        dispatcher = njit(nogil=True)(fn)
        if hasattr(dispatcher, "overloads"):  # not NUMBA_DISABLE_JIT
            dispatcher._cache = _disk_cache(fn)  # type: ignore[attr-defined]  # what enable_caching() does, with this module's cache
            KERNELS.append(Kernel(dispatcher, tuple(tuple(s) for s in signatures)))
        return dispatcher

    return decorate


def load(report: Callable[[str], None] | None = None) -> dict:
    """Bring in every declared specialisation not loaded yet: from the disk
    cache, or compiled (and cached) when the cache has none. ``report``
    receives the progress lines of a compile (default: standard error).
    Returns counts: ``loaded`` from the cache, ``compiled``, ``seconds``."""
    global _progress, _loaded
    if _loaded == len(KERNELS):  # every kernel declared so far is in (each solve asks)
        return {"loaded": 0, "compiled": 0, "seconds": 0.0}
    with _loading:  # threads solving at once in a cold process load once, each line said once
        declared = len(KERNELS)
        todo = [(k, sig) for k in KERNELS[:declared] for sig in k.signatures if sig not in k.dispatcher.overloads]
        started = time.perf_counter()
        misses_before = _misses
        _progress = _Progress(report or _to_stderr)
        try:
            for i, (k, sig) in enumerate(todo, 1):
                _progress.step = f"[{i}/{len(todo)}]"
                k.dispatcher.compile(sig)
                # numba types a kernel's tuple arguments in Python on every call; its
                # first look at each tuple class (and at an array: it imports
                # numpy.ma) is slow, so it looks now rather than in the first solve
                for arg in sig:
                    typeof(sample(arg))
        finally:
            progress, _progress = _progress, None
        _loaded = declared
        compiled = _misses - misses_before
        seconds = time.perf_counter() - started
        if compiled:
            progress.report(f"routecalc: {compiled} kernel{'s' if compiled > 1 else ''} compiled in {seconds:.1f} s")
    return {"loaded": len(todo) - compiled, "compiled": compiled, "seconds": seconds}


def sample(ty: types.Type) -> Any:
    """A small value that numba types as ``ty`` (empty arrays, zeros)."""
    if isinstance(ty, types.BaseNamedTuple):
        named: Any = ty  # NamedTuple or NamedUniTuple: both have these
        return named.instance_class(*(sample(t) for t in named.types))
    if isinstance(ty, types.Array):
        return np.zeros((0,) * ty.ndim, as_dtype(ty.dtype), order="C" if ty.layout == "C" else "F")
    if isinstance(ty, types.Boolean):
        return False
    if isinstance(ty, types.Integer):
        return ty.cast_python_value(0)
    raise TypeError(f"no sample of {ty}")


def loaded_signatures() -> dict[str, list[tuple[types.Type, ...]]]:
    """The specialisations each kernel holds now (its declared ones, unless a
    caller passed other types)."""
    return {k.name: list(k.dispatcher.overloads) for k in KERNELS}


class CheckedCacheFile(IndexDataCacheFile):
    """numba's index and data files, each data file led by a checksum, so
    that a truncated or garbled one is found before LLVM links it."""

    MAGIC = b"routecalc kernel cache 1\n"

    def _save_data(self, name: str, data: Any) -> None:
        payload = self._dump(data)
        with self._open_for_write(self._data_path(name)) as f:
            f.write(self.MAGIC + hashlib.sha256(payload).digest() + payload)

    def _load_data(self, name: str) -> Any:
        path = self._data_path(name)
        with open(path, "rb") as f:
            raw = f.read()
        head = len(self.MAGIC)
        payload = raw[head + 32 :]
        if raw[:head] != self.MAGIC or hashlib.sha256(payload).digest() != raw[head : head + 32]:
            raise DamagedEntry(f"{path}: truncated or garbled (checksum mismatch)")
        return pickle.loads(payload)

    def discard(self) -> None:
        """Remove the index and every data file of this function."""
        index = Path(self._index_path)
        stem = index.name[: -len(".nbi")]
        for path in [index, *index.parent.glob(f"{glob.escape(stem)}.*.nbc")]:
            path.unlink(missing_ok=True)


class KernelCache(FunctionCache):
    """numba's per-function disk cache, loading without refreshing the
    compiler, discarding damaged entries and announcing compiles."""

    def __init__(self, py_func: Callable):
        # numba's Cache.__init__, with the checked data files, stamped with the kernels beside it too
        self._name = repr(py_func)
        self._py_func = py_func
        self._impl = self._impl_class(py_func)  # RuntimeError when no location is writable
        self._cache_path = self._impl.locator.get_cache_path()
        stamp = (self._impl.locator.get_source_stamp(), _sources_digest(Path(inspect.getfile(py_func)).parent))
        self._cache_file = CheckedCacheFile(
            cache_path=self._cache_path, filename_base=self._impl.filename_base, source_stamp=stamp
        )
        self.enable()

    def load_overload(self, sig, target_context):
        _register_runtime()
        try:
            found = self._load_overload(sig, target_context)
        except Exception as exc:  # noqa: BLE001  (unpickling a damaged file fails in any way)
            try:
                self._cache_file.discard()
            except OSError:
                pass
            warnings.warn(
                KernelCacheWarning(
                    f"discarded a damaged numba cache entry of {self._py_func.__name__} in {self._cache_path} "
                    f"({type(exc).__name__}: {exc}); compiling it again"
                ),
                stacklevel=2,
            )
            found = None
        if found is None:
            _compiling(self._py_func.__name__)
        return found

    def save_overload(self, sig, data):
        try:
            self._save_overload(sig, data)
        except Exception as exc:  # noqa: BLE001  (a full disk, a read-only cache, a file in the way)
            warnings.warn(
                KernelCacheWarning(
                    f"cannot write the numba cache of {self._py_func.__name__} to {self._cache_path} ({exc}); "
                    "it is compiled again on the next start"
                ),
                stacklevel=2,
            )


class MemoryOnly(NullCache):
    """No writable cache location: compile in memory, with a warning."""

    def __init__(self, py_func: Callable, why: str):
        self._name = py_func.__name__
        self._why = why

    def load_overload(self, sig, target_context):
        global _warned_memory_only
        if not _warned_memory_only:
            _warned_memory_only = True
            warnings.warn(
                KernelCacheWarning(
                    f"{self._why}: the kernels are compiled in memory, again on every start (set NUMBA_CACHE_DIR "
                    "to a writable directory to keep them)"
                ),
                stacklevel=2,
            )
        _compiling(self._name)


@functools.cache
def _sources_digest(folder: Path) -> str:
    """A digest of the Python files beside a kernel: its compiled code holds
    the kernels it calls, which live there, while numba's own stamp is its
    file's alone (enumerate_routes kept running an old route_bound after
    longest.py changed)."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _disk_cache(fn: Callable) -> KernelCache | MemoryOnly:
    try:
        return KernelCache(fn)
    except RuntimeError as exc:  # "cannot cache function ...: no locator available"
        return MemoryOnly(fn, str(exc))


class _Progress:
    def __init__(self, report: Callable[[str], None]):
        self.report = report
        self.step = ""  # the declared specialisation being loaded, of those to load: "[2/4]"
        self.announced = False


_progress: _Progress | None = None
_loaded = 0  # how many of KERNELS :func:`load` has brought in
_loading = threading.Lock()
_misses = 0
_runtime_ready = False
_warned_memory_only = False


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _compiling(name: str) -> None:
    """Say that a kernel is compiled now (a cache miss: seconds, not milliseconds)."""
    global _misses
    _misses += 1
    progress = _progress
    if progress is None:
        _to_stderr(f"routecalc: compiling kernel {name} (not in the numba cache yet)")
        return
    if not progress.announced:
        progress.announced = True
        progress.report(
            "routecalc: compiling the route kernels (first run after an install or upgrade; "
            "they are cached for later runs)"
        )
    progress.report(f"routecalc: {progress.step} compiling {name}")


def _register_runtime() -> None:
    """What a cached kernel needs of numba's runtime: the addresses of its C
    helpers (``NRT_*``), registered with LLVM's linker as numba's runtime
    initialisation does (which also compiles code a cached kernel does not
    use). A compile initialises the runtime fully."""
    global _runtime_ready
    if _runtime_ready:
        return
    from numba.core.runtime import _nrt_python  # type: ignore[attr-defined]

    for name, address in _nrt_python.c_helpers.items():
        ll.add_symbol(name if name.startswith("_") else "NRT_" + name, address)
    _runtime_ready = True
