"""The service under hostile and careless clients, against a real server:
slowloris headers and bodies cut off, abandoned solves cancelled (the next
request served at once), a full queue answered 503, every error shaped
``{"error", "where"}``, and the browser-safety checks (Content-Type, Host, CORS)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest
from boards import big_board
from live_server import serving

from routecalc import deadline, solvers
from routecalc.errors import TimeLimitError
from service import workers
from service.app import Settings, create_app, solve_job
from service.guard import GuardedH11Protocol

ROOT = Path(__file__).resolve().parent.parent
DEMO = (ROOT / "fixtures" / "1830-late.json").read_text()
JSON = {"content-type": "application/json"}


class QuickHeaders(GuardedH11Protocol):
    header_timeout = 1.0


@pytest.fixture
def spinning(monkeypatch):
    """A solver that works until its deadline stops it; records how each run ended."""
    ended: list[str] = []
    started = threading.Semaphore(0)

    def spin(position, graph, limits):
        started.release()
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 30:
            if deadline.expired():
                ended.append("cancelled" if deadline.current().cancelled else "time")
                return solvers.SOLVERS["reference"](position, graph, limits)
            time.sleep(0.01)
        ended.append("ran out")
        raise RuntimeError("spun 30 s: never stopped")

    monkeypatch.setitem(solvers.SOLVERS, "spin", spin)
    return ended, started


def raw_connection(url: str) -> socket.socket:
    parsed = urlparse(url)
    return socket.create_connection((parsed.hostname, parsed.port), timeout=10)


def closed_after(sock: socket.socket, trickle: bytes, limit: float) -> tuple[float, bytes]:
    """Send ``trickle`` a byte every 0.3 s until the server closes; (seconds, what it answered)."""
    t0 = time.perf_counter()
    got = b""
    sock.settimeout(0.3)
    for byte in trickle * 100:
        try:
            sock.sendall(bytes([byte]))
            chunk = sock.recv(4096)
            if not chunk:
                break
            got += chunk
        except TimeoutError:
            pass
        except OSError:
            break
        if time.perf_counter() - t0 > limit:
            break
    return time.perf_counter() - t0, got


def test_slowloris_headers_and_bodies_are_cut_off():
    app = create_app(Settings(body_timeout=1.0, max_time_limit=2.0))
    with serving(app, http=QuickHeaders) as url:
        socks = [raw_connection(url) for _ in range(8)]
        for s in socks:
            s.sendall(b"POST /v1/solve HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        took, answer = closed_after(socks[0], b"X-a: b\r\n", 15)
        assert took < 4, f"a trickled header kept its connection {took:.1f} s"
        assert b"408" in answer
        body = raw_connection(url)
        body.sendall(
            b"POST /v1/solve HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"content-length: 100000\r\n\r\n{"
        )
        took, answer = closed_after(body, b" ", 15)
        assert took < 4, f"a trickled body kept its connection {took:.1f} s"
        assert b"408" in answer and b'"where":"body"' in answer.replace(b" ", b"")
        # the server still answers at once, and the silent slow connections are gone too
        r = httpx.get(url + "/healthz", timeout=5)
        assert r.status_code == 200
        time.sleep(1.2)
        for s in socks[1:]:
            s.settimeout(2)
            assert s.recv(4096).startswith(b"HTTP/1.1 408"), "a silent half-sent request stayed open"
            s.close()


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /healthz HTTP/1.1\r\n\r\n",  # no Host
        b"POST /v1/solve HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-length: x\r\n\r\n",
        b"\x00\x01 garbage\r\n\r\n",
    ],
)
def test_a_request_http_cannot_read_gets_the_error_shape(request_bytes):
    """uvicorn answered these in plain text before the app saw them."""
    with serving(create_app(Settings()), http=GuardedH11Protocol) as url:
        sock = raw_connection(url)
        sock.sendall(request_bytes)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
        error = json.loads(body)
        assert error["where"] == "request" and "not a valid HTTP/1.1 request" in error["error"]
        assert httpx.get(url + "/healthz", timeout=5).status_code == 200


def test_abandoned_solves_are_cancelled_and_free_their_threads(spinning):
    ended, _ = spinning
    app = create_app(Settings(solve_threads=2, max_time_limit=30.0, processes=False))
    with serving(app) as url:

        def abandon():
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(url + "/v1/solve", params={"solver": "spin"}, content=DEMO, headers=JSON, timeout=0.5)

        quitters = [threading.Thread(target=abandon) for _ in range(6)]
        for t in quitters:
            t.start()
        for t in quitters:
            t.join()
        t0 = time.perf_counter()
        r = httpx.post(url + "/v1/solve", params={"solver": "reference"}, content=DEMO, headers=JSON, timeout=60)
        waited = time.perf_counter() - t0
        assert r.status_code == 200 and r.json()["revenue"] > 0
        # the next request did not wait for six 30 s solves: they were stopped at their next check
        assert waited < 5, f"the next request waited {waited:.1f} s behind abandoned solves"
        deadline_ = time.perf_counter() + 10
        while httpx.get(url + "/healthz").json()["jobs_running"] and time.perf_counter() < deadline_:
            time.sleep(0.1)
        assert httpx.get(url + "/healthz").json()["jobs_running"] == 0
    assert ended and set(ended) == {"cancelled"}, ended


def test_a_real_cpsat_search_stops_when_its_client_leaves():
    # CP-SAT proves this board's D in about 12 s of an idle core: still searching when the client leaves
    # (stress-1867-two-d, used before, is proven in about a second, and once answered within the timeout)
    big = big_board(200, "D")
    app = create_app(Settings(solve_threads=1, max_time_limit=60.0))
    with serving(app) as url:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(url + "/v1/solve", params={"solver": "cpsat", "time_limit": 60}, json=big, timeout=1.0)
        t0 = time.perf_counter()
        r = httpx.post(url + "/v1/solve", params={"solver": "reference"}, content=DEMO, headers=JSON, timeout=60)
        assert r.status_code == 200
        assert time.perf_counter() - t0 < 10, "the abandoned CP-SAT search kept the only solve thread"


def test_a_full_queue_answers_503_with_retry_after(spinning):
    ended, started = spinning
    app = create_app(Settings(solve_threads=1, queue=1, max_time_limit=3.0, processes=False))
    with serving(app) as url, httpx.Client(base_url=url, timeout=30, headers=JSON) as client:
        results: list[httpx.Response] = []
        holders = [
            threading.Thread(
                target=lambda: results.append(client.post("/v1/solve", params={"solver": "spin"}, content=DEMO))
            )
            for _ in range(2)
        ]
        holders[0].start()
        assert started.acquire(timeout=20)
        holders[1].start()
        time.sleep(0.5)  # the second waits in the queue
        r = client.post("/v1/solve", content=DEMO)
        assert r.status_code == 503
        assert r.json()["where"] == "queue" and int(r.headers["retry-after"]) >= 1
        for t in holders:
            t.join(30)
        assert [x.status_code for x in results] == [200, 200]  # both stopped by their 3 s limit
        assert client.post("/v1/solve", content=DEMO).status_code == 200
    assert ended == ["time", "time"]


def test_every_error_has_the_error_shape(monkeypatch):
    def broken(position, graph, limits):
        raise RuntimeError("a bug")

    monkeypatch.setitem(solvers.SOLVERS, "broken", broken)
    app = create_app(Settings(processes=False))
    with serving(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        for response, status, where in [
            (client.get("/no/such/page"), 404, "path"),
            (client.get("/v1/solve"), 405, "method"),
            (client.post("/v1/solve", params={"solver": "broken"}, content=DEMO, headers=JSON), 500, "server"),
            (client.post("/v1/solve", content=DEMO, headers={"content-type": "text/plain"}), 415, "content-type"),
            (client.post("/v1/solve", content=DEMO), 415, "content-type"),
            (client.post("/v1/solve", content=DEMO, headers={**JSON, "host": "evil.example"}), 421, "host"),
            (client.post("/v1/solve", content='{"company": "\\ud800"}', headers=JSON), 422, "company"),
        ]:
            assert response.status_code == status, response.text
            body = response.json()
            assert set(body) >= {"error", "where"} and body["where"] == where, body
        assert client.get("/healthz").status_code == 200  # still up


def test_hosts_and_cors_are_options():
    quiet = create_app(Settings())
    with serving(quiet) as url:
        r = httpx.options(
            url + "/v1/solve", headers={"origin": "https://tool.example", "access-control-request-method": "POST"}
        )
        assert "access-control-allow-origin" not in r.headers
        assert httpx.get(url + "/healthz", headers={"host": "localhost:1"}).status_code == 200
        assert httpx.get(url + "/healthz", headers={"host": "rebound.example"}).status_code == 421
    open_app = create_app(Settings(allowed_hosts=("*",), cors_origins=("https://tool.example",)))
    with serving(open_app) as url:
        r = httpx.options(
            url + "/v1/solve",
            headers={
                "origin": "https://tool.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type",
            },
        )
        assert r.headers["access-control-allow-origin"] == "https://tool.example"
        r = httpx.options(
            url + "/v1/solve", headers={"origin": "https://other.example", "access-control-request-method": "POST"}
        )
        assert r.headers.get("access-control-allow-origin") != "https://other.example"
        assert httpx.get(url + "/healthz", headers={"host": "rebound.example"}).status_code == 200


def test_healthz_is_quick_while_worker_processes_solve():
    """Two heavy solves (a 2,000-city board with a D: CP-SAT's model build and
    the reference's listing are Python work that holds a GIL) run in the two
    worker processes; /healthz answers from the server's own, free, event loop.
    Measured on an idle 2-core box: p50 2 ms, p95 13 ms (threads instead:
    p50 19 ms, p95 53 ms, and seconds behind Python-heavy searches)."""
    body = json.dumps(big_board(2_000, "D"))
    app = create_app(Settings(solve_threads=2, max_time_limit=10.0))
    with serving(app) as url, httpx.Client(base_url=url, timeout=60, headers=JSON) as client:
        answers: list[httpx.Response] = []
        solves = [
            threading.Thread(
                target=lambda s=solver: answers.append(
                    client.post("/v1/solve", params={"solver": s, "time_limit": 6}, content=body)
                )
            )
            for solver in ("cpsat", "reference")
        ]
        for t in solves:
            t.start()
        times = []
        while any(t.is_alive() for t in solves):
            t0 = time.perf_counter()
            health = client.get("/healthz")
            waited = time.perf_counter() - t0
            if health.json()["jobs_running"] == 2:
                times.append(waited)
            time.sleep(0.02)
        for t in solves:
            t.join()
    assert [r.status_code for r in answers] == [200, 200], [r.text[:200] for r in answers]
    assert len(times) >= 30, f"only {len(times)} looks while both solves ran"
    times.sort()
    p50, p95 = times[len(times) // 2], times[int(0.95 * len(times))]
    # 0.1 s is the promise; a shared box under load stretches the tail, not the middle
    assert p50 < 0.1 and p95 < 0.5, (p50, p95, times[-1])


def test_a_worker_that_ignores_its_limit_is_killed_and_replaced():
    """The last resort: work that never checks its deadline (here a plain sleep)
    is killed KILL_AFTER s past its limit and a fresh worker takes its place; a
    worker that dies, during a job or between two, is reported and replaced too."""

    async def run() -> None:
        pool = workers.ProcessWorkers(1)
        await pool.start()
        try:
            first = pool._all.copy()
            t0 = time.perf_counter()
            future, _ = pool.submit(time.sleep, (60,), 0.5)
            with pytest.raises(TimeLimitError, match="killed"):
                await future
            assert time.perf_counter() - t0 < 0.5 + deadline.GRACE + workers.KILL_AFTER + 5
            future, _ = pool.submit(os._exit, (3,), 5.0)
            with pytest.raises(workers.WorkerLost):
                await future
            future, _ = pool.submit(sum, ((1, 2),), 5.0)
            assert await future == 3
            assert not pool._all & first
            (idle,) = pool._all
            idle.kill()  # dies between two jobs
            future, _ = pool.submit(sum, ((1, 2),), 5.0)
            with pytest.raises(workers.WorkerLost):
                await future
            future, _ = pool.submit(sum, ((3, 4),), 5.0)
            assert await future == 7
        finally:
            pool.stop()

    asyncio.run(run())


def test_a_cancelled_job_stops_its_worker_process_search_without_killing_it():
    # CP-SAT proves this board's D in about 12 s of an idle core: still searching when cancelled
    body = json.dumps(big_board(200, "D")).encode()

    async def run() -> None:
        pool = workers.ProcessWorkers(1)
        await pool.start()
        try:
            (worker,) = pool._all
            future, cancel = pool.submit(solve_job, (body, "cpsat", 60.0), 60.0)
            await asyncio.sleep(1.5)
            t0 = time.perf_counter()
            cancel()
            try:
                answer = await future
                assert answer["status"] == "feasible"  # stopped: its best so far
            except TimeLimitError as exc:
                assert "cancelled" in exc.message
            assert time.perf_counter() - t0 < 3
            assert pool._all == {worker} and worker.process.poll() is None  # the same worker, alive
        finally:
            pool.stop()

    asyncio.run(run())
