"""Unit tests of the drafter / KV-cache / combination rules (SD200-SD308): both sides of each
condition, version bounds, and that each first fix removes its finding."""

from __future__ import annotations

from pathlib import Path

from factory import fixture_config, make_model_dir
from test_public_bugs import dspark_drafter, eagle3_drafter, hw, mla_target, run, spec, tiny_llama_cfg
from wizard.config import apply_patch
from wizard.hardware.catalog import lookup


def rules(report, rule: str, severity: str | None = None):
    return [f for f in report.findings if f.rule == rule and (severity is None or f.severity.value == severity)]


def refix(ctx, finding, **kw):
    """Apply the finding's first fix and re-check."""
    fixed = apply_patch(ctx.config, finding.fixes[0])
    return run(fixed.to_dict(), **kw)


# ---- SD200 drafter KV dtype -----------------------------------------------------------------

def test_noncausal_fp8_quiet_on_032_with_fp8_noncausal_backend(tmp_path: Path):
    tgt = mla_target(tmp_path / "glm")
    d = dspark_drafter(tmp_path / "dspark")
    data = {"model": str(tgt), "kv_cache_dtype": "fp8", "speculative_config": spec("dspark", d, 7)}
    _, r = run(data, version="0.32.0", gpu=lookup("B300"))
    # allowed, and said why (issue #23: it passed without a sentence): what vLLM changed, sourced
    allowed = rules(r, "SD200")
    assert [f.severity.value for f in allowed] == ["info"] and not allowed[0].fixes
    assert "allowed" in allowed[0].message and "0.32" in allowed[0].message and "PR #48787" in allowed[0].message
    assert "triton_attn.py" in allowed[0].message
    _, r = run(data, version="0.32.0")  # no hardware: at most info
    assert [f.severity.value for f in rules(r, "SD200")] == ["info"]
    _, r = run(data, version="0.32.0", gpu=hw("V100", (7, 0)))  # SM 7.0: no non-causal fp8 backend
    assert rules(r, "SD200", "error")


def test_drafter_kv_fix_keeps_target_dtype_and_clears(tmp_path: Path):
    tgt = mla_target(tmp_path / "glm")
    d = dspark_drafter(tmp_path / "dspark")
    ctx, r = run({"model": str(tgt), "kv_cache_dtype": "fp8_ds_mla", "speculative_config": spec("dspark", d, 7)}, version="0.33.0")
    f = rules(r, "SD200", "error")[0]
    assert f.fixes[0].set == {"speculative_config.kv_cache_dtype": "bfloat16"}  # DeepSeek-V3 config is bf16
    ctx2, r2 = refix(ctx, f, version="0.33.0")
    assert ctx2.config.kv_cache_dtype == "fp8_ds_mla" and not rules(r2, "SD200")


def test_drafter_kv_old_version_offers_global_fix(tmp_path: Path):
    tgt = mla_target(tmp_path / "glm")
    d = dspark_drafter(tmp_path / "dspark")
    _, r = run({"model": str(tgt), "kv_cache_dtype": "fp8_ds_mla", "speculative_config": spec("dspark", d, 7)}, version="0.27.0")
    f = rules(r, "SD200", "error")[0]
    assert "no speculative_config.kv_cache_dtype" in f.message
    assert f.fixes[0].set == {"kv_cache_dtype": "auto"}


def test_mla_drafter_may_inherit_ds_mla(tmp_path: Path):
    tgt = mla_target(tmp_path / "dsv3", "DeepseekV3ForCausalLM", "deepseek_v3")
    _, r = run({"model": str(tgt), "kv_cache_dtype": "fp8_ds_mla", "speculative_config": spec("mtp", None, 1)})
    assert not rules(r, "SD200")


def test_draft_only_fp8_on_gpu_without_fp8(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "llama", tiny_llama_cfg())
    d = eagle3_drafter(tmp_path / "eagle3", eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    ctx, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d, 3, kv_cache_dtype="fp8")}, gpu=lookup("V100"))
    f = rules(r, "SD200", "error")[0]
    _, r2 = refix(ctx, f, gpu=lookup("V100"))
    assert not rules(r2, "SD200")


