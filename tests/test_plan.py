"""Planner unit tests: KV bytes per token of real configs (hand arithmetic shown), vLLM's
block/page capacity arithmetic, the speed-up formula, the CLI and the SD5xx rules."""

from __future__ import annotations

import json
import math

import pytest

from factory import HF, fixture_config, make_tiny_llama
from wizard import api
from wizard.cli import main
from wizard.config import Patch, apply_patch, config_from_dict
from wizard.context import CheckContext
from wizard.hardware.catalog import lookup
from wizard.plan import (
    GiB,
    expected_tokens_per_step,
    kv_layout,
    model_info_from_config,
    plan,
    render_text,
    speedup_table,
)
from wizard.vllm.versions import default_version


def info(name: str):
    """ModelInfo from the fixture folder via the model inspector, else from config.json."""
    try:
        from wizard.models.resolve import resolve_model

        return resolve_model(str(HF / name), allow_hub=False)
    except Exception:  # inspector not available: the same facts from the config fields
        return model_info_from_config(fixture_config(name), id=name)


def ctx_for(cfg_dict, target, drafter=None, hardware=None):
    cfg = config_from_dict(cfg_dict)
    return CheckContext(config=cfg, version=default_version(), target=target, drafter=drafter, hardware=hardware)


# ---- KV bytes per token of real configs --------------------------------------------------------

def test_llama31_8b_kv_bytes_per_token():
    m = info("meta-llama--Llama-3.1-8B-Instruct")
    # 32 layers, 8 KV heads, head_dim 4096/32 = 128, bf16 (2 bytes):
    # 2 (K and V) x 8 x 128 x 2 = 4096 bytes per layer; x 32 layers = 131072 bytes/token
    lay = kv_layout(m, "auto", dtype="bfloat16")
    assert lay.layer_bytes_per_token == 2 * 8 * 128 * 2 == 4096
    assert lay.bytes_per_token == 4096 * 32 == 131072
    # fp8: 1 byte per element -> 2 x 8 x 128 x 1 x 32 = 65536
    assert kv_layout(m, "fp8", dtype="bfloat16").bytes_per_token == 65536
    # TP 2: 8 / 2 = 4 KV heads per rank -> 2 x 4 x 128 x 2 x 32 = 65536
    assert kv_layout(m, "auto", dtype="bfloat16", tp=2).bytes_per_token == 65536
    # TP 16 > 8 KV heads: vLLM replicates, 1 head per rank -> 2 x 1 x 128 x 2 x 32 = 16384
    assert kv_layout(m, "auto", dtype="bfloat16", tp=16).bytes_per_token == 16384
    # PP 2: the rank holds 32 / 2 = 16 layers -> 4096 x 16 = 65536
    assert kv_layout(m, "auto", dtype="bfloat16", pp=2).bytes_per_token == 65536


def test_deepseek_v3_mla_kv_bytes_per_token():
    m = info("deepseek-ai--DeepSeek-V3")
    # MLA: one latent of kv_lora_rank 512 + qk_rope_head_dim 64 = 576 elements per layer and token
    # bf16: 576 x 2 = 1152 bytes per layer; x 61 layers = 70272 bytes/token
    lay = kv_layout(m, "auto", dtype="bfloat16")
    assert lay.attention == "mla"
    assert lay.layer_bytes_per_token == (512 + 64) * 2 == 1152
    assert lay.bytes_per_token == 1152 * 61 == 70272
    # MLA latents are not split by TP (num_kv_heads=1, max_tp_shards=1): TP 8 -> same 70272
    assert kv_layout(m, "auto", dtype="bfloat16", tp=8).bytes_per_token == 70272
    # fp8: 576 x 1 x 61 = 35136
    assert kv_layout(m, "fp8", dtype="bfloat16").bytes_per_token == 576 * 61 == 35136
    # fp8_ds_mla: DeepSeek's packed row = 512 fp8 NoPE + 4 fp32 scales (16) + 64 bf16 RoPE (128)
    # = 656 bytes per layer; x 61 = 40016
    assert kv_layout(m, "fp8_ds_mla", dtype="bfloat16").bytes_per_token == (512 + 16 + 128) * 61 == 40016


