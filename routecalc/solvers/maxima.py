"""Single-train maxima: the best route of one train alone on the board, by
branch and bound where listing every route explodes.

The enumeration kernel with a rising floor (:class:`~routecalc.kernels.
enumeration.Prune`) keeps only routes that beat the best so far and leaves
a route unextended once the block-cut bound of :mod:`routecalc.kernels.
longest` says no route through it can. It starts from a known route's
revenue (the best one a budgeted enumeration listed) and tries the richest
neighbour first, so that good routes come early and the bound cuts more.
The work is counted in kernel steps (routes extended); the clock only stops
the search, and then the maximum is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..graph import TrackGraph
from ..kernels import enumeration as enum
from ..kernels.longest import track_points
from ..kernels.payment import VISIT, PayTable
from ..routes import Route
from ..scoring import TrainTable, pay_table
from .fast import Clock, TrainRoutes, enumerate_train, graph_arrays, listed_routes

#: Threshold bounds computed per route at most (each is one more sum per
#: point). The bound is convex and piecewise linear in theta, bent at the
#: stop weights, so its least value is at one of them; 18xx stop values take
#: few distinct values, all tried. Six spread over the range missed it:
#: stress-express's 8E unproven in 940,000 steps, with all 85,589.
MOST_THRESHOLDS = 16


@dataclass
class Paused:
    """A search for one train's best route that a limit stopped, to run on
    from there (its steps are not taken again)."""

    arrays: enum.GraphArrays
    prices: PayTable
    prune: enum.Prune
    found: TrainRoutes | None = None  # with the search's state, once it has run


@dataclass
class Maximum:
    """What the search for one train's best route found."""

    revenue: int | None  # the train's best route earns this (None: the search did not finish)
    route: Route | None  # a route earning more than the known one, if any
    steps: int  # kernel steps (routes extended, each bounded) of this call
    cut: int  # routes left unextended by the bound, in this call
    paused: Paused | None  # the search, when it did not finish


def richest_first(arrays: enum.GraphArrays, weight: np.ndarray) -> enum.GraphArrays:
    """The same graph with each stop's connections ordered by the weight of
    the stop they lead to, heaviest first (the search tries those first)."""
    stop_of_entry = np.repeat(np.arange(len(arrays.adj_start) - 1), np.diff(arrays.adj_start))
    order = np.lexsort((-weight[arrays.adj_other], stop_of_entry))  # by stop, then heaviest; stable
    return arrays._replace(
        adj_conn=arrays.adj_conn[order].copy(),
        adj_other=arrays.adj_other[order].copy(),
    )


def paid_weights(prices: PayTable) -> np.ndarray:
    """The distinct positive weights of the stops the train may visit, rising."""
    return np.unique(prices.weight[(prices.group >= 0) & (prices.weight > 0)])


def thresholds(prices: PayTable) -> np.ndarray:
    """The values theta the bound tries (:mod:`routecalc.kernels.longest`):
    the stop weights the train may be paid, at most ``MOST_THRESHOLDS`` of
    them spread over their range (any set gives a true bound); 0 alone when
    it has a pay slot for every stop or is paid for every stop it visits
    (there the bound at 0 is a chain's stops summed, with a connect bonus
    not earned yet counted only down chains to a stop it needs)."""
    if prices.every or prices.pay.sum() >= len(prices.weight):
        return np.zeros(1, np.int64)  # every stop pays (a diesel): theta above 0 never bounds lower
    values = paid_weights(prices)
    if len(values) > MOST_THRESHOLDS:
        values = values[np.linspace(0, len(values) - 1, MOST_THRESHOLDS).astype(np.int64)]
    return values.astype(np.int64)


