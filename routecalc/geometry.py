"""Board geometry: cell ids, coordinates, neighbours, edges, rotation.

Cell ids follow the 18xx.games convention: a letter part (``A``..``Z``,
``AA``..``AZ``, ...) and a number part (``F10``, ``AA3``, ``H0``). Which of
the two is x is set by the board's axes. Hexagons use doubled coordinates,
squares plain ones. Edge numbers run clockwise from the bottom.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import PositionError, shown

#: A canonical cell id: up to three letters, then a number of up to four
#: digits without leading zeros (``E19``, never ``E019``, ``E19\n`` or ``E-0``),
#: so that one cell has one id.
CELL_ID_PATTERN = r"([A-Z]{1,3})(0|-?[1-9][0-9]{0,3})"
_CELL_ID = re.compile(CELL_ID_PATTERN)

#: (dx, dy) of the neighbour across each edge, per layout.
EDGE_DELTAS: dict[str, tuple[tuple[int, int], ...]] = {
    "flat": ((0, 2), (-1, 1), (-1, -1), (0, -2), (1, -1), (1, 1)),
    "pointy": ((-1, 1), (-2, 0), (-1, -1), (1, -1), (2, 0), (1, 1)),
    "square": ((0, 1), (-1, 0), (0, -1), (1, 0)),
}

DEFAULT_AXES = {
    "flat": {"x": "letter", "y": "number"},
    "pointy": {"x": "number", "y": "letter"},
    "square": {"x": "letter", "y": "number"},
}


def letter_index(letters: str) -> int:
    """``A`` -> 0, ``Z`` -> 25, ``AA`` -> 26 (spreadsheet-style columns)."""
    value = 0
    for ch in letters:
        value = value * 26 + (ord(ch) - ord("A") + 1)
    return value - 1


def index_letters(index: int) -> str:
    """Inverse of :func:`letter_index`."""
    out = ""
    index += 1
    while index > 0:
        index, rem = divmod(index - 1, 26)
        out = chr(ord("A") + rem) + out
    return out


@dataclass(frozen=True)
class Grid:
    """A board layout with its axes: turns cell ids into coordinates and back."""

    layout: str
    x_axis: str = "letter"  # "letter" or "number"

    @classmethod
    def make(cls, layout: str, axes: dict | None) -> Grid:
        if not isinstance(layout, str) or layout not in EDGE_DELTAS:
            raise PositionError("layout", f"unknown layout {shown(layout)} (flat, pointy or square)")
        axes = axes if axes is not None else DEFAULT_AXES[layout]
        if (
            not isinstance(axes, dict)
            or set(axes) != {"x", "y"}
            or sorted(map(str, axes.values())) != ["letter", "number"]
        ):
            raise PositionError("axes", 'must be {"x": "letter"|"number", "y": the other}')
        return cls(layout, axes["x"])

    @property
    def num_edges(self) -> int:
        return len(EDGE_DELTAS[self.layout])

    @property
    def is_hex(self) -> bool:
        return self.layout != "square"

    def opposite(self, edge: int) -> int:
        return (edge + self.num_edges // 2) % self.num_edges

    def coords(self, cell_id: str) -> tuple[int, int]:
        """Coordinates of a cell id; raises PositionError for a malformed id."""
        m = _CELL_ID.fullmatch(cell_id) if isinstance(cell_id, str) else None
        if not m:
            raise PositionError(
                f"cell {cell_id!r}",
                "bad cell id (expected up to 3 capital letters then a number "
                "of up to 4 digits without leading zeros, e.g. F10)",
            )
        letter, number = letter_index(m.group(1)), int(m.group(2)) - 1
        return (letter, number) if self.x_axis == "letter" else (number, letter)

    def cell_id(self, x: int, y: int) -> str:
        letter, number = (x, y) if self.x_axis == "letter" else (y, x)
        return f"{index_letters(letter)}{number + 1}"

    def check_parity(self, cell_id: str, first: str) -> None:
        """Hex boards hold only cells whose doubled coordinates share one parity,
        that of the board's first cell ``first`` (even or odd, as the game's map has it)."""
        if not self.is_hex:
            return
        parity = sum(self.coords(cell_id)) % 2
        if parity != sum(self.coords(first)) % 2:
            names = ("even", "odd")
            raise PositionError(
                f"cell {cell_id}",
                f"not on the board's hex grid: x + y is {names[parity]} here "
                f"but {names[1 - parity]} in {first} (doubled coordinates)",
            )

    def neighbor_coords(self, x: int, y: int, edge: int) -> tuple[int, int]:
        dx, dy = EDGE_DELTAS[self.layout][edge]
        return x + dx, y + dy

    def rotate(self, edge: int, rotation: int) -> int:
        """Board edge of code edge ``edge`` on a tile turned by ``rotation``."""
        return (edge + rotation) % self.num_edges
