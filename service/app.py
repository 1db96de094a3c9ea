"""The HTTP service: solve, validate, render, the games, and the web page.

Every engine call (reading the position, compiling, solving, drawing) runs
in a solve worker (``service.workers``): a worker process by default, so
the event loop never waits for the GIL and ``/healthz`` answers in
milliseconds while long solves run; or a thread of this process
(``processes=False``), where solver names are looked up in
``routecalc.solvers.SOLVERS`` at request time and solvers registered after
start-up are served too. Bad input gets the engine's named error
(``{"error", "where"}``: 400 for unreadable JSON, 422 otherwise), a body
over the size limit 413.

Settings come from the environment so that every uvicorn worker process
reads the same: ``ROUTECALC_MAX_BODY`` (bytes), ``ROUTECALC_MAX_TIME_LIMIT``
(seconds; caps a request's ``time_limit`` and is the default),
``ROUTECALC_SOLVE_THREADS`` (solve workers), ``ROUTECALC_SOLVE_PROCESSES``
(``0``: workers are threads).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from routecalc import api, solvers
from routecalc.errors import PositionError, RoutecalcError, RouteViolation
from routecalc.model import is_wrapper, load_position, read_json, unwrap
from routecalc.render import render_svg
from routecalc.rules import RULES
from routecalc.schemas import schema_text
from routecalc.trains import Train

from . import schemas
from .guard import Guard
from .workers import ClientGone, ProcessWorkers, ThreadWorkers

LOG = logging.getLogger("routecalc.service")
STATIC = Path(__file__).resolve().parent / "static"
FIXTURES = Path(__file__).resolve().parent.parent / "routecalc" / "examples"  # fixtures/, shipped in the wheel
DEMO_FIXTURE = "1830-late"
#: Host names of the loopback address (and the name Starlette's test client sends).
#: Share of a render request's time limit its solve may use (the rest draws).
RENDER_SOLVE_SHARE = 0.75
#: Seconds between two looks at whether the client of a running job hung up.
DISCONNECT_POLL = 0.2
LOOPBACK = ("127.0.0.1", "localhost", "::1", "testserver")


@dataclass(frozen=True)
class Settings:
    max_body: int = 1_000_000
    max_time_limit: float = 30.0
    #: solve workers: each runs one job at a time
    solve_threads: int = os.cpu_count() or 2
    #: requests waiting for a solve worker at most; beyond them 503 + Retry-After
    queue: int = 8
    #: seconds a client has to send the body of a request (408 after)
    body_timeout: float = 10.0
    #: Host header names served (``*``: any); the loopback names by default
    allowed_hosts: tuple[str, ...] = LOOPBACK
    #: origins allowed to call from web pages elsewhere (CORS); none by default
    cors_origins: tuple[str, ...] = ()
    #: solve workers are processes (the default); threads of this process otherwise
    processes: bool = True

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ

        def names(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(filter(None, (n.strip() for n in env[key].split(",")))) if key in env else default

        return cls(
            int(env.get("ROUTECALC_MAX_BODY", cls.max_body)),
            float(env.get("ROUTECALC_MAX_TIME_LIMIT", cls.max_time_limit)),
            int(env.get("ROUTECALC_SOLVE_THREADS", cls.solve_threads)),
            int(env.get("ROUTECALC_QUEUE", cls.queue)),
            float(env.get("ROUTECALC_BODY_TIMEOUT", cls.body_timeout)),
            names("ROUTECALC_ALLOWED_HOSTS", LOOPBACK),
            names("ROUTECALC_CORS_ORIGINS", ()),
            env.get("ROUTECALC_SOLVE_PROCESSES", "1") != "0",
        )


def error(status: int, message: str, where: str, headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    """The service's one error shape; text a client sent is escaped, never a failed encoding."""
    safe = message.encode("utf-8", "backslashreplace").decode("utf-8")
    return JSONResponse(
        {"error": safe, "where": where.encode("utf-8", "backslashreplace").decode("utf-8"), **extra},
        status_code=status,
        headers=headers,
    )


def internal(exc: Exception) -> JSONResponse:
    return error(500, f"internal error ({type(exc).__name__}); the service stays up", "server")


class Busy(Exception):
    """Every solve worker is busy and the queue is full."""


def fixture_files() -> dict[str, Path]:
    """The bundled example positions by name (file stem)."""
    return {p.stem: p for p in sorted(FIXTURES.glob("*.json"))} if FIXTURES.is_dir() else {}


