"""18XS (seed 000): pick and deliver goods cubes over trails on a square board.

There are no companies, tokens or trains. The question is the player's
transport actions: which cube to move where. This module holds the rules
(options, the trail map, what one transport may do and earns) and the
validator; :mod:`routecalc.games.xs_plan` holds the search that answers
(over memoised turn states), :mod:`routecalc.games.xs` the plain reference
search it is checked against and whose walks it uses.

Rules as route-rules.md states them, and how this module reads what it and
the seed leave open:

- A transport moves one cube from the node it lies on along trails (the
  cells' ``path``s) and never enters a cell twice. Its *distance* is the
  number of cells it enters. Inside a cell it follows the tile's track: it
  enters at a side and leaves at a side joined to it by track (through the
  tile's nodes), so two separate trails of one tile do not connect. Two
  cells connect where both have track at the shared side (and lane), as in
  the rest of the engine (:meth:`Position.across`).
- The distance is at most ``options.locomotive`` (0-8). Bid cards, each good
  for one transport of the turn and at most one card per transport:
  ``double_distance`` allows twice the locomotive level; ``as_level_8`` makes
  the transport as if the locomotive were at level 8, so up to 8 cells and
  the level-7+ city bonus. Each option is ``true``/``false`` or the number
  of such cards held (default none).
- Destinations: an unserved city whose ``color`` is the cube's (a ``white``
  cube matches any city), a logistics centre (``kind:lc``) or a port
  (``kind:port``), never in the cell the cube starts from. A transport passes
  through a node when its track in a cell runs through it; it may not pass
  an unserved city that would accept the cube; it may pass any other node.
  It may stop at an LC or port it reaches, or go on.
- Ports: every two port nodes are adjacent (one step, one cell entered).
- Income: to a city, the distance, +1 at level 5-6 and +2 at 7-8 (the card's
  level 8 for ``as_level_8``); to an LC or port, half the distance rounded
  up, no bonus, and the cube stays there for later transports of the turn.
- A delivered cube leaves the board and its city is served: later
  transports of the plan may pass it and may not deliver there.
- The plan has at most ``options.actions`` transports (default 2); it may
  have fewer when no cube can move. Ties: any best.
- Not modelled, as route-rules.md's questions leave them out: storing a cube
  in a city instead of delivering it (never earns income), international
  trade at a port (the bag's content is not part of a position), metropolis
  tiles demanding two goods (a city ``color`` naming two goods is refused).
- Cubes lie on cities (``goods``); an LC or port written as a ``city`` with
  ``kind`` may hold goods too (a position taken mid-turn). An unserved city
  needs its ``color``.
- Cell ``terrain`` and city ``revenue`` do not affect transports and are
  ignored. Offboards, towns without ``kind``, tokens and trains have no
  meaning in 18XS and are refused.

Answer of :func:`routecalc.api.solve`::

    {"game": "18XS", "revenue": 9, "status": "optimal", "bound": 9,
     "best_transport": {<transport>} or null,
     "plan": [<transport>, ...], "actions": 2, "solver": "18XS",
     "stats": {"walk_steps": ..., "states": ..., "expanded": ..., "seconds": ...}}

where a transport is ``{"cube": {"cell": "A1", "color": "blue"}, "cells":
["A1", "A2", "B2"], "to": "B2", "to_kind": "city"|"lc"|"port", "distance":
2, "income": 2, "card": null|"double_distance"|"as_level_8"}``; ``cells``
lists the start cell and then every cell entered, in order (a port hop is
two consecutive port cells). ``revenue`` is the plan's total income,
``best_transport`` the best single transport of the position, ``status``
``optimal`` when the search finished, ``feasible`` when the time limit
stopped it (``bound`` is then an upper bound on the plan's income).

:func:`routecalc.api.validate` takes ``{"transports": [<transport>, ...]}``
(or the bare list) of which each needs ``cube`` and ``cells`` (``to``,
``card`` and ``to_kind`` optional: ``to_kind`` picks the destination where
the last cell holds a city beside an LC or port, else the city is taken;
the answer's other keys are accepted and recomputed) and
returns ``{"game": "18XS", "revenue": total, "plan": [scored transports]}``
or raises a RouteViolation naming the rule: ``too_many_transports``,
``cube_missing``, ``own_city``, ``cell_entered_twice``, ``too_far``,
``card_unavailable``, ``not_a_destination``, ``city_served``,
``wrong_color``, ``no_trail``, ``passes_accepting_city``. Where a transport
gives no ``card``, the validator plays the held cards where they are needed
and pay most.

A position without ``options.locomotive`` loads (to be drawn, say), but
solving or validating it is refused naming that option.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from .. import deadline
from ..board import End, Position
from ..errors import PositionError, RouteViolation, shown
from ..tiles import is_colour_word
from .base import RuleSet

WHITE = "white"
MAX_LEVEL = 8
CARDS = ("double_distance", "as_level_8")
DESTINATION_KINDS = ("lc", "port")


# -- options and income -----------------------------------------------------


@dataclass(frozen=True)
class Player:
    """The options that bound and pay a transport."""

    locomotive: int
    cards: tuple[int, int]  # held double_distance and as_level_8 cards
    actions: int

    def limit_and_level(self, card: str | None) -> tuple[int, int]:
        """Distance limit and the level that pays the city bonus, with ``card`` played."""
        if card == "double_distance":
            return 2 * self.locomotive, self.locomotive
        if card == "as_level_8":
            return MAX_LEVEL, MAX_LEVEL
        return self.locomotive, self.locomotive

    def card_choices(self, held: tuple[int, int]) -> list[str | None]:
        """No card, then each card of which one is left in ``held``."""
        return [None] + [card for card, count in zip(CARDS, held) if count > 0]


def income(to_kind: str, distance: int, level: int) -> int:
    """A delivery's income: a city pays the distance plus the locomotive bonus,
    an LC or port half the distance rounded up."""
    if to_kind == "city":
        return distance + (2 if level >= 7 else 1 if level >= 5 else 0)
    return (distance + 1) // 2


def use_card(held: tuple[int, int], card: str | None) -> tuple[int, int]:
    if card is None:
        return held
    i = CARDS.index(card)
    return held[:i] + (held[i] - 1,) + held[i + 1 :]


#: Transport actions a turn can hold at most: the 2 free actions and extra-action cards.
MAX_ACTIONS = 8


def _whole(value: Any, where: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        span = f"{low}-{high}" if high is not None else f">= {low}"
        raise PositionError(where, f"must be a whole number {span}, got {shown(value)}")
    return value


def _card_count(value: Any, where: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value >= 0:
        return value
    raise PositionError(where, f"must be true/false or the number of such bid cards held, got {shown(value)}")


# -- the rule set -------------------------------------------------------------


class XSRules(RuleSet):
    name = "18XS"
    kinds = frozenset(DESTINATION_KINDS)
    has_companies = False
    route_engine = False

    def catalogue(self, name, where):
        raise PositionError(where, '18XS has no trains: give "trains": []')

    def parse_train(self, spec, where):
        raise PositionError(where, '18XS has no trains: give "trains": []')

    def parse_options(self, options: dict, position: Position) -> dict:
        known = ("locomotive", "actions", *CARDS)
        for key in options:
            if key not in known:
                raise PositionError(f"options.{key}", f"unknown option for 18XS (known: {', '.join(known)})")
        if "locomotive" not in options:
            return {"player": None}
        player = Player(
            locomotive=_whole(options["locomotive"], "options.locomotive", 0, MAX_LEVEL),
            cards=tuple(_card_count(options.get(card, 0), f"options.{card}") for card in CARDS),
            actions=_whole(options.get("actions", 2), "options.actions", 0, MAX_ACTIONS),
        )
        return {"player": player}

    def check_position(self, position: Position) -> None:
        for node in position.nodes:
            where = f"cell {node.cell}"
            if any(t is not None for t in node.tokens):
                raise PositionError(where, "18XS has no tokens")
            if node.type == "offboard":
                raise PositionError(where, "18XS has no offboards")
            if node.type == "town" and node.kind is None:
                raise PositionError(where, "a town means nothing in 18XS (an LC or port needs kind:lc or kind:port)")
            if node.kind is not None and (node.color is not None or node.served):
                raise PositionError(where, f"a {node.kind} demands no good: it takes no color or served")
            if node.type == "city" and node.kind is None:
                if node.color is None and not node.served:
                    raise PositionError(where, "an unserved 18XS city needs the color of the good it demands")
                if node.color is not None and "|" in node.color:
                    raise PositionError(where, "a city demanding two goods (a metropolis) is not implemented yet")
            if any(not good for good in node.goods):
                raise PositionError(where, "empty goods colour")
            for colour in ((node.color,) if node.color is not None and "|" not in node.color else ()) + node.goods:
                if not is_colour_word(colour):
                    raise PositionError(
                        where, f"a good's colour is a word of letters (blue, pink), got {shown(colour)}"
                    )


def player(position: Position) -> Player:
    """The player's options; a question about transports needs the locomotive level."""
    if position.options["player"] is None:
        raise PositionError("options.locomotive", "missing: the player's locomotive level, 0-8")
    return position.options["player"]


