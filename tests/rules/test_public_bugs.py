"""Regression suite: every case of tests/data/public-bugs.jsonl as a test of its rule *kind*.

Each case builds the situation (serve options; local model folders with the real config fields
and tensor names where model facts matter; the reported GPU and vLLM version where the behaviour
depends on them) and checks the verdict on the field the case is about:

* ``reject`` -> an error finding on that field (and the named fix where the case gives one);
* ``warn``   -> at least a warning on that field;
* ``accept`` -> no error finding at all.

Sizes (hidden size, vocabulary) are scaled down where tensors are written so the folders stay
tiny; ratios and names are the real ones. SGLang rows are translated to the vLLM option with the
same trap, or skipped with the reason. Cases whose vLLM version is not given use the era of the
report where the behaviour is version-bound (noted per case).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from factory import DATA, fixture_config, make_model_dir
from wizard.api import check_context, load
from wizard.config import ConfigError, apply_patch, config_from_dict
from wizard.context import clear_model_cache, resolve_context
from wizard.hardware.spec import Hardware
from wizard.vllm.versions import parse_version

CASES = {json.loads(line)["id"]: json.loads(line) for line in (DATA / "public-bugs.jsonl").read_text().splitlines() if line.strip()}
GiB = 1 << 30


# ---- helpers ------------------------------------------------------------------------------

def hw(name: str, sm: tuple[int, int] | None, *, vendor: str = "nvidia", isa: str | None = None) -> Hardware:
    """A GPU as the report describes it (what its attention backends accept for the KV cache is
    derived per release from vendor, SM and ISA: ``ctx.view.device_kv``)."""
    return Hardware(name=name, vendor=vendor, memory_bytes=80 * GiB, compute_capability=sm, isa=isa,
                    source="public report")


def run(data: dict[str, Any], *, version: str | None = None, gpu: Hardware | None = None):
    clear_model_cache()
    cfg = config_from_dict(data)
    ctx = resolve_context(cfg, parse_version(version) if version else None, gpu, allow_hub=False)
    return ctx, check_context(ctx)


def _on(f, field: str) -> bool:
    return any(x == field or x.startswith(field + ".") or field.startswith(x + ".") for x in f.fields)


def errors_on(report, field: str):
    return [f for f in report.findings if f.severity.value == "error" and _on(f, field)]


def warnings_on(report, field: str):
    return [f for f in report.findings if f.severity.value in ("error", "warning") and _on(f, field)]


def assert_reject(report, field: str, rule: str | None = None):
    errs = errors_on(report, field)
    assert errs, f"expected an error on {field}; got {[(f.rule, f.severity.value, f.fields) for f in report.findings]}"
    if rule:
        assert any(f.rule == rule for f in errs), [(f.rule, f.fields) for f in errs]
    return errs


def assert_warn(report, field: str, rule: str | None = None):
    ws = warnings_on(report, field)
    assert ws, f"expected a warning on {field}; got {[(f.rule, f.severity.value, f.fields) for f in report.findings]}"
    if rule:
        assert any(f.rule == rule for f in ws), [(f.rule, f.fields) for f in ws]
    return ws


def assert_accept(report):
    errs = [f for f in report.findings if f.severity.value == "error"]
    assert not errs, [(f.rule, f.message) for f in errs]


def tiny_llama_cfg(hidden: int = 64, vocab: int = 512, layers: int = 4, **extra) -> dict[str, Any]:
    """Llama-3.1-8B-Instruct's config.json with sizes scaled down (real field names)."""
    cfg = fixture_config("meta-llama--Llama-3.1-8B-Instruct")
    cfg.update(hidden_size=hidden, vocab_size=vocab, num_hidden_layers=layers, num_attention_heads=4,
               num_key_value_heads=2, head_dim=hidden // 4, intermediate_size=hidden * 2)
    cfg.update(extra)
    return cfg


def eagle3_drafter(folder: Path, *, hidden: int = 64, vocab: int = 512, draft_vocab: int | None = None,
                   lm_head: bool = True, embed: bool = False, d2t: bool | None = None, **extra) -> Path:
    """An EAGLE3 drafter like SpecForge's llama3-8B-eagle3.json (scaled), with the tensor names
    vLLM's llama_eagle3.py loads: midlayer.*, fc, norm, lm_head, embed_tokens, d2t/t2d."""
    cfg = fixture_config("sgl-project--SpecForge", "configs/llama3-8B-eagle3.json")
    cfg.update(hidden_size=hidden, vocab_size=vocab, num_attention_heads=4, num_key_value_heads=2,
               intermediate_size=hidden * 2, head_dim=hidden // 4)
    cfg.pop("draft_vocab_size", None)
    if draft_vocab is not None:
        cfg["draft_vocab_size"] = draft_vocab
    cfg.update(extra)
    dv = draft_vocab or vocab
    th = cfg.get("target_hidden_size", hidden)
    t: dict[str, tuple[int, ...]] = {
        "midlayer.self_attn.q_proj.weight": (hidden, 2 * hidden),
        "midlayer.self_attn.k_proj.weight": (hidden // 2, 2 * hidden),
        "midlayer.self_attn.v_proj.weight": (hidden // 2, 2 * hidden),
        "midlayer.self_attn.o_proj.weight": (hidden, hidden),
        "midlayer.hidden_norm.weight": (hidden,),
        "midlayer.input_layernorm.weight": (hidden,),
        "fc.weight": (hidden, 3 * th),
        "norm.weight": (hidden,),
    }
    if lm_head:
        t["lm_head.weight"] = (dv, hidden)
    if embed:
        t["embed_tokens.weight"] = (vocab, hidden)
    if d2t if d2t is not None else dv != vocab:
        t["d2t"] = (dv,)
        t["t2d"] = (vocab,)
    return make_model_dir(folder, cfg, t)


def spec(method: str | None = None, model: str | Path | None = None, k: int | None = 3, **kw) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if method:
        d["method"] = method
    if model is not None:
        d["model"] = str(model)
    if k is not None:
        d["num_speculative_tokens"] = k
    d.update(kw)
    return d


def mla_target(folder: Path, arch: str = "GlmMoeDsaForCausalLM", model_type: str = "glm_moe_dsa", **extra) -> Path:
    cfg = fixture_config("deepseek-ai--DeepSeek-V3")
    cfg.update(architectures=[arch], model_type=model_type)
    cfg.update(extra)
    return make_model_dir(folder, cfg)


def dspark_drafter(folder: Path) -> Path:
    """A dense Qwen3-style DSpark drafter config (arch Qwen3DSparkModel, R026 detection)."""
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(architectures=["Qwen3DSparkModel"], num_hidden_layers=1, block_size=8, dspark_noise_token_id=151669,
               target_layer_ids=[1, 17, 33])
    return make_model_dir(folder, cfg)


# ---- one builder per case -----------------------------------------------------------------
# Each returns None; it asserts. Keys are the case ids.

def c_torchspec_38(tmp: Path):
    tgt = make_model_dir(tmp / "llama", tiny_llama_cfg())
    d = eagle3_drafter(tmp / "exported-eagle3", embed=True)
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d)})
    assert_warn(r, "speculative_config.model", "SD220")


def c_sglang_27908(tmp: Path):
    # translated: same checkpoint (draft_vocab_size declared, no lm_head.weight) under vLLM eagle3 (R125)
    cfg = fixture_config("deepseek-ai--DeepSeek-V3")
    cfg.update(architectures=["DeepseekV3ForCausalLM"], hidden_size=64, vocab_size=1024)
    tgt = make_model_dir(tmp / "Kimi-K2.6-NVFP4", cfg)
    d = eagle3_drafter(tmp / "Kimi-K2.6-Eagle3", vocab=1024, draft_vocab=256, lm_head=False, d2t=True)
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d)})
    assert_warn(r, "speculative_config.model", "SD221")


