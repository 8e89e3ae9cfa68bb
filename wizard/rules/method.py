"""The speculative method: allowed names, aliases, inference, auto-detection and the drafter
architecture vLLM builds for it, plus the per-method option checks of
``SpeculativeConfig.__post_init__`` / ``_verify_args`` (R010, R023-R026, R032, R063, R064,
R071-R077 in docs/vllm-rules.md). All run at config time.
"""

from __future__ import annotations

from wizard import resolve
from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.rules.spec_fields import closest, given_keys, raw_method
from wizard.vllm.methods import (
    CUSTOM_CLASS, DRAFT_MODEL, DSPARK, EAGLE, EAGLE3, EXTRACT_HIDDEN_STATES, MTP, NGRAM, NGRAM_MODEL_NAMES, PATH_MARKERS, SUFFIX,
    allowed_methods, arch_prefix, has_no_model, is_allowed, is_mtp, lm_head_quantizable, needs_drafter_checkpoint, traits,
)
from wizard.fixes import ngram_fallback
from wizard.models.catalog import drafters_for

_LLAMA = "vllm serve meta-llama/Llama-3.1-8B-Instruct"
_E3 = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def _sc(**kw) -> str:
    import json

    return "--speculative-config '" + json.dumps(kw, separators=(",", ":")) + "'"


@register
class MethodNotAllowed(Rule):
    """SD040 — ``speculative_config.method`` is not a method of this vLLM version (R010).

    **What it does.** Checks the value against ``SpeculativeMethod`` of the selected version
    (case-sensitive). 0.33 removed ``medusa`` and ``mlp_speculator`` and added ``step5_mtp``.
    ``[ngram]`` is valid only as ``model``, never as ``method``.

    **Why it matters.** pydantic rejects it: ``Input should be 'ngram', 'draft_model', ...``.

    **Anti-pattern.** ``"method": "EAGLE3"``, ``"eagle2"``, ``"lookahead"``.

    **Best practice.** Lower-case names from docs/vllm-rules.md §2.1.

    **Fix safety.** Lower-casing is safe; a different method changes acceptance.

    Source: vllm/config/speculative.py ``SpeculativeMethod`` Literal (0.32, 0.33);
    docs/vllm-rules.md R010 (E12, F04, F31, E69).
    """

    id = "SD040"
    title = "Unknown speculative method for this vLLM version"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    topic = "method"
    phase = "config"
    why = "The method field is a case-sensitive Literal; other strings fail at config time."
    bad = _LLAMA + " " + _sc(method="EAGLE3", model=_E3, num_speculative_tokens=3)
    good = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3)
    source = "vllm/config/speculative.py SpeculativeMethod; docs/vllm-rules.md R010"
    fix_safety = "Lower-casing is safe; another method changes acceptance."

    def check(self, ctx):
        if ctx.spec is None:
            return
        m = given_keys(ctx).get("method")
        if m is None:
            return
        allowed = allowed_methods(ctx.version)
        if isinstance(m, str) and m in allowed:
            return
        s = str(m)
        known = traits(s)
        fixes = []
        if s in NGRAM_MODEL_NAMES:
            best = NGRAM
        elif s.lower() in allowed:
            best = s.lower()
        elif known is not None:
            best = None
        else:
            best = closest(s, allowed)
        if best:
            fixes.append(Patch(description=f"Use method {best}", set={"speculative_config.method": best}))
        if ctx.spec.model:
            fixes.append(Patch(description="Remove method (vLLM infers it from the drafter)", unset=["speculative_config.method"]))
        removed = ""
        if known is not None:
            removed = f" (removed in {known.removed_in})" if known.removed_in else f" (added in {known.first})"
        yield self.finding(
            f"speculative_config.method={m!r} is not a method of vLLM {ctx.version}{removed}; "
            f"vLLM fails with 'Input should be ...'." + (f" Did you mean '{best}'?" if best else ""),
            fixes=fixes,
        )


@register
class MtpAliasDeprecated(Rule):
    """SD041 — an MTP alias such as ``deepseek_mtp`` instead of ``mtp`` (R023).

    **What it does.** Flags any ``MTPModelTypes`` value other than ``mtp`` as method.

    **Why it matters.** vLLM logs ``method `deepseek_mtp` is deprecated and replaced with mtp``
    and runs ``mtp``; old recipes keep the alias alive, and it will be removed.

    **Anti-pattern.** ``"method": "deepseek_mtp"``

    **Best practice.** ``"method": "mtp"`` (vLLM picks the MTP module from the checkpoint).

    **Fix safety.** Safe: identical behaviour.

    Source: vllm/config/speculative.py ``__post_init__`` (0.32 L1143, 0.33 L1248);
    docs/vllm-rules.md R023 (E33, E40).
    """

    id = "SD041"
    title = "Deprecated MTP method alias"
    severity = Severity.WARNING
    fields = ("speculative_config.method",)
    topic = "mtp"
    phase = "config"
    why = "Aliases are rewritten to mtp with a deprecation warning."
    bad = "vllm serve deepseek-ai/DeepSeek-V3 " + _sc(method="deepseek_mtp", num_speculative_tokens=1)
    good = "vllm serve deepseek-ai/DeepSeek-V3 " + _sc(method="mtp", num_speculative_tokens=1)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R023"
    fix_safety = "Safe."

    def check(self, ctx):
        m = ctx.spec.method if ctx.spec is not None else None
        if m and m != MTP and is_mtp(m, ctx.version):
            yield self.finding(
                f"method '{m}' is deprecated: vLLM replaces it with 'mtp' (same behaviour).",
                fixes=[Patch(description="Use method mtp", set={"speculative_config.method": MTP})],
            )


