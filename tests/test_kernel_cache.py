"""The kernels' disk cache across process starts: a cold cache says it is
compiling, a damaged entry is discarded and rebuilt, no writable location
means compiling in memory with a warning.

Most cases use a one-loop kernel declared with ``@kernel`` in a module of
their own (compiled in about a second) and ``NUMBA_CACHE_DIR`` in a
temporary directory; the CLI case copies the real kernels' cache there and
leaves out the smallest kernel.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from numba.core.caching import _CacheLocator

from routecalc.kernels import combination
from routecalc.kernels.cache import KERNELS
from routecalc.solvers import warm_up

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

TINY = """
from numba import types
from routecalc.kernels.cache import kernel


@kernel((types.int64[::1],))
def total(values):
    s = 0
    for v in values:
        s += v
    return s
"""

CHILD = """
import json, sys
{before}
sys.path.insert(0, sys.argv[1])
import numpy as np
import tiny
from routecalc.kernels import cache
counts = cache.load()
{after}
print(json.dumps({{"compiled": counts["compiled"], "loaded": counts["loaded"],
                  "total": int(tiny.total(np.arange(5, dtype=np.int64)))}}))
"""


def run_python(code: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -c code args`` in a child process with ``env``; it must succeed."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args], check=False, capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done


def cache_env(cache_dir: Path | None) -> dict[str, str]:
    """This process's environment with numba's cache in ``cache_dir`` (None: numba's default)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    return env


def run_tiny(module_dir: Path, cache_dir: Path | None, before: str = "", after: str = "") -> tuple[dict, str]:
    done = run_python(CHILD.format(before=before, after=after), str(module_dir), env=cache_env(cache_dir))
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, Path, dict, str]:
    """The kernel's module, its cache directory, and the first (cold) run: its answer and standard error."""
    module_dir = tmp_path_factory.mktemp("tiny")
    (module_dir / "tiny.py").write_text(TINY)
    first, said = run_tiny(module_dir, module_dir / "cache")
    return module_dir, module_dir / "cache", first, said


@pytest.fixture
def tiny_copy(tiny, tmp_path) -> tuple[Path, Path]:
    """The kernel's module and a copy of its warm cache, to damage."""
    module_dir, cache_dir, _, _ = tiny
    shutil.copytree(cache_dir, tmp_path / "cache")
    return module_dir, tmp_path / "cache"


THREADS = """
import json, sys, threading
sys.path.insert(0, sys.argv[1])
import tiny
from routecalc.kernels import cache
counts = []
threads = [threading.Thread(target=lambda: counts.append(cache.load())) for _ in range(2)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps(sorted(done["compiled"] for done in counts)))
"""


def test_two_threads_loading_a_cold_cache_at_once_compile_once(tiny, tmp_path):
    """The API's solve loads the kernels first (outside its limit): in a
    process whose threads solve at once, one compiles and says so, the
    other waits for it."""
    done = run_python(THREADS, str(tiny[0]), env=cache_env(tmp_path / "cache"))
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, 1], done.stderr
    assert done.stderr.count("compiled in") == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_a_cold_cache_says_it_is_compiling_then_the_next_start_loads(tiny):
    module_dir, cache_dir, first, said = tiny
    assert (first["compiled"], first["loaded"], first["total"]) == (1, 0, 10)
    lines = said.splitlines()
    assert lines[0].startswith("routecalc: compiling the route kernels")
    assert lines[1] == "routecalc: [1/1] compiling total"
    assert lines[2].startswith("routecalc: 1 kernel compiled in ")
    again, said = run_tiny(module_dir, cache_dir)
    assert (again["compiled"], again["loaded"], again["total"]) == (0, 1, 10)
    assert said == ""


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def _garble(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(255 - b for b in data[middle : middle + 64])
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage, suffix",
    [(_truncate, ".nbc"), (_garble, ".nbc"), (_truncate, ".nbi")],
    ids=["truncated data", "garbled data", "truncated index"],
)
def test_a_damaged_entry_is_discarded_and_rebuilt(tiny_copy, damage, suffix):
    module_dir, cache_dir = tiny_copy
    files = list(cache_dir.rglob(f"tiny.total-*{suffix}"))
    assert len(files) == 1
    damage(files[0])
    rebuilt, said = run_tiny(module_dir, cache_dir)
    assert (rebuilt["compiled"], rebuilt["total"]) == (1, 10)
    assert "KernelCacheWarning: discarded a damaged numba cache entry of total" in said
    again, said = run_tiny(module_dir, cache_dir)
    assert (again["compiled"], again["loaded"], again["total"]) == (0, 1, 10)
    assert said == ""


