from __future__ import annotations

from wizard.config import Patch
from wizard.fixes import ngram_fallback
from wizard.mechanisms import apply as A
from wizard.rules.registry import Rule, Severity, register

#: verdict messages other rules own: draft_lm_head_quantization (SD053) and Model Runner V1 (SD092)
_OWNED_ELSEWHERE = ("lm_head", "Model Runner V1")


@register
class QuantizedDrafterFails(Rule):
    r"""This release cannot load or run the drafter with its quantization

    ## What it does

    Asks ``wizard.mechanisms.quantized_drafter`` which quantization the drafter loads with (its own
    ``quantization_config``, ``speculative_config.quantization``, or the target's for drafters that
    inherit it) and what this release does with it: an explicit ``speculative_config.quantization``
    that contradicts the checkpoint, a method below the GPU's compute capability, or a drafter
    code path that ignores the layer's quantization (DFlash's fused context-KV precompute on
    0.28-0.30 slices ``qkv_proj.weight`` and calls ``F.linear`` directly).

    ## Why it matters

    The target loads first (minutes), then engine start-up or the first profiling run fails with
    a dtype or shape error that does not name the drafter's quantization.

    ## Example

    An FP8 (compressed-tensors) DFlash drafter on 0.30:

    ```sh
    vllm serve Qwen/Qwen3-8B \
      --speculative-config '{"method":"dflash","model":"./sd780-dflash-fp8","num_speculative_tokens":8}'
    ```

    ## Use instead

    The BF16 drafter (or a release with the fix, 0.31+):

    ```sh
    vllm serve Qwen/Qwen3-8B \
      --speculative-config '{"method":"dflash","model":"./sd780-dflash-bf16","num_speculative_tokens":8}'
    ```

    ## Fix safety

    Needs another drafter checkpoint or release. The fixes offered drop a
    ``speculative_config.quantization`` that contradicts the checkpoint, or fall back to n-gram
    speculation (no drafter; lower acceptance).

    ## Source

    vllm/model_executor/models/qwen3_dflash.py (fused context KV, quant-aware from 0.31);
    vllm/config/model.py ``_verify_quantization``; quantization ``get_min_capability``;
    wizard/data/vllm/<X.Y>/features.json ``drafter_quantization`` and proposers.json
    ``quantization_min_capability`` (0.28-0.33); features.json ``drafter_layer_quant`` (the drafter
    module builds its layers with ``quant_config=None``: 0.24's gemma4_mtp.py, vLLM PR #46426;
    0.20-0.33).
    """

    id = "SD780"
    severity = Severity.ERROR
    fields = ("speculative_config.model", "speculative_config.quantization")
    phase = "load"

    def check(self, ctx):
        v = A.quantization(ctx)
        if v is None:
            return
        errs = [e for e in v.errors if not any(x in e for x in _OWNED_ELSEWHERE)]
        if not errs:
            return
        fixes = []
        if ctx.spec is not None and ctx.spec.quantization:
            fixes.append(Patch(description="Drop speculative_config.quantization (use the checkpoint's own)",
                               unset=["speculative_config.quantization"]))
        fixes.append(ngram_fallback(ctx.k or 3, "Use n-gram speculation until a drafter this release loads is at hand"))
        yield self.finding(f"The {ctx.method} drafter ({v.quantization or 'unquantized'}) on vLLM {ctx.version}: "
                           + "; ".join(errs) + ".", fixes=fixes)
