from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import closest
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import quantization_methods, user_quantization


@register
class UnknownQuantization(Rule):
    """Unknown quantization method

    ## What it does

    Checks ``--quantization`` against the methods the checked release registers
    (``QUANTIZATION_METHODS``, generated per release into ``checks.json``). Names are
    case-sensitive (``FP8`` is not ``fp8``) and change between releases (``online`` and the
    ``fp8_per_*`` shorthands are new, ``bitsandbytes`` is not a ``--quantization`` value).

    ## Why it matters

    vLLM refuses to build the config: "Unknown quantization method: nope. Must be one of
    ['awq', 'auto_awq', 'fp8', ...]."

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization nope
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct
    ```

    ## Fix safety

    Unsetting runs the checkpoint as it is quantized (or unquantized); the nearest spelling is
    offered second when there is one (``FP8`` -> ``fp8``), which changes memory and accuracy.

    ## Source

    vllm/config/model.py ``ModelConfig._verify_quantization`` (0.28 L1282, 0.32 L1453, 0.33
    L1466; inventory R210); ``QUANTIZATION_METHODS`` of vllm/model_executor/layers/quantization
    per release (``scripts/dump_vllm_checks.py``).
    """

    id = "SD160"
    severity = Severity.ERROR
    fields = ("quantization",)
    phase = "config"

    def check(self, ctx):
        q = user_quantization(ctx.config.invalid_values.get("quantization", ctx.config.quantization))
        methods = quantization_methods(ctx.version)
        if q is None or not methods or q in methods:
            return
        fixes = [Patch(description="Unset --quantization (vLLM reads the checkpoint's own)", unset=["quantization"])]
        near = closest(q, methods)
        if near:
            fixes.append(Patch(description=f"Use --quantization {near}", set={"quantization": near}))
        yield self.finding(
            f"quantization={q!r} is not a quantization method of vLLM {ctx.version}; vLLM rejects it ('Unknown "
            f"quantization method'). Known: {', '.join(methods)}.",
            fixes=fixes)
