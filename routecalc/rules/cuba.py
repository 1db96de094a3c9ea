"""18Cuba (seed 003): broad majors and narrow minors, harbors beyond the range,
sugar delivered by wagons, FC tokens ignored for a fee, the FC's own income.

The coupled parts (a shared sugar supply, wagons assigned across trains, a fee
per ignored FC token shared by the trains, a ``+`` train's free ignore) do not
fit the route engine's sum of independent routes, so the game is answered by
a search of its own (:mod:`routecalc.games.cuba_coupled`): the numba
enumeration lists the routes, reading this rule set's stop roles
(:meth:`CubaRules.stop_roles`) from the compiled graph, and the coupled
choice (one route or none per train, wagons, sugar flow, fees) is a branch
and bound or a CP-SAT model. The plain search of :mod:`routecalc.games.cuba`
(every valid route listed by the reference solver's walk, whole choices
scored exactly) is the reference the tests compare it with.

How the engine holds the trains: a major's range-n train is an engine train of
n + 1 paying stops (so the walk may reach one harbor beyond the range);
:func:`routecalc.games.cuba.cuba_route` then keeps the (n + 1)-th stop only when an end
of the route is a harbor, which pays 0 and is listed in the route's ``skip``.

Readings of what the texts leave open:

- node kinds: a harbor is an offboard, a sugar field a town, a sugar mill a
  city; a major's train never stops at a sugar field (the fields are the
  narrow lines' stops: "only narrow gauge trains may run to it", seed X), a
  minor's route is its own mill at one end and sugar fields only, so it
  passes no city and meets no FC token; a mill is an ordinary city to majors;
- a company whose trains are n-trains is a minor, one with standard trains a
  major; mixing both is an error. The company ``FC`` runs no routes;
- obsolete: any train may be marked, it runs one stop shorter (a 3n as 2n),
  and trains of one name may differ in it;
- 4D: multiplier 2 on its stops, including a counted harbor;
- a route with two harbor ends and n + 1 stops counts the dearer harbor;
- wagon delivery: a route "ends in a harbor" when either end is a harbor
  (direction is free); it carries cubes from any mill it stops at (all of
  its cities pay). Cubes are shared out among the trains by a maximum flow
  (trains' wagon capacity, mills' supply); wagons of ``options.wagons`` go to
  trains without a wagon of their own, at most one per train, as the best
  total asks; a train object's ``wagon`` is fixed to that train;
- FC tokens: ignoring matters only where it unblocks a city, i.e. a route
  passes through a city whose slots are all filled, none by the company, one
  or more by FC. Starting or ending there is free, as for any blocked city.
  The fee is per token per round: a city passed by several trains is paid
  once. A ``+`` train's free ignore covers one FC city that this train passes;
  the city stays paid if another train without a free ignore for it passes it
  too. The optimiser takes the cheapest covering;
- machines: added once to a minor's revenue when at least one of its trains
  runs (a minor that runs no train earns nothing);
- FC income: the FC's range is that of its longest train (the top of its
  stack is the newest export, the longest); cities with an FC token sharing a
  ``groups`` value (Havana) count once; no train: only the sugar income;
- generic ``bonuses`` are not part of 18Cuba and are refused (not
  implemented); ``no_hex_twice`` is kept as in every game.

Every solver name gives this game's own answer (``solver: "cuba-bb"`` or
``"cuba-cpsat"``, the path of the coupled choice that answered). A proposal to
validate is the route list of the format; a route may
add ``"wagon": n`` to pin which wagon it carries (its train's own, or one of
``options.wagons``), which also tells apart two trains of one name; sugar,
unpinned wagons and fees are then the best the proposed routes allow.

The answer (solve and validate): per route the engine's ``revenue`` (stops,
doubled on a 4D) and ``stops``, plus ``sugar`` (cubes it delivers), ``wagon``
(its capacity, when it carries one), ``fc_passed`` (FC cities it passes),
``fc_free`` (the one a ``+`` train ignores free, or absent). The whole answer:
``fees`` ``{"paid": [city node ids], "amount": n}``, ``sugar``
``{"cubes": n, "income": 30 n, "by_mill": {node: cubes}}``, ``machines`` (a
minor's machines, when counted), ``routes_revenue``, and ``revenue`` =
routes_revenue + sugar income + machines - fees. The FC's answer has no
routes and ``fc_income`` ``{"range", "cities": [{"node", "value"}], "cubes",
"sugar", "income"}``. Both list the revenue that is not a route's in
``parts`` (``[{"name", "detail", "amount"}]``, fees negative), so that the
routes' revenues and the parts' amounts add up to ``revenue``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..board import Node, Position
from ..errors import PositionError, shown
from ..trains import Train, all_stops
from .base import RuleSet, check_kinds

FC = "FC"
#: Standard (broad) trains: range, multiplier. "1" is the FC's preprinted train.
MAJOR_TRAINS = {
    "1": (1, 1),
    "2": (2, 1),
    "3": (3, 1),
    "4": (4, 1),
    "5": (5, 1),
    "6": (6, 1),
    "3+": (3, 1),
    "4+": (4, 1),
    "5+": (5, 1),
    "6+": (6, 1),
    "8": (8, 1),
    "4D": (4, 2),
}
#: Narrow trains of the minors: range.
NARROW_TRAINS = {"2n": 2, "3n": 3, "4n": 4, "5n": 5}
KIND_TYPES = {"harbor": ("offboard",), "sugar": ("town",), "mill": ("city",)}
DEFAULT_FC_FEE = 20
CUBE_INCOME = 30  # per cube delivered
UNSHIPPED_INCOME = 10  # per cube the FC counts


def reach(train: Train) -> int:
    """The train's range in counted stops (one less when obsolete)."""
    base = NARROW_TRAINS[train.name] if train.gauge == "narrow" else MAJOR_TRAINS[train.name][0]
    return base - 1 if train.obsolete else base


