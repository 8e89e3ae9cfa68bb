"""Quantized drafters per release: inherited quantization, mismatches, device capability,
draft_lm_head_quantization (0.33)."""

from __future__ import annotations

from factory import fixture_config, make_model_dir
from wizard.hardware.catalog import lookup
from wizard.mechanisms.quantized_drafter import check_quantized_drafter, drafter_quantization
from wizard.models.local import inspect_folder


def _eagle3(tmp_path, quant=None, lm_head=False):
    cfg = dict(fixture_config("sgl-project--SpecForge", "configs/llama3-8B-eagle3.json"))
    if quant:
        cfg["quantization_config"] = quant
    h, v = cfg["hidden_size"], cfg.get("draft_vocab_size") or cfg["vocab_size"]
    tensors = {"midlayer.self_attn.q_proj.weight": (8, 8)}
    if lm_head:
        tensors["lm_head.weight"] = (4, 4)
    return inspect_folder(make_model_dir(tmp_path / "d", cfg, tensors))


def test_mtp_inherits_the_targets_quantization():
    assert drafter_quantization("0.32", "mtp", target_quantization="fp8") == "fp8"
    assert drafter_quantization("0.32", "eagle3", target_quantization="fp8") is None


def test_fp8_checkpoint_drafter_with_other_quantization_is_refused(tmp_path):
    d = _eagle3(tmp_path, {"quant_method": "fp8", "activation_scheme": "dynamic"})
    assert d.quant_method == "fp8"
    v = check_quantized_drafter("0.32", "eagle3", drafter=d, speculative_quantization="awq")
    assert v.errors and "does not match" in v.errors[0]
    ok = check_quantized_drafter("0.32", "eagle3", drafter=d)
    assert ok.quantization == "fp8" and not ok.errors


def test_device_below_the_methods_minimum_capability(tmp_path):
    d = _eagle3(tmp_path, {"quant_method": "modelopt", "quant_algo": "FP8"})
    v100 = lookup("V100")
    v = check_quantized_drafter("0.33", "eagle3", drafter=d, hardware=v100)
    assert any("compute capability 8.0" in e for e in v.errors)
    assert not check_quantized_drafter("0.33", "eagle3", drafter=d, hardware=lookup("H100")).errors


def test_draft_lm_head_quantization_only_in_033_on_v2_for_shared_heads(tmp_path):
    d = _eagle3(tmp_path)
    assert any("does not exist in vLLM 0.32" in e for e in
               check_quantized_drafter("0.32", "eagle3", drafter=d, draft_lm_head_quantization="fp8").errors)
    assert not check_quantized_drafter("0.33", "eagle3", drafter=d, draft_lm_head_quantization="fp8").errors
    assert any("not supported for method 'draft_model'" in e for e in
               check_quantized_drafter("0.33", "draft_model", draft_lm_head_quantization="fp8").errors)
    assert any("Model Runner V1" in e for e in
               check_quantized_drafter("0.33", "mtp", draft_lm_head_quantization="nvfp4", runner="v1").errors)
    assert check_quantized_drafter("0.33", "eagle3", draft_lm_head_quantization="int4").errors
