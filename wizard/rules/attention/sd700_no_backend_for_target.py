from __future__ import annotations

from wizard.config import Patch
from wizard.fixes import pin_shared_backend
from wizard.mechanisms import apply as A
from wizard.rules.helpers import MLA_ONLY_KV, is_fp8_kv
from wizard.rules.registry import Rule, Severity, register


@register
class NoBackendForTarget(Rule):
    r"""No attention backend fits the target on this GPU

    ## What it does

    Runs vLLM's attention-backend selection for the target (``wizard.mechanisms.attention_backend``,
    per release and device: the platform's priority list and each backend's declared support for
    head size, dtype, block size, sinks, sliding window, MLA, non-causal...) and reports when no
    backend accepts it. When the KV dtype alone is refused, fp8 on a device without fp8 attention and MLA-only
    dtypes are left to SD201/SD203 (an fp8 variant such as fp8_inc that no backend of an fp8-capable device
    stores is reported here);
    other KV dtypes (nvfp4 on a device or release without an nvfp4 backend...) are reported here, on ``kv_cache_dtype``. The finding names every
    candidate with its first failing condition in vLLM's words, and the backend the drafter gets.

    ## Why it matters

    vLLM raises ``No valid attention backend found for cuda`` after the weights have loaded.

    ## Example

    DeepSeek-V3.2's sparse MLA (DeepSeek Sparse Attention) on 8 x A100: every sparse-MLA backend
    needs SM 9.0 or newer, the dense MLA backends answer 'sparse not supported':

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3.2-Exp -tp 8
    ```

    ## Use instead

    The same model on Hopper (FLASH_ATTN_MLA_SPARSE) or Blackwell (FLASHMLA_SPARSE), or a dense
    model on the A100s:

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 -tp 8
    ```

    ## Fix safety

    Pinning another backend changes kernels, not outputs; check speed.

    ## Source

    vllm/v1/attention/selector.py, vllm/platforms/cuda.py ``get_attn_backend_cls`` and
    ``_get_backend_priorities``, vllm/v1/attention/backend.py ``validate_configuration``
    (0.20-0.33, generated into wizard/data/vllm/<X.Y>/backends.json). A backend vLLM pins itself
    (``Gemma4Config`` locks TRITON_ATTN for heterogeneous head dims; 0.20 selects every layer
    non-causal for DFlash and hands the drafter the target's backend: features.json
    ``backend_selection``) is reported here too, with the backend each model gets.
    """

    id = "SD700"
    severity = Severity.ERROR
    fields = ("model", "attention_backend")
    phase = "load"

    def check(self, ctx):
        t_sel, d_sel = A.backends(ctx)
        if t_sel is not None and t_sel.pin_rejected and t_sel.pin_source:
            yield self._imposed(ctx, t_sel, d_sel)
            return
        if t_sel is None or not t_sel.auto_failed:
            return
        kv, kv_only = ctx.target_kv_dtype(), t_sel.kv_dtype_only
        if kv_only and ((is_fp8_kv(kv) and not ctx.view.device_kv.fp8) or kv in MLA_ONLY_KV):
            return  # fp8 on a device without fp8 attention / MLA-only KV dtypes alone: SD201 / SD203 say it
        # (an fp8 variant no backend of an fp8-capable device stores, e.g. fp8_inc -- Intel Gaudi's -- is said here)
        if kv_only:  # another KV dtype (nvfp4, int8...) no backend of this device stores
            yield self.finding(
                f"No attention backend of vLLM {ctx.version} stores a '{kv}' KV cache for the target on "
                f"{ctx.hardware.name} ({t_sel.profile}): {A.selection_text(t_sel)}. vLLM stops with 'No valid attention "
                "backend found' after loading the weights.", fields=("kv_cache_dtype", "model"),
                fixes=[Patch(description="Use --kv-cache-dtype auto (model-dtype KV cache)", set={"kv_cache_dtype": "auto"})])
            return
        alts = A.alternatives(ctx, "target")
        drafter = f" The drafter gets {A.selection_text(d_sel)}." if d_sel is not None else ""
        fixes = [Patch(description=f"Pin --attention-backend {alts[0]} (it accepts the target's layout)",
                       set={"attention_backend": alts[0]})] if alts else []
        yield self.finding(
            f"No attention backend fits the target on vLLM {ctx.version} / {ctx.hardware.name} ({t_sel.profile}): "
            f"{A.selection_text(t_sel)}. vLLM stops with 'No valid attention backend found' after loading the weights."
            + drafter, fixes=fixes)

    def _imposed(self, ctx, t_sel, d_sel):
        """vLLM pinned the target's backend itself (a model config class's lock) and that backend
        refuses the target."""
        alts, fixed, why = A.imposed_pin_help(ctx)
        b = t_sel.pinned
        drafter = ""
        if d_sel is not None and d_sel.pin_source and d_sel.pinned == b:
            drafter = (f" The {ctx.method} drafter inherits {b} (_create_draft_vllm_config hands it the target's "
                       "attention_config, vllm/v1/spec_decode/llm_base_proposer.py)"
                       + (f" and is refused too: {d_sel.rejection()}." if not d_sel.ok else " and accepts it."))
        elif d_sel is not None:
            drafter = f" The {ctx.method} drafter selects on its own and gets {A.selection_text(d_sel)}."
        fix = []
        if alts:
            fix.append(f"pin --attention-backend {alts[0]} (it accepts the target{' and the drafter' if d_sel else ''})")
        if fixed:
            fix.append(f"upgrade to vLLM >= {fixed} (the first release whose tables select the drafter on its own, "
                       "non-causal for its layers only)")
        fields = ("model", "attention_backend") + (("speculative_config.model",) if d_sel is not None else ())
        return self.finding(
            f"vLLM {ctx.version} gives the target attention backend {b}: {t_sel.pin_source}. On {ctx.hardware.name} {b} "
            f"refuses the target: {t_sel.rejection()}" + (f" ({why})" if why else "") + "." + drafter
            + f" vLLM raises 'Selected backend AttentionBackendEnum.{b} is not valid for this configuration' at load."
            + (f" Fix: {'; or '.join(fix)}." if fix else " No backend of this release accepts the layout."),
            fields=fields,
            fixes=[pin_shared_backend(alts[0])] if alts else [])
