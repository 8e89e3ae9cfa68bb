"""Method routing and feature checks per release (tables generated from each release's code)."""

from __future__ import annotations

import pytest

from wizard.mechanisms.method_support import (
    accepted_methods, feature_support, removed_methods, route,
)

RELEASES = ["0.28", "0.29", "0.30", "0.31", "0.32", "0.33"]


@pytest.mark.parametrize("rel", RELEASES)
def test_eagle3_on_a_dense_target_gets_a_proposer(rel):
    r = route(rel, "eagle3")
    assert r.ok and r.accepted and r.runner == "v2" and r.proposer == "EagleSpeculator"


def test_mlp_speculator_passes_032_validation_but_has_no_proposer():
    r = route("0.32", "mlp_speculator")
    assert r.accepted and r.runner == "v1"  # V2 lists it as unsupported
    assert r.stage == "proposer" and "Unknown speculative decoding method: mlp_speculator" in r.error
    assert r.v2_blockers == ("speculative method 'mlp_speculator'",)


def test_medusa_and_mlp_speculator_removed_in_033():
    assert set(removed_methods("0.32", "0.33")) >= {"medusa", "mlp_speculator"}
    r = route("0.33", "medusa")
    assert not r.accepted and r.stage == "config"
    assert route("0.32", "medusa").proposer == "MedusaProposer"


def test_suffix_runs_on_v1():
    r = route("0.32", "suffix")
    assert r.ok and r.runner == "v1" and r.proposer == "SuffixDecodingProposer"


def test_dspark_needs_v2_and_heterogeneous_vocab_forces_v1():
    assert route("0.32", "dspark").proposer == "DSparkSpeculator"
    r = route("0.32", "dspark", heterogeneous_vocab=True)
    assert r.runner == "v1" and r.stage == "runner" and "dspark" in r.error


def test_mtp_aliases_and_multi_module():
    r = route("0.32", "deepseek_mtp")
    assert r.method == "mtp" and r.proposer == "MTPSpeculator" and r.notes
    multi = route("0.32", "mtp", draft_model_type="deepseek_mtp", num_nextn_predict_layers=3, num_speculative_tokens=3)
    assert multi.proposer == "MultiModuleMTPSpeculator"
    assert route("0.32", "mtp", draft_model_type="gemma4_mtp").proposer == "Gemma4Speculator"


def test_eagle_parallel_drafting_falls_back_to_v1():
    r = route("0.32", "eagle", parallel_drafting=True)
    assert r.runner == "v1" and r.proposer == "EagleProposer"


def test_cpu_is_always_v1():
    r = route("0.32", "eagle3", platform="cpu")
    assert r.runner == "v1" and r.proposer == "EagleProposer"


def test_028_moe_targets_outside_the_v2_list_run_v1():
    assert route("0.28", "eagle3", target_is_moe=True, target_architectures=["MixtralForCausalLM"]).runner == "v1"
    assert route("0.28", "eagle3", target_is_moe=True, target_architectures=["Qwen2MoeForCausalLM"]).runner == "v2"


def test_unknown_method_is_a_config_error():
    r = route("0.33", "eagle4")
    assert not r.accepted and r.stage == "config" and "eagle4" in r.error
    assert "eagle3" in accepted_methods("0.33")


def test_feature_checks_name_the_source():
    lora = feature_support("0.32", "lora")
    assert lora.verdict == "errors"
    assert any("max_num_batched_tokens" in c.message for c in lora.checks)
    assert all(c.where.startswith("vllm/") for c in lora.checks)
    dyn = feature_support("0.32", "dynamic_speculation")
    assert any("num_speculative_tokens_per_batch_size" in c.message for c in dyn.checks)
    assert feature_support("0.32", "no-such-feature-xyz").verdict == "none"