@register
class DrafterModelMissing(Rule):
    """SD042 — a method that needs a drafter checkpoint without ``model`` (R024).

    **What it does.** With ``num_speculative_tokens`` given and no ``model``: eagle, eagle3,
    dflash, draft_model (and 0.32's medusa/mlp_speculator) need a drafter path;
    ``custom_class`` needs the proposer's import path. mtp/dspark borrow the target;
    ngram/ngram_gpu/suffix/extract_hidden_states need none.

    **Why it matters.** vLLM raises ``num_speculative_tokens was provided but without speculative
    model`` (or the custom_class message) at config time.

    **Anti-pattern.** ``{"method":"eagle3","num_speculative_tokens":3}``

    **Best practice.** Name the drafter: ``"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"``.

    **Fix safety.** When the offline catalog has a drafter for this target and method
    (``wizard.models.catalog.drafters_for``), the first fix names it: the real fix, but check it
    is the drafter you meant. Switching to n-gram (the later fix) changes the speed-up.

    Source: vllm/config/speculative.py ``__post_init__`` (0.32 L1147-1191, 0.33 L1252-1296);
    docs/vllm-rules.md R024 (E08, E68, F05).
    """

    id = "SD042"
    title = "Speculative method needs a drafter model"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    topic = "method"
    phase = "config"
    why = "EAGLE/EAGLE3/DFlash/draft-model drafters are checkpoints; vLLM needs their path."
    bad = _LLAMA + " " + _sc(method="eagle3", num_speculative_tokens=3)
    good = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R024"
    fix_safety = "The catalog drafter is the intended kind of fix (verify it is the one you want); n-gram drafts differently."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.model is not None or spec.num_speculative_tokens is None:
            return
        m = raw_method(ctx)
        if not (needs_drafter_checkpoint(m) or m == CUSTOM_CLASS) or not is_allowed(m, ctx.version):
            return
        k = spec.num_speculative_tokens
        if m == CUSTOM_CLASS:
            msg = "method='custom_class' requires 'model' to contain the custom proposer module path (e.g. 'my_module.MyProposer')."
        else:
            msg = f"method '{m}' needs speculative_config.model (the drafter checkpoint): vLLM fails with " \
                  "'num_speculative_tokens was provided but without speculative model'."
        fixes = []
        if m != CUSTOM_CLASS:
            for e in drafters_for(ctx.config.model):
                if m in e.methods or (m == DRAFT_MODEL and e.draft_for):
                    fixes.append(Patch(description=f"Use the catalog drafter {e.id}", set={"speculative_config.model": e.id}))
                    break
        fixes.append(ngram_fallback(k, "Use n-gram speculation (no drafter model)"))
        yield self.finding(msg, fixes=fixes)


@register
class NumSpecTokensMissing(Rule):
    """SD043 — ``num_speculative_tokens`` missing and nothing supplies it (R025).

    **What it does.** Without k, vLLM takes it from the drafter's ``n_predict`` (MTP-rewritten
    configs, Medusa/MLP speculators), DSpark's ``block_size`` or suffix decoding's default.
    Otherwise (n-gram, EAGLE, draft model, ``mtp`` without ``model``) it is an error. The MTP
    case *with* a model is SD061 (a different vLLM failure).

    **Why it matters.** vLLM raises ``num_speculative_tokens must be provided with speculative
    model unless the draft model config contains an n_predict parameter``.

    **Anti-pattern.** ``{"method":"ngram"}``

    **Best practice.** Always set ``num_speculative_tokens`` (3-5 for EAGLE-3, 1-2 for MTP).

    **Fix safety.** Adds k; the value is a starting point to tune.

    Source: vllm/config/speculative.py ``_verify_args`` and the n_predict block (0.32 L1502,
    0.33 L1612); docs/vllm-rules.md R025 (E04, E16, E37, E41).
    """

    id = "SD043"
    title = "num_speculative_tokens is required"
    severity = Severity.ERROR
    fields = ("speculative_config.num_speculative_tokens",)
    topic = "method"
    phase = "config"
    why = "vLLM has no default k for this method and drafter."
    bad = _LLAMA + " " + _sc(method="ngram", prompt_lookup_max=4)
    good = _LLAMA + " " + _sc(method="ngram", prompt_lookup_max=4, num_speculative_tokens=3)
    source = "vllm/config/speculative.py _verify_args; docs/vllm-rules.md R025"
    fix_safety = "Adds a starting value of k."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or "num_speculative_tokens" in given_keys(ctx):
            return
        m = raw_method(ctx)
        if not is_allowed(m, ctx.version) and m != MTP:
            return
        if m == SUFFIX:
            return
        if m == CUSTOM_CLASS:
            default = 3
        elif spec.model is None:
            if needs_drafter_checkpoint(m):
                return  # SD044 reports a drafter method without model and k
            default = 1 if m == MTP else 3
        else:
            if ctx.method == MTP or resolve.mtp_rewrite(ctx.drafter) is not None:
                return  # SD061 (TypeError) covers MTP drafters
            if ctx.drafter is None:
                return  # unknown drafter: it may carry n_predict
            if ctx.method == DSPARK:
                raw = ctx.drafter.raw_config
                if raw.get("block_size") or raw.get("dspark_block_size"):
                    return
            if ctx.drafter.n_predict:
                return
            default = 3
        yield self.finding(
            f"speculative_config.num_speculative_tokens is missing and method '{ctx.method or m}' has no "
            "default: vLLM fails with 'num_speculative_tokens must be provided'.",
            fixes=[Patch(description=f"Set num_speculative_tokens={default}",
                         set={"speculative_config.num_speculative_tokens": default})],
        )


