from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register


@register
class LoraWithSpeculation(Rule):
    r"""LoRA with speculative decoding on old vLLM

    ## What it does

    ``--enable-lora`` with any speculative config: error before 0.8 (V0 spec
    decode never supported LoRA: shape errors), warning before 0.11 (V1 crashed with concurrent
    requests until the per-token LoRA mapping of PR #21068).

    ## Why it matters

    Old vLLM mis-mapped LoRA adapters over draft tokens: shape errors or crashes under concurrency.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'
    ```

    ## Use instead

    Upgrade, or serve LoRA traffic without speculation.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora
    ```

    ## Fix safety

    Dropping speculation costs speed only.

    ## Source

    https://github.com/vllm-project/vllm/issues/4872 (0.4.2),
    https://github.com/vllm-project/vllm/issues/20284, PR #21068.
    """

    id = "SD302"
    severity = Severity.WARNING
    versions = "<0.11"
    fields = ("enable_lora", "speculative_config")
    phase = "run"

    def check(self, ctx):
        if ctx.spec is None or not ctx.config.enable_lora:
            return
        fixes = [Patch(description="Serve LoRA without speculative decoding", unset=["speculative_config"])]
        if not ctx.version.at_least("0.8"):
            yield self.finding(f"LoRA with speculative decoding is not supported by vLLM {ctx.version} (V0): tensor "
                               "shape errors during generation (vllm#4872).", severity=Severity.ERROR, fixes=fixes)
        else:
            yield self.finding(f"LoRA with speculative decoding on vLLM {ctx.version}: crashes once requests run "
                               "concurrently (vllm#20284) until PR #21068; upgrade or disable speculation for LoRA.",
                               fixes=fixes)
