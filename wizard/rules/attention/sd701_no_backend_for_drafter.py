from __future__ import annotations

from wizard.config import Patch
from wizard.fixes import pin_shared_backend
from wizard.mechanisms import apply as A
from wizard.rules.helpers import MLA_ONLY_KV, is_fp8_kv
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import is_noncausal


@register
class NoBackendForDrafter(Rule):
    r"""No attention backend fits the drafter on this GPU

    ## What it does

    Runs vLLM's attention-backend selection for the drafter on its own (it never inherits
    ``--attention-backend``): the drafter's head size, its KV dtype (``speculative_config.kv_cache_dtype``
    or the target's), non-causal attention for DFlash/DSpark drafters, sliding windows... Reports
    when no backend accepts the drafter (a KV dtype alone that is fp8 or MLA-only is SD200's), naming
    each candidate's first failing condition and the backend the target gets.

    ## Why it matters

    The target loads, then drafter backend selection raises ``No valid attention backend found``
    and the engine stops: the whole model load is wasted.

    ## Example

    On 8 x A100, DeepSeek-V3 (dense MLA: TRITON_MLA) with a one-layer draft model built from
    DeepSeek-V3.2 (sparse MLA, ``index_topk``): the target gets a backend, the drafter's sparse MLA
    has none below SM 9.0:

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 -tp 8 \
      --speculative-config '{"method":"draft_model","model":"./sd701-draft-v32","num_speculative_tokens":3}'
    ```

    ## Use instead

    The target's own MTP layers (dense MLA, the target's backend), or Hopper for the sparse drafter:

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Fix safety

    Pinning another drafter backend changes kernels only; a different drafter changes acceptance.

    ## Source

    vllm/v1/spec_decode/llm_base_proposer.py ``_create_draft_vllm_config`` (the drafter never
    inherits the target's backend from 0.24; 0.20 hands it the target's pinned or locked backend,
    which this rule then validates for the drafter: features.json ``backend_selection``); vllm/platforms/cuda.py; vllm/v1/attention/backend.py
    ``validate_configuration`` (generated into wizard/data/vllm/<X.Y>/backends.json).
    """

    id = "SD701"
    severity = Severity.ERROR
    fields = ("speculative_config.model", "speculative_config.attention_backend")
    phase = "load"

    def check(self, ctx):
        t_sel, d_sel = A.backends(ctx)
        if d_sel is not None and d_sel.pin_rejected and d_sel.pin_source:
            if t_sel is not None and t_sel.pin_rejected and t_sel.pinned == d_sel.pinned:
                return  # the target refuses the same imposed backend: SD700 names both
            alts, fixed, _ = A.imposed_pin_help(ctx)
            fix = ([f"pin --attention-backend {alts[0]} (it accepts the target and the drafter)"] if alts else []) + (
                [f"upgrade to vLLM >= {fixed} (the drafter selects its own backend)"] if fixed else [])
            yield self.finding(
                f"On vLLM {ctx.version} the {ctx.method} drafter does not select its own attention backend: "
                f"{d_sel.pin_source}. {d_sel.pinned} refuses the drafter on {ctx.hardware.name}: {d_sel.rejection()}. "
                f"The target gets {A.selection_text(t_sel)}. vLLM raises 'Selected backend AttentionBackendEnum."
                f"{d_sel.pinned} is not valid for this configuration' while loading the drafter."
                + (f" Fix: {'; or '.join(fix)}." if fix else ""),
                fields=("speculative_config.model", "attention_backend", "speculative_config.attention_backend"),
                fixes=[pin_shared_backend(alts[0])] if alts else [])
            return
        if d_sel is None or not d_sel.auto_failed:
            return
        dkv, kv_only = ctx.drafter_kv_dtype(), d_sel.kv_dtype_only
        if kv_only and ((is_fp8_kv(dkv) and (is_noncausal(ctx.method) or not ctx.view.device_kv.fp8))
                        or dkv in MLA_ONLY_KV):
            return  # fp8 of a non-causal drafter or on a device without fp8 attention, MLA-only dtypes: SD200
        t_lay, d_lay = A.layouts(ctx)
        if t_sel is not None and not t_sel.ok and t_lay == d_lay:
            return  # MTP layers of the target: SD700 already says it
        if kv_only:
            yield self.finding(
                f"No attention backend of vLLM {ctx.version} stores a '{dkv}' KV cache for the {ctx.method} drafter "
                f"({'non-causal, ' if d_lay is not None and d_lay.use_non_causal else ''}head size "
                f"{getattr(d_lay, 'head_size', '?')}) on {ctx.hardware.name}: {A.selection_text(d_sel)}. The drafter "
                "selects its backend on its own; vLLM stops with 'No valid attention backend found' after loading the target.",
                fields=("speculative_config.kv_cache_dtype", "kv_cache_dtype", "speculative_config.model"),
                fixes=[Patch(description="Give the drafter a model-dtype KV cache: speculative_config.kv_cache_dtype auto",
                             set={"speculative_config.kv_cache_dtype": "auto"})])
            return
        alts = A.alternatives(ctx, "drafter")
        fixes = [Patch(description=f"Pin the drafter's backend: speculative_config.attention_backend {alts[0]}",
                       set={"speculative_config.attention_backend": alts[0]})] if alts else []
        yield self.finding(
            f"No attention backend fits the {ctx.method} drafter on vLLM {ctx.version} / {ctx.hardware.name} "
            f"({d_sel.profile}): {A.selection_text(d_sel)}. The target gets {A.selection_text(t_sel)}; the drafter "
            "selects on its own and vLLM stops with 'No valid attention backend found' after loading the target.",
            fixes=fixes)