@register
class NoModelNoK(Rule):
    """SD044 — a drafter method with neither ``model`` nor ``num_speculative_tokens`` (R024/R025).

    **What it does.** eagle, eagle3, dflash and draft_model without both keys.

    **Why it matters.** vLLM fails with ``num_speculative_tokens must be provided ...``; adding
    k alone then fails with the missing-model error, so both are reported together.

    **Anti-pattern.** ``{"method":"eagle3"}``

    **Best practice.** ``{"method":"eagle3","model":"<drafter>","num_speculative_tokens":3}``

    **Fix safety.** Unsafe: switching to n-gram changes drafting.

    Source: vllm/config/speculative.py ``__post_init__`` / ``_verify_args``; docs/vllm-rules.md R024, R025.
    """

    id = "SD044"
    title = "Drafter method without model and num_speculative_tokens"
    severity = Severity.ERROR
    fields = ("speculative_config.model", "speculative_config.num_speculative_tokens")
    topic = "method"
    phase = "config"
    why = "The method needs a drafter checkpoint and a draft length."
    bad = _LLAMA + " " + _sc(method="eagle3")
    good = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3)
    source = "vllm/config/speculative.py; docs/vllm-rules.md R024, R025"
    fix_safety = "Unsafe: n-gram drafts differently."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.model is not None or "num_speculative_tokens" in given_keys(ctx):
            return
        m = raw_method(ctx)
        if not needs_drafter_checkpoint(m) or not is_allowed(m, ctx.version):
            return
        yield self.finding(
            f"method '{m}' needs speculative_config.model and num_speculative_tokens: vLLM fails with "
            "'num_speculative_tokens must be provided with speculative model'.",
            fixes=[ngram_fallback(3, "Use n-gram speculation")],
        )


@register
class MethodAutoDetected(Rule):
    """SD045 — vLLM's path/config detection overrides the method the user gave (R026, R028).

    **What it does.** When ``method`` is unset, ``draft_model`` or ``mtp`` (0.32 also medusa /
    mlp_speculator), vLLM looks at the drafter path and config: ``eagle-`` -> eagle, ``eagle3`` ->
    eagle3, ``dflash`` -> dflash, ``dspark`` -> dspark, an MTP-capable checkpoint -> mtp. This
    rule says when the method that will run differs from the one written.

    **Why it matters.** An explicit ``draft_model`` whose folder is called ``my_eagle3_ckpt``
    silently becomes eagle3 (different weights layout, different failures); a DeepSeek-V3
    checkpoint given as a draft model becomes an MTP draft.

    **Anti-pattern.** ``{"method":"draft_model","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"}``

    **Best practice.** Write the method vLLM will run; rename drafter folders that contain these
    substrings by accident.

    **Fix safety.** Safe: writing the detected method changes nothing vLLM does.

    Source: vllm/config/speculative.py ``__post_init__`` "Automatically detect the method"
    (0.32 L1326-1392, 0.33 L1432-1502); docs/vllm-rules.md R026, §4 (E25-E27, F15).
    """

    id = "SD045"
    title = "vLLM will run a different method than written"
    severity = Severity.WARNING
    fields = ("speculative_config.method", "speculative_config.model")
    topic = "method"
    phase = "config"
    why = "Method detection from the drafter path and config overrides explicit draft_model/mtp."
    bad = _LLAMA + " " + _sc(method="draft_model", model=_E3, num_speculative_tokens=3)
    good = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R026"
    fix_safety = "Safe: it writes what vLLM runs."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.model is None:
            return
        written = raw_method(ctx)
        actual = ctx.method
        if not is_allowed(written, ctx.version) and written != MTP:
            return
        if actual is None or actual == written or has_no_model(written):
            return
        if not is_allowed(actual, ctx.version):
            return
        p = spec.model.lower()
        reason = next((f"the path contains '{s}'" for s, _ in PATH_MARKERS if s in p), None)
        if reason is None:
            reason = "the drafter's config is an MTP checkpoint" if actual == MTP else "the drafter's config says so"
        yield self.finding(
            f"vLLM will run {actual} because {reason}, although the config says "
            f"{'method ' + repr(spec.method) if spec.method else 'no method (draft_model)'}.",
            fixes=[Patch(description=f"Write method {actual}", set={"speculative_config.method": actual})],
        )