def destination_kind(node, color: str, served: frozenset[int], index: int) -> str | None:
    """'city', 'lc' or 'port' where a cube of ``color`` may be delivered at
    node ``index``, else None."""
    if node.kind in DESTINATION_KINDS:
        return node.kind
    if node.type == "city" and not node.served and index not in served and (color == WHITE or node.color == color):
        return "city"
    return None


# -- the trail map --------------------------------------------------------------


class Trails:
    """Where track leads, cell by cell.

    An *entry* is a way of being in a cell: at a node (a cube's start, or a
    port reached by a hop) or at a side where track comes in from the
    neighbour. For each entry, ``stops`` lists the nodes its cell's track
    reaches from it and ``exits`` the entries of the neighbouring cells it
    leads to, each with the nodes passed on the way (which the passing rule
    may forbid). Entry ``i`` for ``i`` below the number of nodes is the entry
    at node ``i``.
    """

    def __init__(self, position: Position):
        self.position = position
        self.cell_ids = list(position.cells)
        self.cell_no = {c: i for i, c in enumerate(self.cell_ids)}
        nodes = position.nodes
        self.node_cell = [self.cell_no[n.cell] for n in nodes]
        self.is_stop = [n.is_stop for n in nodes]
        self.ports = tuple(i for i, n in enumerate(nodes) if n.kind == "port")
        at_node: dict[int, list[int]] = {}
        at_side: dict[tuple[str, int, tuple[int, int]], list[int]] = {}
        for pi, p in enumerate(position.paths):
            for end in (p.a, p.b):
                if end.node is not None:
                    at_node.setdefault(end.node, []).append(pi)
                else:
                    at_side.setdefault((p.cell, end.edge, end.lane), []).append(pi)
        self._at_node, self._at_side = at_node, at_side
        keys: list = [("node", i) for i in range(len(nodes))] + [("side", *side) for side in at_side]
        self.entry_id = {key: i for i, key in enumerate(keys)}
        self.entry_cell = [self.cell_no[nodes[k[1]].cell] if k[0] == "node" else self.cell_no[k[1]] for k in keys]
        self.stops: list[list[tuple[int, tuple[int, ...]]]] = []
        self.exits: list[list[tuple[int, int, tuple[int, ...]]]] = []
        for key in keys:
            stops, exits = self._walk_cell(key)
            self.stops.append(stops)
            self.exits.append(exits)
        cells = [position.cells[c] for c in self.cell_ids]
        #: the parity of each cell's x + y; when every step (trail or port
        #: hop) changes it, a walk's length has the parity of its two ends
        self.parity = [(c.x + c.y) % 2 for c in cells]
        steps = [(self.entry_cell[e], c) for e, out in enumerate(self.exits) for _, c, _ in out]
        steps += [
            (self.node_cell[p], self.node_cell[q])
            for p in self.ports
            for q in self.ports
            if self.node_cell[p] != self.node_cell[q]
        ]
        self.bipartite = all(self.parity[a] != self.parity[b] for a, b in steps)
        #: per port node, the (entry, cell) of every port in another cell: a cube's hops by sea
        self.hops = {
            p: [(self.node_entry(q), self.node_cell[q]) for q in self.ports if self.node_cell[q] != self.node_cell[p]]
            for p in self.ports
        }

    def node_entry(self, node: int) -> int:
        return self.entry_id[("node", node)]

    def entry_node(self, entry: int) -> int | None:
        """The node of a node entry, None for a side."""
        return entry if entry < len(self.node_cell) else None

    def reached(self, entry: int, forbidden: set[int]) -> set[int]:
        """The stop nodes of the entry's cell that a cube at ``entry`` reaches
        without passing a ``forbidden`` node (a node entry's own node included)."""
        out = {n for n, passed in self.stops[entry] if not forbidden.intersection(passed)}
        node = self.entry_node(entry)
        if node is not None and self.is_stop[node]:
            out.add(node)
        return out

    def _walk_cell(self, key) -> tuple[list, list]:
        """Every walk along the cell's track from an entry to a node or a side
        (no path or node twice), with the stop nodes passed before its end."""
        paths = self.position.paths
        stops: dict[tuple, None] = {}
        exits: dict[tuple, None] = {}
        seen_nodes: set[int] = set()
        # junctions meshed in one cell multiply the walks: the clock is read as they go
        ticker = deadline.Ticker("walking an 18XS cell's track", every=64)

        def walk(pi: int, came: End, used: set[int], passed: tuple[int, ...]) -> None:
            ticker.tick()
            p = paths[pi]
            far = p.b if p.a == came else p.a
            used.add(pi)
            if far.node is not None and far.node not in seen_nodes:
                n = far.node
                seen_nodes.add(n)
                if self.is_stop[n]:
                    stops[(n, passed)] = None
                onward = passed + (n,) if self.is_stop[n] else passed
                for qi in self._at_node.get(n, ()):
                    if qi not in used:
                        walk(qi, End(node=n), used, onward)
                seen_nodes.discard(n)
            elif far.node is None:
                met = self.position.across(p.cell, far.edge, far.lane)
                if met is not None and met in self._at_side:
                    exits[(self.entry_id[("side", *met)], self.cell_no[met[0]], passed)] = None
            used.discard(pi)

        if key[0] == "node":
            seen_nodes.add(key[1])
            start, first = End(node=key[1]), self._at_node.get(key[1], ())
        else:
            start, first = End(edge=key[2], lane=key[3]), self._at_side.get(key[1:], ())
        for pi in first:
            walk(pi, start, set(), ())
        return _least_passed(list(stops)), _least_passed(list(exits))


