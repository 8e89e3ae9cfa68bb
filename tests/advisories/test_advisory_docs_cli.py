"""``python -m wizard advisories`` and the generated docs/advisories.md."""

from __future__ import annotations

import json
from pathlib import Path

from wizard.advisories import advisories, render_advisories
from wizard.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "advisories.md"


def test_docs_are_in_sync():
    assert DOC.read_text(encoding="utf-8") == render_advisories("markdown"), (
        "regenerate: python -m wizard advisories --format markdown > docs/advisories.md")


def test_cli_lists_every_advisory_as_json(capsys):
    assert main(["advisories", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["id"] for a in data["advisories"]] == [a.id for a in advisories()]
    assert sum(data["by_severity"].values()) == len(advisories())
    assert data["skipped_files"] == {}
    first = data["advisories"][0]
    assert {"affected", "fixed", "match", "sources", "severity", "examples"} <= set(first)


def test_cli_text_and_markdown(capsys):
    assert main(["advisories"]) == 0
    text = capsys.readouterr().out
    for a in advisories():
        assert a.id in text and a.primary_source in text
    assert main(["advisories", "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("# Advisories")


def test_check_json_carries_advisory_findings(capsys):
    a = next(a for a in advisories() if not any(e.models for e in a.examples))
    ex = next(e for e in a.examples if e.expect == "match")
    import shlex

    argv = ["check", "--format", "json", "--offline", "--vllm-version", ex.vllm_version]
    if ex.gpu:
        argv += ["--gpu", ex.gpu]
    code = main(argv + ["--", *shlex.split(ex.command)])
    data = json.loads(capsys.readouterr().out)
    hits = [f for f in data["findings"] if f["rule"] == a.id]
    assert hits and hits[0]["severity"] == a.severity and a.primary_source in hits[0]["message"]
    assert code == (1 if data["verdict"] == "error" else 0)
