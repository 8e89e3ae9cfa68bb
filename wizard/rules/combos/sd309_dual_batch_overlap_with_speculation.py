from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import has_v1, is_cpu
from wizard.rules.optionvalues import option, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register


@register
class DualBatchOverlapWithSpeculation(Rule):
    r"""Dual batch overlap (--enable-dbo) with speculative decoding on Model Runner V2 (0.32-0.33)

    ## What it does

    In vLLM 0.32 and 0.33, ``_get_dbo_unsupported_features`` lists what Model Runner V2 cannot
    combine with microbatching (``--enable-dbo`` or ``--ubatch-size`` > 1), speculative decoding
    among them. With ``VLLM_USE_V2_MODEL_RUNNER=1`` in the server's environment that is a config
    error; with the variable unset, DBO alone is a V2 blocker ("dual batch overlap") and vLLM runs
    the speculative configuration on Model Runner V1 instead (an info finding). 0.34 dropped
    speculative decoding (and decode context parallelism) from the list: DBO with speculation is
    allowed there, with the DBO token thresholds raised to the number of microbatches times
    ``1 + num_speculative_tokens``; the rule gives no finding from 0.34 on.

    ## Why it matters

    With V2 forced vLLM stops at config time: "Model Runner V2 does not yet support: dual batch
    overlap with speculative decoding". Unforced, the V1 fallback decides which speculative
    features run (V1-only limits apply).

    ## Example

    ```sh
    VLLM_USE_V2_MODEL_RUNNER=1 vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-dbo \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Use instead

    ```sh
    VLLM_USE_V2_MODEL_RUNNER=1 vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Removing ``--enable-dbo`` gives up the compute/communication overlap of expert-parallel
    MoE serving (throughput only); unsetting ``VLLM_USE_V2_MODEL_RUNNER`` lets vLLM fall back to
    Model Runner V1.

    ## Source

    vllm/config/vllm.py ``_get_dbo_unsupported_features`` (0.32.0 L3085-3105, 0.33.0
    L3222-3242: ``return ["dual batch overlap"]`` without the variable at 0.33.0 L3233, the
    speculative-decoding entry at L3242), raised by ``_validate_v2_model_runner`` (0.32.0 L3187,
    0.33.0 L3324); vllm/config/vllm.py:3378-3408 (0.34.0, no speculative-decoding entry) and
    the threshold raise before it.
    """

    id = "SD309"
    severity = Severity.ERROR
    versions = ">=0.32,<0.34"
    fields = ("extra_args.enable_dbo", "env.VLLM_USE_V2_MODEL_RUNNER")
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None or not has_v1(ctx) or is_cpu(ctx):
            return
        dbo = truthy(option(ctx, "enable_dbo"))
        try:
            ubatch = int(option(ctx, "ubatch_size", 1) or 1)
        except (TypeError, ValueError):
            ubatch = 1
        if not (dbo or ubatch > 1):
            return
        flag = "--enable-dbo" if dbo else f"--ubatch-size {ubatch}"
        drop = (set_option_patch(ctx, "enable_dbo", None, "Remove --enable-dbo") if dbo
                else set_option_patch(ctx, "ubatch_size", None, "Remove --ubatch-size"))
        env = str((ctx.config.env or {}).get("VLLM_USE_V2_MODEL_RUNNER", "")).strip().lower()
        if env in ("1", "true"):
            yield self.finding(
                "Model Runner V2 does not yet support: dual batch overlap with speculative decoding "
                f"({flag} with a speculative config and VLLM_USE_V2_MODEL_RUNNER=1: vLLM {ctx.version} refuses the "
                "config; 0.34 allows it).",
                fixes=[drop, Patch(description="Unset VLLM_USE_V2_MODEL_RUNNER (vLLM falls back to V1)",
                                   unset=["env.VLLM_USE_V2_MODEL_RUNNER"])])
        elif env == "" and dbo:
            yield self.finding(
                f"Model Runner V2 does not yet support dual batch overlap without VLLM_USE_V2_MODEL_RUNNER: with "
                f"{flag} vLLM {ctx.version} runs this speculative config on Model Runner V1 (V1-only limits apply).",
                severity=Severity.INFO, title="--enable-dbo runs speculation on Model Runner V1", fixes=[drop])
