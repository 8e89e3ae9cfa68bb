from __future__ import annotations

from wizard.rules.optionvalues import option, option_path, set_option_patch
from wizard.rules.registry import Rule, Severity, register


@register
class PerRequestMetricsWithoutSpec(Rule):
    r"""Per-request spec-decode metrics need speculative decoding

    ## What it does

    Flags the option (kept in ``extra_args``) when it is not ``none`` and no
    ``--speculative-config`` is given.

    ## Why it matters

    vLLM raises ``--per-request-spec-decode-metrics requires speculative
    decoding to be enabled`` at config time.

    ## Example

    Leaving the metrics flag in a launcher after turning speculation off.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --per-request-spec-decode-metrics summary
    ```

    ## Use instead

    Remove it, or enable speculation.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --per-request-spec-decode-metrics summary \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe.

    ## Source

    vllm/config/vllm.py ``__post_init__`` (0.32, 0.33); docs/vllm-rules.md R089 (F19).
    """

    id = "SD095"
    severity = Severity.ERROR
    fields = ("extra_args.per_request_spec_decode_metrics",)
    phase = "config"

    def check(self, ctx):
        # option(): also an abbreviation argparse resolves (``--per- detailed``)
        v = option(ctx, "per_request_spec_decode_metrics")
        if v is None or v is False or str(v).lower() == "none" or ctx.spec is not None:
            return
        yield self.finding(
            "--per-request-spec-decode-metrics requires speculative decoding to be enabled (via --speculative-config).",
            fields=[option_path(ctx, "per_request_spec_decode_metrics")],
            fixes=[set_option_patch(ctx, "per_request_spec_decode_metrics", None, "Remove --per-request-spec-decode-metrics")],
        )