def _least_passed(items: list[tuple]) -> list[tuple]:
    """Drop walks whose passed nodes include another's to the same end: the
    passing rule never allows them where it forbids the other."""
    out = []
    for item in items:
        end, passed = item[:-1], set(item[-1])
        if not any(o[:-1] == end and set(o[-1]) < passed for o in items):
            out.append(item)
    return out


# -- the state of a turn ----------------------------------------------------------


@dataclass(frozen=True)
class TurnState:
    """What the plan's transports change: where cubes lie, the served cities
    (node indices served during the turn), the bid cards left."""

    cubes: frozenset[tuple[tuple[int, str], int]]  # ((node, color), count)
    served: frozenset[int]
    cards: tuple[int, int]

    @classmethod
    def initial(cls, position: Position) -> TurnState:
        cubes = Counter((i, good) for i, n in enumerate(position.nodes) for good in n.goods)
        return cls(frozenset(cubes.items()), frozenset(), player(position).cards)

    def after(self, cube: tuple[int, str], to: int, to_kind: str, card: str | None) -> TurnState:
        cubes = Counter(dict(self.cubes))
        cubes[cube] -= 1
        if to_kind != "city":
            cubes[(to, cube[1])] += 1
        served = self.served | {to} if to_kind == "city" else self.served
        return TurnState(frozenset((k, v) for k, v in cubes.items() if v > 0), served, use_card(self.cards, card))