CALLER = """
from numba import types
from routecalc.kernels.cache import kernel
from callee import step


@kernel((types.int64[::1],))
def total(values):
    s = 0
    for v in values:
        s += step(v)
    return s
"""

CALLEE = """
from numba import njit


@njit
def step(v):
    return {times} * v
"""


def test_a_kernel_is_compiled_again_when_a_kernel_it_calls_changes(tmp_path):
    """numba stamps a cached kernel with its own file only: enumerate_routes
    kept running an old route_bound after longest.py changed. The files
    beside it are in the stamp too."""
    (tmp_path / "tiny.py").write_text(CALLER)
    (tmp_path / "callee.py").write_text(CALLEE.format(times=1))
    first, _ = run_tiny(tmp_path, tmp_path / "cache")
    assert (first["compiled"], first["total"]) == (1, 10)
    (tmp_path / "callee.py").write_text(CALLEE.format(times=3))
    again, said = run_tiny(tmp_path, tmp_path / "cache")
    assert (again["compiled"], again["loaded"], again["total"]) == (1, 0, 30)
    assert "compiling total" in said


def test_no_writable_cache_location_compiles_in_memory_with_a_warning(tiny):
    """As with the checkout and the home directory read-only (every locator
    numba tries declines): the kernel modules import, and compile in memory."""
    module_dir = tiny[0]
    no_locator = "import numba.core.caching as c; c.CompileResultCacheImpl._locator_classes = []"
    done, said = run_tiny(
        module_dir, None, before=no_locator, after="import routecalc.kernels.enumeration, routecalc.kernels.combination"
    )
    assert (done["compiled"], done["total"]) == (1, 10)
    assert "KernelCacheWarning: cannot cache function 'total': no locator available" in said
    assert "compiled in memory, again on every start" in said
    assert "routecalc: [1/1] compiling total" in said


def copy_route_kernels(cache_dir: Path, leave_out: str | None = None) -> None:
    """The real route kernels' cache entries (loaded or compiled first) into
    ``cache_dir`` as numba lays it out, but those whose name starts with ``leave_out``."""
    warm_up()
    source = Path(combination._fill_index._cache.cache_path)
    py_file = inspect.getfile(combination._fill_index.py_func)
    target = cache_dir / _CacheLocator.get_suitable_cache_subpath(py_file)
    target.mkdir(parents=True)
    for entry in source.glob("*.nb[ic]"):
        if leave_out is None or not entry.name.startswith(leave_out):
            shutil.copy(entry, target / entry.name)


def test_the_cli_on_a_cold_cache_says_it_is_compiling(tmp_path):
    """The real kernels' cache, copied, without its smallest kernel: the
    first run compiles that one, with a progress line, and answers."""
    copy_route_kernels(tmp_path, leave_out="combination._fill_index-")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    cli = "import sys; from routecalc.cli import main; sys.exit(main())"
    done = run_python(cli, "solve", str(FIXTURES / "1830-late.json"), env=env)
    assert json.loads(done.stdout)["revenue"] == 320
    said = done.stderr.splitlines()
    assert len(said) == 3
    assert said[0] == (
        "routecalc: compiling the route kernels (first run after an install or upgrade; they are cached for later runs)"
    )
    assert re.fullmatch(rf"routecalc: \[\d/{len(KERNELS)}\] compiling _fill_index", said[1])
    assert said[2].startswith("routecalc: 1 kernel compiled in ")


def test_the_first_18cuba_solve_does_not_count_its_kernels_compile(tmp_path):
    """18Cuba's own kernels (the listing's annotation, the choice's branch and
    bound) compiled inside the first solve's clock: 5-8 s of CPU under a 3 s
    limit. The route kernels' cache copied, the game's left out: the solve
    compiles them before its clock starts."""
    copy_route_kernels(tmp_path)
    code = (
        "import json, sys; from routecalc import api, load_position_file; "
        "print(json.dumps(api.solve(load_position_file(sys.argv[1]), time_limit=3)))"
    )
    done = run_python(code, str(FIXTURES / "cuba-small.json"), env=cache_env(tmp_path))
    answer = json.loads(done.stdout)
    assert answer["revenue"] == 220 and answer["status"] == "optimal"
    assert answer["stats"]["seconds"] < 3, answer["stats"]
