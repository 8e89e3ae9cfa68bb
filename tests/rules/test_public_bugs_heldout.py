"""Held-out evaluation: 20 public vLLM reports that no other test, rule, advisory or source list
used (tests/data/public-bugs-heldout.jsonl; README next to it), each run through the real check
path (``resolve_context`` + ``check_context``: every rule and every advisory).

The file was written and committed BEFORE the mechanism rules SD700-SD799 were built, so the
figure measures the mechanisms on reports nobody tuned for. Verdicts follow the public-bugs
convention: ``reject`` -> an error on the case's field, ``warn`` -> at least a warning there,
``accept`` -> no error at all. The fields of a case are the ones the report is about (any one of
them may carry the finding).

Model folders carry the real config.json fields of the models involved (copied from
tests/data/hf or the offline catalog, or, for models without a local copy, the fields the report
and the public model card state; approximations are named per case). Hardware is the reported
GPU (compute capability and memory) when the report names one.

``MISSES`` lists the cases the wizard does not handle, each with the reason; they run as strict
xfails, so a miss that starts passing shows up. ``test_hit_rate`` prints the figure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from factory import DATA, fixture_config, make_model_dir
from wizard.api import check_context
from wizard.config import config_from_dict
from wizard.context import clear_model_cache, resolve_context
from wizard.hardware.catalog import lookup
from wizard.hardware.spec import Hardware
from wizard.vllm.versions import parse_version

ROWS = [json.loads(line) for line in (DATA / "public-bugs-heldout.jsonl").read_text().splitlines() if line.strip()]
CASES = {r["id"]: r for r in ROWS}
GiB = 1 << 30


@dataclass
class Situation:
    """What a builder returns: the serve options, the release checked, the GPU, the fields."""

    data: dict[str, Any]
    version: str | None
    gpu: Hardware | None
    fields: tuple[str, ...]
    notes: list[str] = field(default_factory=list)


def gpu(name: str, sm: tuple[int, int], mem_gib: int, count: int = 1) -> Hardware:
    """A GPU the catalog lacks, as the report describes it (compute capability, memory)."""
    return Hardware(name=name, vendor="nvidia", memory_bytes=mem_gib * GiB, compute_capability=sm, count=count,
                    source="public report")


def catalog_gpu(name: str, count: int = 1) -> Hardware:
    return lookup(name).model_copy(update={"count": count})


def spec(method: str | None, model: str | Path | None = None, k: int | None = 3, **kw) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if method:
        d["method"] = method
    if model is not None:
        d["model"] = str(model)
    if k is not None:
        d["num_speculative_tokens"] = k
    d.update(kw)
    return d


# ---- model configs (real fields) ----------------------------------------------------------

def llama8b() -> dict[str, Any]:
    return fixture_config("meta-llama--Llama-3.1-8B-Instruct")


def eagle3_llama8b() -> dict[str, Any]:
    return fixture_config("sgl-project--SpecForge", "configs/llama3-8B-eagle3.json")


def qwen35_hybrid(layers: int = 40, hidden: int = 2048, moe: bool = True, **extra) -> dict[str, Any]:
    """A Qwen3.5/3.6-style hybrid (3 Gated-DeltaNet layers : 1 full attention, one MTP layer), the
    fields of the public Qwen3.5-35B-A3B / Qwen3.6-27B config.json (text_config layout)."""
    text = {
        "model_type": "qwen3_5_moe_text" if moe else "qwen3_5_text",
        "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": 16, "num_key_value_heads": 2,
        "head_dim": 256, "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * (layers // 4),
        "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
        "linear_num_value_heads": 32, "linear_value_head_dim": 128, "mtp_num_hidden_layers": 1,
        "max_position_embeddings": 262144, "vocab_size": 248320, "partial_rotary_factor": 0.25,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000000}, "dtype": "bfloat16",
    }
    if moe:
        text.update(num_experts=256, num_experts_per_tok=8, moe_intermediate_size=512, shared_expert_intermediate_size=512)
    cfg = {"architectures": ["Qwen3_5MoeForConditionalGeneration" if moe else "Qwen3_5ForConditionalGeneration"],
           "model_type": "qwen3_5_moe" if moe else "qwen3_5", "text_config": text, "tie_word_embeddings": False}
    cfg.update(extra)
    return cfg


def dflash_drafter(hidden: int = 2048, layers: int = 5, head_dim: int = 128, heads: int = 32, kv: int = 4, **extra) -> dict[str, Any]:
    """A z-lab DFlash drafter config (DFlashDraftModel, Qwen3 layers, dflash_config)."""
    cfg = {"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "hidden_size": hidden, "num_hidden_layers": layers,
           "num_attention_heads": heads, "num_key_value_heads": kv, "head_dim": head_dim, "intermediate_size": hidden * 3,
           "vocab_size": 248320, "max_position_embeddings": 262144, "block_size": 16,
           "dflash_config": {"mask_token_id": 248077, "target_layer_ids": [1, 10, 19, 28, 37]}, "torch_dtype": "bfloat16"}
    cfg.update(extra)
    return cfg


def gemma4_31b() -> dict[str, Any]:
    """Gemma 4 31B it: sliding (head_dim 256) and global (head_dim 512, 4 KV heads) layers, 5:1."""
    text = {"model_type": "gemma4_text", "hidden_size": 5376, "num_hidden_layers": 60, "num_attention_heads": 32,
            "num_key_value_heads": 16, "num_global_key_value_heads": 4, "head_dim": 256, "global_head_dim": 512,
            "sliding_window": 1024, "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 10,
            "max_position_embeddings": 262144, "vocab_size": 262144, "dtype": "bfloat16"}
    return {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "text_config": text}


def gemma3_1b() -> dict[str, Any]:
    """google/gemma-3-1b-it (the offline catalog's fields) with its layer_types (5 sliding : 1 full)."""
    return {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 1152, "num_hidden_layers": 26,
            "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 6912,
            "vocab_size": 262144, "max_position_embeddings": 32768, "sliding_window": 512, "sliding_window_pattern": 6,
            "layer_types": [("full_attention" if (i + 1) % 6 == 0 else "sliding_attention") for i in range(26)],
            "query_pre_attn_scalar": 256, "torch_dtype": "bfloat16", "tie_word_embeddings": True}


def gemma3_270m() -> dict[str, Any]:
    """google/gemma-3-270m-it config.json fields."""
    return {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 640, "num_hidden_layers": 18,
            "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 2048,
            "vocab_size": 262144, "max_position_embeddings": 32768, "sliding_window": 512,
            "layer_types": [("full_attention" if (i + 1) % 6 == 0 else "sliding_attention") for i in range(18)],
            "query_pre_attn_scalar": 256, "torch_dtype": "bfloat16", "tie_word_embeddings": True}


# ---- one builder per case -----------------------------------------------------------------

def b_47825(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "Meta-Llama-3.1-8B-Instruct", llama8b())
    # ibm-ai-platform/llama3-8b-accelerator config.json
    d = make_model_dir(tmp / "llama3-8b-accelerator", {
        "architectures": ["MLPSpeculatorPreTrainedModel"], "model_type": "mlp_speculator", "emb_dim": 4096,
        "inner_dim": 3072, "n_candidates": 5, "n_predict": 4, "top_k_tokens_per_head": [4, 3, 2, 2],
        "vocab_size": 128256, "scale_input": True, "tie_weights": True, "torch_dtype": "float16"})
    return Situation({"model": str(tgt), "speculative_config": spec("mlp_speculator", d, None)}, "0.23.0", None,
                     ("speculative_config.method",))


def b_54933(tmp: Path) -> Situation:
    # the report names no method ("static speculative decoding", config-level reproducer): EAGLE-3 on Llama
    tgt = make_model_dir(tmp / "llama", llama8b())
    d = make_model_dir(tmp / "llama-eagle3", eagle3_llama8b())
    return Situation({"model": str(tgt), "max_num_seqs": 6, "max_cudagraph_capture_size": 42,
                      "speculative_config": spec("eagle3", d, 6)}, "0.28.0", gpu("GB10", (12, 1), 119, 1),
                     ("max_cudagraph_capture_size", "cudagraph_capture_sizes", "compilation_config",
                      "speculative_config.num_speculative_tokens", "max_num_seqs"))


def b_50488(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "llama", llama8b())
    d = make_model_dir(tmp / "llama-eagle3", eagle3_llama8b())
    return Situation({"model": str(tgt), "max_num_seqs": 32, "compilation_config": json.dumps({"cudagraph_mode": "FULL_DECODE_ONLY"}),
                      "speculative_config": spec("eagle3", d, 16)}, "0.26.0", catalog_gpu("H100-SXM"),
                     ("max_cudagraph_capture_size", "cudagraph_capture_sizes", "compilation_config",
                      "speculative_config.num_speculative_tokens", "max_num_seqs"))


def b_46480(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "Qwen3.5-35B-A3B", qwen35_hybrid())
    d = make_model_dir(tmp / "Qwen3.5-35B-A3B-DFlash", dflash_drafter())
    return Situation({"model": str(tgt), "attention_backend": "FLASH_ATTN", "max_num_batched_tokens": 32768, "max_num_seqs": 16,
                      "max_model_len": 183872, "speculative_config": spec("dflash", d, 8)}, "0.20.1",
                     gpu("H20", (9, 0), 96), ("speculative_config.model", "speculative_config.method"))


def b_29102(tmp: Path) -> Situation:
    return Situation({"model": "Qwen/Qwen3-Next-80B-A3B-Instruct", "tensor_parallel_size": 4, "enable_prefix_caching": False,
                      "speculative_config": spec("qwen3_next_mtp", None, 4)}, "0.11.1", catalog_gpu("H100-SXM", 4),
                     ("speculative_config.num_speculative_tokens",))


def b_58080(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "Qwen3.8-27B", qwen35_hybrid(layers=64, hidden=5120, moe=False))
    hf = {"text_config": {"rope_parameters": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 262144}}}
    return Situation({"model": str(tgt), "max_model_len": 1000000, "hf_overrides": json.dumps(hf),
                      "env": {"VLLM_USE_V2_MODEL_RUNNER": "0"},
                      "speculative_config": spec("mtp", None, 3)}, "0.32.0", catalog_gpu("H100-SXM", 2),
                     ("max_model_len", "hf_overrides", "speculative_config.max_model_len"))


