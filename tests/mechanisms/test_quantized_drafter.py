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


def _dflash_fp8(tmp_path):
    cfg = {"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "hidden_size": 4096, "num_hidden_layers": 5,
           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288,
           "vocab_size": 151936, "max_position_embeddings": 40960, "torch_dtype": "bfloat16",
           "dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]},
           "quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized"}}
    return inspect_folder(make_model_dir(tmp_path / "dflash-fp8", cfg))


def test_weight_quantized_dflash_drafter_fails_before_031(tmp_path):
    """features.json drafter_quantization.dflash_fused_kv_ignores_quant: qwen3_dflash.py slices
    qkv_proj.weight for F.linear in 0.28-0.30; 0.31 runs quantized projections through quant_method."""
    d = _dflash_fp8(tmp_path)
    for rel in ("0.28", "0.29", "0.30"):
        v = check_quantized_drafter(rel, "dflash", drafter=d)
        assert v.quantization == "compressed-tensors" and any("F.linear" in e for e in v.errors), rel
    for rel in ("0.31", "0.32", "0.33"):
        assert not check_quantized_drafter(rel, "dflash", drafter=d).errors, rel


def test_deepseek_v4_dspark_drafter_takes_the_targets_quantization(tmp_path):
    base = {"model_type": "deepseek_v4", "hidden_size": 7168, "num_hidden_layers": 1, "num_attention_heads": 128,
            "num_key_value_heads": 128, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
            "v_head_dim": 128, "vocab_size": 129280, "quantization_config": {"quant_method": "mxfp4"}}
    v4 = inspect_folder(make_model_dir(tmp_path / "v4", {**base, "architectures": ["DeepseekV4DSparkModel"]}))
    v = check_quantized_drafter("0.32", "dspark", drafter=v4, target_quantization="modelopt")
    assert v.warnings and "modelopt" in v.warnings[0] and "mxfp4" in v.warnings[0]
    assert not check_quantized_drafter("0.32", "dspark", drafter=v4, target_quantization="mxfp4").warnings
    own = inspect_folder(make_model_dir(tmp_path / "q3", {**base, "architectures": ["Qwen3DSparkModel"]}))
    assert not check_quantized_drafter("0.32", "dspark", drafter=own, target_quantization="modelopt").warnings


def _gemma4_assistant(tmp_path, quant=None):
    """A Gemma 4 assistant (MTP) drafter checkpoint: gemma4_assistant, rewritten to gemma4_mtp."""
    cfg = {"architectures": ["Gemma4AssistantForCausalLM"], "model_type": "gemma4_assistant", "hidden_size": 1024,
           "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
           "vocab_size": 262144, "backbone_hidden_size": 5376}
    if quant:
        cfg["quantization_config"] = quant
    return inspect_folder(make_model_dir(tmp_path / ("a-q" if quant else "a"), cfg))


def test_drafter_layer_quant_table_per_release():
    from wizard.vllm import releases
    layer = lambda rel: releases.load(rel, "features.json")["facts"]["drafter_layer_quant"]  # noqa: E731
    assert layer("0.24")["Gemma4MTPModel"] == {"module": "vllm/model_executor/models/gemma4_mtp.py", "layer_quant": "none"}
    for rel in ("0.25", "0.28", "0.32", "0.33"):
        assert layer(rel)["Gemma4MTPModel"]["layer_quant"] == "draft", rel
    # 0.25's DeepSeek-V4 DSpark drafter module reads the target's vllm_config.quant_config
    assert layer("0.25")["DSparkDraftModel"]["layer_quant"] == "target"
    assert "Gemma4MTPModel" not in layer("0.20")  # 0.20 has no Gemma 4 MTP drafter
    assert layer("0.32")["Eagle3LlamaForCausalLM"]["layer_quant"] == "draft"


def test_024_builds_gemma4_mtp_layers_unquantized(tmp_path):
    """vllm PR 46426: 0.24's gemma4_mtp.py passes quant_config=None to every linear layer, so an
    NVFP4 assistant checkpoint cannot load; 0.25 builds them with get_draft_quant_config."""
    d = _gemma4_assistant(tmp_path, {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16})
    v = check_quantized_drafter("0.24.0", "mtp", drafter=d, target=object())
    assert v.release == "0.24.0" and len(v.errors) == 1
    assert "gemma4_mtp.py" in v.errors[0] and "quantization config" in v.errors[0] and ">= 0.25" in v.errors[0]
    assert not check_quantized_drafter("0.25.0", "mtp", drafter=d, target=object()).errors
    # the BF16 assistant, and MTP layers that are the target's own, are fine
    assert not check_quantized_drafter("0.24.0", "mtp", drafter=_gemma4_assistant(tmp_path), target=object()).errors
    assert not check_quantized_drafter("0.24.0", "mtp", drafter=d, target=d).errors