def c_sglang_25454(tmp: Path):
    # translated: aux ids only in the output-of-layer convention (target_layer_ids), which vLLM
    # V2 shifts by +1 and V1 ignores (R121) -- the same off-by-one trap
    tgt = make_model_dir(tmp / "kimi", tiny_llama_cfg(layers=8))
    d = eagle3_drafter(tmp / "kimi-k2.5-eagle3-mla", target_layer_ids=[1, 3, 5])
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d)})
    assert_warn(r, "speculative_config.model", "SD224")


def c_vllm_25134(tmp: Path):
    tgt = make_model_dir(tmp / "Qwen3-30B-A3B-FP8", fixture_config("Qwen--Qwen3-30B-A3B"))
    d = eagle3_drafter(tmp / "Qwen3-30B-A3B-eagle3", hidden=2048, vocab=151936, lm_head=False)
    # report predates PR #26485 (after 0.11.0): use 0.10.2
    _, r = run({"model": str(tgt), "enforce_eager": True, "speculative_config": spec("eagle3", d, 2)}, version="0.10.2")
    assert_reject(r, "speculative_config.method", "SD228")


def c_vllm_45538(tmp: Path):
    """The report ran a pre-release ROCm image whose AMD MiniMax-M3 class lacked SupportsEagle3
    (PR #45546). Every released wheel (minimax_m3 first ships in 0.24.0) has the interface on both
    branches (generated eagle3_targets.json: no platform split), so a release passes; until session
    2026-12-04 a hand-typed "AMD class lacks it before 0.26 (assumed)" refused 0.24-0.25 on ROCm.
    The mechanism the report shows -- a platform-split package importing a class without the
    interface on ROCm -- is judged from the generated split, where a release has one: Kimi-K3's
    text-only KimiLinearForCausalLM (amd/linear.py, 0.28-0.33)."""
    cfg = tiny_llama_cfg(architectures=["MiniMaxM3SparseForCausalLM"], model_type="minimax_m3")
    tgt = make_model_dir(tmp / "MiniMax-M3-MXFP8", cfg)
    d = eagle3_drafter(tmp / "MiniMax-M3-EAGLE3")
    mi355 = hw("MI355X", None, vendor="amd", isa="gfx950")
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d)}, version="0.25.0", gpu=mi355)
    assert not [f for f in r.findings if f.rule == "SD228"]  # the released AMD class has it
    k3 = make_model_dir(tmp / "Kimi-K3-text", tiny_llama_cfg(architectures=["KimiLinearForCausalLM"], model_type="kimi_linear"))
    _, r = run({"model": str(k3), "speculative_config": spec("eagle3", d)}, version="0.31.0", gpu=mi355)
    assert_reject(r, "speculative_config.method", "SD228")
    _, r2 = run({"model": str(k3), "speculative_config": spec("eagle3", d)}, version="0.31.0", gpu=hw("H200", (9, 0)))
    assert not [f for f in r2.findings if f.rule == "SD228"]  # the CUDA class has it


def c_vllm_pr36527(tmp: Path):
    cfg = tiny_llama_cfg(architectures=["Qwen3_5ForConditionalGeneration"], model_type="qwen3_5")
    tgt = make_model_dir(tmp / "Qwen3.5-9B", cfg)
    d = eagle3_drafter(tmp / "Qwen3.5-9B-Eagle3-ShareGPT", eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d)}, version="0.17.0")  # before PR #36658
    assert_warn(r, "speculative_config.method", "SD228")


def c_vllm_18906(tmp: Path):
    cfg = fixture_config("meta-llama--Llama-3.1-70B-Instruct")
    cfg.update(hidden_size=256, vocab_size=1024, num_hidden_layers=8, num_attention_heads=8, num_key_value_heads=2,
               head_dim=32, intermediate_size=512)
    tgt = make_model_dir(tmp / "Llama-3.3-70B-Instruct", cfg)
    d = eagle3_drafter(tmp / "eagle3-llama3.3-70b-inst", hidden=128, vocab=1024, embed=True, target_hidden_size=256,
                       eagle_aux_hidden_state_layer_ids=[1, 4, 5])
    _, r = run({"model": str(tgt), "dtype": "float16", "enable_prefix_caching": True, "max_model_len": 8192,
                "speculative_config": spec("eagle3", d, 3, draft_tensor_parallel_size=1, max_model_len=2048)})
    assert_accept(r)