def b_53912(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "Qwen3.5-27B", qwen35_hybrid(layers=64, hidden=5120, moe=False))
    return Situation({"model": str(tgt), "enable_prefix_caching": True, "speculative_config": spec("mtp", None, 2)},
                     "0.28.0", catalog_gpu("H100-SXM"), ("enable_prefix_caching",))


def b_47194(tmp: Path) -> Situation:
    cfg = qwen35_hybrid(layers=64, hidden=5120, moe=False,
                        quantization_config={"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True})
    tgt = make_model_dir(tmp / "Qwopus3.6-27B-Coder-GPTQ-Pro", cfg)
    return Situation({"model": str(tgt), "tensor_parallel_size": 2, "quantization": "gptq_marlin", "kv_cache_dtype": "fp8_e5m2",
                      "enable_prefix_caching": True, "speculative_config": spec("mtp", None, 3)}, None,
                     gpu("RTX-2080-Ti-22GB", (7, 5), 22, 2), ("enable_prefix_caching",))


def b_49293(tmp: Path) -> Situation:
    cfg = qwen35_hybrid(layers=64, hidden=5120, moe=False, quantization_config={
        "quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16})
    tgt = make_model_dir(tmp / "Qwen3.6-27B-NVFP4", cfg)
    d = make_model_dir(tmp / "Qwen3.6-27B-DFlash", dflash_drafter(hidden=5120))
    return Situation({"model": str(tgt), "env": {"VLLM_USE_V2_MODEL_RUNNER": "1"}, "speculative_config": spec("dflash", d, None)},
                     "0.26.0", catalog_gpu("B200"), ("kv_cache_dtype", "speculative_config.kv_cache_dtype"))


def b_53979(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "Qwen3-8B", fixture_config("Qwen--Qwen3-8B"))
    d = make_model_dir(tmp / "Qwen3-8B-DFlash", dflash_drafter(hidden=4096, kv=8, vocab_size=151936))
    return Situation({"model": str(tgt), "kv_cache_dtype": "nvfp4", "speculative_config": spec("dflash", d, 8)}, "0.28.0",
                     catalog_gpu("RTX-5090"), ("kv_cache_dtype", "speculative_config.kv_cache_dtype"))


def b_32765(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "gemma-3-1b-it", gemma3_1b())
    d = make_model_dir(tmp / "gemma3-1b-eagle3", fixture_config("sgl-project--SpecForge", "configs/gemma3-1b-eagle3.json"))
    return Situation({"model": str(tgt), "speculative_config": spec("eagle3", d, 3)}, "0.14.0", None,
                     ("speculative_config.method", "speculative_config.model"))


def b_33133(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "gemma-3-1b-it", gemma3_1b())
    d = make_model_dir(tmp / "gemma-3-270m-it", gemma3_270m())
    return Situation({"model": str(tgt), "enable_prefix_caching": False, "speculative_config": spec("draft_model", d, 3)},
                     "0.15.0", catalog_gpu("H100-SXM"), ("speculative_config.model",))


def b_22432(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "Llama-3.1-8B-Instruct", llama8b())
    dcfg = fixture_config("SafeAILab--EAGLE", "eagle/train/EAGLE-LLaMA3-Instruct-8B.json")
    dcfg["num_key_value_heads"] = 4  # the report: a drafter trained with another KV-head count than the target's 8
    d = make_model_dir(tmp / "EAGLE-LLaMA3-kv4", dcfg)
    return Situation({"model": str(tgt), "speculative_config": spec("eagle", d, 3)}, "0.10.0", catalog_gpu("H100-SXM"),
                     ("speculative_config.model",))


def b_42069(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "gemma-4-31B-it", gemma4_31b())
    d = make_model_dir(tmp / "gemma-4-31B-it-dflash", dflash_drafter(hidden=5376, head_dim=256, heads=32, kv=16, vocab_size=262144))
    return Situation({"model": str(tgt), "speculative_config": spec("dflash", d, 8)}, "0.20.0", catalog_gpu("H100-SXM"),
                     ("attention_backend", "speculative_config.attention_backend", "speculative_config.model"))


def b_40382(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "gemma-4-31B-it-int4", gemma4_31b())
    d = make_model_dir(tmp / "gemma-4-31B-it-speculator.dflash", dflash_drafter(hidden=5376, head_dim=256, heads=32, kv=16,
                                                                                  vocab_size=262144))
    return Situation({"model": str(tgt), "attention_backend": "FLASH_ATTN",
                      "speculative_config": spec("dflash", d, 8, parallel_drafting=True)}, "0.19.0", catalog_gpu("A100-80GB"),
                     ("attention_backend", "speculative_config.attention_backend", "speculative_config.model"))


def b_55800(tmp: Path) -> Situation:
    cfg = fixture_config("deepseek-ai--DeepSeek-V3")
    cfg.update(architectures=["GlmMoeDsaForCausalLM"], model_type="glm_moe_dsa")
    tgt = make_model_dir(tmp / "GLM-5.3", cfg)
    d = make_model_dir(tmp / "GLM-5.3-DFlash2", dflash_drafter(
        hidden=7168, head_dim=128, heads=64, kv=8, vocab_size=154880, architectures=["DFlash2DraftModel"],
        sliding_window=2048, use_sliding_window=True, layer_types=["sliding_attention"] * 5))
    return Situation({"model": str(tgt), "tensor_parallel_size": 4, "max_model_len": 262144, "enable_prefix_caching": False,
                      "speculative_config": spec("dflash", d, 7)}, "0.30.0", catalog_gpu("H100-SXM", 4),
                     ("max_model_len", "speculative_config.model"))


def b_10442(tmp: Path) -> Situation:
    return Situation({"model": "meta-llama/Llama-3.1-8B-Instruct",
                      "speculative_config": spec("ngram", None, 5, prompt_lookup_max=4)}, "0.6.4", None, ("speculative_config.method",))


def b_49133(tmp: Path) -> Situation:
    cfg = fixture_config("deepseek-ai--DeepSeek-V3")
    cfg.update(architectures=["DeepseekV4ForCausalLM"], model_type="deepseek_v4",
               quantization_config={"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16})
    tgt = make_model_dir(tmp / "DeepSeek-V4-Pro-NVFP4", cfg)
    dcfg = fixture_config("deepseek-ai--DeepSeek-V3")
    dcfg.update(architectures=["DeepseekV4DSparkModel"], model_type="deepseek_v4", num_hidden_layers=1,
                quantization_config={"quant_method": "mxfp4"})
    d = make_model_dir(tmp / "DeepSeek-V4-Pro-DSpark", dcfg)
    return Situation({"model": str(tgt), "tensor_parallel_size": 8, "speculative_config": spec("dspark", d, 7)}, "0.25.0",
                     catalog_gpu("B200", 8), ("speculative_config.model", "speculative_config.quantization", "quantization"))


def b_51581(tmp: Path) -> Situation:
    cfg = qwen35_hybrid(layers=64, hidden=5120, moe=False, quantization_config={
        "quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16})
    tgt = make_model_dir(tmp / "Qwen3.8-27B-NVFP4", cfg)
    d = make_model_dir(tmp / "Qwen3.8-27B-DFlash2-FP8", dflash_drafter(
        hidden=5120, architectures=["DFlash2DraftModel"],
        quantization_config={"quant_method": "compressed-tensors", "format": "float-quantized",
                             "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "tensor"}}}}))
    return Situation({"model": str(tgt), "speculative_config": spec("dflash", d, 8)}, "0.27.1", gpu("GB10", (12, 1), 119),
                     ("speculative_config.model", "speculative_config.quantization", "quantization"))


def b_46426(tmp: Path) -> Situation:
    tgt = make_model_dir(tmp / "gemma-4-31b-it", gemma4_31b())
    d = make_model_dir(tmp / "gemma-4-31B-it-qat-assistant-NVFP4", {
        "architectures": ["Gemma4AssistantForCausalLM"], "model_type": "gemma4_assistant", "hidden_size": 1024,
        "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 262144,
        "backbone_hidden_size": 5376, "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}})
    return Situation({"model": str(tgt), "tensor_parallel_size": 2, "speculative_config": spec("mtp", d, 4)}, "0.24.0",
                     catalog_gpu("B200", 2), ("speculative_config.model", "speculative_config.quantization", "quantization"))


BUILDERS: dict[str, Callable[[Path], Situation]] = {
    "vllm-47825-mlp-speculator-unrouted-v1": b_47825,
    "vllm-54933-cudagraph-explicit-max-truncated": b_54933,
    "vllm-pr50488-widest-decode-batch-eager": b_50488,
    "vllm-46480-dflash-hybrid-page-size-assert": b_46480,
    "vllm-29102-qwen3-next-mtp-even-k-indexerror": b_29102,
    "vllm-58080-mtp-yarn-override-length-gate": b_58080,
    "vllm-53912-hybrid-prefix-cache-mtp-corrupts": b_53912,
    "vllm-47194-hybrid-prefix-cache-mtp-tool-calls": b_47194,
    "vllm-pr49293-nvfp4-target-dflash-fp8-queries": b_49293,
    "vllm-pr53979-dflash-nvfp4-kv-sm12x": b_53979,
    "vllm-32765-gemma3-eagle3-unsupported-target": b_32765,
    "vllm-33133-draft-model-multiple-kv-groups": b_33133,
    "vllm-22432-eagle-drafter-kv-heads-page-size": b_22432,
    "vllm-pr42069-gemma4-triton-lock-dflash": b_42069,
    "vllm-40382-gemma4-dflash-ampere-no-backend": b_40382,
    "vllm-55800-dflash2-sliding-drafter-admission-wedge": b_55800,
    "vllm-10442-ngram-guided-decoding-truncated": b_10442,
    "vllm-pr49133-dspark-nvfp4-target-mxfp4-drafter": b_49133,
    "vllm-51581-dflash-quantized-drafter-fused-kv": b_51581,
    "vllm-pr46426-gemma4-mtp-nvfp4-assistant-tp2": b_46426,
}

#: words one of which a finding's title or message must contain to count: the mechanism the report
#: is about (stated before any rule was written, so a finding on the right field for an unrelated
#: reason does not count as a hit)
WORDS: dict[str, tuple[str, ...]] = {
    "vllm-47825-mlp-speculator-unrouted-v1": ("mlp_speculator",),
    "vllm-54933-cudagraph-explicit-max-truncated": ("graph",),
    "vllm-pr50488-widest-decode-batch-eager": ("graph",),
    "vllm-46480-dflash-hybrid-page-size-assert": ("page", "group"),
    "vllm-29102-qwen3-next-mtp-even-k-indexerror": ("even", "odd"),
    "vllm-58080-mtp-yarn-override-length-gate": ("draft",),
    "vllm-53912-hybrid-prefix-cache-mtp-corrupts": ("prefix",),
    "vllm-47194-hybrid-prefix-cache-mtp-tool-calls": ("prefix",),
    "vllm-pr49293-nvfp4-target-dflash-fp8-queries": ("fp8", "backend"),
    "vllm-pr53979-dflash-nvfp4-kv-sm12x": ("nvfp4", "backend", "non-causal"),
    "vllm-32765-gemma3-eagle3-unsupported-target": ("eagle",),
    "vllm-33133-draft-model-multiple-kv-groups": ("group",),
    "vllm-22432-eagle-drafter-kv-heads-page-size": ("page", "group", "kv head", "key_value_heads"),
    "vllm-pr42069-gemma4-triton-lock-dflash": ("backend",),
    "vllm-40382-gemma4-dflash-ampere-no-backend": ("backend",),
    "vllm-55800-dflash2-sliding-drafter-admission-wedge": ("sliding", "window", "group"),
    "vllm-10442-ngram-guided-decoding-truncated": ("structured", "guided", "grammar"),
    "vllm-pr49133-dspark-nvfp4-target-mxfp4-drafter": ("quantiz",),
    "vllm-51581-dflash-quantized-drafter-fused-kv": ("quantiz",),
    "vllm-pr46426-gemma4-mtp-nvfp4-assistant-tp2": ("quantiz",),
}

#: cases the wizard does not handle, and why (filled in after the measurement; see the module doc)
MISSES: dict[str, str] = {
    "vllm-46480-dflash-hybrid-page-size-assert":
        "the mechanism is modelled (mamba_state: GDN state page per model class, hybrid block alignment; kv_groups "
        "0.20 table: no Mamba padding in unify before 0.26, so a drafter page above the aligned state page raises "
        "AssertionError -- tests/mechanisms/test_mamba_state.py), but this builder's drafter (4 KV heads x 128, the "
        "approximated z-lab config) has the target's 2 KiB per token, so every page equals the padded state page and "
        "vLLM's arithmetic unifies them; the report's drafter config is not public here, and its GPU dependence "
        "(H20 vs RTX PRO 6000) is not explained by any backend block size the 0.20 source uses",
    "vllm-29102-qwen3-next-mtp-even-k-indexerror":
        "an engine bug of 0.11 (even k indexes past the proposer's list), fixed long before 0.28, the oldest release "
        "the mechanism tables model; no advisory was written from a held-out report",
    "vllm-55800-dflash2-sliding-drafter-admission-wedge":
        "reported on a dev image; every release with tables (0.24-0.33) caps a sliding-window group's admission "
        "reservation with SlidingWindowSpec.max_admission_blocks_per_request, the same number the startup pool "
        "sizer uses (single_type_kv_cache_manager.get_num_blocks_to_allocate apply_admission_cap), so a faithful "
        "model of the released scheduler predicts no wedge; kv_groups sees the drafter in its own SlidingWindowSpec "
        "group (SD722 info)",
}


def _on(f, fields: tuple[str, ...]) -> bool:
    return any(x == fld or x.startswith(fld + ".") or fld.startswith(x + ".") for x in f.fields for fld in fields)


def _about(f, words: tuple[str, ...]) -> bool:
    text = f"{f.title} {f.message}".lower()
    return any(w.lower() in text for w in words)


def evaluate(case_id: str, tmp: Path) -> tuple[bool, str]:
    """(handled, what the wizard said) for one case."""
    row = CASES[case_id]
    sit = BUILDERS[case_id](tmp)
    clear_model_cache()
    cfg = config_from_dict(sit.data)
    ctx = resolve_context(cfg, parse_version(sit.version) if sit.version else None, sit.gpu, allow_hub=False)
    report = check_context(ctx)
    said = "; ".join(f"{f.rule}[{f.severity.value}]{f.fields}" for f in report.findings) or "nothing"
    verdict = row["expected_verdict"]
    words = WORDS[case_id]
    if verdict == "reject":
        ok = any(f.severity.value == "error" and _on(f, sit.fields) and _about(f, words) for f in report.findings)
    elif verdict == "warn":
        ok = any(f.severity.value in ("error", "warning") and _on(f, sit.fields) and _about(f, words)
                 for f in report.findings)
    else:
        ok = not any(f.severity.value == "error" for f in report.findings)
    return ok, said


def test_every_row_has_a_builder_and_is_held_out():
    assert len(ROWS) == 20 and set(CASES) == set(BUILDERS) == set(WORDS)
    used = (DATA / "public-bugs.jsonl").read_text()
    for r in ROWS:
        assert r["source"] not in used, r["id"]
        assert r["expected_verdict"] in ("reject", "warn", "accept")


@pytest.mark.parametrize("case_id", list(BUILDERS))
def test_heldout_case(case_id, tmp_path, request):
    if case_id in MISSES:
        request.applymarker(pytest.mark.xfail(strict=True, reason=MISSES[case_id]))
    ok, said = evaluate(case_id, tmp_path)
    assert ok, f"{case_id}: expected {CASES[case_id]['expected_verdict']}; the wizard said: {said}"


def test_hit_rate(tmp_path):
    """Figure of the evaluation. The issue's target is 85% (17 of 20); measured 14 of 20 (70%) after the
    mechanism rules SD700-SD799 (baseline 5 of 20), 15 of 20 once the kv_groups tables reached back to
    0.10 (its get_kv_cache_config, probed from source), 17 of 20 (85%) once backends/features tables were
    generated for 0.20 and 0.24-0.26 (drafter backend inheritance, drafter layer quantization). The assertion is
    a ratchet on the measured figure:
    raise it as misses are fixed (MISSES explains each one)."""
    hits = 0
    lines = []
    for i, case_id in enumerate(BUILDERS):
        ok, said = evaluate(case_id, tmp_path / str(i))
        hits += ok
        lines.append(f"{'HIT ' if ok else 'MISS'} {case_id}: {said}")
    print("\n".join(lines))
    print(f"held-out: {hits}/{len(BUILDERS)} handled ({100 * hits / len(BUILDERS):.0f}%)")
    assert hits >= len(BUILDERS) - len(MISSES), "\n".join(lines)
