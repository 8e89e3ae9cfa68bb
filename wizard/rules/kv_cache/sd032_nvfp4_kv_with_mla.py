from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register


@register
class Nvfp4KvWithMla(Rule):
    """nvfp4 KV cache is not supported with MLA

    ## What it does

    A KV dtype starting with ``nvfp4`` (but not ``nvfp4_ds_mla``) on a model
    with Multi-head Latent Attention (DeepSeek-V2/V3, Kimi-K2 ...), whether given explicitly or
    forced by the checkpoint under ``auto``.

    ## Why it matters

    vLLM rejects it at config time: no MLA backend stores plain nvfp4.

    ## Example

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype nvfp4
    ```

    ## Use instead

    ``auto`` or ``fp8``; ``nvfp4_ds_mla`` with a sparse MLA backend.

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype nvfp4_ds_mla
    ```

    ## Fix safety

    auto keeps the full-precision cache (more memory, same outputs).

    ## Source

    vllm/config/vllm.py ``validate_nvfp4_kv_cache_with_mla`` (0.32 L3286, 0.33 L3422);
    docs/vllm-rules.md R103 (E47, E48).
    """

    id = "SD032"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    phase = "config"

    def check(self, ctx):
        if ctx.target is None or not ctx.target.use_mla:
            return
        kv = ctx.target_kv_dtype()
        if not kv.startswith("nvfp4") or kv.endswith("_ds_mla"):
            return
        explicit = (ctx.config.kv_cache_dtype or "auto") != "auto"
        fixes = [Patch(description="Use auto", set={"kv_cache_dtype": "auto"})] if explicit and not ctx.target.kv_cache_quant else []
        fixes.append(Patch(description="Use fp8", set={"kv_cache_dtype": "fp8"}))
        yield self.finding(
            f"KV-cache dtype {kv} on an MLA model: vLLM fails with 'nvfp4 KV cache is not supported with MLA'. "
            "Use auto, fp8, or nvfp4_ds_mla with a sparse MLA backend.",
            fixes=fixes,
        )
