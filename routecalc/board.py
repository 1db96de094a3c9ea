"""The plain data of a position: cells with turned tiles, nodes, paths, the
position itself. No reading or checking happens here (:mod:`.model` reads
JSON into these); rule sets and every higher layer use these types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import PositionError
from .geometry import Grid
from .tiles import Revenue, Tile
from .trains import Train

if TYPE_CHECKING:  # annotation only: the rule set is attached by the reader
    from .rules.base import RuleSet


@dataclass(frozen=True)
class Node:
    """A node on the board: node ``index`` of cell ``cell``'s code."""

    id: str
    cell: str
    index: int
    type: str  # city, town, offboard, junction
    revenue: Revenue
    slots: int
    tokens: tuple[str | None, ...]
    groups: tuple[str, ...]
    kind: str | None
    color: str | None = None
    goods: tuple[str, ...] = ()
    served: bool = False

    @property
    def is_stop(self) -> bool:
        return self.type != "junction"


@dataclass(frozen=True)
class End:
    """A path end on the board: a board edge with its lane, or a node index."""

    edge: int | None = None
    lane: tuple[int, int] = (1, 0)  # (width, index)
    node: int | None = None


@dataclass(frozen=True)
class Path:
    """A path of a cell's tile, turned to the board."""

    cell: str
    index: int  # path number within the cell
    a: End
    b: End
    terminal: bool
    track: str


@dataclass(frozen=True)
class Cell:
    id: str
    x: int
    y: int
    rotation: int
    tile_name: str | None
    code: str
    tile: Tile
    neighbors: dict[int, str]  # board edge -> cell id (existing cells only)
    blocked_edges: frozenset[int]  # impassable borders, board edges
    nodes: tuple[int, ...]  # global node indices
    terrain: str | None = None


@dataclass
class Position:
    game: str
    rules: RuleSet
    grid: Grid
    phase_name: str
    phase_colors: tuple[str, ...]
    cells: dict[str, Cell]
    nodes: list[Node]
    node_index: dict[str, int]
    paths: list[Path]
    company: str
    trains: list[Train]
    options: dict[str, Any]
    raw: dict = field(repr=False, default_factory=dict)

    def node(self, node_id: str) -> int:
        if node_id not in self.node_index:
            raise PositionError(f"node {node_id!r}", "no such node")
        return self.node_index[node_id]

    def across(self, cell: str, edge: int, lane: tuple[int, int]) -> tuple[str, int, tuple[int, int]] | None:
        """The cell side that track leaving ``cell`` at board ``edge`` (and ``lane``)
        meets: (neighbour, its edge, its lane), or None where no link exists
        (no neighbour, an impassable border, a one-sided ``neighbors`` link)."""
        here = self.cells[cell]
        other_id = here.neighbors.get(edge)
        if other_id is None or edge in here.blocked_edges:
            return None
        other = self.cells[other_id]
        sides = [f for f, c in other.neighbors.items() if c == cell]
        if not sides:
            return None
        opposite = self.grid.opposite(edge)
        far_edge = opposite if opposite in sides else sides[0]
        if far_edge in other.blocked_edges:
            return None
        return other_id, far_edge, (lane[0], lane[0] - 1 - lane[1])
