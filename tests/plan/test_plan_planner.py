"""wizard.plan.planner: vLLM's block/page capacity arithmetic, budgets, drafter layers, KV dtype
variants, the CLI and the SD5xx rules. Model facts come from the one config.json parser
(wizard.models: resolve_model / info_from_config); KV per token is in test_plan_kv.py, the
speed-up in test_plan_speedup.py."""

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
from wizard.models.resolve import resolve_model
from wizard.models.config_json import info_from_config
from wizard.plan.kv import GiB
from wizard.plan.planner import plan
from wizard.vllm.versions import default_version


def info(name: str):
    """ModelInfo of a fixture folder through the model inspector (the one parser)."""
    return resolve_model(str(HF / name), allow_hub=False)


def ctx_for(cfg_dict, target, drafter=None, hardware=None):
    cfg = config_from_dict(cfg_dict)
    return CheckContext(config=cfg, version=default_version(), target=target, drafter=drafter, hardware=hardware)


# ---- drafter layers and hybrid capacity ----------------------------------------------------------

def test_deepseek_v3_mtp_drafter_has_one_mla_layer():
    m = info("deepseek-ai--DeepSeek-V3")
    ctx = ctx_for({"model": "deepseek-ai/DeepSeek-V3", "tensor_parallel_size": 8, "max_model_len": 32768,
                   "speculative_config": {"method": "mtp", "num_speculative_tokens": 1}}, m, m, lookup("H200x8"))
    p = plan(ctx)
    # num_nextn_predict_layers = 1 -> one MLA layer: (512 + 64) x 2 = 1152 bytes/token
    assert p.kv_bytes_per_token == {"target": 70272, "drafter": 1152}
    assert p.weights_bytes["drafter"] == 0  # MTP weights are inside the target checkpoint


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


def test_eagle3_drafter_is_one_layer(tmp_path):
    t = info("meta-llama--Llama-3.1-8B-Instruct")
    d = info_from_config(fixture_config("Tencent--AngelSlim", "configs/qwen3-8b-eagle3.json"), id="x/eagle3")
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
    d = info_from_config(fixture_config("Tencent--AngelSlim", "configs/qwen3-8b-eagle3.json"), id="x/eagle3")
    ctx = ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 8192,
                   "speculative_config": {"method": "eagle3", "model": "x/eagle3", "num_speculative_tokens": 3}},
                  t, d, lookup("H100"))
    p = plan(ctx)
    base, alt = p.variants
    assert (alt.target_kv_dtype, alt.drafter_kv_dtype) == ("fp8", "bfloat16")
    assert alt.kv_bytes_per_token["target"] == base.kv_bytes_per_token["target"] // 2 == 65536
    assert alt.kv_bytes_per_token["drafter"] == base.kv_bytes_per_token["drafter"]
    assert alt.kv_capacity_tokens > 1.8 * base.kv_capacity_tokens
    v100 = ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 8192}, t, d, lookup("V100"))
    assert v100.view.device_kv.fp8 is False  # SM 7.0: no fp8 KV backend (backends.json)
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
    # vLLM 0.32 (installed): CacheConfig.gpu_memory_utilization defaults to 0.92 (vllm/config/cache.py; 0.9 up to 0.19)
    assert p.budget_bytes == int(81559 * 2**20 * 0.92)
    assert p.kv_cache_bytes == p.budget_bytes - p.weights_bytes["target"] - sum(p.reserve_bytes.values())
    assert 14 * GiB < p.weights_bytes["target"] < 16 * GiB
    # 8B in bf16 is ~15 GiB: ~55 GiB of KV at 128 KiB/token is ~440k tokens
    assert 300_000 < p.kv_capacity_tokens < 500_000
    assert p.max_num_batched_tokens == 8192 and p.max_num_seqs == 1024  # vLLM serve defaults >= 70 GiB


# ---- speed-up (details in test_plan_speedup.py) ------------------------------------------------------

def test_synthetic_acceptance_rates_are_vllms_unconditional_rates():
    # vllm/config/speculative.py 0.32 L537-543: "Per-position *unconditional* acceptance rates"
    t = info("meta-llama--Llama-3.1-8B-Instruct").model_copy(update={"weight_bytes": 16060522496})  # the checkpoint's size
    ctx = ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct",
                   "speculative_config": {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4,
                                          "synthetic_acceptance_rates": [0.9, 0.5, 0.2]}}, t, None, lookup("H100"))
    s = plan(ctx).speedup
    assert s.acceptance_source.startswith("speculative_config.synthetic_acceptance_rates")
    assert s.acceptance_rates == [0.9, 0.5, 0.2]
    # MAL(3) = 1 + 0.9 + 0.5 + 0.2 = 2.6 (not 1 + .9 + .45 + .09 as if conditional)
    assert s.table[2].expected_tokens_per_step == pytest.approx(2.6)
    assert s.drafter_cost == 0.0 and s.k == 3
    p2 = plan(ctx, acceptance=[0.9, 0.5, 0.2], acceptance_source="measured")
    assert p2.speedup.acceptance_source == "measured"
    assert p2.speedup.best_k == max((r for r in p2.speedup.table), key=lambda r: (r.speedup, -r.k)).k


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
    assert p.max_model_len == t.max_position_embeddings and p.gpu_memory_utilization == 0.92  # the release default
    report = api.check_context(ctx)
    assert not [f for f in report.findings if f.rule.startswith("SD5") and "internal error" in f.title]


