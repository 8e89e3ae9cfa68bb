"""A mechanism that raises surfaces as an internal-error finding naming it (not silence)."""

from __future__ import annotations

from helpers import LLAMA, ctx, model

from wizard.mechanisms import apply as A
from wizard.rules.registry import iter_findings


def test_broken_mechanism_is_a_finding(monkeypatch):
    t = model(LLAMA)
    c = ctx({"speculative_config": {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}},
            target=t, gpu="H100")

    def boom(*a, **k):
        raise RuntimeError("table missing")

    monkeypatch.setattr(A.MS, "route", boom)
    found = [f for f in iter_findings(c) if f.title == "internal error in mechanism route"]
    assert found and "table missing" in found[0].message
    assert c.mechanism_errors["route"].startswith("RuntimeError")
