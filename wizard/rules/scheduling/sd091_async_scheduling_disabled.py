from __future__ import annotations

from wizard.rules.helpers import async_incompatibility, is_cpu, uses_v1_runner
from wizard.rules.registry import Rule, Severity, register


@register
class AsyncSchedulingDisabled(Rule):
    r"""Async scheduling will be disabled

    ## What it does

    Informational: with ``async_scheduling`` unset and an incompatible method
    (ngram on 0.32 / V1, suffix, custom_class, ``disable_padded_drafter_batch``), vLLM disables
    async scheduling with a warning. On the CPU platform async scheduling is always forced off,
    even when requested. A release without Model Runner V1 (0.34) disables it for no speculative
    method (only the CPU platform's override remains).

    ## Why it matters

    Async scheduling overlaps CPU scheduling with GPU work; without it,
    speculation's speed-up is partly eaten by scheduler time.

    ## Example

    Comparing n-gram and EAGLE throughput without noticing one runs synchronously.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Use instead

    ngram_gpu or an EAGLE-family method on GPU keeps async scheduling.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Informational.

    ## Source

    vllm/config/vllm.py async default branch; vllm/platforms/cpu.py ``check_and_update_config``
    (0.32, 0.33; 0.34 L347); docs/vllm-rules.md R082 (E01, F02, E74).
    """

    id = "SD091"
    severity = Severity.INFO
    fields = ("async_scheduling",)
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None or ctx.config.async_scheduling is False:
            return
        if is_cpu(ctx):
            if ctx.config.async_scheduling:
                yield self.finding("The CPU platform forces async_scheduling off, although --async-scheduling was given.")
            return
        if ctx.config.async_scheduling is not None:
            return
        why = async_incompatibility(ctx)
        if why is None or (ctx.version.at_least("0.33") and not uses_v1_runner(ctx)):
            return
        yield self.finding(f"Async scheduling not supported with {why}: vLLM will disable it.")
