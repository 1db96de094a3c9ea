"""The 18XS search: the best single transport and the best plan of a turn.

Exact by enumeration. From each cube, a depth-first search over simple
walks along the trails (bounded by the longest distance any held card
allows) records, per destination node, every distance at which it can be
reached and one walk per distance. A transport's effect on the turn depends
only on its cube, destination and card, so the plan search branches on
those (taking the longest allowed distance of each) over ``actions`` levels,
most paying first, cut by an upper bound per remaining action. Walk results
are cached by cube, colour and the served cities that matter to that colour
(those that would accept it), so a plan's later levels mostly reuse them.

The time limit is checked while walking and branching; when it stops the
search the answer is the best plan found, ``status: feasible``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..board import Position
from ..limits import Limits
from ..rules.xs import (
    WHITE,
    Player,
    Trails,
    TurnState,
    blocking,
    destination_kind,
    income,
    player,
    transport_json,
)
from ..solvers.fast import Clock

#: Walk steps between two looks at the clock.
CLOCK_EVERY = 2048


class OutOfTime(Exception):
    """The time limit stopped the search."""


@dataclass(frozen=True)
class Move:
    """One transport as the plan search sees it."""

    cube: tuple[int, str]  # (node, color)
    to: int
    to_kind: str
    distance: int
    card: str | None
    income: int


class Reach:
    """Everything a cube of one colour can reach from one node: per
    destination node, a bit per reachable distance and one walk (its cells)
    per distance; and the moves that follow, per set of cards held."""

    def __init__(self, cube: tuple[int, str], kinds: dict[int, str]) -> None:
        self.cube = cube
        self.kinds = kinds
        self.distances: dict[int, int] = {}
        self.walks: dict[tuple[int, int], list[str]] = {}
        self._moves: dict[tuple[int, int], list[Move]] = {}

    def longest(self, node: int, limit: int) -> int:
        """The longest distance up to ``limit`` at which ``node`` is reached (0: none)."""
        return _longest(self.distances.get(node, 0), limit)

    def moves(self, me: Player, cards: tuple[int, int]) -> list[Move]:
        """Per destination and card, the longest allowed walk; a card only where it pays more."""
        if cards not in self._moves:
            out = []
            for to in self.distances:
                kind = self.kinds[to]
                plain = 0
                for card in me.card_choices(cards):
                    limit, level = me.limit_and_level(card)
                    d = self.longest(to, limit)
                    value = income(kind, d, level) if d else 0
                    if card is None:
                        plain = value
                    if value and (card is None or value > plain):
                        out.append(Move(self.cube, to, kind, d, card, value))
            self._moves[cards] = out
        return self._moves[cards]


class XSSearch:
    def __init__(self, position: Position, clock):
        self.position = position
        self.trails = Trails(position)
        self.player: Player = player(position)
        self.clock = clock
        #: the distance limits of the held cards (and of none), shortest first
        me = self.player
        self.limits = sorted({me.limit_and_level(card)[0] for card in me.card_choices(me.cards)})
        self.steps = 0
        self._reach: dict[tuple, Reach] = {}
        self._layers: dict[tuple, Layer] = {}

    # -- walks ---------------------------------------------------------------
    def reach(self, start: int, color: str, served: frozenset[int], cached_only: bool = False) -> Reach | None:
        """Where a ``color`` cube at node ``start`` can go, cities in ``served``
        served (None if ``cached_only`` and not walked yet). A walk the time
        limit stops is kept as far as it went."""
        relevant = frozenset(n for n in served if color == WHITE or self.position.nodes[n].color == color)
        key = (start, color, relevant)
        if key not in self._reach:
            if cached_only:
                return None
            if (color, relevant) not in self._layers:
                self._layers[(color, relevant)] = Layer(self.trails, color, served, self.clock)
            layer = self._layers[(color, relevant)]
            self._reach[key] = Reach((start, color), layer.kinds)
            self._walk(start, layer, self._reach[key])
        return self._reach[key]

    def _walk(self, start: int, layer: Layer, result: Reach) -> None:
        """Depth-first search over the simple walks from ``start``, cut where
        no walk on could reach a destination at a distance that would still
        improve the longest known one within some card's limit."""
        trails = self.trails
        target_no, stops, exits, hops = layer.target_no, layer.stops, layer.exits, layer.hops
        if not target_no:
            return
        visited = [False] * len(trails.cell_ids)
        cells: list[str] = []
        cell_ids = trails.cell_ids

        def arrive(node: int, d: int) -> None:
            k = target_no.get(node)
            if d and k is not None:
                bit = 1 << d
                if not result.distances.get(node, 0) & bit:
                    result.distances[node] = result.distances.get(node, 0) | bit
                    result.walks[(node, d)] = list(cells)
                    goal.found(k, result.distances[node])
                    # each find refreshes the goals, a pass over every
                    # destination and entry: on a 2,000-cell board a few
                    # hundred of them took a second between two looks (a
                    # look no budget counts: finds are no fixed work)
                    if self.clock.past():
                        raise OutOfTime
            for entry, c in hops.get(node, ()):
                if not visited[c]:
                    enter(entry, c, d + 1, node=trails.entry_node(entry))

        def enter(entry: int, c: int, d: int, node: int | None = None) -> None:
            if d + goal.slack[entry] > 0:
                return
            self.steps += 1
            if self.steps % CLOCK_EVERY == 0 and self.clock.out_of_time():
                raise OutOfTime
            visited[c] = True
            cells.append(cell_ids[c])
            if node is not None:
                arrive(node, d)
            for n in stops[entry]:
                arrive(n, d)
            for e, c2 in exits[entry]:
                if not visited[c2]:
                    enter(e, c2, d + 1)
            cells.pop()
            visited[c] = False

        try:
            goal = Goals(self.limits, layer, start)
            enter(trails.node_entry(start), trails.node_cell[start], 0, node=start)
        except AllFound:
            pass

    # -- moves and plans -----------------------------------------------------
    def moves(self, state: TurnState, cached_only: bool = False) -> list[Move]:
        """Every transport worth considering in ``state``, most paying first
        (``cached_only``: of the cubes already walked)."""
        out = []
        for (node, color), _ in sorted(state.cubes):  # a set: sorted, for one answer per position
            reach = self.reach(node, color, state.served, cached_only)
            if reach is not None:
                out.extend(reach.moves(self.player, state.cards))
        out.sort(key=lambda m: -m.income)
        return out

    def upper_bound(self) -> int:
        """The most one transport can earn: the longest allowed distance plus
        the city bonus, over the cards held."""
        me = self.player
        return max(income("city", *me.limit_and_level(card)) for card in me.card_choices(me.cards))

    def plan(self, state: TurnState, actions: int, found: Incumbent) -> None:
        """Extend ``found.prefix`` by up to ``actions`` transports from ``state``,
        keeping the best plan in ``found``."""
        found.offer()
        if actions == 0:
            return
        if self.clock.out_of_time():
            raise OutOfTime
        bound = self.upper_bound()
        for move in self.moves(state):
            if found.prefix_income + move.income + (actions - 1) * bound <= found.best_income:
                break
            found.push(move)
            self.plan(state.after(move.cube, move.to, move.to_kind, move.card), actions - 1, found)
            found.pop()

    def to_json(self, move: Move, state: TurnState) -> dict:
        cells = self.reach(move.cube[0], move.cube[1], state.served).walks[(move.to, move.distance)]
        return transport_json(self.position, move.cube, cells, move.to, move.to_kind, move.card, move.income)


