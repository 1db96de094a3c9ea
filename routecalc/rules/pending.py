"""Seed games whose positions load but whose rule sets are not written yet.

The model already represents them (square boards, gauges, kinds), so their
positions are checked on load; solving or validating them is refused with a
clear error instead of a generic-rules answer that would be wrong.
"""

from .base import RuleSet


class PendingRules(RuleSet):
    implemented = False

    def __init__(self, name: str, kinds: frozenset[str], train_state_keys: frozenset[str] = frozenset(),
                 has_companies: bool = True):
        self.name = name
        self.kinds = kinds
        self.train_state_keys = train_state_keys
        self.has_companies = has_companies

    def parse_game_option(self, key, value, out, position):
        out[key] = value  # kept as given until the rule set reads it

    def catalogue(self, name, where):
        from ..trains import Train, all_stops
        return Train(name, all_stops(999))
