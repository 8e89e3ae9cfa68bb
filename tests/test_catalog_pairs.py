"""Issue 7: `python -m wizard check -- vllm serve <catalog id> --speculative-config '...'` works
offline for every catalog pair (dedicated drafters with their verifier, and small same-family
models with the targets they can draft for)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from wizard import api
from wizard.cli import main
from wizard.models import catalog


def _pairs() -> list[tuple[str, str, str]]:
    out = []
    for e in catalog.entries(role="drafter"):
        if e.verifier:
            out.append((e.verifier, e.id, (e.methods or ("draft_model",))[0]))
        for t in e.draft_for:
            out.append((t, e.id, "draft_model"))
    return out


PAIRS = _pairs()


def test_catalog_has_pairs():
    assert len(PAIRS) >= 30  # 25 dedicated drafters + small same-family draft models
    assert {m for _, _, m in PAIRS} >= {"eagle", "eagle3", "draft_model"}


@pytest.mark.parametrize("target,drafter,method", PAIRS, ids=[f"{d}->{t}" for t, d, _ in PAIRS])
def test_every_catalog_pair_checks_offline_without_error(target, drafter, method, capsys):
    spec = json.dumps({"method": method, "model": drafter, "num_speculative_tokens": 3})
    rc = main(["check", "--offline", "--format", "json", "--", "vllm", "serve", target, "--speculative-config", spec])
    data = json.loads(capsys.readouterr().out)
    if method == "mlp_speculator":  # listed so a check names its fate: no release in the tables runs it
        errors = {f["rule"] for f in data["findings"] if f["severity"] == "error"}
        assert rc == 1 and errors and errors <= {"SD760", "SD761", "SD040", "SD057"}, data["findings"]
        return
    assert rc == 0, [f for f in data["findings"] if f["severity"] == "error"]
    assert data["verdict"] in ("ok", "warning")
    assert not [f for f in data["findings"] if f["rule"] == "SD009"], "a catalog id did not resolve offline"
    # the resolved models are the catalog's, exactly like local folders
    cfg = api.load(command=["vllm", "serve", target, "--speculative-config", spec])
    assert catalog.lookup(cfg.model) is not None and catalog.lookup(drafter) is not None


def test_cli_subprocess_offline_for_a_pair():
    target, drafter, method = next(p for p in PAIRS if p[2] == "eagle3")
    spec = json.dumps({"method": method, "model": drafter, "num_speculative_tokens": 3})
    proc = subprocess.run(
        [sys.executable, "-m", "wizard", "check", "--format", "json", "--", "vllm", "serve", target,
         "--speculative-config", spec],
        capture_output=True, text=True, timeout=120, env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] in ("ok", "warning")