class AllFound(Exception):
    """Every destination is reached at the longest distance any limit allows."""


class Layer:
    """The trail map as a cube of one colour sees it, for one set of served
    cities: its destinations, the stops and exits its passing rule allows,
    the port hops, and the fewest steps from every entry to every destination
    (along trails, ignoring the cells a walk has used). ``forbidden``, where
    given, replaces the nodes the passing rule forbids (empty: all passable).
    ``clock`` stops the building between two destinations (OutOfTime): on
    a board of thousands of cells it takes seconds."""

    FAR = 1 << 20

    def __init__(
        self,
        trails: Trails,
        color: str,
        served: frozenset[int],
        clock: Clock,
        forbidden: set[int] | None = None,
    ):
        self.trails = trails
        nodes = trails.position.nodes
        if forbidden is None:
            forbidden = blocking(trails.position, color, served)
        self.kinds = {i: kind for i, n in enumerate(nodes) if (kind := destination_kind(n, color, served, i))}
        self.targets = list(self.kinds)
        self.target_no = {t: k for k, t in enumerate(self.targets)}
        self.stops = [
            list(dict.fromkeys(n for n, passed in entry if not forbidden.intersection(passed)))
            for entry in trails.stops
        ]
        self.exits = [
            list(dict.fromkeys((e, c) for e, c, passed in entry if not forbidden.intersection(passed)))
            for entry in trails.exits
        ]
        self.hops = trails.hops
        count = len(self.stops)
        back: list[list[int]] = [[] for _ in range(count)]
        ends: dict[int, list[int]] = {}
        for e in range(count):
            for e2, _ in self.exits[e]:
                back[e2].append(e)
            reached = self.stops[e] + ([trails.entry_node(e)] if trails.entry_node(e) is not None else [])
            for n in reached:
                ends.setdefault(n, []).append(e)
                for e2, _ in self.hops.get(n, ()):
                    back[e2].append(e)
        self.bounds = np.full((len(self.targets), count), self.FAR, dtype=np.int64)
        for k, t in enumerate(self.targets):
            if clock.out_of_time():
                raise OutOfTime
            row = self.bounds[k]
            frontier = ends.get(t, [])
            row[frontier] = 0
            steps = 0
            while frontier:
                steps += 1
                following = []
                for e in frontier:
                    for e0 in back[e]:
                        if row[e0] == self.FAR:
                            row[e0] = steps
                            following.append(e0)
                frontier = following


