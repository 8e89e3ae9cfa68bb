from __future__ import annotations

from wizard.config import Patch
from wizard.fixes import ngram_fallback
from wizard.rules.helpers import raw_method
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import SUFFIX


@register
class SuffixDecoding(Rule):
    r"""Suffix decoding needs arctic-inference on the server

    ## What it does

    For method ``suffix``: a warning that the server must have
    ``arctic-inference`` installed (rules do not probe the machine), and errors for
    ``suffix_decoding_max_tree_depth`` < 1, ``max_cached_requests`` < 0, ``max_spec_factor`` < 0,
    ``min_token_prob`` outside [0, 1].

    ## Why it matters

    Without the package vLLM raises ``ImportError: Arctic Inference is required
    for suffix decoding`` at config time; bad bounds raise ValueError.

    ## Example

    ``{"method":"suffix"}`` on a stock vLLM image.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"suffix","num_speculative_tokens":8}'
    ```

    ## Use instead

    ``pip install arctic-inference==0.1.1`` on the server, or use ngram.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    n-gram is the closest package-free alternative (lower acceptance on agentic loads).

    ## Source

    vllm/config/speculative.py ``_validate_suffix_decoding`` (0.32, 0.33);
    docs/vllm-rules.md R071 (E66).
    """

    id = "SD054"
    severity = Severity.WARNING
    fields = ("speculative_config.method",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or raw_method(ctx) != SUFFIX:
            return
        ng = ngram_fallback(min(ctx.k or 3, 8), "Use n-gram speculation (no extra package)")
        yield self.finding(
            "method 'suffix' needs the arctic-inference package on the server (pip install arctic-inference==0.1.1); "
            "without it vLLM raises 'Arctic Inference is required for suffix decoding'.",
            fixes=[ng],
        )
        checks = (("suffix_decoding_max_tree_depth", 1, None), ("suffix_decoding_max_cached_requests", 0, None),
                  ("suffix_decoding_max_spec_factor", 0, None), ("suffix_decoding_min_token_prob", 0, 1))
        for key, lo, hi in checks:
            v = getattr(spec, key)
            if v is None or (v >= lo and (hi is None or v <= hi)):
                continue
            yield self.finding(
                f"speculative_config.{key}={v} must be " + (f"in [{lo}, {hi}]" if hi is not None else f">= {lo}") + ".",
                fields=[f"speculative_config.{key}"],
                severity=Severity.ERROR,
                title="Suffix decoding option out of range",
                fixes=[Patch(description=f"Use vLLM's default for {key}", unset=[f"speculative_config.{key}"])],
            )
