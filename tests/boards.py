"""Hand-made positions for the tests, as plain JSON dicts.

Boards are small enough to check by hand. The usual shape is a column of
flat hexes ``A1, A3, A5, ...`` (each one below the last: edge 0 points to
the next cell, edge 3 back), built by :func:`column`; :func:`position` wraps
cells into a whole position of the format.

>>> stop("city", 20, edges=(0, 3))
'city=revenue:20;path=a:0,b:_0;path=a:3,b:_0'
"""

from __future__ import annotations

import copy
from typing import Any

PHASE = {"name": "5", "colors": ["yellow", "green", "brown"]}


def stop(part: str, revenue: int | str = 0, edges=(0, 3), **keys: Any) -> str:
    """A one-node tile: the node joined by a path to each of ``edges``.

    Extra keys go on the node (``slots=2``, ``groups="G"``); a key ``path``
    is appended to every path (``path="track:narrow"``).
    """
    path_extra = keys.pop("path", "")
    params = [f"revenue:{revenue}"] + [f"{k}:{v}" for k, v in keys.items()]
    parts = [f"{part}={','.join(params)}"]
    parts += [f"path=a:{e},b:_0" + (f",{path_extra}" if path_extra else "") for e in edges]
    return ";".join(parts)


def city(revenue: int | str = 0, edges=(0, 3), **keys: Any) -> str:
    return stop("city", revenue, edges, **keys)


def town(revenue: int | str = 0, edges=(0, 3), **keys: Any) -> str:
    return stop("town", revenue, edges, **keys)


def offboard(revenue: int | str = 0, edges=(0, 3), **keys: Any) -> str:
    return stop("offboard", revenue, edges, **keys)


def track(*pairs: tuple[int, int]) -> str:
    """Plain track: one edge-to-edge path per pair."""
    return ";".join(f"path=a:{a},b:{b}" for a, b in pairs)


def cell(cell_id: str, code: str = "", rotation: int = 0, tokens=None, neighbors=None, **extra: Any) -> dict:
    out: dict[str, Any] = {"id": cell_id, "code": code}
    if rotation:
        out["rotation"] = rotation
    if tokens is not None:
        out["tokens"] = tokens
    if neighbors is not None:
        out["neighbors"] = neighbors
    out.update(extra)
    return out


def column(*codes: str, letter: str = "A", tokens: dict[int, list] | None = None) -> list[dict]:
    """Cells ``A1, A3, A5, ...`` (flat layout) holding ``codes`` top to bottom.

    ``tokens`` maps a cell's position in the column to its token lists.
    """
    tokens = tokens or {}
    return [cell(f"{letter}{2 * i + 1}", code, tokens=tokens.get(i)) for i, code in enumerate(codes)]


def position(
    cells: list[dict],
    trains: list | None = None,
    *,
    company: str = "A",
    layout: str = "flat",
    game: str = "generic",
    phase: dict | None = None,
    options: dict | None = None,
    axes: dict | None = None,
) -> dict:
    """A whole position of the format around ``cells``."""
    out: dict[str, Any] = {
        "format": 1,
        "game": game,
        "layout": layout,
        "phase": copy.deepcopy(phase or PHASE),
        "hexes": copy.deepcopy(cells),
        "company": company,
        "trains": copy.deepcopy(trains if trains is not None else ["2"]),
    }
    if axes is not None:
        out["axes"] = axes
    if options is not None:
        out["options"] = copy.deepcopy(options)
    return out


def line_board(*codes: str, trains: list | None = None, token_at: int = 0, **kwargs: Any) -> dict:
    """A column of stops with company ``A``'s token on the city at ``token_at``."""
    return position(column(*codes, tokens={token_at: [["A"]]}), trains, **kwargs)


def visit_bonus(cell_id: str, amount: int) -> dict:
    """A position's ``options`` with one visit bonus: ``amount`` for a route paying a stop in ``cell_id``."""
    return {"bonuses": [{"type": "visit", "cells": [cell_id], "amount": amount}]}


def route(train: str, *nodes: str, hexes: list | None = None) -> dict:
    out: dict[str, Any] = {"train": train, "nodes": list(nodes)}
    if hexes is not None:
        out["hexes"] = hexes
    return out


def letters(i: int) -> str:
    """Column letters of the ``i``-th column: A..Z, AA, AB, ..."""
    out, i = "", i + 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(65 + r) + out
    return out


def big_board(n: int, train: str = "8E") -> dict:
    """``n`` cities joined on every edge: a dense board near the size limit."""
    cells, side = [], int(n**0.5) + 1
    for x in range(side):
        for y in range(side):
            if len(cells) < n:
                cells.append(
                    cell(
                        f"{letters(x)}{2 * y + 1 + x % 2}",
                        "city=revenue:20;" + ";".join(f"path=a:{e},b:_0" for e in range(6)),
                    )
                )
    cells[0]["tokens"] = [["A"]]
    return position(cells, trains=[train])
