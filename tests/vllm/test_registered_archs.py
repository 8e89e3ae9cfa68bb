"""wizard.vllm.registry: the per-release model registry replayed from
wizard/data/vllm/history/registered_archs.json (scripts/gen_registered_archs_history.py)."""

from __future__ import annotations

import json

from wizard.vllm import releases
from wizard.vllm.registry import nearest_registry, registered_archs, registry_of


def test_every_minor_release_0_10_to_0_34_has_a_row():
    rows = releases.history("registered_archs")
    for m in range(10, 35):
        assert rows[f"0.{m}"]["release"] == f"0.{m}.0"
    assert rows["0.33"]["generated_from"].startswith("vllm-0.33.0")
    assert registered_archs("0.9") is None and registered_archs("0.35") is None and registered_archs("x") is None


def test_replay_matches_the_live_registry_of_checks_json():
    """checks.json ``architectures`` is ModelRegistry.get_supported_archs() of the release it was
    generated from (a patch release for some): the ast replay must give the same set."""
    for m in range(10, 35):
        data = json.loads(releases._root().joinpath(f"0.{m}", "checks.json").read_text(encoding="utf-8"))
        live = set(data.get("architectures") or ())
        if live:
            assert registered_archs(data["vllm_version"].split("+")[0]) == live, data["vllm_version"]


def test_speculative_names_per_release():
    assert "Eagle3Qwen3ForCausalLM" not in registered_archs("0.23")
    assert "Eagle3Qwen3ForCausalLM" in registered_archs("0.24")
    assert "MedusaModel" in registered_archs("0.32") and "MedusaModel" not in registered_archs("0.33")
    assert "PEagleDraftModel" in registered_archs("0.33") and "PEagleDraftModel" not in registered_archs("0.34")
    r = registry_of("0.32")
    assert "MLPSpeculatorPreTrainedModel" not in r.names and r.disabled["MLPSpeculatorPreTrainedModel"]["line"] == 706
    assert r.dict_of("MedusaModel") == "_SPECULATIVE_DECODING_MODELS"
    assert r.fallback_mode == "inspect_model_cls" and registry_of("0.10.0").fallback_mode == "architectures_append"
    assert registry_of("0.10.2").release == "0.10.2" and registry_of("0.11.2").release == "0.11.1"
    assert nearest_registry("0.35").release == "0.34.0" and nearest_registry("0.8").release == "0.10.0"
