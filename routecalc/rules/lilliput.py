"""18Lilliput (seed 001): free towns and harbours, Mildendo at route ends,
doubling D trains, obsolete trains at half pay, a doubled last round.

An n-train's range counts cities, metropolises and Mildendo; towns and
harbours cost no range and every stop pays (route-rules.md, 18Lilliput). So
each train is two distance groups: n stops of category ``city`` and
unlimited stops of category ``town``, all paying; :meth:`LilliputRules.category`
puts harbours among the towns and metropolises and Mildendo among the cities,
whatever node type the tile gives them.

The revenue rules are the engine's general :meth:`~routecalc.trains.Train.payout`:
``3D``/``4D`` carry multiplier 2, an obsolete train divisor 2 (half, rounded
down, after the doubling), and ``options.last_round`` sets factor 2 on every
train. Doubling each route after its rounding doubles the company's total
exactly, and keeps the answer's route revenues adding up to its total.

Where the seed is silent:

- which node types carry the kinds: a metropolis is a city, Mildendo a city
  or an offboard (its red tile), a harbour a town or an offboard (an
  offboard only ends routes, as the format says); anything else, and an
  offboard without a kind, is refused: the game has no other stops;
- any train may be marked obsolete, as route-rules.md reads, and trains of
  one name may differ in it (the validator gives a proposal's routes, named
  by train name only, to those trains the way that pays most).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..board import Node, Position
from ..errors import PositionError, shown
from ..trains import UNLIMITED, DistanceGroup, Train
from .base import RuleSet, check_kinds

#: Catalogue: range (cities, metropolises, Mildendo) and route multiplier.
TRAINS = {"2": (2, 1), "3": (3, 1), "4": (4, 1), "5": (5, 1), "3D": (3, 2), "4D": (4, 2)}
#: Node types each kind may sit on.
KIND_TYPES = {"metropolis": ("city",), "mildendo": ("city", "offboard"), "harbor": ("town", "offboard")}
#: An obsolete train earns its revenue divided by this, rounded down.
OBSOLETE_DIVISOR = 2
#: The last round multiplies the company's revenue by this.
LAST_ROUND_FACTOR = 2


def lilliput_train(name: str, reach: int, multiplier: int) -> Train:
    """``reach`` counted stops (cities, metropolises, Mildendo) and any number of free towns and harbours."""
    return Train(
        name,
        (DistanceGroup(frozenset({"city"}), reach, reach), DistanceGroup(frozenset({"town"}), UNLIMITED, UNLIMITED)),
        multiplier,
    )


class LilliputRules(RuleSet):
    name = "18Lilliput"
    kinds = frozenset(KIND_TYPES)
    train_state_keys = frozenset({"obsolete"})
    train_names = tuple(TRAINS)

    def catalogue(self, name: str, where: str) -> Train:
        if name not in TRAINS:
            raise PositionError(where, f"unknown 18Lilliput train {name!r} (known: {', '.join(TRAINS)})")
        return lilliput_train(name, *TRAINS[name])

    def parse_train(self, spec: Any, where: str) -> Train:
        train = super().parse_train(spec, where)
        obsolete = spec.get("obsolete", False) if isinstance(spec, dict) else False
        if not isinstance(obsolete, bool):
            raise PositionError(where, f"obsolete must be true or false, got {shown(obsolete)}")
        if obsolete:
            train = dataclasses.replace(train, obsolete=True, divisor=OBSOLETE_DIVISOR)
        return train

    def parse_game_option(self, key: str, value: Any, out: dict, position: Position) -> None:
        if key != "last_round":
            return super().parse_game_option(key, value, out, position)
        if not isinstance(value, bool):
            raise PositionError("options.last_round", f"must be true or false, got {shown(value)}")
        out[key] = value

    def check_position(self, position: Position) -> None:
        check_kinds(position, KIND_TYPES)
        for node in position.nodes:
            if node.type == "offboard" and node.kind is None:
                raise PositionError(
                    f"cell {node.cell}",
                    f"node {node.id}: 18Lilliput has no offboards; an "
                    "offboard stop is a harbour (kind:harbor) or Mildendo (kind:mildendo)",
                )
        if position.options.get("last_round"):
            position.trains = [dataclasses.replace(t, factor=LAST_ROUND_FACTOR) for t in position.trains]

    def category(self, node: Node) -> str:
        """Harbours cost no range like towns; metropolises and Mildendo count like cities."""
        if node.kind == "harbor":
            return "town"
        if node.kind in ("metropolis", "mildendo"):
            return "city"
        return node.type

    def end_only(self, node: Node) -> bool:
        """Mildendo only starts or ends a route (and offboards, as everywhere)."""
        return node.kind == "mildendo" or super().end_only(node)
