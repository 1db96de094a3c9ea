"""Rule sets by game name. A new game is a module here and one line below."""

from __future__ import annotations

from ..errors import PositionError
from .base import RuleSet
from .c2c import C2CRules
from .cuba import CubaRules
from .generic import GenericRules
from .ireland import IrelandRules
from .lilliput import LilliputRules
from .xs import XSRules


def _registry() -> dict[str, RuleSet]:
    rules = [GenericRules(), IrelandRules(), LilliputRules(), C2CRules(), XSRules(), CubaRules()]
    return {r.name: r for r in rules}


RULES = _registry()


def get_rules(game) -> RuleSet:
    if not isinstance(game, str) or game not in RULES:
        raise PositionError("game", f"unknown game {game!r} (known: {', '.join(RULES)})")
    return RULES[game]


def require_implemented(rules: RuleSet) -> None:
    if not rules.implemented:
        raise PositionError("game", f"the {rules.name} rule set is not implemented yet: positions load, "
                                    "but routes cannot be solved or validated")
