from __future__ import annotations

from wizard.config import Patch
from wizard.fixes import ngram_fallback
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import use_eagle


@register
class FastPrefillWithEagle(Rule):
    r"""kv_sharing_fast_prefill is incompatible with EAGLE-family drafters

    ## What it does

    Flags `kv_sharing_fast_prefill` together with any method that
    `SpeculativeConfig.use_eagle()` covers: eagle, eagle3, mtp (and every MTP alias, which
    vLLM rewrites to mtp), dflash and dspark.

    ## Why it matters

    Fast prefill skips computing prompt-token logits/hidden states for
    layers that share KV; hidden-state drafters need exactly those, so they would draft from
    wrong inputs. vLLM refuses at config time.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-sharing-fast-prefill \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Use instead

    Drop the flag, or use a method that does not read hidden states.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Dropping the flag is safe (only prefill speed changes); switching
    method changes acceptance.

    ## Source

    vllm/config/vllm.py `VllmConfig.__post_init__` (0.32 L1946-1960, 0.33 L2018-2034):
    "Fast prefill optimization for KV sharing is not compatible with EAGLE". Public report:
    vllm-project/vllm PR #24350.
    """

    id = "SD001"
    severity = Severity.ERROR
    versions = ">=0.10"
    fields = ("kv_sharing_fast_prefill", "speculative_config.method")
    topic = "kv_sharing_fast_prefill"
    phase = "config"

    def check(self, ctx):
        if not ctx.config.kv_sharing_fast_prefill or ctx.spec is None:
            return
        method = ctx.method
        if not use_eagle(method):
            return
        shown = ctx.spec.method or method
        fixes = [Patch(description="Drop --kv-sharing-fast-prefill", unset=["kv_sharing_fast_prefill"])]
        k = ctx.k or 3
        fixes.append(
            ngram_fallback(k, "Keep fast prefill and use n-gram speculation instead")
        )
        yield self.finding(
            f"--kv-sharing-fast-prefill cannot be used with method '{shown}' (resolved: {method}): "
            "fast prefill gives wrong logits for prompt tokens that hidden-state drafters need. "
            "vLLM raises 'Fast prefill optimization for KV sharing is not compatible with EAGLE'.",
            fixes=fixes,
        )
