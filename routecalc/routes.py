"""Routes as the engine holds them, and their JSON form.

A :class:`Route` is a train index, its stops in order, the connection used
between each consecutive pair, and (once scored) its paying stops and
revenue. ``to_json`` gives the spec's route form with ``revenue`` and
``stops``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .graph import CATEGORY_NAMES, TrackGraph
from .scoring import TrainTable


@dataclass
class Route:
    train: int  # index into position.trains
    stops: list[int]
    conns: list[int]
    revenue: int = 0
    paid: list[int] = field(default_factory=list)

    def to_json(self, graph: TrackGraph, table: TrainTable) -> dict:
        hexes = [list(graph.oriented_cells(c, s)) for c, s in zip(self.conns, self.stops)]
        paid = set(self.paid)
        stops_out = []
        for s in self.stops:
            if s not in paid:
                continue
            entry = {"node": graph.stop_ids[s], "type": CATEGORY_NAMES[graph.category[s]], "value": int(table.value[s])}
            if table.feeder[s]:
                entry["narrow"] = int(table.feeder[s])
            stops_out.append(entry)
        return {
            "train": table.train.name,
            "nodes": [graph.stop_ids[s] for s in self.stops],
            "hexes": hexes,
            "skip": [graph.stop_ids[s] for s in self.stops if s not in paid],
            "revenue": int(self.revenue),
            "stops": stops_out,
        }


def answer(
    graph: TrackGraph,
    tables: list[TrainTable],
    routes: list[Route],
    started: float,
    *,
    solver: str,
    status: str | None = None,
    bound: int | None = None,
    **stats,
) -> dict:
    """The optimiser's answer in the spec's form, routes in train order.
    Without a ``status``, the answer is optimal exactly when it reaches its bound.
    Its statistics end with ``seconds``, the wall time since ``started`` (a
    ``time.perf_counter()`` reading)."""
    stats["seconds"] = round(time.perf_counter() - started, 4)
    routes = sorted(routes, key=lambda r: r.train)
    revenue = sum(r.revenue for r in routes)
    if status is None:
        status = "optimal" if bound is None or bound == revenue else "feasible"
    return {
        "company": graph.position.company,
        "revenue": int(revenue),
        "status": status,
        "bound": int(revenue if bound is None else bound),
        "routes": [r.to_json(graph, tables[r.train]) for r in routes],
        "solver": solver,
        "stats": stats,
    }
