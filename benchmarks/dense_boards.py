"""Dense boards beyond the stress set: corpus positions with more track and
long trains, drawn with fixed seeds, each solved by auto under a time limit.

A user who tries the engine builds such boards (late phases, track on
every free hex side, diesels and express trains), and they are where
enumeration explodes or finishes but cannot be combined. Two sets are
drawn, the README's figures:

- ``long``: two or three long trains (D, 8, 8E, 6E, 1867's 5+5E ...) on
  50-100 % more track;
- ``four``: three or four shorter trains (4, 5, 6 and D among them), where
  the trains whose listing finishes sit beside a diesel whose listing
  does not.

    .venv/bin/python benchmarks/dense_boards.py long [--first 0] [--count 200] [--limit 10] [--json out.jsonl]

Prints a line a board (revenue, status, bound, CPU seconds of the solving
process, the path auto took) and a summary: boards proven optimal, those
over 1 s and 3 s of CPU, the slowest, CPU in all. The test suite draws its
boards here too (``tests/test_dense_boards.py``, other shares).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import random
import sys
import time
from collections.abc import Sequence

from make_stress_fixtures import EXPRESS_1867, _1867_train, densify_code
from paths import CORPUS

from routecalc import api
from routecalc.solvers import warm_up

CORPUS_BOARDS = sorted((CORPUS / "generic").glob("*/*.json"))
LONG_TRAINS = [
    ["D", "D"],
    ["5", "D"],
    ["6", "8"],
    ["D", "8E"],
    ["8E", "6E"],
    ["5", "6", "D"],
    ["6", "6", "D"],
    [_1867_train("8", 8), EXPRESS_1867],
]
FOUR_TRAINS = [["4", "5", "6", "D"], ["4", "5", "6"], ["5", "6", "D"], ["4", "4", "6", "D"]]
#: set -> (the trains drawn from, the shares of cells given more track, the seeds' offset)
SETS = {
    "long": (LONG_TRAINS, (0.5, 0.8, 1.0), 0),
    "four": (FOUR_TRAINS, (0.5, 0.8, 1.0), 1000),
}


def dense_board(seed: int, trains: Sequence[list], shares: Sequence[float], offset: int = 0) -> dict:
    """A corpus position, more track on a share of its cells, one of ``trains``."""
    rng = random.Random(offset + seed)
    position = copy.deepcopy(json.loads(rng.choice(CORPUS_BOARDS).read_text())["position"])
    share = rng.choice(list(shares))
    for cell in position["hexes"]:
        if rng.random() < share:
            cell["code"] = densify_code(cell["code"])
    position["trains"] = copy.deepcopy(rng.choice(list(trains)))
    return position


def main() -> int:
    """Solve the boards of one set; a figure, not a check: an answer short
    of proven within the limit is reported, not failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("set", choices=sorted(SETS))
    parser.add_argument("--first", type=int, default=0, help="first seed")
    parser.add_argument("--count", type=int, default=200, help="boards")
    parser.add_argument("--limit", type=float, default=10.0, help="time limit, seconds (the page's default)")
    parser.add_argument("--json", help="write a JSON line a board here")
    args = parser.parse_args()
    trains, shares, offset = SETS[args.set]
    warm_up(cpsat=True)  # as the service starts: no board pays for the kernels' loading or CP-SAT's import
    rows = []
    with open(args.json, "w") if args.json else contextlib.nullcontext() as out:
        for seed in range(args.first, args.first + args.count):
            position = dense_board(seed, trains, shares, offset)
            started = time.process_time()
            answer = api.solve(position, time_limit=args.limit)
            row = {
                "seed": seed,
                "trains": [t if isinstance(t, str) else t["name"] for t in position["trains"]],
                "revenue": answer["revenue"],
                "status": answer["status"],
                "bound": answer["bound"],
                "cpu_s": round(time.process_time() - started, 3),
                "path": answer["stats"].get("auto", {}).get("solver", answer["solver"]),
            }
            rows.append(row)
            print(" ".join(str(value) for value in row.values()), flush=True)
            if out:
                out.write(json.dumps(row) + "\n")
    cpu = [row["cpu_s"] for row in rows]
    proven = sum(row["status"] == "optimal" for row in rows)
    print(
        f"{args.set}: {proven} of {len(rows)} proven optimal within {args.limit:g} s; "
        f"{sum(c > 1 for c in cpu)} over 1 s of CPU, {sum(c > 3 for c in cpu)} over 3 s, "
        f"slowest {max(cpu, default=0):.2f} s, {sum(cpu):.1f} s in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