# architectures in vLLM's registry that drafter wrapping can produce (vllm/model_executor/models/registry.py, 0.32)
_REGISTERED_DRAFT_ARCHS = frozenset(
    "ExtractHiddenStatesModel MiMoMTPModel MiMoV2MTPModel MiMoV2OmniMTPModel EagleCohereForCausalLM "
    "EagleLlamaForCausalLM EagleLlama4ForCausalLM EagleMiniCPMForCausalLM DFlashDraftModel LiLiCorrDraftModel "
    "DFlash2DraftModel MuseGlimmerAssistantModel DFlashMuseGlimmerAssistantModel DSparkDraftModel DSparkV41DraftModel "
    "Qwen3DSparkModel Qwen3OmniDSparkModel K3DSparkModel DFlashLagunaForCausalLM Gemma4DSparkModel PEagleDraftModel "
    "PeagleLlamaForCausalLM Eagle3LlamaForCausalLM Eagle3MiniMaxM2ForCausalLM LlamaForCausalLMEagle3 "
    "Eagle3Qwen2_5vlForCausalLM Eagle3Qwen3vlForCausalLM Eagle3Qwen3ForCausalLM PeagleQwen3ForCausalLM "
    "EagleMistralForCausalLM EagleMistralLarge3ForCausalLM Eagle3DeepseekV2ForCausalLM Eagle3DeepseekV3ForCausalLM "
    "EagleDeepSeekMTPModel DeepSeekMTPModel".split()
)


def wrapped_archs(method: str, archs: list[str]) -> list[str]:
    """``EAGLEConfig`` renaming (vllm/transformers_utils/configs/eagle.py, 0.32/0.33): each
    architecture gets the method's prefix (Eagle, Eagle3, DFlash) unless it already starts with
    it; Eagle3 and DFlash also keep names ending with it, DFlash keeps LiLiCorrDraftModel."""
    prefix = arch_prefix(method) or ""
    out = []
    for a in archs:
        keep = a.startswith(prefix) or (method != EAGLE and a.endswith(prefix)) or (prefix == "DFlash" and a == "LiLiCorrDraftModel")
        out.append(a if keep else f"{prefix}{a}")
    return out


@register
class DrafterArchNotRegistered(Rule):
    """SD046 — the drafter's architecture has no EAGLE/EAGLE3/DFlash implementation (R032).

    **What it does.** For eagle, eagle3 and dflash vLLM renames the drafter's architectures to
    ``Eagle{arch}`` / ``Eagle3{arch}`` / ``DFlash{arch}`` (unless already prefixed) and looks them
    up in its model registry. EAGLE exists for Llama, Llama4, MiniCPM, Cohere, Mistral,
    DeepSeek-MTP; EAGLE3 for Llama, Qwen3, Qwen2.5-VL/Qwen3-VL, MiniMax-M2, DeepSeek-V2/V3;
    DFlash only for DFlash checkpoints. A config without ``architectures`` gets ``LlamaModel``.

    **Why it matters.** vLLM fails with ``Model architectures ['EagleQwen3ForCausalLM'] are not
    supported for now`` at config time.

    **Anti-pattern.** ``"method":"eagle"`` with a Qwen3 checkpoint as drafter.

    **Best practice.** Use a drafter trained for the method (EAGLE3 heads for Qwen3), or fix
    ``architectures`` in the drafter's config.json.

    **Fix safety.** Changing the method changes the drafter's graph; only the matching method
    loads the weights correctly.

    Source: vllm/config/speculative.py EAGLEConfig wrap (0.32 L1402-1420, 0.33 L1513-1531),
    vllm/transformers_utils/configs/eagle.py, vllm/model_executor/models/registry.py;
    docs/vllm-rules.md R032 (F12, E28, F27).
    """

    id = "SD046"
    title = "Drafter architecture has no implementation for this method"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "speculative_config.model")
    topic = "method"
    phase = "config"
    why = "vLLM builds Eagle/Eagle3/DFlash + the drafter's architecture and needs it registered."
    bad = _LLAMA + " " + _sc(method="eagle", model="Qwen/Qwen3-8B", num_speculative_tokens=3)
    good = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3)
    source = "vllm/config/speculative.py, vllm/transformers_utils/configs/eagle.py; docs/vllm-rules.md R032"
    fix_safety = "Unsafe: the method must match how the drafter was trained."

    def check(self, ctx):
        m = ctx.method
        d = ctx.drafter
        if arch_prefix(m) is None or d is None:
            return
        if resolve.mtp_rewrite(d) is not None or d.model_type in (EAGLE, "speculators") or d.speculators_config:
            return
        archs = list(d.architectures or [])
        if not archs:
            if d.model_type != "llama":
                return
            archs = ["LlamaModel"]
        wrapped = wrapped_archs(m, archs)
        if any(a in _REGISTERED_DRAFT_ARCHS for a in wrapped):
            return
        fixes = []
        for alt in (EAGLE3, EAGLE):
            if alt != m and any(a in _REGISTERED_DRAFT_ARCHS for a in wrapped_archs(alt, archs)):
                # a path substring would re-detect another method only for draft_model/mtp; eagle/eagle3 are kept
                fixes.append(Patch(description=f"Use method {alt} (vLLM has {wrapped_archs(alt, archs)[0]})",
                                   set={"speculative_config.method": alt}))
                break
        fixes.append(ngram_fallback(ctx.k or 3, "Use n-gram speculation instead"))
        yield self.finding(
            f"method '{m}' turns the drafter's architectures {archs} into {wrapped}, which vLLM does not "
            f"implement: it fails with 'Model architectures {wrapped} are not supported for now'.",
            fixes=fixes,
        )


