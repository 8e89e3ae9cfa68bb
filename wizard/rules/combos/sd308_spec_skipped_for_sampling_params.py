from __future__ import annotations

from wizard.rules.registry import Rule, Severity, register


@register
class SpecSkippedForSamplingParams(Rule):
    r"""Speculation silently off for logprobs/penalty requests (vLLM 0.11-0.13)

    ## What it does

    Warns on any speculative config for 0.11 <= version < 0.14: requests with
    logprobs, presence/frequency/repetition penalties or min_p run without speculation.

    ## Why it matters

    Those releases disabled speculation per request for common sampling parameters.

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-8B \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'
    ```

    ## Use instead

    Upgrade if such requests are common; measure speed on real traffic.

    ```sh
    vllm serve Qwen/Qwen3-8B
    ```

    ## Fix safety

    Upgrading is safe.

    ## Source

    https://github.com/vllm-project/vllm/issues/34497
    """

    id = "SD308"
    severity = Severity.WARNING
    versions = ">=0.11,<0.14"
    fields = ("speculative_config",)
    phase = "run"

    def check(self, ctx):
        if ctx.spec is None:
            return
        yield self.finding(
            f"vLLM {ctx.version} skips speculative decoding for any request with logprobs, presence/frequency/"
            "repetition penalty or min_p (vllm#34497): those requests get no speed-up.")