# ---- target-side KV ------------------------------------------------------------------------

def test_mla_layout_on_dense_target_and_fix(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "qwen", fixture_config("Qwen--Qwen3-8B"))
    ctx, r = run({"model": str(tgt), "kv_cache_dtype": "nvfp4_ds_mla"})
    f = rules(r, "SD203", "error")[0]
    _, r2 = refix(ctx, f)
    assert not rules(r2, "SD203")
    _, r3 = run({"model": str(mla_target(tmp_path / "glm")), "kv_cache_dtype": "fp8_ds_mla"})
    assert not rules(r3, "SD203")


def test_cpu_kv_dtypes(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "qwen", fixture_config("Qwen--Qwen3-8B"))
    cpu = hw("CPU", None, vendor="cpu", isa="avx2")
    _, r = run({"model": str(tgt), "kv_cache_dtype": "nvfp4"}, gpu=cpu)
    assert rules(r, "SD204", "error")
    _, r = run({"model": str(tgt), "kv_cache_dtype": "fp8"}, gpu=cpu)
    assert rules(r, "SD204", "error")
    _, r = run({"model": str(tgt), "kv_cache_dtype": "fp8"}, gpu=hw("CPU", None, vendor="cpu", isa="avx512"))
    assert not rules(r, "SD204")
    _, r = run({"model": str(tgt), "kv_cache_dtype": "bfloat16"}, gpu=cpu)
    assert not rules(r, "SD204")


def test_fp8_kv_gpu_without_fp8_quiet_without_hardware(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "qwen", fixture_config("Qwen--Qwen3-8B"))
    _, r = run({"model": str(tgt), "kv_cache_dtype": "fp8"})
    assert not rules(r, "SD201")
    _, r = run({"model": str(tgt), "kv_cache_dtype": "fp8"}, gpu=lookup("H100"))
    assert not rules(r, "SD201")
    _, r = run({"model": str(tgt), "kv_cache_dtype": "fp8"}, gpu=lookup("V100"))
    assert rules(r, "SD201", "error")


def test_e5m2_with_flash_attn_and_plain_checkpoint(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "qwen", fixture_config("Qwen--Qwen3-8B"))
    _, r = run({"model": str(tgt), "kv_cache_dtype": "fp8_e5m2"})
    assert not rules(r, "SD202")  # bf16 checkpoint, backend not pinned
    _, r = run({"model": str(tgt), "kv_cache_dtype": "fp8_e5m2", "attention_backend": "FLASH_ATTN"})
    assert rules(r, "SD202", "error")


# ---- drafter checkpoints ----------------------------------------------------------------------

def test_reduced_vocab_without_d2t(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "llama", tiny_llama_cfg(vocab=1024))
    d = eagle3_drafter(tmp_path / "e3", vocab=1024, draft_vocab=256, d2t=False, eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d)})
    assert rules(r, "SD221", "error")
    d2 = eagle3_drafter(tmp_path / "e3ok", vocab=1024, draft_vocab=256, eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d2)})
    assert not rules(r, "SD221") and not rules(r, "SD222") and not rules(r, "SD220")


def test_shared_embedding_width_mismatch(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "llama", tiny_llama_cfg(hidden=128))
    d = eagle3_drafter(tmp_path / "e3", hidden=64, target_hidden_size=128, eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d)})
    assert rules(r, "SD222", "error") and not rules(r, "SD223")


def test_target_hidden_size_mismatch(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "llama", tiny_llama_cfg(hidden=128))
    d = eagle3_drafter(tmp_path / "e3", hidden=128, target_hidden_size=256, eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d)})
    assert rules(r, "SD223", "error")


def test_aux_layers_missing_out_of_range_and_count(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "llama", tiny_llama_cfg(layers=4))
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", eagle3_drafter(tmp_path / "a"))})
    assert rules(r, "SD224", "info")  # default (2, L//2, L-3) = the EAGLE-3 reference trainer's layers
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", eagle3_drafter(tmp_path / "b", eagle_aux_hidden_state_layer_ids=[1, 2, 4]))})
    assert rules(r, "SD224", "error")
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", eagle3_drafter(tmp_path / "c", eagle_aux_hidden_state_layer_ids=[0, 1, 2, 3]))})
    assert rules(r, "SD225", "error")
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", eagle3_drafter(
        tmp_path / "d", eagle_aux_hidden_state_layer_ids=[0, 1, 2, 3], num_aux_hidden_states=4))})
    assert not rules(r, "SD225") and not rules(r, "SD224")