@register
class HeterogeneousVocabMisuse(Rule):
    """SD047 — ``use_heterogeneous_vocab`` outside draft_model + greedy drafting (R064).

    **What it does.** The option is valid only with method ``draft_model``, with
    ``draft_sample_method`` greedy, and not with ``use_local_argmax_reduction``.

    **Why it matters.** vLLM raises ``use_heterogeneous_vocab only works with method='draft_model'``
    / ``... only supports greedy draft sampling`` at config time.

    **Anti-pattern.** EAGLE drafter with ``use_heterogeneous_vocab: true``.

    **Best practice.** Use it only for a draft model with a different tokenizer.

    **Fix safety.** Removing the flag is safe for eagle/mtp (they map vocabularies themselves).

    Source: vllm/config/speculative.py ``_verify_args`` (0.32, 0.33); docs/vllm-rules.md R064 (E19, F25).
    """

    id = "SD047"
    title = "use_heterogeneous_vocab needs draft_model with greedy drafting"
    severity = Severity.ERROR
    fields = ("speculative_config.use_heterogeneous_vocab",)
    topic = "method"
    phase = "config"
    why = "Heterogeneous vocabularies are implemented only for independent draft models."
    bad = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3, use_heterogeneous_vocab=True)
    good = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3)
    source = "vllm/config/speculative.py _verify_args; docs/vllm-rules.md R064"
    fix_safety = "Safe for non-draft_model methods."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or not spec.use_heterogeneous_vocab:
            return
        m = ctx.method
        if m is None or not is_allowed(m, ctx.version):
            return
        if m != DRAFT_MODEL:
            yield self.finding(
                f"use_heterogeneous_vocab only works with method='draft_model' (vLLM will run {m}).",
                fixes=[Patch(description="Remove use_heterogeneous_vocab", unset=["speculative_config.use_heterogeneous_vocab"])],
            )
        elif (spec.draft_sample_method or "greedy") != "greedy":
            yield self.finding(
                "use_heterogeneous_vocab currently only supports greedy draft sampling.",
                fields=["speculative_config.draft_sample_method"],
                fixes=[Patch(description="Use greedy draft sampling", unset=["speculative_config.draft_sample_method"])],
            )


@register
class DraftVocabMismatch(Rule):
    """SD048 — draft model with a different vocabulary size than the target (R063).

    **What it does.** For method ``draft_model`` (after detection) without
    ``use_heterogeneous_vocab``, compares ``vocab_size`` of target and drafter. Sizes only: a
    different tokenizer with the same size passes vLLM (and is caught elsewhere). Not applied to
    eagle/eagle3/mtp.

    **Why it matters.** vLLM raises ``Target and draft model should have the same vocabulary
    size`` at config time; otherwise draft ids would index out of range.

    **Anti-pattern.** A Qwen3 draft model for a Llama target.

    **Best practice.** A drafter from the same family (same tokenizer), or
    ``use_heterogeneous_vocab: true`` for a different tokenizer.

    **Fix safety.** ``use_heterogeneous_vocab`` maps tokens through text, which costs speed;
    choosing a same-family drafter is better but only the user can pick it.

    Source: vllm/config/speculative.py ``verify_equal_vocab_size_if_draft_model`` (0.32, 0.33);
    docs/vllm-rules.md R063 (E17, E18).
    """

    id = "SD048"
    title = "Draft model vocabulary size differs from the target's"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    topic = "method"
    phase = "config"
    why = "Independent draft models must share the target's vocabulary size."
    bad = _LLAMA + " " + _sc(method="draft_model", model="Qwen/Qwen3-8B", num_speculative_tokens=3)
    good = _LLAMA + " " + _sc(method="draft_model", model="Qwen/Qwen3-8B", num_speculative_tokens=3, use_heterogeneous_vocab=True)
    source = "vllm/config/speculative.py verify_equal_vocab_size_if_draft_model; docs/vllm-rules.md R063"
    fix_safety = "use_heterogeneous_vocab trades speed for compatibility."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.use_heterogeneous_vocab or ctx.method != DRAFT_MODEL:
            return
        t, d = ctx.target, ctx.drafter
        if t is None or d is None or not t.vocab_size or not d.vocab_size or t.vocab_size == d.vocab_size:
            return
        fixes = []
        if (spec.draft_sample_method or "greedy") == "greedy" and not spec.use_local_argmax_reduction:
            fixes.append(Patch(description="Map tokens between vocabularies (use_heterogeneous_vocab)",
                               set={"speculative_config.use_heterogeneous_vocab": True}))
        fixes.append(ngram_fallback(ctx.k or 3, "Use n-gram speculation instead"))
        yield self.finding(
            f"Target and draft model should have the same vocabulary size: target {t.vocab_size}, "
            f"draft {d.vocab_size}. vLLM rejects this draft_model at config time.",
            fixes=fixes,
        )