def blocking(position: Position, color: str, served: frozenset[int]) -> set[int]:
    """The nodes a cube of ``color`` may not pass: unserved cities that would accept it."""
    return {
        i for i, n in enumerate(position.nodes) if n.kind is None and destination_kind(n, color, served, i) == "city"
    }


def transport_json(
    position: Position, cube: tuple[int, str], cells: list[str], to: int, to_kind: str, card: str | None, value: int
) -> dict:
    return {
        "cube": {"cell": position.nodes[cube[0]].cell, "color": cube[1]},
        "cells": list(cells),
        "to": position.nodes[to].cell,
        "to_kind": to_kind,
        "distance": len(cells) - 1,
        "income": value,
        "card": card,
    }


# -- the validator ----------------------------------------------------------------

PROPOSAL_KEYS = {"cube", "cells", "to", "card", "to_kind", "distance", "income"}


def validate_xs(position: Position, proposal: Any) -> dict:
    """Score the proposed transports in order, or raise RouteViolation."""
    transports = proposal.get("transports") if isinstance(proposal, dict) else proposal
    if not isinstance(transports, list):
        raise PositionError("transports", 'must be a list of transports or {"transports": [...]}')
    trails = Trails(position)
    me = player(position)
    state = TurnState.initial(position)
    if len(transports) > me.actions:
        raise RouteViolation(
            "too_many_transports",
            f"{len(transports)} transports, but the turn has {me.actions} transport actions (options.actions)",
        )
    moves = []
    for i, raw in enumerate(transports):
        color, cells, card, kind = _parse_transport(raw, i, position)
        starts = _start_nodes(position, state, color, cells, i)
        distance = len(cells) - 1
        if card is not None and not state.cards[CARDS.index(card)]:
            raise RouteViolation("card_unavailable", f"no {card} bid card left for this transport", i)
        allowed = [c for c in ([card] if card else me.card_choices(me.cards)) if me.limit_and_level(c)[0] >= distance]
        if not allowed:
            limit = max(me.limit_and_level(c)[0] for c in ([card] if card else me.card_choices(me.cards)))
            raise RouteViolation("too_far", f"enters {distance} cells; at most {limit} allowed", i)
        start, to, to_kind = _destination(trails, state, starts, color, cells, kind, i)
        moves.append(((start, color), cells, to, to_kind, allowed))
        state = state.after((start, color), to, to_kind, card)
    cards = _assign_cards(me, [(m[3], len(m[1]) - 1, m[4]) for m in moves])
    plan = [
        transport_json(
            position, cube, cells, to, to_kind, card, income(to_kind, len(cells) - 1, me.limit_and_level(card)[1])
        )
        for (cube, cells, to, to_kind, _), card in zip(moves, cards)
    ]
    return {"game": "18XS", "revenue": sum(t["income"] for t in plan), "plan": plan}