def test_eagle3_target_interface_by_version(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "moe", fixture_config("Qwen--Qwen3-30B-A3B"))
    d = eagle3_drafter(tmp_path / "e3", hidden=2048, vocab=151936, lm_head=False, eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    data = {"model": str(tgt), "speculative_config": spec("eagle3", d)}
    assert not rules(run(data, version="0.32.0")[1], "SD228")
    g = make_model_dir(tmp_path / "gemma3", fixture_config("google--gemma-3-27b-it"))
    data = {"model": str(g), "speculative_config": spec("eagle3", d)}
    assert rules(run(data, version="0.32.0")[1], "SD228", "error")
    assert rules(run(data, version="0.33.0")[1], "SD228", "error")  # 0.33.0's own table (generated since 2026-12-04)


def test_mtp_weights_missing(tmp_path: Path):
    cfg = fixture_config("deepseek-ai--DeepSeek-V3")
    cfg.update(num_hidden_layers=2, hidden_size=64, vocab_size=256)
    tensors = {"model.embed_tokens.weight": (256, 64), "model.layers.0.input_layernorm.weight": (64,),
               "model.layers.1.input_layernorm.weight": (64,), "lm_head.weight": (256, 64)}
    tgt = make_model_dir(tmp_path / "dsv3-nomtp", cfg, tensors)
    _, r = run({"model": str(tgt), "speculative_config": spec("mtp", None, 1)})
    assert rules(r, "SD230", "error")
    tensors["model.layers.2.input_layernorm.weight"] = (64,)
    tgt2 = make_model_dir(tmp_path / "dsv3-mtp", cfg, tensors)
    _, r = run({"model": str(tgt2), "speculative_config": spec("mtp", None, 1)})
    assert not rules(r, "SD230")


def test_dflash_mask_token(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "qwen", fixture_config("Qwen--Qwen3-8B"))
    dcfg = fixture_config("Qwen--Qwen3-8B")
    dcfg.update(architectures=["DFlashDraftModel"], num_hidden_layers=2)
    d = make_model_dir(tmp_path / "dflash", dcfg)
    _, r = run({"model": str(tgt), "speculative_config": spec("dflash", d, 7)})
    assert rules(r, "SD231", "error")


# ---- combinations ------------------------------------------------------------------------------

def test_multimodal_draft_model_032_warns_and_text_only_fix(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "vl", {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
                                            "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                                            "vocab_size": 512, "vision_config": {"depth": 2}})
    d = make_model_dir(tmp_path / "small", tiny_llama_cfg())
    ctx, r = run({"model": str(tgt), "speculative_config": spec("draft_model", d, 3)}, version="0.32.0")
    f = rules(r, "SD300", "warning")[0]
    _, r2 = refix(ctx, f, version="0.32.0")
    assert not rules(r2, "SD300")


def test_mtp_pp_quiet_on_032(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "dsv3", fixture_config("deepseek-ai--DeepSeek-V3"))
    _, r = run({"model": str(tgt), "pipeline_parallel_size": 2, "speculative_config": spec("mtp", None, 1)}, version="0.32.0")
    assert not rules(r, "SD301")


def test_request_sampling_defaults(tmp_path: Path):
    tgt = make_model_dir(tmp_path / "llama", tiny_llama_cfg())
    base = {"model": str(tgt), "speculative_config": spec("ngram", None, 3, prompt_lookup_min=2, prompt_lookup_max=5)}
    _, r = run(base)
    assert [f.severity.value for f in rules(r, "SD307")] == ["info"]
    ctx, r = run({**base, "override_generation_config": {"min_p": 0.05, "temperature": 0.7}})
    f = rules(r, "SD307", "error")[0]
    ctx2, r2 = refix(ctx, f)
    assert ctx2.config.extra_args["override_generation_config"] == {"temperature": 0.7}
    assert not rules(r2, "SD307", "error")