def c_angelslim_5(tmp: Path):
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(hidden_size=2560, num_attention_heads=32, num_key_value_heads=8, head_dim=128, num_hidden_layers=36)
    tgt = make_model_dir(tmp / "Qwen3-4B", cfg)
    dcfg = fixture_config("Tencent--AngelSlim", "configs/qwen3-8b-eagle3.json")
    dcfg.update(hidden_size=2560, num_attention_heads=32, num_key_value_heads=8, head_dim=80)
    d = make_model_dir(tmp / "Qwen3-4B_eagle3", dcfg)
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d)}, version="0.31.0")
    assert_reject(r, "speculative_config.model", "SD229")


def c_vllm_pr30987(tmp: Path):
    tgt = make_model_dir(tmp / "llama", tiny_llama_cfg())
    cfg = fixture_config("sgl-project--SpecForge", "configs/llama3-8B-eagle3.json")
    cfg.pop("architectures")
    d = make_model_dir(tmp / "drafter", cfg)
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d)})
    assert_reject(r, "speculative_config.model", "SD226")


def c_sglang_pr21272(tmp: Path):
    # translated: vLLM method 'eagle' with an EAGLE3 drafter architecture
    tgt = make_model_dir(tmp / "Kimi-K2.5", tiny_llama_cfg())
    d = eagle3_drafter(tmp / "kimi-k2.5-eagle3")
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle", d)})
    errs = assert_reject(r, "speculative_config.method", "SD227")
    fix = [f for f in errs if f.rule == "SD227"][0].fixes[0]
    assert fix.set == {"speculative_config.method": "eagle3"}


def c_sglang_36528(tmp: Path):
    # translated: vLLM eagle3 without speculative_config.model (R024, config time)
    tgt = make_model_dir(tmp / "Qwen2.5-0.5B-Instruct", tiny_llama_cfg())
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", None, 3)})
    assert_reject(r, "speculative_config.model")


def c_vllm_pr12755(tmp: Path):
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(architectures=["Qwen2ForCausalLM"], model_type="qwen2", vocab_size=152064)
    tgt = make_model_dir(tmp / "DeepSeek-R1-Distill-Qwen-32B", cfg)
    _, r = run({"model": str(tgt), "speculative_config": spec("deepseek_mtp", None, 1)})
    assert_reject(r, "speculative_config.method")


