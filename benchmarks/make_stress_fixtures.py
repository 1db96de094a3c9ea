"""Build the stress positions ``fixtures/stress-*.json`` from corpus boards.

Late boards of real games carry long trains, but their track is sparse
enough that every route of a train can still be listed. These positions
take such boards and push them to where enumeration explodes, the way later
phases and bigger maps do:

- :func:`densify` lays more track and stops: every single-city or
  single-town cell gets a path to each of its edges (a six-exit grey tile),
  every bare cell a town worth 10 with six exits, every cell of plain track
  the straight paths that are not there yet (a cross-over tile).
  Offboards, multi-stop cells and impassable borders stay.
- :func:`tile_board` puts copies of a board side by side (an 18C2C-size
  map from a 1830 one); tokens are copied, so the company has a home in
  every copy.
- the trains are replaced by longer ones (D, 8, express), or kept where
  the board alone makes them long (1867 trains pass towns for free).

The later ones follow games whose own auto-routers give up on such boards:
a late 1828-style board (the 1830 map grown by half, as 1828 grows it) with
a D and an 8E train, a small 1889-style island board (the 18Chesapeake
corpus map, about 1889's size) with two diesels, and the densified 1867
final-round board with 1867's 5+5E express and an 8.

Each fixture records its optimum (``reference.optimum``), proved by two
solvers with no limit (``tests/test_stress_optima.py`` proves it again with
``-m slow``).

Run ``python benchmarks/make_stress_fixtures.py`` from the repository root;
the output is deterministic.
"""

from __future__ import annotations

import copy
import json
import re

from paths import CORPUS, ROOT

from routecalc.geometry import Grid

FIXTURES = ROOT / "fixtures"

_NODE = re.compile(r"^(city|town|offboard|junction)(=|$)")
_PATH = re.compile(r"^path=(.*)$")


def _path_edges(part: str) -> list[int]:
    keys = dict(kv.split(":", 1) for kv in _PATH.match(part).group(1).split(",") if ":" in kv)
    return [int(keys[k]) for k in ("a", "b") if not keys[k].startswith("_")]


def densify_code(code: str, num_edges: int = 6) -> str:
    """More track on one cell's tile (see the module docstring)."""
    parts = [p for p in code.split(";") if p]
    nodes = [p for p in parts if _NODE.match(p)]
    used = {e for p in parts if _PATH.match(p) for e in _path_edges(p)}
    borders = {int(m.group(1)) for p in parts if (m := re.match(r"border=edge:(\d+),type:impassable", p))}
    free = [e for e in range(num_edges) if e not in used and e not in borders]
    if len(nodes) == 1 and nodes[0].startswith(("city", "town")):
        parts += [f"path=a:{e},b:_0" for e in free]
    elif not nodes and not used:
        parts += ["town=revenue:10"] + [f"path=a:{e},b:_0" for e in free]
    elif not nodes:
        half = num_edges // 2
        parts += [f"path=a:{e},b:{e + half}" for e in range(half) if e in free and e + half in free]
    return ";".join(parts)


def densify(position: dict) -> dict:
    out = copy.deepcopy(position)
    for cell in out["hexes"]:
        cell["code"] = densify_code(cell["code"])
    return out


def tile_board(position: dict, across: int, down: int) -> dict:
    """``across x down`` copies of the board, side by side."""
    grid = Grid.make(position["layout"], position.get("axes"))
    coords = {c["id"]: grid.coords(c["id"]) for c in position["hexes"]}
    xs = [x for x, _ in coords.values()]
    ys = [y for _, y in coords.values()]
    width, height = max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
    # Shifts keep the doubled-coordinate parity: an odd step gets a one-row stagger.
    step_x, stagger = width, width % 2
    step_y = height + height % 2
    out = copy.deepcopy(position)
    out["hexes"] = []
    for i in range(across):
        for j in range(down):
            dx, dy = i * step_x, j * step_y + (i * stagger) % 2

            def moved(cell_id: str, dx: int = dx, dy: int = dy) -> str:
                x, y = grid.coords(cell_id)
                return grid.cell_id(x + dx, y + dy)

            for cell in position["hexes"]:
                new = copy.deepcopy(cell)
                new["id"] = moved(cell["id"])
                if "neighbors" in new:
                    new["neighbors"] = {e: moved(c) for e, c in new["neighbors"].items()}
                out["hexes"].append(new)
    return out


def _corpus(name: str) -> dict:
    return json.loads((CORPUS / "generic" / name).read_text())["position"]