def test_deepseek_v3_mtp_drafter_has_one_mla_layer():
    m = info("deepseek-ai--DeepSeek-V3")
    ctx = ctx_for({"model": "deepseek-ai/DeepSeek-V3", "tensor_parallel_size": 8, "max_model_len": 32768,
                   "speculative_config": {"method": "mtp", "num_speculative_tokens": 1}}, m, m, lookup("H200x8"))
    p = plan(ctx)
    # num_nextn_predict_layers = 1 -> one MLA layer: (512 + 64) x 2 = 1152 bytes/token
    assert p.kv_bytes_per_token == {"target": 70272, "drafter": 1152}
    assert p.weights_bytes["drafter"] == 0  # MTP weights are inside the target checkpoint


def test_gpt_oss_120b_sliding_window_layers():
    m = info("openai--gpt-oss-120b")
    # 36 layers alternating sliding (window 128) / full; 8 KV heads, head_dim 64, bf16:
    # 2 x 8 x 64 x 2 = 2048 bytes per layer
    lay = kv_layout(m, "auto", dtype="bfloat16")
    assert (lay.full_layers, lay.sliding_layers, lay.sliding_window) == (18, 18, 128)
    assert lay.layer_bytes_per_token == 2 * 8 * 64 * 2 == 2048
    assert lay.full_bytes_per_token == 2048 * 18 == 36864
    assert lay.sliding_bytes_per_token == 2048 * 18 == 36864
    assert lay.bytes_per_token == 73728


def test_gpt_oss_120b_hybrid_capacity_mirrors_vllm_groups():
    m = info("openai--gpt-oss-120b")
    ctx = ctx_for({"model": "openai/gpt-oss-120b", "max_model_len": 131072, "max_num_batched_tokens": 8192,
                   "kv_cache_memory_bytes": 10 * GiB}, m, None, lookup("H100"))
    p = plan(ctx)
    # vLLM hybrid allocator: 18 full + 18 sliding layers -> 2 groups of 18 layers (equal page size)
    # block row = 18 layers x 16 tokens x 2048 bytes = 589824 bytes
    row = 18 * 16 * 2048
    num_blocks = (10 * GiB) // row                                  # 18204
    # per request: full group cdiv(131072, 16) = 8192 blocks; sliding group: window - 1 + in-flight
    # tokens (async scheduling on CUDA: 2 batches x 8192) = 127 + 16384 = 16511 -> cdiv(16511,16) + 1
    per_req = math.ceil(131072 / 16) + (math.ceil((128 - 1 + 2 * 8192) / 16) + 1)   # 8192 + 1033 = 9225
    assert (p.block_size, p.num_blocks, p.blocks_per_request) == (16, num_blocks, per_req)
    assert p.kv_capacity_tokens == int(num_blocks / per_req * 131072)
    assert p.kv_cache_bytes == 10 * GiB


def test_qwen3_30b_a3b_kv_bytes_per_token():
    m = info("Qwen--Qwen3-30B-A3B")
    # 48 layers, 4 KV heads, head_dim 128, bf16: 2 x 4 x 128 x 2 = 2048 per layer; x 48 = 98304
    lay = kv_layout(m, "auto", dtype="bfloat16")
    assert lay.bytes_per_token == 2 * 4 * 128 * 2 * 48 == 98304
    # TP 4: one KV head per rank -> 2 x 1 x 128 x 2 x 48 = 24576
    assert kv_layout(m, "auto", dtype="bfloat16", tp=4).bytes_per_token == 24576


def test_cross_layer_sharing_and_mamba_are_counted_as_documented():
    raw = {"num_hidden_layers": 10, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
           "hidden_size": 512, "num_kv_shared_layers": 4}
    m = model_info_from_config(raw)
    lay = kv_layout(m, "auto", dtype="bfloat16")
    # 10 - 4 shared = 6 layers with KV: 2 x 2 x 64 x 2 x 6 = 3072
    assert (lay.layers, lay.shared_layers, lay.bytes_per_token) == (6, 4, 3072)
    hybrid = model_info_from_config({**raw, "num_kv_shared_layers": 0,
                                     "layer_types": ["linear_attention"] * 3 + ["full_attention"]
                                     + ["linear_attention"] * 3 + ["full_attention"] * 3})
    lay = kv_layout(hybrid, "auto", dtype="bfloat16")
    # 4 full-attention layers hold KV: 2 x 2 x 64 x 2 x 4 = 2048; 6 linear layers hold a state
    assert (lay.full_layers, lay.mamba_layers, lay.bytes_per_token) == (4, 6, 2048)
    assert any("mamba" in n for n in lay.notes)


