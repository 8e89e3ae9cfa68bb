from __future__ import annotations

from wizard.config import Patch
from wizard.fixes import ngram_fallback
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import is_mtp, use_eagle


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
    method changes acceptance. The n-gram fix is offered only for a target whose layers share
    KV (elsewhere the flag does nothing worth a method) and never in place of an MTP method
    (the target's own draft layers).

    ## Source

    vllm/config/vllm.py `VllmConfig.__post_init__` (0.32 L1946-1960, 0.33 L2018-2034):
    "Fast prefill optimization for KV sharing is not compatible with EAGLE". Public report:
    vllm-project/vllm PR #24350.
    """

    id = "SD001"
    severity = Severity.ERROR
    versions = ">=0.10"
    fields = ("kv_sharing_fast_prefill", "speculative_config.method")
    phase = "config"

    def check(self, ctx):
        if not ctx.config.kv_sharing_fast_prefill or ctx.spec is None:
            return
        method = ctx.method
        if not use_eagle(method):
            return
        shown = ctx.spec.method or method
        fixes = [Patch(description="Drop --kv-sharing-fast-prefill", unset=["kv_sharing_fast_prefill"])]
        # trading the method for n-gram keeps the flag only where it does something (a target
        # whose layers share KV), and never at the price of the target's own MTP layers
        shares_kv = ctx.target is not None and bool(ctx.target.num_kv_shared_layers)
        if shares_kv and not is_mtp(method):
            fixes.append(ngram_fallback(ctx.k or 3, "Keep fast prefill and use n-gram speculation instead"))
        yield self.finding(
            f"--kv-sharing-fast-prefill cannot be used with method '{shown}' (resolved: {method}): "
            "fast prefill gives wrong logits for prompt tokens that hidden-state drafters need. "
            "vLLM raises 'Fast prefill optimization for KV sharing is not compatible with EAGLE'.",
            fixes=fixes,
        )
