from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import is_fp8_kv
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import is_eagle_head


@register
class Fp8KvEagleOldVersions(Rule):
    r"""fp8 KV with EAGLE on vLLM < 0.11

    ## What it does

    Flags a target fp8 KV cache with eagle/eagle3 on versions before the
    drafter KV dtype was aligned with the target's (vllm-project/vllm PR #24505).

    ## Why it matters

    The server starts, then requests fail with "query and key must have the
    same dtype" inside flash-attention.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp8 \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Use instead

    Upgrade, or keep KV at auto with EAGLE on those versions.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    ``auto`` costs KV capacity.

    ## Source

    https://github.com/vllm-project/vllm/issues/21177 (0.9.2), PR #24505.
    """

    id = "SD208"
    severity = Severity.ERROR
    versions = "<0.11"
    fields = ("kv_cache_dtype",)
    phase = "run"

    def check(self, ctx):
        if ctx.spec is None or not is_eagle_head(ctx.method):
            return
        kv = ctx.target_kv_dtype()
        if not is_fp8_kv(kv):
            return
        yield self.finding(
            f"KV dtype '{kv}' with method {ctx.method} on vLLM {ctx.version}: requests fail with "
            "'query and key must have the same dtype' (fixed by PR #24505); upgrade or use auto KV.",
            fixes=[Patch(description="Use --kv-cache-dtype auto", set={"kv_cache_dtype": "auto"})],
        )
