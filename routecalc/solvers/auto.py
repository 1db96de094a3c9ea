"""Automatic choice: the fast solver while enumeration is affordable, CP-SAT
where it explodes.

Every choice is made on counts of work, never on the clock, so the same
position with the same limits takes the same path on an idle machine and on
a loaded one; the time limit only stops a search (the answer is then the
best found, ``status: feasible``, with a true bound).

The enumeration size is found out by trying: the fast solver's enumeration
kernel lists each train's routes within a budget of routes kept per train
(``ROUTE_BUDGET``) and kernel steps for all trains (``ENUMERATION_STEPS``).
A train's listing that projects many times its share of the steps, judged
from its search stack after its first steps (:func:`.fast.share_done`),
stops there as out of its budget: an exploding board is known by 60,000
steps, where the whole budget cost 0.4-0.8 s.

- Finished within it: the fast solver's combination search runs on those
  routes within ``COMBINATION_WORK`` units of its work, and its answer is
  returned when the search finishes. If it stalls, the routes are packed
  with CP-SAT instead (:mod:`.packing`), when the packing's limits take
  every route that could beat the greedy set; when they do not, a cut
  packing would answer short of the optimum (950 with a bound of 1210,
  where CP-SAT's path model proves 1060 in 0.3 s), so CP-SAT's path model
  runs as below, each train's maximum its listing's best.
- Stopped by the time limit before the budget: the clock only stops a
  search, so the answer is the fast solver's, the best set of the routes
  listed so far, ``feasible`` with a true bound.
- Stopped by the budget (long trains on a big board: diesels, express
  trains, 1867 trains that pass towns for free): what was listed is kept,
  and the trains after the first to run out are not enumerated.
  The combination search picks the best set of the listed routes (within
  ``SEED_WORK``). Each kind of train whose enumeration did not finish
  is searched alone by branch and bound (:mod:`.maxima`, within
  ``MAXIMUM_STEPS`` kernel steps, from the best route listed), which
  proves in milliseconds most maxima CP-SAT takes a fraction of a second
  or seconds over (stress-1828-d-8e's D and 8E, stress-express's 8E and
  6E); where that does not prove it, by CP-SAT alone within
  ``SINGLE_WORK`` (deterministic time), its bound then demanded within as
  much again. Once every maximum is proven, each train's best route in
  turn, with a route of each other train earning its maximum on the track
  left (by branch and bound), may earn them all, and is then optimal at
  once. Otherwise the richest route leads a first set, each other train
  taking its best route on the track left (by branch and bound, where
  CP-SAT's searches of the track left took 0.04-0.17 s), and track is
  exchanged between the leader and each other train (:func:`_exchanged`,
  within ``EXCHANGED_STEPS``): stress-express's 1020 becomes its optimum
  1040, which CP-SAT then only proves. Then each train in turn takes its
  best route on the track the others' routes leave, while one gains
  (:func:`_best_responses`, within ``RESPONSES_STEPS``): where more than
  two trains get in each other's way, the exchange with the leader alone
  leaves sets 10-120 short that this raises in a few thousand steps.
  Then CP-SAT, which does not enumerate,
  solves the whole problem seeded with the best set and those routes,
  capped by the single-train maxima or, where one is unproven, CP-SAT's
  bounds, which are first demanded together: those known it does not
  prove again.
  If that does not settle it, the branch and bound gets ``PROOF_STEPS``
  more for each kind still unproven, run on from where ``MAXIMUM_STEPS``
  stopped it, before CP-SAT solves it alone. In the whole model, a train
  whose listing finished (a 4, 5 or 6 beside a diesel) chooses among its
  listed routes instead of running a path, within ``CHOICE_ROUTES``
  routes in all: such a choice's relaxation is exact for that train, a
  path's with a stop limit is not.

The answer's ``solver`` names the solver that produced it and
``stats["auto"]`` says why that one ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ..graph import TOKEN, TrackGraph
from ..model import Position
from ..routes import Route, answer
from ..rules import require_route_engine
from ..scoring import TrainTable, train_tables
from .fast import ENUMERATION_SHARE, Clock, TrainRoutes, combine_company, enumerate_company, listed_routes
from .maxima import Paused, single_train_maximum, track_of
from .packing import greedy_choice, pack_routes, packs_whole

#: Routes kept per train, and enumeration kernel steps (routes extended) for
#: all trains, that enumeration may take before auto calls the position too
#: big for the fast solver: some 0.3-0.5 s of one core, six times what the
#: largest corpus position takes (84,000 steps).
ROUTE_BUDGET = 1_000_000
ENUMERATION_STEPS = 500_000
#: Units of the combination kernel's work (words of track compared) before
#: auto packs the routes with CP-SAT instead: some 1-2 s of one core.
COMBINATION_WORK = 200_000_000
#: The same, for the best set of the routes an unfinished enumeration listed
#: (a seed for CP-SAT, not a proof).
SEED_WORK = 10_000_000
#: Enumeration kernel steps (routes extended, each bounded) the branch and
#: bound may take for one kind of train's single-train maximum before CP-SAT
#: solves it alone: some 0.03-0.2 s of one core (stress-1828-d-8e's D takes
#: 6,252, its 8E 326, stress-express's 8E and 6E some 300 each, where
#: CP-SAT's tries took 0.4 and 0.25 s; stress-1867-two-d's D, 880,000).
MAXIMUM_STEPS = 10_000
#: The same, once demanding the caps together has not settled the answer,
#: before CP-SAT solves the train alone: some 2.5-5 s of one core, less than
#: CP-SAT takes where its short try did not prove the maximum
#: (stress-1828-d-8e's 8E took 170,900 steps, 2.5 s, where CP-SAT takes 6 s,
#: before the bound paired no two chains ending at one offboard).
#: Asked only then, since it would cost stress-1867-express-8, whose trains
#: it does not prove in 400,000 steps but whose caps are earned together,
#: 7 s more.
PROOF_STEPS = 250_000
#: CP-SAT deterministic time (about seconds of one idle core) for all the
#: kinds of trains the branch and bound did not prove within
#: ``MAXIMUM_STEPS``, solved alone, and again for demanding each one's
#: bound where that search stopped short of it: stress-1867-two-d's D is
#: proven within it, stress-1867-express-8's 8 is bounded (560) and its
#: route found by the demand. At 0.25 the 8 took 0.1 s more for the same.
SINGLE_WORK = 0.15
#: Kernel steps each branch and bound of :func:`_exchanged` may take, and
#: all of them, each search charged ``SEARCH_STEPS`` more for building its
#: bound's graph of the track left (1-3 ms, what 200-500 steps take): some
#: 0.05-0.1 s of one core. stress-express's exchange finds its optimum 1040
#: from the first set's 1020 in 24 searches, 2,351 steps (8,351 charged,
#: 0.065 s), where the whole model took some 0.4 s to find it (auto's whole
#: answer over twelve CP-SAT seeds: median 1.31 -> 0.74 s of CPU).
EXCHANGE_STEPS = 500
EXCHANGED_STEPS = 10_000
SEARCH_STEPS = 250
#: Kernel steps each branch and bound of :func:`_best_responses` may take,
#: and all of them (each search charged ``SEARCH_STEPS`` more): on boards
#: made from the corpus with long trains and more track, the responses
#: raised 19 of 170 sets handed to CP-SAT by 10-120 (a dense 1830 board
#: with 4, 5, 6 and D: 1170 -> 1240, optimum 1300, which CP-SAT's whole
#: model found only after 16 s) within 8,000 steps, 0.04 s.
RESPONSE_STEPS = 2_000
RESPONSES_STEPS = 10_000
#: Listed routes at most (each train of a kind counted) among which trains
#: whose listing finished choose in CP-SAT's whole model (a literal a
#: route). Boards made from the corpus with more track and a 4, 5, 6 and D
#: (or 5, 6, D; 4, 4, 6, D), 10 s limit, CPU summed: the 85 of 200 that
#: reached CP-SAT 163.5 s with no train listed -> 63.2 s with 2,500 routes
#: (67.6 s with 5,000, 83.4 s with 20,000), the four not proven within the
#: limit all proven; 200 more drawn afterwards to check, 222.6 -> 82.8 s
#: (88.5 s with 5,000), six unproven -> none, over 3 s 25 -> 4; the 67
#: dense boards of two long trains 73.8 -> 64.5 s. Past some thousands of
#: routes the model's size costs more than its relaxation saves (a 4, 5 and
#: 6 of 12,000 routes: 1.7 -> 6.3 s).
CHOICE_ROUTES = 2_500
#: CP-SAT deterministic time for each demand of the caps together, less than
#: the cpsat solver's ``TOGETHER_WORK`` (2.0): auto has looked for a set
#: earning the maxima by branch and bound first (stress-1867-express-8's,
#: which CP-SAT's demand finds in 0.6-0.75), and where the demand runs out
#: of work it was spent for nothing. On 33 slow boards made from the corpus
#: with long trains and more track, the whole answers' CPU summed went from
#: 91.2-95.8 s (three runs) to 89.2 s, no board more than 0.11 s slower than
#: its slowest run before (an 18Ireland board with two 10H: 4.0 -> 2.3 s, a
#: dense 1867 board with an 8 and a 5+5E: 7.3 -> 5.7 s); the stress
#: positions' demands answer within it, their CPU unchanged. With the best
#: responses too: 86.6 s, one board 1.85 s slower (a D and an 8E, whose
#: whole model starts from the responses' 1120, not 1110).
TOGETHER_WORK = 0.5


def _left(time_limit: float | None, started: float) -> float | None:
    return None if time_limit is None else max(0.01, time_limit - (time.perf_counter() - started))


def _chosen(
    graph: TrackGraph, tables: list[TrainTable], routes: list[Route], started: float, solver: str, why: str, **fields
) -> dict:
    """The answer of the solver auto chose, its ``stats["auto"]`` saying why."""
    out = answer(graph, tables, routes, started, solver=solver, **fields)
    out["stats"]["auto"] = {"solver": solver, "why": why}
    return out


def solve_auto(
    position: Position,
    graph: TrackGraph,
    *,
    time_limit: float | None = None,
    route_limit: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict:
    """The fast solver within the enumeration budget, else CP-SAT."""
    require_route_engine(position.rules)
    started = time.perf_counter()
    tables = train_tables(graph)
    budget = ROUTE_BUDGET if route_limit is None else min(ROUTE_BUDGET, route_limit)
    # the clock stops the enumeration at ENUMERATION_SHARE of the limit; the budget decides the path
    listed = enumerate_company(graph, tables, budget, Clock(time_limit, progress), ENUMERATION_STEPS)
    distinct = {id(found): found for found in listed}.values()
    count = sum(found.enumerated for found in distinct)
    steps = sum(found.steps for found in distinct)
    limits = f"{budget:,} routes per train, {ENUMERATION_STEPS:,} steps"
    work = f"{COMBINATION_WORK:,} units of work"
    complete = all(found.complete for found in listed)
    routes, bound, stats = combine_company(
        graph, tables, listed, Clock(_left(time_limit, started), progress), COMBINATION_WORK if complete else SEED_WORK
    )

    revenue = sum(r.revenue for r in routes)
    if complete and bound == revenue:
        why = (
            f"enumeration finished within the budget ({limits}): {count:,} routes in "
            f"{steps:,} steps, combined within {work}"
        )
        if not (graph.flags & TOKEN).any():  # most likely a misspelt company: say so
            why = f"no stop holds a token of {position.company}, so no train can run"
        return _chosen(graph, tables, routes, started, "fast", why, **stats)
    stalled = stats.get("combination_work", COMBINATION_WORK) >= COMBINATION_WORK
    if (complete and not stalled) or not (complete or any(found.out_of_work for found in listed)):
        why = (
            f"the time limit stopped the fast solver within its work budget ({limits}, {work}) "
            f"after {count:,} routes: the best set of the routes listed, with a true bound"
        )
        return _chosen(graph, tables, routes, started, "fast", why, bound=bound, **stats)
    size_for = None if time_limit is None else time_limit * (1 - ENUMERATION_SHARE)  # not the time left
    if complete and packs_whole(listed, size_for):
        status, routes, bound, packed = pack_routes(listed, graph, _left(time_limit, started), size_for)
        why = (
            f"enumeration finished ({count:,} routes) but the fast combination search did not "
            f"within {work}: the routes packed with CP-SAT"
        )
        return _chosen(graph, tables, routes, started, "packing", why, status=status, bound=bound, **packed)
    if complete:
        before = (
            f"enumeration finished ({count:,} routes) but the fast combination search did not within {work}, "
            f"and packing them all would take more routes or track pieces than its limits"
        )
    else:
        before = f"enumeration stopped at the budget ({limits}) after {count:,} routes"

    from .cpsat import solve_cpsat  # OR-Tools only when CP-SAT runs

    greedy = listed_routes(greedy_choice(listed), listed, graph)
    if sum(r.revenue for r in greedy) > sum(r.revenue for r in routes):
        routes = greedy  # the combination search stopped before it reached the greedy set
    clock = Clock(_left(time_limit, started), progress)
    paused: dict[str, Paused] = {}  # by kind, the searches MAXIMUM_STEPS stopped, run on by PROOF_STEPS
    maxima, caps, best, searched = _maxima(graph, tables, listed, clock, paused)
    ceiling = sum(caps.values())
    if len(maxima) == len(listed) and ceiling > sum(r.revenue for r in routes):
        routes = _maxima_reached(graph, listed, caps, best, clock) or routes
    first_set = False
    if ceiling > sum(r.revenue for r in routes) and best:
        first, finished = _first_set(graph, listed, caps, best, clock)
        if sum(r.revenue for r in first) >= sum(r.revenue for r in routes):
            routes, first_set = first, finished
    if ceiling > sum(r.revenue for r in routes) and len(listed) > 1 and best:
        better = _exchanged(graph, listed, caps, best, routes, clock)
        if sum(r.revenue for r in better) > sum(r.revenue for r in routes):
            routes, first_set = better, True
    if ceiling > sum(r.revenue for r in routes) and len(listed) > 1:
        better = _best_responses(graph, listed, caps, routes, clock)
        if sum(r.revenue for r in better) > sum(r.revenue for r in routes):
            routes, first_set = better, True

    def prove(trains: list[int]) -> tuple[dict[int, int], list[Route]]:
        known = {r.train: r for r in best}
        proven = _branch_and_bound(graph, listed, trains, known, searched, clock, PROOF_STEPS, paused)
        return proven, [known[t] for t in trains if t in known]

    choices = _choices(listed)
    result = solve_cpsat(
        position,
        graph,
        time_limit=_left(time_limit, started),
        progress=progress,
        hint=routes,
        known_maxima=maxima,
        known_caps=caps,
        known_routes=best,
        prove_maxima=prove,
        first_set=first_set,
        together_work=TOGETHER_WORK,
        listed=choices,
    )
    result["stats"]["auto"] = {
        "solver": "cpsat",
        "why": (
            f"{before}: CP-SAT, seeded with {sum(r.revenue for r in routes)}, at most {ceiling} by the "
            f"single-train maxima"
        ),
        "maxima": searched,
        "listed_in_whole_model": result["stats"].pop("listed_routes", {}),  # none where an earlier step answered
    }
    result["stats"]["seconds"] = round(time.perf_counter() - started, 4)
    return result


def _maxima(
    graph: TrackGraph, tables: list[TrainTable], listed: list[TrainRoutes], clock: Clock, paused: dict[str, Paused]
) -> tuple[dict[int, int], int, list[Route], dict]:
    """The single-train maxima known before the whole model: each finished
    enumeration's; each other kind of train's by branch and bound within
    ``MAXIMUM_STEPS`` from the best route listed, and where that does not
    prove it, by CP-SAT alone within ``SINGLE_WORK`` (a search, then its
    bound demanded). Returns them by
    train, the sum of every train's maximum or upper bound, the best
    routes found (a train's each), and what was done per kind (the branch
    and bound's steps and maximum, None unknown; CP-SAT's bound and the best
    revenue known after it). A kind neither proves is searched again by the
    branch and bound (``PROOF_STEPS``, from where it stopped) or solved
    alone inside :func:`.cpsat.solve_cpsat`, from scratch: CP-SAT does not
    resume a search."""
    from .cpsat import single_train_maxima  # OR-Tools only when CP-SAT runs

    maxima = {t: found.upper for t, found in enumerate(listed) if found.complete}
    unproven = [t for t in range(len(listed)) if t not in maxima]
    searched: dict = {_kind_name(listed, t): {} for t in unproven}
    best: dict[int, Route] = {
        t: listed_routes([(t, 0)], listed, graph)[0]  # rows come best first
        for t in maxima
        if t == _kind(listed, t)[0] and len(listed[t].revenue)
    }
    maxima.update(_branch_and_bound(graph, listed, unproven, best, searched, clock, MAXIMUM_STEPS, paused))
    left = None if clock.time_limit is None else clock.started + clock.time_limit
    bounds, routes = single_train_maxima(graph, tables, SINGLE_WORK, maxima, left, list(best.values()))
    for route in routes:
        if route.train not in best or route.revenue > best[route.train].revenue:
            best[route.train] = route
    for t in unproven:
        name = _kind_name(listed, t)
        if t in maxima or "cpsat_bound" in searched[name]:
            continue
        known = _known(listed, t, best)
        searched[name].update(cpsat_bound=bounds[t], cpsat_route=known)
        if known >= bounds[t]:
            maxima.update({i: known for i in _kind(listed, t)})
    caps = {t: maxima.get(t, min(found.upper, bounds[t])) for t, found in enumerate(listed)}
    return maxima, caps, list(best.values()), searched


def _maxima_reached(
    graph: TrackGraph, listed: list[TrainRoutes], caps: dict[int, int], best: list[Route], clock: Clock
) -> list[Route]:
    """A route set in which every train earns its proven maximum (``caps``),
    so optimal at once, or none found: each best route known that earns its
    train's maximum leads in turn (the richest first), and each other train
    (by falling cap) takes a route earning its maximum on the track left,
    found by branch and bound within ``MAXIMUM_STEPS`` with its floor at
    that maximum, which cuts a train that cannot within a few steps
    (stress-1867-express-8: the 5+5E's 820 leaves the 8 at most 540; the
    8's 560, found by a CP-SAT demand, leaves room for a 5+5E route of
    820). Asked only once every maximum is proven: where the maxima took a
    few hundred steps this takes as few, where CP-SAT's first set took a
    tenth of a second a train (stress-1828-d-8e's 8E). The searches
    share ``MAXIMUM_STEPS`` for each train but one, what
    one leader's may take: a leader whose set fails is mostly cut within a
    few steps."""
    left = MAXIMUM_STEPS * (len(listed) - 1)
    for leader in sorted(best, key=lambda r: -r.revenue):
        if leader.revenue < caps[leader.train]:
            continue
        chosen, left, _ = _led_by(graph, listed, leader, caps, lambda t: caps[t] - 1, clock, left)
        if len(chosen) == len(listed):
            return chosen
        if left <= 0:
            return []
    return []


def _first_set(
    graph: TrackGraph, listed: list[TrainRoutes], caps: dict[int, int], best: list[Route], clock: Clock
) -> tuple[list[Route], bool]:
    """The richest best route known, then each other train's (by falling
    cap) best route on the track left, by branch and bound within
    ``MAXIMUM_STEPS`` in all; and whether every search finished, so that
    the set is CP-SAT's own first set (:func:`.cpsat.one_by_one`), found
    by a few hundred kernel steps where CP-SAT's searches of the track left
    took 0.04-0.17 s (stress-1867-two-d, stress-express). The route found
    may not be the one CP-SAT would find, and the whole model seeded with
    it takes another path: over 24 CP-SAT seeds, the whole answer's mean
    CPU went 2.46 -> 2.30 s on two-d, 1.46 -> 1.43 s on express (at the
    default seed 1.37 -> 2.59 s: the spread between seeds is threefold)."""
    leader = max(best, key=lambda r: r.revenue)
    chosen, _, finished = _led_by(graph, listed, leader, caps, lambda t: 0, clock, MAXIMUM_STEPS)
    return chosen, finished


def _led_by(
    graph: TrackGraph,
    listed: list[TrainRoutes],
    leader: Route,
    caps: dict[int, int],
    known: Callable[[int], int],
    clock: Clock,
    left: int,
) -> tuple[list[Route], int, bool]:
    """The ``leader``, then each other train (by falling cap) its best route
    on the track left that earns more than ``known(train)``, by branch and
    bound within ``left`` steps in all: (the routes found, up to the first
    train that finds none; the steps left; whether each train's search
    finished with a route, so that each is the best on the track left)."""
    chosen, taken, finished = [leader], track_of(graph, leader), True
    for t in sorted((t for t in range(len(listed)) if t != leader.train), key=lambda t: -caps[t]):
        if left <= 0:
            return chosen, left, False
        found = single_train_maximum(graph, t, listed[t].table, known(t), clock, min(MAXIMUM_STEPS, left), taken=taken)
        left -= found.steps
        if found.route is None:
            return chosen, left, False
        finished &= found.revenue is not None
        chosen.append(found.route)
        taken |= track_of(graph, found.route)
    return chosen, left, finished


def _ends(graph: TrackGraph, route: Route) -> list[tuple[int, np.ndarray]]:
    """The track of the route's first k connections from each of its ends,
    shortest first (k, then the end the route starts at), the whole route
    last: (end, pieces)."""
    conns = list(route.conns)
    ends = [
        (end, np.bitwise_or.reduce(graph.conn_mask[order[:k]], axis=0))
        for k in range(1, len(conns))
        for end, order in enumerate((conns, conns[::-1]))
    ]
    return [*ends, (0, track_of(graph, route))]


def _exchanged(
    graph: TrackGraph,
    listed: list[TrainRoutes],
    caps: dict[int, int],
    best: list[Route],
    routes: list[Route],
    clock: Clock,
) -> list[Route]:
    """A better set than ``routes`` (the first set: a route a train, some
    perhaps none), or the same, by track exchanged between the first set's leader (the
    richest best route's train) and each other train whose best route
    shares track with the leader's: the follower keeps an end of its best
    route (its first k connections from one end, k rising; at last the
    whole route) from the leader,
    which takes its best route on the track left (the other trains' routes
    in the set taken too), then the follower its best on what the leader
    leaves. The first set gives the leader everything; express's 8E and 6E
    share 80 pieces, their best routes the same start, and the 6E keeping
    off the 8E's first three connections leaves it a 360 beside its 680:
    1040, the optimum, where the first set earns 700 + 320. A follower of
    the leader's kind is left out: on stress-1867-two-d (two D trains) the
    set found (1330, from 1260) made the whole model slower (median over
    twelve CP-SAT seeds 2.35 -> 2.7 s of CPU).

    Each search is a branch and bound with the floor a better set needs
    (the leader more than the total less the follower's cap, the follower
    more than the total less the leader's route), within
    ``EXCHANGE_STEPS``, all of them within ``EXCHANGED_STEPS``, each search
    charged ``SEARCH_STEPS`` more for its bound's graph of the track left.
    Along one end, once the leader's search proves that no route reaches
    its floor, no longer end is tried; while the leader's best route found
    without an end keeps off a longer one, it is the best without that one
    too, and the longer end is skipped."""
    current = {r.train: r for r in routes}
    total = sum(r.revenue for r in routes)
    alone = {
        t: max((r for r in best if r.train in _kind(listed, t)), key=lambda r: r.revenue, default=None)
        for t in range(len(listed))
    }
    leader = max(best, key=lambda r: r.revenue).train
    ahead = track_of(graph, alone[leader])  # the leader's best route's track
    left = EXCHANGED_STEPS
    tried: set[tuple[int, ...]] = set()
    for follower in sorted(alone, key=lambda t: -caps[t]):
        route = alone[follower]
        if route is None or follower in _kind(listed, leader) or not (track_of(graph, route) & ahead).any():
            continue
        others = [current[t] for t in current if t not in (leader, follower)]
        fixed = _track(graph, others)
        last: list[Route | None] = [None, None] if others else [alone[leader]] * 2
        closed = [False, False]
        for end, kept in _ends(graph, route):
            if left <= 0:
                break
            if closed[end] or (last[end] is not None and not (track_of(graph, last[end]) & kept).any()):
                continue
            lead = single_train_maximum(
                graph,
                leader,
                listed[leader].table,
                total - caps[follower],
                clock,
                min(EXCHANGE_STEPS, left),
                taken=fixed | kept,
            )
            left -= lead.steps + SEARCH_STEPS
            last[end] = lead.route if lead.revenue is not None else None
            closed[end] = lead.route is None and lead.revenue is not None  # no route of the leader reaches its floor
            if lead.route is None or tuple(lead.route.conns) in tried:
                continue
            tried.add(tuple(lead.route.conns))
            if left <= 0:
                break
            follow = single_train_maximum(
                graph,
                follower,
                listed[follower].table,
                total - lead.route.revenue,
                clock,
                min(EXCHANGE_STEPS, left),
                taken=fixed | track_of(graph, lead.route),
            )
            left -= follow.steps + SEARCH_STEPS
            if follow.route is not None:
                current.update({leader: lead.route, follower: follow.route})
                total = sum(r.revenue for r in current.values())
    return list(current.values())


def _best_responses(
    graph: TrackGraph, listed: list[TrainRoutes], caps: dict[int, int], routes: list[Route], clock: Clock
) -> list[Route]:
    """A better set than ``routes`` (a route a train, some perhaps none), or
    the same: each train in turn (by falling cap) takes its best route on
    the track the others' routes leave, if it earns more than its own, by
    branch and bound with the floor above its own; rounds until no train
    gains, within ``RESPONSE_STEPS`` a search and ``RESPONSES_STEPS`` in
    all, each search charged ``SEARCH_STEPS`` more. The first set and the
    exchange move the leader; this moves every train, where more than two
    get in each other's way."""
    current = {r.train: r for r in routes}
    left, gained = RESPONSES_STEPS, True
    while gained and left > 0:
        gained = False
        for t in sorted(range(len(listed)), key=lambda t: -caps[t]):
            if left <= 0:
                break
            own = current[t].revenue if t in current else 0
            if own >= caps[t]:
                continue
            taken = _track(graph, [r for u, r in current.items() if u != t])
            found = single_train_maximum(graph, t, listed[t].table, own, clock, min(RESPONSE_STEPS, left), taken=taken)
            left -= found.steps + SEARCH_STEPS
            if found.route is not None:
                current[t], gained = found.route, True
    return list(current.values())


def _choices(listed: list[TrainRoutes]) -> dict[int, TrainRoutes]:
    """The trains whose listing finished, for the whole model to choose
    among their routes, within ``CHOICE_ROUTES`` routes in all (counting
    each train of a kind)."""
    chosen: dict[int, TrainRoutes] = {}
    total = 0
    for t in sorted(range(len(listed)), key=lambda t: len(listed[t].revenue)):
        found = listed[t]
        if found.complete and total + len(found.revenue) <= CHOICE_ROUTES:
            chosen[t] = found
            total += len(found.revenue)
    return chosen


def _track(graph: TrackGraph, routes: list[Route]) -> np.ndarray:
    """The track pieces the routes use, as mask words (none for no routes)."""
    return track_of(graph, *routes) if routes else np.zeros(graph.conn_mask.shape[1], np.uint64)


def _kind(listed: list[TrainRoutes], t: int) -> list[int]:
    """The trains identical to train t (t included)."""
    return [i for i, other in enumerate(listed) if other is listed[t]]


def _kind_name(listed: list[TrainRoutes], t: int) -> str:
    """What train t's kind is remembered and reported by: its name, and where
    a train of another kind has that name too (a train object named like a
    catalogue train), its first train's number."""
    name = listed[t].table.train.name
    if any(found.table.train.name == name and found is not listed[t] for found in listed):
        return f"{name} (train {_kind(listed, t)[0] + 1})"
    return name


def _known(listed: list[TrainRoutes], t: int, best: dict[int, Route]) -> int:
    """The best revenue known for train t's kind: listed, or a route found."""
    found = listed[t]
    return max(
        [int(found.revenue[0]) if len(found.revenue) else 0] + [best[i].revenue for i in _kind(listed, t) if i in best]
    )


def _branch_and_bound(
    graph: TrackGraph,
    listed: list[TrainRoutes],
    trains: list[int],
    best: dict[int, Route],
    searched: dict,
    clock: Clock,
    steps: int,
    paused: dict[str, Paused],
) -> dict[int, int]:
    """The maxima the branch and bound proves, within ``steps`` more kernel
    steps per kind, for the kinds of ``trains`` (by train), each search run
    on from where an earlier call stopped it (``paused``, by kind, updated);
    a better route found goes into ``best``, the steps taken and the maximum
    into ``searched`` (the steps adding up over calls)."""
    maxima: dict[int, int] = {}
    done: set[str] = set()
    for t in trains:
        name = _kind_name(listed, t)
        if name in done or searched[name].get("maximum") is not None:
            continue
        done.add(name)
        known = _known(listed, t, best)
        maximum = single_train_maximum(graph, t, listed[t].table, known, clock, steps, paused.get(name))
        if maximum.paused is not None:
            paused[name] = maximum.paused
        searched[name].update(maximum=maximum.revenue, steps=searched[name].get("steps", 0) + maximum.steps)
        if maximum.route is not None:
            best[t] = maximum.route
        if maximum.revenue is not None:
            maxima.update({i: maximum.revenue for i in _kind(listed, t)})
    return maxima
