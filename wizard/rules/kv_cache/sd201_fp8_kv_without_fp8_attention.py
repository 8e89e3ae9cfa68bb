from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import explicit_model_kv, is_fp8_kv
from wizard.rules.registry import Rule, Severity, register


@register
class Fp8KvWithoutFp8Attention(Rule):
    """fp8 KV cache on a GPU without fp8 attention

    ## What it does

    Flags a target KV dtype in the fp8 family (set with ``--kv-cache-dtype``,
    or forced by the checkpoint's ``kv_cache_scheme``/``kv_cache_quant_algo`` under ``auto``)
    when ``ctx.hardware`` says the GPU has no fp8 attention (``ctx.view.device_kv.fp8`` false, e.g.
    V100). Quiet without hardware.

    ## Why it matters

    vLLM accepts the dtype at config time and fails at attention-backend
    selection ("kv_cache_dtype not supported" for every backend) or in the kernel.

    ## Example

    On 2 x V100:

    ```sh
    vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8
    ```

    ## Use instead

    Leave the KV cache at ``auto`` (the model dtype) on such GPUs; when the
    checkpoint forces fp8 under auto, spell the model dtype (``--kv-cache-dtype bfloat16``).

    ```sh
    vllm serve Qwen/Qwen3-8B
    ```

    ## Fix safety

    Unsafe for capacity: the KV cache doubles in bytes per token.

    ## Source

    docs/vllm-rules.md R104, R107, §7; 1CatAI/1Cat-vLLM PR #54.
    """

    id = "SD201"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    phase = "load"

    def check(self, ctx):
        hw = ctx.hardware
        if hw is None or hw.vendor == "cpu":
            return
        tkv = ctx.target_kv_dtype()
        if not is_fp8_kv(tkv) or ctx.view.device_kv.fp8:  # the device's backends only for an fp8 KV cache
            return
        forced = (ctx.config.kv_cache_dtype or "auto") == "auto"
        val = explicit_model_kv(ctx) if forced else "auto"
        how = "forced by the checkpoint's KV quantization under --kv-cache-dtype auto" if forced else "set with --kv-cache-dtype"
        yield self.finding(
            f"KV dtype '{tkv}' ({how}) needs an fp8 attention backend, and {hw.name}"
            f"{f' (SM {hw.sm})' if hw.sm else ''} has none: attention-backend selection fails at load.",
            fixes=[Patch(description=f"Use --kv-cache-dtype {val} (model-dtype KV cache)", set={"kv_cache_dtype": val})],
        )
