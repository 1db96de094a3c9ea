"""The routecalc command: solve, validate, render, serve, batch, bench, schema, demo.

Exit status: 0 fine, 1 a route breaks a rule, 2 bad input.

A short run is mostly start-up, so each command imports what it uses when
it runs (a subcommand is a ``cmd_*`` function and its parser), reads and
checks its input before anything else, and loads the solver kernels only
when a position is about to be solved.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from . import deadline
from .errors import PositionError, RouteViolation
from .limits import MAX_SECONDS, seconds_ok
from .model import Position, load_position, read_json
from .solvers import DEFAULT_SOLVER, KERNEL_SOLVERS, SOLVERS

FIXTURES = Path(__file__).resolve().parent / "examples"  # fixtures/ in the source tree, shipped in the wheel
DEMO_FIXTURE = FIXTURES / "1830-late.json"
#: seconds ``routecalc solve`` (and ``render --solve``) may take unless told otherwise (as the service's default)
DEFAULT_TIME_LIMIT = 30.0


def _load(path: str) -> Position:
    return load_position(read_json(Path(path)))


def ready_to_solve(solver: str, game: str) -> bool:
    """Before a solve of a run: the kernels of ``solver`` loaded from the
    disk cache (compiled on a cold one, with progress lines on standard
    error), so that no time limit pays for them, unless the game's answer
    runs none (18XS: some 0.35 s of CPU saved); and the garbage collector
    back on (see :func:`main`). Returns whether the run is now ready for
    any game (the kernels loaded, or a solver that runs none)."""
    from .games import question  # here: a bad file is named before numba is imported

    needed = solver in KERNEL_SOLVERS
    if needed and question(game).kernels:
        from .solvers import warm_up

        warm_up()
        needed = False
    _start_up_done()
    return not needed


def print_pretty(answer: dict, title: str = "") -> None:
    """A readable table of routes (or 18XS transports), other parts of the revenue, and the total."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title or f"{answer.get('company') or answer.get('game')}: best run", show_lines=False)
    for col in ("train", "route", "revenue"):
        table.add_column(col, justify="right" if col == "revenue" else "left")
    for route in answer.get("routes", []):
        skip = set(route["skip"])
        stops = " - ".join(f"({n})" if n in skip else n for n in route["nodes"])
        table.add_row(route["train"], stops, str(route["revenue"]))
    for transport in answer.get("plan", []):
        cells = " - ".join(transport["cells"])
        table.add_row(
            f"{transport['cube']['color']} cube", f"{cells} ({transport['to_kind']})", str(transport["income"])
        )
    for part in answer.get("parts", []):  # revenue that is not a route's (18Cuba's sugar, fees, ...)
        table.add_row(part["name"], part["detail"], str(part["amount"]))
    table.add_row("", "[bold]total[/bold]", f"[bold]{answer['revenue']}[/bold]")
    console = Console()
    console.print(table)
    if "connect" in answer:
        console.print(connect_line(answer["connect"]))
    stats = answer.get("stats", {})
    console.print(
        f"status {answer['status']}, bound {answer['bound']}, solver {answer['solver']}, "
        + ", ".join(f"{k} {v}" for k, v in stats.items())
    )


def connect_line(connect: dict) -> str:
    """18C2C's destination proof in one line."""
    if connect["possible"] is None:
        return "connect: unknown (the time limit stopped the search)"
    if not connect["possible"]:
        return "connect: impossible - no train can run a valid route touching both"
    route = connect["route"]
    how = ", unfolded" if connect["unfolded"] else ""
    return f"connect: possible - {route['train']}{how}: {' - '.join(route['nodes'])}"


