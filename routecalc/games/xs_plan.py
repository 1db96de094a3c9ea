"""The 18XS turn plan by a search over turn states, memoised and bounded.

The reference search (:mod:`routecalc.games.xs`) tries the transports of a
plan in every order. But a turn's future depends only on its *state*: where
each cube lies, which cities the turn has served, the bid cards left and the
actions left. Many orders of the same transports reach one state; here the
best plan from each state is searched once.

- **States** are canonical: cubes that can never move again (no destination
  within reach even with every city passable) are left out, and so are
  served cities that no cube left can be delivered to or held up by (a
  served pink city matters only to pink and white cubes). A state, the
  actions left and the step in chain order are the memo's key.
- **Chain order** (:class:`PlanSearch`): a relay can always wait until its
  cube moves on, so the search only follows plans where each cube's moves
  are consecutive and the relays of cubes that stay at an LC or port come
  last. Relayed cubes never wait while others move, which was most of the
  states searched.
- **Transports** come from walk tables (:class:`WalkTable`): every walk of a
  cube (node and colour), found once with the cities it passes that would
  accept the cube; the transports of any state are the walks whose passed
  cities are served, a filter shared by every state that holds such a cube
  (identical cubes on one node share them too). Where the tables would grow
  past :data:`TABLE_STEPS` walk steps, the reference's walks per set of
  served cities take over.
- **The bound** on what ``k`` more actions can earn (:class:`Relaxed`) counts
  each action as the first move of a cube (at most the best single transport
  of that cube, with every city passable and no city served after this
  state), or as a later move of a cube that went to an LC or port: from
  there, on to another LC or port, or one last move anywhere; and, counted
  by city, each delivery as going to a different unserved city. A state
  whose bound cannot beat what is already known is not searched, and most
  transports are dropped before the state after them is built
  (:meth:`Neighbourhood.delivered`, :meth:`Neighbourhood.relayed_to`): a delivery leaves the other cubes no
  more than they had; a relayed cube moves on at once, so under this
  state's passing rule. The relaxed bound's walks
  (from every node a cube may lie on) cost more than short plans take, so
  the search starts with the plain bound (the best transport income per
  action) and builds it after :data:`RELAX_AFTER` states.
- **Memo entries under the bound**: a state searched against a floor (the
  income its plan must beat to matter) either finds its exact value or
  proves its value is at most that floor; the entry records which, and a
  later visit with a lower floor searches it again.
- **Work per state**: on the seed-size boards the first plans tried are
  already best; nearly all the states expanded go to proving that nothing
  beats them, most with a bound only 1-3 above what they must beat (and
  5-10 above their true value, in a sample of 150). What the bound misses
  is the passing rule: in all but 18 of board 3's 1,270 states expanded at
  8 actions, the best transports open in that state (one per cube, as many
  as actions are left) earn together no more than the state must beat; the
  relaxed walks that serving a city opens are the whole excess. Counting the passing rule by how many deliveries come
  before each transport (a walk that passes n unserved accepting cities
  needs n of them) cut board 3's 1,271 states to 1,226 only, at a higher
  cost per state; a bound that counts each city once (the best delivery
  there from the cubes left, not from any node) cut 1,308 to 1,305, and a
  chain bounded by its own LC's best onward delivery (not any LC's) would
  cut 66. Few expansions redo a state searched against a higher floor (29
  of 1,308). So the work per state is kept small instead, by sharing it
  across states: a cube's transports are keyed by the served cities its
  walks pass or end at, and its moves and (at an LC or port) its best
  onward delivery and relay by those and the cards held. A state is built
  once per search (:meth:`PlanSearch.after` finds a repeat by its cubes,
  served cities and cards before any work on it: half the states reached
  are repeats) and is its own memo key, hashed by identity. Its key is
  three numbers: the served cities are a bit mask of nodes and the cubes
  one number too, a count per node a cube may lie on and colour
  (:attr:`State.code`), so the state after a move is found by an
  addition, a subtraction and a look-up. It carries its bounds for every
  number of actions (one pass, the chains' share in closed form), its
  colours, what its closing relays earn each, and the sorted incomes and
  chain starts the bounds count from, which the state after a move takes
  over with the few changes the move makes; what many states share is
  found once (the deliveries by city per set of served cities, what the
  cards add, a cube's relaxed transports). Moves are ruled out by bounds
  the whole state shares: one after any delivery (its own), one after any
  relay (onward from the best LC or port), and as moves come most paying
  first, once a delivery or a relay fails its bound no later one is
  looked at; a relay is bounded by what a relay of a cube of its colour
  leaves (checked first once known: most relays end there), then by the
  LC or port it goes to, a delivery by the state after it, whose own
  bound is tighter (it knows which cubes lost their best destination) and
  needed anyway (looked up in the memo before the search goes into it).
  Board 3 at 8 actions (1,308 states expanded, about 5,500 states
  reached, 2,700 of them built) takes some 556 million machine
  instructions a solve (callgrind, a count the load does not change),
  against 758 million before this round of work on the cost per state;
  in CPU time 0.076-0.091 s against 0.108-0.119 s at a load of 1.0-1.1,
  the two run in turn (scaled by the instructions, 0.073-0.079 s where
  the search before was measured at 0.099-0.107 s on a quieter day). Measured and dropped: each cube's moves sorted
  and its relays listed apart when cached (+16 million instructions: the
  sort of about 36 moves is an insertion sort anyway, and 1,280 caches
  pay the lists), the moves gathered with ``groupby`` and
  ``chain.from_iterable`` (+40 million), the cubes whose best went to a
  delivered city found with ``compress`` (+17 million) or ``list.count``
  (no change), the chains' loop over a range with the move from an LC
  found before it (+15 million: found where no chain fits), and
  ``Move`` with slots (no change); the trail map's walks with the most
  passed grouped by their end (slower at these sizes). Counted, not
  built, as they would cost about what they save: bounds for one number
  of actions for states cut at once (a state expanded later pays the
  setup again), and a delivery bounded by the state's bound without its
  cube before the state after it is built (773 of the 1,358 states built
  and cut at once would not be built, for a bound per kind of cube). The cost is spread: 40 % in the
  interpreter's own loop, the rest in dictionaries, calls, allocation
  and the collector, no Python function more than a fifth; the Python
  calls were the dearest part left (a call costs a few hundred
  instructions). Much less needs a bound that knows the passing rule (a
  city no cube left can be delivered to blocks for the rest of the turn:
  not tried), or the search compiled.

The time limit is checked while walking and every few states. When it stops
the search, the answer is the best plan found (``status: feasible``) with a
true bound: the bound of the start of the turn.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from dataclasses import replace
from itertools import accumulate, product
from operator import attrgetter
from typing import NamedTuple

from ..board import Position
from ..limits import Limits
from ..rules.xs import (
    CARDS,
    DESTINATION_KINDS,
    MAX_ACTIONS,
    WHITE,
    Player,
    TurnState,
    destination_kind,
    income,
    player,
    transport_json,
    use_card,
)
from ..solvers.fast import Clock
from .xs import Layer, Move, OutOfTime, Reach, XSSearch

#: States expanded between two looks at the clock.
CLOCK_EVERY = 16
#: Walk-table steps between two looks at the clock.
CLOCK_STEPS = 2048
#: Looks at the clock the plan without bid cards may take before the plan
#: with them is searched (:func:`solve_plan`): a look comes every few hundred
#: walk steps or 16 states, so some 1.5 s at most; the 12 x 12 board below
#: takes 692.
SEED_LOOKS = 3000
#: Walk steps the walk tables may take in one search; past them the search
#: walks again for each set of served cities, as the reference does.
TABLE_STEPS = 100_000
#: Sets of colours and served cities :meth:`Relaxed.last` keeps the answer for.
SUMMARIES = 4096
#: States expanded with the plain bound (actions times the best transport
#: income) before the relaxed bound is worth its walks; short plans never need it.
RELAX_AFTER = 16

Cube = tuple[int, str]  # (node, colour)
_income = attrgetter("income")


class State:
    """The turn after some transports, canonical (see the module docstring).

    Immutable by convention but for what is derived. A search builds each
    state once (:meth:`PlanSearch.canonical`), so a state is equal only to
    itself and hashed by identity: it is a memo key many times over."""

    __slots__ = ("cubes", "code", "served", "cards", "colors", "firsts", "values", "chains", "bounds", "relay")

    def __init__(
        self,
        cubes: tuple[Cube, ...],
        code: int,
        served: int,
        cards: tuple[int, int],
        colors: frozenset[str],
        firsts: tuple[tuple[int, int], ...] = (),
    ):
        self.cubes = cubes  # sorted, one entry per cube
        self.code = code  # the same as one number (:attr:`PlanSearch.unit`): the key's part
        self.served = served  # cities served during the turn that still matter, a bit per node
        self.cards = cards  # double_distance and as_level_8 cards left
        self.colors = colors  # of the cubes: derived
        #: per cube, its best relaxed transport (income, destination): derived, not part of the key
        self.firsts = firsts
        #: the incomes of ``firsts``, and what each cube's chain starts with where it can start
        #: one (:attr:`Relaxed.chain_start`), in ascending order, once asked for: derived
        self.values: list[int] | None = None
        self.chains: list[int] | None = None
        #: :meth:`Relaxed.bound` of 0, 1, ... transports, once asked for: derived
        self.bounds: list[int] = []
        #: what :meth:`Relaxed.relays_bound` counts per relay, once asked for (-1: no relay): derived
        self.relay: int | None = None


#: The step of a plan in chain order (see :class:`PlanSearch`): any transport
#: (``FREE``); after a relay of a cube to ``(node, colour)``, a move of such a
#: cube or the first transport of the relays that end the plan; there, relays only (``TRAILING``).
Step = Cube | str | None
FREE: Step = None
TRAILING: Step = "trailing"


class Entry(NamedTuple):
    """What the search knows of a state: its exact value (and the first
    transport of a best plan, and the state and step after it), or an upper bound."""

    value: int
    exact: bool
    move: Move | None = None
    after: tuple[State, Step] | None = None


#: The entry of a state whose best plan earns nothing.
NOTHING = Entry(0, True)


class TooManyWalks(Exception):
    """The walk tables would take more than :data:`TABLE_STEPS` steps."""


class WalkTable:
    """Every walk of a cube up to the longest distance a held card allows,
    found once, with the cities it passes that would accept the cube.

    The passing rule forbids a walk exactly while one of those cities is
    unserved; serving cities during the turn only lifts it. So a cube's
    transports in any state are its walks whose passed cities are all served
    and whose destination is not: a filter, where the reference walks again
    for every new set of served cities. A walk search that would pass
    :data:`TABLE_STEPS` steps raises :class:`TooManyWalks`.
    """

    def __init__(self, walks: XSSearch, limit: int):
        self.trails = walks.trails
        self.clock = walks.clock
        self.limit = limit
        self.steps = 0
        nodes = walks.position.nodes
        #: per colour, the cities that would accept a cube of it (a bit per node)
        self.accepting: dict[str, int] = {}
        self._kinds: dict[str, dict[int, str]] = {}
        for color in {WHITE, *(good for n in nodes for good in n.goods)}:
            kinds = {i: kind for i, n in enumerate(nodes) if (kind := destination_kind(n, color, frozenset(), i))}
            self._kinds[color] = kinds
            self.accepting[color] = sum(1 << i for i, kind in kinds.items() if kind == "city")
        trails = self.trails
        self._hops = trails.hops
        #: per cube: destination -> passed cities (a bit per node) -> distance -> cells
        self._walks: dict[Cube, dict[int, dict[int, dict[int, list[str]]]]] = {}
        self._reach: dict[tuple[Cube, int], Reach] = {}
        #: per cube walked, the nodes its walks pass or end at (a bit per node)
        self._touched: dict[Cube, int] = {}

    def matters(self, cube: Cube) -> int:
        """The cities whose being served changes the transports of ``cube``:
        those that would accept it that its walks pass or end at (a bit per node)."""
        if cube not in self._walks:
            walks = self._walks[cube] = self._walk(cube)
            touched = 0
            for to, by_passed in walks.items():
                touched |= 1 << to
                for passed in by_passed:
                    touched |= passed
            self._touched[cube] = touched
        return self.accepting[cube[1]] & self._touched[cube]

    def reach(self, cube: Cube, served: int) -> Reach:
        """The transports of ``cube`` with the cities of the mask ``served``
        served, as the reference's walks give them."""
        color = cube[1]
        relevant = served & self.matters(cube)
        key = (cube, relevant)
        if key not in self._reach:
            kinds = self._kinds[color]
            reach = Reach(cube, {n: kind for n, kind in kinds.items() if not relevant >> n & 1})
            for to, by_passed in self._walks[cube].items():
                if relevant >> to & 1:
                    continue
                for passed, by_distance in by_passed.items():
                    if passed & ~relevant:
                        continue
                    for d, cells in by_distance.items():
                        bits = reach.distances.get(to, 0)
                        if not bits >> d & 1:
                            reach.distances[to] = bits | 1 << d
                            reach.walks[(to, d)] = cells
            self._reach[key] = reach
        return self._reach[key]

    def _walk(self, cube: Cube) -> dict[int, dict[int, dict[int, list[str]]]]:
        """Every simple walk from the cube's node up to :attr:`limit` cells."""
        trails, limit = self.trails, self.limit
        node, color = cube
        accepting, kinds, hops = self.accepting[color], self._kinds[color], self._hops
        out: dict[int, dict[int, dict[int, list[str]]]] = {}
        visited = [False] * len(trails.cell_ids)
        cells: list[str] = []
        cell_ids = trails.cell_ids
        masks: dict[tuple[int, ...], int] = {}

        def mask(passed: tuple[int, ...]) -> int:
            if passed not in masks:
                masks[passed] = sum(1 << n for n in passed if accepting >> n & 1)
            return masks[passed]

        def arrive(n: int, d: int, passed: int) -> None:
            if d and n in kinds:
                by_distance = out.setdefault(n, {}).setdefault(passed, {})
                if d not in by_distance:
                    by_distance[d] = list(cells)
            if d < limit:
                for entry, c in hops.get(n, ()):
                    if not visited[c]:
                        enter(entry, c, d + 1, passed, trails.entry_node(entry))

        def enter(entry: int, c: int, d: int, passed: int, at: int | None = None) -> None:
            self.steps += 1
            if self.steps > TABLE_STEPS:
                raise TooManyWalks
            if self.steps % CLOCK_STEPS == 0 and self.clock.out_of_time():
                raise OutOfTime
            visited[c] = True
            cells.append(cell_ids[c])
            if at is not None:
                arrive(at, d, passed)
            for n, on_the_way in trails.stops[entry]:
                arrive(n, d, passed | mask(on_the_way))
            if d < limit:
                for e, c2, on_the_way in trails.exits[entry]:
                    if not visited[c2]:
                        enter(e, c2, d + 1, passed | mask(on_the_way))
            cells.pop()
            visited[c] = False

        enter(trails.node_entry(node), trails.node_cell[node], 0, 0, node)
        return out


