from __future__ import annotations

from wizard.config import Patch
from wizard.context import CheckContext
from wizard.models.info import ModelInfo
from wizard.rules.helpers import extra_arg, has_v1
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL, is_eagle_head


def uses_mrope(m: "ModelInfo | None") -> bool:
    """Whether a model's rope config has an ``mrope_section`` (M-RoPE, Qwen2.5-VL style)."""
    if m is None:
        return False
    cfg = m.text_config  # vLLM reads the rope of hf_text_config
    for key in ("rope_scaling", "rope_parameters"):
        r = cfg.get(key)
        if isinstance(r, dict) and ("mrope_section" in r or r.get("type") == "mrope" or r.get("rope_type") == "mrope"):
            return True
    return False


def is_multimodal(m: "ModelInfo | None") -> bool:
    """``ModelInfo.is_multimodal``, or a config with a vision/audio tower (``vision_config``...)."""
    if m is None:
        return False
    return bool(m.is_multimodal or m.has_mm_tower)


def text_only(ctx: "CheckContext") -> bool:
    """``--language-model-only`` given: the multimodal tower is not loaded."""
    return bool(extra_arg(ctx, "language_model_only"))


@register
class MultimodalTargetDraftModelOrParallel(Rule):
    r"""draft_model / parallel drafting with a multimodal target

    ## What it does

    Flags ``method: draft_model`` and ``parallel_drafting: true`` (P-EAGLE,
    PARD) when the target is multimodal and ``--language-model-only`` is not given:

    * a drafter with M-RoPE: error on every version ("does not support M-RoPE yet");
    * vLLM before 0.32: error — startup NotImplementedError/AttributeError, M-RoPE position
      corruption (vllm PR #35714, issue #41743);
    * 0.32+: warning — vLLM proceeds with text-only speculation (images ignored by the drafter,
      lower acceptance on image prompts);
    * 0.34 (no Model Runner V1): the V1 proposer's ``_raise_if_mrope``/``_warn_if_multimodal`` are
      gone with ``llm_base_proposer.py``, and so are P-EAGLE/PARD (``parallel_drafting`` is SD235's).
      ``draft_model`` (``StandaloneARSpeculator``, ``supports_mm_inputs = False``) gets the GPU
      speculator's warning "Draft model … does not support external multimodal embeddings …
      using text-only draft inputs instead" (v1/worker/gpu/spec_decode/speculator.py:310): a
      warning, M-RoPE drafter or not.

    ## Why it matters

    Draft-model and parallel-drafting proposers are text-only; older vLLM fails at startup with VLM targets.

    ## Example

    ```sh
    vllm serve ./tiny-qwen2.5-vl \
      --speculative-config '{"method":"draft_model","model":"./tiny-qwen2.5-draft","num_speculative_tokens":3}'
    ```

    ## Use instead

    Use an EAGLE3/MTP path validated for that VLM, sequential EAGLE3, or
    ``--language-model-only`` for text-only traffic.

    ```sh
    vllm serve ./tiny-qwen2.5-vl --language-model-only \
      --speculative-config '{"method":"draft_model","model":"./tiny-qwen2.5-draft","num_speculative_tokens":3}'
    ```

    ## Fix safety

    ``--language-model-only`` drops image input (unsafe if you serve images).

    ## Source

    vllm/v1/spec_decode/llm_base_proposer.py ``_warn_if_multimodal``/``_raise_if_mrope``
    (0.32, 0.33); vllm/v1/worker/gpu/spec_decode/speculator.py:310 ``load_model`` and
    standalone_ar/speculator.py:60 (0.34); docs/vllm-rules.md R128; https://github.com/vllm-project/vllm/pull/35714,
    https://github.com/vllm-project/vllm/issues/41743
    """

    id = "SD300"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "speculative_config.parallel_drafting")
    phase = "load"

    def check(self, ctx):
        spec = ctx.spec
        t = ctx.target
        if spec is None or t is None or not is_multimodal(t) or text_only(ctx):
            return
        method = ctx.method
        if not has_v1(ctx):  # 0.34: one GPU speculator path, no M-RoPE refusal, no P-EAGLE/PARD
            if method == DRAFT_MODEL:
                d = ctx.drafter
                name = d.short_name() if d is not None else "the draft model"
                yield self.finding(
                    f"draft_model speculation with multimodal target {t.short_name()}: vLLM {ctx.version} warns 'Draft "
                    f"model ... does not support external multimodal embeddings' ({name}) and drafts from the text "
                    "only; expect lower acceptance on image prompts.",
                    fields=["speculative_config.method"], severity=Severity.WARNING,
                    fixes=[Patch(description="Serve text only (--language-model-only)",
                                 set={"extra_args.language_model_only": True})])
            return
        parallel = spec.parallel_drafting is True and is_eagle_head(method)
        if method != DRAFT_MODEL and not parallel:
            return
        what = "draft_model speculation" if method == DRAFT_MODEL else f"parallel drafting (P-EAGLE, {method})"
        field = "speculative_config.method" if method == DRAFT_MODEL else "speculative_config.parallel_drafting"
        fixes = []
        if parallel:
            fixes.append(Patch(description="Draft sequentially (drop parallel_drafting)", unset=["speculative_config.parallel_drafting"]))
        fixes.append(Patch(description="Serve text only (--language-model-only)", set={"extra_args.language_model_only": True}))
        d = ctx.drafter
        if d is not None and d is not t and uses_mrope(d):
            yield self.finding(f"{what} with drafter {d.short_name()}, which uses M-RoPE: vLLM raises 'Speculative "
                               "Decoding with draft models or parallel drafting does not support M-RoPE yet'.",
                               fields=[field], fixes=fixes)
        elif not ctx.version.at_least("0.32"):
            yield self.finding(f"{what} with multimodal target {t.short_name()} is not supported by vLLM {ctx.version}: "
                               "startup fails (NotImplementedError/AttributeError) or M-RoPE positions are corrupted "
                               "under concurrency (vllm PR #35714, issue #41743).", fields=[field], fixes=fixes)
        else:
            yield self.finding(f"{what} with multimodal target {t.short_name()}: vLLM {ctx.version} proceeds with "
                               "text-only speculation ('does not fully support multimodal models yet'); expect lower "
                               "acceptance on image prompts.", fields=[field], fixes=fixes[-1:], severity=Severity.WARNING)
