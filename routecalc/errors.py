"""Errors that name what is wrong.

Two kinds exist. :class:`PositionError` means the input cannot be read as a
position (bad JSON, a typo in a tile, a token list that does not fit its
cities). :class:`RouteViolation` means a proposed route breaks a rule; it
carries the rule's short name so callers can branch on it.
"""

from __future__ import annotations

import json
from typing import Any


def shown(value: Any) -> str:
    """``value`` of the input for a message, as its JSON wrote it where that is
    known: ``true``, ``false``, ``null``; a whole number written with a fraction
    part as written, ``1.0`` (:class:`routecalc.model.Whole`); a string quoted as
    every message quotes one; cut to 40 characters."""
    text = json.dumps(value) if value is None or isinstance(value, bool) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def article(noun: str) -> str:
    """``noun`` with its indefinite article: "a city", "an offboard", "an int"."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


class RoutecalcError(Exception):
    """Base of every error the engine raises on purpose."""


class PositionError(RoutecalcError, ValueError):
    """The input is not a valid position; ``where`` names the field or cell."""

    def __init__(self, where: str, message: str):
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # pickled whole (the service's worker processes send it back)
        return (PositionError, (self.where, self.message))


class RouteViolation(RoutecalcError):
    """A proposed route breaks a rule.

    ``rule`` is a stable short name (``track_reused``, ``reversal``, ...),
    ``route`` the index of the offending route, ``detail`` a sentence for
    people, ``choices`` the alternatives when the rule is ``ambiguous``.
    """

    def __init__(self, rule: str, detail: str, route: int | None = None, choices: list[Any] | None = None):
        self.rule = rule
        self.detail = detail
        self.route = route
        self.choices = choices or []
        where = f"route {route}: " if route is not None else ""
        super().__init__(f"{where}{rule}: {detail}")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (RouteViolation, (self.rule, self.detail, self.route, self.choices))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule, "detail": self.detail, "route": self.route}
        if self.choices:
            out["choices"] = self.choices
        return out


class TimeLimitError(PositionError):
    """The time limit (or a cancel) stopped work that has no partial answer
    (reading, compiling, building a model): ``where`` is ``time_limit``."""

    def __init__(self, message: str):
        super().__init__("time_limit", message)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (TimeLimitError, (self.message,))