def describe_train(train: Train) -> dict:
    return {
        "name": train.name,
        "distance": [
            {"nodes": sorted(g.categories), "pay": g.pay, "visit": g.visit, "multiplier": g.multiplier}
            for g in train.groups
        ],
        "multiplier": train.multiplier,
        "fill": train.fill,
        "hex_limit": train.hex_limit,
        "gauge": train.gauge,
    }


def games() -> list[dict]:
    return [
        {
            "name": name,
            "route_engine": rules.route_engine,
            "has_companies": rules.has_companies,
            "kinds": sorted(rules.kinds),
            "train_state_keys": sorted(rules.train_state_keys),
            "trains": [describe_train(rules.catalogue(t, "trains")) for t in rules.train_names],
        }
        for name, rules in RULES.items()
    ]


# -- the jobs a solve worker runs (module-level: a worker process imports them by name) --


def solve_job(body: bytes, solver: str | None, time_limit: float) -> dict:
    started = time.perf_counter()
    answer = api.solve(read_json(body), solver or solvers.DEFAULT_SOLVER, time_limit=time_limit)
    return {**answer, "elapsed": round(time.perf_counter() - started, 4), "time_limit": time_limit}


def parts(data: Any, keys: tuple[str, ...]) -> tuple:
    if not isinstance(data, dict):
        raise PositionError("body", "must be a JSON object")
    for key in data:
        if key not in keys + ("reference",):
            raise PositionError(key, f"unknown key (expected {', '.join(keys)})")
    return tuple(data.get(k) for k in keys)


def validate_job(body: bytes) -> dict:
    data = read_json(body)
    position_data, routes = parts(data, ("position", "routes"))
    for key in ("position", "routes"):
        if key not in data:  # a null is the engine's to name, as routecalc.api.validate names it
            raise PositionError(key, "missing")
    try:
        return {"valid": True, **api.validate(load_position(position_data), routes)}
    except RouteViolation as exc:
        return {"valid": False, "violation": exc.to_json()}


def render_job(body: bytes, solve: bool, solver: str | None, time_limit: float) -> str:
    data = read_json(body)
    if is_wrapper(data):
        position_data, routes = parts(data, ("position", "routes"))
    else:
        position_data, routes = data, None
    position = load_position(position_data)
    if solve and routes is not None:
        raise PositionError("solve", "give routes or solve=true, not both")
    result = None
    if solve:
        # the drawing needs some of the limit too
        result = api.solve(position, solver or solvers.DEFAULT_SOLVER, time_limit=RENDER_SOLVE_SHARE * time_limit)
    elif routes is not None:
        result = api.validate(position, routes)
    return render_svg(position, result)


def _body_schema(model: type, examples: dict[str, Any]) -> dict:
    return {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}, "examples": examples}
        },
    }


def _responses(ok: type | None = None, media: str | None = None, errors=(400, 408, 413, 415, 421, 422, 503)) -> dict:
    out: dict[Any, Any] = {}
    if ok is not None:
        out[200] = {"model": ok}
    if media:
        out[200] = {"content": {media: {"schema": {"type": "string"}}}, "description": "the board"}
    for code in errors:
        out[code] = {
            "model": schemas.Error,
            "description": {
                400: "unreadable JSON",
                408: "the body did not arrive in time",
                413: "body over the size limit",
                415: "the body is not application/json",
                421: "a Host this service does not serve",
                422: "not a valid position, route or option: `where` names it",
                503: "every solve thread busy and the queue full: try again after `Retry-After` seconds",
            }[code],
        }
    return out


