from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register


@register
class BatchedTokensBelowMaxLen(Rule):
    """Chunked prefill off and max_num_batched_tokens below max_model_len

    ## What it does

    With ``--no-enable-chunked-prefill`` a prompt must fit one scheduler step, so vLLM requires
    ``max_num_batched_tokens >= max_model_len``. ``max_model_len`` is the one vLLM will use:
    ``--max-model-len``, else the length it derives from the model (SD100).

    ## Why it matters

    vLLM refuses to build the config: "max_num_batched_tokens (256) is smaller than
    max_model_len (512). This effectively limits the maximum sequence length to
    max_num_batched_tokens and makes vLLM reject longer sequences."

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --no-enable-chunked-prefill --max-num-batched-tokens 256 --max-model-len 512
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --no-enable-chunked-prefill --max-num-batched-tokens 512 --max-model-len 512
    ```

    ## Fix safety

    Raising the token budget to ``max_model_len`` (and at least ``max_num_seqs``) is what vLLM
    itself picks when the option is unset; it costs activation memory at profiling time.
    Re-enabling chunked prefill (vLLM's default) keeps the small budget.

    ## Source

    vllm/config/scheduler.py ``SchedulerConfig.verify_max_model_len`` (0.28 L254, 0.32 L316;
    inventory R325); defaults from vllm/engine/arg_utils.py
    ``_set_default_chunked_prefill_and_prefix_caching_args``. Verified with
    ``benchmarks/conformance.py`` on 0.28-0.33.
    """

    id = "SD140"
    severity = Severity.ERROR
    fields = ("max_num_batched_tokens", "enable_chunked_prefill", "max_model_len")
    phase = "config"

    def check(self, ctx):
        b = ctx.view.budget
        if b is None or b.chunked or not b.tokens_given or b.max_model_len is None:
            return
        if b.tokens >= b.max_model_len:
            return
        need = max(b.max_model_len, b.seqs or 1)
        yield self.finding(
            f"max_num_batched_tokens={b.tokens} is smaller than max_model_len={b.max_model_len} with chunked prefill "
            "disabled; vLLM rejects it (a prompt must fit one step).",
            fixes=[Patch(description=f"Raise --max-num-batched-tokens to {need}", set={"max_num_batched_tokens": need}),
                   Patch(description="Re-enable chunked prefill (vLLM's default)", unset=["enable_chunked_prefill"])])
