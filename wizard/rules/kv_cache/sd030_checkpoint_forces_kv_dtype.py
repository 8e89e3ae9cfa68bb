from __future__ import annotations

from wizard.rules.registry import Rule, Severity, register


@register
class CheckpointForcesKvDtype(Rule):
    """Checkpoint forces a quantized KV cache under --kv-cache-dtype auto

    ## What it does

    Informational: with ``auto`` (or unset) and a ModelOpt checkpoint that
    declares ``kv_cache_quant_algo`` / ``kv_cache_scheme``, vLLM stores the KV cache (and the
    drafter's, unless overridden) in fp8_e4m3 or nvfp4.

    ## Why it matters

    The KV cache is quantized although the command never says so; drafters
    that cannot use fp8 (non-causal DFlash/DSpark, some GPUs) inherit it.

    ## Example

    Assuming ``auto`` means the model dtype for a ModelOpt FP8 checkpoint.

    ```sh
    vllm serve ./tiny-modelopt-fp8
    ```

    ## Use instead

    Set ``--kv-cache-dtype`` explicitly so the command says what runs.

    ```sh
    vllm serve ./tiny-modelopt-fp8 --kv-cache-dtype fp8_e4m3
    ```

    ## Fix safety

    Informational; no fix.

    ## Source

    vllm/utils/torch_utils.py ``resolve_kv_cache_dtype_string`` (0.32, 0.33); R101 (E50).
    """

    id = "SD030"
    severity = Severity.INFO
    fields = ("kv_cache_dtype",)
    phase = "config"

    def check(self, ctx):
        if (ctx.config.kv_cache_dtype or "auto") != "auto" or ctx.target is None or not ctx.target.kv_cache_quant:
            return
        if ctx.target.quant_method and not str(ctx.target.quant_method).startswith("modelopt"):
            return
        eff = ctx.target_kv_dtype()
        yield self.finding(
            f"--kv-cache-dtype is auto, but the checkpoint declares a {ctx.target.kv_cache_quant} KV cache: "
            f"vLLM will use {eff} for the target (and the drafter unless speculative_config.kv_cache_dtype is set).",
        )