class Goals:
    """What a walk from one start may still improve, as a cut: ``slack[e]``
    is the least, over the destinations t not yet reached at the longest
    distance some limit allows, of (the fewest steps from entry e to t) - (the
    largest such limit). A walk at distance d in entry e can improve
    something only where d + slack[e] <= 0."""

    def __init__(self, limits: list[int], layer: Layer, start: int):
        self.limits = limits
        self.bounds = layer.bounds
        # the longest distance each limit allows to each target: one less
        # where the board's parity says walks there have the other parity
        trails = layer.trails
        here = trails.parity[trails.node_cell[start]]
        self.wanted = []
        for t in layer.targets:
            odd = int(here != trails.parity[trails.node_cell[t]])
            self.wanted.append([limit - 1 if trails.bipartite and limit % 2 != odd else limit for limit in limits])
        self.open = np.array([self._still_open(k, 0) for k in range(len(layer.targets))], dtype=np.int64)
        self._refresh()

    def _refresh(self) -> None:
        if (self.open < 0).all():
            raise AllFound
        self.slack = (self.bounds - self.open[:, None]).min(axis=0).tolist()

    def found(self, k: int, distances: int) -> None:
        """Target k is now reached at these distances (bit set): close the limits it fills."""
        top = self._still_open(k, distances)
        if top != self.open[k]:
            self.open[k] = top
            self._refresh()

    def _still_open(self, k: int, distances: int) -> int:
        """The largest limit at which target k, reached at ``distances``, may
        still be reached farther (-FAR: none)."""
        still = [
            limit for limit, want in zip(self.limits, self.wanted[k]) if want > 0 and _longest(distances, limit) < want
        ]
        return max(still) if still else -Layer.FAR


def _longest(bits: int, limit: int) -> int:
    bits &= (1 << (limit + 1)) - 1
    return bits.bit_length() - 1 if bits else 0


class Incumbent:
    """The plan being built and the best one found so far."""

    def __init__(self) -> None:
        self.prefix: list[Move] = []
        self.prefix_income = 0
        self.best: list[Move] = []
        self.best_income = 0

    def push(self, move: Move) -> None:
        self.prefix.append(move)
        self.prefix_income += move.income

    def pop(self) -> None:
        self.prefix_income -= self.prefix.pop().income

    def offer(self) -> None:
        if self.prefix_income > self.best_income:
            self.best, self.best_income = list(self.prefix), self.prefix_income


def solve_xs(position: Position, limits: Limits) -> dict:
    """The answer the 18XS rules describe (:mod:`routecalc.rules.xs`)."""
    clock = Clock(limits.time_limit, limits.progress)
    search = XSSearch(position, clock)
    initial = TurnState.initial(position)
    actions = search.player.actions
    found = Incumbent()
    best_single: Move | None = None
    status = "optimal"
    try:
        moves = search.moves(initial)
        best_single = moves[0] if moves else None
        search.plan(initial, actions, found)
    except OutOfTime:
        status = "feasible"
        # the walks as far as they went: their best transport may beat the plan found
        salvage = search.moves(initial, cached_only=True)
        if salvage and (best_single is None or salvage[0].income > best_single.income):
            best_single = salvage[0]
        if best_single is not None and best_single.income > found.best_income:
            found.best, found.best_income = [best_single], best_single.income
    plan, state = [], initial
    for move in found.best:
        plan.append(search.to_json(move, state))
        state = state.after(move.cube, move.to, move.to_kind, move.card)
    revenue = found.best_income
    return {
        "game": "18XS",
        "revenue": revenue,
        "status": status,
        "bound": revenue if status == "optimal" else max(revenue, actions * search.upper_bound()),
        "best_transport": search.to_json(best_single, initial) if best_single else None,
        "plan": plan,
        "actions": actions,
        "solver": "18XS",
        "stats": {"walk_steps": search.steps, "seconds": clock.seconds()},
    }
