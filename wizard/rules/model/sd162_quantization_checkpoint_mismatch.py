from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import quantization_methods, resolve_quantization, user_quantization


@register
class QuantizationCheckpointMismatch(Rule):
    """--quantization does not match the quantized checkpoint

    ## What it does

    For a checkpoint whose config.json carries a ``quantization_config``, predicts what the
    checked release decides for the given ``--quantization``: vLLM first lets each method's
    ``override_quantization_method`` claim the checkpoint (``gptq`` checkpoints run as
    ``gptq_marlin`` where supported, gpt-oss ``mxfp4`` as ``gpt_oss_mxfp4`` whatever is asked,
    ModelOpt checkpoints stay ModelOpt), then compares. Any other refusal of that step is reported
    too, with vLLM's own message (``--quantization humming`` on a gpt-oss checkpoint: "For gpt-oss
    model, use '--moe-backend humming' instead of '--quantization humming'"). The decisions are
    generated per release by running vLLM's own ``_verify_quantization`` on real checkpoint configs
    (``checks.json``).

    ## Why it matters

    vLLM refuses to build the config: "Quantization method specified in the model config (fp8)
    does not match the quantization method specified in the `quantization` argument
    (fp8_per_block)". An online-quantization flag cannot re-quantize an already quantized
    checkpoint.

    ## Example

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 --quantization fp8_per_block
    ```

    ## Use instead

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3
    ```

    ## Fix safety

    Safe: without ``--quantization`` vLLM reads the checkpoint's own method.

    ## Source

    vllm/config/model.py ``ModelConfig._verify_quantization`` (0.28 L1273, 0.32 L1444, 0.33
    L1457; inventory R209), decisions probed per release by ``scripts/dump_vllm_checks.py``
    (``checks.json`` ``quantization.checkpoints``; checkpoints of a ``quant_method`` not probed
    are not judged).
    """

    id = "SD162"
    severity = Severity.ERROR
    fields = ("quantization",)
    phase = "config"

    def check(self, ctx):
        user = user_quantization(ctx.config.quantization)
        target = ctx.target
        if not user or target is None or not target.quant_method or user not in quantization_methods(ctx.version):
            return
        method, err = resolve_quantization(target.quant_method, user, ctx.version)
        if not err:
            return
        if "does not match" in err:
            why = (f"--quantization {user} does not match {target.short_name()}'s own quantization ({target.quant_method}); "
                   f"vLLM {ctx.version} rejects it ('Quantization method specified in the model config ... does not match').")
        else:  # a method's override_quantization_method refuses this checkpoint (humming on gpt-oss ...)
            why = (f"--quantization {user} on {target.short_name()} (checkpoint quantized with {target.quant_method}): "
                   f"vLLM {ctx.version} rejects it: '{err.split(': ', 1)[-1]}'")
        yield self.finding(
            why, fixes=[Patch(description=f"Unset --quantization (vLLM reads the checkpoint's {target.quant_method})",
                              unset=["quantization"])])
