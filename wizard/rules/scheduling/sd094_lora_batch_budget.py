from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import is_cpu
from wizard.rules.registry import Rule, Severity, register


def batch_defaults(ctx) -> tuple[int | None, int | None]:
    """(max_num_batched_tokens, max_num_seqs) vLLM picks for `vllm serve` when unset
    (EngineArgs.get_batch_defaults, OPENAI_API_SERVER; 0.32). None = unknown hardware."""
    ws = ctx.tp * ctx.pp
    if is_cpu(ctx):
        return 2048 * ws, 128 * ws
    hw = ctx.hardware
    if hw is None:
        return None, None
    gib = hw.memory_bytes / 2**30
    if gib >= 160:
        return 16384, 1024
    if gib >= 70 and "a100" not in hw.name.lower():
        return 8192, 1024
    return 2048, 256


@register
class LoraBatchBudget(Rule):
    r"""LoRA token budget too small for speculative decoding

    ## What it does

    With ``--enable-lora``, every sequence may need k+1 tokens in one step;
    vLLM requires the token budget to cover all sequences. Unset values use vLLM's `vllm serve`
    defaults for the hardware in the context.

    ## Why it matters

    vLLM raises ``Consider increasing max_num_batched_tokens or decreasing
    num_speculative_tokens`` (a bare ValueError) at config time.

    ## Example

    ``--enable-lora --max-num-seqs 256 --max-num-batched-tokens 512`` with k=3.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora --max-num-seqs 256 \
      --max-num-batched-tokens 512 \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Use instead

    Raise the budget or lower ``--max-num-seqs``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora --max-num-seqs 64 \
      --max-num-batched-tokens 512 \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    A larger budget uses more activation memory; fewer sequences lower throughput.

    ## Source

    vllm/engine/arg_utils.py ``create_engine_config`` (0.32 L2672-2683, 0.33 L2713-2724);
    docs/vllm-rules.md R088 (E56, F07).
    """

    id = "SD094"
    severity = Severity.ERROR
    fields = ("max_num_batched_tokens", "max_num_seqs", "enable_lora")
    topic = "scheduling"
    phase = "config"

    def check(self, ctx):
        if not ctx.config.enable_lora or ctx.spec is None or ctx.k is None:
            return
        d_mnbt, d_mns = batch_defaults(ctx)
        mnbt = ctx.config.max_num_batched_tokens if isinstance(ctx.config.max_num_batched_tokens, int) else d_mnbt
        mns = ctx.config.max_num_seqs if isinstance(ctx.config.max_num_seqs, int) else d_mns
        if mnbt is None or mns is None:
            return
        need = mns * (ctx.k + 1)
        if mnbt >= need:
            return
        yield self.finding(
            f"With LoRA, max_num_batched_tokens ({mnbt}) must be >= max_num_seqs ({mns}) * (k + 1 = {ctx.k + 1}) = {need}: "
            "vLLM says 'Consider increasing max_num_batched_tokens or decreasing num_speculative_tokens'.",
            fixes=[Patch(description=f"Set max_num_batched_tokens={need}", set={"max_num_batched_tokens": need}),
                   Patch(description=f"Set max_num_seqs={max(1, mnbt // (ctx.k + 1))}", set={"max_num_seqs": max(1, mnbt // (ctx.k + 1))})],
        )