def test_eagle3_drafter_is_one_layer(tmp_path):
    t = info("meta-llama--Llama-3.1-8B-Instruct")
    d = model_info_from_config(fixture_config("Tencent--AngelSlim", "configs/qwen3-8b-eagle3.json"))
    ctx = ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 8192,
                   "speculative_config": {"method": "eagle3", "model": "x/eagle3", "num_speculative_tokens": 3}},
                  t, d, lookup("H100"))
    p = plan(ctx)
    L = d.num_hidden_layers
    assert L == 1
    # drafter: 1 layer x 2 x kv_heads x head_dim x 2 bytes
    assert p.kv_bytes_per_token["drafter"] == 2 * d.num_key_value_heads * d.head_dim * 2
    assert p.drafter.kv.layers == 1


def test_fp8_target_bf16_drafter_variant():
    t = info("meta-llama--Llama-3.1-8B-Instruct")
    d = model_info_from_config(fixture_config("Tencent--AngelSlim", "configs/qwen3-8b-eagle3.json"))
    ctx = ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 8192,
                   "speculative_config": {"method": "eagle3", "model": "x/eagle3", "num_speculative_tokens": 3}},
                  t, d, lookup("H100"))
    p = plan(ctx)
    base, alt = p.variants
    assert (alt.target_kv_dtype, alt.drafter_kv_dtype) == ("fp8", "bfloat16")
    assert alt.kv_bytes_per_token["target"] == base.kv_bytes_per_token["target"] // 2 == 65536
    assert alt.kv_bytes_per_token["drafter"] == base.kv_bytes_per_token["drafter"]
    assert alt.kv_capacity_tokens > 1.8 * base.kv_capacity_tokens
    assert lookup("V100").fp8_kv is False
    p2 = plan(ctx, hardware=lookup("V100"))
    assert p2.variants[1].supported is False


# ---- CPU arithmetic, exactly as vLLM's get_kv_cache_config_from_groups ---------------------------

def test_cpu_capacity_arithmetic(tmp_path):
    t = make_tiny_llama(tmp_path / "t", num_hidden_layers=4, num_key_value_heads=2)
    d = make_tiny_llama(tmp_path / "d", num_hidden_layers=2, num_key_value_heads=1, num_attention_heads=2, head_dim=64)
    cfg = config_from_dict({"model": str(t), "max_model_len": 1000, "kv_cache_dtype": "fp8",
                            "speculative_config": {"method": "draft_model", "model": str(d), "num_speculative_tokens": 3}})
    p = plan(cfg, hardware="cpu", kv_cache_space_gib=1)
    # target: 4 layers x 2 x 2 heads x 32 x 1 byte = 512; drafter: 2 x 2 x 1 x 64 x 1 = 256
    assert p.kv_bytes_per_token == {"target": 512, "drafter": 256}
    # one group; block row = 128 tokens x (512 + 256) = 98304 bytes; 2**30 // 98304 = 10922 blocks
    assert (p.block_size, p.num_blocks) == (128, 10922)
    # per request cdiv(1000, 128) = 8 blocks -> 10922 / 8 = 1365.25x -> 1,365,250 tokens
    # (the figure vLLM logged for this very configuration on this host)
    assert p.blocks_per_request == 8 and p.max_concurrency == 1365.25
    assert p.kv_capacity_tokens == 1365250
    # fp32 checkpoint weights load as bf16: half the safetensors bytes
    assert p.weights_bytes["target"] > 0 and p.model_dtype == "bfloat16"


def test_plan_without_hardware_gives_per_token_figures_only():
    t = info("meta-llama--Llama-3.1-8B-Instruct")
    p = plan(ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct"}, t))
    assert p.kv_bytes_per_token["target"] == 131072 and p.kv_capacity_tokens == 0
    assert p.fits and any("no hardware" in n for n in p.notes)


def test_gpu_budget_subtracts_weights_and_reserve():
    # the catalog entry carries the checkpoint size (safetensors total_size)
    p = plan(config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 8192}), hardware="H100")
    assert p.budget_bytes == int(81559 * 2**20 * 0.9)
    assert p.kv_cache_bytes == p.budget_bytes - p.weights_bytes["target"] - sum(p.reserve_bytes.values())
    assert 14 * GiB < p.weights_bytes["target"] < 16 * GiB
    # 8B in bf16 is ~15 GiB: ~55 GiB of KV at 128 KiB/token is ~440k tokens
    assert 300_000 < p.kv_capacity_tokens < 500_000
    assert p.max_num_batched_tokens == 8192 and p.max_num_seqs == 1024  # vLLM serve defaults >= 70 GiB


