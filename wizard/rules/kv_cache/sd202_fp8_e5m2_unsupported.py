from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import uses_draft_kv_cache


#: Quantization methods whose checkpoints carry fp8 KV scales (``BaseKVCacheMethod``), which
#: refuse ``fp8_e5m2`` KV (vllm/model_executor/layers/attention/attention.py, 0.32).
_FP8_CKPT_QUANT = frozenset({"fp8", "modelopt", "modelopt_fp4", "modelopt_mixed", "fbgemm_fp8", "ptpc_fp8", "quark", "mxfp8"})


@register
class Fp8E5m2Unsupported(Rule):
    """fp8_e5m2 KV cache with FLASH_ATTN or an fp8 checkpoint

    ## What it does

    Flags ``fp8_e5m2`` as the target's or the drafter's KV dtype when (a) that
    side's attention backend is pinned to ``FLASH_ATTN`` (which never supports e5m2), or (b)
    the target checkpoint is fp8-quantized (its quantization method registers KV scales).

    ## Why it matters

    (a) backend validation fails; (b) vLLM raises "fp8_e5m2 kv-cache is not
    supported with fp8 checkpoints" while building the attention layers.

    ## Example

    ``vllm serve RedHatAI/Llama-3.1-8B-Instruct-FP8 --kv-cache-dtype fp8_e5m2``

    ```sh
    vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8_e5m2 --attention-backend FLASH_ATTN
    ```

    ## Use instead

    Use ``fp8_e4m3`` (``fp8``) where the GPU has fp8 attention, or ``auto``.

    ```sh
    vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8_e4m3 --attention-backend FLASH_ATTN
    ```

    ## Fix safety

    ``auto`` is safe for outputs, costs KV capacity.

    ## Source

    vllm/model_executor/layers/attention/attention.py (0.32: "fp8_e5m2 kv-cache is not
    supported with fp8 checkpoints"); docs/vllm-rules.md R107; 1CatAI/1Cat-vLLM PR #54.
    """

    id = "SD202"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    phase = "load"

    def _fp8_ckpt(self, ctx) -> bool:
        q = (ctx.config.quantization or "").lower()
        t = ctx.target
        qm = (t.quant_method or "").lower() if t is not None else ""
        if q in _FP8_CKPT_QUANT or qm in _FP8_CKPT_QUANT:
            return True
        return qm == "compressed-tensors" and t is not None and bool(t.kv_cache_quant)

    def check(self, ctx):
        tkv = ctx.target_kv_dtype()
        backend = (ctx.config.attention_backend or "").upper()
        hw = ctx.hardware
        if tkv == "fp8_e5m2":
            alt = "fp8_e4m3" if hw is not None and ctx.view.device_kv.fp8 else "auto"
            problems = []
            if backend == "FLASH_ATTN":
                problems.append("the FLASH_ATTN backend never supports fp8_e5m2")
            if self._fp8_ckpt(ctx):
                problems.append("the checkpoint is fp8-quantized and vLLM raises 'fp8_e5m2 kv-cache is not supported with fp8 checkpoints'")
            if problems:
                fixes = [Patch(description=f"Use --kv-cache-dtype {alt}", set={"kv_cache_dtype": alt})]
                if alt != "auto":
                    fixes.append(Patch(description="Use --kv-cache-dtype auto", set={"kv_cache_dtype": "auto"}))
                yield self.finding("KV dtype fp8_e5m2: " + "; ".join(problems) + ".", fixes=fixes)
        spec = ctx.spec
        if spec is not None and uses_draft_kv_cache(ctx.method) and ctx.drafter_kv_dtype() == "fp8_e5m2" and tkv != "fp8_e5m2":
            if (spec.attention_backend or "").upper() == "FLASH_ATTN":
                yield self.finding(
                    "Drafter KV dtype fp8_e5m2 with speculative_config.attention_backend FLASH_ATTN, which never supports e5m2.",
                    fields=["speculative_config.kv_cache_dtype", "speculative_config.attention_backend"],
                    fixes=[Patch(description="Let the drafter inherit the target's KV dtype", unset=["speculative_config.kv_cache_dtype"])],
                )
