"""Conformance corpus: tiny local model variants and a seeded product of configurations.

Shared by ``tests/test_oracle.py``, ``tests/rules/test_config_time.py`` and
``benchmarks/conformance.py`` (which puts ``tests/`` on ``sys.path``).

* :func:`build_models` writes the tiny model folders (configs + tiny tensors; the target also has
  a tokenizer): a Llama-like target, EAGLE-shaped drafters with and without their own
  ``lm_head``/``embed_tokens``, an EAGLE3 drafter (``LlamaForCausalLMEagle3``, draft vocab 256,
  ``d2t``), drafters with mismatched vocabulary / hidden size, a Qwen3 drafter (no EAGLE class),
  drafters whose folder name triggers vLLM's method detection, tiny DeepSeek-V3 MTP targets with
  1, 2 and 0 MTP layers, a ModelOpt FP8-KV target and a float16 target.
* :func:`generate` yields ``(case_id, dict)`` configurations (ServeConfig dicts with model paths)
  over methods x KV dtypes (target and drafter) x parallel sizes x flags
  (kv_sharing_fast_prefill, prefix caching, chunked prefill, async scheduling, enforce_eager)
  x model variants, deterministically for a seed.
* :func:`hand_written` is the issue-2 set: named configurations, each one exercising one vLLM
  config-time check (docs/vllm-rules.md ids in the name).

Every configuration sets ``max_model_len=512`` (what the docs/vllm-rules.md experiments used) and
never sets options whose checks are outside speculative decoding (e.g. max_num_batched_tokens
below max_num_seqs).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Iterator

__all__ = ["build_models", "generate", "hand_written", "EXCLUDED"]

# Classes of configurations left out of the accept/reject comparison, with the reason.
EXCLUDED = {
    "suffix": "needs the arctic-inference package on the server; the wizard warns (SD054) instead of "
              "probing the machine, vLLM raises ImportError when it is missing.",
    "fp8 KV on CPU": "accepted by vLLM at config time; fails at first forward on hosts without AVX-512 "
                     "(load/run time, R109) - other rules report it as an error.",
}


def _llama_cfg(**kw) -> dict[str, Any]:
    cfg = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 128,
        "intermediate_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
        "num_hidden_layers": 1, "head_dim": 32, "vocab_size": 512, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "silu", "tie_word_embeddings": False,
        "bos_token_id": 0, "eos_token_id": 1, "torch_dtype": "bfloat16",
    }
    cfg.update(kw)
    return cfg


def _dsv3_cfg(n_mtp: int | None) -> dict[str, Any]:
    cfg = {
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 128,
        "intermediate_size": 256, "moe_intermediate_size": 64, "n_routed_experts": 4, "n_shared_experts": 1,
        "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "topk_method": "noaux_tc",
        "scoring_func": "sigmoid", "routed_scaling_factor": 2.5, "norm_topk_prob": True,
        "num_hidden_layers": 2, "first_k_dense_replace": 1, "moe_layer_freq": 1,
        "num_attention_heads": 4, "num_key_value_heads": 4, "kv_lora_rank": 32, "q_lora_rank": None,
        "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32, "vocab_size": 512,
        "max_position_embeddings": 2048, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
        "hidden_act": "silu", "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1,
        "torch_dtype": "bfloat16", "attention_bias": False,
    }
    if n_mtp is not None:
        cfg["num_nextn_predict_layers"] = n_mtp
    return cfg


def _copy_tokenizer(src: Path, dst: Path) -> None:
    for f in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (src / f).exists():
            (dst / f).write_text((src / f).read_text(encoding="utf-8"), encoding="utf-8")


def build_models(root: Path) -> dict[str, str]:
    """Write the tiny model folders under ``root`` (idempotent) and return name -> absolute path."""
    from factory import llama_tensor_shapes, make_model_dir, make_tiny_llama

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    out: dict[str, str] = {}
    target = root / "target"
    if not (target / "model.safetensors").exists():
        make_tiny_llama(target, num_hidden_layers=2, dtype="bfloat16")
    out["target"] = str(target)

    def model(name: str, cfg: dict, tensors: dict | None = None, tokenizer: bool = False) -> None:
        folder = root / name
        if not (folder / "config.json").exists():
            make_model_dir(folder, cfg, tensors or {})
            if tokenizer:
                _copy_tokenizer(target, folder)
        out[name] = str(folder)

    tcfg = json.loads((target / "config.json").read_text())
    model("target_fp16", {**tcfg, "torch_dtype": "float16"}, tokenizer=True)
    model("target_modelopt", {**tcfg, "quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8",
                                                               "kv_cache_quant_algo": "FP8"}}, tokenizer=True)
    d = _llama_cfg()
    full = llama_tensor_shapes(d)
    no_heads = llama_tensor_shapes(d, lm_head=False, embed=False)
    model("draft", _llama_cfg(num_attention_heads=2, num_key_value_heads=2, head_dim=64), tokenizer=True)
    model("eagle_own_heads", d, full)
    model("eagle_shared_heads", d, no_heads)
    e3 = _llama_cfg(architectures=["LlamaForCausalLMEagle3"], draft_vocab_size=256, target_hidden_size=128)
    e3_t = {**no_heads, "lm_head.weight": (256, 128), "d2t": (256,), "midlayer.hidden_norm.weight": (128,),
            "fc.weight": (128, 384)}
    model("eagle3_head", e3, e3_t)
    model("eagle3_head_embed", e3, {**e3_t, "model.embed_tokens.weight": (512, 128)})
    model("draft_v1024", _llama_cfg(vocab_size=1024), tokenizer=True)
    model("draft_h256", _llama_cfg(hidden_size=256, head_dim=64), tokenizer=True)
    model("draft_qwen3", _llama_cfg(architectures=["Qwen3ForCausalLM"], model_type="qwen3"), tokenizer=True)
    model("draft_short", _llama_cfg(max_position_embeddings=256), tokenizer=True)
    model("my_eagle3_draft", d, tokenizer=True)
    model("eagle-llama-draft", d, tokenizer=True)
    for n in (1, 2, 0):
        model(f"dsv3_mtp{n}", _dsv3_cfg(n), tokenizer=True)
    return out


# ---- the generated corpus ----------------------------------------------------------------

_DRAFTERS = {
    "eagle": ["eagle_own_heads", "eagle_shared_heads", "draft_qwen3", "draft", "draft_h256"],
    "eagle3": ["eagle3_head", "eagle3_head_embed", "draft", "draft_qwen3", "draft_h256"],
    "draft_model": ["draft", "draft_v1024", "draft_h256", "my_eagle3_draft", "eagle-llama-draft", "draft_short", "dsv3_mtp2"],
    "dflash": ["draft"],
    "dspark": ["draft"],
}
_KV = ["auto"] * 6 + ["bfloat16", "float16", "fp8", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4", "fp8_ds_mla", "nvfp4_ds_mla", "fp9"]
_DRAFT_KV = [None] * 10 + ["auto", "bfloat16", "fp8", "fp8_e5m2", "fp9"]


def _one(rng: random.Random, models: dict[str, str], noise: bool = True) -> dict[str, Any]:
    method = rng.choice(["ngram", "ngram", "ngram", "eagle", "eagle", "eagle3", "eagle3", "eagle3", "draft_model", "draft_model",
                         "mtp", "mtp", "mtp", "deepseek_mtp", None, None, "ngram_gpu", "dflash", "dspark", "EAGLE3",
                         "medusa", "custom_class"])
    target = "target"
    if method in ("mtp", "deepseek_mtp"):
        target = rng.choice(["dsv3_mtp1", "dsv3_mtp1", "dsv3_mtp2", "dsv3_mtp0", "target"])
    elif rng.random() < 0.1:
        target = rng.choice(["target_fp16", "target_modelopt", "dsv3_mtp1"])
    cfg: dict[str, Any] = {"model": models[target], "max_model_len": 512}
    spec: dict[str, Any] = {}
    if method is not None:
        spec["method"] = method
    k = rng.choice([1, 2, 3, 3, 3, 4, 5, 5, 8, 0, None] if method not in ("mtp", "deepseek_mtp") else [1, 1, 1, 2, 3, 4, None])
    if not noise and k in (0, None):
        k = 3
    if k is not None:
        spec["num_speculative_tokens"] = k
    m = (method or "draft_model").lower()
    if m in _DRAFTERS:
        if rng.random() < 0.95:
            spec["model"] = models[rng.choice(_DRAFTERS[m])]
    elif m == "custom_class":
        spec["model"] = "my_pkg.MyProposer"
    elif method is None:
        spec["model"] = rng.choice([models["draft"], "ngram", "[ngram]", models["my_eagle3_draft"]])
    if m in ("ngram", "ngram_gpu") and rng.random() < 0.5:
        lo, hi = rng.choice([(None, 4), (2, None), (2, 5), (5, 2), (1, 1), (3, 3)])
        if lo is not None:
            spec["prompt_lookup_min"] = lo
        if hi is not None:
            spec["prompt_lookup_max"] = hi
    kv = rng.choice(_KV if noise else _KV[:-1])
    if kv != "auto" or rng.random() < 0.3:
        cfg["kv_cache_dtype"] = kv
    dkv = rng.choice(_DRAFT_KV if noise else _DRAFT_KV[:-1])
    if dkv is not None:
        spec["kv_cache_dtype"] = dkv
    tp = rng.choice([1, 1, 1, 2, 4])
    if tp > 1:
        cfg["tensor_parallel_size"] = tp
    if rng.random() < 0.08:
        cfg["pipeline_parallel_size"] = 2
    if rng.random() < 0.06:
        cfg["dtype"] = rng.choice(["float16", "bfloat16"])
    dtp = rng.choice([None] * 6 + [1, 1, 2])
    if dtp is not None:
        spec["draft_tensor_parallel_size"] = dtp
    for flag in ("kv_sharing_fast_prefill", "enable_prefix_caching", "enable_chunked_prefill", "async_scheduling", "enforce_eager"):
        r = rng.random()
        if r < 0.12:
            cfg[flag] = True
        elif r < 0.18:
            cfg[flag] = False
    if cfg.get("enable_chunked_prefill") is False:
        cfg.pop("enable_chunked_prefill")  # disabling it brings a non-speculative max_num_batched_tokens check
    extra = rng.random() if noise else 0.1 + 0.9 * rng.random()
    if extra < 0.05:
        spec["tensor_parallel_size"] = 1
    elif extra < 0.10:
        spec["num_lookahead_slots"] = 3
    elif extra < 0.14:
        spec["max_model_len"] = rng.choice([256, 1024, 4096])
    elif extra < 0.17:
        spec["index_share_for_mtp_iteration"] = True
    elif extra < 0.20:
        spec["disable_padded_drafter_batch"] = True
    elif extra < 0.23:
        spec["use_heterogeneous_vocab"] = True
    elif extra < 0.26:
        spec["parallel_drafting"] = True
    elif extra < 0.28:
        spec.update({"rejection_sample_method": "synthetic", "synthetic_acceptance_length": 2.0})
    elif extra < 0.30:
        spec["attention_backend"] = rng.choice(["TRITON_ATTN", "FOO", "auto"])
    elif extra < 0.33:
        cfg.update({"enable_lora": True, "max_num_seqs": rng.choice([8, 256]), "max_num_batched_tokens": 512})
    elif extra < 0.35:
        spec["enable_adaptive_verification"] = True
    if rng.random() < 0.06:
        cfg["env"] = {"VLLM_USE_V2_MODEL_RUNNER": rng.choice(["0", "1"])}
    if rng.random() < 0.04:
        return {"model": cfg["model"], "max_model_len": 512, **({"kv_cache_dtype": cfg["kv_cache_dtype"]} if "kv_cache_dtype" in cfg else {})}
    cfg["speculative_config"] = spec
    return cfg


def generate(models: dict[str, str], n: int, seed: int = 0, noise: bool = True) -> Iterator[tuple[str, dict[str, Any]]]:
    """``n`` configurations, deterministic for ``seed``; ids 'gen-<seed>-<i>'.

    ``noise=False`` leaves out the obvious single-field errors (k=0/missing, unknown KV dtype
    names, legacy keys, ``tensor_parallel_size`` in the speculative config), so more
    configurations get past them to the cross-option checks."""
    rng = random.Random(seed)
    for i in range(n):
        yield f"gen-{seed}-{i}", _one(rng, models, noise)


def hand_written(models: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """The issue-2 set: >= 30 named configurations, one vLLM check each (docs/vllm-rules.md ids)."""
    t, dr = models["target"], models["draft"]
    ds1, ds2, ds0 = models["dsv3_mtp1"], models["dsv3_mtp2"], models["dsv3_mtp0"]
    e3 = models["eagle3_head"]

    def c(**kw):
        return {"model": kw.pop("model", t), "max_model_len": 512, **kw}

    sc = lambda **kw: kw  # noqa: E731
    return [
        ("R070-ngram-defaults", c(speculative_config=sc(method="ngram", num_speculative_tokens=3))),
        ("R070-min-gt-max", c(speculative_config=sc(method="ngram", num_speculative_tokens=3, prompt_lookup_min=5, prompt_lookup_max=2))),
        ("R025-ngram-no-k", c(speculative_config=sc(method="ngram"))),
        ("R012-lookup-min-0", c(speculative_config=sc(method="ngram", num_speculative_tokens=3, prompt_lookup_min=0))),
        ("R021-model-ngram", c(speculative_config=sc(model="[ngram]", num_speculative_tokens=3))),
        ("R011-k-zero", c(speculative_config=sc(method="ngram", num_speculative_tokens=0))),
        ("R024-k-without-model", c(speculative_config=sc(num_speculative_tokens=3))),
        ("R013-tp-in-spec", c(speculative_config=sc(method="ngram", num_speculative_tokens=3, tensor_parallel_size=1))),
        ("R009-unknown-key", c(speculative_config=sc(method="ngram", num_speculative_tokens=3, num_lookahead_slots=3))),
        ("R010-bad-method", c(speculative_config=sc(method="eagle2", num_speculative_tokens=3))),
        ("R010-uppercase", c(speculative_config=sc(method="EAGLE3", model=dr, num_speculative_tokens=3))),
        ("R022-draft-autodetect", c(speculative_config=sc(model=dr, num_speculative_tokens=3))),
        ("R025-draft-no-k", c(speculative_config=sc(model=dr))),
        ("R063-vocab-mismatch", c(speculative_config=sc(model=models["draft_v1024"], num_speculative_tokens=3))),
        ("R063-hetero-ok", c(speculative_config=sc(model=models["draft_v1024"], num_speculative_tokens=3, use_heterogeneous_vocab=True))),
        ("R064-hetero-eagle", c(speculative_config=sc(method="eagle", model=dr, num_speculative_tokens=3, use_heterogeneous_vocab=True))),
        ("R055-draft-tp-2", c(speculative_config=sc(model=dr, num_speculative_tokens=3, draft_tensor_parallel_size=2))),
        ("R059-spec-len-gt-target", c(speculative_config=sc(model=dr, num_speculative_tokens=3, max_model_len=1024))),
        ("R058-spec-len-gt-draft", c(speculative_config=sc(model=dr, num_speculative_tokens=3, max_model_len=4096))),
        ("R026-name-eagle3", c(speculative_config=sc(method="draft_model", model=models["my_eagle3_draft"], num_speculative_tokens=3))),
        ("R026-eagle-dash-mtp", c(speculative_config=sc(method="mtp", model=models["eagle-llama-draft"], num_speculative_tokens=1))),
        ("R032-eagle3-plain-llama", c(speculative_config=sc(method="eagle3", model=dr, num_speculative_tokens=3))),
        ("R032-eagle-qwen3", c(speculative_config=sc(method="eagle", model=models["draft_qwen3"], num_speculative_tokens=3))),
        ("R027-mtp-on-llama", c(speculative_config=sc(method="mtp", num_speculative_tokens=1))),
        ("R023-alias-on-llama", c(speculative_config=sc(method="deepseek_mtp", num_speculative_tokens=1))),
        ("R040-mtp-dsv3-k1", c(model=ds1, speculative_config=sc(method="mtp", num_speculative_tokens=1))),
        ("R030-mtp-dsv3-k3", c(model=ds1, speculative_config=sc(method="mtp", num_speculative_tokens=3))),
        ("R041-mtp-n2-k3", c(model=ds2, speculative_config=sc(method="mtp", num_speculative_tokens=3))),
        ("R025-mtp-no-k", c(model=ds2, speculative_config=sc(method="mtp"))),
        ("R042-mtp-n0", c(model=ds0, speculative_config=sc(method="mtp", num_speculative_tokens=1))),
        ("R031-mtp-model-no-k", c(model=ds2, speculative_config=sc(method="mtp", model=ds2))),
        ("R023-alias-dsv3", c(model=ds1, speculative_config=sc(method="deepseek_mtp", num_speculative_tokens=1))),
        ("R007-kv-invalid", c(kv_cache_dtype="fp9")),
        ("R014-spec-kv-invalid", c(speculative_config=sc(method="eagle", model=dr, num_speculative_tokens=3, kv_cache_dtype="fp9"))),
        ("R103-nvfp4-mla", c(model=ds1, kv_cache_dtype="nvfp4")),
        ("R103-nvfp4-ds-mla-ok", c(model=ds1, kv_cache_dtype="nvfp4_ds_mla")),
        ("R101-modelopt-auto", c(model=models["target_modelopt"])),
        ("R080-fast-prefill-eagle", c(kv_sharing_fast_prefill=True, speculative_config=sc(method="eagle", model=dr, num_speculative_tokens=3))),
        ("R080-fast-prefill-mtp", c(model=ds1, kv_sharing_fast_prefill=True, speculative_config=sc(method="mtp", num_speculative_tokens=1))),
        ("R080-fast-prefill-ngram-ok", c(kv_sharing_fast_prefill=True, speculative_config=sc(method="ngram", num_speculative_tokens=3))),
        ("R081-async-ngram", c(async_scheduling=True, speculative_config=sc(method="ngram", num_speculative_tokens=3))),
        ("R081-async-padded-off", c(async_scheduling=True, speculative_config=sc(model=dr, num_speculative_tokens=3, disable_padded_drafter_batch=True))),
        ("R088-lora-budget", c(enable_lora=True, max_num_seqs=256, max_num_batched_tokens=512, speculative_config=sc(method="ngram", num_speculative_tokens=3))),
        ("R088-lora-budget-ok", c(enable_lora=True, max_num_seqs=8, max_num_batched_tokens=512, speculative_config=sc(method="ngram", num_speculative_tokens=3))),
        ("R087-tiny-budget", c(max_num_seqs=1, max_num_batched_tokens=1, speculative_config=sc(model=dr, num_speculative_tokens=3))),
        ("R087-eagle-budget-3", c(max_num_seqs=1, max_num_batched_tokens=3, speculative_config=sc(method="eagle", model=dr, num_speculative_tokens=3))),
        ("R075-synthetic-no-rates", c(speculative_config=sc(method="ngram", num_speculative_tokens=3, rejection_sample_method="synthetic"))),
        ("R075-rates-without-synthetic", c(speculative_config=sc(method="ngram", num_speculative_tokens=3, synthetic_acceptance_length=2.0))),
        ("R073-index-share-ngram", c(speculative_config=sc(method="ngram", num_speculative_tokens=3, index_share_for_mtp_iteration=True))),
        ("R049-dspark-topk-draft", c(speculative_config=sc(model=dr, num_speculative_tokens=3, dspark_draft_topk=8))),
        ("R015-attn-backend-bogus", c(speculative_config=sc(method="eagle", model=dr, num_speculative_tokens=3, attention_backend="FOO"))),
        ("R024-custom-class-no-model", c(speculative_config=sc(method="custom_class", num_speculative_tokens=3))),
        ("R020-custom-class-detect", c(speculative_config=sc(model="my_pkg.MyProposer", num_speculative_tokens=3))),
        ("R084-dspark-cpu", c(speculative_config=sc(method="dspark", model=dr, num_speculative_tokens=3))),
        ("R084-adaptive-cpu", c(speculative_config=sc(method="eagle", model=dr, num_speculative_tokens=3, enable_adaptive_verification=True))),
        ("R074-adaptive-argmax", c(speculative_config=sc(method="eagle", model=dr, num_speculative_tokens=3, use_local_argmax_reduction=True, enable_adaptive_verification=True))),
        ("R012-draft-tp-0", c(speculative_config=sc(model=dr, num_speculative_tokens=3, draft_tensor_parallel_size=0))),
        ("R062-ngram-len-ignored", c(speculative_config=sc(method="ngram", num_speculative_tokens=3, max_model_len=4096))),
        ("R016-bad-rejection", c(speculative_config=sc(method="ngram", num_speculative_tokens=3, rejection_sample_method="typical"))),
        ("R009-033-field-on-032", c(speculative_config=sc(method="ngram", num_speculative_tokens=3, xpress_topc=8))),
        ("R010-medusa-032", c(speculative_config=sc(method="medusa", model=dr, num_speculative_tokens=3))),
        ("eagle3-drafter-ok", c(speculative_config=sc(method="eagle3", model=e3, num_speculative_tokens=3))),
        ("R005-shorthand-conflict", c(spec_method="ngram", speculative_config=sc(method="ngram", num_speculative_tokens=3))),
        ("R085-v2-forced-cpu", c(env={"VLLM_USE_V2_MODEL_RUNNER": "1"}, speculative_config=sc(method="ngram", num_speculative_tokens=3))),
        ("R085-v2-forced-pard", c(env={"VLLM_USE_V2_MODEL_RUNNER": "1"}, speculative_config=sc(model=dr, num_speculative_tokens=3, parallel_drafting=True))),
        ("R083-v2-off", c(env={"VLLM_USE_V2_MODEL_RUNNER": "0"}, speculative_config=sc(method="eagle", model=dr, num_speculative_tokens=3))),
        ("R056-tp4-heads2", c(tensor_parallel_size=4, speculative_config=sc(model=dr, num_speculative_tokens=3))),
        ("R056-tp4-draft-tp1", c(tensor_parallel_size=4, speculative_config=sc(model=dr, num_speculative_tokens=3, draft_tensor_parallel_size=1))),
    ]
