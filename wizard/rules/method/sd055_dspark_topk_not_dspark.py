from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DSPARK, has_no_model, is_allowed


@register
class DsparkTopkNotDspark(Rule):
    r"""dspark_draft_topk needs method dspark

    ## What it does

    Flags the key unless vLLM will run dspark.

    ## Why it matters

    vLLM raises ``dspark_draft_topk is only supported by DSpark``.

    ## Example

    Copying DSpark recipe options into an EAGLE config.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"dspark_draft_topk":8}'
    ```

    ## Use instead

    Remove it.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe.

    ## Source

    vllm/config/speculative.py ``__post_init__`` (0.32 L1509, 0.33 L1640); R049 (E64).
    From 0.34 the generic "{option} is not supported with speculative method" check
    (vllm/config/speculative.py:1394-1401) replaces this message: SD058.
    """

    id = "SD055"
    severity = Severity.ERROR
    versions = "<0.34"  # 0.34: SD058 (speculative.py:1394)
    fields = ("speculative_config.dspark_draft_topk",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.dspark_draft_topk is None or ctx.method == DSPARK:
            return
        if ctx.method is None or has_no_model(ctx.method) or spec.model is None:
            return  # vLLM checks it only where a drafter config is built
        if not is_allowed(ctx.method, ctx.version):
            return
        yield self.finding(
            f"dspark_draft_topk is only supported by DSpark (vLLM will run {ctx.method}).",
            fixes=[Patch(description="Remove dspark_draft_topk", unset=["speculative_config.dspark_draft_topk"])],
        )