# ---- speed-up ------------------------------------------------------------------------------------

def test_expected_tokens_per_step_formula():
    # E = 1 + a1 + a1 a2 + a1 a2 a3 (rates past the list repeat the last one)
    assert expected_tokens_per_step([0.8, 0.6], 3) == pytest.approx(1 + 0.8 + 0.8 * 0.6 + 0.8 * 0.6 * 0.6)  # 2.568
    # constant alpha: Leviathan et al. 2023 eq. 1: (1 - a^(k+1)) / (1 - a)
    assert expected_tokens_per_step([0.7], 4) == pytest.approx((1 - 0.7**5) / (1 - 0.7))
    assert expected_tokens_per_step([], 4) == 1.0 and expected_tokens_per_step([0.9], 0) == 1.0
    rows = speedup_table([0.8, 0.6], 0.05, 8)
    assert [r.k for r in rows] == list(range(1, 9))
    assert rows[2].speedup == pytest.approx(2.568 / 1.15, abs=1e-4)


def test_speedup_from_synthetic_rates_and_best_k():
    t = info("meta-llama--Llama-3.1-8B-Instruct")
    ctx = ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct",
                   "speculative_config": {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4,
                                          "synthetic_acceptance_rates": [0.9, 0.5, 0.2]}}, t, None, lookup("H100"))
    p = plan(ctx)
    s = p.speedup
    assert s.acceptance_source == "speculative_config.synthetic_acceptance_rates" and s.drafter_cost == 0.0
    assert s.k == 4 and len(s.table) == 8 and s.best_k == 8  # free drafts: more never hurts
    p2 = plan(ctx, acceptance=[0.9, 0.5, 0.2], drafter_cost=0.2, acceptance_source="measured")
    assert p2.speedup.acceptance_source == "measured"
    assert p2.speedup.best_k == max(p2.speedup.table, key=lambda r: r.speedup).k < 8
    assert "Speed-up" in render_text(p2)


# ---- CLI ------------------------------------------------------------------------------------------

