from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register


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
    phase = "config"

    def check(self, ctx):
        if not ctx.config.enable_lora or ctx.spec is None or ctx.k is None:
            return
        b = ctx.view.budget  # the scheduler config vLLM resolves (wizard.engine.batch)
        if b is None or b.tokens is None or b.seqs is None:
            return
        if not (b.tokens_given and b.seqs_given) and not ctx.view.batch_defaults.hardware_known:
            return  # the defaults depend on the device
        mnbt, mns = b.tokens, b.seqs
        need = mns * (ctx.k + 1)
        if mnbt >= need:
            return
        yield self.finding(
            f"With LoRA, max_num_batched_tokens ({mnbt}) must be >= max_num_seqs ({mns}) * (k + 1 = {ctx.k + 1}) = {need}: "
            "vLLM says 'Consider increasing max_num_batched_tokens or decreasing num_speculative_tokens'.",
            fixes=[Patch(description=f"Set max_num_batched_tokens={need}", set={"max_num_batched_tokens": need}),
                   Patch(description=f"Set max_num_seqs={max(1, mnbt // (ctx.k + 1))}", set={"max_num_seqs": max(1, mnbt // (ctx.k + 1))})],
        )
