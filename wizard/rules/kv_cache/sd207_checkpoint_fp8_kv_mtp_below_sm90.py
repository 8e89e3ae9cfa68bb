from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import explicit_model_kv
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP


@register
class CheckpointFp8KvMtpBelowSm90(Rule):
    r"""Checkpoint forces fp8 KV; MTP on a GPU below SM 9.0

    ## What it does

    When ``--kv-cache-dtype`` is ``auto`` and the target checkpoint forces fp8
    KV (``kv_cache_scheme``), flags MTP on a GPU with compute capability below 9.0 (e.g. L4,
    SM 8.9). Quiet without hardware.

    ## Why it matters

    The user asked for auto and got fp8 silently; MTP then ran fp8 attention
    kernels that only exist for SM90+: CUDA illegal memory access.

    ## Example

    NuExtract3-FP8 (compressed-tensors, kv_cache_scheme) with MTP on an L4.

    ```sh
    vllm serve ./tiny-dsv3-mtp1-ct-fp8kv \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Use instead

    Spell the KV dtype (``--kv-cache-dtype bfloat16``), or serve the BF16
    checkpoint with ``--quantization fp8``, or use a build with PR #45038.

    ```sh
    vllm serve ./tiny-dsv3-mtp1-ct-fp8kv --kv-cache-dtype bfloat16 \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Fix safety

    Costs KV capacity.

    ## Source

    https://github.com/vllm-project/vllm/issues/44879; docs/vllm-rules.md R101.
    """

    id = "SD207"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    phase = "run"

    def check(self, ctx):
        hw = ctx.hardware
        t = ctx.target
        if ctx.spec is None or ctx.method != MTP or t is None or not t.kv_cache_quant:
            return
        if (ctx.config.kv_cache_dtype or "auto") != "auto" or hw is None or hw.vendor != "nvidia":
            return
        if hw.sm is None or hw.sm >= 90:
            return
        val = explicit_model_kv(ctx)
        yield self.finding(
            f"{t.short_name()} declares KV-cache quantization, so --kv-cache-dtype auto becomes "
            f"'{ctx.target_kv_dtype()}'; MTP's fp8 attention path needs SM 9.0+, and {hw.name} is SM {hw.sm}: "
            "illegal memory access at run time (vllm#44879).",
            fixes=[Patch(description=f"Spell the KV dtype: --kv-cache-dtype {val}", set={"kv_cache_dtype": val})],
        )
