from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import MLA_ONLY_KV
from wizard.rules.registry import Rule, Severity, register


@register
class MlaOnlyKvOnDenseTarget(Rule):
    """MLA-only KV layout on a non-MLA target

    ## What it does

    Flags the sparse-MLA KV layouts when the target model does not use MLA
    (``ModelInfo.use_mla`` false).

    ## Why it matters

    vLLM accepts it at config time (R104) and every attention backend
    refuses it at load: "No valid attention backend found".

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8_ds_mla
    ```

    ## Use instead

    Use ``fp8`` (or ``auto``) for dense models; the ``_ds_mla`` layouts are
    for DeepSeek-V3.2-style sparse MLA.

    ```sh
    vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8
    ```

    ## Fix safety

    ``auto`` is safe for outputs (more KV memory); ``fp8`` keeps the memory.

    ## Source

    docs/vllm-rules.md R104, §7 (MLA backends), E49.
    """

    id = "SD203"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    phase = "load"

    def check(self, ctx):
        tkv = ctx.target_kv_dtype()
        if tkv not in MLA_ONLY_KV or ctx.target is None or ctx.target.use_mla:
            return
        fixes = [Patch(description="Use --kv-cache-dtype auto", set={"kv_cache_dtype": "auto"})]
        if ctx.hardware is None or ctx.view.device_kv.fp8:
            fixes.append(Patch(description="Use --kv-cache-dtype fp8 (dense fp8 KV)", set={"kv_cache_dtype": "fp8"}))
        yield self.finding(
            f"KV dtype '{tkv}' is a sparse-MLA layout but {ctx.target.short_name()} "
            f"({', '.join(ctx.target.architectures) or ctx.target.model_type}) has no MLA attention: no backend accepts it.",
            fixes=fixes,
        )
