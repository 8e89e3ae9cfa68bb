from __future__ import annotations

from wizard.mechanisms import apply as A
from wizard.rules.registry import Rule, Severity, register


@register
class DrafterQuantizationReplaced(Rule):
    r"""vLLM reads the drafter's weights under another quantization than its checkpoint's

    ## What it does

    Reports the warnings of ``wizard.mechanisms.quantized_drafter``: drafters whose quantization
    vLLM replaces by the target's (DeepSeek-V4-style DSpark drafters: ``SpeculativeConfig`` sets
    ``draft_model_config.quantization`` to the target's, 0.28-0.33) while their own checkpoint
    says otherwise, and drafters that ship their own ``lm_head`` next to
    ``draft_lm_head_quantization``.

    ## Why it matters

    The drafter loads, but its weights are interpreted under the wrong scheme: load errors on some
    tensors or, worse, a drafter that proposes garbage -- acceptance collapses to about one token
    per step and speculation only costs time. Nothing is logged.

    ## Example

    An MXFP4 DSpark drafter next to an NVFP4 (ModelOpt) DeepSeek-V4 target:

    ```sh
    vllm serve ./sd781-dsv4-nvfp4 -tp 8 \
      --speculative-config '{"method":"dspark","model":"./sd781-dspark-mxfp4","num_speculative_tokens":7}'
    ```

    ## Use instead

    The drafter quantized like the target (or the FP8 target with its FP8 drafter):

    ```sh
    vllm serve ./sd781-dsv4-nvfp4 -tp 8 \
      --speculative-config '{"method":"dspark","model":"./sd781-dspark-nvfp4","num_speculative_tokens":7}'
    ```

    ## Fix safety

    Needs another checkpoint pairing; no option change makes this release honour the drafter's own
    quantization.

    ## Source

    vllm/config/speculative.py (DSpark: ``draft_model_config.quantization =
    target_model_config.quantization``, 0.28-0.33); wizard/data/vllm/<X.Y>/features.json
    ``drafter_quantization``; vLLM PR #49133. features.json ``drafter_layer_quant`` (a drafter
    module that reads ``vllm_config.quant_config``, the target's: 0.25's DeepSeek-V4 DSpark).
    """

    id = "SD781"
    severity = Severity.WARNING
    fields = ("speculative_config.model", "speculative_config.quantization", "quantization")
    phase = "run"

    def check(self, ctx):
        v = A.quantization(ctx)
        if v is None or not v.warnings:
            return
        yield self.finding(f"The {ctx.method} drafter on vLLM {ctx.version}: " + "; ".join(v.warnings) + ".")
