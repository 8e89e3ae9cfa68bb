from __future__ import annotations

from wizard.config import Patch
from wizard.rules.optionvalues import option
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import online_shorthands, quant_without_checkpoint_config, quantization_methods, user_quantization


@register
class QuantizationNeedsCheckpointConfig(Rule):
    """--quantization needs a quantized checkpoint

    ## What it does

    For a checkpoint without ``quantization_config``, predicts whether the checked release can
    build the ``--quantization`` method's config anyway (``get_quant_config``): online methods
    (``fp8``, the ``fp8_per_tensor`` / ``mxfp4`` ... shorthands) and config classes that need
    no checkpoint data can; methods that read a quantization file (``quantize_config.json``,
    ``hf_quant_config.json`` ...: GPTQ, AWQ, ModelOpt, INC) need it in the model folder; classes
    that need the checkpoint's config (``quark``, ``compressed-tensors``, ``torchao``,
    ``online`` without ``--quantization-config``) cannot. Per-method facts are generated from each
    release's quantization classes (``checks.json``).

    ## Why it matters

    vLLM refuses to build the config: "Cannot find the config file for gptq", or
    "QuarkConfig.__init__() missing 1 required positional argument". ``--quantization`` does
    not quantize a checkpoint with those methods; it names how a checkpoint *was* quantized.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization gptq
    ```

    ## Use instead

    A GPTQ checkpoint of the model, or online FP8 quantization of this one.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization fp8
    ```

    ## Fix safety

    Unsetting serves the checkpoint unquantized (more memory than intended, never less
    accurate); online FP8 (offered second where the release has it) halves weight memory at
    some accuracy cost.

    ## Source

    vllm/model_executor/model_loader/weight_utils.py ``get_quant_config`` (called by
    vllm/config/vllm.py ``VllmConfig._get_quantization_config``, 0.28-0.33), per-method
    ``get_config_filenames`` / constructors probed by ``scripts/dump_vllm_checks.py``.
    """

    id = "SD163"
    severity = Severity.ERROR
    fields = ("quantization",)
    phase = "config"

    def check(self, ctx):
        user = user_quantization(ctx.config.quantization)
        target = ctx.target
        if not user or target is None or target.quant_method or not target.has_config:
            return
        if user not in quantization_methods(ctx.version):
            return
        hf = option(ctx, "hf_overrides")
        if isinstance(hf, dict) and ("quantization_config_file" in hf or "quantization_config_dict_json" in hf):
            return
        if option(ctx, "quantization_config") is not None:
            return
        why = quant_without_checkpoint_config(user, ctx.version, target.json_files)
        if why is None:
            return
        fixes = [Patch(description="Unset --quantization (serve the checkpoint unquantized)", unset=["quantization"])]
        if "fp8" in quantization_methods(ctx.version) and user != "fp8":
            fixes.append(Patch(description="Quantize online to FP8 instead (--quantization fp8)", set={"quantization": "fp8"}))
        online = ", ".join(online_shorthands(ctx.version))
        yield self.finding(
            f"--quantization {user} on {target.short_name()}, which is not quantized: vLLM {ctx.version} cannot build "
            f"the {user} config without the checkpoint's quantization data ({why}). Methods that quantize at load "
            f"time: fp8{', ' + online if online else ''}.",
            fixes=fixes)
