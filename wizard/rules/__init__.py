"""The rules core: ``registry`` (Rule, Finding, the registry), ``helpers`` (shared by several
rules), ``docs`` (renders the docstrings), ``cases`` (the tests/rules/SDNNN.yml format), and one
folder per family whose id ranges its ``__init__`` declares (``ID_RANGES``), one rule per module
(``kv_cache/sd200_drafter_kv_dtype_unusable.py``); a rule's family is its folder
(:attr:`~wizard.rules.registry.Rule.family`)."""

from wizard.rules.registry import Finding, Rule, Severity, all_rules, get_rule, register

__all__ = ["Finding", "Rule", "Severity", "all_rules", "get_rule", "register"]
