"""Hypothesis strategies for random small positions (generic rules).

Solvers are checked against each other on boards no person would draw:
:func:`positions` builds a position JSON dict (the format of
position-format.md) with random tiles from a small catalogue on a flat,
pointy or square grid, random tokens (the operating company ``A`` and
blocking companies ``B``, ``C``), offboards, towns, junctions, crossings,
terminal paths, narrow and dual track, groups, impassable borders, and
1-3 random generic trains (``n``, ``n+m``, ``D``, ``nE`` and train objects
with distance lists, train and group multipliers and ``fill``), sometimes with the options
``no_hex_twice`` and ``bonuses``.

Usage::

    from hypothesis import given
    from strategies import positions

    @given(positions())
    def test_something(position_json):
        ...

Every generated dict loads with :func:`routecalc.model.load_position`.
Keep ``max_cells`` and ``max_trains`` small when the reference solver
(exhaustive) is the oracle.
"""

from __future__ import annotations

from hypothesis import strategies as st

from routecalc.geometry import Grid

COMPANY = "A"
OTHERS = ("B", "C")
LAYOUTS = ("flat", "pointy", "square")

# Stop values the generator picks from (the first is what shrinking tends to).
_VALUES = (10, 20, 30, 40, 50, 60, 0)


@st.composite
def revenues(draw) -> str:
    """A flat value, sometimes a phase-coloured one with a diesel entry."""
    if draw(st.integers(0, 5)) == 0:
        low, high = draw(st.sampled_from(_VALUES)), draw(st.sampled_from(_VALUES))
        return f"yellow_{low}|brown_{high}|diesel_{high + 20}"
    return str(draw(st.sampled_from(_VALUES)))


def _exits(draw, num_edges: int, low: int, high: int, toward: tuple[int, ...] = ()) -> list[int]:
    """``low..high`` distinct edges: the ``toward`` edges (links to neighbours) where they fit,
    topped up or cut down at random, and now and then one more edge (a dead end)."""
    edges = set(toward)
    if len(edges) > high:
        edges = set(draw(st.permutations(sorted(edges)))[:high])
    free = [e for e in range(num_edges) if e not in edges]
    extra = draw(st.integers(0, 5)) == 0
    while free and (len(edges) < low or (extra and len(edges) < high)):
        edge = draw(st.sampled_from(free))
        edges.add(edge)
        free.remove(edge)
        extra = False
    return sorted(edges)


def _track(draw) -> str:
    """Mostly plain (broad) track; sometimes narrow (unusable by generic trains) or dual."""
    kind = draw(st.integers(0, 11))
    return {0: ",track:narrow", 1: ",track:dual"}.get(kind, "")


def _groups(draw) -> str:
    return draw(st.sampled_from(("", "", "", ",groups:G1", ",groups:G2")))


