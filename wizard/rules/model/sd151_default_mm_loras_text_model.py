from __future__ import annotations

from wizard.rules.optionvalues import option_path, set_option_patch, user_options
from wizard.rules.registry import Rule, Severity, register


@register
class DefaultMmLorasTextModel(Rule):
    r"""``--default-mm-loras`` for a text-only target

    ## What it does

    A non-empty ``--default-mm-loras`` (any value Python reads as true: an object with a
    modality, a number) when the target is not a multimodal model (``ModelInfo.is_multimodal``).
    An empty ``{}`` or ``[]`` is accepted, as vLLM accepts it.

    ## Why it matters

    vLLM raises while building the config: "Default modality-specific LoRA(s) were provided for
    a non multimodal model".

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora --default-mm-loras '{"audio": "/loras/speech"}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora
    ```

    ## Fix safety

    Safe: a text-only model never receives the modalities the defaults are for.

    ## Source

    vllm/engine/arg_utils.py ``EngineArgs.create_engine_config`` (read in 0.32); docs/vllm-rules.md R501 (0.28-0.33); found
    by the schema
    corpus (``benchmarks/conformance_schema.py``, 0.32).
    """

    id = "SD151"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.default_mm_loras",)
    phase = "config"

    def check(self, ctx):
        # the value as EngineArgs holds it (not coerced to the field type: vLLM tests its truth
        # before LoRAConfig validates it, so ``3`` is refused here too)
        v = user_options(ctx).get("default_mm_loras")
        if not v or isinstance(v, str) or ctx.target is None or ctx.target.is_multimodal:
            return
        yield self.finding("Default modality-specific LoRA(s) were provided for a non multimodal model.",
                           fields=[option_path(ctx, "default_mm_loras")],
                           fixes=[set_option_patch(ctx, "default_mm_loras", None, "Remove --default-mm-loras")])