def c_modelopt_1677(tmp: Path):
    tgt = make_model_dir(tmp / "gemma-4-31B-it", {
        "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
        "text_config": {"model_type": "gemma4_text", "hidden_size": 5376, "num_hidden_layers": 60,
                        "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128, "vocab_size": 262144}})
    d = make_model_dir(tmp / "gemma-4-31B-it-assistant", {
        "architectures": ["Gemma4AssistantForCausalLM"], "model_type": "gemma4_assistant",
        "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 4,
        "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
        "vocab_size": 262144})
    # report era (June 2026, after Gemma 4 MTP landed in PR #41745): 0.23; 0.32 rewrites the
    # assistant to gemma4_mtp in hf_config_override and detects mtp itself (no error there)
    data = {"model": str(tgt), "speculative_config": spec(None, d, 1)}
    _, r = run(data, version="0.23.0")
    errs = assert_reject(r, "speculative_config.method", "SD402")
    assert any(p.set.get("speculative_config.method") == "mtp" for f in errs for p in f.fixes)
    ctx32, r32 = run(data, version="0.32.0")
    assert ctx32.method == "mtp" and not [f for f in r32.findings if f.rule == "SD402"]


def _glm(tmp: Path, name: str, arch: str, mt: str) -> Path:
    cfg = fixture_config("deepseek-ai--DeepSeek-V3")
    cfg.update(architectures=[arch], model_type=mt, num_nextn_predict_layers=1)
    return make_model_dir(tmp / name, cfg)


def c_vllm_25993(tmp: Path):
    tgt = _glm(tmp, "GLM-4.6", "Glm4MoeForCausalLM", "glm4_moe")
    _, r = run({"model": str(tgt), "tensor_parallel_size": 8, "speculative_config": spec("mtp", None, 2)})
    assert_warn(r, "speculative_config.num_speculative_tokens")


def c_vllm_pr46075(tmp: Path):
    tgt = _glm(tmp, "GLM-5-FP8", "GlmMoeDsaForCausalLM", "glm_moe_dsa")
    _, r = run({"model": str(tgt), "speculative_config": spec("mtp", None, 3)})
    assert_warn(r, "speculative_config.num_speculative_tokens")


def c_vllm_34380(tmp: Path):
    tgt = _glm(tmp, "GLM-5-FP8", "GlmMoeDsaForCausalLM", "glm_moe_dsa")
    _, r = run({"model": str(tgt), "tensor_parallel_size": 8, "enable_expert_parallel": True,
                "enable_prefix_caching": False, "speculative_config": spec("mtp", None, 3)})
    assert_accept(r)


def c_arctic_29(tmp: Path):
    tgt = make_model_dir(tmp / "finetuned", tiny_llama_cfg())
    _, r = run({"model": str(tgt), "speculative_config": {"method": "arctic", "num_speculative_tokens": 3,
                                                           "enable_suffix_decoding": True}})
    assert_reject(r, "speculative_config.method")


def c_vllm_40831(tmp: Path):
    tgt = make_model_dir(tmp / "Qwen3.6-27B-int4-AutoRound", fixture_config("Qwen--Qwen3-8B"))
    _, r = run({"model": str(tgt), "kv_cache_dtype": "turboquant_3bit_nc",
                "speculative_config": spec("ngram", None, 3, prompt_lookup_min=8)}, gpu=hw("RTX-3090", (8, 6)))
    ws = assert_warn(r, "kv_cache_dtype", "SD205")
    assert any(p.set.get("kv_cache_dtype") == "auto" for f in ws for p in f.fixes)


def c_vllm_pr42775(tmp: Path):
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(architectures=["Qwen2ForCausalLM"], model_type="qwen2", vocab_size=152064)
    tgt = make_model_dir(tmp / "DeepSeek-R1-Distill-Qwen-32B-FP8", cfg)
    dcfg = dict(cfg, vocab_size=151936, hidden_size=1536, num_attention_heads=12, num_key_value_heads=2)
    d = make_model_dir(tmp / "DeepSeek-R1-Distill-Qwen-1.5B", dcfg)
    _, r = run({"model": str(tgt), "speculative_config": spec("draft_model", d, 3)})
    assert_reject(r, "speculative_config.model")


def _qwen14(tmp: Path, name: str) -> Path:
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(architectures=["Qwen2ForCausalLM"], model_type="qwen2", num_attention_heads=40, num_key_value_heads=8)
    return make_model_dir(tmp / name, cfg)


def c_vllm_10483(tmp: Path):
    tgt = _qwen14(tmp, "Qwen2.5-72B-Instruct")
    d = _qwen14(tmp, "Qwen2.5-14B-Instruct-AWQ")
    _, r = run({"model": str(tgt), "tensor_parallel_size": 4,
                "speculative_config": spec("draft_model", d, 3, draft_tensor_parallel_size=4)})
    assert_accept(r)


def c_vllm_31345(tmp: Path):
    tgt = make_model_dir(tmp / "Llama-3.1-8B-Instruct", tiny_llama_cfg())
    d = eagle3_drafter(tmp / "EAGLE3-LLaMA3.1-Instruct-8B", eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    _, r = run({"model": str(tgt), "tensor_parallel_size": 4,
                "speculative_config": spec("eagle3", d, 3, draft_tensor_parallel_size=1)}, version="0.13.0")
    assert_warn(r, "speculative_config.draft_tensor_parallel_size")


def c_vllm_11126(tmp: Path):
    tgt = make_model_dir(tmp / "Llama-3.1-70B-Instruct", tiny_llama_cfg())
    dcfg = fixture_config("SafeAILab--EAGLE", "eagle/train/EAGLE-LLaMA3-Instruct-70B.json")
    d = make_model_dir(tmp / "EAGLE-LLaMA3-Instruct-70B", dcfg)
    _, r = run({"model": str(tgt), "tensor_parallel_size": 4, "speculative_config": spec("eagle", d, 3)}, version="0.6.4")
    errs = assert_reject(r, "speculative_config.draft_tensor_parallel_size", "SD401")
    assert any(p.set.get("speculative_config.draft_tensor_parallel_size") == 1 for f in errs for p in f.fixes)
    _, r32 = run({"model": str(tgt), "tensor_parallel_size": 4, "speculative_config": spec("eagle", d, 3)}, version="0.32.0")
    assert not errors_on(r32, "speculative_config.draft_tensor_parallel_size")  # V1 shares the target's TP


def c_vllm_29945(tmp: Path):
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(architectures=["Qwen3NextForCausalLM"], model_type="qwen3_next", num_nextn_predict_layers=1,
               max_position_embeddings=262144)
    tgt = make_model_dir(tmp / "Qwen3-Next-80B-A3B-Instruct", cfg)
    _, r = run({"model": str(tgt), "max_model_len": 8192, "speculative_config": spec("mtp", None, 2, max_model_len=8192)})
    assert_accept(r)


def c_vllm_pr35714(tmp: Path):
    tgt = make_model_dir(tmp / "Qwen2.5-VL-32B-Instruct", {
        "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl", "hidden_size": 5120,
        "num_hidden_layers": 64, "num_attention_heads": 40, "num_key_value_heads": 8, "vocab_size": 152064,
        "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}, "vision_config": {"depth": 32},
        "torch_dtype": "bfloat16"})
    d = make_model_dir(tmp / "Qwen3-0.6B", dict(fixture_config("Qwen--Qwen3-8B"), vocab_size=152064, hidden_size=1024,
                                                  num_attention_heads=16, num_key_value_heads=8))
    _, r = run({"model": str(tgt), "speculative_config": spec("draft_model", d, 3)}, version="0.17.0")
    assert_reject(r, "speculative_config.method", "SD300")


def c_vllm_21177(tmp: Path):
    tgt = make_model_dir(tmp / "Llama-3.1-8B-Instruct", tiny_llama_cfg())
    d = eagle3_drafter(tmp / "EAGLE3-LLaMA3.1-Instruct-8B", eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    _, r = run({"model": str(tgt), "quantization": "fp8", "kv_cache_dtype": "fp8", "enable_chunked_prefill": True,
                "enable_prefix_caching": True,
                "speculative_config": spec("eagle3", d, 5, draft_tensor_parallel_size=1)}, version="0.9.2")
    assert_reject(r, "kv_cache_dtype", "SD208")


def c_vllm_pr48787(tmp: Path):
    tgt = mla_target(tmp / "GLM-5.2-NVFP4-FP8")
    d = dspark_drafter(tmp / "GLM-5.2-speculator.dspark")
    data = {"model": str(tgt), "tensor_parallel_size": 4, "kv_cache_dtype": "fp8", "speculative_config": spec("dspark", d, 7)}
    # report era: before 0.32's non-causal fp8 backends; the PR adds the drafter field (0.28 has it)
    ctx, r = run(data, version="0.28.0", gpu=hw("B300", (10, 3)))
    errs = assert_reject(r, "speculative_config.kv_cache_dtype", "SD200")
    fix = [f for f in errs if f.rule == "SD200"][0].fixes[0]
    assert fix.set == {"speculative_config.kv_cache_dtype": "bfloat16"}
    fixed = apply_patch(ctx.config, fix)
    assert fixed.kv_cache_dtype == "fp8" and fixed.speculative_config.kv_cache_dtype == "bfloat16"
    _, r2 = run(fixed.to_dict(), version="0.28.0", gpu=hw("B300", (10, 3)))
    assert not [f for f in r2.findings if f.rule == "SD200"]


def c_vllm_48380(tmp: Path):
    tgt = mla_target(tmp / "GLM-5.2-NVFP4")
    d = dspark_drafter(tmp / "dspark-drafter")
    _, r = run({"model": str(tgt), "tensor_parallel_size": 4, "kv_cache_dtype": "fp8_ds_mla",
                "speculative_config": spec("dspark", d, 8)})
    errs = assert_reject(r, "speculative_config.kv_cache_dtype", "SD200")
    assert [f for f in errs if f.rule == "SD200"][0].fixes[0].set["speculative_config.kv_cache_dtype"] in ("bfloat16", "auto")


def c_vllm_54690(tmp: Path):
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(architectures=["Qwen3_5ForCausalLM"], model_type="qwen3_5_text",
               layer_types=["linear_attention", "linear_attention", "linear_attention", "full_attention"] * 9)
    tgt = make_model_dir(tmp / "Qwen3.5-27B-INT8", cfg)
    dcfg = fixture_config("Qwen--Qwen3-8B")
    dcfg.update(architectures=["DFlash2DraftModel"], num_hidden_layers=2,
                dflash_config={"mask_token_id": 151669, "target_layer_ids": [1, 17, 33]})
    d = make_model_dir(tmp / "dflash2-drafter", dcfg)
    _, r = run({"model": str(tgt), "tensor_parallel_size": 4,
                "speculative_config": spec("dflash", d, 7, kv_cache_dtype="fp8")},
               version="0.28.0", gpu=hw("RTX-4090", (8, 9)))
    errs = assert_reject(r, "speculative_config.kv_cache_dtype", "SD200")
    assert [f for f in errs if f.rule == "SD200"][0].fixes[0].unset == ["speculative_config.kv_cache_dtype"]


def c_vllm_44879(tmp: Path):
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(architectures=["Qwen3NextForCausalLM"], model_type="qwen3_next", num_nextn_predict_layers=1,
               quantization_config={"quant_method": "compressed-tensors", "format": "float-quantized",
                                    "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor",
                                                        "dynamic": False, "symmetric": True}})
    tgt = make_model_dir(tmp / "NuExtract3-FP8", cfg)
    ctx, r = run({"model": str(tgt), "kv_cache_dtype": "auto", "speculative_config": spec("mtp", None, 1)},
                 gpu=hw("L4", (8, 9)))
    assert ctx.target is not None and ctx.target.kv_cache_quant == "fp8", ctx.target and ctx.target.kv_cache_quant
    errs = assert_reject(r, "kv_cache_dtype", "SD207")
    assert [f for f in errs if f.rule == "SD207"][0].fixes[0].set == {"kv_cache_dtype": "bfloat16"}


def c_vllm_41789(tmp: Path):
    tgt = make_model_dir(tmp / "gemma-4-26B-A4B-it-FP8-Dynamic", {
        "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
        "quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized"},
        "text_config": {"model_type": "gemma4_text", "hidden_size": 2816, "num_hidden_layers": 30,
                        "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 262144}})
    _, r = run({"model": str(tgt), "quantization": "compressed-tensors", "kv_cache_dtype": "fp8",
                "async_scheduling": False, "enable_prefix_caching": False,
                "speculative_config": spec("mtp", None, 1)}, gpu=hw("L40S", (8, 9)))
    assert_warn(r, "kv_cache_dtype", "SD206")


def c_vllm_41559(tmp: Path):
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(architectures=["Qwen3_5ForCausalLM"], model_type="qwen3_5_text")
    tgt = make_model_dir(tmp / "Qwen3.6-27B-NVFP4", cfg)
    # custom main build of 2026-07-03 (before 0.32's non-causal fp8 backends): 0.28 used
    _, r = run({"model": str(tgt), "kv_cache_dtype": "fp8", "enforce_eager": True,
                "speculative_config": spec("dspark", None, 8)}, version="0.28.0", gpu=hw("GB10", (12, 1)))
    errs = assert_reject(r, "speculative_config.kv_cache_dtype", "SD200")
    assert [f for f in errs if f.rule == "SD200"][0].fixes[0].set == {"speculative_config.kv_cache_dtype": "bfloat16"}


def c_1cat_pr54(tmp: Path):
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(architectures=["Qwen3_5ForCausalLM"], model_type="qwen3_5_text", mtp_num_hidden_layers=1,
               quantization_config={"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]})
    tgt = make_model_dir(tmp / "Qwen3.5-40B-FP8", cfg)
    _, r = run({"model": str(tgt), "tensor_parallel_size": 2, "kv_cache_dtype": "fp8_e5m2",
                "speculative_config": spec("mtp", None, 1)}, gpu=hw("V100", (7, 0)))
    assert_reject(r, "kv_cache_dtype", "SD202")
    assert_reject(r, "kv_cache_dtype", "SD201")


def c_sgl_cookbook_237(tmp: Path):
    # translated: same trap in vLLM (no k/v scales -> scale 1.0)
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(quantization_config={"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]})
    tgt = make_model_dir(tmp / "Qwen3.5-FP8", cfg)
    _, r = run({"model": str(tgt), "kv_cache_dtype": "fp8_e4m3"}, gpu=hw("B200", (10, 0)))
    ws = assert_warn(r, "kv_cache_dtype", "SD206")
    assert any(p.set.get("kv_cache_dtype") == "auto" for f in ws for p in f.fixes)


def c_vllm_pr24350(tmp: Path):
    tgt = make_model_dir(tmp / "Llama-3.1-8B-Instruct", tiny_llama_cfg())
    d = make_model_dir(tmp / "EAGLE-LLaMA3.1-Instruct-8B", fixture_config("SafeAILab--EAGLE", "eagle/train/EAGLE-LLaMA3-Instruct-8B.json"))
    _, r = run({"model": str(tgt), "tensor_parallel_size": 1, "kv_sharing_fast_prefill": True,
                "speculative_config": spec("eagle", d, 3)})
    errs = assert_reject(r, "kv_sharing_fast_prefill", "SD001")
    assert errs[0].fixes[0].unset == ["kv_sharing_fast_prefill"]


def _mtp_target(tmp: Path) -> Path:
    return make_model_dir(tmp / "DeepSeek-V3", fixture_config("deepseek-ai--DeepSeek-V3"))


def c_vllm_52069(tmp: Path):
    _, r = run({"model": str(_mtp_target(tmp)), "pipeline_parallel_size": 4, "speculative_config": spec("mtp", None, 3)},
               version=CASES["vllm-52069-mtp-pp-supportspp-on-draft"]["vllm_version"].split()[0])
    assert_reject(r, "pipeline_parallel_size", "SD301")


def c_vllm_44697(tmp: Path):
    _, r = run({"model": str(_mtp_target(tmp)), "pipeline_parallel_size": 2, "speculative_config": spec("mtp", None, 2)},
               version="0.26.0")  # before PR #44698/#46994
    assert_reject(r, "pipeline_parallel_size", "SD301")


def c_vllm_20284(tmp: Path):
    tgt = make_model_dir(tmp / "Llama-2-7b-hf", tiny_llama_cfg())
    _, r = run({"model": str(tgt), "enable_lora": True, "speculative_config": spec("ngram", None, 5, prompt_lookup_max=4)},
               version="0.9.1")  # before PR #21068
    assert_warn(r, "enable_lora", "SD302")


def c_vllm_4872(tmp: Path):
    tgt = make_model_dir(tmp / "Yi-6B-Chat", tiny_llama_cfg())
    _, r = run({"model": str(tgt), "enable_lora": True,
                "speculative_config": spec("ngram", None, 5, prompt_lookup_min=4, prompt_lookup_max=8)}, version="0.4.2")
    assert_reject(r, "enable_lora", "SD302")


def c_vllm_27969(tmp: Path):
    tgt = make_model_dir(tmp / "Llama-3.1-8B-Instruct", tiny_llama_cfg())
    d = eagle3_drafter(tmp / "EAGLE3-LLaMA3.1-Instruct-8B", eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    _, r = run({"model": str(tgt), "tensor_parallel_size": 8,
                "speculative_config": spec("eagle3", d, 4, max_model_len=2048)}, version="0.11.0")
    assert_warn(r, "speculative_config", "SD304")


def c_vllm_15554(tmp: Path):
    tgt = make_model_dir(tmp / "Mistral-Small-24B-Instruct-2501-AWQ", tiny_llama_cfg())
    _, r = run({"model": str(tgt), "tensor_parallel_size": 2, "guided_decoding_backend": "auto",
                "speculative_config": {"model": "[ngram]", "num_speculative_tokens": 3}}, version="0.8.2")
    assert_warn(r, "speculative_config", "SD304")


def c_vllm_49694(tmp: Path):
    tgt = make_model_dir(tmp / "qwen3.6-35b-a3b-fp8", fixture_config("Qwen--Qwen3-30B-A3B"))
    _, r = run({"model": str(tgt), "async_scheduling": True, "structured_outputs_config": {"backend": "xgrammar"},
                "speculative_config": spec("ngram_gpu", None, 3)})
    assert_warn(r, "speculative_config.method", "SD303")


def c_vllm_pr44297(tmp: Path):
    cfg = fixture_config("Qwen--Qwen3-30B-A3B")
    cfg.update(architectures=["Qwen3_5MoeForCausalLM"], model_type="qwen3_5_moe_text", mtp_num_hidden_layers=1)
    tgt = make_model_dir(tmp / "Qwen3.5-35B-A3B", cfg)
    _, r = run({"model": str(tgt), "reasoning_parser": "qwen3", "tool_call_parser": "qwen3_coder",
                "speculative_config": spec("mtp", None, 1)}, gpu=hw("H20", (9, 0)))
    assert_accept(r)


def _gemma4(tmp: Path, name: str = "gemma-4-31B-it") -> Path:
    return make_model_dir(tmp / name, {
        "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "vision_config": {"model_type": "siglip"},
        "text_config": {"model_type": "gemma4_text", "hidden_size": 64, "num_hidden_layers": 6, "num_attention_heads": 4,
                        "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 512, "sliding_window": 1024,
                        "layer_types": ["sliding_attention"] * 5 + ["full_attention"]}})


def c_vllm_42004(tmp: Path):
    tgt = _gemma4(tmp)
    d = eagle3_drafter(tmp / "p-eagle-head", eagle_aux_hidden_state_layer_ids=[1, 2, 3], mask_token_id=3)
    _, r = run({"model": str(tgt), "language_model_only": True, "structured_outputs_config": {"backend": "xgrammar"},
                "speculative_config": spec("eagle3", d, 3, parallel_drafting=True)})
    assert_warn(r, "speculative_config.parallel_drafting", "SD303")


def c_vllm_6306(tmp: Path):
    # request-time parameter: given as the server-wide default (--override-generation-config), V0 era
    tgt = make_model_dir(tmp / "model", tiny_llama_cfg())
    _, r = run({"model": str(tgt), "override_generation_config": {"prompt_logprobs": 1},
                "speculative_config": {"model": "[ngram]", "num_speculative_tokens": 3}}, version="0.5.1")
    assert_reject(r, "extra_args.override_generation_config", "SD307")


def c_vllm_34497(tmp: Path):
    tgt = make_model_dir(tmp / "Llama-3.1-8B-Instruct", tiny_llama_cfg())
    d = eagle3_drafter(tmp / "eagle3", eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d, 3)}, version="0.12.0")
    assert_warn(r, "speculative_config", "SD308")


def c_vllm_pr31998(tmp: Path):
    tgt = _qwen14(tmp, "Qwen2.5-14B-Instruct")
    d = _qwen14(tmp, "small-draft")
    # era of the PR (async scheduling defaulted on only for EAGLE/MTP): 0.14
    data = {"model": str(tgt), "async_scheduling": True, "speculative_config": spec("draft_model", d, 5)}
    _, r = run(data, version="0.14.0")
    assert_warn(r, "async_scheduling", "SD400")
    _, r32 = run(data, version="0.32.0")  # 0.32 accepts draft_model + async (oracle-verified)
    assert not warnings_on(r32, "async_scheduling")


def c_vllm_pr47460(tmp: Path):
    tgt = _qwen14(tmp, "Qwen2.5-14B-Instruct")
    d = _qwen14(tmp, "draft")
    _, r = run({"model": str(tgt), "speculative_config": spec("draft_model", d, 3)}, version="0.28.0")
    assert_warn(r, "speculative_config.method", "SD306")


def c_vllm_40624(tmp: Path):
    tgt = _gemma4(tmp)
    d = eagle3_drafter(tmp / "gemma-4-31B-it-speculator.eagle3", eagle_aux_hidden_state_layer_ids=[1, 2, 3])
    _, r = run({"model": str(tgt), "enable_prefix_caching": True, "speculative_config": spec("eagle3", d, 3)}, version="0.19.1")
    assert_warn(r, "enable_prefix_caching", "SD305")


def c_vllm_53670(tmp: Path):
    cfg = fixture_config("Qwen--Qwen3-8B")
    cfg.update(architectures=["Qwen3_5ForCausalLM"], model_type="qwen3_5_text",
               layer_types=["linear_attention", "linear_attention", "linear_attention", "full_attention"] * 9)
    tgt = make_model_dir(tmp / "Qwen3.8-27B-FP8", cfg)
    dcfg = fixture_config("Qwen--Qwen3-8B")
    dcfg.update(architectures=["DFlashDraftModel"], num_hidden_layers=2, dflash_config={"mask_token_id": 151669})
    d = make_model_dir(tmp / "dflash-drafter", dcfg)
    _, r = run({"model": str(tgt), "tensor_parallel_size": 2, "kv_cache_dtype": "fp8", "enable_prefix_caching": True,
                "speculative_config": spec("dflash", d, 7)}, version="0.26.1", gpu=hw("RTX-5090", (12, 0)))
    assert_warn(r, "enable_prefix_caching", "SD305")


def c_vllm_41743(tmp: Path):
    tgt = _gemma4(tmp)
    d = eagle3_drafter(tmp / "p-eagle-head", eagle_aux_hidden_state_layer_ids=[1, 2, 3], mask_token_id=3)
    _, r = run({"model": str(tgt), "speculative_config": spec("eagle3", d, 3, parallel_drafting=True)}, version="0.20.0")
    errs = assert_reject(r, "speculative_config.parallel_drafting", "SD300")
    assert errs[0].fixes


def c_vllm_50708(tmp: Path):
    cfg = fixture_config("Qwen--Qwen3-30B-A3B")
    cfg.update(architectures=["Qwen3_5MoeForCausalLM"], model_type="qwen3_5_moe_text")
    tgt = make_model_dir(tmp / "Qwen3.5-122B-A10B", cfg)
    dcfg = fixture_config("Qwen--Qwen3-8B")
    dcfg.update(architectures=["DFlashDraftModel"], num_hidden_layers=2, dflash_config={"mask_token_id": 151669})
    d = make_model_dir(tmp / "dflash", dcfg)
    _, r = run({"model": str(tgt), "speculative_config": spec("dflash", d, 16)}, version="0.26.0",
               gpu=hw("GB10", (12, 1)))
    assert_reject(r, "max_num_batched_tokens")


def _parse_reject(command: str, tmp: Path):
    """A command whose --speculative-config is not JSON: unusable input (ConfigError) or an error finding."""
    try:
        cfg = load(command=command)
    except ConfigError:
        return
    ctx = resolve_context(cfg, None, None, allow_hub=False)
    assert_reject(check_context(ctx), "speculative_config")


def c_eugr_111(tmp: Path):
    tgt = make_model_dir(tmp / "Qwen3.5-27B-FP8", fixture_config("Qwen--Qwen3-8B"))
    raw = '\'{\\"method\\":\\"qwen3_next_mtp\\",\\"num_speculative_tokens\\":2}\''
    _parse_reject(f"vllm serve {tgt} --speculative-config {raw}", tmp)


def c_wtdcode_16(tmp: Path):
    tgt = mla_target(tmp / "DeepSeek-V4-Flash", "DeepseekV4ForCausalLM", "deepseek_v4")
    _parse_reject(f"vllm serve {tgt} --tensor-parallel-size 4 --kv-cache-dtype fp8_ds_mla --speculative-config method:dspark", tmp)


def c_vllm_pr35690(tmp: Path):
    tgt = mla_target(tmp / "DeepSeek-V3.2", "DeepseekV32ForCausalLM", "deepseek_v32")
    cfg = load(command=f"vllm serve {tgt} --speculative-config.method deepseek_mtp --speculative-config.num_speculative_tokens 1")
    assert cfg.speculative_config is not None and cfg.speculative_config.num_speculative_tokens == 1
    ctx = resolve_context(cfg, None, None, allow_hub=False)
    assert_accept(check_context(ctx))


SKIPS = {
    "sglang-pr15279-fp4-kv-eagle-verify": "SGLang fp4_e2m1 KV + TARGET_VERIFY query cast; vLLM has no fp4_e2m1 KV dtype "
                                          "and no equivalent verify cast (nvfp4 KV goes through FlashInfer/TRT-LLM)",
    "sglang-17349-spec-v2-eagle3-logprobs": "SGLANG_ENABLE_SPEC_V2 logits-processor bug; vLLM 0.32/0.33 support logprobs "
                                            "with speculation (older skip is covered by vllm-34497)",
    "sglang-pr33643-penalties-per-step-under-spec": "SGLang penalty-state bookkeeping; vLLM has no equivalent option to "
                                                    "check (its old per-request spec skip is covered by vllm-34497)",
    "sglang-32459-eagle-radix-reuse-collapse": "SGLang radix-cache reuse; the vLLM equivalent (EAGLE last-block drop on "
                                               "hybrid targets) is tested by vllm-53670; on a non-hybrid vLLM target "
                                               "the drop costs one block per hit, no warning warranted",
    "sglang-14077-spec-v2-topk-gt1": "SGLang spec-v2 tree drafting (--speculative-eagle-topk); vLLM exposes no EAGLE "
                                     "top-k tree option",
    "sglang-5673-eagle-missing-step-topk-draft-args": "SGLang --speculative-num-steps/eagle-topk/num-draft-tokens; vLLM "
                                                      "has only num_speculative_tokens (its omission is vllm R025/R031)",
}

BUILDERS: dict[str, Callable[[Path], None]] = {
    "torchspec-38-eagle3-random-embed-tokens": c_torchspec_38,
    "sglang-27908-kimi-eagle3-missing-lm-head": c_sglang_27908,
    "sglang-pr25454-eagle3-aux-layer-offset": c_sglang_25454,
    "vllm-25134-eagle3-qwen3-moe-no-interface": c_vllm_25134,
    "vllm-45538-minimax-m3-rocm-eagle3-interface": c_vllm_45538,
    "vllm-pr36527-qwen35-eagle3-aux-not-captured": c_vllm_pr36527,
    "vllm-18906-llama33-70b-eagle3-hidden-size": c_vllm_18906,
    "angelslim-5-qwen3-eagle3-head-dim-mismatch": c_angelslim_5,
    "vllm-pr30987-eagle3-config-missing-architectures": c_vllm_pr30987,
    "sglang-pr21272-eagle-algorithm-with-eagle3-draft": c_sglang_pr21272,
    "sglang-36528-eagle3-without-draft-path": c_sglang_36528,
    "vllm-pr12755-r1-distill-has-no-mtp": c_vllm_pr12755,
    "modelopt-1677-gemma4-mtp-method-omitted": c_modelopt_1677,
    "vllm-25993-glm46-mtp-two-tokens": c_vllm_25993,
    "vllm-pr46075-glm5-mtp-multi-token-collapse": c_vllm_pr46075,
    "vllm-34380-glm5-mtp-sparse-mla-multi-token": c_vllm_34380,
    "arcticinference-29-suffix-config-parse": c_arctic_29,
    "vllm-40831-turboquant-kv-ngram-mtp-loops": c_vllm_40831,
    "vllm-pr42775-r1-distill-qwen-draft-vocab": c_vllm_pr42775,
    "vllm-10483-draft-tp-equal-target-rejected": c_vllm_10483,
    "vllm-31345-draft-tp1-silently-ignored": c_vllm_31345,
    "vllm-11126-v0-eagle-tp-gt1": c_vllm_11126,
    "vllm-29945-mtp-draft-max-model-len-log": c_vllm_29945,
    "vllm-pr35714-multimodal-target-draft-model": c_vllm_pr35714,
    "vllm-21177-eagle3-fp8-kv-query-key-dtype": c_vllm_21177,
    "vllm-pr48787-dspark-fp8-kv-no-noncausal-backend": c_vllm_pr48787,
    "vllm-48380-dspark-fp8-ds-mla-inherited": c_vllm_48380,
    "vllm-54690-draft-only-fp8-kv-hybrid-gdn": c_vllm_54690,
    "vllm-44879-ct-kv-scheme-forces-fp8-mtp-sm89": c_vllm_44879,
    "vllm-41789-gemma4-mtp-fp8-kv-near-zero-acceptance": c_vllm_41789,
    "vllm-41559-dflash-noncausal-fp8-kv-sm121": c_vllm_41559,
    "1cat-vllm-pr54-fp8-e5m2-with-fp8-checkpoint-mtp": c_1cat_pr54,
    "sgl-cookbook-237-fp8-kv-without-scales": c_sgl_cookbook_237,
    "vllm-pr24350-fast-prefill-with-eagle": c_vllm_pr24350,
    "vllm-52069-mtp-pp-supportspp-on-draft": c_vllm_52069,
    "vllm-44697-mtp-pp-silent-divergence": c_vllm_44697,
    "vllm-20284-ngram-lora-concurrent-crash": c_vllm_20284,
    "vllm-4872-v0-ngram-enable-lora-shape-error": c_vllm_4872,
    "vllm-27969-eagle3-json-object-crash": c_vllm_27969,
    "vllm-15554-v1-ngram-guided-decoding": c_vllm_15554,
    "vllm-49694-ngram-gpu-xgrammar-async": c_vllm_49694,
    "vllm-pr44297-mtp-reasoning-tool-calls": c_vllm_pr44297,
    "vllm-42004-p-eagle-json-schema-cliff": c_vllm_42004,
    "vllm-6306-ngram-prompt-logprobs": c_vllm_6306,
    "vllm-34497-logprobs-penalties-disable-spec": c_vllm_34497,
    "vllm-pr31998-async-scheduling-non-eagle-methods": c_vllm_pr31998,
    "vllm-pr47460-draft-model-never-replays-cudagraphs": c_vllm_pr47460,
    "vllm-40624-gemma4-eagle3-zero-prefix-hits": c_vllm_40624,
    "vllm-53670-eagle-block-drop-hybrid-gdn": c_vllm_53670,
    "vllm-41743-p-eagle-multimodal-unsupported": c_vllm_41743,
    "vllm-50708-dflash-16-tokens-negative-token-budget": c_vllm_50708,
    "eugr-111-launcher-escapes-speculative-json": c_eugr_111,
    "wtdcode-16-speculative-config-not-json": c_wtdcode_16,
    "vllm-pr35690-dotted-speculative-keys": c_vllm_pr35690,
}


def test_every_case_is_covered():
    assert set(CASES) == set(BUILDERS) | set(SKIPS)
    assert len(CASES) == 60
    assert not set(BUILDERS) & set(SKIPS)
    assert all(CASES[c]["source"].find("sgl") >= 0 for c in SKIPS)  # only SGLang rows are skipped


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_public_bug(case_id: str, tmp_path: Path):
    if case_id in SKIPS:
        pytest.skip(SKIPS[case_id])
    BUILDERS[case_id](tmp_path)