@st.composite
def tile_codes(draw, num_edges: int = 6, toward: tuple[int, ...] = (), switches: bool = False) -> str:
    """A tile code (unrotated) whose exits are mostly the ``toward`` code edges;
    with ``switches`` also track that forks at an edge (no path turns from
    one branch to another)."""
    if switches and draw(st.integers(0, 3)) == 0:
        edges = draw(st.permutations(_exits(draw, num_edges, 3, 4, toward)))
        return ";".join(f"path=a:{edges[0]},b:{e}{_track(draw)}" for e in edges[1:])
    shape = draw(
        st.sampled_from(
            (
                "city",
                "track",
                "town",
                "city",
                "track",
                "offboard",
                "city",
                "track",
                "crossing",
                "town",
                "two_cities",
                "two_towns",
                "blank",
                "junction",
                "terminal_city",
            )
        )
    )
    n = num_edges
    if shape == "blank":
        return ""
    if shape == "track":
        # one to three edge-to-edge paths (crossing when they cross)
        edges = _exits(draw, n, 2, 6, toward)
        edges = draw(st.permutations(edges))
        return ";".join(f"path=a:{a},b:{b}{_track(draw)}" for a, b in zip(edges[::2], edges[1::2]))
    if shape == "crossing":
        edges = _exits(draw, n, 4, 4, toward)
        return f"path=a:{edges[0]},b:{edges[2]};path=a:{edges[1]},b:{edges[3]}{_track(draw)}"
    if shape in ("town", "city", "terminal_city"):
        node = (
            f"town=revenue:{draw(revenues())}"
            if shape == "town"
            else f"city=revenue:{draw(revenues())},slots:{draw(st.integers(1, 2))}"
        )
        node += _groups(draw)
        exits = _exits(draw, n, 1 if shape == "terminal_city" else 2, 5, toward)
        paths = [f"path=a:{e},b:_0{_track(draw)}" for e in exits]
        if shape == "terminal_city":
            paths[0] += ",terminal:1"
        code = ";".join([node] + paths)
        if draw(st.integers(0, 7)) == 0:
            code += f";border=edge:{draw(st.integers(0, n - 1))},type:impassable"
        return code
    if shape == "two_cities":
        e = _exits(draw, n, 2, 4, toward)
        group = draw(st.sampled_from(("", ",groups:BIG")))
        parts = [
            f"city=revenue:{draw(revenues())}{group}",
            f"city=revenue:{draw(revenues())}{group}",
            f"path=a:{e[0]},b:_0",
            f"path=a:{e[1]},b:_1",
        ]
        parts += [f"path=a:{x},b:_{i % 2}" for i, x in enumerate(e[2:])]
        return ";".join(parts)
    if shape == "two_towns":
        e = _exits(draw, n, 4, 4, toward)
        return (
            f"town=revenue:{draw(revenues())};town=revenue:{draw(revenues())};"
            f"path=a:{e[0]},b:_0;path=a:_0,b:{e[1]};path=a:{e[2]},b:_1;path=a:_1,b:{e[3]}"
        )
    if shape == "offboard":
        exits = _exits(draw, n, 1, 3, toward)
        node = f"offboard=revenue:{draw(revenues())}{_groups(draw)}"
        return ";".join([node] + [f"path=a:{e},b:_0" for e in exits])
    # junction: a track meeting point that is not a stop
    exits = _exits(draw, n, 3, 4, toward)
    return ";".join(["junction"] + [f"path=a:{e},b:_0{_track(draw)}" for e in exits])


def _board_cells(layout: str, width: int, height: int) -> list[tuple[int, int]]:
    if layout == "square":
        return [(x, y) for x in range(width) for y in range(height)]
    # doubled coordinates: only cells whose x + y is even exist
    return [(x, y) for x in range(width) for y in range(2 * height) if (x + y) % 2 == 0]


@st.composite
def trains(draw, max_trains: int = 3) -> list:
    """1..max_trains generic trains: catalogue names and train objects."""
    out = []
    for _ in range(draw(st.integers(1, max_trains))):
        kind = draw(st.sampled_from(("n", "n", "n+m", "D", "nE", "object", "object_fill")))
        if kind == "n":
            out.append(str(draw(st.integers(2, 5))))
        elif kind == "n+m":
            out.append(f"{draw(st.integers(1, 4))}+{draw(st.integers(1, 2))}")
        elif kind == "D":
            out.append("D")
        elif kind == "nE":
            out.append(f"{draw(st.integers(1, 3))}E")
        elif kind == "object":
            out.append(
                {
                    "name": f"{draw(st.integers(2, 4))}x",
                    "distance": draw(st.integers(2, 4)),
                    "multiplier": draw(st.integers(1, 2)),
                }
            )
        else:
            # 1867 style: n cities/offboards (towns free and filling), or nE offboards first
            first = draw(st.sampled_from((["city", "offboard"], ["offboard"], ["city"])))
            rest = [c for c in ("city", "town", "offboard") if c not in first]
            pay = draw(st.integers(1, 3))
            out.append(
                {
                    "name": f"{pay}+{pay}F",
                    "fill": draw(st.booleans()),
                    "multiplier": draw(st.integers(1, 2)),
                    "distance": [
                        {
                            "nodes": first,
                            "pay": pay,
                            "visit": pay + draw(st.integers(0, 1)),
                            "multiplier": draw(st.sampled_from((1, 1, 2))),
                        },
                        {"nodes": rest, "pay": draw(st.integers(0, 1)), "visit": draw(st.sampled_from((1, 2, 99)))},
                    ],
                }
            )
    # A route names its train only by name: two different trains never share one.
    for i, train in enumerate(out):
        if isinstance(train, dict) and any(
            isinstance(t, dict) and t["name"] == train["name"] and t != train for t in out[:i]
        ):
            out[i] = {**train, "name": f"{train['name']}#{i}"}
    return out


