"""18Ireland (seed 004): hex trains, broad gauge only, narrow-gauge feeders.

Trains count the cell edges a route crosses, not its stops, and every node
they visit pays (route-rules.md, 18Ireland). They run on broad track only
(dual counts as broad). Narrow track carries no train; it feeds the value of
the towns along it to the broad-gauge stations it reaches, as
:meth:`IrelandRules.feeders` computes.

How the feeder walk reads track the rule text leaves open (none of it occurs
on the 18Ireland map, whose tiles have neither dual track nor junctions):

- it follows narrow and dual paths, across an edge only where the track on
  both sides fits one gauge, and through junctions whose paths are all
  narrow; broad paths stop it, and so does a junction with any other path
  (a junction is a node, and "the first node that has any broad path ends
  the walk");
- a node counts only when every path it has is narrow (as on 18xx.games, a
  dual path makes a node "broad": the walk ends there, unpaid);
- a terminal path may end the walk at its node (which counts) but not pass it.

One case where 18xx.games' figure differs: its depth-first walk enters a
node with broad track when it meets it a second time (along a loop of narrow
track) and counts the narrow towns beyond. route-rules.md says that node ends
the walk, and so does this module; on no recorded 18Ireland position does the
difference change a figure (tests/test_ireland.py shows the case).
"""

from __future__ import annotations

from typing import Any

from ..board import End, Position
from ..errors import PositionError, shown
from ..trains import UNLIMITED, Train, all_stops, object_train
from .base import GAUGE_TRACKS, RuleSet

#: Hex trains of the 18Ireland catalogue, by name: cell edges they may cross.
HEX_TRAINS = {"1H'": 1, "2H'": 2, "3H'": 3, "2H": 2, "4H": 4, "6H": 6, "8H": 8, "10H": 10}
#: Track the feeder walk follows.
FEEDER_TRACKS = frozenset({"narrow", "dual"})


def hex_train(name: str, edges: int) -> Train:
    """A train that crosses up to ``edges`` cell edges (unlimited from 999) and is paid by every stop."""
    return Train(name, all_stops(UNLIMITED), hex_limit=None if edges >= UNLIMITED else edges, diesel=name == "D")


class IrelandRules(RuleSet):
    name = "18Ireland"
    train_names = (*HEX_TRAINS, "D")

    def catalogue(self, name: str, where: str) -> Train:
        if name in HEX_TRAINS:
            return hex_train(name, HEX_TRAINS[name])
        if name == "D":
            return hex_train(name, UNLIMITED)
        raise PositionError(where, f"unknown 18Ireland train {name!r} (known: {', '.join(self.train_names)})")

    def parse_train(self, spec: Any, where: str) -> Train:
        """An 18xx.games train object's ``distance`` is, in this game, a count of cell edges."""
        if isinstance(spec, dict) and "distance" in spec:
            edges = spec["distance"]
            if isinstance(edges, bool) or not isinstance(edges, int) or edges < 1:
                raise PositionError(
                    where,
                    "an 18Ireland train's distance is the number of cell edges it may "
                    f"cross, a whole number >= 1; got {shown(edges)}",
                )
            rest = {k: v for k, v in spec.items() if k != "distance"}
            return object_train(rest, where, lambda name, _where: hex_train(name, edges), self.train_state_keys)
        return super().parse_train(spec, where)

    def usable_tracks(self, train: Train) -> frozenset[str]:
        return GAUGE_TRACKS["broad"]

    def feeders(self, position: Position) -> dict[int, list[int]]:
        """For every stop with narrow or dual track, the all-narrow nodes the
        walk from it reaches (each once per stop; tokens never block)."""
        walker = _FeederWalk(position)
        out: dict[int, list[int]] = {}
        for i, node in enumerate(position.nodes):
            if node.is_stop and walker.paths_at_node.get(i):
                fed = walker.reached(i)
                if fed:
                    out[i] = fed
        return out


class _FeederWalk:
    """The narrow-gauge network of one position, walked from a stop."""

    def __init__(self, position: Position):
        self.position = position
        paths = position.paths
        self.paths_at_node: dict[int, list[int]] = {}
        self.paths_at_edge: dict[tuple[str, int, tuple[int, int]], list[int]] = {}
        self.all_narrow: dict[int, bool] = {}
        for pi, path in enumerate(paths):
            for end in (path.a, path.b):
                if end.node is not None:
                    self.all_narrow[end.node] = self.all_narrow.get(end.node, True) and path.track == "narrow"
                    if path.track in FEEDER_TRACKS:
                        self.paths_at_node.setdefault(end.node, []).append(pi)
                elif path.track in FEEDER_TRACKS:
                    self.paths_at_edge.setdefault((path.cell, end.edge, end.lane), []).append(pi)

    def reached(self, start: int) -> list[int]:
        """The all-narrow stops reachable from ``start`` without passing a stop that has other track."""
        nodes, paths = self.position.nodes, self.position.paths
        seen_nodes = {start}
        seen_paths: set[int] = set()
        found: list[int] = []
        # Each entry: a path to walk and the end it is entered from.
        todo = [(pi, End(node=start)) for pi in self.paths_at_node.get(start, ())]
        while todo:
            pi, came_from = todo.pop()
            if pi in seen_paths:
                continue
            seen_paths.add(pi)
            path = paths[pi]
            to = path.b if path.a == came_from else path.a
            if to.node is None:
                met = self.position.across(path.cell, to.edge, to.lane)
                if met is not None and not (path.terminal and came_from.node is None):
                    other, far_edge, far_lane = met
                    todo += [
                        (qi, End(edge=far_edge, lane=far_lane))
                        for qi in self.paths_at_edge.get((other, far_edge, far_lane), ())
                        if _fits(path.track, paths[qi].track)
                    ]
                continue
            node = to.node
            if nodes[node].type == "junction":
                if self.all_narrow[node]:  # a node with any other track ends the walk, a junction too
                    todo += [(qi, End(node=node)) for qi in self.paths_at_node.get(node, ()) if qi != pi]
                continue
            if node in seen_nodes:
                continue
            seen_nodes.add(node)
            if self.all_narrow[node]:
                found.append(node)
                if not path.terminal:
                    todo += [(qi, End(node=node)) for qi in self.paths_at_node.get(node, ())]
        return found


def _fits(a: str, b: str) -> bool:
    """Narrow meets narrow or dual; dual meets both."""
    return a == b or "dual" in (a, b)