@register
class IndexShareNotMtp(Rule):
    """SD049 — ``index_share_for_mtp_iteration`` with a method other than mtp (R073).

    **What it does.** Flags the key when the method vLLM runs is not mtp.

    **Why it matters.** vLLM raises ``index_share_for_mtp_iteration is only supported with
    method='mtp'``.

    **Anti-pattern.** Copying an MTP recipe's options into an n-gram config.

    **Best practice.** Use it only with MTP.

    **Fix safety.** Safe: the option has no effect elsewhere.

    Source: vllm/config/speculative.py ``__post_init__`` (0.32 L1574, 0.33 L1704); R073 (E63).
    """

    id = "SD049"
    title = "index_share_for_mtp_iteration needs method mtp"
    severity = Severity.ERROR
    fields = ("speculative_config.index_share_for_mtp_iteration",)
    topic = "mtp"
    phase = "config"
    why = "The option only exists for MTP layers."
    bad = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, index_share_for_mtp_iteration=True)
    good = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R073"
    fix_safety = "Safe."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.index_share_for_mtp_iteration is None:
            return
        if ctx.method == MTP or not is_allowed(ctx.method, ctx.version):
            return
        yield self.finding(
            f"index_share_for_mtp_iteration is only supported with method='mtp' (vLLM will run {ctx.method}).",
            fixes=[Patch(description="Remove index_share_for_mtp_iteration", unset=["speculative_config.index_share_for_mtp_iteration"])],
        )


@register
class AdaptiveWithLocalArgmax(Rule):
    """SD050 — ``enable_adaptive_verification`` with ``use_local_argmax_reduction`` (R074).

    **What it does.** Flags both options together unless the method is dspark.

    **Why it matters.** Adaptive verification reads draft logits that local argmax never
    materializes; vLLM refuses at config time.

    **Anti-pattern.** Turning on every "speed" switch at once.

    **Best practice.** Pick one.

    **Fix safety.** Dropping local argmax is safe (a small drafter-side speed cost).

    Source: vllm/config/speculative.py end of ``__post_init__`` (0.32, 0.33); R074 (F23).
    """

    id = "SD050"
    title = "Adaptive verification conflicts with local argmax reduction"
    severity = Severity.ERROR
    fields = ("speculative_config.enable_adaptive_verification", "speculative_config.use_local_argmax_reduction")
    topic = "method"
    phase = "config"
    why = "The two options need opposite things from the drafter."
    bad = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, enable_adaptive_verification=True, use_local_argmax_reduction=True)
    good = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, use_local_argmax_reduction=True)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R074"
    fix_safety = "Safe."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or not (spec.enable_adaptive_verification and spec.use_local_argmax_reduction):
            return
        if ctx.method == DSPARK:
            return
        yield self.finding(
            "enable_adaptive_verification needs draft logits, which use_local_argmax_reduction never materializes: "
            "vLLM asks to disable one of them.",
            fixes=[Patch(description="Drop enable_adaptive_verification", unset=["speculative_config.enable_adaptive_verification"]),
                   Patch(description="Drop use_local_argmax_reduction", unset=["speculative_config.use_local_argmax_reduction"])],
        )


