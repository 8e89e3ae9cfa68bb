from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import as_int, builds_draft_config
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP


@register
class DraftHeadsNotDivisible(Rule):
    r"""Drafter attention heads not divisible by the drafter TP

    ## What it does

    The drafter TP defaults to the target TP; vLLM then checks the drafter's
    ``num_attention_heads`` % draft TP == 0 like any model.

    ## Why it matters

    A 2-head drafter under TP 4 fails at config time with ``Total number of
    attention heads (2) must be divisible by tensor parallel size (4)``.

    ## Example

    A tiny draft model with TP 4 and no ``draft_tensor_parallel_size``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 3 \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Use instead

    ``draft_tensor_parallel_size: 1`` for small drafters.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 3 \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"draft_tensor_parallel_size":1}'
    ```

    ## Fix safety

    Safe: the drafter runs on one GPU.

    ## Source

    vllm/config/speculative.py ``_verify_args`` -> ``ModelConfig.verify_with_parallel_config``
    (0.32, 0.33); docs/vllm-rules.md R056 (G01, G02).
    """

    id = "SD081"
    severity = Severity.ERROR
    fields = ("speculative_config.draft_tensor_parallel_size", "tensor_parallel_size")
    phase = "config"

    def check(self, ctx):
        if not builds_draft_config(ctx) or ctx.drafter is None:
            return
        dtp = as_int(ctx.spec.draft_tensor_parallel_size)
        if dtp is None:
            dtp = ctx.tp
        elif dtp not in (1, ctx.tp):
            return  # SD080
        heads = ctx.drafter.num_attention_heads
        if ctx.method == MTP and ctx.target is not None and ctx.drafter is ctx.target:
            heads = ctx.target.num_attention_heads
        if not heads or dtp <= 1 or heads % dtp == 0:
            return
        yield self.finding(
            f"Total number of attention heads ({heads}) of the drafter must be divisible by its tensor parallel "
            f"size ({dtp}; it defaults to the target's TP).",
            fixes=[Patch(description="Run the drafter unsharded (draft_tensor_parallel_size=1)",
                         set={"speculative_config.draft_tensor_parallel_size": 1})],
        )