def test_no_fit_verdict_and_no_speedups_without_the_targets_size():
    """Trial item 5: a config-only folder on an H100 has 0 weight bytes: no 'fits', no speed-up table
    from the per-pass overheads alone; with its size the same plan fits."""
    t = info("meta-llama--Llama-3.1-8B-Instruct")
    spec = {"method": "ngram", "num_speculative_tokens": 3}
    p = plan(ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct", "speculative_config": spec}, t, None, lookup("H100")))
    assert p.fits is None and p.fit_problem == ("the target's weight size is unknown (weight size unknown (no safetensors "
                                                "sizes, no parameter count))")
    assert p.speedup.table == [] and p.speedup.withheld == f"the plan is incomplete: {p.fit_problem}"
    sized = t.model_copy(update={"weight_bytes": 16060522496})
    p = plan(ctx_for({"model": "meta-llama/Llama-3.1-8B-Instruct", "speculative_config": spec}, sized, None, lookup("H100")))
    assert p.fits is True and p.fit_problem is None and len(p.speedup.table) == 8


def test_plan_of_a_configuration_the_check_refuses():
    """TP 3 on a 32-head model fits in memory, but vLLM refuses it (SD120): the plan records the
    check's errors, recommends no k, and `wizard plan` exits 1 (it said 'fits', exit 0)."""
    import subprocess
    import sys

    from wizard import api

    cmd = "vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 3"
    p = api.plan(api.load(command=cmd), gpu="H100x3")
    assert p.fits is True and p.refused_by and p.refused_by[0].startswith("SD120")
    assert p.speedup.best_k is None and "SD120" in (p.speedup.withheld or "")
    ok = api.plan(api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2"), gpu="H100x2")
    assert ok.refused_by == []
    r = subprocess.run([sys.executable, "-m", "wizard", "plan", "--gpu", "H100x3", "--", *cmd.split()],
                       capture_output=True, text=True, timeout=300, env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"})
    assert r.returncode == 1 and "the check refuses it: SD120" in r.stdout, r.stdout[-2000:]


def test_plan_reuses_the_callers_check():
    """The UI's live check is passed in (report=) rather than run a second time for refused_by."""
    from wizard import api

    ctx = api.resolve(api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 3"), gpu="H100x3")
    rep = api.check_context(ctx)
    assert api.plan(ctx, report=rep).refused_by == api.plan(ctx).refused_by == [f"{f.rule}: {f.title}" for f in rep.errors]
    clean = rep.model_copy(update={"findings": [f for f in rep.findings if f.severity.value != "error"]})
    assert api.plan(ctx, report=clean).refused_by == []


def test_plan_serves_the_length_vllm_lowers_to_the_drafter():
    """vLLM 0.34 ``_limit_max_model_len_to_draft`` (vllm/config/vllm.py:3102) caps the target's
    max_model_len at a draft model's, speculative_config.max_model_len included; 0.32's V1 runner
    keeps the target's length (and skips drafting past the drafter's instead)."""
    spec = {"method": "draft_model", "model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 3,
            "max_model_len": 4096}
    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "speculative_config": spec})
    p34 = api.plan(cfg, gpu="H100", vllm_version="0.34")
    p32 = api.plan(cfg, gpu="H100", vllm_version="0.32")
    assert p34.max_model_len == 4096 and any("lowers it to the drafter's" in n for n in p34.notes)
    assert p32.max_model_len == 131072


def test_034_extensible_kv_cache_budget_and_margin():
    """0.34 with the extensible KV cache (on by default on CUDA): the budget is the whole device
    (resolved_gpu_memory_utilization 1.0, vllm/config/cache.py L495) less the margin
    measure_kv_cache_bytes keeps free, max(1 GiB, 0.75 x transient peak) (v1/worker/extensible_kv_cache.py
    L64-65, L612-617); 0.33 budgets 0.92 of it with no such margin."""
    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct"})
    p34, p33 = api.plan(cfg, gpu="H100", vllm_version="0.34"), api.plan(cfg, gpu="H100", vllm_version="0.33")
    assert p34.gpu_memory_utilization == 1.0 and p33.gpu_memory_utilization == 0.92
    assert p34.reserve_bytes["extensible_kv_margin"] == max(GiB, int(0.75 * p34.reserve_bytes["activations"]))
    assert "extensible_kv_margin" not in p33.reserve_bytes
    off = api.plan(config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct",
                                     "extra_args": {"enable_extensible_kv_cache": False}}), gpu="H100", vllm_version="0.34")
    assert off.gpu_memory_utilization == 0.92 and "extensible_kv_margin" not in off.reserve_bytes
