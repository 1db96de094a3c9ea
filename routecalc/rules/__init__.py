"""Rule sets by game name. A new game is a module here and one line below."""

from __future__ import annotations

from ..errors import PositionError
from .base import RuleSet
from .generic import GenericRules
from .ireland import IrelandRules
from .pending import PendingRules


def _registry() -> dict[str, RuleSet]:
    rules: dict[str, RuleSet] = {"generic": GenericRules()}
    rules["18Ireland"] = IrelandRules()
    rules.setdefault("18Cuba", PendingRules("18Cuba", frozenset({"harbor", "sugar", "mill"}),
                                            frozenset({"obsolete", "wagon"})))
    rules.setdefault("18Lilliput", PendingRules("18Lilliput", frozenset({"harbor", "metropolis", "mildendo"}),
                                                frozenset({"obsolete"})))
    rules.setdefault("18C2C-D", PendingRules("18C2C-D", frozenset()))
    rules.setdefault("18XS", PendingRules("18XS", frozenset({"lc", "port"}), has_companies=False))
    return rules


RULES = _registry()


def get_rules(game) -> RuleSet:
    if not isinstance(game, str) or game not in RULES:
        raise PositionError("game", f"unknown game {game!r} (known: {', '.join(RULES)})")
    return RULES[game]


def require_implemented(rules: RuleSet) -> None:
    if not rules.implemented:
        raise PositionError("game", f"the {rules.name} rule set is not implemented yet: positions load, "
                                    "but routes cannot be solved or validated")
