"""First-solve time of the fast solver in a fresh process, cold and warm cache.

Each measurement is a new Python process that imports routecalc, calls
``warm_up()`` (the CLI and the service do this at start) and solves one
position. ``NUMBA_CACHE_DIR`` points at a new temporary directory, so the
first process compiles every kernel (cold) and the next ones load them
from that cache (warm).

    .venv/bin/python benchmarks/first_solve.py [POSITION.json]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from paths import CORPUS

DEFAULT = CORPUS / "generic" / "1867" / "navig18xx_1867_bc_GW.json"

CHILD = """
import json, sys, time
started = time.perf_counter()
from routecalc.model import load_position_file
from routecalc.solvers import warm_up
from routecalc.solvers.fast import solve_fast
imported = time.perf_counter()
warm_up()
warmed = time.perf_counter()
answer = solve_fast(load_position_file(sys.argv[1]))
done = time.perf_counter()
print(json.dumps({"import_s": imported - started, "warm_up_s": warmed - imported, "solve_s": done - warmed,
                  "first_answer_s": done - started, "revenue": answer["revenue"]}))
"""


def run(position: Path, cache_dir: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    out = subprocess.run([sys.executable, "-c", CHILD, str(position)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    position = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    with tempfile.TemporaryDirectory() as cache:
        rows = [("cold cache", run(position, cache))] + [(f"warm cache #{i}", run(position, cache)) for i in (1, 2)]
    print(f"first solve of {position.name} in a fresh process (seconds):")
    print(f"{'':15} {'import':>8} {'warm_up':>8} {'solve':>8} {'total':>8}")
    for name, r in rows:
        print(f"{name:15} {r['import_s']:8.3f} {r['warm_up_s']:8.3f} {r['solve_s']:8.3f} {r['first_answer_s']:8.3f}"
              f"   revenue {r['revenue']}")


if __name__ == "__main__":
    main()