@register
class SyntheticAcceptance(Rule):
    """SD051 — synthetic acceptance options inconsistent (R075).

    **What it does.** ``rejection_sample_method=synthetic`` needs exactly one of
    ``synthetic_acceptance_rates`` (k values in [0,1], non-increasing) or
    ``synthetic_acceptance_length`` (in [1, k+1]); either without synthetic is an error.

    **Why it matters.** vLLM raises at config time (``requires exactly one of ...`` / ``must have
    length k`` / ``only valid with rejection_sample_method='synthetic'``).

    **Anti-pattern.** Benchmark settings left in a production command.

    **Best practice.** Use synthetic acceptance only for benchmarks, with one of the two options.

    **Fix safety.** Removing synthetic options restores real (lossless) verification.

    Source: vllm/config/speculative.py ``_resolve_synthetic_acceptance_rates`` / ``_verify_args``
    (0.32, 0.33); docs/vllm-rules.md R075 (E60-E62, F32).
    """

    id = "SD051"
    title = "Synthetic acceptance options are inconsistent"
    severity = Severity.ERROR
    fields = ("speculative_config.rejection_sample_method", "speculative_config.synthetic_acceptance_rates",
              "speculative_config.synthetic_acceptance_length")
    topic = "method"
    phase = "config"
    why = "vLLM validates the synthetic sampler's inputs at config time."
    bad = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, synthetic_acceptance_length=2.0)
    good = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, rejection_sample_method="synthetic", synthetic_acceptance_length=2.0)
    source = "vllm/config/speculative.py _verify_args; docs/vllm-rules.md R075"
    fix_safety = "Removing them restores real verification."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None:
            return
        rates, length = spec.synthetic_acceptance_rates, spec.synthetic_acceptance_length
        drop = Patch(description="Remove the synthetic acceptance options (real verification)",
                     unset=["speculative_config.rejection_sample_method", "speculative_config.synthetic_acceptance_rates",
                            "speculative_config.synthetic_acceptance_length"])
        k = spec.num_speculative_tokens if isinstance(spec.num_speculative_tokens, int) else ctx.k
        if spec.rejection_sample_method != "synthetic":
            if rates is not None or length is not None:
                yield self.finding(
                    "synthetic_acceptance_rates / synthetic_acceptance_length are only valid with "
                    "rejection_sample_method='synthetic'.",
                    fixes=[Patch(description="Remove the synthetic acceptance options",
                                 unset=["speculative_config.synthetic_acceptance_rates", "speculative_config.synthetic_acceptance_length"])]
                    + ([Patch(description="Use rejection_sample_method=synthetic (benchmarks only)",
                              set={"speculative_config.rejection_sample_method": "synthetic"})]
                       if (rates is None) != (length is None) and spec.rejection_sample_method in (None, "standard") else []),
                )
            return
        if (rates is None) == (length is None):
            yield self.finding("rejection_sample_method='synthetic' requires exactly one of synthetic_acceptance_rates "
                               "or synthetic_acceptance_length.", fixes=[drop])
            return
        if k is None:
            return
        if rates is not None:
            bad = len(rates) != k or any(not (0 <= r <= 1) for r in rates) or any(a < b for a, b in zip(rates, rates[1:]))
            if bad:
                yield self.finding(f"synthetic_acceptance_rates must have length {k}, values in [0, 1], non-increasing; got {rates}.",
                                   fixes=[drop])
        elif not (1 <= length <= k + 1):
            yield self.finding(f"synthetic_acceptance_length must be in [1, {k + 1}]; got {length}.", fixes=[drop])


@register
class FlyVerification(Rule):
    """SD052 — FLy verification needs k >= 2 and a window < k (R076, 0.33 only).

    **What it does.** ``rejection_sample_method=fly``: not with extract_hidden_states; k >= 2;
    ``fly_window_size`` < k. (On 0.32 ``fly`` is not a value at all: SD025.)

    **Why it matters.** vLLM 0.33 rejects it at config time; FLy is also lossy (warning).

    **Anti-pattern.** ``"rejection_sample_method":"fly","num_speculative_tokens":1``

    **Best practice.** Standard verification unless you measured FLy's quality trade-off.

    **Fix safety.** Standard verification is lossless.

    Source: vllm/config/speculative.py ``_verify_args`` (0.33); docs/vllm-rules.md R076 (F28).
    """

    id = "SD052"
    title = "FLy verification settings are invalid"
    severity = Severity.ERROR
    versions = ">=0.33"
    fields = ("speculative_config.rejection_sample_method",)
    topic = "method"
    phase = "config"
    why = "FLy needs at least two draft tokens and a window smaller than k."
    bad = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=1, rejection_sample_method="fly")
    good = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, rejection_sample_method="fly")
    example_version = "0.33"
    source = "vllm/config/speculative.py _verify_args (0.33); docs/vllm-rules.md R076"
    fix_safety = "Standard verification is lossless."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.rejection_sample_method != "fly":
            return
        k = ctx.k
        std = Patch(description="Use standard verification", unset=["speculative_config.rejection_sample_method"])
        if ctx.method == EXTRACT_HIDDEN_STATES:
            yield self.finding("FLy verification is incompatible with extract_hidden_states.", fixes=[std])
        elif k is not None and k < 2:
            yield self.finding("FLy requires num_speculative_tokens to be at least 2.", fixes=[std])
        elif k is not None and spec.fly_window_size is not None and spec.fly_window_size >= k:
            yield self.finding(f"fly_window_size ({spec.fly_window_size}) must be smaller than num_speculative_tokens ({k}).",
                               fixes=[Patch(description="Let vLLM choose the window", unset=["speculative_config.fly_window_size"]), std])


@register
class DraftLmHeadQuantization(Rule):
    """SD053 — ``draft_lm_head_quantization`` with a method other than eagle/eagle3/mtp (R077, 0.33).

    **What it does.** On 0.33 the option is valid only for eagle, eagle3 and mtp. (On 0.32 it is
    an unknown key: SD020.)

    **Why it matters.** vLLM 0.33 raises ``draft_lm_head_quantization is not supported for
    method ...`` at config time.

    **Anti-pattern.** ``{"method":"ngram","draft_lm_head_quantization":"fp8"}``

    **Best practice.** Use it only with EAGLE/MTP drafters that share the target lm_head.

    **Fix safety.** Safe: removing it keeps the unquantized head.

    Source: vllm/config/speculative.py ``_verify_args`` (0.33); docs/vllm-rules.md R077 (F29, F33).
    """

    id = "SD053"
    title = "draft_lm_head_quantization needs eagle, eagle3 or mtp"
    severity = Severity.ERROR
    versions = ">=0.33"
    fields = ("speculative_config.draft_lm_head_quantization",)
    topic = "method"
    phase = "config"
    why = "Only EAGLE/MTP drafters have a quantizable shared lm_head."
    bad = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3, draft_lm_head_quantization="fp8")
    good = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3, draft_lm_head_quantization="fp8")
    example_version = "0.33"
    source = "vllm/config/speculative.py _verify_args (0.33); docs/vllm-rules.md R077"
    fix_safety = "Safe."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.draft_lm_head_quantization is None:
            return
        if lm_head_quantizable(ctx.method) or not is_allowed(ctx.method, ctx.version):
            return
        yield self.finding(
            f"draft_lm_head_quantization is not supported for method '{ctx.method}' (only eagle, eagle3, mtp).",
            fixes=[Patch(description="Remove draft_lm_head_quantization", unset=["speculative_config.draft_lm_head_quantization"])],
        )