def test_cli_plan_json(capsys):
    rc = main(["plan", "--format", "json", "--gpu", "H100", "--offline", "--", "vllm", "serve",
               "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192",
               "--speculative-config", '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["kv_bytes_per_token"] == {"target": 131072, "drafter": 0}
    assert set(out["weights_bytes"]) == {"target", "drafter"}
    assert out["kv_capacity_tokens"] > 0 and out["max_concurrency"] > 0
    assert [r["k"] for r in out["speedup"]["table"]] == list(range(1, 9))


def test_cli_plan_text_cpu(capsys, tmp_path):
    t = make_tiny_llama(tmp_path / "t", tokenizer=False)
    rc = main(["plan", "--gpu", "cpu", "--kv-cache-space-gib", "1", "--", "vllm", "serve", str(t), "--max-model-len", "1000"])
    text = capsys.readouterr().out
    assert rc == 0 and "KV capacity" in text and "fits" in text
    # 4 layers x 2 x 2 x 32 x 2 bytes = 1024 bytes/token -> 2**30 // (128 x 1024) = 8192 blocks
    # cdiv(1000,128) = 8 blocks per request -> 1024x -> 1,024,000 tokens
    assert "1,024,000 tokens" in text


def test_cli_plan_unknown_gpu_exit_2(capsys):
    assert main(["plan", "--gpu", "Z80", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]) == 2
    assert "H100-SXM" in capsys.readouterr().err


# ---- rules ----------------------------------------------------------------------------------------

def _rule(report, rid):
    return [f for f in report.findings if f.rule == rid]


def test_sd500_does_not_fit_and_each_fix_removes_it():
    from wizard.rules.memory.sd500_does_not_fit import DoesNotFit

    bad = api.load(command=DoesNotFit.doc().example)
    r = api.check(bad, gpu="L4", allow_hub=False)
    [f] = _rule(r, "SD500")
    assert f.severity.value == "error" and f.fixes
    for fix in f.fixes:
        assert not _rule(api.check(apply_patch(bad, fix), gpu="L4", allow_hub=False), "SD500"), fix.description
    assert not _rule(api.check(api.load(command=DoesNotFit.doc().use_instead), gpu="L4", allow_hub=False), "SD500")
    # without hardware the rule stays quiet
    assert not _rule(api.check(bad, allow_hub=False), "SD500")


def test_sd500_tp_and_fp8_fixes():
    cmd = "vllm serve meta-llama/Llama-3.1-70B-Instruct --max-model-len 65536"
    cfg = api.load(command=cmd)
    [f] = _rule(api.check(cfg, gpu="H100x8", allow_hub=False), "SD500")
    descs = [x.description for x in f.fixes]
    assert any("tensor-parallel-size 4" in d for d in descs), descs
    for fix in f.fixes:
        assert not _rule(api.check(apply_patch(cfg, fix), gpu="H100x8", allow_hub=False), "SD500")
    # ~16 GiB of bf16 weights on an L4 leaves ~3.9 GiB; 24576 tokens x 128 KiB = 3 GiB in bf16
    cfg = api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 40960")
    [f] = _rule(api.check(cfg, gpu="L4", allow_hub=False), "SD500")
    assert any(x.set.get("kv_cache_dtype") == "fp8" for x in f.fixes)


def test_sd501_negative_token_budget_public_case_50708():
    # vllm-50708: DFlash, 16 speculative tokens, default budget 2048 and 256 seqs on a small GPU
    from wizard.rules.memory.sd501_negative_token_budget import NegativeTokenBudget

    bad = api.load(command=NegativeTokenBudget.doc().example)
    [f] = _rule(api.check(bad, allow_hub=False), "SD501")
    assert f.severity.value == "warning"  # 0.32/0.33 throttle instead of failing like 0.26
    # 2048 - 256 x (1 + 16) = -2304
    assert "-2304" in f.message and "max_num_batched_tokens" in f.fields
    assert len(f.fixes) == 3
    for fix in f.fixes:
        assert not _rule(api.check(apply_patch(bad, fix), allow_hub=False), "SD501"), fix.description
    assert not _rule(api.check(api.load(command=NegativeTokenBudget.doc().use_instead), allow_hub=False), "SD501")
    # defaults are used only when the hardware is known: L4 (< 70 GiB) -> 2048 / 256
    dflt = api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
                            "'{\"method\":\"ngram\",\"num_speculative_tokens\":16,\"prompt_lookup_max\":4}'")
    assert not _rule(api.check(dflt, allow_hub=False), "SD501")
    assert _rule(api.check(dflt, gpu="L4", allow_hub=False), "SD501")
    # H100 defaults 8192 / 1024: 8192 - 1024 x (1 + 16) = -9216 < 0; with k = 7: 8192 - 1024 x 8 = 0 -> quiet
    assert _rule(api.check(dflt, gpu="H100", allow_hub=False), "SD501")
    k7 = apply_patch(dflt, Patch(description="k=7", set={"speculative_config.num_speculative_tokens": 7}))
    assert not _rule(api.check(k7, gpu="H100", allow_hub=False), "SD501")


def test_sd503_memory_utilization_vs_other_processes():
    t = info("meta-llama--Llama-3.1-8B-Instruct")
    hw = lookup("H100").model_copy(update={"used_bytes": 40 * GiB})
    ctx = ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 8192}, t, None, hw)
    report = api.check_context(ctx)
    [f] = _rule(report, "SD503")
    [fix] = f.fixes
    # free = 79.65 - 40 = 39.65 GiB -> 39.65 / 79.65 = 0.4978 -> floor((0.4978 - 0.01) x 100) / 100 = 0.48
    assert fix.set == {"gpu_memory_utilization": 0.48}
    ctx2 = ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 8192, "gpu_memory_utilization": 0.48},
                   t, None, hw)
    assert not _rule(api.check_context(ctx2), "SD503")
    assert not _rule(api.check_context(ctx2), "SD500")
    # catalog hardware (no discovery) -> quiet
    assert not _rule(api.check_context(ctx_for({"model": "m"}, t, None, lookup("H100"))), "SD503")


def test_bad_values_never_crash_the_planner():
    t = info("meta-llama--Llama-3.1-8B-Instruct")
    ctx = ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct", "kv_cache_dtype": "fp7_weird", "max_model_len": "long",
                   "gpu_memory_utilization": "most",
                   "speculative_config": {"method": "ngram", "num_speculative_tokens": 3, "kv_cache_dtype": "int3"}},
                  t, None, lookup("H100"))
    p = plan(ctx)
    assert p.kv_bytes_per_token["target"] == 131072  # planned as auto (bf16)
    assert any("fp7_weird" in n for n in p.notes)
    assert p.max_model_len == t.max_position_embeddings and p.gpu_memory_utilization == 0.9
    report = api.check_context(ctx)
    assert not [f for f in report.findings if f.rule.startswith("SD5") and "internal error" in f.title]
