from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register


@register
class BatchedTokensBelowMaxSeqs(Rule):
    """max_num_batched_tokens below max_num_seqs

    ## What it does

    Every running sequence schedules at least one token per step, so vLLM requires
    ``max_num_batched_tokens >= max_num_seqs``. Both are the values vLLM will use: given, or
    the defaults ``EngineArgs`` fills in for the hardware (``get_batch_defaults``: CPU 2048 x /
    128 x world size, GPUs 2048/256, 8192/1024 from 70 GiB, 16384/1024 from 160 GiB; doubled
    by ``--performance-mode throughput``), with the default budget raised to ``max_model_len``
    when chunked prefill is off and capped at ``max_num_seqs x max_model_len``. A defaulted
    ``max_num_seqs`` is itself capped at the token budget, so only a given ``--max-num-seqs``
    (or a given one with a default budget) can trip it.

    ## Why it matters

    vLLM refuses to build the config: "max_num_batched_tokens (512) must be greater than or
    equal to max_num_seqs (1024)."

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 1024 --max-num-batched-tokens 512
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 1024 --max-num-batched-tokens 1024
    ```

    ## Fix safety

    Raising the budget to ``max_num_seqs`` is safe (more activation memory at profiling time);
    lowering ``max_num_seqs`` to the budget caps concurrency instead.

    ## Source

    vllm/config/scheduler.py ``SchedulerConfig.verify_max_model_len`` (0.28 L264, 0.32 L328;
    inventory R326); vllm/engine/arg_utils.py ``get_batch_defaults`` and
    ``_set_default_max_num_seqs_and_batched_tokens_args``. Verified with
    ``benchmarks/conformance.py`` on 0.28-0.33.
    """

    id = "SD141"
    severity = Severity.ERROR
    fields = ("max_num_batched_tokens", "max_num_seqs")
    phase = "config"

    def check(self, ctx):
        b = ctx.view.budget
        if b is None or b.tokens is None or b.seqs is None or b.tokens >= b.seqs:
            return
        need = b.seqs if b.chunked or b.max_model_len is None else max(b.seqs, b.max_model_len)
        fixes = [Patch(description=f"Raise --max-num-batched-tokens to {need}", set={"max_num_batched_tokens": need})]
        if b.seqs_given and b.tokens >= 1:
            fixes.append(Patch(description=f"Lower --max-num-seqs to {b.tokens}", set={"max_num_seqs": b.tokens}))
        given = "" if b.tokens_given else " (vLLM's default budget for this hardware)"
        default = "" if b.seqs_given else " (vLLM's default for this hardware)"
        yield self.finding(
            f"max_num_batched_tokens={b.tokens}{given} is smaller than max_num_seqs={b.seqs}{default}; vLLM rejects it "
            "(every running sequence needs a token per step).",
            fixes=fixes)
