"""18C2C with the "D" train variant (seed 002).

Trains ``2``..``5`` run n stops; ``3D``..``6D`` run n stops too and pay the
value of every stop holding a company token twice (:meth:`C2CRules.stop_value`;
the solvers and the validator all read stop worth from there). Offboards
may hold tokens in this variant (``slots`` on the offboard part).

``options.connect: {"from": [cells], "to": [cells]}`` asks for a
destination or transcontinental proof: can one of the trains run a valid
route with a stop in a ``from`` cell and a stop in a ``to`` cell? A D train
may be "unfolded" into a 2n-stop train without doubling, only when no train
can run such a route folded. The answer's ``connect`` part
(:func:`routecalc.games.c2c.connect_query`) is ``{"possible", "route", "unfolded", "status"}``:
the shortest such route (in the route form, with the train that runs it),
or ``possible: false`` when none exists, or ``status: unknown`` (and
``possible: null``) when the time limit stopped the search first.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..board import Node, Position
from ..errors import PositionError
from ..trains import Train, all_stops
from .base import RuleSet, _cells

PLAIN = range(2, 6)
DOUBLING = range(3, 7)


class C2CRules(RuleSet):
    name = "18C2C-D"
    offboard_tokens = True
    train_names = (*(str(n) for n in PLAIN), *(f"{n}D" for n in DOUBLING))

    def catalogue(self, name: str, where: str) -> Train:
        if name in self.train_names:
            return Train(name, all_stops(int(name.rstrip("D"))), double_token_stops=name.endswith("D"))
        raise PositionError(where, f"unknown 18C2C-D train {name!r} (known: {', '.join(self.train_names)})")

    def parse_train(self, spec: Any, where: str) -> Train:
        if isinstance(spec, dict) and "distance" in spec:
            raise PositionError(
                where, f"18C2C-D trains are catalogue trains ({', '.join(self.train_names)}); a distance is not read"
            )
        return super().parse_train(spec, where)

    def parse_game_option(self, key: str, value: Any, out: dict, position: Position) -> None:
        if key != "connect":
            return super().parse_game_option(key, value, out, position)
        if not isinstance(value, dict):
            raise PositionError("options.connect", 'must be {"from": [cells], "to": [cells]}')
        for k in value:
            if k not in ("from", "to"):
                raise PositionError("options.connect", f"unknown key {k!r} (from, to)")
        for k in ("from", "to"):
            if k not in value:
                raise PositionError(f"options.connect.{k}", "missing")
        out["connect"] = tuple(_cells(value[k], f"options.connect.{k}", position) for k in ("from", "to"))

    def stop_value(self, node: Node, train: Train, position: Position) -> int:
        value = super().stop_value(node, train, position)
        return 2 * value if train.double_token_stops and self.has_token(node, position.company) else value


def unfolded(train: Train) -> Train:
    """A D train unfolded for a proof: twice the stops, no doubling."""
    return replace(train, groups=all_stops(2 * train.groups[0].visit), double_token_stops=False)