@register
class SuffixDecoding(Rule):
    """SD054 — suffix decoding needs the arctic-inference package and sane bounds (R071).

    **What it does.** For method ``suffix``: a warning that the server must have
    ``arctic-inference`` installed (rules do not probe the machine), and errors for
    ``suffix_decoding_max_tree_depth`` < 1, ``max_cached_requests`` < 0, ``max_spec_factor`` < 0,
    ``min_token_prob`` outside [0, 1].

    **Why it matters.** Without the package vLLM raises ``ImportError: Arctic Inference is required
    for suffix decoding`` at config time; bad bounds raise ValueError.

    **Anti-pattern.** ``{"method":"suffix"}`` on a stock vLLM image.

    **Best practice.** ``pip install arctic-inference==0.1.1`` on the server, or use ngram.

    **Fix safety.** n-gram is the closest package-free alternative (lower acceptance on agentic loads).

    Source: vllm/config/speculative.py ``_validate_suffix_decoding`` (0.32, 0.33);
    docs/vllm-rules.md R071 (E66).
    """

    id = "SD054"
    title = "Suffix decoding needs arctic-inference on the server"
    severity = Severity.WARNING
    fields = ("speculative_config.method",)
    topic = "method"
    phase = "config"
    why = "vLLM imports arctic_inference for suffix decoding and fails without it."
    bad = _LLAMA + " " + _sc(method="suffix", num_speculative_tokens=8)
    good = _LLAMA + " " + _sc(method="ngram", num_speculative_tokens=3)
    source = "vllm/config/speculative.py _validate_suffix_decoding; docs/vllm-rules.md R071"
    fix_safety = "n-gram changes acceptance."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or raw_method(ctx) != SUFFIX:
            return
        ng = ngram_fallback(min(ctx.k or 3, 8), "Use n-gram speculation (no extra package)")
        yield self.finding(
            "method 'suffix' needs the arctic-inference package on the server (pip install arctic-inference==0.1.1); "
            "without it vLLM raises 'Arctic Inference is required for suffix decoding'.",
            fixes=[ng],
        )
        checks = (("suffix_decoding_max_tree_depth", 1, None), ("suffix_decoding_max_cached_requests", 0, None),
                  ("suffix_decoding_max_spec_factor", 0, None), ("suffix_decoding_min_token_prob", 0, 1))
        for key, lo, hi in checks:
            v = getattr(spec, key)
            if v is None or (v >= lo and (hi is None or v <= hi)):
                continue
            yield self.finding(
                f"speculative_config.{key}={v} must be " + (f"in [{lo}, {hi}]" if hi is not None else f">= {lo}") + ".",
                fields=[f"speculative_config.{key}"],
                severity=Severity.ERROR,
                title="Suffix decoding option out of range",
                fixes=[Patch(description=f"Use vLLM's default for {key}", unset=[f"speculative_config.{key}"])],
            )


@register
class DsparkTopkNotDspark(Rule):
    """SD055 — ``dspark_draft_topk`` with a method other than dspark (R049).

    **What it does.** Flags the key unless vLLM will run dspark.

    **Why it matters.** vLLM raises ``dspark_draft_topk is only supported by DSpark``.

    **Anti-pattern.** Copying DSpark recipe options into an EAGLE config.

    **Best practice.** Remove it.

    **Fix safety.** Safe.

    Source: vllm/config/speculative.py ``__post_init__`` (0.32 L1509, 0.33 L1640); R049 (E64).
    """

    id = "SD055"
    title = "dspark_draft_topk needs method dspark"
    severity = Severity.ERROR
    fields = ("speculative_config.dspark_draft_topk",)
    topic = "method"
    phase = "config"
    why = "Only DSpark drafters have a top-k draft head."
    bad = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3, dspark_draft_topk=8)
    good = _LLAMA + " " + _sc(method="eagle3", model=_E3, num_speculative_tokens=3)
    source = "vllm/config/speculative.py __post_init__; docs/vllm-rules.md R049"
    fix_safety = "Safe."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.dspark_draft_topk is None or ctx.method == DSPARK:
            return
        if ctx.method is None or has_no_model(ctx.method) or spec.model is None:
            return  # vLLM checks it only where a drafter config is built
        if not is_allowed(ctx.method, ctx.version):
            return
        yield self.finding(
            f"dspark_draft_topk is only supported by DSpark (vLLM will run {ctx.method}).",
            fixes=[Patch(description="Remove dspark_draft_topk", unset=["speculative_config.dspark_draft_topk"])],
        )
