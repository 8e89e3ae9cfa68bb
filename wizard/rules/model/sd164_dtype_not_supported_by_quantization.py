from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import quant_method, quant_without_checkpoint_config, resolve_quantization, user_quantization


@register
class DtypeNotSupportedByQuantization(Rule):
    """Model dtype not supported by the quantization method

    ## What it does

    Compares the dtype vLLM will run the target in (``--dtype``, else the checkpoint's, per
    platform) with the activation dtypes of the quantization method vLLM settles on (given, or
    the checkpoint's after vLLM's override chain): ``get_supported_act_dtypes()`` of the method's
    config class, generated per release (``checks.json``; methods whose dtypes depend on the
    checkpoint's own config are not judged).

    ## Why it matters

    vLLM refuses to build the config: "torch.float32 is not supported for quantization method
    fp8. Supported dtypes: [torch.bfloat16, torch.float16]".

    ## Example

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 --dtype float32
    ```

    ## Use instead

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 --dtype bfloat16
    ```

    ## Fix safety

    Safe: the method's first supported dtype (usually bfloat16) is what the quantized kernels
    compute in.

    ## Source

    vllm/config/vllm.py ``VllmConfig._get_quantization_config`` (0.28 L783, 0.32 L908;
    inventory R374); ``get_supported_act_dtypes`` of each quantization config class per release
    (``scripts/dump_vllm_checks.py``).
    """

    id = "SD164"
    severity = Severity.ERROR
    fields = ("dtype", "quantization")
    phase = "config"

    def check(self, ctx):
        target = ctx.target
        ckpt = target.quant_method if target is not None else None
        method, err = resolve_quantization(ckpt, user_quantization(ctx.config.quantization), ctx.version)
        if err or not method:
            return
        if not ckpt and target is not None and quant_without_checkpoint_config(method, ctx.version, target.json_files):
            return  # SD163: vLLM stops before the dtype check
        q = quant_method(method, ctx.version)
        acts = (q or {}).get("act_dtypes")
        dtype = ctx.model_dtype()
        if not acts or dtype is None or dtype not in ("float16", "bfloat16", "float32") or dtype in acts:
            return
        yield self.finding(
            f"the model runs in {dtype}, which quantization method {method} does not support in vLLM {ctx.version} "
            f"(supported: {', '.join(acts)}); vLLM rejects it while building its config.",
            fixes=[Patch(description=f"Use --dtype {acts[0]}", set={"dtype": acts[0]})])
