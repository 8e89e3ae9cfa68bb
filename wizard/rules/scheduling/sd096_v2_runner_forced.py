from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import is_cpu, v2_blockers
from wizard.rules.registry import Rule, Severity, register


@register
class V2RunnerForced(Rule):
    r"""VLLM_USE_V2_MODEL_RUNNER=1 where the V2 runner cannot run

    ## What it does

    With the variable set to 1 in the server's environment: an error when a
    V2-unsupported feature is present (suffix, custom_class, medusa/mlp_speculator, parallel
    drafting other than dflash/dspark, heterogeneous vocabularies), and on vLLM 0.32 on the CPU
    platform, where Triton has no CPU backend.

    ## Why it matters

    vLLM raises ``Model Runner V2 does not yet support: ...`` /
    ``Model Runner V2 requires Triton.`` at config time instead of falling back to V1.

    ## Example

    Exporting ``VLLM_USE_V2_MODEL_RUNNER=1`` globally, then serving suffix decoding.

    ```sh
    VLLM_USE_V2_MODEL_RUNNER=1 vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"parallel_drafting":true}'
    ```

    ## Use instead

    Leave it unset: vLLM picks V2 when it can and falls back otherwise.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"parallel_drafting":true}'
    ```

    ## Fix safety

    Safe: unset lets vLLM choose the runner.

    ## Source

    vllm/config/vllm.py ``use_v2_model_runner`` / ``_validate_v2_model_runner`` (0.32 L703,
    0.33 L731); docs/vllm-rules.md R083, R085.
    """

    id = "SD096"
    severity = Severity.ERROR
    fields = ("env.VLLM_USE_V2_MODEL_RUNNER",)
    phase = "config"

    def check(self, ctx):
        env = (ctx.config.env or {}).get("VLLM_USE_V2_MODEL_RUNNER")
        if env is None or str(env).strip().lower() not in ("1", "true"):
            return
        fix = [Patch(description="Unset VLLM_USE_V2_MODEL_RUNNER (vLLM chooses the runner)", unset=["env.VLLM_USE_V2_MODEL_RUNNER"])]
        blockers = v2_blockers(ctx)
        if blockers:
            yield self.finding(f"Model Runner V2 does not yet support: {', '.join(blockers)}; with VLLM_USE_V2_MODEL_RUNNER=1 "
                               "vLLM fails instead of using the V1 runner.", fixes=fix)
        elif is_cpu(ctx) and not ctx.version.at_least("0.33"):
            yield self.finding("Model Runner V2 requires Triton, which has no CPU backend: vLLM fails on the CPU platform "
                               "with VLLM_USE_V2_MODEL_RUNNER=1.", fixes=fix)
