"""18Cuba's coupled choice as a CP-SAT model over the listed routes.

For when the branch and bound's bound is loose (many good routes that
overlap, sugar several trains compete for, fees). The model reads like the
sum it maximises:

- a literal per route a train may run, at most one per train, at most one
  route on each track piece;
- wagons: a literal per pool wagon and train without a wagon of its own,
  each wagon to at most one train, each train at most one wagon;
- cubes: an integer per train and mill, at most the mill's supply and zero
  unless the train's chosen route carries from that mill; a train's cubes
  at most its wagon; a mill's cubes at most its supply;
- fees: a literal per FC city, which a route of a train passing it
  requires, unless the train is a ``+`` train ignoring that city (a literal
  per ``+`` train and city, at most one per train);
- revenue + 30 a cube - the fee per paid city (+ the machines when any
  train runs).

Only routes whose potential, with the best potentials of the other trains,
beats the incumbent are modelled: no other route can be in a better choice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable

import numpy as np
from ortools.sat.python import cp_model

from .. import deadline
from ..errors import TimeLimitError
from ..solvers import sat
from .cuba_choice import ChoiceLists

#: Route rows above which no model is built (the seed answers, with the
#: lists' ceiling): CP-SAT loads and presolves a model before it looks at
#: its time limit or a stop, and 193,492 rows (eight trains with wagons on
#: the whole board, fixtures/limits/cuba-eight-wagons.json) took it 7-8 s
#: past a 15 s limit, and found nothing in 30 s. The heavy boards that
#: CP-SAT proves model 3,000-4,000.
MAX_MODELLED_ROUTES = 20_000


class _TooBig(Exception):
    pass


def solve_choice(
    lists: ChoiceLists, seed: list[int], incumbent: int, time_limit: float | None
) -> tuple[list[int], int, dict]:
    """(rows, true upper bound, statistics): the best choice, starting from
    ``seed`` (rows of the lists, -1: none) worth ``incumbent``. Where the
    request's time limit runs out while the model is built (tens of
    thousands of routes per train), the seed and the lists' ceiling."""
    tops = [int(lists.potential[o]) if c else 0 for o, c in zip(lists.offset, lists.count)]
    ceiling = sum(tops) + (lists.machines if lists.count.any() else 0)  # a route earning nothing still runs
    try:
        m, run, per_train = _choice_model(lists, seed, incumbent, tops, ceiling)
    except TimeLimitError:
        return seed, ceiling, {"routes_modelled": 0, "cpsat_status": "not built: the time limit ran out"}
    except _TooBig as too_big:
        return seed, ceiling, {"routes_modelled": 0, "cpsat_status": f"not built: {too_big}"}
    running = deadline.current()
    left = None if running is None else running.left()
    if left is not None:
        time_limit = left if time_limit is None else min(time_limit, left)
    solver = sat.new_solver()
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(time_limit, 0.01)
    status = sat.solve(solver, m)
    stats = {"routes_modelled": len(run), "cpsat_status": solver.status_name(status)}
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return seed, ceiling, stats
    rows = [next((r for r in per_train[i] if solver.boolean_value(run[r])), -1) for i in range(len(per_train))]
    bound = int(solver.best_objective_bound + 1e-6)
    return rows, max(bound, incumbent) if status != cp_model.OPTIMAL else int(solver.objective_value), stats


def _on_time(doing: str) -> None:
    """Stop at the time limit itself, not past its grace (:data:`.deadline.GRACE`,
    for work with nothing to answer): the choice's seed answers. A 20-train
    board answered 0.55 s past a 1 s limit, building the model in the grace."""
    if deadline.expired():
        raise TimeLimitError(f"ran out while {doing}")


