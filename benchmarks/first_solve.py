"""A fresh ``routecalc solve`` against the floor of importing numba, in CPU seconds.

One run measures, each row in new processes (user + system CPU of the
child, the median of ``--rounds`` rounds taken in turn, since the machine
is shared), with the kernels in numba's disk cache (a first run fills it):

- the floor, ``python -c "import numba"``, and the same with the garbage
  collector off (the CLI keeps it off during its start-up: this row shows
  how much of the difference that is);
- ``routecalc solve`` of a small position (fixtures/1830-late.json) and of
  a large one (a navig18xx 1867 corpus position), as a tool that calls the
  CLI once per position pays it;
- the same solves in a warm process (after ``warm_up()`` and one solve),
  and that process's start: import, ``warm_up()``, first and later solve.

Ratios are to the floor. ``--cold`` adds one run with an empty cache
(``NUMBA_CACHE_DIR`` in a new temporary directory: every kernel compiled).
Children may write bytecode (an installed package has its .pyc files).

    .venv/bin/python benchmarks/first_solve.py [--rounds 5] [--cold]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from paths import CORPUS, ROOT

SMALL = ROOT / "fixtures" / "1830-late.json"
LARGE = CORPUS / "generic" / "1867" / "navig18xx_1867_bc_GW.json"

WARM = """
import json, sys, time
cpu = time.process_time
t0 = cpu()
from routecalc import api
from routecalc.model import load_position_file
from routecalc.solvers import warm_up
t1 = cpu()
warm_up()
t2 = cpu()
small, large = (load_position_file(p) for p in sys.argv[1:3])
t3 = cpu()
first = api.solve(small)
t4 = cpu()
api.solve(large)
later = {"small": [], "large": []}
for _ in range(5):
    for name, position in (("small", small), ("large", large)):
        t = cpu()
        api.solve(position)
        later[name].append(cpu() - t)
print(json.dumps({"import": t1 - t0, "warm_up": t2 - t1, "first": t4 - t3, "revenue": first["revenue"],
                  **{k: sorted(v)[len(v) // 2] for k, v in later.items()}}))
"""


def command() -> list[str]:
    script = Path(sys.executable).parent / "routecalc"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from routecalc.cli import main; sys.exit(main())"]


def child_cpu(argv: list[str], env: dict) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, standard output) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="also one run with an empty kernel cache")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    solve = command() + ["solve"]
    rows = {
        'floor: python -c "import numba"': [sys.executable, "-c", "import numba"],
        "  the same, collector off": [sys.executable, "-c", "import gc; gc.disable(); import numba"],
        f"routecalc solve {SMALL.name}": solve + [str(SMALL)],
        f"routecalc solve {LARGE.name}": solve + [str(LARGE)],
    }
    for argv in rows.values():  # bytecode written, kernels cached
        child_cpu(argv, env)
    cpu: dict[str, list[float]] = {name: [] for name in rows}
    wall: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, argv in rows.items():
            c, w, _ = child_cpu(argv, env)
            cpu[name].append(c)
            wall[name].append(w)
    warm = json.loads(
        subprocess.run(
            [sys.executable, "-c", WARM, str(SMALL), str(LARGE)], env=env, capture_output=True, text=True, check=True
        ).stdout
    )

    floor = statistics.median(cpu['floor: python -c "import numba"'])
    print(f"first answer of a fresh process: CPU seconds (user + system), median of {args.rounds} rounds")
    print(f"{'':52} {'CPU s':>7} {'/ floor':>8} {'wall s':>7}")
    for name in rows:
        c = statistics.median(cpu[name])
        print(f"{name:52} {c:7.3f} {c / floor:8.2f} {statistics.median(wall[name]):7.3f}")
    for name in ("small", "large"):
        label = f"warm process: solve {(SMALL if name == 'small' else LARGE).name}"
        print(f"{label:52} {warm[name]:7.3f} {warm[name] / floor:8.2f}")
    print(
        f"warm process start: import {warm['import']:.3f}, warm_up() {warm['warm_up']:.3f} (the kernels from "
        f"the cache), first small solve {warm['first']:.3f} vs later {warm['small']:.3f} CPU s"
    )
    if args.cold:
        with tempfile.TemporaryDirectory() as cache:
            c, w, _ = child_cpu(solve + [str(SMALL)], {**env, "NUMBA_CACHE_DIR": cache})
        print(f"{'cold cache: routecalc solve ' + SMALL.name:52} {c:7.3f} {c / floor:8.2f} {w:7.3f}")


if __name__ == "__main__":
    main()