@contextmanager
def progress_bar(enabled: bool, label: str):
    """A progress callback drawing a bar on standard error (solvers call it
    only on solves longer than a moment), or None."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=1.0)
        yield lambda fraction: bar.update(task, completed=fraction)


def cmd_solve(args) -> int:
    code = 0
    ready = False
    for path in args.positions:
        try:
            with deadline.within(args.time_limit) as reading:  # the limit covers reading the file too
                position = _load(path)
            # what reading left, before the kernels load: as in the API, no limit pays for that load
            # (it took 0.3-0.4 s of a 1 s limit, so a run solved in less time than the API's)
            left = None if args.time_limit is None else max(reading.left() or 0.0, 0.01)
            if not ready:  # after the file is read: a bad one is named before the kernels load
                ready = ready_to_solve(args.solver, position.game)
            from . import api

            with progress_bar(args.progress, path) as progress:
                answer = api.solve(
                    position, args.solver, time_limit=left, route_limit=args.route_limit, progress=progress
                )
        except PositionError as exc:
            out = {"file": path, "error": str(exc), "where": exc.where}
            print(json.dumps(out), flush=True)
            code = 2
            continue
        if args.pretty:
            print_pretty(answer, title=path)
        elif len(args.positions) > 1:
            print(json.dumps({"file": path, **answer}), flush=True)
        else:
            print(json.dumps(answer, indent=2))
    return code


def _checked(work):
    """Run ``work()``; print a bad input (exit 2) or a broken rule (exit 1) as JSON.

    Returns (exit code, result): code 0 with the result when all is well."""
    try:
        return 0, work()
    except PositionError as exc:
        print(json.dumps({"error": str(exc), "where": exc.where}))
        return 2, None
    except RouteViolation as exc:
        print(json.dumps({"valid": False, "violation": exc.to_json()}, indent=2))
        return 1, None


def cmd_validate(args) -> int:
    def read_and_validate():
        with deadline.within(args.time_limit):  # the limit covers reading the file too
            position, routes = _load(args.position), read_json(Path(args.routes), "routes")
            _start_up_done()
            from . import api

            return api.validate(position, routes)

    code, result = _checked(read_and_validate)
    if code == 0:
        print(json.dumps({"valid": True, **result}, indent=2))
    return code


def cmd_demo(args) -> int:
    position = _load(str(DEMO_FIXTURE))
    ready_to_solve(args.solver, position.game)
    from . import api

    print(
        f"{DEMO_FIXTURE.name}: {position.company} runs {', '.join(t.name for t in position.trains)} "
        f"in phase {position.phase_name}"
    )
    print_pretty(api.solve(position, args.solver), title=f"{position.company}: what must it run?")
    return 0


def cmd_render(args) -> int:
    def load_and_route():
        with deadline.within(args.time_limit if args.solve else None):
            position = _load(args.position)
        _start_up_done()
        from . import api

        if args.solve:
            return position, api.solve(position, args.solver, time_limit=args.time_limit)
        if args.routes:
            return position, api.validate(position, read_json(Path(args.routes), "routes"), time_limit=args.time_limit)
        return position, None

    code, loaded = _checked(load_and_route)
    if code:
        return code
    position, result = loaded
    from .render import render_svg

    svg = render_svg(position, result)
    if args.output == "-":
        sys.stdout.write(svg)
    else:
        try:
            Path(args.output).write_text(svg)
        except OSError as exc:
            print(json.dumps({"error": f"cannot write: {exc.strerror or exc}", "where": args.output}))
            return 2
        lines = len(result.get("routes", result.get("plan", []))) if result else 0
        routes = f", {lines} routes, revenue {result['revenue']}" if result else ""
        print(f"wrote {args.output}{routes}", file=sys.stderr)
    return 0


def cmd_serve(args) -> int:
    """Run the HTTP service; settings reach every worker process through the environment."""
    import uvicorn

    _start_up_done()
    from service.guard import GuardedH11Protocol

    if not args.allowed_host:  # the bound address, and its names on the loopback
        loopback = args.host in ("127.0.0.1", "localhost", "::1")
        args.allowed_host = (
            ["*"]
            if args.host in ("0.0.0.0", "::", "")
            else [args.host] + (["127.0.0.1", "localhost", "::1"] if loopback else [])
        )
    args.allowed_host = ",".join(dict.fromkeys(args.allowed_host))  # each name once (the 421 message lists them)
    args.cors_origin = ",".join(args.cors_origin) if args.cors_origin else None
    args.solve_in = None if args.solve_in is None else int(args.solve_in == "processes")
    for option, env in (
        ("max_body", "ROUTECALC_MAX_BODY"),
        ("max_time_limit", "ROUTECALC_MAX_TIME_LIMIT"),
        ("threads", "ROUTECALC_SOLVE_THREADS"),
        ("solve_in", "ROUTECALC_SOLVE_PROCESSES"),
        ("queue", "ROUTECALC_QUEUE"),
        ("allowed_host", "ROUTECALC_ALLOWED_HOSTS"),
        ("cors_origin", "ROUTECALC_CORS_ORIGINS"),
    ):
        if getattr(args, option) is not None:
            os.environ[env] = str(getattr(args, option))
    uvicorn.run(
        "service.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        access_log=args.access_log,
        http=GuardedH11Protocol,
    )
    return 0


def cmd_batch(args) -> int:
    from .batch import cli_batch

    return cli_batch(args)


def cmd_bench(args) -> int:
    from .bench import cli_bench

    return cli_bench(args)


def seconds(text: str) -> float:
    """An argument in seconds: a number above 0 and at most ``MAX_SECONDS``
    (argparse names the option otherwise)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not seconds_ok(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0 and at most {MAX_SECONDS:,}")
    return value


def count(text: str) -> int:
    """An argument counting something (routes, workers): a whole number of 1 or more."""
    if not text.isdecimal() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return int(text)


def whole(text: str) -> int:
    """An argument that may be 0 (a queue's length): a whole number of 0 or more."""
    if not text.isdecimal():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 0 or more")
    return int(text)


def port(text: str) -> int:
    """A TCP port: 0 (any free one) to 65535."""
    if not text.isdecimal() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number from 0 to 65535")
    return int(text)


def _add_time_limit(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--time-limit`` in seconds, ``DEFAULT_TIME_LIMIT`` unless given
    (``help_text`` shows it as ``%(default)g``)."""
    parser.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT, help=help_text)


def add_batch_options(parser: argparse.ArgumentParser) -> None:
    """How ``batch`` and ``bench`` spread the work (the engine and its workers) and limit each solve."""
    _add_time_limit(parser, "seconds per position (default %(default)g)")
    parser.add_argument("--route-limit", type=count, default=None, metavar="N", help="routes per train at most")
    parser.add_argument(
        "--engine",
        default="auto",
        choices=["auto", "ray", "processes", "inline"],
        help="auto: Ray when installed, else local processes",
    )
    parser.add_argument("--address", default=None, metavar="HOST:PORT", help="join this Ray cluster")
    parser.add_argument("--workers", type=count, default=None, help="default: every CPU (of the cluster)")
    parser.add_argument("--batch-size", type=count, default=None, metavar="N", help="positions per task")
    parser.add_argument("--resume", action="store_true", help="keep the output's lines and skip their positions")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    parser.add_argument(
        "--external",
        action="append",
        default=[],
        metavar='"[NAME=]CMD {file}"',
        help="another solver: reads the position file, prints an answer",
    )


def cmd_schema(args) -> int:
    from .schemas import schema_text

    sys.stdout.write(schema_text(args.name))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from importlib.metadata import version

    parser = argparse.ArgumentParser(prog="routecalc", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('routecalc')}")
    sub = parser.add_subparsers(dest="command", required=True)

    solve = sub.add_parser("solve", help="best routes for one or more positions")
    solve.add_argument("positions", nargs="+", metavar="POSITION.json")
    solve.add_argument("--solver", default=DEFAULT_SOLVER, choices=sorted(SOLVERS))
    _add_time_limit(solve, "seconds (default %(default)g); a solve it stops answers the best found, status feasible")
    solve.add_argument(
        "--route-limit",
        type=count,
        default=None,
        metavar="N",
        help="routes enumerated per train at most (the answer may then be feasible, not optimal)",
    )
    solve.add_argument("--progress", action="store_true", help="a progress bar on standard error for long solves")
    solve.add_argument("--pretty", action="store_true", help="a readable table")
    solve.set_defaults(func=cmd_solve)

    validate = sub.add_parser("validate", help="check and score proposed routes")
    validate.add_argument("position", metavar="POSITION.json")
    validate.add_argument("routes", metavar="ROUTES.json")
    _add_time_limit(validate, "seconds (default %(default)g)")
    validate.set_defaults(func=cmd_validate)

    demo = sub.add_parser("demo", help="solve a bundled example")
    demo.add_argument("--solver", default=DEFAULT_SOLVER, choices=sorted(SOLVERS))
    demo.set_defaults(func=cmd_demo)

    render = sub.add_parser("render", help="draw the board, with routes, as SVG")
    render.add_argument("position", metavar="POSITION.json")
    drawn = render.add_mutually_exclusive_group()
    drawn.add_argument("--routes", metavar="ROUTES.json", help="draw these routes (validated and scored first)")
    drawn.add_argument("--solve", action="store_true", help="draw the best routes")
    render.add_argument("--solver", default=DEFAULT_SOLVER, choices=sorted(SOLVERS))
    _add_time_limit(render, "seconds, with --solve or --routes (default %(default)g)")
    render.add_argument("-o", "--output", default="-", metavar="BOARD.svg", help="default: standard output")
    render.set_defaults(func=cmd_render)

    serve = sub.add_parser("serve", help="run the HTTP service and its web page")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=port, default=8000)
    serve.add_argument("--workers", type=count, default=1, help="uvicorn worker processes")
    serve.add_argument(
        "--threads",
        type=count,
        default=None,
        help="solve workers per uvicorn worker, each one job at a time (default: cores)",
    )
    serve.add_argument(
        "--solve-in",
        choices=["processes", "threads"],
        default=None,
        help="solve workers are processes (default: /healthz never waits for a solve's GIL) or threads",
    )
    serve.add_argument(
        "--max-time-limit",
        type=seconds,
        default=None,
        help="seconds; caps a request's time_limit and is its default (default 30)",
    )
    serve.add_argument("--max-body", type=count, default=None, help="request body limit in bytes (default 1000000)")
    serve.add_argument(
        "--queue",
        type=whole,
        default=None,
        help="requests waiting for a solve worker at most; beyond them 503 (default 8)",
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        metavar="NAME",
        help="a Host header name served (repeat; '*' any); default: the --host address "
        "(and the loopback names), any for 0.0.0.0",
    )
    serve.add_argument(
        "--cors-origin",
        action="append",
        metavar="ORIGIN",
        help="a web origin allowed to call the service from its pages (repeat); default none",
    )
    serve.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    serve.add_argument("--no-access-log", dest="access_log", action="store_false")
    serve.set_defaults(func=cmd_serve)

    batch = sub.add_parser("batch", help="solve many positions (Ray, or local processes) into JSON lines")
    batch.add_argument("inputs", nargs="+", metavar="INPUT", help="position files, folders, JSON-lines files")
    batch.add_argument("-o", "--output", required=True, metavar="RESULTS.jsonl")
    batch.add_argument("--solver", default=DEFAULT_SOLVER, help=f"{', '.join(sorted(SOLVERS))} or an --external")
    add_batch_options(batch)
    batch.set_defaults(func=cmd_batch)

    bench = sub.add_parser("bench", help="solvers against each other and the corpus figures: table and plots")
    bench.add_argument("inputs", nargs="+", metavar="CORPUS", help="position files, folders, JSON-lines files")
    bench.add_argument("--solvers", default="auto,fast,cpsat", help="comma-separated (default: auto,fast,cpsat)")
    bench.add_argument(
        "-o",
        "--output",
        default="bench",
        metavar="FOLDER",
        help="results.jsonl, report.md, times.svg/png, revenue.svg/png (default: bench)",
    )
    add_batch_options(bench)
    bench.set_defaults(func=cmd_bench)

    schema = sub.add_parser("schema", help="print the JSON Schema of a position or of an answer")
    schema.add_argument("name", choices=["position", "answer"])
    schema.set_defaults(func=cmd_schema)
    return parser


def main(argv: list[str] | None = None) -> int:
    """The command. Start-up (imports, reading the input, loading the
    kernels) creates many objects and little garbage, and the collector's
    passes over numba's objects would cost more than the solve of a small
    position: it is off until :func:`ready_to_solve`, and in a process of
    its own (``argv`` None) the start-up objects are then frozen out of its
    passes (``gc.freeze``)."""
    global _own_process, _collect
    _own_process, _collect = argv is None, gc.isenabled()
    gc.disable()
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except BrokenPipeError:
        # The reader went away (``routecalc solve ... | head``): stop quietly, and
        # point stdout at nothing so that the interpreter's final flush cannot fail.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if _collect:
            gc.enable()


_own_process = False  # main() is the process's command
_collect = True  # the collector was on when main() started


def _start_up_done() -> None:
    """The collector back on (and the start-up objects frozen out of its passes in a process of our own)."""
    if _collect and not gc.isenabled():
        if _own_process:
            gc.freeze()
        gc.enable()


if __name__ == "__main__":
    sys.exit(main())