def _parse_transport(raw: Any, i: int, position: Position) -> tuple[str, list[str], str | None, str | None]:
    """The cube's colour, the cells, the card and the kind of destination
    (``to_kind``, where given) of a proposed transport."""
    where = f"transports[{i}]"
    if not isinstance(raw, dict):
        raise PositionError(where, "must be an object")
    for key in raw:
        if key not in PROPOSAL_KEYS:
            raise PositionError(f"{where}.{key}", "unknown key")
    cube = raw.get("cube")
    if not isinstance(cube, dict) or not isinstance(cube.get("cell"), str) or not isinstance(cube.get("color"), str):
        raise PositionError(f"{where}.cube", 'must be {"cell": ..., "color": ...}')
    cells = raw.get("cells")
    if not isinstance(cells, list) or not cells or not all(isinstance(c, str) for c in cells):
        raise PositionError(f"{where}.cells", "must be the list of cells from the cube's cell to its destination")
    for j, c in enumerate(cells):
        if c not in position.cells:
            raise PositionError(f"{where}.cells[{j}]", f"no cell {c!r} on the board")
    if cells[0] != cube["cell"]:
        raise PositionError(f"{where}.cells", f"must start at the cube's cell {cube['cell']}")
    if raw.get("to") is not None and raw["to"] != cells[-1]:
        raise PositionError(f"{where}.to", f"{raw['to']!r} is not the last of cells ({cells[-1]})")
    card = raw.get("card")
    if card is not None and card not in CARDS:
        raise PositionError(f"{where}.card", f"unknown bid card {card!r} ({' or '.join(CARDS)})")
    kind = raw.get("to_kind")
    if kind is not None and kind not in ("city", *DESTINATION_KINDS):
        raise PositionError(f"{where}.to_kind", f"{kind!r} is not city, {' or '.join(DESTINATION_KINDS)}")
    return cube["color"], cells, card, kind


def _start_nodes(position: Position, state: TurnState, color: str, cells: list[str], i: int) -> list[int]:
    """The nodes where the proposed transport's cube may lie; raises the
    cube and cell rules it breaks."""
    cell = cells[0]
    starts = [node for (node, good), _ in state.cubes if good == color and position.nodes[node].cell == cell]
    if not starts:
        raise RouteViolation("cube_missing", f"no {color} cube lies in {cell}", i)
    if cells[-1] == cell:
        raise RouteViolation("own_city", f"a cube is never delivered to the cell it lies in ({cell})", i)
    twice = next((c for c in cells if cells.count(c) > 1), None)
    if twice is not None:
        raise RouteViolation("cell_entered_twice", f"enters {twice} twice", i)
    return starts


