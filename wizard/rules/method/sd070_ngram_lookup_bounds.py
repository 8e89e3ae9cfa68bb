from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import given_keys
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import use_ngram


@register
class NgramLookupBounds(Rule):
    r"""n-gram lookup bounds are inconsistent

    ## What it does

    For ngram / ngram_gpu: an error when min > max (after vLLM copies a single
    given bound into the other); an info when only one bound is given, because vLLM then sets
    both to the same value (``prompt_lookup_max: 3`` alone means min = max = 3).

    ## Why it matters

    vLLM raises ``prompt_lookup_min=5 must be <= prompt_lookup_max=2``; the
    silent copy surprises users who expected vLLM's default on the other side.

    ## Example

    ``{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":5,"prompt_lookup_max":2}``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":5,"prompt_lookup_max":2}'
    ```

    ## Use instead

    Give both bounds, e.g. min 2, max 5.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'
    ```

    ## Fix safety

    Safe: swaps/aligns the bounds the user wrote.

    ## Source

    vllm/config/speculative.py ``__post_init__`` n-gram block (0.32, 0.33);
    docs/vllm-rules.md R070 (E01-E03, F11).
    """

    id = "SD070"
    severity = Severity.ERROR
    fields = ("speculative_config.prompt_lookup_min", "speculative_config.prompt_lookup_max")
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None or not use_ngram(ctx.method):
            return
        g = given_keys(ctx)
        lo, hi = g.get("prompt_lookup_min"), g.get("prompt_lookup_max")
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (x for x in (lo, hi) if x is not None)):
            return  # SD022 reports bad values
        if lo is not None and hi is not None:
            if lo > hi:
                yield self.finding(
                    f"prompt_lookup_min={lo} must be <= prompt_lookup_max={hi}: vLLM rejects it at config time.",
                    fixes=[Patch(description=f"Swap them (min {hi}, max {lo})",
                                 set={"speculative_config.prompt_lookup_min": hi, "speculative_config.prompt_lookup_max": lo}),
                           Patch(description=f"Set prompt_lookup_min={hi}", set={"speculative_config.prompt_lookup_min": hi})],
                )
            return
        if lo is None and hi is None:
            return
        given, other, v = ("prompt_lookup_max", "prompt_lookup_min", hi) if hi is not None else ("prompt_lookup_min", "prompt_lookup_max", lo)
        # docs/severity.md: min copied into max makes every short match propose k tokens (frequent
        # rejected drafts: likely slower than no speculation) -> warning; max copied into min -> info
        min_only = given == "prompt_lookup_min"
        yield self.finding(
            f"Only {given}={v} is given: vLLM sets {other}={v} too (not its default of 5), so n-grams of exactly {v} tokens are matched."
            + (" Short matches propose k tokens each: many drafts are rejected and speculation can be slower than none."
               if min_only else ""),
            fields=[f"speculative_config.{other}"],
            fixes=[Patch(description="Set prompt_lookup_max 5 (vLLM's default upper bound)",
                         set={"speculative_config.prompt_lookup_max": max(5, v)})] if min_only else [],
            severity=Severity.WARNING if min_only else Severity.INFO,
            title="n-gram: one lookup bound copies the other",
        )
