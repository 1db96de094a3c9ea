"""Auto's budgeted enumeration (:func:`routecalc.solvers.fast.enumerate_train`
with a step limit): a listing whose projected size is many times its step
limit stops once it has taken ``PROBE_STEPS``, rather than spend the whole
limit on a search it cannot finish; one that finishes within its limit is
never cut. The projection is made from the search's stack, so the choice is
the same at any machine load."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import CORPUS, ROOT

from routecalc.graph import TOKEN, compile_position
from routecalc.kernels import enumeration as enum
from routecalc.model import load_position, load_position_file
from routecalc.scoring import pay_table, train_tables
from routecalc.solvers import auto, fast
from routecalc.solvers.fast import Clock, enumerate_company, enumerate_train, graph_arrays, share_done


def one_d(path) -> tuple:
    """A corpus board with one D train: its graph, table and prices."""
    data = json.loads(path.read_text())["position"]
    graph = compile_position(load_position({**data, "trains": ["D"]}))
    table = train_tables(graph)[0]
    return graph, table, pay_table(table, graph, graph.position.rules.bonuses(graph.position))


A_LATE_1867 = CORPUS / "generic" / "1867" / "21268-a832.json"


def listed(path):
    graph = compile_position(load_position_file(path))
    return enumerate_company(graph, train_tables(graph), auto.ROUTE_BUDGET, Clock(None, None), auto.ENUMERATION_STEPS)


@pytest.mark.parametrize("name", ["stress-1867-two-d", "stress-express", "stress-1828-d-8e"])
def test_an_exploding_listing_stops_after_the_probe(name):
    """Each projects millions of steps by the first look after the probe
    (two-d's D: 6 million at 60,000 steps, against its limit of 500,000)."""
    first = listed(ROOT / "fixtures" / f"{name}.json")[0]
    assert first.out_of_work and not first.complete
    assert fast.PROBE_STEPS <= first.steps < fast.PROBE_STEPS + 3 * fast.CHUNK


def test_a_listing_whose_share_stalls_stops_by_its_pace():
    """A D on a dense 1830 board: the share done stays at 0.38 from 40,000
    steps on, so the share alone projects under three times the steps
    taken and the listing ran to its 500,000-step limit (0.9 s). Judged by
    the pace of its share since the probe, it stops at 120,000."""
    path = ROOT / "fixtures" / "limits" / "1830-two-d-deep.json"
    first = listed(path)[0]
    assert first.out_of_work and not first.complete
    assert first.steps == 120_000


def test_the_pace_projects_from_the_probe():
    """Within 4 times a 500,000-step limit by the share alone (150,000 steps
    at 0.08: 1.9 million), a listing stops by its pace since the probe (0.03
    more in 100,000 steps, 0.92 to go: 3.2 million), not where its pace
    keeps up, and not before ``PROBE_STEPS`` more steps."""
    probe = (50_000, 0.05)
    assert fast._hopeless(150_000, 0.08, 500_000, probe)
    assert not fast._hopeless(150_000, 0.60, 500_000, probe)
    assert not fast._hopeless(90_000, 0.08, 500_000, probe)  # too early to judge the pace
    assert fast._hopeless(150_000, 0.08, 500_000, (50_000, 0.08))  # the share has not moved
    assert fast._hopeless(60_000, 0.01, 500_000, (60_000, 0.01))  # 6 million by the share alone


def test_a_listing_that_finishes_is_not_cut():
    """stress-c2c-size-8's 8 finishes in 123,992 steps of its 250,000, though
    it projects 176,000 at 20,000 and 147,000 at 60,000; the fast solver
    answers."""
    trains = listed(ROOT / "fixtures" / "stress-c2c-size-8.json")
    assert [(found.complete, found.steps) for found in trains] == [(True, 123_992), (True, 14_956)]


def test_the_probe_judges_only_budgeted_listings(monkeypatch):
    """With the probe after 1,000 steps and no room to spare, a corpus
    1867 D that takes some 50,000 steps is cut when listed within 60,000, and
    runs to the end without a step limit (the fast solver's own listing)."""
    monkeypatch.setattr(fast, "PROBE_STEPS", 1_000)
    monkeypatch.setattr(fast, "OUTLOOK", 1)
    monkeypatch.setattr(fast, "CHUNK", 1_000)
    graph, table, prices = one_d(A_LATE_1867)

    def listing(step_limit):
        return enumerate_train(graph, graph_arrays(graph), table, prices, None, Clock(None, None), (0, 1), step_limit)

    whole = listing(None)
    assert whole.complete and whole.steps > 20_000
    cut = listing(whole.steps + 10_000)
    assert cut.out_of_work and not cut.complete and cut.steps < whole.steps


def test_the_share_done_runs_from_nothing_to_all():
    """Read after each chunk of a whole listing, the share never falls (a
    second leg's first moves come after the first leg's own), is a start's
    share between starts, and is all of it at the end."""
    graph, table, prices = one_d(A_LATE_1867)
    tokens = np.flatnonzero(graph.flags & TOKEN).astype(np.int64)
    arrays = graph_arrays(graph)
    walk = enum.Walk(
        table.visit.astype(np.int64),
        int(table.hex_limit),
        int(table.gauge_bit),
        bool(graph.position.options.get("no_hex_twice")),
    )
    state = enum.new_state(graph.num_stops, arrays.conn_mask.shape[1], arrays.conn_cells.shape[1], len(table.pay))
    buf = enum.new_buffer(1 << 18, 1 << 22, arrays.conn_mask.shape[1])
    prune = enum.new_prune(len(table.pay))
    shares = [share_done(graph, state, len(tokens))]
    while enum.enumerate_routes(arrays, walk, prices, tokens, state, buf, 200, 1 << 18, prune) == enum.PAUSED:
        shares.append(share_done(graph, state, len(tokens)))
        if state.depth[0] < 0:
            assert shares[-1] == state.token_i[0] / len(tokens)
    assert shares[0] == 0.0 and shares == sorted(shares) and shares[-1] <= 1.0 and len(shares) > 10
    assert share_done(graph, state, len(tokens)) == 1.0
