from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import as_int
from wizard.rules.optionvalues import option, option_path
from wizard.rules.registry import Rule, Severity, register

#: vllm/config/vllm.py:3555-3564 ``validate_nvfp4_kv_cache_with_mla`` (absent in 0.33)
NVFP4_DS_MLA_DCP_REFUSED_SINCE = "0.34"


@register
class Nvfp4KvWithMla(Rule):
    """nvfp4 KV cache is not supported with MLA

    ## What it does

    A KV dtype starting with ``nvfp4`` (but not ``nvfp4_ds_mla``) on a model
    with Multi-head Latent Attention (DeepSeek-V2/V3, Kimi-K2 ...), whether given explicitly or
    forced by the checkpoint under ``auto``. On 0.34 also ``nvfp4_ds_mla`` with decode context
    parallelism (``--decode-context-parallel-size`` > 1), which 0.34 refuses.

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

    vllm/config/vllm.py ``validate_nvfp4_kv_cache_with_mla`` (0.32 L3286, 0.33 L3422; 0.34 L3553,
    the DCP refusal "nvfp4_ds_mla KV cache is not supported with decode context parallelism" L3555-3564,
    new in 0.34);
    docs/vllm-rules.md R103 (E47, E48).
    """

    id = "SD032"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    phase = "config"

    def check(self, ctx):
        kv = (ctx.config.kv_cache_dtype or "auto") if ctx.target is None else ctx.target_kv_dtype()
        dcp = as_int(option(ctx, "decode_context_parallel_size", 1)) or 1
        # not in the generated tables (features.json keeps speculation checks only): by release
        if kv == "nvfp4_ds_mla" and dcp > 1 and ctx.version.at_least(NVFP4_DS_MLA_DCP_REFUSED_SINCE):
            yield self.finding(
                f"nvfp4_ds_mla KV cache is not supported with decode context parallelism: the chunked-context prefill "
                f"gather is not validated under DCP (--decode-context-parallel-size {dcp}; vLLM {ctx.version} refuses "
                "the config).",
                fields=["kv_cache_dtype", option_path(ctx, "decode_context_parallel_size")],
                fixes=[Patch(description="Use fp8_ds_mla", set={"kv_cache_dtype": "fp8_ds_mla"}),
                       Patch(description="Drop decode context parallelism",
                             unset=[option_path(ctx, "decode_context_parallel_size")])])
            return
        if ctx.target is None or not ctx.target.use_mla:
            return
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
