from __future__ import annotations

from wizard.config import Patch
from wizard.rules.optionvalues import option, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import deprecated_quantization, resolve_quantization, user_quantization


@register
class DeprecatedQuantization(Rule):
    """Deprecated quantization method without --allow-deprecated-quantization

    ## What it does

    Reports a quantization method the checked release lists as deprecated
    (``DEPRECATED_QUANTIZATION_METHODS``, per release in ``checks.json``; e.g. ``fbgemm_fp8``,
    ``fp_quant``), given with ``--quantization`` or read from the checkpoint, when
    ``--allow-deprecated-quantization`` is not set.

    ## Why it matters

    vLLM refuses to build the config: "The quantization method fp_quant is deprecated and will
    be removed in future versions of vLLM. To bypass, set `--allow-deprecated-quantization`."

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization fp_quant
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization fp_quant --allow-deprecated-quantization
    ```

    ## Fix safety

    ``--allow-deprecated-quantization`` keeps the method for this release only; the next release
    may drop it. Moving to a supported method is the lasting fix.

    ## Source

    vllm/config/model.py ``ModelConfig._verify_quantization`` (0.28 L1296, 0.32 L1467, 0.33
    L1480; inventory R211).
    """

    id = "SD161"
    severity = Severity.ERROR
    fields = ("quantization",)
    phase = "config"

    def check(self, ctx):
        ckpt = ctx.target.quant_method if ctx.target is not None else None
        method, err = resolve_quantization(ckpt, user_quantization(ctx.config.quantization), ctx.version)
        if err or method not in deprecated_quantization(ctx.version):
            return
        if truthy(option(ctx, "allow_deprecated_quantization", False)):
            return
        fixes = [set_option_patch(ctx, "allow_deprecated_quantization", True, "Add --allow-deprecated-quantization")]
        if ctx.config.quantization:
            fixes.append(Patch(description="Unset --quantization", unset=["quantization"]))
        yield self.finding(
            f"quantization method {method} is deprecated in vLLM {ctx.version}; vLLM refuses it unless "
            "--allow-deprecated-quantization is given.",
            fixes=fixes)