def _destination(
    trails: Trails, state: TurnState, starts: list[int], color: str, cells: list[str], want: str | None, i: int
) -> tuple[int, int, str]:
    """The start node, destination node and its kind of a ``color`` cube's
    transport along ``cells``; raises the destination and trail rules it
    breaks. ``want``: the kind of destination the proposal names, where its
    last cell holds more than one (a city beside an LC or a port); without
    it, the city."""
    position = trails.position
    last = position.cells[cells[-1]].nodes
    targets = {n: kind for n in last if (kind := destination_kind(position.nodes[n], color, state.served, n))}
    if want is not None and targets and want not in targets.values():
        raise RouteViolation("not_a_destination", f"{cells[-1]} has no {want} that takes the {color} cube", i)
    if want is not None:
        targets = {n: kind for n, kind in targets.items() if kind == want}
    if not targets:
        cities = [n for n in last if position.nodes[n].type == "city"]
        if not cities:
            raise RouteViolation("not_a_destination", f"{cells[-1]} has no city, LC or port", i)
        if all(position.nodes[n].served or n in state.served for n in cities):
            raise RouteViolation("city_served", f"the city in {cells[-1]} is already served", i)
        demands = "/".join(position.nodes[n].color or "-" for n in cities)
        raise RouteViolation("wrong_color", f"the city in {cells[-1]} demands {demands}, not {color}", i)
    if all(walk_cells(trails, start, cells, set())[1] is not None for start in starts):
        stuck = walk_cells(trails, starts[0], cells, set())[1]
        raise RouteViolation("no_trail", f"no trail leads from {cells[stuck]} to {cells[stuck + 1]}", i)
    forbidden = blocking(position, color, state.served)
    for start in starts:
        reached = walk_cells(trails, start, cells, forbidden)[0] & set(targets)
        if reached:
            to = max(reached, key=lambda n: targets[n] == "city")
            return start, to, targets[to]
    names = sorted(position.nodes[n].id for n in forbidden if position.nodes[n].cell in cells[1:])
    raise RouteViolation(
        "passes_accepting_city",
        f"the way passes an unserved city that would accept the {color} cube ({', '.join(names)})",
        i,
    )


def walk_cells(trails: Trails, start: int, cells: list[str], forbidden: set[int]) -> tuple[set[int], int | None]:
    """Follow ``cells`` in order from the start node, never passing a
    ``forbidden`` node: the nodes reached in the last cell, or the index of
    the cell after which no trail goes on."""
    frontier = {trails.node_entry(start)}
    for step, nxt in enumerate(cells[1:]):
        target = trails.cell_no[nxt]
        following = set()
        for e in frontier:
            if any(n in trails.ports for n in trails.reached(e, forbidden)):
                following.update(trails.node_entry(m) for m in trails.ports if trails.node_cell[m] == target)
            following.update(
                e2 for e2, c2, passed in trails.exits[e] if c2 == target and not forbidden.intersection(passed)
            )
        if not following:
            return set(), step
        frontier = following
    return {n for e in frontier for n in trails.reached(e, forbidden)}, None


def _assign_cards(me: Player, moves: list[tuple[str, int, list]]) -> list[str | None]:
    """The card (or none) for each (kind, distance, allowed cards) transport
    that pays most with the cards held: best plays by cards used so far."""
    plays: dict[tuple[int, int], tuple[int, list]] = {(0, 0): (0, [])}
    for kind, distance, allowed in moves:
        following: dict[tuple[int, int], tuple[int, list]] = {}
        for used, (total, cards) in plays.items():
            for card in allowed:
                after = tuple(u + (card == c) for u, c in zip(used, CARDS))
                if any(u > held for u, held in zip(after, me.cards)):
                    continue
                value = total + income(kind, distance, me.limit_and_level(card)[1])
                if after not in following or value > following[after][0]:
                    following[after] = (value, cards + [card])
        plays = following
    if not plays:
        raise RouteViolation(
            "too_far", "the transports that go beyond the locomotive level need more bid cards than are held"
        )
    return max(plays.values(), key=lambda play: play[0])[1]