def is_plus(train: Train) -> bool:
    return train.name.endswith("+")


class CubaRules(RuleSet):
    name = "18Cuba"
    kinds = frozenset(KIND_TYPES)
    train_state_keys = frozenset({"obsolete", "wagon"})
    train_names = tuple(MAJOR_TRAINS) + tuple(NARROW_TRAINS)
    route_engine = False

    # -- trains -----------------------------------------------------------
    def catalogue(self, name: str, where: str) -> Train:
        if name in NARROW_TRAINS:
            return Train(name, all_stops(NARROW_TRAINS[name]), gauge="narrow")
        if name in MAJOR_TRAINS:
            n, multiplier = MAJOR_TRAINS[name]
            return Train(name, all_stops(n + 1), multiplier)  # + 1: a harbor beyond the range
        raise PositionError(where, f"unknown 18Cuba train {name!r} (known: {', '.join(self.train_names)})")

    def parse_train(self, spec: Any, where: str) -> Train:
        if isinstance(spec, dict):
            for key in ("distance", "multiplier", "fill"):
                if key in spec:
                    raise PositionError(
                        f"{where}.{key}",
                        "18Cuba trains come from the catalogue; "
                        "a train's own distance or multiplier is not implemented yet",
                    )
        train = super().parse_train(spec, where)
        state = spec if isinstance(spec, dict) else {}
        obsolete = state.get("obsolete", False)
        if not isinstance(obsolete, bool):
            raise PositionError(f"{where}.obsolete", f"must be true or false, got {shown(obsolete)}")
        wagon = state.get("wagon", 0)
        if isinstance(wagon, bool) or not isinstance(wagon, int) or wagon < 0:
            raise PositionError(f"{where}.wagon", f"must be a whole number >= 0 (cubes), got {shown(wagon)}")
        if wagon and train.gauge == "narrow":
            raise PositionError(f"{where}.wagon", "only majors carry wagons, not an n-train")
        train = dataclasses.replace(train, obsolete=obsolete, wagon=wagon)
        if obsolete:
            if reach(train) < 2 - (train.gauge == "broad"):
                raise PositionError(f"{where}.obsolete", f"an obsolete {train.name} would run no route")
            # a major's walk may reach one harbor beyond its range
            train = dataclasses.replace(train, groups=all_stops(reach(train) + (train.gauge == "broad")))
        return train

    # -- options ------------------------------------------------------------
    def parse_game_option(self, key: str, value: Any, out: dict, position: Position) -> None:
        where = f"options.{key}"
        if key == "machines":
            if not isinstance(value, dict):
                raise PositionError(where, "must map minor ids to lists of machine values")
            for minor, values in value.items():
                if not isinstance(values, list) or not all(_whole(v) for v in values):
                    raise PositionError(f"{where}.{minor}", "must be a list of whole numbers >= 0")
            out[key] = {m: list(v) for m, v in value.items()}
        elif key == "wagons":
            if not isinstance(value, list) or not all(_whole(v) and v > 0 for v in value):
                raise PositionError(where, "must be a list of wagon capacities (whole numbers >= 1)")
            out[key] = list(value)
        elif key == "sugar":
            if not isinstance(value, dict):
                raise PositionError(where, "must map sugar mill node ids to cubes")
            for node_id, cubes in value.items():
                if node_id not in position.node_index:
                    raise PositionError(f"{where}.{node_id}", "no such node on the board")
                if position.nodes[position.node_index[node_id]].kind != "mill":
                    raise PositionError(f"{where}.{node_id}", "not a sugar mill (a city with kind:mill)")
                if not _whole(cubes):
                    raise PositionError(f"{where}.{node_id}", f"cubes must be a whole number >= 0, got {shown(cubes)}")
            out[key] = dict(value)
        elif key == "fc_fee":
            if not _whole(value):
                raise PositionError(where, f"must be a whole number >= 0, got {shown(value)}")
            out[key] = value
        else:
            super().parse_game_option(key, value, out, position)

    def check_position(self, position: Position) -> None:
        if position.options.get("bonuses"):
            raise PositionError("options.bonuses", "route bonuses are not part of 18Cuba (not implemented yet)")
        check_kinds(position, KIND_TYPES)
        gauges = {t.gauge for t in position.trains}
        if len(gauges) > 1:
            raise PositionError("trains", "a company runs either n-trains (a minor) or standard trains (a major)")
        for i, train in enumerate(position.trains):
            if train.name == "1" and position.company != FC:
                raise PositionError(f"trains[{i}]", "the 1-train is the FC's preprinted train")
        minor = gauges == {"narrow"}
        if minor and position.company == FC:
            raise PositionError("trains", "the FC takes standard trains (exports), not n-trains")
        if position.options.get("wagons") and (minor or position.company == FC):
            raise PositionError("options.wagons", "only a major's trains carry wagons (the FC runs no trains)")
        if position.company in position.options.get("machines", {}) and (gauges == {"broad"} or position.company == FC):
            raise PositionError(
                f"options.machines.{position.company}", "machines belong to minors (companies running n-trains)"
            )

    # -- stops ----------------------------------------------------------------
    def blocked(self, node: Node, company: str) -> bool:
        """Blocked even after ignoring FC tokens: a city with an FC token is
        passable for a fee (:func:`fc_blocked`), the search counts it."""
        return super().blocked(node, company) and FC not in node.tokens

    def fc_blocked(self, node: Node, company: str) -> bool:
        """Blocked unless the company ignores one of its FC tokens."""
        return super().blocked(node, company) and FC in node.tokens

    def stop_roles(self, node: Node, position: Position) -> frozenset[str]:
        """The route rules the kernels read from the graph: a major never
        stops at a sugar field; a minor stops only at its own mill, at an end,
        and at sugar fields; with wagons, mills with cubes load and harbors
        unload (a route reaching a harbor with no more revenue may carry more)."""
        roles: set[str] = set()
        if any(t.gauge == "narrow" for t in position.trains):
            if node.kind == "mill" and position.company in node.tokens:
                roles.add("home_end")
            elif node.kind != "sugar":
                roles.add("no_stop")
        elif node.kind == "sugar":
            roles.add("no_stop")
        elif position.options.get("wagons") or any(t.wagon for t in position.trains):
            if node.kind == "mill" and position.options.get("sugar", {}).get(node.id, 0) > 0:
                roles.add("load")
            elif node.kind == "harbor":
                roles.add("unload")
        return frozenset(roles)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
