from __future__ import annotations

from wizard.rules.optionvalues import option, set_option_patch
from wizard.rules.registry import Rule, Severity, register


@register
class DetailedTracesWithoutEndpoint(Rule):
    r"""--collect-detailed-traces without --otlp-traces-endpoint

    ## What it does

    Flags ``--collect-detailed-traces`` when no ``--otlp-traces-endpoint`` is given.

    ## Why it matters

    ``ObservabilityConfig``'s validator raises "collect_detailed_traces requires
    `--otlp-traces-endpoint` to be set.": the server does not start.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --collect-detailed-traces all
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --collect-detailed-traces all --otlp-traces-endpoint http://localhost:4317
    ```

    ## Fix safety

    Removing ``--collect-detailed-traces`` is safe (no traces could be exported without an
    endpoint); the endpoint itself is the user's to give.

    ## Source

    vllm/config/observability.py ``ObservabilityConfig._validate_tracing_config``
    (0.28-0.33); conformance ``benchmarks/conformance_schema.py`` on 0.32.
    """

    id = "SD172"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.collect_detailed_traces", "extra_args.otlp_traces_endpoint")
    phase = "config"

    def check(self, ctx):
        traces = option(ctx, "collect_detailed_traces")
        if not traces or option(ctx, "otlp_traces_endpoint"):
            return
        yield self.finding(
            "collect_detailed_traces requires `--otlp-traces-endpoint` to be set.",
            fixes=[set_option_patch(ctx, "collect_detailed_traces", None, "Remove --collect-detailed-traces")])
