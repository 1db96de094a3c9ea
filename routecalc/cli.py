"""The ``routecalc`` command: solve, validate, demo (and the faces later issues add).

Exit status: 0 fine, 1 a route breaks a rule, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import api
from .errors import PositionError, RouteViolation
from .model import load_position, read_json
from .solvers import DEFAULT_SOLVER, SOLVERS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DEMO_FIXTURE = FIXTURES / "1830-late.json"


def _load(path: str):
    return load_position(read_json(Path(path)))


def print_pretty(answer: dict, title: str = "") -> None:
    """A readable table of routes and revenue."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title or f"{answer['company']}: best run", show_lines=False)
    for col in ("train", "route", "revenue"):
        table.add_column(col, justify="right" if col == "revenue" else "left")
    for route in answer["routes"]:
        skip = set(route["skip"])
        stops = " - ".join(f"({n})" if n in skip else n for n in route["nodes"])
        table.add_row(route["train"], stops, str(route["revenue"]))
    table.add_row("", "[bold]total[/bold]", f"[bold]{answer['revenue']}[/bold]")
    console = Console()
    console.print(table)
    stats = answer.get("stats", {})
    console.print(f"status {answer['status']}, bound {answer['bound']}, solver {answer['solver']}, "
                  + ", ".join(f"{k} {v}" for k, v in stats.items()))


def cmd_solve(args) -> int:
    code = 0
    for path in args.positions:
        try:
            answer = api.solve(_load(path), args.solver, time_limit=args.time_limit)
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


def cmd_validate(args) -> int:
    try:
        position = _load(args.position)
        result = api.validate(position, read_json(Path(args.routes)))
    except PositionError as exc:
        print(json.dumps({"error": str(exc), "where": exc.where}))
        return 2
    except RouteViolation as exc:
        print(json.dumps({"valid": False, "violation": exc.to_json()}, indent=2))
        return 1
    print(json.dumps({"valid": True, **result}, indent=2))
    return 0


def cmd_demo(args) -> int:
    position = _load(str(DEMO_FIXTURE))
    print(f"{DEMO_FIXTURE.name}: {position.company} runs {', '.join(t.name for t in position.trains)} "
          f"in phase {position.phase_name}")
    print_pretty(api.solve(position, args.solver), title=f"{position.company}: what must it run?")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="routecalc", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    solve = sub.add_parser("solve", help="best routes for one or more positions")
    solve.add_argument("positions", nargs="+", metavar="POSITION.json")
    solve.add_argument("--solver", default=DEFAULT_SOLVER, choices=sorted(SOLVERS))
    solve.add_argument("--time-limit", type=float, default=None, help="seconds")
    solve.add_argument("--pretty", action="store_true", help="a readable table")
    solve.set_defaults(func=cmd_solve)

    validate = sub.add_parser("validate", help="check and score proposed routes")
    validate.add_argument("position", metavar="POSITION.json")
    validate.add_argument("routes", metavar="ROUTES.json")
    validate.set_defaults(func=cmd_validate)

    demo = sub.add_parser("demo", help="solve a bundled example")
    demo.add_argument("--solver", default=DEFAULT_SOLVER, choices=sorted(SOLVERS))
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
