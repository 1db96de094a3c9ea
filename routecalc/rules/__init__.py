"""Rule sets by game name. A new game is a module here and one line below."""

from __future__ import annotations

from ..errors import PositionError, shown
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
        raise PositionError("game", f"unknown game {shown(game)} (known: {', '.join(RULES)})")
    return RULES[game]


def require_route_engine(rules: RuleSet) -> None:
    """Refuse a route solver or the route validator on a game they do not answer."""
    if not rules.route_engine:
        raise PositionError(
            "game",
            f"{rules.name} positions are answered by the game's own search: use "
            "routecalc.api.solve / validate, not a route solver or validator directly",
        )
