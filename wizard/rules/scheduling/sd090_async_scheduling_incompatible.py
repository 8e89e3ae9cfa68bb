from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import async_incompatibility, uses_v1_runner
from wizard.rules.registry import Rule, Severity, register


@register
class AsyncSchedulingIncompatible(Rule):
    r"""--async-scheduling is not supported with this speculative setup

    ## What it does

    Explicit ``async_scheduling: true`` with ngram (CPU n-gram), suffix,
    custom_class, medusa/mlp_speculator, or ``disable_padded_drafter_batch``. 0.32 rejects it
    always; 0.33 only when the V1 model runner is used (CPU, or a V2 blocker), where PP > 1 is
    also rejected. A release without Model Runner V1 (0.34) has none of these refusals: async
    scheduling runs with every speculative method and with PP > 1.

    ## Why it matters

    vLLM raises ``Currently, async scheduling is only supported with
    EAGLE/MTP/Draft Model/NGram GPU/DSpark/DFlash`` (0.32) / ``Async scheduling is not supported by
    the V1 model runner with ...`` (0.33) at config time.

    ## Example

    ``--async-scheduling`` with ``{"method":"ngram",...}``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --async-scheduling \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Use instead

    Drop the flag (vLLM enables async by itself when it can), or use ngram_gpu.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: vLLM would run without async scheduling for this method anyway.

    ## Source

    vllm/config/vllm.py ``VllmConfig.__post_init__`` async block (0.32 L1553-1582,
    0.33 L1651-1687; 0.34 L1598-1637 without ``v1_async_sched_incompat``); docs/vllm-rules.md R081
    (E54, E55).
    """

    id = "SD090"
    severity = Severity.ERROR
    fields = ("async_scheduling",)
    phase = "config"

    def check(self, ctx):
        if ctx.config.async_scheduling is not True or ctx.spec is None:
            return
        why = async_incompatibility(ctx)
        v033 = ctx.version.at_least("0.33")
        if v033:
            if not uses_v1_runner(ctx):
                return
            if why is None and ctx.pp > 1:
                why = "pipeline parallelism"
        if why is None:
            return
        fixes = [Patch(description="Drop --async-scheduling", unset=["async_scheduling"])]
        if ctx.spec.disable_padded_drafter_batch and why.startswith("disable_padded"):
            fixes.append(Patch(description="Drop disable_padded_drafter_batch", unset=["speculative_config.disable_padded_drafter_batch"]))
        msg = (f"Async scheduling is not supported by the V1 model runner with {why}." if v033 else
               f"--async-scheduling is not supported with {why}: vLLM raises 'Currently, async scheduling is only "
               "supported with EAGLE/MTP/Draft Model/NGram GPU/DSpark/DFlash kind of speculative decoding'"
               if not why.startswith("disable_padded") else
               "Async scheduling is not compatible with disable_padded_drafter_batch=True.")
        yield self.finding(msg, fixes=fixes)
