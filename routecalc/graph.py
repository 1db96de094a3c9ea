"""Compile a position into the flat arrays the solvers run on.

Layout (every array is numpy; N stops, C connections, W mask words):

Stops
    Only cities, towns and offboards are graph nodes ("stops"); junctions
    become track pieces. ``stop_node[s]`` is the position's node index of
    stop ``s``; ``node_stop`` the inverse (-1 for junctions).
    ``cell[s]`` (int32) cell number, ``category[s]`` (int8: 0 city, 1 town,
    2 offboard, as the rule set reads the node), ``groups[s]`` (uint64 bit
    set of ``groups`` values), ``flags[s]`` (uint8, bits ``END_ONLY``,
    ``BLOCKED``, ``TOKEN``, and the game roles of :meth:`RuleSet.stop_roles`:
    ``NO_STOP`` (the company's trains never stop there), ``HOME_END`` (its
    routes have it only at an end), ``LOAD`` / ``UNLOAD`` (cargo picked up
    there / delivered at a route's end there: a route that gains cargo is
    not dominated by its sub-routes)) for the operating company.

Track pieces
    Bit positions 0..P-1: first every path of every cell (``piece_kind``
    0), then every cell-edge crossing with its lane (1), then every junction
    (2). ``piece_label[p]`` says which, for people.

Connections
    An elementary connection joins two stops along track with no stop
    between (it may cross cell edges, edge-to-edge paths and junctions).
    Each is stored once, from ``conn_a`` to ``conn_b`` (stop numbers,
    ``conn_a < conn_b``); ``conn_mask[c]`` (uint64[W]) has a bit per track
    piece it uses, ``conn_cells[c]`` (uint64[WC]) a bit per cell it touches,
    ``conn_edges[c]`` the cell edges it crosses (H-train distance),
    ``conn_gauge[c]`` bit 0 if broad trains may use it, bit 1 narrow.
    A terminal path leaves no connection but as its first or last piece,
    and the stop at its end is ``END_ONLY``. ``conn_cell_seq[c]`` is
    the list of cells it crosses, both ends included (the route ``hexes``
    form); ``conn_revisits[c]`` is true when it enters a cell twice.

Adjacency (CSR)
    For stop s, entries ``adj_start[s]:adj_start[s+1]`` list every
    connection touching s: ``adj_conn`` (connection) and ``adj_other`` (the
    stop at its other end).

A kernel enumerates routes as walks over the CSR, keeping the union of
``conn_mask`` words (disjointness is an AND), the visited stops and groups,
and the counts its train limits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import deadline
from .board import End, Position
from .errors import PositionError

END_ONLY, BLOCKED, TOKEN = 1, 2, 4
NO_STOP, HOME_END, LOAD, UNLOAD = 8, 16, 32, 64
ROLE_FLAGS = {"no_stop": NO_STOP, "home_end": HOME_END, "load": LOAD, "unload": UNLOAD}
CATEGORY_CODES = {"city": 0, "town": 1, "offboard": 2}
CATEGORY_NAMES = ("city", "town", "offboard")
PIECE_PATH, PIECE_CROSSING, PIECE_JUNCTION = 0, 1, 2
GAUGE_BITS = {"broad": 1, "narrow": 2, "dual": 3}
#: Elementary connections a board may have: track that joins stops in more
#: ways than this (a maze of junctions and edge-to-edge paths) is refused by
#: name rather than compiled for minutes.
MAX_CONNECTIONS = 100_000


@dataclass
class Connection:
    a: int  # stop numbers
    b: int
    pieces: tuple[int, ...]
    edges: int
    cells: tuple[str, ...]
    gauge: int


@dataclass
class TrackGraph:
    position: Position
    stop_node: np.ndarray
    node_stop: np.ndarray
    stop_ids: list[str]
    cell: np.ndarray
    category: np.ndarray
    groups: np.ndarray
    flags: np.ndarray
    cell_ids: list[str]
    group_names: list[str]
    piece_kind: np.ndarray
    piece_label: list[str]
    conn_a: np.ndarray
    conn_b: np.ndarray
    conn_mask: np.ndarray
    conn_cells: np.ndarray
    conn_edges: np.ndarray
    conn_gauge: np.ndarray
    conn_revisits: np.ndarray
    conn_cell_seq: list[tuple[str, ...]]
    conn_pieces: list[tuple[int, ...]]
    adj_start: np.ndarray
    adj_conn: np.ndarray
    adj_other: np.ndarray

    @property
    def num_stops(self) -> int:
        return len(self.stop_node)

    @property
    def num_pieces(self) -> int:
        return len(self.piece_kind)

    def stop(self, node_id: str) -> int:
        """Stop number of a node id such as ``F10-0``."""
        node = self.position.node(node_id)
        stop = int(self.node_stop[node])
        if stop < 0:
            raise PositionError(f"node {node_id!r}", "is a junction, not a stop")
        return stop

    def connections_between(self, s: int, t: int) -> list[int]:
        lo, hi = self.adj_start[s], self.adj_start[s + 1]
        return [int(self.adj_conn[k]) for k in range(lo, hi) if self.adj_other[k] == t]

    def oriented_cells(self, c: int, start: int) -> tuple[str, ...]:
        seq = self.conn_cell_seq[c]
        return seq if self.conn_a[c] == start else tuple(reversed(seq))

    def usable_gauge_bit(self, tracks: frozenset[str]) -> int:
        """The connection gauge bit a train with these usable tracks needs."""
        return 1 if "broad" in tracks else 2


def _words(n: int) -> int:
    return max(1, (n + 63) // 64)


def _set_bits(row: np.ndarray, bits) -> None:
    for b in bits:
        row[b >> 6] |= np.uint64(1) << np.uint64(b & 63)


def compile_position(position: Position) -> TrackGraph:
    """Build the arrays of the module docstring for the position's company."""
    rules = position.rules
    nodes = position.nodes
    cell_ids = list(position.cells)
    cell_no = {c: i for i, c in enumerate(cell_ids)}

    stop_node = np.array([i for i, n in enumerate(nodes) if n.is_stop], dtype=np.int32)
    node_stop = np.full(len(nodes), -1, dtype=np.int32)
    node_stop[stop_node] = np.arange(len(stop_node), dtype=np.int32)
    group_names = sorted({g for n in nodes for g in n.groups})
    if len(group_names) > 64:
        raise PositionError("groups", "more than 64 distinct groups on one board")
    group_bit = {g: i for i, g in enumerate(group_names)}
    stops = [nodes[i] for i in stop_node]
    flags = np.zeros(len(stops), dtype=np.uint8)
    groups = np.zeros(len(stops), dtype=np.uint64)
    # The node at the end of a terminal path only starts or ends a route, by
    # whichever of its paths the route comes (route rule 6).
    terminal_ends = {end.node for p in position.paths if p.terminal for end in (p.a, p.b) if end.node is not None}
    for s, node in enumerate(stops):
        flags[s] = (
            (END_ONLY if rules.end_only(node) or int(stop_node[s]) in terminal_ends else 0)
            | (BLOCKED if rules.blocked(node, position.company) else 0)
            | (TOKEN if rules.has_token(node, position.company) else 0)
        )
        for role in rules.stop_roles(node, position):
            flags[s] |= ROLE_FLAGS[role]
        for g in node.groups:
            groups[s] |= np.uint64(1) << np.uint64(group_bit[g])

    # Track pieces: paths, then crossings (found while walking), then junctions.
    paths = position.paths
    piece_label = [f"path {p.cell}#{p.index}" for p in paths]
    piece_kind = [PIECE_PATH] * len(paths)
    junction_piece: dict[int, int] = {}
    for i, node in enumerate(nodes):
        if node.type == "junction":
            junction_piece[i] = -1  # numbered after crossings
    paths_at_node: dict[int, list[int]] = {}
    paths_at_edge: dict[tuple[str, int, tuple[int, int]], list[int]] = {}
    for pi, p in enumerate(paths):
        for end in (p.a, p.b):
            if end.node is not None:
                paths_at_node.setdefault(end.node, []).append(pi)
            else:
                paths_at_edge.setdefault((p.cell, end.edge, end.lane), []).append(pi)

    crossing_piece: dict[frozenset, int] = {}
    crossing_list: list[str] = []

    def across(cell: str, edge: int, lane: tuple[int, int]):
        """The cell side met across an edge, and the crossing's piece key."""
        met = position.across(cell, edge, lane)
        if met is None:
            return None
        other_id, far_edge, far_lane = met
        key = frozenset({(cell, edge, lane[1]), (other_id, far_edge, far_lane[1])})
        return other_id, far_edge, far_lane, key

    def crossing(key, label) -> int:
        if key not in crossing_piece:
            crossing_piece[key] = len(crossing_list)
            crossing_list.append(label)
        return crossing_piece[key]

    track_gauge = {pi: GAUGE_BITS[p.track] for pi, p in enumerate(paths)}
    found: list[Connection] = []
    ticker = deadline.Ticker("compiling the track graph")

    def other_end(p, from_end: End) -> End:
        return p.b if p.a == from_end else p.a

    def walk(start: int, pi: int, from_end: End, pieces: list, used: set, edges: int, cells: list, gauge: int):
        p = paths[pi]
        gauge &= track_gauge[pi]
        if not gauge:
            return
        ticker.tick()
        first = not pieces
        pieces.append(("p", pi))
        used.add(("p", pi))
        to = other_end(p, from_end)
        if to.node is not None:
            node = nodes[to.node]
            if node.type != "junction":
                if to.node != start and stop_no(start) < stop_no(to.node):
                    found.append(
                        Connection(stop_no(start), stop_no(to.node), tuple(pieces), edges, tuple(cells), gauge)
                    )
                    if len(found) > MAX_CONNECTIONS:
                        raise PositionError(
                            "hexes",
                            f"the track joins stops in over {MAX_CONNECTIONS:,} ways "
                            "(elementary connections): too big a board to compile",
                        )
            elif ("j", to.node) not in used and (first or not p.terminal):
                pieces.append(("j", to.node))
                used.add(("j", to.node))
                for qi in paths_at_node.get(to.node, ()):
                    if ("p", qi) not in used:
                        walk(start, qi, End(node=to.node), pieces, used, edges, cells, gauge)
                used.discard(pieces.pop())
        elif first or not p.terminal:
            met = across(p.cell, to.edge, to.lane)
            if met is not None:
                other_id, far_edge, far_lane, key = met
                piece = ("c", crossing(key, f"edge {p.cell}/{to.edge}~{other_id}/{far_edge} lane {to.lane[1]}"))
                if piece not in used:
                    pieces.append(piece)
                    used.add(piece)
                    cells.append(other_id)
                    for qi in paths_at_edge.get((other_id, far_edge, far_lane), ()):
                        if ("p", qi) not in used:
                            walk(start, qi, End(edge=far_edge, lane=far_lane), pieces, used, edges + 1, cells, gauge)
                    cells.pop()
                    used.discard(pieces.pop())
        used.discard(pieces.pop())

    def stop_no(node: int) -> int:
        return int(node_stop[node])

    try:
        for node_i in stop_node:
            for pi in paths_at_node.get(int(node_i), ()):
                walk(int(node_i), pi, End(node=int(node_i)), [], set(), 0, [nodes[node_i].cell], 7)
    except RecursionError:
        raise PositionError(
            "hexes",
            "track runs through too many track pieces between two stops to compile (hundreds of cells with no stop)",
        ) from None

    # Number the pieces: paths, crossings, junctions.
    num_paths = len(paths)
    piece_kind += [PIECE_CROSSING] * len(crossing_list)
    piece_label += crossing_list
    for j in junction_piece:
        junction_piece[j] = len(piece_kind)
        piece_kind.append(PIECE_JUNCTION)
        piece_label.append(f"junction {nodes[j].id}")

    def piece_bit(piece) -> int:
        kind, ref = piece
        if kind == "p":
            return ref
        if kind == "c":
            return num_paths + ref
        return junction_piece[ref]

    num_conn = len(found)
    words, cell_words = _words(len(piece_kind)), _words(len(cell_ids))
    conn_mask = np.zeros((num_conn, words), dtype=np.uint64)
    conn_cells = np.zeros((num_conn, cell_words), dtype=np.uint64)
    conn_pieces = []
    conn_cell_seq = []
    revisits = np.zeros(num_conn, dtype=np.bool_)
    for c, conn in enumerate(found):
        bits = tuple(piece_bit(pc) for pc in conn.pieces)
        conn_pieces.append(bits)
        _set_bits(conn_mask[c], bits)
        seq = _collapse(conn.cells)
        conn_cell_seq.append(seq)
        revisits[c] = len(set(seq)) != len(seq)
        _set_bits(conn_cells[c], (cell_no[x] for x in seq))

    conn_a = np.array([c.a for c in found], dtype=np.int32)
    conn_b = np.array([c.b for c in found], dtype=np.int32)
    adj: list[list[tuple[int, int]]] = [[] for _ in stops]
    for c in range(num_conn):
        adj[conn_a[c]].append((c, int(conn_b[c])))
        adj[conn_b[c]].append((c, int(conn_a[c])))
    adj_start = np.zeros(len(stops) + 1, dtype=np.int32)
    for s in range(len(stops)):
        adj_start[s + 1] = adj_start[s] + len(adj[s])
    flat = [e for lst in adj for e in lst]
    return TrackGraph(
        position=position,
        stop_node=stop_node,
        node_stop=node_stop,
        stop_ids=[n.id for n in stops],
        cell=np.array([cell_no[n.cell] for n in stops], dtype=np.int32),
        category=np.array([CATEGORY_CODES[rules.category(n)] for n in stops], dtype=np.int8),
        groups=groups,
        flags=flags,
        cell_ids=cell_ids,
        group_names=group_names,
        piece_kind=np.array(piece_kind, dtype=np.int8),
        piece_label=piece_label,
        conn_a=conn_a,
        conn_b=conn_b,
        conn_mask=conn_mask,
        conn_cells=conn_cells,
        conn_edges=np.array([c.edges for c in found], dtype=np.int32),
        conn_gauge=np.array([c.gauge for c in found], dtype=np.uint8),
        conn_revisits=revisits,
        conn_cell_seq=conn_cell_seq,
        conn_pieces=conn_pieces,
        adj_start=adj_start,
        adj_conn=np.array([e[0] for e in flat], dtype=np.int32),
        adj_other=np.array([e[1] for e in flat], dtype=np.int32),
    )


def _collapse(cells) -> tuple[str, ...]:
    out: list[str] = []
    for c in cells:
        if not out or out[-1] != c:
            out.append(c)
    return tuple(out)
