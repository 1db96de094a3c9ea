"""Build late-game 18Cuba positions on the whole board: ``fixtures/cuba-board/*.json``.

Each position is ``fixtures/maps/18Cuba-base.json`` (the 58 cells of the
18Cuba map) with green and brown track laid over the island, as a late game
has it:

- named cities get green or brown tiles (30-50) with a path to each linked
  neighbour; the cities with the FC's icon hold an FC token, Havana's two
  cities (one ``groups`` value) are joined to more neighbours; some of the
  other named cities are sugar mills (``kind:mill``) with cubes on them,
  laid with dual track so majors and minors both reach them;
- sugar cane cells become sugar fields (towns, ``kind:sugar``, 10-20) on
  narrow track, and the plain cells beside them carry narrow or dual track,
  so the minors' mills have dense narrow networks;
- the other plain cells get two or three paths between random linked edges
  (green cross-overs), and on the denser boards the gentle curves too (brown
  tiles whose paths share edges), broad or dual;
- tokens: the operating company's home in Havana and one or two more
  cities, other majors' tokens filling some slots, FC tokens on the FC
  cities (the fee 0, 20 or 40 to pass one).

The companies: majors with three long trains (8, 8, 6+, or a 4D) carrying
wagons (their own, or ``options.wagons`` to assign) and sugar on the mills;
minors running 4n / 5n from their mill with machines; the FC's own income.
Run ``python benchmarks/make_cuba_fixtures.py`` from the repository root;
the output is deterministic.
"""

from __future__ import annotations

import json
import random
import re

from paths import ROOT

from routecalc.geometry import Grid

BASE = ROOT / "fixtures" / "maps" / "18Cuba-base.json"
OUT = ROOT / "fixtures" / "cuba-board"

FC_CITIES = ("B9", "B11", "C14", "D15", "D19", "E22", "G24")
MILLS = ("D13", "F21", "G26")
OTHER_MAJORS = ("Ma", "Ca", "Ce", "Gu", "Ha")
HOME = "Oe"


def links(hexes: dict[str, dict], grid: Grid) -> dict[str, dict[int, str]]:
    """Per land cell, its linked edges and the neighbour across each: no
    impassable border on either side, a harbor only where it has a path."""

    def borders(code: str) -> set[int]:
        return {int(e) for e in re.findall(r"border=edge:(\d+),type:impassable", code)}

    def harbor_edges(code: str) -> set[int]:
        return {int(e) for e in re.findall(r"path=a:(\d+),b:_0", code)}

    out: dict[str, dict[int, str]] = {}
    for cid, h in hexes.items():
        if h.get("tile") == "harbor":
            continue
        x, y = grid.coords(cid)
        out[cid] = {}
        for edge in range(6):
            other = grid.cell_id(*grid.neighbor_coords(x, y, edge))
            if other not in hexes or edge in borders(h["code"]) or grid.opposite(edge) in borders(hexes[other]["code"]):
                continue
            if hexes[other].get("tile") == "harbor" and grid.opposite(edge) not in harbor_edges(hexes[other]["code"]):
                continue
            out[cid][edge] = other
    return out


def lay(rng: random.Random, hexes: dict[str, dict], linked: dict[str, dict[int, str]], dense: int) -> dict[str, str]:
    """Tile codes for every land cell (see the module docstring)."""
    sugar_cells = {c for c, h in hexes.items() if "kind:sugar" in h["code"]}
    codes = {}
    for cid, edges in linked.items():
        h = hexes[cid]
        name = h.get("tile", "")
        near_sugar = any(o in sugar_cells for o in edges.values())
        if cid == "B7":
            parts = [f"city=revenue:{rng.choice((40, 50))},groups:Havana"] * 2
            parts += [f"path=a:{e},b:_{i % 2}" for i, e in enumerate(sorted(edges))]
        elif cid in FC_CITIES:
            parts = [f"city=revenue:{rng.choice((30, 40, 50))},slots:2"]
            parts += [f"path=a:{e},b:_0" for e in edges]
        elif cid in MILLS:
            parts = [f"city=revenue:{rng.choice((30, 40))},slots:2,kind:mill"]
            parts += [f"path=a:{e},b:_0,track:dual" for e in edges]
        elif name not in ("white", "sugar cane", ""):
            parts = [f"city=revenue:{rng.choice((30, 40))},slots:2"]
            parts += [f"path=a:{e},b:_0" for e in edges]
        elif cid in sugar_cells:
            parts = [f"town=revenue:{rng.choice((10, 20))},kind:sugar"]
            parts += [f"path=a:{e},b:_0,track:narrow" for e in edges if hexes[edges[e]].get("tile") != "harbor"]
            if len(parts) < 2:
                parts = []
        else:
            free = list(edges)
            rng.shuffle(free)
            pairs = [(free[i], free[i + 1]) for i in range(0, len(free) - 1, 2)]
            if dense > 1:  # brown: also the gentle curves (paths sharing edges)
                pairs += [
                    (e, (e + 2) % 6)
                    for e in sorted(edges)
                    if (e + 2) % 6 in edges and (e, (e + 2) % 6) not in pairs and ((e + 2) % 6, e) not in pairs
                ][: 2 * (dense - 1)]
            track = "dual" if near_sugar else "broad"
            parts = [f"path=a:{a},b:{b}" + (f",track:{track}" if track != "broad" else "") for a, b in pairs]
        codes[cid] = ";".join(parts)
    return codes