def _choice_model(
    lists: ChoiceLists, seed: list[int], incumbent: int, tops: list[int], ceiling: int
) -> tuple[cp_model.CpModel, dict[int, cp_model.IntVar], list[list[int]]]:
    """The choice as a CP-SAT model: its literal per route row and each
    train's rows (those that could beat ``incumbent``)."""
    building = "building the 18Cuba choice model"
    n = len(lists.count)
    m = cp_model.CpModel()
    run: dict[int, cp_model.IntVar] = {}  # row -> literal
    per_train: list[list[int]] = []
    for i in range(n):
        # by numpy: a Python pass over 480,000 rows (20 trains) took 0.07 s, 0.012 s so
        start = int(lists.offset[i])
        could = lists.potential[start : start + int(lists.count[i])] + (ceiling - tops[i]) > incumbent
        if seed[i] >= 0:
            could[seed[i] - start] = True
        per_train.append((np.flatnonzero(could) + start).tolist())
        _on_time(building)
    if (count := sum(map(len, per_train))) > MAX_MODELLED_ROUTES:
        raise _TooBig(f"{count:,} routes, over the {MAX_MODELLED_ROUTES:,} a CP-SAT model is given")
    for i, rows in enumerate(per_train):
        for r in rows:
            run[r] = m.new_bool_var(f"t{i}r{r}")
        m.add_at_most_one(run[r] for r in rows)
    # track: at most one chosen route on each piece
    rows_all = np.array(sorted(run), np.int64)
    if len(rows_all):
        masks = lists.mask[rows_all]
        for w in range(masks.shape[1]):
            for b in range(64):
                _on_time(building)  # one piece's row: up to tens of thousands of literals
                users = rows_all[((masks[:, w] >> np.uint64(b)) & np.uint64(1)).astype(bool)]
                if len(users) > 1:
                    m.add_at_most_one(run[int(r)] for r in users)
    runs_any = [m.new_bool_var(f"t{i}runs") for i in range(n)]
    for i in range(n):
        m.add(runs_any[i] == sum(run[r] for r in per_train[i]))
    # wagons and cubes
    cubes_total = 0
    mills = range(len(lists.supply))
    if len(lists.supply):
        cap = []
        wagon = {}
        for i in range(n):
            if lists.own[i]:
                cap.append(int(lists.own[i]))
                continue
            for j in range(len(lists.pool)):
                wagon[i, j] = m.new_bool_var(f"w{i}_{j}")
            m.add_at_most_one(wagon[i, j] for j in range(len(lists.pool)))
            cap.append(sum(int(size) * wagon[i, j] for j, size in enumerate(lists.pool)))
        for j in range(len(lists.pool)):
            m.add_at_most_one(wagon[i, j] for i in range(n) if (i, j) in wagon)
        flow = {}
        for i in range(n):
            for k in mills:
                carriers = [run[r] for r in per_train[i] if (int(lists.mills[r]) >> k) & 1]
                if not carriers:
                    continue
                flow[i, k] = m.new_int_var(0, int(lists.supply[k]), f"c{i}_{k}")
                m.add(flow[i, k] <= int(lists.supply[k]) * sum(carriers))
            m.add(sum(flow[i, k] for k in mills if (i, k) in flow) <= cap[i])
        for k in mills:
            m.add(sum(flow[i, k] for i in range(n) if (i, k) in flow) <= int(lists.supply[k]))
        cubes_total = sum(flow.values())
    # fees
    paid_total = 0
    if lists.fee:
        passed = int(np.bitwise_or.reduce(lists.fc[rows_all])) if len(rows_all) else 0
        cities = [k for k in range(64) if (passed >> k) & 1]
        paid = {k: m.new_bool_var(f"fc{k}") for k in cities}
        for i in range(n):
            _on_time(building)
            free = {}
            if lists.plus[i]:
                free = {k: m.new_bool_var(f"free{i}_{k}") for k in cities}
                m.add_at_most_one(free.values())
            for k in cities:
                passing = [run[r] for r in per_train[i] if (int(lists.fc[r]) >> k) & 1]
                for lit in passing:
                    m.add_bool_or([lit.negated(), paid[k]] + ([free[k]] if free else []))
        paid_total = sum(paid.values())
    anything = m.new_bool_var("runs")
    m.add_max_equality(anything, runs_any) if n else m.add(anything == 0)
    revenue = sum(int(lists.revenue[r]) * lit for r, lit in run.items())
    m.maximize(revenue + lists.cube * cubes_total - lists.fee * paid_total + lists.machines * anything)
    for i in range(n):
        _on_time(building)
        for r in per_train[i]:
            m.add_hint(run[r], r == seed[i])
    return m, run, per_train


def assign_wagons(
    choices: list[list[tuple[Hashable, int]]],
    counts: dict[Hashable, int],
    pinned: set[int],
    pool: list[int],
    mills: list[tuple[int, ...]],
    supply: dict[int, int],
    time_limit: float | None,
) -> tuple[list[Hashable], list[int]] | None:
    """(kind of train, wagon capacity) of each route: a kind from its
    ``choices`` ((kind, its wagon) pairs; ``counts`` trains of each kind to go
    round) and the pool's wagons to routes whose train has none (one each; not
    to ``pinned`` routes), carrying the most cubes from the routes' ``mills`` (a
    maximum flow within the supply), in one model rather than every order of
    trains and wagons. Alike trains and wagons are counted, not told apart, so
    that no symmetry slows the proof. None if ``time_limit`` stopped it first."""
    m = cp_model.CpModel()
    chose: dict[tuple[int, Hashable], cp_model.IntVar] = {}
    for i, options in enumerate(choices):
        for kind, _ in options:
            chose[i, kind] = m.new_bool_var(f"r{i}k{len(chose)}")
        m.add_exactly_one(chose[i, kind] for kind, _ in options)
    for kind, count in counts.items():
        m.add(sum(v for (_, k), v in chose.items() if k == kind) <= count)
    sizes = Counter(pool)
    takes: dict[tuple[int, int], cp_model.IntVar] = {}
    for i, options in enumerate(choices):
        bare = [chose[i, kind] for kind, wagon in options if not wagon]
        if i in pinned or not mills[i] or not bare:
            continue
        for size in sizes:
            takes[i, size] = m.new_bool_var(f"r{i}w{size}")
        m.add(sum(takes[i, size] for size in sizes) <= sum(bare))  # one wagon, on a train without one
    for size, count in sizes.items():
        m.add(sum(v for (_, s), v in takes.items() if s == size) <= count)
    flow: dict[tuple[int, int], cp_model.IntVar] = {}
    caps = []
    for i, options in enumerate(choices):
        for mill in mills[i]:
            flow[i, mill] = m.new_int_var(0, supply[mill], f"r{i}m{mill}")
        caps.append(
            sum(wagon * chose[i, kind] for kind, wagon in options)
            + sum(size * takes[i, size] for size in sizes if (i, size) in takes)
        )
        m.add(sum(flow[i, mill] for mill in mills[i]) <= caps[-1])
    for mill, cubes in supply.items():
        m.add(sum(f for (_, k), f in flow.items() if k == mill) <= cubes)
    m.maximize(sum(flow.values()))
    solver = sat.new_solver()
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(time_limit, 0.001)
    if sat.solve(solver, m) != cp_model.OPTIMAL:
        return None
    kinds = [next(k for k, _ in options if solver.value(chose[i, k])) for i, options in enumerate(choices)]
    return kinds, [int(solver.value(cap)) for cap in caps]
