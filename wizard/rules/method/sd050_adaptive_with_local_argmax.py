from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DSPARK


@register
class AdaptiveWithLocalArgmax(Rule):
    r"""Adaptive verification conflicts with local argmax reduction

    ## What it does

    Flags both options together unless the method is dspark.

    ## Why it matters

    Adaptive verification reads draft logits that local argmax never
    materializes; vLLM refuses at config time.

    ## Example

    Turning on every "speed" switch at once.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"enable_adaptive_verification":true,"use_local_argmax_reduction":true}'
    ```

    ## Use instead

    Pick one.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"use_local_argmax_reduction":true}'
    ```

    ## Fix safety

    Dropping local argmax is safe (a small drafter-side speed cost).

    ## Source

    vllm/config/speculative.py end of ``__post_init__`` (0.32, 0.33); R074 (F23).
    """

    id = "SD050"
    severity = Severity.ERROR
    fields = ("speculative_config.enable_adaptive_verification", "speculative_config.use_local_argmax_reduction")
    phase = "config"

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