def position(rng: random.Random, kind: str, fee: int, dense: int, trains: list) -> dict:
    base = json.loads(BASE.read_text())
    grid = Grid.make(base["layout"], base["axes"])
    hexes = {h["id"]: h for h in base["hexes"]}
    codes = lay(rng, hexes, links(hexes, grid), dense)
    mill_minor = {m: f"M{i + 1}" for i, m in enumerate(MILLS)}
    homes = rng.sample([c for c in codes if c not in MILLS and codes[c].startswith("city") and c != "B7"], 2)
    home_cells = homes if kind == "major" else homes[:1]
    out_hexes = []
    for h in base["hexes"]:
        cid = h["id"]
        cell = {"id": cid, "code": codes.get(cid, h["code"])}
        if cid == "B7":
            cell["tokens"] = [[HOME], ["FC"]]
        elif cid in FC_CITIES:
            cell["tokens"] = [["FC", HOME if cid in home_cells else rng.choice((None, *OTHER_MAJORS))]]
        elif cid in MILLS:
            cell["tokens"] = [[mill_minor[cid], rng.choice((None, None, *OTHER_MAJORS))]]
        elif codes.get(cid, "").startswith("city"):
            slots = [HOME if cid in home_cells else rng.choice((None, None, *OTHER_MAJORS)), None]
            cell["tokens"] = [slots]
        out_hexes.append(cell)
    sugar = {f"{m}-0": rng.randint(0, 3) for m in MILLS}
    options: dict = {"fc_fee": fee, "sugar": sugar}
    company = HOME
    if kind == "minor":
        company = mill_minor[rng.choice(MILLS)]
        options = {"machines": {company: rng.sample([10, 10, 20, 20, 30], rng.randint(1, 3))}}
    elif kind == "fc":
        company = "FC"
        options = {"sugar": sugar}
    elif any(isinstance(t, dict) and t.get("wagon") for t in trains) is False:
        options["wagons"] = rng.sample([1, 2, 2, 3], 2)
    return {
        "format": 1,
        "game": "18Cuba",
        "layout": base["layout"],
        "axes": base["axes"],
        "phase": {"name": "8", "colors": ["yellow", "green", "brown"]},
        "hexes": out_hexes,
        "company": company,
        "trains": trains,
        "options": options,
    }


MAJOR_TRAINS = (
    ["8", "8", "6+"],
    [{"name": "8", "wagon": 2}, {"name": "8", "wagon": 1}, "6+"],
    ["8", "6+", "4D"],
    [{"name": "8", "wagon": 3}, "6+", {"name": "4D", "wagon": 2}],
    ["8", "8", {"name": "6+", "wagon": 2}],
)
MINOR_TRAINS = (["4n", "5n"], ["5n", "5n"], [{"name": "3n", "obsolete": True}, "4n", "5n"], ["4n", "4n"])


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1816)
    made = []
    for i in range(15):
        fee = (0, 20, 40)[i % 3]
        trains = MAJOR_TRAINS[i % len(MAJOR_TRAINS)]
        made.append((f"major-{i + 1:02d}-fee{fee}", position(rng, "major", fee, 1 + i % 3, trains)))
    for i in range(6):  # dense track, few blocking tokens: the hardest three-train choices
        fee = (0, 20, 40)[i % 3]
        trains = (["8", "8", "6+"], [{"name": "8", "wagon": 2}, "8", "6+"], ["8", "8", "4D"])[i % 3]
        made.append((f"major-dense-{i + 1:02d}-fee{fee}", position(rng, "major", fee, 3 + i % 2, trains)))
    for i in range(6):
        made.append((f"minor-{i + 1:02d}", position(rng, "minor", 20, 3, MINOR_TRAINS[i % len(MINOR_TRAINS)])))
    for i in range(2):
        made.append((f"fc-{i + 1:02d}", position(rng, "fc", 20, 2, [["6"], ["8"]][i])))
    for name, pos in made:
        (OUT / f"{name}.json").write_text(json.dumps(pos, indent=1) + "\n")
    print(f"wrote {len(made)} positions to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
