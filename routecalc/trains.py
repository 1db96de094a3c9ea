"""Trains: how far a train runs and which of its stops pay.

Every train, whatever its game, is one :class:`Train`: a list of
:class:`DistanceGroup` (which stop categories it may visit, how many, how
many of them pay), an optional hex-edge limit (H trains), a gauge and how
the stops' sum becomes the route's revenue: :meth:`Train.payout` (a
multiplier; a divisor, rounded down, for 18Lilliput's obsolete trains; a
factor after the rounding, for its doubled last round). Rule sets turn
catalogue names into trains; the object form of the position format (the
18xx.games train definition) is read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import PositionError, shown

UNLIMITED = 999
#: Bounds of what a train reads: stops visited or paid (a distance) at most
#: UNLIMITED, multipliers at most MAX_MULTIPLIER, so that no revenue the
#: kernels compute can overflow 64 bits.
MAX_MULTIPLIER = 100
CATEGORIES = ("city", "town", "offboard")


@dataclass(frozen=True)
class DistanceGroup:
    """Up to ``visit`` stops of these categories; the best ``pay`` of them count."""

    categories: frozenset[str]
    pay: int
    visit: int
    multiplier: int = 1


@dataclass(frozen=True)
class Train:
    name: str
    groups: tuple[DistanceGroup, ...]
    multiplier: int = 1
    fill: bool = False
    hex_limit: int | None = None  # distance in crossed cell edges (H trains)
    gauge: str = "broad"
    diesel: bool = False  # reads diesel_ revenues
    obsolete: bool = False
    wagon: int = 0
    double_token_stops: bool = False  # 18C2C nD: token stops pay twice
    divisor: int = 1  # the multiplied revenue is divided by it, rounded down
    factor: int = 1  # then multiplied by it (a company-wide factor the rule set sets)

    def payout(self, raw: int) -> int:
        """A route's revenue from ``raw`` (its multiplied stops and bonuses plus
        its plain bonuses): ``floor(raw / divisor) * factor``. The payment kernel
        and the CP-SAT model compute the same."""
        return raw // self.divisor * self.factor

    @property
    def pays_every_stop(self) -> bool:
        """No choice of paying stops: every visited stop pays."""
        return all(g.pay >= g.visit for g in self.groups)


def all_stops(n: int) -> tuple[DistanceGroup, ...]:
    return (DistanceGroup(frozenset(CATEGORIES), n, n),)


#: A count of stops in a generic train's name: 1-999, no leading zero.
_N = "[1-9][0-9]{0,2}"
#: The generic catalogue's names (the position schema's pattern too).
GENERIC_TRAIN_PATTERN = f"{_N}|{_N}\\+(?:0|{_N})|D|{_N}E"


def generic_train(name: str, where: str) -> Train:
    """Generic catalogue: ``n``, ``n+m``, ``D``, ``nE``."""
    if m := re.fullmatch(f"({_N})", name):
        return Train(name, all_stops(int(m.group(1))))
    if m := re.fullmatch(f"({_N})\\+(0|{_N})", name):
        return Train(
            name,
            (
                DistanceGroup(frozenset({"city", "offboard"}), int(m.group(1)), int(m.group(1))),
                DistanceGroup(frozenset({"town"}), int(m.group(2)), int(m.group(2))),
            ),
        )
    if name == "D":
        return Train(name, all_stops(UNLIMITED), diesel=True)
    if m := re.fullmatch(f"({_N})E", name):
        return Train(name, (DistanceGroup(frozenset(CATEGORIES), int(m.group(1)), UNLIMITED),))
    raise PositionError(where, f"unknown train {name!r}")


#: Keys of an 18xx.games train definition that do not affect routes.
_IGNORED_TRAIN_KEYS = {
    "price",
    "rusts_on",
    "obsolete_on",
    "num",
    "available_on",
    "variants",
    "events",
    "discount",
    "no_local",
    "salvage",
    "track_type",
    "reserved",
    "id",
    "owner",
    "operated",
}


def _whole(value, where: str, key: str, minimum: int = 0, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PositionError(where, f"{key} must be a whole number >= {minimum}, got {shown(value)}")
    if maximum is not None and value > maximum:
        raise PositionError(where, f"{key} must be at most {maximum}, got {shown(value)}")
    return value


def _stops(value, where: str, key: str, minimum: int = 0) -> int:
    """A count of stops: ``UNLIMITED`` (999) or more means unlimited, read as 999."""
    return min(_whole(value, where, key, minimum), UNLIMITED)


def object_train(spec: dict, where: str, catalogue, extra_keys: frozenset[str] = frozenset()) -> Train:
    """A train object: ``{"name", "distance", "multiplier", "fill", ...}``.

    ``catalogue(name, where)`` gives the named train when no ``distance`` is
    present; ``extra_keys`` are per-train state keys the rule set reads.
    """
    if "name" not in spec or not isinstance(spec["name"], str):
        raise PositionError(where, "train object needs a string 'name'")
    allowed = {"name", "distance", "multiplier", "fill"} | _IGNORED_TRAIN_KEYS | set(extra_keys)
    for key in spec:
        if key not in allowed:
            raise PositionError(where, f"unknown train key {key!r}")
    name = spec["name"]
    if "distance" not in spec:
        base = catalogue(name, where)
    else:
        base = Train(name, _distance(spec["distance"], where))
    multiplier = _whole(spec.get("multiplier", base.multiplier), where, "multiplier", 1, MAX_MULTIPLIER)
    fill = spec.get("fill", base.fill)
    if not isinstance(fill, bool):
        raise PositionError(where, "fill must be true or false")
    return Train(
        name,
        base.groups,
        multiplier,
        fill,
        base.hex_limit,
        base.gauge,
        base.diesel or name == "D",
        base.obsolete,
        base.wagon,
        base.double_token_stops,
        base.divisor,
        base.factor,
    )


def _distance(distance, where: str) -> tuple[DistanceGroup, ...]:
    if isinstance(distance, (int, float)) and not isinstance(distance, bool):  # a fraction: named by _whole
        return all_stops(_stops(distance, where, "distance", 1))
    if not isinstance(distance, list) or not distance:
        raise PositionError(where, "distance must be a number or a non-empty list of groups")
    groups = []
    seen: set[str] = set()
    for i, group in enumerate(distance):
        gwhere = f"{where} distance[{i}]"
        if not isinstance(group, dict):
            raise PositionError(gwhere, "must be an object with nodes, pay, visit")
        for key in group:
            if key not in ("nodes", "pay", "visit", "multiplier"):
                raise PositionError(gwhere, f"unknown key {key!r}")
        nodes = group.get("nodes")
        if not isinstance(nodes, list) or not nodes or any(n not in CATEGORIES for n in nodes):
            raise PositionError(gwhere, f"nodes must be a list of {', '.join(CATEGORIES)}")
        if seen & set(nodes):
            raise PositionError(gwhere, "a node type appears in two groups")
        seen |= set(nodes)
        if "pay" not in group or "visit" not in group:
            raise PositionError(gwhere, "needs pay and visit")
        groups.append(
            DistanceGroup(
                frozenset(nodes),
                _stops(group["pay"], gwhere, "pay"),
                _stops(group["visit"], gwhere, "visit"),
                _whole(group.get("multiplier", 1), gwhere, "multiplier", 1, MAX_MULTIPLIER),
            )
        )
    return tuple(groups)
