from __future__ import annotations

from wizard.rules.optionvalues import option, option_path, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register

#: StructuredOutputsConfig key -> the backends that implement it (0.32)
_KEY_BACKENDS = {"disable_any_whitespace": ("xgrammar", "guidance"),
                 "disable_additional_properties": ("guidance",)}


@register
class StructuredOutputsBackendKeys(Rule):
    r"""A structured-outputs key the chosen backend does not implement

    ## What it does

    ``--structured-outputs-config`` keys that only some backends implement, judged against
    its ``backend`` (default ``auto``, which is none of them): ``disable_any_whitespace`` needs
    ``xgrammar`` or ``guidance``; ``disable_additional_properties`` needs ``guidance``.

    ## Why it matters

    ``StructuredOutputsConfig``'s validator refuses it while the options are parsed:
    "disable_any_whitespace is only supported for xgrammar and guidance backends.",
    "disable_additional_properties is only supported for the guidance backend.".

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --structured-outputs-config '{"disable_any_whitespace": true}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --structured-outputs-config '{"backend": "xgrammar", "disable_any_whitespace": true}'
    ```

    ## Fix safety

    Removing the key keeps the backend's default output; naming the backend pins it (``auto``
    would otherwise choose per request).

    ## Source

    vllm/config/structured_outputs.py ``StructuredOutputsConfig._validate_structured_output_config``
    (read in 0.32); docs/vllm-rules.md R361, R362 (0.28-0.33); found by the schema corpus (``benchmarks/conformance_schema.py``, 0.32).
    """

    id = "SD174"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.structured_outputs_config",)
    phase = "parse"

    def check(self, ctx):
        so = option(ctx, "structured_outputs_config")
        if not isinstance(so, dict):
            return
        backend = so.get("backend", "auto")
        for key, backends in _KEY_BACKENDS.items():
            if truthy(so.get(key)) and backend not in backends:
                rest = {k: v for k, v in so.items() if k != key}
                names = " and ".join(backends) + (" backends" if len(backends) > 1 else " backend")
                yield self.finding(
                    f"{key} is only supported for the {names} (structured outputs backend here: {backend!r}).",
                    fields=[option_path(ctx, "structured_outputs_config")],
                    fixes=[set_option_patch(ctx, "structured_outputs_config", {**so, "backend": backends[0]},
                                            f"Use the {backends[0]} backend"),
                           set_option_patch(ctx, "structured_outputs_config", rest or None, f"Remove {key}")])
