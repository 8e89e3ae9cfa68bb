from __future__ import annotations

from wizard.rules.registry import Rule, Severity, register


@register
class StructuredOutputsOldVersions(Rule):
    r"""Structured-output requests with speculation on vLLM < 0.12

    ## What it does

    Warns on any speculative config for versions before 0.12: guided/JSON
    requests could crash the server or fail with grammar errors when drafted tokens violated
    the grammar (0.8.2 guidance parser errors; 0.11.0 crash with 30 concurrent json_object
    requests).

    ## Why it matters

    Spec decode + grammar-constrained requests were still maturing: parser errors and crashes.

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-8B \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'
    ```

    ## Use instead

    Upgrade; or load-test structured-output traffic with speculation and
    disable it for constrained requests.

    ```sh
    vllm serve Qwen/Qwen3-8B
    ```

    ## Fix safety

    Upgrading is safe.

    ## Source

    https://github.com/vllm-project/vllm/issues/15554, https://github.com/vllm-project/vllm/issues/27969
    """

    id = "SD304"
    severity = Severity.WARNING
    versions = "<0.12"
    fields = ("speculative_config",)
    phase = "run"

    def check(self, ctx):
        if ctx.spec is None:
            return
        yield self.finding(
            f"vLLM {ctx.version}: structured-output (guided JSON, json_object) requests with speculative decoding "
            "were reported to fail with grammar errors or crash the server under concurrency (vllm#15554, #27969). "
            "Upgrade or load-test constrained traffic before production.")
