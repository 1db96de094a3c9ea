"""Generic 18xx rules, 1830 style: the base rule set as it stands."""

from .base import RuleSet


class GenericRules(RuleSet):
    name = "generic"
    train_names = ("2", "3", "4", "5", "6", "7", "8", "D", "2+1", "3+1", "4+4", "5+5", "4E", "6E", "8E")
