"""Generic 18xx rules, 1830 style: the base rule set as it stands."""

from .base import RuleSet


class GenericRules(RuleSet):
    name = "generic"
