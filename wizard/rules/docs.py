"""Render the documentation of every registered rule (``python -m wizard rules``).

Everything comes from the rule's docstring (:meth:`~wizard.rules.registry.Rule.doc`) and its
class attributes; the hardware and vLLM version the examples assume come from the rule's case
file (:mod:`wizard.rules.cases`) when present. A rule's family is the folder of its module
(:attr:`~wizard.rules.registry.Rule.family`); the family's summary is the first line of that
folder's ``__init__`` docstring, its ids the ``ID_RANGES`` it declares. ``docs/rules.md`` is
generated with ``python -m wizard rules --format markdown > docs/rules.md``; a test asserts the
committed file equals :func:`render_rules` ``('markdown')``.
"""

from __future__ import annotations

import importlib
import json
import re
from typing import Any

from wizard.rules.cases import load_cases
from wizard.rules.registry import SECTIONS, Rule, all_rules

__all__ = ["family_docs", "render_rules", "rule_docs"]

_PHASE_WORDS = {"parse": "vLLM's argument parser (before any config exists)",
                "config": "vLLM's config construction (EngineArgs.create_engine_config, before loading weights)"}


def rule_docs(rule: Rule) -> dict[str, Any]:
    """One rule's documentation as a dict (the ``wizard rules --format json`` entries).

    ``why``, ``fix_safety`` and ``source`` are the docstring sections of those names; ``bad`` and
    ``good`` the commands of its Example and Use instead sections; ``details`` the whole
    docstring; ``example_*`` the context of the rule's case file (None / {} without one).
    """
    doc = type(rule).doc()
    cases = load_cases(rule.id)
    ctx = cases.context if cases is not None else None
    return {
        "id": rule.id,
        "title": rule.title,
        "severity": rule.severity.value,
        "versions": (rule.versions or "all") + (f" with its own {', '.join(rule.tables)}" if rule.tables else ""),
        "fields": list(rule.fields),
        "family": rule.family,
        "why": doc.prose("Why it matters"),
        "bad": doc.example,
        "good": doc.use_instead,
        "source": doc.prose("Source"),
        "fix_safety": doc.prose("Fix safety"),
        "phase": rule.phase,
        "example_hardware": dict(ctx.hardware) if ctx else {},
        "example_models": {k: v.model_dump() for k, v in ctx.models.items()} if ctx else {},
        "details": doc.text,
        "example_gpu": ctx.gpu if ctx else None,
        "example_version": ctx.vllm if ctx else None,
        "module": type(rule).__module__,
    }


def _text(r: dict[str, Any]) -> list[str]:
    out = [f"{r['id']}  [{r['severity']}]  {r['title']}",
           f"    versions: {r['versions']}   family: {r['family']}   fields: {', '.join(r['fields']) or '-'}"]
    for key, label in (("why", "why"), ("bad", "bad: "), ("good", "good:"), ("fix_safety", "fix safety"), ("source", "source")):
        if r[key]:
            out.append(f"    {label}: {' '.join(r[key].split())}" if key not in ("bad", "good") else f"    {label} {r[key]}")
    return out + [""]


def _ranges(pairs: tuple[tuple[str, str], ...]) -> str:
    """'SD040-SD079, SD760-SD779': the pairs sorted, adjacent ones joined."""
    merged: list[list[str]] = []
    for lo, hi in sorted(pairs):
        if merged and int(merged[-1][1][2:]) + 1 == int(lo[2:]):
            merged[-1][1] = hi
        else:
            merged.append([lo, hi])
    return ", ".join(f"{lo}-{hi}" for lo, hi in merged)


def family_docs(rules: list[Rule]) -> list[dict[str, Any]]:
    """One entry per family of ``rules``, by its lowest id: ``family``, ``ids`` (its ``ID_RANGES``
    as text), ``summary`` (its ``__init__`` docstring's first line, without the ranges) and
    ``rules`` (its rule ids, sorted)."""
    out: dict[str, dict[str, Any]] = {}
    for rule in sorted(rules, key=lambda r: r.id):
        fam = out.get(rule.family)
        if fam is None:
            pkg = importlib.import_module(f"wizard.rules.{rule.family}")
            summary = (pkg.__doc__ or "").strip().partition("\n")[0]
            fam = out[rule.family] = {"family": rule.family, "ids": _ranges(pkg.ID_RANGES),
                                      "summary": re.sub(r"\s*\(SD\d{3}-SD\d{3}(, SD\d{3}-SD\d{3})*\)\.?$", "", summary),
                                      "rules": []}
        fam["rules"].append(rule.id)
    return list(out.values())


def _markdown(rule: Rule, r: dict[str, Any]) -> list[str]:
    out = [f"## {r['id']}", "",
           f"**{r['title']}** — severity `{r['severity']}`, vLLM versions `{r['versions']}`, family [`{r['family']}`](#family-{r['family']}).", ""]
    if r["fields"]:
        out += ["Fields: " + ", ".join(f"`{f}`" for f in r["fields"]), ""]
    if r["phase"] in _PHASE_WORDS:
        out += [f"Mirrors a check in {_PHASE_WORDS[r['phase']]}; `wizard check --with-vllm` compares it with vLLM's verdict.", ""]
    sections = type(rule).doc().sections
    for heading in list(SECTIONS) + [h for h in sections if h not in SECTIONS]:
        if not sections.get(heading):
            continue
        out += [f"### {heading}", "", re.sub(r"^## ", "### ", sections[heading], flags=re.M), ""]
        if heading == "Use instead":
            extra = []
            if r["example_gpu"]:
                extra.append(f"examples run with `--gpu {r['example_gpu']}`")
            if r["example_version"]:
                extra.append(f"examples run with `--vllm-version {r['example_version']}`")
            if extra:
                out += ["(" + "; ".join(extra) + ")", ""]
    return out


def render_rules(fmt: str = "text") -> str:
    """Every registered rule with its docs as 'text', 'json' or 'markdown'.

    Raises:
        ValueError: unknown ``fmt``.
    """
    rules = all_rules()
    docs = [rule_docs(r) for r in rules]
    if fmt == "json":
        return json.dumps({"rules": docs}, indent=2) + "\n"
    if fmt == "text":
        return "\n".join(line for r in docs for line in _text(r))
    if fmt == "markdown":
        by_id = {r["id"]: r for r in docs}
        families = family_docs(rules)
        out = ["# SpecWizard rules", "",
               "Generated by `python -m wizard rules --format markdown > docs/rules.md`; do not edit by hand.", "",
               f"{len(docs)} rules in {len(families)} families. A rule's family is the folder of its module,",
               "`wizard/rules/<family>/sdNNN_<name>.py`; each family owns the id ranges its `__init__.py` declares.", "",
               "| family | ids | rules | about |", "|---|---|---|---|"]
        out += [f"| [{f['family']}](#family-{f['family']}) | {f['ids']} | {len(f['rules'])} | {f['summary']} |"
                for f in families]
        out.append("")
        for f in families:
            out += [f"## Family `{f['family']}`", "", f"{f['summary']} ({f['ids']}).", "",
                    "| id | severity | versions | title |", "|---|---|---|---|"]
            out += [f"| [{r['id']}](#{r['id'].lower()}) | {r['severity']} | {r['versions']} | {r['title']} |"
                    for r in map(by_id.get, f["rules"])]
            out.append("")
        for rule, r in zip(rules, docs):
            out += _markdown(rule, r)
        return "\n".join(out).rstrip("\n") + "\n"
    raise ValueError(f"unknown format {fmt!r}: use text, json or markdown")
