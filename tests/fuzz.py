"""A seeded mutation fuzzer over the bundled positions and route sets.

Each case is one hostile request: a fixture or corpus position (with its
recorded routes) changed by one to three mutations (wrong types, missing
and unknown keys, huge, negative and special numbers, lone surrogates,
aliased cell ids, deep nesting, neighbour cycles, paths to nowhere, many
trains, 18Cuba wagons, big boards, broken tile codes, broken JSON text), sent to one entry
point: the Python API (solve, validate, render), the CLI, or the service.

Every outcome is classed: an ``answer``, a ``named`` error (a
PositionError / RouteViolation, a 4xx with ``{"error", "where"}``), a
``crash`` (any other exception, a traceback, a 5xx, an error of another
shape), an ``overrun`` (past its time limit + 1 s) or a ``disagree``ment
(two solvers both calling different revenues optimal). The default test
run uses a few hundred cases; ``make fuzz`` runs the long one::

    python tests/fuzz.py --cases 10000 --seed 1
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from routecalc import api, deadline  # noqa: E402 (after the path set-up above)
from routecalc.errors import PositionError, RouteViolation, TimeLimitError  # noqa: E402 (after the path set-up above)
from routecalc.games import warm_up_all  # noqa: E402 (after the path set-up above)
from routecalc.model import read_json  # noqa: E402 (after the path set-up above)
from routecalc.render import render_svg  # noqa: E402 (after the path set-up above)

CORPUS = ROOT / "fixtures" / "corpus"
#: Seconds over its time limit a case may take before it counts as an overrun.
GRACE = 1.0
OUTCOMES = ("answer", "named", "crash", "overrun", "disagree")
#: The second solver of an agreement check gets this many times the case's limit.
AGREE_FACTOR = 4
#: Also counted (not an outcome): past the limit + GRACE in wall time only.
SLOW = "slow wall"


@dataclass(frozen=True)
class Seed:
    name: str
    position: dict
    routes: list | None  # a recorded route set, where the corpus has one


def seeds() -> list[Seed]:
    """The fixtures and the corpus, each with its recorded routes if any."""
    out = []
    for path in sorted((ROOT / "fixtures").glob("*.json")) + sorted(CORPUS.rglob("*.json")):
        data = json.loads(path.read_text())
        routes = None
        if isinstance(data, dict) and "position" in data and "hexes" not in data:
            routes = ((data.get("reference") or {}).get("recorded") or {}).get("routes")
            data = data["position"]
        out.append(Seed(str(path.relative_to(ROOT)), data, routes))
    return out


# -- mutations ------------------------------------------------------------------

HOSTILE_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    7,
    2**31,
    2**59,
    2**62,
    2**64,
    -(10**20),
    10**400,
    1e308,
    -0.0,
    0.5,
    "",
    " ",
    "x" * 20_000,
    "\ud800",
    "A\udfffB",
    "E019",
    "A9\n",
    "\u0661",
    "\ufeff",
    "é",
    "null",
    "1e999",
    [],
    {},
    [None],
    [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
    {"": {}},
    list(range(30)),
    ["2"] * 50,
]
TILE_SNIPPETS = [
    "lanes:1000000",
    "lanes:8",
    "revenue:" + "9" * 40,
    "revenue:-5",
    "revenue:yellow_20|brown_",
    "slots:99",
    "slots:-1",
    "a:9",
    "b:_99",
    "b:_-1",
    "a_lane:3.7",
    "track:wide",
    "terminal:1",
    "groups:G|G",
    "kind:mine",
    "",
    ";",
    ",",
    "=",
    ":",
    "\ud800",
    "city=revenue:20",
    "junction",
    "path=a:0,b:0",
    "border=edge:9",
]


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys) into a JSON value."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:40]):
            out += _paths(v, prefix + (i,))
    return out


def _get(value: Any, path: tuple) -> Any:
    for k in path:
        value = value[k]
    return value


def _set(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


def _replace_value(rng: random.Random, data: Any) -> Any:
    path = rng.choice(_paths(data))
    return _set(data, path, copy.deepcopy(rng.choice(HOSTILE_VALUES)))


def _number_nudge(rng: random.Random, data: Any) -> Any:
    paths = [p for p in _paths(data) if isinstance(_get(data, p), int) and not isinstance(_get(data, p), bool)]
    if not paths:
        return data
    path = rng.choice(paths)
    value = _get(data, path)
    return _set(data, path, rng.choice([value * 1000, -value, value + 1, value - 1, 2**59, 10**9, 10**9 + 1]))


def _drop_key(rng: random.Random, data: Any) -> Any:
    paths = [p for p in _paths(data) if p and isinstance(_get(data, p[:-1]), dict)]
    if paths:
        path = rng.choice(paths)
        del _get(data, path[:-1])[path[-1]]
    return data


def _add_key(rng: random.Random, data: Any) -> Any:
    paths = [p for p in _paths(data) if isinstance(_get(data, p), dict)]
    if paths:
        _get(data, rng.choice(paths))[rng.choice(["zzz", "\ud800", "", "id", "options", "wagon"])] = copy.deepcopy(
            rng.choice(HOSTILE_VALUES)
        )
    return data


def _hexes(data: Any) -> list:
    hexes = data.get("hexes") if isinstance(data, dict) else None
    return hexes if isinstance(hexes, list) and hexes and all(isinstance(c, dict) for c in hexes) else []


def _alias_cell(rng: random.Random, data: Any) -> Any:
    hexes = _hexes(data)
    if hexes:
        cell = copy.deepcopy(rng.choice(hexes))
        cid = str(cell.get("id", "A1"))
        cell["id"] = rng.choice([cid[0] + "0" + cid[1:], cid + "\n", cid.lower(), " " + cid, cid, cid + "\x00"])
        hexes.append(cell)
    return data


def _tile_code(rng: random.Random, data: Any) -> Any:
    hexes = _hexes(data)
    if hexes:
        cell = rng.choice(hexes)
        code = str(cell.get("code", ""))
        parts = code.split(";")
        i = rng.randrange(len(parts))
        snippet = rng.choice(TILE_SNIPPETS)
        parts[i] = rng.choice([parts[i] + "," + snippet, snippet, parts[i][: rng.randrange(len(parts[i]) + 1)]])
        cell["code"] = ";".join(parts)
    return data


def _neighbours(rng: random.Random, data: Any) -> Any:
    hexes = _hexes(data)
    if len(hexes) >= 2:
        a, b = rng.sample(hexes, 2)
        a["neighbors"] = {str(rng.randrange(7)): b.get("id"), str(rng.randrange(6)): a.get("id")}
        b["neighbors"] = rng.choice([{"0": a.get("id")}, {"3": "Z99"}, {"x": a.get("id")}, {}])
    return data


def _trains(rng: random.Random, data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    trains = data.get("trains") if isinstance(data.get("trains"), list) else []
    name = rng.choice(["2", "3", "4", "D", "8E", "3+3", "x"])
    choice = rng.randrange(5)
    if choice == 0:
        data["trains"] = trains * rng.choice([5, 30, 1000])
    elif choice == 1:  # same-name trains that differ: the validator's assignment
        data["trains"] = [{"name": name, "distance": d} for d in range(2, 2 + rng.choice([3, 10, 25]))]
    elif choice == 2:
        data["trains"] = [
            {
                "name": name,
                "distance": rng.choice([1, 999, 10**6]),
                "multiplier": rng.choice([1, 100, 101, 2**59, 2**62]),
            }
        ]
    elif choice == 3:
        data["trains"] = [rng.choice(["99999999999", "2\u0663", "0", "-1", "E", "8E", "D", "4D", "2H"])]
    else:
        data["trains"] = trains + [{"name": name, "distance": [{"nodes": ["city"], "pay": 2, "visit": 10**9}]}]
    return data


def _wagons(rng: random.Random, data: Any) -> Any:
    """A synthetic 18Cuba board of columns harbor - mill - city (a token) with a
    long wagon pool, or trains of one name that differ only in their wagon
    (every order of either was once tried)."""
    n = rng.choice([3, 8, 12, 20])
    ends = ";path=a:0,b:_0;path=a:3,b:_0"
    cells = []
    for k in range(n):
        column = _letters(2 * k)
        cells += [
            {"id": f"{column}1", "code": "offboard=revenue:10,kind:harbor" + ends},
            {"id": f"{column}3", "code": "city=revenue:20,kind:mill" + ends},
            {"id": f"{column}5", "code": "city=revenue:30" + ends, "tokens": [["A"]]},
        ]
    options: dict[str, Any] = {"sugar": {f"{_letters(2 * k)}3-0": rng.randint(0, 9) for k in range(n)}}
    if rng.random() < 0.5:
        trains: list = ["3"] * min(n, 20)
        options["wagons"] = [rng.randint(1, 9) for _ in range(rng.choice([n, 30]))]
    else:
        trains = [{"name": "3", "wagon": rng.randint(0, 9)} for _ in range(min(n, 20))]
    return {**_synthetic("18Cuba", trains, cells), "options": options}


def _big_board(rng: random.Random, data: Any) -> Any:
    """A synthetic board of many cities joined on every edge (size near and past the limits)."""
    n = rng.choice([300, 1200, 2001, 10_000])
    cells, side = [], int(n**0.5) + 1
    for x in range(side):
        for y in range(side):
            if len(cells) < n:
                cells.append(
                    {
                        "id": f"{_letters(x)}{2 * y + 1 + x % 2}",
                        "code": "city=revenue:20;" + ";".join(f"path=a:{e},b:_0" for e in range(6)),
                    }
                )
    cells[0]["tokens"] = [["A"]]
    return _synthetic("generic", [rng.choice(["8E", "D", "4", "2"])], cells)


def _synthetic(game: str, trains: list, cells: list) -> dict:
    """A flat board in yellow with company A on it: the frame of the synthetic boards."""
    return {
        "format": 1,
        "game": game,
        "layout": "flat",
        "phase": {"name": "2", "colors": ["yellow"]},
        "company": "A",
        "trains": trains,
        "hexes": cells,
    }


def _letters(i: int) -> str:
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(65 + r) + out
    return out


MUTATIONS: list[Callable[[random.Random, Any], Any]] = [
    _replace_value,
    _replace_value,
    _number_nudge,
    _drop_key,
    _add_key,
    _alias_cell,
    _tile_code,
    _tile_code,
    _neighbours,
    _trains,
    _wagons,
    _big_board,
]


def _text_mutation(rng: random.Random, text: str) -> str | bytes:
    """A mutation of the JSON text itself."""
    choice = rng.randrange(8)
    if choice == 0:
        return text[: rng.randrange(len(text) + 1)]
    if choice == 1:
        depth = rng.choice([40, 1_000, 100_000])
        return (
            text.replace('"options"', '"options": ' + "[" * depth + "]" * depth + ', "x"', 1)
            if '"options"' in text
            else "[" * depth + "]" * depth
        )
    if choice == 2:
        return text.replace(":", ": " + "9" * rng.choice([31, 5_000, 50_000]) + " +", 1)
    if choice == 3:
        return "\ufeff" + text
    if choice == 4:
        return text.encode("utf-8")[:-1] + b"\xff\xfe"
    if choice == 5:
        return text.replace('"company": "', '"company": "\\ud800', 1)
    if choice == 6:
        return text.replace("1", "NaN", 1)
    return text.replace('"format": 1', '"format": 1, "format": 2', 1)


@dataclass
class Case:
    number: int
    seed: str
    kind: str  # solve, validate, render
    text: str | bytes  # the request body: a position, or {"position", "routes"}
    solver: str


def cases(count: int, seed: int, kinds=("solve", "solve", "validate", "render")) -> list[Case]:
    """``count`` cases, the same for the same seed."""
    rng = random.Random(seed)
    pool = seeds()
    out = []
    for number in range(count):
        base = rng.choice(pool)
        kind = rng.choice(kinds)
        data: Any = copy.deepcopy(base.position)
        routes = copy.deepcopy(base.routes) if base.routes else []
        for _ in range(rng.choice([1, 1, 2, 3])):
            if kind == "validate" and rng.random() < 0.3 and routes:
                repeat = rng.random() >= 0.7 and isinstance(routes, list)  # an earlier step may have replaced it
                routes = routes * rng.choice([2, 11]) if repeat else _replace_value(rng, routes)
            else:
                data = rng.choice(MUTATIONS)(rng, data)
        body: Any = {"position": data, "routes": routes} if kind == "validate" else data
        try:
            text: str | bytes = json.dumps(body)
        except ValueError:  # a value JSON cannot hold
            text = "{}"
        if rng.random() < 0.15:
            text = _text_mutation(rng, text)
        solver = rng.choice(["auto", "auto", "auto", "fast", "cpsat", "reference"])
        out.append(Case(number, base.name, kind, text, solver))
    return out


# -- entry points -------------------------------------------------------------------


@dataclass
class Tally:
    """Outcomes by entry point, and the first few examples of each bad one."""

    counts: dict[str, Counter] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)

    def add(self, entry: str, outcome: str, case: Case | None, detail: str = "") -> None:
        self.counts.setdefault(entry, Counter())[outcome] += 1
        if outcome in ("crash", "overrun", "disagree") and len(self.examples) < 40:
            self.examples.append(
                f"{entry} {outcome} case {case.number if case else '?'} "
                f"({case.seed if case else ''}, {case.kind if case else ''}): {detail[:300]}"
            )

    def cases(self, entry: str) -> int:
        return sum(self.counts.get(entry, Counter())[o] for o in OUTCOMES)

    def bad(self) -> int:
        return sum(c[o] for c in self.counts.values() for o in ("crash", "overrun", "disagree"))

    def table(self) -> str:
        lines = [f"{'entry':<10}" + "".join(f"{o:>10}" for o in ("cases",) + OUTCOMES + (SLOW,))]
        for entry, c in self.counts.items():
            cases_ = sum(c[o] for o in OUTCOMES)
            lines.append(f"{entry:<10}{cases_:>10}" + "".join(f"{c[o]:>10}" for o in OUTCOMES + (SLOW,)))
        return "\n".join(lines + self.examples)


def overran(wall: float, cpu: float, limit: float) -> bool:
    """Past the limit + GRACE in wall time and in CPU time: on a shared, loaded
    machine a run may wait for a core without doing any work past its limit."""
    return wall > limit + GRACE and cpu > limit + GRACE


def run_api(case: Case, time_limit: float, tally: Tally, agree: bool = True) -> None:
    """One case through the Python API (reading included in the limit)."""
    started, cpu = time.perf_counter(), time.process_time()
    outcome, detail = "answer", ""
    answer = None
    try:
        body = read_json(case.text)
        if case.kind == "solve":
            answer = api.solve(body, case.solver, time_limit=time_limit)
        elif case.kind == "validate":
            if not isinstance(body, dict):
                raise PositionError("body", "must be an object")
            with deadline.within(time_limit):  # as the service runs it
                api.validate(body.get("position"), body.get("routes"))
        else:
            with deadline.within(time_limit):
                render_svg(api.as_position(body), None)
    except (PositionError, RouteViolation) as exc:
        outcome = "named"
        str(exc).encode("utf-8")  # the message must be sendable
    except Exception as exc:  # noqa: BLE001 - the fuzzer's job is to find these
        outcome, detail = "crash", f"{type(exc).__name__}: {exc}"
    took, cpu = time.perf_counter() - started, time.process_time() - cpu
    if outcome != "crash" and took > time_limit + GRACE:
        tally.add("api", "slow wall", case)
        if overran(took, cpu, time_limit):
            outcome, detail = "overrun", f"{took:.2f} s ({cpu:.2f} s CPU) with a {time_limit:g} s limit"
    tally.add("api", outcome, case, detail)
    if (
        agree
        and answer is not None
        and answer.get("status") == "optimal"
        and "routes" in answer
        and answer.get("solver") != "cuba"
        and "plan" not in answer
    ):
        _check_agreement(case, answer, time_limit, tally)


def _check_agreement(case: Case, answer: dict, time_limit: float, tally: Tally) -> None:
    """Another solver on the same position: two optimal answers must agree."""
    other = "reference" if case.solver != "reference" else "cpsat"
    try:
        second = api.solve(read_json(case.text), other, time_limit=AGREE_FACTOR * time_limit)
    except TimeLimitError:
        tally.add("agree", "answer", case)  # no second answer in time: nothing to compare
        return
    except (PositionError, RouteViolation) as exc:
        tally.add("agree", "disagree", case, f"{case.solver} answered, {other} refused: {exc}")
        return
    except Exception as exc:  # noqa: BLE001
        tally.add("agree", "crash", case, f"{other}: {type(exc).__name__}: {exc}")
        return
    if second["status"] == "optimal" and second["revenue"] != answer["revenue"]:
        tally.add("agree", "disagree", case, f"{case.solver} {answer['revenue']} vs {other} {second['revenue']}")
    else:
        tally.add("agree", "answer", case)


def run_cli(batch: list[Case], time_limit: float, tally: Tally, workdir: Path) -> None:
    """A batch of solve cases through one ``routecalc solve`` process (one JSON line per file)."""
    files = []
    for case in batch:
        path = workdir / f"case{case.number}.json"
        path.write_bytes(case.text if isinstance(case.text, bytes) else case.text.encode("utf-8", "surrogatepass"))
        files.append(str(path))
    by_file = {f: c for f, c in zip(files, batch)}
    # the command of this interpreter's environment (make lowest runs another than .venv)
    cmd = [str(Path(sys.executable).parent / "routecalc"), "solve", "--time-limit", str(time_limit), *files]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    last, last_cpu = time.perf_counter(), _cpu_of(proc.pid)
    seen = set()
    assert proc.stdout is not None
    first = True
    for line in proc.stdout:
        now, now_cpu = time.perf_counter(), _cpu_of(proc.pid)
        took, cpu, last, last_cpu = now - last, now_cpu - last_cpu, now, now_cpu
        try:
            out = json.loads(line)
            case = by_file[out["file"]]
        except (ValueError, KeyError) as exc:
            tally.add("cli", "crash", None, f"unreadable output line {line[:200]!r}: {exc}")
            continue
        seen.add(out["file"])
        outcome = "named" if "error" in out and "where" in out else "answer"
        if not first and took > time_limit + GRACE:  # the first line also carries the process start-up
            tally.add("cli", "slow wall", case)
            if overran(took, cpu, time_limit):
                outcome = "overrun"
        first = False
        tally.add("cli", outcome, case, f"{took:.2f} s ({cpu:.2f} s CPU)")
    proc.wait()
    stderr = proc.stderr.read() if proc.stderr else ""
    for f in files:
        if f not in seen:
            tally.add("cli", "crash", by_file[f], f"no answer line (exit {proc.returncode}): {stderr[-500:]}")
    if "Traceback" in stderr:
        tally.add("cli", "crash", None, stderr[-800:])


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / 100.0
    except (OSError, IndexError, ValueError):
        return 0.0


def run_service(case: Case, client, time_limit: float, tally: Tally) -> None:
    """One case through the HTTP service."""
    path = {"solve": "/v1/solve", "validate": "/v1/validate", "render": "/v1/render"}[case.kind]
    params = {"time_limit": time_limit, "solver": case.solver} if case.kind == "solve" else {}
    body = case.text if isinstance(case.text, bytes) else case.text.encode("utf-8", "surrogatepass")
    started, cpu = time.perf_counter(), time.process_time()  # the server runs in this process
    try:
        r = client.post(path, params=params, content=body, headers={"content-type": "application/json"})
    except Exception as exc:  # noqa: BLE001
        tally.add("service", "crash", case, f"{type(exc).__name__}: {exc}")
        return
    took, cpu = time.perf_counter() - started, time.process_time() - cpu
    limit = time_limit if case.kind == "solve" else client.max_time_limit
    if r.status_code >= 500:
        tally.add("service", "crash", case, f"{r.status_code}: {r.text[:300]}")
    elif r.status_code >= 400:
        try:
            shape = set(r.json()) >= {"error", "where"}
        except ValueError:
            shape = False
        tally.add("service", "named" if shape else "crash", case, f"{r.status_code} of another shape: {r.text[:200]}")
    elif overran(took, cpu, limit):
        tally.add("service", "overrun", case, f"{took:.2f} s ({cpu:.2f} s CPU) with a {limit:g} s limit")
    else:
        tally.add("service", "answer", case)
    if took > limit + GRACE:
        tally.add("service", "slow wall", case)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000, help="cases in all (split over the entry points)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=1.0)
    parser.add_argument("--entries", default="api,cli,service")
    args = parser.parse_args(argv)
    entries = args.entries.split(",")
    share = {"api": 0.5, "cli": 0.25, "service": 0.25}
    total = sum(share[e] for e in entries)
    tally = Tally()
    # every kernel loaded (or compiled into the disk cache the CLI's processes read) first: a
    # solve's limit does not cover their one-off compile after an install (18Cuba's: 7.5 s)
    warm_up_all()
    started = time.perf_counter()
    for k, entry in enumerate(entries):
        n = round(args.cases * share[entry] / total)
        batch = cases(
            n, args.seed * 1000 + k, kinds=("solve",) if entry == "cli" else ("solve", "solve", "validate", "render")
        )
        t0 = time.perf_counter()
        if entry == "api":
            for case in batch:
                run_api(case, args.time_limit, tally)
        elif entry == "cli":
            with tempfile.TemporaryDirectory() as tmp:
                for i in range(0, len(batch), 100):
                    run_cli(batch[i : i + 100], args.time_limit, tally, Path(tmp))
        else:
            import httpx
            from live_server import serving

            from service.app import Settings, create_app

            limit = max(args.time_limit, 2.0)
            app = create_app(Settings(max_time_limit=limit, solve_threads=2))
            with serving(app) as url, httpx.Client(base_url=url, timeout=120) as client:
                client.max_time_limit = limit  # type: ignore[attr-defined]
                for case in batch:
                    run_service(case, client, args.time_limit, tally)
        print(f"{entry}: {n} cases in {time.perf_counter() - t0:.0f} s", flush=True)
    print(tally.table())
    print(
        f"{sum(tally.cases(e) for e in tally.counts)} outcomes in {time.perf_counter() - started:.0f} s "
        f"(seed {args.seed}, time limit {args.time_limit:g} s)"
    )
    return 1 if tally.bad() else 0


if __name__ == "__main__":
    sys.exit(main())
