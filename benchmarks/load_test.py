"""A bounded load run against ``routecalc serve`` on loopback.

Starts the service as ``routecalc serve`` on a free 127.0.0.1 port, sends a
mix of corpus positions (``fixtures/corpus``, a seeded random draw over all
of them) to ``POST /v1/solve`` from an asyncio + httpx load generator with a
fixed number of connections, and stops after ``--requests`` requests or
``--seconds`` seconds, whichever comes first. Every answer is checked: a
non-200 status, a transport error or a revenue different from the corpus
oracle's exact optimum counts as an error. Reports requests/s, latency
percentiles, errors and the server's resident memory (all its processes)
before and after the run.

    .venv/bin/python benchmarks/load_test.py [--workers 2] [--concurrency 8] [--requests 3000]

The load generator shares the machine's cores with the server, so the
figures are a floor of what the service does with the machine to itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from paths import CORPUS, ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_tree(pid: int) -> list[int]:
    out = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children = (task / "children").read_text().split() if (task / "children").exists() else []
        for child in children:
            out += process_tree(int(child))
    return out


def rss_mib(pid: int) -> float:
    """Resident memory of a process and all its descendants (uvicorn workers)."""
    total = 0
    for p in process_tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total / 1024


def load_mix(limit: int | None) -> list[tuple[str, bytes, int | None]]:
    """(name, request body, exact optimum or None) for every corpus position."""
    mix = []
    for path in sorted(CORPUS.rglob("*.json")):
        if path.name == "README.md":
            continue
        entry = json.loads(path.read_text())
        oracle = entry.get("reference", {}).get("oracle") or {}
        exact = oracle.get("total") if oracle.get("exact") else None
        mix.append((str(path.relative_to(CORPUS)), json.dumps(entry["position"]).encode(), exact))
    return mix[:limit] if limit else mix


async def run_load(
    base: str, mix, requests: int, seconds: float, concurrency: int, seed: int, time_limit: float
) -> dict:
    rng = random.Random(seed)
    order = [rng.randrange(len(mix)) for _ in range(requests)]
    latencies: list[float] = []
    errors: list[str] = []
    next_index = 0
    deadline = time.perf_counter() + seconds

    async def worker(client: httpx.AsyncClient):
        nonlocal next_index
        while next_index < len(order) and time.perf_counter() < deadline:
            name, body, exact = mix[order[next_index]]
            next_index += 1
            t0 = time.perf_counter()
            try:
                r = await client.post(
                    "/v1/solve",
                    content=body,
                    params={"time_limit": time_limit},
                    headers={"content-type": "application/json"},
                )
            except httpx.HTTPError as exc:
                errors.append(f"{name}: {type(exc).__name__} {exc}")
                continue
            latencies.append(time.perf_counter() - t0)
            if r.status_code != 200:
                errors.append(f"{name}: HTTP {r.status_code} {r.text[:200]}")
            elif exact is not None and r.json()["status"] == "optimal" and r.json()["revenue"] != exact:
                errors.append(f"{name}: revenue {r.json()['revenue']} but the exact optimum is {exact}")

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
        wall = time.perf_counter() - started
    done = len(latencies) + sum(1 for e in errors if "HTTP" not in e)
    qs = statistics.quantiles(latencies, n=100) if len(latencies) >= 2 else [0.0] * 99
    return {
        "requests": done,
        "seconds": round(wall, 2),
        "requests_per_s": round(done / wall, 1),
        "p50_ms": round(qs[49] * 1000, 1),
        "p90_ms": round(qs[89] * 1000, 1),
        "p99_ms": round(qs[98] * 1000, 1),
        "max_ms": round(max(latencies, default=0) * 1000, 1),
        "errors": len(errors),
        "error_samples": errors[:5],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument("--threads", type=int, default=2, help="solve threads per worker")
    parser.add_argument("--concurrency", type=int, default=8, help="connections kept busy")
    parser.add_argument("--requests", type=int, default=3000, help="stop after this many requests")
    parser.add_argument("--seconds", type=float, default=120.0, help="or after this long")
    parser.add_argument("--time-limit", type=float, default=10.0, help="per-solve time limit sent")
    parser.add_argument("--positions", type=int, default=None, help="use only the first N corpus positions")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    mix = load_mix(args.positions)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable,
        "-m",
        "routecalc.cli",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(args.workers),
        "--threads",
        str(args.threads),
        "--log-level",
        "warning",
        "--no-access-log",
    ]
    started = time.perf_counter()
    server = subprocess.Popen(cmd, cwd=ROOT)
    try:
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.perf_counter() - started > 300:
                raise SystemExit("the server did not start")
            time.sleep(0.2)
        ready = time.perf_counter() - started
        rss_before = rss_mib(server.pid)
        # One pass over a slice of the mix so that every worker has solved something before timing.
        warm = asyncio.run(
            run_load(
                base, mix, min(len(mix), 4 * args.concurrency), 60, args.concurrency, args.seed + 1, args.time_limit
            )
        )
        figures = asyncio.run(
            run_load(base, mix, args.requests, args.seconds, args.concurrency, args.seed, args.time_limit)
        )
        rss_after = rss_mib(server.pid)
    finally:
        server.terminate()
        server.wait(30)
    report = {
        "positions_in_mix": len(mix),
        "workers": args.workers,
        "threads": args.threads,
        "concurrency": args.concurrency,
        "server_ready_s": round(ready, 1),
        "warm_pass_errors": warm["errors"],
        **figures,
        "rss_before_mib": round(rss_before, 1),
        "rss_after_mib": round(rss_after, 1),
    }
    width = max(map(len, report))
    for key, value in report.items():
        print(f"{key:<{width}}  {value}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0 if figures["errors"] == 0 and warm["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
