from __future__ import annotations

from wizard.config import Patch
from wizard.mechanisms.method_support import feature_support
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DSPARK, dspark_archs, is_allowed, lm_head_quantizable, method_specific_options


def _archs_text(d) -> str:
    """The drafter's architectures as vLLM builds them (a qwen3 ``DSparkDraftModel`` is rewritten)."""
    built = dspark_archs(d.architectures, d.model_type)
    if not built:
        return "of no architecture"
    text = ", ".join(built)
    return text if tuple(built) == tuple(d.architectures) else f"{text} (vLLM's name for a qwen3 DSparkDraftModel)"


@register
class DraftLmHeadQuantization(Rule):
    r"""draft_lm_head_quantization with a method or drafter that does not take it

    ## What it does

    On 0.33 the option is valid only for eagle, eagle3 and mtp. (On 0.32 it is
    an unknown key: SD020.) On 0.34 dspark takes it too, but only with a DeepSeek-V4/V4.1
    DSpark drafter (``DSparkDraftModel`` / ``DSparkV41DraftModel``); the other methods are SD058.

    ## Why it matters

    vLLM 0.33 raises ``draft_lm_head_quantization is not supported for
    method ...`` at config time.

    ## Example

    ``{"method":"ngram","draft_lm_head_quantization":"fp8"}``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"draft_lm_head_quantization":"fp8"}'
    ```

    ## Use instead

    Use it only with EAGLE/MTP drafters that share the target lm_head.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"draft_lm_head_quantization":"fp8"}'
    ```

    ## Fix safety

    Safe: removing it keeps the unquantized head.

    ## Source

    vllm/config/speculative.py ``_verify_args`` (0.33); docs/vllm-rules.md R077 (F29, F33).
    0.34: methods whose speculator does not take the option get the generic message (SD058,
    speculative.py:1394); dspark takes it, but only on the DeepSeek-V4/V4.1 DSpark drafters
    ("draft_lm_head_quantization is only supported by the DeepSeek-V4/V4.1 DSpark drafters",
    v1/worker/gpu/spec_decode/dspark/config.py:117-123), which this rule reports, as it does
    ``VLLM_RELOAD_MODE=direct`` with the option ("Direct reload does not support
    draft_lm_head_quantization.", config/vllm.py:1190-1195 ``_verify_direct_reload_compat``, 0.34;
    gated on that check being in the release's features.json).
    """

    id = "SD053"
    severity = Severity.ERROR
    versions = ">=0.33"
    fields = ("speculative_config.draft_lm_head_quantization",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.draft_lm_head_quantization is None:
            return
        if method_specific_options(ctx.version):
            yield from self._check_034(ctx)
            return
        if lm_head_quantizable(ctx.method) or not is_allowed(ctx.method, ctx.version):
            return
        yield self.finding(
            f"draft_lm_head_quantization is not supported for method '{ctx.method}' (only eagle, eagle3, mtp).",
            fixes=[Patch(description="Remove draft_lm_head_quantization", unset=["speculative_config.draft_lm_head_quantization"])],
        )

    def _check_034(self, ctx):
        """0.34: dspark's own restriction (dspark/config.py:117-123), and ``VLLM_RELOAD_MODE=direct``
        (config/vllm.py:1190-1195); the methods that do not take the option are SD058."""
        mode = str((ctx.config.env or {}).get("VLLM_RELOAD_MODE") or "").strip()
        if mode == "direct" and feature_support(ctx.version, r"Direct reload does not support draft_lm_head").checks:
            d = ctx.drafter
            archs = tuple(d.architectures) if d is not None and d.has_config else ()
            if ctx.method != DSPARK and not lm_head_quantizable(ctx.method, ctx.version, archs,
                                                                  getattr(d, "model_type", None)):
                return  # refused earlier, by the speculator's options (SD058)
            yield self.finding(
                "Direct reload does not support draft_lm_head_quantization. (VLLM_RELOAD_MODE=direct: after the reload "
                f"begins the draft's quantized lm_head is a view of the target's; vLLM {ctx.version} refuses the config "
                "at startup.)",
                fields=["speculative_config.draft_lm_head_quantization"],
                fixes=[Patch(description="Remove draft_lm_head_quantization",
                             unset=["speculative_config.draft_lm_head_quantization"]),
                       Patch(description="Drop VLLM_RELOAD_MODE (the layerwise reload, vLLM's default)",
                             unset=["env.VLLM_RELOAD_MODE"])])
            if ctx.method != DSPARK:
                return
        if ctx.method != DSPARK:
            return
        d = ctx.drafter
        if d is None or not d.has_config:
            return  # unknown drafter: its architecture decides
        if lm_head_quantizable(DSPARK, ctx.version, tuple(d.architectures), d.model_type):
            return
        yield self.finding(
            f"draft_lm_head_quantization is only supported by the DeepSeek-V4/V4.1 DSpark drafters (DSparkDraftModel, "
            f"DSparkV41DraftModel); drafter {d.short_name()} is {_archs_text(d)}. "
            f"vLLM {ctx.version} refuses the config at startup.",
            fixes=[Patch(description="Remove draft_lm_head_quantization", unset=["speculative_config.draft_lm_head_quantization"])],
        )
