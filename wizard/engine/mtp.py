"""Fact: the MTP layer count (``view.mtp_layers``) and the MTP rewrite of a target-like config.

vllm/config/speculative.py ``SpeculativeConfig.hf_config_override`` (0.32 L661-1000, 0.33 the
same logic) rewrites an MTP-capable config (DeepSeek-V3 -> ``deepseek_mtp``, Qwen3-Next ->
``qwen3_next_mtp`` ...) and sets ``n_predict`` from the family's own key
(``num_nextn_predict_layers``, ``mtp_num_hidden_layers``, ``text_config.*`` ...); the
``__post_init__`` n_predict block then checks k against it. :func:`mtp_layers` is that
``n_predict`` -- the one count every rule, the planner and the mechanisms use.
"""

from __future__ import annotations

from typing import Any

from wizard.models.info import ModelInfo
from wizard.vllm import methods as M

__all__ = ["mtp_rewrite", "mtp_layers"]


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
    if arch in M.MTP_REWRITE_BY_ARCH:
        entry = M.MTP_REWRITE_BY_ARCH[arch]
    elif mt in M.MTP_REWRITE_BY_MODEL_TYPE:
        entry = M.MTP_REWRITE_BY_MODEL_TYPE[mt]
    elif mt in M.MTP_REWRITE_IF_LAYERS:
        n = raw.get("num_nextn_predict_layers") or 0
        if n > 0:
            return (M.MTP_REWRITE_IF_LAYERS[mt], n)
        return None
    elif mt:
        entry = next(((t, "num_nextn_predict_layers", None) for marker, t in M.MTP_REWRITE_BY_MARKER if marker in mt), None)
    if entry is None:
        return None
    mtp_type, key, default = entry
    if not key:
        return (mtp_type, default)
    if key.startswith("text_config."):  # hf_config.text_config.<name>, the top level's when absent: the merged view
        n = info.text_config.get(key.split(".", 1)[1])
    else:
        n = _cfg_get(raw, key)
        if n is None and key == "mtp_num_hidden_layers":  # then get_hf_text_config(hf_config).mtp_num_hidden_layers
            n = info.text_config.get(key)
    if n is None:
        # DeepseekV3Config in transformers defaults num_mtp_layers=1 (R043)
        n = info.mtp_layers if info.mtp_layers is not None else (1 if mt == "deepseek_v3" else default)
    return (mtp_type, n)


def mtp_layers(info: ModelInfo | None, version: Any) -> int | None:
    """``n_predict`` of ``info`` as vLLM's MTP path sees it: the rewrite's count, else -- for a
    config that is already an MTP type (``deepseek_mtp`` ...) -- its ``n_predict`` or declared
    MTP layers. None = unknown or not an MTP config; 0 = the checkpoint declares none (R042)."""
    rw = mtp_rewrite(info)
    if rw is not None:
        return rw[1]
    if info is not None and M.is_mtp(info.model_type, version):
        return info.n_predict if info.n_predict is not None else info.mtp_layers
    return None
