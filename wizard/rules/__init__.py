"""The rules core: ``registry`` (Rule, Finding, the registry), ``helpers`` (shared by several
rules), ``docs`` (renders the docstrings), ``cases`` (the tests/rules/SDNNN.yml format), and one
folder per family whose id range its ``__init__`` declares, one rule per module
(``kv_cache/sd200_drafter_kv_dtype_unusable.py``)."""

from wizard.rules.registry import Finding, Rule, Severity, all_rules, get_rule, register

__all__ = ["Finding", "Rule", "Severity", "all_rules", "get_rule", "register"]