@st.composite
def bonuses(draw, cell_ids: list[str]) -> list[dict]:
    cells = st.lists(st.sampled_from(cell_ids), min_size=1, max_size=3, unique=True)
    out = []
    for _ in range(draw(st.integers(1, 2))):
        amount = draw(st.sampled_from((10, 20, 40)))
        multiplied = draw(st.booleans())
        if draw(st.booleans()):
            out.append({"type": "visit", "cells": draw(cells), "amount": amount, "multiplied": multiplied})
        else:
            out.append(
                {
                    "type": "connect",
                    "sets": draw(st.lists(cells, min_size=2, max_size=2)),
                    "amount": amount,
                    "multiplied": multiplied,
                }
            )
    return out


@st.composite
def positions(
    draw,
    *,
    layouts: tuple[str, ...] = LAYOUTS,
    min_size: int = 2,
    max_size: int = 4,
    max_trains: int = 3,
    options: bool = True,
    token_rate: float = 0.4,
    switches: bool = False,
) -> dict:
    """A random small position JSON dict for company ``A`` (generic rules).

    The board is a ``width x height`` patch (each ``min_size..max_size``;
    hex boards hold about ``width * height`` cells), every cell a random
    tile. ``token_rate`` is the chance that a city slot holds a token (of
    ``A`` or of a blocking company). ``options`` allows ``no_hex_twice`` and
    ``bonuses``; ``switches`` track that forks (:func:`tile_codes`).
    """
    layout = draw(st.sampled_from(layouts))
    grid = Grid.make(layout, None)
    width, height = draw(st.integers(min_size, max_size)), draw(st.integers(min_size, max_size))
    coords = _board_cells(layout, width, height)
    present = set(coords)
    n = grid.num_edges
    # which neighbouring cells the track links (most pairs), so tiles join up
    links = {
        frozenset((a, grid.neighbor_coords(*a, e)))
        for a in coords
        for e in range(n)
        if grid.neighbor_coords(*a, e) in present
    }
    linked = {pair for pair in sorted(links, key=sorted) if draw(st.integers(0, 3))}
    hexes = []
    for x, y in coords:
        rotation = draw(st.integers(0, n - 1))
        toward = tuple(
            sorted((e - rotation) % n for e in range(n) if frozenset(((x, y), grid.neighbor_coords(x, y, e))) in linked)
        )
        code = draw(tile_codes(n, toward, switches))
        cell = {"id": grid.cell_id(x, y), "code": code, "rotation": rotation}
        slots = [
            int(part.split("slots:")[1].split(",")[0]) if "slots:" in part else 1
            for part in code.split(";")
            if part.startswith("city=")
        ]
        if slots:
            cell["tokens"] = [
                [
                    draw(st.sampled_from((COMPANY,) + OTHERS)) if draw(st.floats(0, 1)) < token_rate else None
                    for _ in range(k)
                ]
                for k in slots
            ]
        hexes.append(cell)
    token_slots = [
        (i, j, k)
        for i, cell in enumerate(hexes)
        for j, slots in enumerate(cell.get("tokens", ()))
        for k in range(len(slots))
    ]
    if token_slots and not any(COMPANY in slots for cell in hexes for slots in cell.get("tokens", ())):
        i, j, k = draw(st.sampled_from(token_slots))
        hexes[i]["tokens"][j][k] = COMPANY
    position = {
        "format": 1,
        "game": "generic",
        "layout": layout,
        "phase": {"name": "5", "colors": draw(st.sampled_from((["yellow"], ["yellow", "green", "brown"])))},
        "hexes": hexes,
        "company": COMPANY,
        "trains": draw(trains(max_trains)),
    }
    if options:
        opts: dict = {}
        if draw(st.integers(0, 3)) == 0:
            opts["no_hex_twice"] = True
        if draw(st.integers(0, 3)) == 0:
            opts["bonuses"] = draw(bonuses([c["id"] for c in hexes]))
        if opts:
            position["options"] = opts
    return position