def create_app(settings: Settings | None = None) -> FastAPI:
    """The FastAPI application (``uvicorn --factory service.app:create_app``)."""
    settings = settings or Settings.from_env()
    workers = (
        ProcessWorkers(settings.solve_threads, preload=(__name__,))  # the jobs below
        if settings.processes
        else ThreadWorkers(settings.solve_threads)
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await workers.start()  # the kernels and CP-SAT loaded before the first request
        try:
            yield
        finally:
            workers.stop()

    app = FastAPI(
        title="routecalc",
        version="1",
        lifespan=lifespan,
        description="Exact route optimisation and revenue calculation for 18xx games. "
        "Positions follow position-format.md; rules route-rules.md.",
    )
    app.add_middleware(
        Guard, max_body=settings.max_body, body_timeout=settings.body_timeout, allowed_hosts=settings.allowed_hosts
    )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["content-type"],
        )
    admitted = 0  # requests running or waiting for a solve worker (counted on the event loop)

    async def in_pool(request: Request, seconds: float, fn: Callable, *args) -> Any:
        """Run ``fn`` in a solve worker under a ``seconds`` deadline (from when it
        starts); refuse with Busy when the queue is full, and cancel the work
        (its next deadline check fails) when the client hangs up."""
        nonlocal admitted
        if admitted >= settings.solve_threads + settings.queue:
            raise Busy()

        def release(done) -> None:
            nonlocal admitted
            admitted -= 1
            if not done.cancelled():
                done.exception()  # read, so that a cancelled job's error is not logged as never retrieved

        admitted += 1
        future, cancel = workers.submit(fn, args, seconds)
        future.add_done_callback(release)
        while True:
            done, _ = await asyncio.wait({future}, timeout=DISCONNECT_POLL)
            if done:
                try:
                    return future.result()
                except (RoutecalcError, ClientGone):
                    raise
                except Exception as exc:  # a bug: answered here, so the connection stays usable
                    LOG.error("internal error in %s", request.url.path, exc_info=exc)
                    return internal(exc)
            if await request.is_disconnected():
                cancel()
                raise ClientGone()

    def only_known_query(request: Request) -> None:
        """A misspelt query parameter (``time_limt``) is refused, not ignored:
        the request would run with the default it meant to change. The
        endpoint's own parameters are those its signature declares."""
        known = sorted(p.alias for p in request.scope["route"].dependant.query_params)
        for name in request.query_params:
            if name not in known:
                raise PositionError(f"query.{name}", f"unknown query parameter (known: {', '.join(known) or 'none'})")

    def time_limit_of(requested: float | None) -> float:
        return min(requested, settings.max_time_limit) if requested is not None else settings.max_time_limit

    @app.exception_handler(PositionError)
    async def position_error(request: Request, exc: PositionError):
        return error(400 if exc.where == "json" else 422, str(exc), exc.where)

    @app.exception_handler(RouteViolation)
    async def route_violation(request: Request, exc: RouteViolation):
        return error(422, str(exc), "routes" if exc.route is None else f"routes[{exc.route}]", violation=exc.to_json())

    @app.exception_handler(Busy)
    async def busy(request: Request, exc: Busy):
        wait = max(1, math.ceil(settings.max_time_limit / 2))
        return error(
            503,
            f"all {settings.solve_threads} solve workers are busy and {settings.queue} requests "
            f"wait: try again in {wait} s",
            "queue",
            headers={"Retry-After": str(wait)},
        )

    @app.exception_handler(ClientGone)
    async def client_gone(request: Request, exc: ClientGone):
        return error(499, "the client went away: its work was cancelled", "client")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        where = {404: "path", 405: "method"}.get(exc.status_code, "request")
        return error(exc.status_code, str(exc.detail), where, headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception):
        return internal(exc)

    @app.exception_handler(RequestValidationError)
    async def bad_parameter(request: Request, exc: RequestValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return error(422, f"{where}: {first.get('msg', 'invalid')}", where)

    demo = fixture_files().get(DEMO_FIXTURE)
    demo_position = read_json(demo) if demo else None
    examples = {DEMO_FIXTURE: {"summary": f"fixtures/{DEMO_FIXTURE}.json", "value": demo_position}} if demo else {}
    solver_help = f"a solver of the registry (at start: {', '.join(solvers.SOLVERS)}); default {solvers.DEFAULT_SOLVER}"
    time_help = f"seconds; capped at {settings.max_time_limit:g} (the default)"

    @app.post(
        "/v1/solve",
        responses=_responses(schemas.Answer),
        summary="Best routes of a position",
        openapi_extra={"requestBody": _body_schema(schemas.SolveRequest, examples)},
    )
    async def solve(
        request: Request,
        solver: str | None = Query(None, description=solver_help),
        time_limit: float | None = Query(None, gt=0, description=time_help),
    ):
        """The maximum-revenue route set of the operating company. A solve stopped by its
        time limit answers the best run found with `status: feasible` and a true `bound`."""
        only_known_query(request)
        limit = time_limit_of(time_limit)
        return await in_pool(request, limit, solve_job, await request.body(), solver, limit)

    validate_examples = (
        {
            DEMO_FIXTURE: {
                "summary": "NYC's 4-train on the demo board",
                "value": {
                    "position": demo_position,
                    "routes": [
                        {
                            "train": "4",
                            "nodes": ["D14-0", "E19-0", "F20-1", "G19-1"],
                            "hexes": [["D14", "D16", "D18", "E19"], ["E19", "F20"], ["F20", "G19"]],
                        }
                    ],
                },
            }
        }
        if demo
        else {}
    )

    @app.post(
        "/v1/validate",
        responses=_responses(schemas.ValidateResult),
        summary="Check and score routes",
        openapi_extra={"requestBody": _body_schema(schemas.ValidateRequest, validate_examples)},
    )
    async def validate(request: Request):
        """Scored routes and their total (`valid: true`), or the rule a route breaks
        (`valid: false` with the named `violation`)."""
        only_known_query(request)
        return await in_pool(request, settings.max_time_limit, validate_job, await request.body())

    render_examples = (
        {DEMO_FIXTURE: {"summary": "the demo board", "value": {"position": demo_position}}} if demo else {}
    )

    @app.post(
        "/v1/render",
        responses=_responses(media="image/svg+xml"),
        response_class=Response,
        summary="The board as SVG",
        openapi_extra={"requestBody": _body_schema(schemas.RenderRequest, render_examples)},
    )
    async def render(
        request: Request,
        solve: bool = Query(False, description="draw the best routes"),
        solver: str | None = Query(None, description=solver_help),
        time_limit: float | None = Query(None, gt=0, description=time_help),
    ):
        """The board (hexes or squares, track, gauges, cities, tokens, towns, offboards);
        with `routes` (validated and scored first) or `solve=true`, the routes in colour
        and a legend with each train's revenue."""
        only_known_query(request)
        limit = time_limit_of(time_limit)
        svg = await in_pool(request, limit, render_job, await request.body(), solve, solver, limit)
        if isinstance(svg, Response):  # an error
            return svg
        return Response(svg, media_type="image/svg+xml")

    @app.get("/v1/games", response_model=list[schemas.GameInfo], summary="Rule sets and their trains")
    async def list_games():
        return games()

    @app.get("/v1/fixtures", response_model=list[schemas.FixtureInfo], summary="Bundled example positions")
    async def list_fixtures():
        out = []
        for name, path in fixture_files().items():
            data = unwrap(read_json(path))
            out.append(
                {
                    "name": name,
                    "game": data.get("game"),
                    "company": data.get("company"),
                    "trains": [t if isinstance(t, str) else t.get("name") for t in data.get("trains", [])],
                }
            )
        return out

    @app.get(
        "/v1/fixtures/{name}",
        response_model=schemas.Position,
        summary="One bundled example",
        responses={404: {"model": schemas.Error}},
    )
    async def get_fixture(name: str):
        path = fixture_files().get(name)
        if path is None:
            return error(404, f"no fixture {name!r}", "name")
        return JSONResponse(unwrap(read_json(path)))

    @app.get(
        "/v1/schema/{name}",
        summary="The JSON Schema of a position or an answer",
        responses={200: {"content": {"application/json": {"schema": {"type": "object"}}}}},
    )
    async def get_schema(name: Literal["position", "answer"]):
        """The JSON Schema (draft 2020-12) of a position (every game) or of the optimiser's answer,
        as shipped in the package (``routecalc schema position|answer``)."""
        return JSONResponse(json.loads(schema_text(name)))

    @app.get("/healthz", response_model=schemas.Health, summary="Liveness, solvers, load")
    async def healthz():
        return {
            "status": "ok",
            "solvers": list(solvers.SOLVERS),
            "default_solver": solvers.DEFAULT_SOLVER,
            "jobs_running": workers.running,
            "max_time_limit": settings.max_time_limit,
        }

    @app.get("/", include_in_schema=False)
    async def index():
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def openapi() -> dict:
        """FastAPI's document, plus the request-body models (read by the engine, not by FastAPI)."""
        if app.openapi_schema is None:
            doc = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            components = doc.setdefault("components", {}).setdefault("schemas", {})
            for model in (schemas.SolveRequest, schemas.ValidateRequest, schemas.RenderRequest):
                schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
                components.update(schema.pop("$defs", {}))
                components[model.__name__] = schema
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = openapi
    return app