def _1867_train(name: str, cities: int) -> dict:
    """An 1867 n-train: ``cities`` cities or offboards, towns passed for free."""
    return {
        "name": name,
        "distance": [
            {"nodes": ["city", "offboard"], "pay": cities, "visit": cities},
            {"nodes": ["town"], "pay": 0, "visit": 99},
        ],
        "fill": True,
    }


#: 1867's 5+5E: five offboards doubled, cities and towns passed for free.
EXPRESS_1867 = {
    "name": "5+5E",
    "distance": [{"nodes": ["offboard"], "pay": 5, "visit": 5}, {"nodes": ["city", "town"], "pay": 0, "visit": 99}],
    "multiplier": 2,
    "fill": True,
}


def stress_positions() -> dict[str, tuple[dict, str]]:
    """Fixture name -> (position, how it was made)."""
    late_1867 = densify(_corpus("1867/21268-a994.json"))
    two_d = copy.deepcopy(late_1867)
    two_d["trains"] = ["D", "D"]

    late_1830 = _corpus("1830/1830_game_end_bank-a652.json")
    big = densify(tile_board(late_1830, 2, 2))
    big["trains"] = ["8", "6"]

    express = densify(late_1830)
    express["trains"] = [
        "8E",
        {
            "name": "6E",
            "distance": [
                {"nodes": ["city", "offboard"], "pay": 6, "visit": 99},
                {"nodes": ["town"], "pay": 0, "visit": 99},
            ],
            "multiplier": 2,
        },
    ]

    late_1828 = densify(tile_board(late_1830, 2, 1))
    late_1828["trains"] = ["D", "8E"]

    island = densify(_corpus("18Chesapeake/3055-a600.json"))
    island["trains"] = ["D", "D"]

    final_1867 = densify(_corpus("1867/navig18xx_1867_bc_CNR.json"))
    final_1867["trains"] = [EXPRESS_1867, _1867_train("8", 8)]
    return {
        "stress-1867-towns": (
            late_1867,
            "1867 corpus board 21268-a994 (C&O, late game, no_hex_twice, Timmins "
            "bonus), densified; its own 5 and 7 trains (towns free and unlimited)",
        ),
        "stress-1867-two-d": (two_d, "the same densified 1867 board with two D trains"),
        "stress-c2c-size-8": (
            big,
            "four copies of the 1830 corpus board 1830_game_end_bank-a652 (NYC), "
            "2 x 2, densified (an 18C2C-size map), an 8-train and a 6-train",
        ),
        "stress-express": (
            express,
            "1830 corpus board 1830_game_end_bank-a652 (NYC), densified, an 8E "
            "and a doubled 6E that passes towns for free",
        ),
        "stress-1828-d-8e": (
            late_1828,
            "two copies of the 1830 corpus board 1830_game_end_bank-a652 (NYC) side "
            "by side, densified (a late 1828-size map), a D and an 8E train",
        ),
        "stress-1889-two-d": (
            island,
            "18Chesapeake corpus board 3055-a600 (SRR, phase D; a small island map "
            "of 1889's size), densified, two D trains",
        ),
        "stress-1867-express-8": (
            final_1867,
            "1867 corpus board navig18xx_1867_bc_CNR (the final round), densified, 1867's 5+5E express and an 8-train",
        ),
    }


#: Each fixture's optimum and the solvers (no limits) that proved it.
OPTIMA = {
    "stress-1867-towns": (810, ["cpsat", "auto"]),
    "stress-1867-two-d": (1490, ["cpsat", "auto"]),
    "stress-c2c-size-8": (610, ["fast", "cpsat"]),
    "stress-express": (1040, ["cpsat", "auto"]),
    "stress-1828-d-8e": (1380, ["cpsat", "auto"]),
    "stress-1889-two-d": (810, ["cpsat", "auto"]),
    "stress-1867-express-8": (1380, ["cpsat", "auto"]),
}


def main() -> None:
    for name, (position, how) in stress_positions().items():
        path = FIXTURES / f"{name}.json"
        optimum, proved_by = OPTIMA[name]
        data = {
            "position": position,
            "reference": {
                "built": how,
                "by": "benchmarks/make_stress_fixtures.py",
                "optimum": optimum,
                "proved_by": proved_by,
            },
        }
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"{path.relative_to(ROOT)}: {len(position['hexes'])} cells, trains {position['trains']}")


if __name__ == "__main__":
    main()
