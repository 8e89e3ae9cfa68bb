from __future__ import annotations

from wizard import resolve
from wizard.resolve import wrapped_archs
from wizard.config import Patch
from wizard.fixes import ngram_fallback
from wizard.vllm.methods import declared_speculator as _declared_speculator, dspark_archs
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import EAGLE, EAGLE3, arch_prefix
from wizard.vllm.registry import nearest_registry


@register
class DrafterArchNotRegistered(Rule):
    r"""Drafter architecture has no implementation for this method

    ## What it does

    For eagle, eagle3 and dflash vLLM renames the drafter's architectures to
    ``Eagle{arch}`` / ``Eagle3{arch}`` / ``DFlash{arch}`` (unless already prefixed) and looks them
    up in its model registry -- the checked release's own (generated per release into
    wizard/data/vllm/history/registered_archs.json). In 0.32 EAGLE exists for Llama, Llama4,
    MiniCPM, Cohere, Mistral, DeepSeek-MTP; EAGLE3 for Llama, Qwen3, Qwen2.5-VL/Qwen3-VL,
    MiniMax-M2, DeepSeek-V2/V3; DFlash only for DFlash checkpoints; older releases have fewer
    (``Eagle3Qwen3ForCausalLM`` from 0.24). A config without ``architectures`` gets ``LlamaModel``.

    ## Why it matters

    vLLM fails with ``Model architectures ['EagleQwen3ForCausalLM'] are not
    supported for now`` at config time (0.11 on; 0.10 appends ``TransformersForCausalLM`` and
    fails when the drafter loads: ``Cannot find model module``).

    ## Example

    ``"method":"eagle"`` with a Qwen3 checkpoint as drafter.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle","model":"Qwen/Qwen3-8B","num_speculative_tokens":3}'
    ```

    ## Use instead

    Use a drafter trained for the method (EAGLE3 heads for Qwen3), or fix
    ``architectures`` in the drafter's config.json.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Changing the method changes the drafter's graph; only the matching method
    loads the weights correctly.

    ## Source

    vllm/config/speculative.py EAGLEConfig wrap (0.32 L1402-1420, 0.33 L1513-1531),
    vllm/transformers_utils/configs/eagle.py, vllm/model_executor/models/registry.py
    ``_VLLM_MODELS`` of each release 0.10-0.34 (scripts/gen_registered_archs_history.py) and
    ``_ModelRegistry._raise_for_unsupported`` (0.32 L1205); docs/vllm-rules.md R032 (F12, E28, F27).
    """

    id = "SD046"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "speculative_config.model")
    phase = "config"

    def check(self, ctx):
        m = ctx.method
        d = ctx.drafter
        if arch_prefix(m) is None or d is None:
            return
        if resolve.mtp_rewrite(d) is not None or d.model_type in (EAGLE, "speculators") or d.speculators_config:
            return
        declared = _declared_speculator(dspark_archs(d.architectures, d.model_type), ctx.version)
        if declared is not None and declared != m and ctx.spec is not None and ctx.spec.method is not None:
            return  # 0.34 stops before the EAGLE wrapping: the method/checkpoint mismatch (SD059, speculator_config.py:418)
        archs = list(d.architectures or [])
        if not archs:
            if d.model_type != "llama":
                return
            archs = ["LlamaModel"]
        reg = nearest_registry(ctx.version)
        if reg is None:
            return
        wrapped = wrapped_archs(m, archs)
        if any(a in reg.names for a in wrapped):
            return
        fixes = []
        for alt in (EAGLE3, EAGLE):
            if alt != m and any(a in reg.names for a in wrapped_archs(alt, archs)):
                # a path substring would re-detect another method only for draft_model/mtp; eagle/eagle3 are kept
                fixes.append(Patch(description=f"Use method {alt} (vLLM has {wrapped_archs(alt, archs)[0]})",
                                   set={"speculative_config.method": alt}))
                break
        fixes.append(ngram_fallback(ctx.k or 3, "Use n-gram speculation instead"))
        by = "" if reg.key == ctx.version.short else f" (judged by the registry of {reg.release})"
        if reg.fallback_mode == "architectures_append":
            how = (f"config passes (ModelConfig.architectures appends TransformersForCausalLM), then loading the "
                   f"drafter fails with \"Cannot find model module. '{wrapped[0]}' is not a registered model in the "
                   "Transformers library\"")
        else:
            how = f"it fails at config time with '{reg.unsupported_message(wrapped)}'"
        yield self.finding(
            f"method '{m}' turns the drafter's architectures {archs} into {wrapped}, which vLLM {reg.release}'s "
            f"model registry does not have{by}: {how}",
            fixes=fixes,
        )
