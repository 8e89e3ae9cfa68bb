"""The rules package is laid out so a rule is found from its id.

``wizard/rules/<family>/sdNNN_<name>.py`` holds exactly one rule, ``SDNNN``, inside one of the id
ranges its family package declares (``ID_RANGES``); the families are :data:`FAMILIES` and a rule's
family (``Rule.family``) is its folder; shared helpers live in ``wizard/rules/helpers.py``;
no rule module imports another one; imports sit at module top (the rules core and the modules it
reads: resolve, context, versions, vllm/); no module there exceeds 600 lines.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from wizard.rules.registry import all_rules, rule_modules

WIZARD = Path(__file__).resolve().parents[2] / "wizard"
#: one taxonomy of rules: folder = family (issue 21)
FAMILIES = {"options", "method", "drafter", "kv_cache", "attention", "scheduling", "parallel", "model", "release",
            "memory", "combos", "launch"}
# (the oracle's child process, vllm/oracle_worker.py, imports vLLM lazily: a process boundary, not core)
CORE = sorted(WIZARD.glob("rules/**/*.py")) + sorted(p for p in WIZARD.glob("vllm/*.py") if p.name != "oracle_worker.py") + [
    WIZARD / "resolve.py", WIZARD / "context.py", WIZARD / "fixes.py"]


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def test_one_rule_per_module_named_by_its_id_in_its_familys_range():
    by_module = {}
    for rule in all_rules():
        by_module.setdefault(type(rule).__module__, []).append(rule.id)
    assert sorted(by_module) == rule_modules()
    for module, ids in by_module.items():
        assert len(ids) == 1, f"{module} holds {ids}"
        rid = ids[0]
        family, name = module.split(".")[2:]
        assert name.startswith(f"sd{rid[2:]}_"), f"{module}: module name does not start with sd{rid[2:]}_"
        ranges = importlib.import_module(f"wizard.rules.{family}").ID_RANGES
        assert any(lo <= rid <= hi for lo, hi in ranges), f"{rid} lives in family {family} ({ranges})"


def _family_folders() -> list[str]:
    return sorted(p.name for p in (WIZARD / "rules").iterdir() if (p / "__init__.py").is_file())


def test_family_ranges_do_not_overlap():
    ranges = []
    for family in _family_folders():
        declared = importlib.import_module(f"wizard.rules.{family}").ID_RANGES
        assert declared and all(len(r) == 2 and r[0] <= r[1] for r in declared), (family, declared)
        ranges += [(lo, hi, family) for lo, hi in declared]
    ranges.sort()
    assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:])), ranges


def test_the_family_of_every_rule_is_its_folder_and_there_are_twelve():
    rules = all_rules()
    for rule in rules:
        assert rule.family == type(rule).__module__.split(".")[2], rule.id
        assert not hasattr(rule, "topic"), f"{rule.id}: the family comes from the folder, not a topic"
    assert {r.family for r in rules} == FAMILIES
    assert set(_family_folders()) == FAMILIES


def test_no_rule_module_imports_another_rule_module():
    rule_mods = set(rule_modules())
    for path in [WIZARD / "rules" / "helpers.py", *(WIZARD.parent / (m.replace(".", "/") + ".py") for m in rule_mods)]:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = {node.module} | {f"{node.module}.{a.name}" for a in node.names}
                assert not names & rule_mods, f"{path.name} imports a rule module: {names & rule_mods}"


def test_imports_at_module_top_in_the_rules_core():
    late = []
    for path in CORE:
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                late += [f"{path.relative_to(WIZARD)}:{n.lineno}" for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not late, f"function-level imports: {late}"


def test_no_module_over_600_lines_in_the_rules_core():
    long = {str(p.relative_to(WIZARD)): n for p in CORE if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert not long, long


def test_a_rule_imported_alone_does_not_stand_for_the_whole_set():
    """Importing one rule module (e.g. for its docs) before the first check registered only that
    rule, and every later check ran it alone (SD503 went silent after an SD500 test)."""
    import subprocess
    import sys

    code = ("from wizard.rules.memory.sd500_does_not_fit import DoesNotFit\n"
            "from wizard.rules.registry import all_rules, rule_modules\n"
            "DoesNotFit.doc()\n"
            "print(len(all_rules()), len(rule_modules()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    n_rules, n_modules = map(int, out.stdout.split())
    assert n_rules == n_modules > 100