def visit_prices(prices: PayTable, visit: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (theta, lambda) the bound tries: each theta of ``values``
    alone, and where a distance group's visits run out before its pay slots
    (an 1867 8 visits eight cities and offboards and passes towns free) the
    least theta with a price lambda on each visit left there, theta +
    lambda each other value (see :mod:`routecalc.kernels.longest`; any
    pair gives a true bound). The least theta leaves out the cheap stops
    that fill the slots (1867's towns), lambda all but the best stops the
    visits left can take; other thetas with a price took more time a step
    and no fewer steps (stress-1867-towns' 5, stress-1867-express-8's 8)."""
    fill = prices.pay[0] if prices.fill else 0
    can_pay = prices.pay + np.where(np.arange(len(prices.pay)) == 0, 0, fill)
    thetas, lambdas = [int(v) for v in values], [0] * len(values)
    if len(values) and (visit <= can_pay).any():
        thetas += [int(values[0])] * (len(values) - 1)
        lambdas += [int(v - values[0]) for v in values[1:]]
    return np.array(thetas, np.int64), np.array(lambdas, np.int64)


def lists_needed(prices: PayTable, values: np.ndarray) -> bool:
    """Whether the bound needs its per-group lists beside the threshold
    bounds at ``values``: unless those are every weight the train may be
    paid, it has no ``fill`` and no connect bonus (whose threshold part,
    counted down the chains that reach a stop it needs, may count a chain
    twice: a random board took 8 steps without the lists, 7 with them).
    See :mod:`routecalc.kernels.longest`."""
    if prices.fill or (prices.bonus_kind != VISIT).any():
        return True
    return not np.isin(paid_weights(prices), values).all()


def track_of(graph: TrackGraph, *routes: Route) -> np.ndarray:
    """The track pieces some routes use, as mask words (a row of ``conn_mask``)."""
    conns = np.asarray([c for route in routes for c in route.conns], dtype=np.int64)
    return np.bitwise_or.reduce(graph.conn_mask[conns], axis=0)


def track_left(graph: TrackGraph, taken: np.ndarray) -> TrackGraph:
    """The board with every connection that uses a piece of ``taken`` (mask
    words) given no gauge, so that no train's route can use it."""
    clash = (graph.conn_mask & taken).any(axis=1)
    return replace(graph, conn_gauge=np.where(clash, 0, graph.conn_gauge))


def single_train_maximum(
    graph: TrackGraph,
    t: int,
    table: TrainTable,
    known: int,
    clock: Clock,
    step_limit: int | None,
    paused: Paused | None = None,
    taken: np.ndarray | None = None,
) -> Maximum:
    """The best revenue of train ``t`` (``table``) alone, when some route of
    it is known to earn ``known``: a search for a route earning more, within
    ``step_limit`` more kernel steps and the clock's time limit, run on from
    ``paused`` if given (the floor raised to beat ``known``), on the track
    ``taken`` (mask words) leaves if given. Past the time limit it searches
    nothing: on a board of thousands of cells the bound's graph of the track
    left alone takes a tenth of a second or more, and auto's searches for a
    better first set would each build one after the limit."""
    if clock.out_of_time():
        return Maximum(None, None, 0, 0, paused)
    if paused is None:
        left = graph if taken is None else track_left(graph, taken)
        prices = pay_table(table, graph, graph.position.rules.bonuses(graph.position))
        arrays = richest_first(graph_arrays(left), prices.weight)
        points = track_points(left, int(table.gauge_bit))
        values = thresholds(prices)
        thetas, lambdas = visit_prices(prices, table.visit.astype(np.int64), values)
        prune = enum.new_prune(len(table.pay), 1, points, thetas, lists_needed(prices, values), lambdas)
        paused = Paused(arrays, prices, prune)
    paused.prune.floor[0] = max(int(paused.prune.floor[0]), max(known, 0) + 1)
    steps = paused.found.steps if paused.found else 0
    cut = int(paused.prune.cut[0])
    limit = None if step_limit is None else steps + step_limit
    found = enumerate_train(
        graph, paused.arrays, table, paused.prices, None, clock, (0.0, 0.0), limit, paused.prune, paused.found
    )
    paused.found = found
    route = None
    if len(found.revenue) and found.revenue[0] > known:  # found by this call or an earlier one
        route = listed_routes([(t, 0)], [found] * (t + 1), graph)[0]  # train t's routes are ``found``
    revenue = None
    if found.complete:
        revenue = max(known, route.revenue) if route else known
    cut = int(paused.prune.cut[0]) - cut
    return Maximum(revenue, route, found.steps - steps, cut, None if found.complete else paused)
