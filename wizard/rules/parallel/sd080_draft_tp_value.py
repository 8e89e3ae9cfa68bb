from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import as_int, builds_draft_config
from wizard.rules.registry import Rule, Severity, register


@register
class DraftTpValue(Rule):
    r"""Drafter TP must be 1 or the target's TP

    ## What it does

    With a drafter model, the drafter TP must be 1 or ``--tensor-parallel-size``.
    n-gram and other model-free methods ignore the value (see SD071).

    ## Why it matters

    vLLM raises ``speculative_draft_tensor_parallel_size=2 cannot be other value
    than 1 or target model tensor_parallel_size``.

    ## Example

    TP 8 target with draft TP 2 "to save communication".

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"draft_tensor_parallel_size":2}'
    ```

    ## Use instead

    1 for small drafters (EAGLE heads), else leave it unset (= target TP).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"draft_tensor_parallel_size":1}'
    ```

    ## Fix safety

    Safe: 1 keeps the drafter on one GPU (it is small).

    ## Source

    vllm/config/speculative.py ``_verify_and_get_draft_tp`` (0.32 L1712, 0.33 L1849);
    docs/vllm-rules.md R055 (E20, G10).
    """

    id = "SD080"
    severity = Severity.ERROR
    fields = ("speculative_config.draft_tensor_parallel_size",)
    phase = "config"

    def check(self, ctx):
        if not builds_draft_config(ctx):
            return
        v = as_int(ctx.spec.draft_tensor_parallel_size)
        if v is None or v < 1 or v in (1, ctx.tp):
            return
        yield self.finding(
            f"speculative_draft_tensor_parallel_size={v} cannot be other value than 1 or target model "
            f"tensor_parallel_size ({ctx.tp}).",
            fixes=[Patch(description="Use draft_tensor_parallel_size=1", set={"speculative_config.draft_tensor_parallel_size": 1}),
                   Patch(description="Remove it (drafter uses the target's TP)", unset=["speculative_config.draft_tensor_parallel_size"])],
        )
