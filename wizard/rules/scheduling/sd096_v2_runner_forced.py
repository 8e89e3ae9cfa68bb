from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import has_v1, is_cpu, v2_blockers
from wizard.rules.registry import Rule, Severity, register

#: vllm/platforms/interface.py ``Platform.validate_environ`` (0.34.0 L1481-1490), called by
#: ``EngineArgs.create_engine_config`` (vllm/engine/arg_utils.py 0.34.0 L2294) whatever
#: ``fail_on_environ_validation`` says; the value is compared as typed (``value != "1"``).
_NO_V1 = ("VLLM_USE_V2_MODEL_RUNNER={value} is no longer supported: Model Runner V1 has been removed. "
          "Unset this variable.")
_REDUNDANT = "VLLM_USE_V2_MODEL_RUNNER=1 is redundant and can be unset: Model Runner V1 has been removed."


@register
class V2RunnerForced(Rule):
    r"""VLLM_USE_V2_MODEL_RUNNER that this release refuses

    ## What it does

    Releases with both runners (up to 0.33): with the variable set to 1 in the server's
    environment, an error when a V2-unsupported feature is present (suffix, custom_class,
    medusa/mlp_speculator, parallel drafting other than dflash/dspark, heterogeneous
    vocabularies), and on vLLM 0.32 on the CPU platform, where Triton has no CPU backend.
    Releases without Model Runner V1 (0.34): any value other than exactly ``1`` (``0``, ``true``,
    empty) is an error, and ``1`` is an info finding (redundant).

    ## Why it matters

    Up to 0.33 vLLM raises ``Model Runner V2 does not yet support: ...`` /
    ``Model Runner V2 requires Triton.`` at config time instead of falling back to V1. 0.34 has
    no V1 to fall back to or to force: ``create_engine_config`` raises
    ``VLLM_USE_V2_MODEL_RUNNER=0 is no longer supported: Model Runner V1 has been removed. Unset
    this variable.`` (even without ``--fail-on-environ-validation``), and only warns that ``=1``
    is redundant.

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
    0.33 L731); vllm/platforms/interface.py ``validate_environ`` (0.34 L1481-1490, from
    vllm/engine/arg_utils.py ``create_engine_config`` L2294); docs/vllm-rules.md R083, R085;
    docs/release-0.34.md §1.1.
    """

    id = "SD096"
    severity = Severity.ERROR
    fields = ("env.VLLM_USE_V2_MODEL_RUNNER",)
    phase = "config"

    def check(self, ctx):
        env = (ctx.config.env or {}).get("VLLM_USE_V2_MODEL_RUNNER")
        if env is None:
            return
        if not has_v1(ctx):
            # speculation or not: validate_environ reads os.environ before any config is built
            fix = [Patch(description="Unset VLLM_USE_V2_MODEL_RUNNER (the release has only the V2 runner)",
                         unset=["env.VLLM_USE_V2_MODEL_RUNNER"])]
            if str(env) != "1":
                yield self.finding(_NO_V1.format(value=env), fixes=fix)
            else:
                yield self.finding(_REDUNDANT, severity=Severity.INFO, fixes=fix,
                                   title="VLLM_USE_V2_MODEL_RUNNER=1 is redundant")
            return
        if str(env).strip().lower() not in ("1", "true"):
            return
        fix = [Patch(description="Unset VLLM_USE_V2_MODEL_RUNNER (vLLM chooses the runner)", unset=["env.VLLM_USE_V2_MODEL_RUNNER"])]
        blockers = v2_blockers(ctx)
        if blockers:
            yield self.finding(f"Model Runner V2 does not yet support: {', '.join(blockers)}; with VLLM_USE_V2_MODEL_RUNNER=1 "
                               "vLLM fails instead of using the V1 runner.", fixes=fix)
        elif is_cpu(ctx) and not ctx.version.at_least("0.33"):
            yield self.finding("Model Runner V2 requires Triton, which has no CPU backend: vLLM fails on the CPU platform "
                               "with VLLM_USE_V2_MODEL_RUNNER=1.", fixes=fix)
