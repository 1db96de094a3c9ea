"""The interface every rule set implements.

A rule set answers, for one game, the questions the core asks: which train a
name means, which stop category a node counts as, what a stop is worth to a
train, which nodes only end routes, which cities block, which track a train
may use, and what extra a route earns (bonuses, feeders). The core never
asks for a game by name; it asks the position's rule set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..board import Node, Position
from ..errors import PositionError, article
from ..trains import Train, generic_train, object_train

#: Track types a gauge may use.
GAUGE_TRACKS = {"broad": frozenset({"broad", "dual"}), "narrow": frozenset({"narrow", "dual"})}


@dataclass(frozen=True)
class Bonus:
    """A route bonus of the generic ``bonuses`` option (route-rules.md)."""

    type: str  # "visit" or "connect"
    sets: tuple[frozenset[str], ...]  # visit: one set of cells; connect: the sets
    amount: int
    multiplied: bool


class RuleSet:
    """Generic 18xx rules (1830 style). Game modules subclass and override."""

    name = "generic"
    #: kind labels this game gives meaning to
    kinds: frozenset[str] = frozenset()
    #: per-train keys of the train object form this game reads
    train_state_keys: frozenset[str] = frozenset()
    #: option keys and a checker for each
    has_companies = True
    #: the route solvers and the route validator answer this game; False for
    #: games answered by a search of their own (18XS, 18Cuba: :mod:`routecalc.games`)
    route_engine = True
    #: offboards may have token slots (``slots`` on an offboard; 18C2C "D")
    offboard_tokens = False
    #: catalogue train names listed for people (the service's GET /v1/games);
    #: a catalogue of patterns (``n``, ``n+m``) lists typical members
    train_names: tuple[str, ...] = ()

    # -- trains ---------------------------------------------------------
    def catalogue(self, name: str, where: str) -> Train:
        return generic_train(name, where)

    def parse_train(self, spec: Any, where: str) -> Train:
        if isinstance(spec, str):
            return self.catalogue(spec, where)
        if isinstance(spec, dict):
            return object_train(spec, where, self.catalogue, self.train_state_keys)
        raise PositionError(where, "a train is a name or an object with a name")

    # -- options --------------------------------------------------------
    def parse_options(self, options: dict, position: Position) -> dict:
        out: dict[str, Any] = {"no_hex_twice": False, "bonuses": []}
        for key, value in options.items():
            if key == "no_hex_twice":
                if not isinstance(value, bool):
                    raise PositionError("options.no_hex_twice", "must be true or false")
                out[key] = value
            elif key == "bonuses":
                out[key] = parse_bonuses(value, position)
            else:
                self.parse_game_option(key, value, out, position)
        return out

    def parse_game_option(self, key: str, value: Any, out: dict, position: Position) -> None:
        raise PositionError(f"options.{key}", f"unknown option for {self.name}")

    def check_position(self, position: Position) -> None:
        """Game-wide checks after loading (hook)."""

    # -- stops ------------------------------------------------------------
    def category(self, node: Node) -> str:
        """Which distance category (city, town, offboard) a stop counts as."""
        return node.type

    def end_only(self, node: Node) -> bool:
        """Nodes that only start or end a route (offboards)."""
        return node.type == "offboard"

    def has_token(self, node: Node, company: str) -> bool:
        return company in node.tokens

    def blocked(self, node: Node, company: str) -> bool:
        """A city whose slots are all filled by other companies' tokens."""
        return (
            node.type == "city"
            and node.slots > 0
            and all(t is not None for t in node.tokens)
            and company not in node.tokens
        )

    def stop_roles(self, node: Node, position: Position) -> frozenset[str]:
        """Game roles of a stop for the operating company, which the compiled
        graph holds as flags for the route kernels: ``no_stop`` (its trains
        never stop there), ``home_end`` (its routes have it only at an end),
        ``load`` / ``unload`` (cargo picked up there / delivered at a route's
        end there). The generic rules give none."""
        return frozenset()

    def stop_value(self, node: Node, train: Train, position: Position) -> int:
        return node.revenue.value(position.phase_colors, diesel=train.diesel)

    def feeders(self, position: Position) -> dict[int, list[int]]:
        """The nodes whose value a stop adds when it pays, by stop node
        (18Ireland's narrow-gauge feeders); each valued for the train that
        runs (:meth:`stop_value`: a D is paid their ``diesel_`` entry)."""
        return {}

    def usable_tracks(self, train: Train) -> frozenset[str]:
        return GAUGE_TRACKS[train.gauge]

    def bonuses(self, position: Position) -> list[Bonus]:
        return position.options.get("bonuses", [])


def check_kinds(position: Position, types_of_kind: dict[str, tuple[str, ...]]) -> None:
    """Each node with a ``kind`` is of a node type the game gives that kind."""
    for node in position.nodes:
        if node.kind is not None and node.type not in types_of_kind[node.kind]:
            raise PositionError(
                f"cell {node.cell}",
                f"node {node.id}: a {node.kind} is a "
                f"{' or '.join(types_of_kind[node.kind])} in {position.game}, not {article(node.type)}",
            )


def parse_bonuses(value: Any, position: Position) -> list[Bonus]:
    if not isinstance(value, list):
        raise PositionError("options.bonuses", "must be a list")
    out = []
    for i, item in enumerate(value):
        where = f"options.bonuses[{i}]"
        if not isinstance(item, dict):
            raise PositionError(where, "must be an object")
        kind = item.get("type")
        for key in item:
            if key not in ("type", "cells", "sets", "amount", "multiplied"):
                raise PositionError(where, f"unknown key {key!r}")
        amount = item.get("amount")
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise PositionError(where, "amount must be a whole number >= 0")
        multiplied = item.get("multiplied", False)
        if not isinstance(multiplied, bool):
            raise PositionError(where, "multiplied must be true or false")
        if kind == "visit":
            sets = (_cells(item.get("cells"), f"{where}.cells", position),)
        elif kind == "connect":
            raw = item.get("sets")
            if not isinstance(raw, list) or not raw:
                raise PositionError(f"{where}.sets", "must be a non-empty list of cell lists")
            sets = tuple(_cells(s, f"{where}.sets[{j}]", position) for j, s in enumerate(raw))
        else:
            raise PositionError(f"{where}.type", f"unknown bonus type {kind!r} (visit or connect)")
        out.append(Bonus(kind, sets, amount, multiplied))
    return out


def _cells(raw: Any, where: str, position: Position) -> frozenset[str]:
    if not isinstance(raw, list) or not raw or not all(isinstance(c, str) for c in raw):
        raise PositionError(where, "must be a non-empty list of cell ids")
    for cell in raw:
        if cell not in position.cells:
            raise PositionError(where, f"no cell {cell!r} on the board")
    return frozenset(raw)
