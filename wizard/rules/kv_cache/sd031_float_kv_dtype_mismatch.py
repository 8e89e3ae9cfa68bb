from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register


@register
class FloatKvDtypeMismatch(Rule):
    """Float KV-cache dtype differs from the model dtype

    ## What it does

    On vLLM >= 0.33, ``--kv-cache-dtype float16`` with a bfloat16 model (or
    bfloat16 with a float16 model, after ``--dtype``) is an error.

    ## Why it matters

    0.33 rejects the mismatch at config time; 0.32 accepted it and cast.

    ## Example

    ``--kv-cache-dtype float16`` on Llama-3.1 (bfloat16).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype float16
    ```

    ## Use instead

    ``auto`` (the model dtype) or a quantized dtype.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype auto
    ```

    ## Fix safety

    Safe: auto stores the KV cache in the model dtype, the same size.

    ## Source

    vllm/config/vllm.py ``VllmConfig._reject_mismatched_float_kv_cache`` (0.33 only);
    docs/vllm-rules.md R102 (E43, E77, E78).
    """

    id = "SD031"
    severity = Severity.ERROR
    versions = ">=0.33"
    fields = ("kv_cache_dtype",)
    phase = "config"

    def check(self, ctx):
        kv = ctx.config.kv_cache_dtype
        if kv not in ("float16", "bfloat16"):
            return
        md = ctx.model_dtype()
        if md is None or md == kv:
            return
        yield self.finding(
            f'kv_cache_dtype="{kv}" is incompatible with dtype="{md}" in vLLM {ctx.version}: '
            f"use auto or {md}.",
            fixes=[Patch(description="Use auto (the model dtype)", set={"kv_cache_dtype": "auto"}),
                   Patch(description=f"Use {md}", set={"kv_cache_dtype": md})],
        )
