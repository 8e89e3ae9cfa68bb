"""The rules core. One module per family; each rule a small self-describing class."""

from wizard.rules.registry import Finding, Rule, Severity, all_rules, get_rule, register

__all__ = ["Finding", "Rule", "Severity", "all_rules", "get_rule", "register"]