class Relaxed:
    """Upper bounds on what transports can earn anywhere later in the turn.

    A relaxed walk may pass every city (the passing rule is the only rule
    that a served city relaxes), and its destinations are those of the
    start of the turn less the cities served since; a walk of the turn is
    a relaxed walk. One walk search per node where a cube lies or may come
    to lie (its start, any LC or port) finds every destination's longest
    distance under each card.
    """

    def __init__(self, walks: XSSearch, cubes: tuple[Cube, ...]):
        position, me = walks.position, walks.player
        nodes = position.nodes
        # every unserved city, LC and port
        layer = Layer(walks.trails, WHITE, frozenset(), walks.clock, forbidden=set())
        self.kinds = layer.kinds
        self.nodes = nodes
        self.relays = [i for i, n in enumerate(nodes) if n.kind in DESTINATION_KINDS]
        sites = sorted({node for node, _ in cubes} | set(self.relays))
        #: per site and destination, the plain income and that of each card
        paid: dict[int, dict[int, list[int]]] = {}
        for site in sites:
            reach = Reach((site, WHITE), layer.kinds)
            walks._walk(site, layer, reach)
            paid[site] = {
                to: [_pays(reach, to, layer.kinds[to], me, card) for card in (None, *CARDS)] for to in reach.distances
            }
        #: the most a card adds to any transport's income, per card
        self.card_gain = [
            max(
                (p[c + 1] - p[0] for dest in paid.values() for p in dest.values()),
                default=0,
            )
            for c in range(len(CARDS))
        ]
        #: plain incomes (0 where only a card reaches)
        self._paid = {site: {to: p[0] for to, p in dest.items() if max(p)} for site, dest in paid.items()}
        #: per site, the most a transport to an LC or port pays
        self.to_relay = {
            site: max((v for to, v in dest.items() if self.kinds[to] != "city"), default=0)
            for site, dest in self._paid.items()
        }
        #: the sites from which some transport, with a card or not, reaches an LC or port
        self.relaying_sites = {
            site for site, dest in paid.items() if any(max(p) for to, p in dest.items() if self.kinds[to] != "city")
        }
        #: per node, the plain income of its best relay where it is such a site, else -1 (0 where
        #: only a card reaches an LC or port: the card's gain is counted apart, the moves on are not)
        self.chain_start = [self.to_relay[n] if n in self.relaying_sites else -1 for n in range(len(nodes))]
        #: the most a transport from one LC or port to another pays
        self.relay_to_relay = max((self.to_relay[r] for r in self.relays), default=0)
        #: per cube (on any site, of any colour), :meth:`options`
        self.options_of: dict[Cube, list[tuple[int, int]]] = {}
        #: per city, the most a delivery there pays from any site, most paying first
        colors = {color for _, color in cubes}
        into: dict[int, int] = {}
        for site in sites:
            for color in colors:
                for v, to in self.options((site, color)):
                    if self.kinds[to] == "city":
                        into[to] = max(into.get(to, 0), v)
        self.into_city = sorted(((v, to) for to, v in into.items()), reverse=True)
        #: per colour, (income, destination) of relaxed transports of a cube of it from any LC or port,
        #: most paying first
        self.from_relays: dict[str, list[tuple[int, int]]] = {}
        for color in colors:
            best: dict[int, int] = {}
            for r in self.relays:
                for v, to in self.options((r, color)):
                    best[to] = max(best.get(to, 0), v)
            self.from_relays[color] = sorted(((v, to) for to, v in best.items()), reverse=True)
        self._gains: dict[tuple[int, int], list[int]] = {}
        self._last: dict[tuple[frozenset[str], int], int] = {}
        self._deliveries: dict[tuple[int, int], list[int]] = {}

    def accepts(self, to: int, color: str) -> bool:
        return self.kinds[to] != "city" or color == WHITE or self.nodes[to].color == color

    def options(self, cube: Cube) -> list[tuple[int, int]]:
        """(income, destination) of the cube's relaxed transports, most paying first."""
        if cube not in self.options_of:
            node, color = cube
            self.options_of[cube] = sorted(
                ((v, to) for to, v in self._paid[node].items() if self.accepts(to, color)),
                reverse=True,
            )
        return self.options_of[cube]

    @staticmethod
    def best(options: list[tuple[int, int]], served: int) -> tuple[int, int]:
        """The first of ``options`` to a destination not in the mask ``served``
        ((0, -1): none, the cube never moves again)."""
        for option in options:
            if not served >> option[1] & 1:
                return option
        return (0, -1)

    def bound(self, state: State, actions: int) -> int:
        """The most ``actions`` more transports can earn from ``state``: the
        less of two counts, plus what the cards held can add.

        By cube: each action is the first move of a cube (at most its best
        relaxed transport), or a later move of a cube that went to an LC or
        port first (at most its best relaxed transport to one, 0 where only a
        card takes it there, the card's gain counted apart: a *chain*);
        the last later move of a chain pays at most the best from any LC or
        port, the others at most the best from one LC or port to another.
        Singles and chains are taken from the best of each list
        independently (a relaxation), never more of them than cubes.

        By city: each delivery is to a different unserved city (at most the
        best delivery there from any node a cube may lie on), each other
        action to an LC or port.
        """
        if actions <= 0:
            return 0
        known = state.bounds
        if len(known) <= actions:
            known = state.bounds = self.bounds(state, actions)
        return known[actions]

    def bounds(self, state: State, actions: int) -> list[int]:
        """:meth:`bound` for 0 to ``actions`` transports, in one pass (the
        moves of an expanded state ask for several)."""
        served = state.served
        cubes = len(state.cubes)
        values, chains = state.values, state.chains
        if values is None or chains is None:
            values, chains = self.sorted_values(state)
        single = list(accumulate(values[: -actions - 1 : -1], initial=0))
        middle = self.relay_to_relay
        relay_move = max(chains[-1], middle) if chains else 0
        chain = list(accumulate(chains[: -(actions // 2) - 1 : -1], initial=0))
        last = -1  # the best move from an LC or port (:meth:`last`), once a chain is counted
        deliveries = self._deliveries.get((served, relay_move)) or self.deliveries(served, relay_move)
        count = len(deliveries) - 1
        #: how many first moves pay more than a move from one LC or port to
        #: another: with h chains, as many of them as room allows, the rest middles
        worth = cubes - bisect_right(values, middle)
        out = [0]
        gains = self._gains.get(state.cards) or self.gains(state.cards)
        chains = len(chain) - 1
        for k in range(1, actions + 1):
            top = k if k < cubes else cubes
            d = top if top < count else count
            by_city = deliveries[d] + (k - d) * relay_move
            # the bound is the less of the two counts: chains are counted only while by cube is less
            by_cube = single[top]
            h = 1
            while by_cube < by_city and h <= chains and 2 * h <= k:
                n = k - 2 * h  # the first moves beside h chains: as many as pay more than a middle
                if n > cubes - h:
                    n = cubes - h
                if n > worth:
                    n = worth
                if last < 0:
                    last = self.last(state.colors, served)
                value = single[n] + chain[h] + h * last + (k - 2 * h - n) * middle
                if value > by_cube:
                    by_cube = value
                h += 1
            out.append((by_cube if by_cube < by_city else by_city) + gains[k])
        return out

    def deliveries(self, served: int, relay_move: int) -> list[int]:
        """The running totals of the deliveries by city (each to a different
        city not in ``served``, each paying more than ``relay_move``), as many
        as a turn may have actions (many states share them)."""
        key = (served, relay_move)
        known = self._deliveries.get(key)
        if known is None:
            known = self._deliveries[key] = [0]
            for v, to in self.into_city:
                if len(known) > MAX_ACTIONS or v <= relay_move:
                    break
                if not served >> to & 1:
                    known.append(known[-1] + v)
        return known

    def sorted_values(self, state: State) -> tuple[list[int], list[int]]:
        """:attr:`State.values` and :attr:`State.chains` (found here unless carried from the state before)."""
        values, chains = state.values, state.chains
        if values is None or chains is None:
            chain_start = self.chain_start
            values = state.values = sorted([v for v, _ in state.firsts])
            chains = state.chains = sorted([r for node, _ in state.cubes if (r := chain_start[node]) >= 0])
        return values, chains

    def relays_bound(self, state: State, actions: int) -> int:
        """The most ``actions`` more transports can earn from ``state`` when
        all of them are relays (the plan's closing relays in chain order)."""
        relay = state.relay
        if relay is None:
            chains = self.sorted_values(state)[1]
            relay = state.relay = max(chains[-1], self.relay_to_relay) if chains else -1
        if relay < 0:
            return 0
        return actions * relay + self.cards_add(state, actions)

    def gains(self, cards: tuple[int, int]) -> list[int]:
        """:meth:`cards_add` of ``cards`` held for 0 to :data:`MAX_ACTIONS` transports."""
        known = self._gains.get(cards)
        if known is None:
            held = sorted(
                (
                    gain
                    for gain, count in zip(self.card_gain, cards)
                    for _ in range(min(count, MAX_ACTIONS))
                    if gain > 0
                ),
                reverse=True,
            )
            known = self._gains[cards] = [sum(held[:k]) for k in range(MAX_ACTIONS + 1)]
        return known

    def cards_add(self, state: State, actions: int) -> int:
        """The most the bid cards held can add to ``actions`` transports."""
        known = self._gains.get(state.cards)
        return (self.gains(state.cards) if known is None else known)[actions]

    def last(self, colors: frozenset[str], served: int) -> int:
        """The most a transport from an LC or port pays a cube of one of ``colors``, ``served`` served."""
        key = (colors, served)
        if key not in self._last:
            if len(self._last) >= SUMMARIES:
                self._last.clear()
            self._last[key] = max(self.best(self.from_relays[color], served)[0] for color in colors)
        return self._last[key]


class Neighbourhood:
    """What the bounds of the moves of one expanded state share: the
    state's own bounds, those of closing relays, and the bounds after a
    relay to each LC or port."""

    def __init__(self, search: PlanSearch, state: State):
        self.search = search
        #: the state, with its cubes' firsts once the relaxed bound is built (:meth:`PlanSearch.prepare`)
        self.state = state if len(state.firsts) == len(state.cubes) else search.with_firsts(state)
        self._closing: dict[int, int] = {}
        self._relayed: dict[tuple[Cube, int], int] = {}
        self._shared: dict[int, tuple[int, int]] = {}
        self._chains: dict[tuple[str, int], int] = {}
        self._besides: dict[int, int] = {}

    def whole(self, actions: int) -> int:
        """The bound of ``actions`` transports of the whole state."""
        known = self.state.bounds
        if len(known) > actions:
            return known[actions]
        relaxed = self.search.relaxed
        assert relaxed is not None
        return relaxed.bound(self.state, actions)

    def relayed(self, at: Cube, actions: int) -> int:
        """A bound on ``actions`` transports after a relay to ``at``, shared by
        every cube relayed there. The plan either closes with relays, or that
        cube moves on at once under the passing rule of *this* state (nothing
        is served in between): a delivery paying at most its best from
        there, or a relay and more moves on (:meth:`_chain`); the other cubes
        earn no more than the whole state's bound."""
        key = (at, actions)
        known = self._relayed.get(key)
        if known is None:
            state = self.state
            deliver, relay = self.search.onward(at, state.served, state.cards)
            shared = self._shared.get(actions)  # what every LC or port shares
            if shared is None:
                shared = self._shared[actions] = (self.closing(actions), self.whole(actions - 1))
            known, whole = shared
            if deliver and deliver + whole > known:
                known = deliver + whole
            if relay and actions >= 2 and (chain := relay + self._chain(at[1], actions)) > known:
                known = chain
            self._relayed[key] = known
        return known

    def relayed_of(self, color: str, actions: int) -> int:
        """A bound on ``actions`` transports after a relay of a ``color``
        cube to any LC or port, at least :meth:`relayed_to` of each: as
        :meth:`relayed`, the delivery on paying at most the best from any LC
        or port (with the best card held), the relay on at most the best
        from one to another."""
        relaxed = self.search.relaxed
        if relaxed is None:
            return actions * self.search.top
        if actions <= 0:
            return 0
        shared = self._shared.get(actions)
        if shared is None:
            shared = self._shared[actions] = (self.closing(actions), self.whole(actions - 1))
        known, whole = shared
        state = self.state
        card = relaxed.cards_add(state, 1)
        deliver = relaxed.best(relaxed.from_relays[color], state.served)[0] + card + whole
        if deliver > known:
            known = deliver
        if actions >= 2 and (chain := relaxed.relay_to_relay + card + self._chain(color, actions)) > known:
            known = chain
        return known

    def _chain(self, color: str, actions: int) -> int:
        """What follows a relay of a ``color`` cube at most when the cube
        moves on (through more LCs or ports, each relay paying at most the
        most any pays, then a delivery paying at most the best from any) and
        the other cubes take the actions it leaves: the same for every LC
        or port."""
        key = (color, actions)
        known = self._chains.get(key)
        if known is None:
            relaxed = self.search.relaxed
            assert relaxed is not None
            state = self.state
            last = relaxed.best(relaxed.from_relays[color], state.served)[0] + relaxed.cards_add(state, actions)
            known = self._chains[key] = last + self._beside_chain(actions)
        return known

    def _beside_chain(self, actions: int) -> int:
        """What the moves of a chain after its first relay, less its last
        move, and the other cubes' moves earn at most."""
        known = self._besides.get(actions)
        if known is None:
            relaxed = self.search.relaxed
            assert relaxed is not None
            middle = relaxed.relay_to_relay
            known = self._besides[actions] = max(
                (moves - 2) * middle + self.whole(actions - moves) for moves in range(2, actions + 1)
            )
        return known

    def delivered(self, actions: int) -> int:
        """A bound on ``actions`` transports after any delivery, found
        without building the state after it (most moves of an expanded state
        go no further than this and :meth:`relayed_to`): the cubes left earn
        no more than the whole state's bound, as they had the city unserved.
        A delivery that gets past this is bounded again, better, by the state
        after it: that state knows which cubes lost their best destination.
        (The plain bound while the relaxed one is not built.)"""
        if self.search.relaxed is None:
            return actions * self.search.top
        return self.whole(actions)

    def relayed_to(self, step: Step, actions: int) -> int:
        """A bound on ``actions`` transports after a relay that leads to
        ``step``: :meth:`relayed` (the plan closes with relays, or that cube
        moves on at once); after a closing relay, more closing relays."""
        if self.search.relaxed is None:
            return actions * self.search.top
        if actions <= 0:
            return 0
        if step is TRAILING:
            return self.closing(actions)
        assert isinstance(step, tuple)
        return self.relayed(step, actions)

    def any_relayed(self, actions: int) -> int:
        """A bound on ``actions`` transports after a relay anywhere, at least
        :meth:`relayed_to` of every LC or port: the onward delivery at most
        the best from any LC or port (:meth:`Relaxed.last`) and the onward
        relay at most the best from one to another, each with the best card
        held."""
        relaxed = self.search.relaxed
        if relaxed is None:
            return actions * self.search.top
        if actions <= 0:
            return 0
        state = self.state
        card = relaxed.cards_add(state, 1)
        deliver = relaxed.last(state.colors, state.served) + card
        known = max(self.closing(actions), deliver + self.whole(actions - 1))
        if actions >= 2:
            chain = deliver - card + relaxed.cards_add(state, actions) + self._beside_chain(actions)
            known = max(known, relaxed.relay_to_relay + card + chain)
        return known

    def closing(self, actions: int) -> int:
        """The bound of ``actions`` relays."""
        if actions not in self._closing:
            relaxed = self.search.relaxed
            assert relaxed is not None
            self._closing[actions] = relaxed.relays_bound(self.state, actions)
        return self._closing[actions]


def _next_step(step: Step, move: Move) -> Step:
    """The step after ``move`` in chain order."""
    if move.to_kind == "city":
        return FREE
    if step is FREE or step == move.cube:
        return (move.to, move.cube[1])
    return TRAILING


def _pays(reach: Reach, to: int, kind: str, me: Player, card: str | None) -> int:
    limit, level = me.limit_and_level(card)
    d = reach.longest(to, limit)
    return income(kind, d, level) if d else 0


class PlanSearch:
    """The best plan of a turn, from its first state, searched in chain order.

    A relay (a transport to an LC or port) can always wait until just before
    the next move of its cube, or until the end of the plan if the cube stays
    there: later in the turn its walk is still allowed (serving cities only
    lifts the passing rule), its destination still takes it and it pays the
    same; the transports it waits past neither move that cube nor need it
    where it went. So every plan has an equal in *chain order*: the moves of
    each cube that ends in a city are consecutive (relays, then the
    delivery), and the relays of the cubes that end at an LC or port come
    last. The search only follows plans in chain order: after a relay, the
    next transport moves that cube (or one of its colour on that node, the
    same thing) or starts the closing relays; then only relays follow. That
    leaves out the many states where a relayed cube waits while others move.
    """

    def __init__(self, position: Position, clock):
        self.walks = XSSearch(position, clock)
        table = WalkTable(self.walks, max(self.walks.limits))
        self.table: WalkTable | None = table
        #: the steps of the walk tables (kept when they are dropped)
        self.table_steps = 0
        self.clock = clock
        self.player: Player = player(position)
        self.nodes = nodes = position.nodes
        cubes = tuple(sorted((i, good) for i, n in enumerate(position.nodes) for good in n.goods))
        # a state's cubes as one number: a field per node a cube may lie on (its start, an LC
        # or port) and colour, wide enough to count every cube
        sites = sorted({node for node, _ in cubes} | {i for i, n in enumerate(nodes) if n.kind in DESTINATION_KINDS})
        colors = sorted({color for _, color in cubes})
        width = len(cubes).bit_length()
        #: per cube, a one in its field of a state's code (:attr:`State.code`)
        self.unit = {(site, color): 1 << width * k for k, (site, color) in enumerate(product(sites, colors))}
        #: per colour, the fields of its cubes
        self._fields = {
            color: sum((self.unit[(site, color)] << width) - self.unit[(site, color)] for site in sites)
            for color in colors
        }
        #: every state built, by its cubes, served cities and cards (one object each)
        self._canonical: dict[tuple[int, int, tuple[int, int]], State] = {}
        #: the start of the turn
        self.start = State(cubes, sum(self.unit[cube] for cube in cubes), 0, self.player.cards, frozenset(colors))
        self._canonical[(self.start.code, self.start.served, self.start.cards)] = self.start
        #: the most one transport can earn, with the best card held
        self.top = self.walks.upper_bound()
        #: what the whole turn can earn at most (tightened by :meth:`prepare`)
        self.start_bound = self.player.actions * self.top
        #: the relaxed bound, once :data:`RELAX_AFTER` states are expanded
        self.relaxed: Relaxed | None = None
        self.memo: dict[tuple[State, int, Step], Entry] = {}
        self._at_most: dict[int, Entry] = {}
        #: per set of colours of cubes left, the cities a served one of which matters (a bit per node)
        self._matter: dict[frozenset[str], int] = {}
        #: the states built, by their cubes, served cities and cards before :meth:`canonical`
        self._built: dict[tuple[int, int, tuple[int, int]], State] = {}
        self._onward: dict[tuple[Cube, int, tuple[int, int]], tuple[int, int]] = {}
        #: per colour, the cities that would accept a cube of it (kept when the tables are dropped)
        self._accepting = table.accepting
        #: per cube, :meth:`matters`
        self._matters: dict[Cube, int] = {}
        #: the transports of a cube per set of served cities that would accept it
        #: (of the walk tables or the reference's walks)
        self._reaches: dict[tuple[Cube, int], Reach] = {}
        #: per set of served cities and cards held, each cube's moves
        self._moves_here: dict[tuple[int, tuple[int, int]], dict[Cube, list[Move]]] = {}
        #: and its moves, per such set and cards held
        self._moves: dict[tuple[Cube, int, tuple[int, int]], list[Move]] = {}
        self.expanded = 0
        self.best_income = 0
        self.best_plan: list[tuple[Move, State]] = []
        self._path: list[tuple[Move, State]] = []
        #: the neighbourhoods of the states being expanded, innermost last
        self._expanding: list[Neighbourhood] = []
        self._path_income = 0

    def prepare(self) -> Relaxed:
        """The relaxed walks behind the bound; the bound of the whole turn."""
        self.relaxed = Relaxed(self.walks, self.start.cubes)
        for near in self._expanding:  # built before: their states' firsts now
            near.state = self.with_firsts(near.state)
        self.start_bound = min(
            self.start_bound,
            self.relaxed.bound(self.with_firsts(self.start), self.player.actions),
        )
        return self.relaxed

    def bound(self, state: State, actions: int, step: Step = FREE) -> int:
        relaxed = self.relaxed
        if relaxed is None:
            if self.expanded < RELAX_AFTER:
                return actions * self.top
            relaxed = self.prepare()
        if len(state.firsts) != len(state.cubes):
            state = self.with_firsts(state)
        if step is TRAILING:
            return relaxed.relays_bound(state, actions)
        known = state.bounds
        return known[actions] if len(known) > actions else relaxed.bound(state, actions)

    def with_firsts(self, state: State) -> State:
        """``state`` with its cubes' best relaxed transports (a state made
        before the relaxed bound was, canonical now)."""
        if self.relaxed is None or len(state.firsts) == len(state.cubes):
            return state
        relaxed = self.relaxed
        firsts = tuple(relaxed.best(relaxed.options_of[c], state.served) for c in state.cubes)
        return self.canonical(state.cubes, state.code, firsts, state.served, state.cards, colors=state.colors)

    def canonical(
        self,
        cubes: tuple[Cube, ...],
        code: int,
        firsts: tuple[tuple[int, int], ...],
        served: int,
        cards: tuple[int, int],
        dead: bool = True,
        values: list[int] | None = None,
        chains: list[int] | None = None,
        colors: frozenset[str] | None = None,
    ) -> State:
        """The state without the cubes that can never move again (no relaxed
        destination, even with a card; only looked for where ``dead``) and
        the served cities that matter to no cube left (``colors``: of the
        cubes, where known)."""
        if dead and any(to < 0 for _, to in firsts):
            live = [i for i, (_, to) in enumerate(firsts) if to >= 0]
            if values is not None and chains is not None and self.relaxed is not None:
                chain_start = self.relaxed.chain_start
                for (node, _), (v, to) in zip(cubes, firsts):
                    if to < 0:
                        values.remove(v)
                        if (r := chain_start[node]) >= 0:
                            chains.remove(r)
            for cube, (_, to) in zip(cubes, firsts):
                if to < 0:
                    code -= self.unit[cube]
            cubes, firsts = (
                tuple(cubes[i] for i in live),
                tuple(firsts[i] for i in live),
            )
            colors = None
        if colors is None:
            colors = frozenset([color for color, field in self._fields.items() if code & field])
        if served and WHITE not in colors:
            matter = self._matter.get(colors)
            if matter is None:
                matter = self._matter[colors] = sum(1 << i for i, n in enumerate(self.nodes) if n.color in colors)
            served &= matter
        key = (code, served, cards)
        state = self._canonical.get(key)
        if state is None:
            state = self._canonical[key] = State(cubes, code, served, cards, colors, firsts)
        elif len(state.firsts) >= len(firsts):
            return state
        else:  # built before the relaxed bound was: its firsts now
            state.firsts = firsts
        state.values, state.chains = values, chains
        return state

    def after(self, state: State, move: Move) -> State:
        """The state after ``move``; only the cubes whose best relaxed transport
        went to the city it serves look again. Many orders of the same
        transports lead to one state: it is built once."""
        relaxed = self.relaxed
        if relaxed is not None and len(state.firsts) != len(state.cubes):
            state = self.with_firsts(state)
        code = state.code - self.unit[move.cube]
        served = state.served
        delivery = move.to_kind == "city"
        if delivery:
            served |= 1 << move.to
        else:
            cube = (move.to, move.cube[1])
            code += self.unit[cube]
        cards = state.cards if move.card is None else use_card(state.cards, move.card)
        key = (code, served, cards)
        known = self._built.get(key)
        if known is not None and (relaxed is None or len(known.firsts) == len(known.cubes)):
            return known
        cubes = list(state.cubes)
        i = cubes.index(move.cube)
        del cubes[i]
        if not delivery:
            j = bisect_left(cubes, cube)
            cubes.insert(j, cube)
        firsts = list(state.firsts)
        dead = False  # a cube that looked again found no destination
        # the parent's sorted incomes and chain starts, changed where the firsts change
        values, chains = state.values, state.chains
        if relaxed is None or values is None or chains is None:
            values = chains = None
        else:
            chain_start = relaxed.chain_start
            values, chains = values.copy(), chains.copy()
            values.remove(firsts[i][0])
            if (r := chain_start[move.cube[0]]) >= 0:
                chains.remove(r)
        if relaxed is not None:
            del firsts[i]
            if delivery:
                to = move.to
                for k, first in enumerate(firsts):
                    if first[1] == to:
                        firsts[k] = new = relaxed.best(relaxed.options_of[cubes[k]], served)
                        dead = dead or new[1] < 0
                        if values is not None:
                            values.remove(first[0])
                            insort(values, new[0])
            else:
                first = relaxed.best(relaxed.options_of[cube], served)
                firsts.insert(j, first)
                dead = first[1] < 0
                if values is not None and chains is not None:
                    insort(values, first[0])
                    if (r := relaxed.chain_start[cube[0]]) >= 0:
                        insort(chains, r)
        colors = state.colors
        if delivery and not code & self._fields[move.cube[1]]:  # the last cube of its colour
            colors = colors - {move.cube[1]}
        known = self._built[key] = self.canonical(
            tuple(cubes), code, tuple(firsts), served, cards, dead, values, chains, colors
        )
        return known

    def onward(self, cube: Cube, served: int, cards: tuple[int, int]) -> tuple[int, int]:
        """The most ``cube`` can earn by one delivery, and by one relay, with
        ``served`` served and ``cards`` held (many states share them)."""
        matters = self._matters.get(cube)
        key = (cube, served & (self.matters(cube) if matters is None else matters), cards)
        known = self._onward.get(key)
        if known is None:
            moves = self.reach(cube, served).moves(self.player, cards)
            known = self._onward[key] = (
                max((m.income for m in moves if m.to_kind == "city"), default=0),
                max((m.income for m in moves if m.to_kind != "city"), default=0),
            )
        return known

    def matters(self, cube: Cube) -> int:
        """The cities whose being served changes the transports of ``cube``
        (many sets of served cities share them): of the walk tables
        (:meth:`WalkTable.matters`), or, once they are dropped, every city
        that would accept it."""
        known = self._matters.get(cube)
        if known is None:
            known = self._accepting[cube[1]]
            if self.table is not None:
                try:
                    known = self.table.matters(cube)
                except TooManyWalks:
                    self.table_steps, self.table = self.table.steps, None
            self._matters[cube] = known
        return known

    def reach(self, cube: Cube, served: int) -> Reach:
        """The transports of ``cube``, the cities of the mask ``served`` served:
        from the walk tables, or the reference's walks once the tables have
        grown too large."""
        key = (cube, served & self.matters(cube))
        reach = self._reaches.get(key)
        if reach is not None:
            return reach
        if self.table is not None:
            try:
                reach = self._reaches[key] = self.table.reach(cube, served)
                return reach
            except TooManyWalks:
                self.table_steps, self.table = self.table.steps, None
        reach = self.walks.reach(cube[0], cube[1], frozenset(n for n in range(served.bit_length()) if served >> n & 1))
        assert reach is not None  # walked when not yet cached
        self._reaches[key] = reach
        return reach

    def moves(self, state: State, step: Step = FREE, closing: bool = True) -> list[Move]:
        """Every transport worth trying from ``state`` at ``step`` in chain
        order, most paying first; the closing relays only if ``closing``."""
        out: list[Move] = []
        served, cards = state.served, state.cards
        here = self._moves_here.get((served, cards))
        if here is None:
            here = self._moves_here[(served, cards)] = {}
        previous = None
        for cube in state.cubes:
            if cube == previous:  # identical cubes (sorted, so side by side) move alike
                continue
            previous = cube
            moves = here.get(cube)
            if moves is None:
                matters = self._matters.get(cube)
                key = (cube, served & (self.matters(cube) if matters is None else matters), cards)
                moves = self._moves.get(key)
                if moves is None:
                    moves = self._moves[key] = self.reach(cube, served).moves(self.player, cards)
                here[cube] = moves
            if step is FREE or step == cube:
                out.extend(moves)
            elif closing:
                out.extend(m for m in moves if m.to_kind != "city")
        out.sort(key=_income, reverse=True)  # stable: ties keep the cubes' order
        return out

    def _closing_worth(self, state: State, actions: int, cut: int) -> bool:
        """Whether closing relays alone might earn more than ``cut``."""
        return self.relaxed is None or self.relaxed.relays_bound(self.with_firsts(state), actions) > cut

    def value(self, state: State, actions: int, floor: int, step: Step = FREE) -> tuple[int, bool]:
        """(v, True) where the best plan in chain order of ``actions`` more
        transports from ``state`` at ``step`` earns v > ``floor``; else (u,
        False) with that best at most u <= floor.

        The floor rises to what the plan must earn to beat the best plan
        found; an improvement found below this state is this state's own
        exact value, so the floor need not rise again while searching it."""
        if actions == 0 or not state.cubes:
            return 0, True
        key = (state, actions, step)
        cut = max(floor, self.best_income - self._path_income)
        known = self.memo.get(key)
        if known is not None and (known.exact or known.value <= cut):
            return known.value, known.exact
        if known is None:
            bound = self.bound(state, actions, step)
            if bound <= cut:
                self.memo[key] = self.at_most(bound)
                return bound, False
        self.expanded += 1
        if self.expanded % CLOCK_EVERY == 0 and self.clock.out_of_time():
            raise OutOfTime
        best_value, best = 0, NOTHING
        near = Neighbourhood(self, state)
        self._expanding.append(near)
        memo = self.memo
        left = actions - 1
        most = left * self.top
        # what the moves after any delivery, and after any relay, earn at most, once asked for;
        # moves come most paying first and the threshold (what a move must beat: the floor, or
        # the best found here) only rises, so once a delivery fails its bound every later one
        # does too (``deliveries`` turns False), and so for relays, and for relays of one colour
        threshold = cut if cut > 0 else 0
        stop = threshold - most  # a move paying no more is not looked at, nor any after it
        delivered: int | None = None
        relayed: int | None = None
        deliveries = relays = True
        relays_of: dict[str, int] = {}  # the bound after a relay of a cube, per colour
        relays_to: dict[Step, int] = {}  # the bound after a relay, per step it leads to
        closing = step is FREE or self._closing_worth(state, actions, cut)  # (all moves are open at FREE)
        for move in self.moves(state, step, closing):
            income = move.income
            if income <= stop:
                break
            if move.to_kind == "city":
                if not deliveries:
                    continue
                after = near.delivered(left) if delivered is None else delivered
                if self.relaxed is not None:  # kept once the relaxed bound is built (it may be built below)
                    delivered = after
                if income + after <= threshold:
                    deliveries = False
                    if not relays:
                        break
                    continue
                onward = FREE
            else:
                color = move.cube[1]
                after = relays_of.get(color)
                if after is None:  # the first relay of its colour: first the bound after any relay
                    if not relays:
                        continue
                    after = near.any_relayed(left) if relayed is None else relayed
                    if self.relaxed is not None:
                        relayed = after
                    if income + after <= threshold:
                        relays = False
                        if not deliveries:
                            break
                        continue
                    after = near.relayed_of(color, left)  # at most the bound after any relay
                    if self.relaxed is not None:
                        relays_of[color] = after
                if income + after <= threshold:
                    if not deliveries and relayed is not None and income + relayed <= threshold:
                        break  # nor does any later relay get past the bound after any relay
                    continue
                onward = _next_step(step, move)
                shared = relays_to.get(onward)
                after = near.relayed_to(onward, left) if shared is None else shared
                if self.relaxed is not None:
                    relays_to[onward] = after
                if income + after <= threshold:
                    continue
            following = self.after(state, move)
            if not left or not following.cubes:
                rest, exact = 0, True
            else:
                below = (following, left, onward)
                floor = threshold - income
                seen = memo.get(below)
                if seen is not None and (seen.exact or seen.value <= floor):
                    rest, exact = seen.value, seen.exact
                elif seen is None and (rest := self.bound(following, left, onward)) <= floor:
                    memo[below] = self.at_most(rest)
                    exact = False
                else:
                    self._path.append((move, state))
                    self._path_income += income
                    rest, exact = self.value(following, left, floor, onward)
                    self._path_income -= income
                    self._path.pop()
            if exact and income + rest > best_value:
                best_value = income + rest
                best = Entry(best_value, True, move, (following, onward))
                if best_value > threshold:
                    threshold = best_value
                    stop = threshold - most
        self._expanding.pop()
        if best.value <= cut:
            self.memo[key] = self.at_most(cut if known is None else min(cut, known.value))
            return self.memo[key].value, False
        self.memo[key] = best
        self._offer(key)
        return best.value, True

    def at_most(self, value: int) -> Entry:
        """The entry of a state whose best plan earns at most ``value`` (one
        per value: most states searched get one)."""
        entry = self._at_most.get(value)
        if entry is None:
            entry = self._at_most[value] = Entry(value, False)
        return entry

    def _offer(self, key: tuple[State, int, Step]) -> None:
        """A best plan from ``key`` after the current path: the incumbent if it pays more."""
        total = self._path_income + self.memo[key].value
        if total > self.best_income:
            self.best_income = total
            self.best_plan = list(self._path) + self.plan_from(*key)

    def plan_from(self, state: State, actions: int, step: Step = FREE) -> list[tuple[Move, State]]:
        """The best plan from a state of exact value: each transport with the state it starts from."""
        out = []
        entry = self.memo.get((state, actions, step))
        while entry is not None and entry.move is not None and entry.after is not None:
            out.append((entry.move, state))
            (state, step), actions = entry.after, actions - 1
            entry = self.memo.get((state, actions, step))
        return out

    def to_json(self, move: Move, state: State) -> dict:
        cells = self.reach(move.cube, state.served).walks[(move.to, move.distance)]
        return transport_json(
            self.walks.position,
            move.cube,
            cells,
            move.to,
            move.to_kind,
            move.card,
            move.income,
        )


def solve_plan(position: Position, limits: Limits) -> dict:
    """The answer of the 18XS module docstring (:mod:`routecalc.rules.xs`).

    Where the player holds bid cards, the plan without them is searched
    first, within ``SEED_LOOKS`` looks at the clock (a count of work): it is
    a plan with them too, and a search the time limit stops answers at least
    that. On a 12 x 12 board of open trails (level 8, 8 actions, two
    double-distance cards) the walks of 16 cells took every second of a 30 s
    limit and the answer was one transport (18, bound 144), where the plan
    without cards (80) takes 0.3 s."""
    clock = Clock(limits.time_limit, limits.progress)
    me = player(position)
    if not any(me.cards):
        return _answer(position, clock)
    plain = replace(position, options={**position.options, "player": replace(me, cards=(0, 0))})
    seed = _answer(plain, _Budget(clock, SEED_LOOKS))
    out = _answer(position, clock)
    if seed["revenue"] > out["revenue"]:
        out.update(revenue=seed["revenue"], plan=seed["plan"], bound=max(out["bound"], seed["revenue"]))
    single = seed["best_transport"]
    if single and (out["best_transport"] is None or single["income"] > out["best_transport"]["income"]):
        out["best_transport"] = single
    return out


class _Budget(Clock):
    """A clock that also runs out after ``looks`` looks at it (each after a
    fixed count of walk steps or states): a search's budget of work."""

    def __init__(self, clock: Clock, looks: int):
        super().__init__(clock.time_limit, None)
        self.started = clock.started
        self.looks = looks

    def out_of_time(self, share: float = 1.0) -> bool:
        self.looks -= 1
        return self.looks < 0 or super().out_of_time(share)


def _answer(position: Position, clock: Clock) -> dict:
    search = PlanSearch(position, clock)
    actions = search.player.actions
    status = "optimal"
    single: tuple[Move, State] | None = None
    try:
        moves = search.moves(search.start)
        single = (moves[0], search.start) if moves else None
        search.value(search.start, actions, -1)
    except OutOfTime:
        status = "feasible"
    plan = search.best_plan
    if status == "feasible":
        if single is None:  # the walks as far as they went
            salvage = search.walks.moves(TurnState.initial(position), cached_only=True)
            single = (salvage[0], search.start) if salvage else None
        if single is not None and actions and single[0].income > search.best_income:
            plan = [single]
    revenue = sum(move.income for move, _ in plan)
    bound = revenue if status == "optimal" else max(revenue, search.start_bound)
    return {
        "game": "18XS",
        "revenue": revenue,
        "status": status,
        "bound": bound,
        "best_transport": search.to_json(*single) if single else None,
        "plan": [search.to_json(move, state) for move, state in plan],
        "actions": actions,
        "solver": "18XS",
        "stats": {
            "walk_steps": search.walks.steps + (search.table.steps if search.table else search.table_steps),
            "states": len(search.memo),
            "expanded": search.expanded,
            "seconds": clock.seconds(),
        },
    }
