"""Write the 18XS benchmark boards (fixtures/xs-*.json), reproducibly.

- ``xs-three-lcs``: issue 17's first worst case, a 3 x 3 board of four-way
  trails with three LCs and six cubes, level 3.
- ``xs-mesh-5x5``: its second, a 5 x 5 trail mesh with cities, LCs and a
  port, level 4.
- ``xs-seed-size-{1,2,3}``: boards the size of the seed's map (8 x 8 cells
  for its 62 tiles) of random trail tiles (straights, curves, crossings whose
  trails do not join, junctions), a third of them cities holding two cubes
  each (white among the colours), with LCs and ports; levels 3, 5 and 8.

The benchmarks set ``options.actions`` (2-8) on these boards.

    .venv/bin/python benchmarks/make_xs_fixtures.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
COLORS = ["blue", "pink", "brown", "grey"]
TRAILS = [
    "path=a:0,b:2",
    "path=a:1,b:3",
    "path=a:0,b:1",
    "path=a:1,b:2",
    "path=a:2,b:3",
    "path=a:3,b:0",
    "path=a:0,b:2;path=a:1,b:3",
    "path=a:0,b:1;path=a:2,b:3",
    "junction;path=a:0,b:_0;path=a:1,b:_0;path=a:2,b:_0",
    "junction;path=a:0,b:_0;path=a:1,b:_0;path=a:2,b:_0;path=a:3,b:_0",
]


def letters(i: int) -> str:
    return chr(ord("A") + i)


def stop(sides, **keys) -> str:
    """A one-node tile (city, LC or port) joined to ``sides``."""
    params = ",".join(["revenue:0"] + [f"{k}:{v}" for k, v in keys.items()])
    return ";".join([f"city={params}"] + [f"path=a:{e},b:_0" for e in sides])


def mesh_sides(x: int, y: int, width: int, height: int) -> list[int]:
    return [e for e, ok in ((0, y < height - 1), (1, x > 0), (2, y > 0), (3, x < width - 1)) if ok]


def position(hexes: list[dict], **options) -> dict:
    return {
        "format": 1,
        "game": "18XS",
        "layout": "square",
        "phase": {"name": "-", "colors": []},
        "company": None,
        "trains": [],
        "options": options,
        "hexes": hexes,
    }


def three_lcs() -> dict:
    rows = [
        [("city", "blue", "pink|white"), ("lc",), ("city", "pink", "blue|grey")],
        [("lc",), ("trail",), ("lc",)],
        [("city", "grey", "blue|pink"), ("trail",), ("city", "brown", "grey")],
    ]
    hexes = []
    for y, row in enumerate(rows):
        for x, spec in enumerate(row):
            sides = mesh_sides(x, y, 3, 3)
            if spec[0] == "city":
                code = stop(sides, color=spec[1], **({"goods": spec[2]} if spec[2] else {}))
            elif spec[0] == "lc":
                code = stop(sides, kind="lc")
            else:
                code = junction(sides)
            hexes.append({"id": f"{letters(x)}{y + 1}", "code": code})
    return position(hexes, locomotive=3, actions=8)


def junction(sides: list[int]) -> str:
    """A trail crossing joined to ``sides``."""
    return ";".join(["junction"] + [f"path=a:{e},b:_0" for e in sides])


def random_cell(rng: random.Random, sides: list[int], lc_below: float, port_below: float, otherwise) -> str:
    """A city (3 in 10), an LC, a port (up to the given rolls) or ``otherwise(sides)``."""
    roll = rng.random()
    if roll < 0.3:
        return stop(sides, color=rng.choice(COLORS), goods="|".join(rng.choice(COLORS + ["white"]) for _ in range(2)))
    if roll < lc_below:
        return stop(sides, kind="lc")
    if roll < port_below:
        return stop(sides, kind="port")
    return otherwise(sides)


def mesh(width: int, height: int, seed: int, level: int) -> dict:
    rng = random.Random(seed)
    hexes = []
    for x in range(width):
        for y in range(height):
            sides = mesh_sides(x, y, width, height)
            code = random_cell(rng, sides, 0.45, 0.5, junction)
            hexes.append({"id": f"{letters(x)}{y + 1}", "code": code})
    return position(hexes, locomotive=level, actions=8)


def seed_size(seed: int, level: int) -> dict:
    rng = random.Random(seed)
    hexes = []
    for x in range(8):
        for y in range(8):
            sides = [e for e in range(4) if rng.random() < 0.7] or [rng.randrange(4)]
            code = random_cell(rng, sides, 0.4, 0.45, lambda _: rng.choice(TRAILS))
            hexes.append({"id": f"{letters(x)}{y + 1}", "code": code})
    return position(hexes, locomotive=level, actions=8)


BOARDS = {
    "xs-three-lcs": three_lcs(),
    "xs-mesh-5x5": mesh(5, 5, 0, level=4),
    "xs-seed-size-1": seed_size(1, level=3),
    "xs-seed-size-2": seed_size(0, level=5),
    "xs-seed-size-3": seed_size(2, level=8),
}


def main() -> None:
    for name, board in BOARDS.items():
        (FIXTURES / f"{name}.json").write_text(json.dumps(board, indent=1) + "\n")
        print(f"wrote fixtures/{name}.json")


if __name__ == "__main__":
    main()
