from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP, use_ngram


@register
class QuantizedKvWithSpeculation(Rule):
    r"""TurboQuant/UltraQuant KV cache with speculative decoding

    ## What it does

    Warns when the target's or the drafter's KV dtype is a ``turboquant_*``
    or ``ultraquant_*`` layout and speculation is on.

    ## Why it matters

    The reported combination produced degenerate token loops: MTP stayed
    broken, n-gram became clean only with backports and ``prompt_lookup_min`` 8.

    ## Example

    ``--kv-cache-dtype turboquant_3bit_nc`` with MTP or n-gram.

    ```sh
    vllm serve Qwen/Qwen3-8B --kv-cache-dtype turboquant_3bit_nc \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'
    ```

    ## Use instead

    bf16 or fp8 KV with speculation; for n-gram, a high ``prompt_lookup_min``.

    ```sh
    vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8 \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'
    ```

    ## Fix safety

    ``auto`` costs KV capacity.

    ## Source

    https://github.com/vllm-project/vllm/issues/40831
    """

    id = "SD205"
    severity = Severity.WARNING
    fields = ("kv_cache_dtype",)
    phase = "run"

    def check(self, ctx):
        if ctx.spec is None:
            return
        kv = ctx.target_kv_dtype()
        if not kv.startswith(("turboquant", "ultraquant")):
            return
        extra = ""
        if use_ngram(ctx.method):
            extra = " For n-gram, a prompt_lookup_min of 8 avoided the loops in the report."
        elif ctx.method == MTP:
            extra = " MTP stayed broken in the report even with the fixes."
        yield self.finding(
            f"KV dtype '{kv}' with speculative method '{ctx.method}': reported to produce degenerate token loops "
            f"(vllm#40831).{extra}",
            fixes=[Patch(description="Use --kv-cache-dtype auto (or fp8)", set={"kv_cache_dtype": "auto"})],
        )
