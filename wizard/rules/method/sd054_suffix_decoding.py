from __future__ import annotations

from wizard.config import Patch
from wizard.fixes import ngram_fallback
from wizard.rules.helpers import raw_method
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import SUFFIX
from wizard.vllm.versions import spec_fields

#: 0.34 suffix/config.py:40: ``0 <= suffix_decoding_corpus_tokens < 2**31``
_CORPUS_MAX = 1 << 31


@register
class SuffixDecoding(Rule):
    r"""Suffix decoding: arctic-inference on the server (up to 0.33), its options' ranges

    ## What it does

    For method ``suffix``: a warning that the server must have
    ``arctic-inference`` installed (rules do not probe the machine), and errors for
    ``suffix_decoding_max_tree_depth`` < 1, ``max_cached_requests`` < 0, ``max_spec_factor`` < 0,
    ``min_token_prob`` outside [0, 1].

    From vLLM 0.34 suffix decoding runs on the GPU speculator (no arctic-inference; the
    release's ``suffix_decoding_corpus_tokens`` field marks it): no package warning; an error for
    ``suffix_decoding_corpus_tokens`` outside [0, 2**31); INFO that ``max_spec_factor`` and
    ``min_token_prob`` are deprecated and have no effect (their range checks remain), and, when
    k is not given, that it now defaults to ``min(8, suffix_decoding_max_tree_depth)`` (0.33:
    the tree depth, 24).

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
    docs/vllm-rules.md R071 (E66). 0.34: v1/worker/gpu/spec_decode/suffix/config.py:23-57
    (``SuffixSpeculatorConfig.configure``: default k :28, ranges :34-57) and
    vllm/config/speculative.py:584-604 (the deprecated knobs).
    """

    id = "SD054"
    severity = Severity.WARNING
    fields = ("speculative_config.method",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or raw_method(ctx) != SUFFIX:
            return
        gpu_suffix = "suffix_decoding_corpus_tokens" in spec_fields(ctx.version)  # 0.34: no arctic-inference
        if gpu_suffix:
            yield from self._notes_034(ctx)
        else:
            ng = ngram_fallback(min(ctx.k or 3, 8), "Use n-gram speculation (no extra package)")
            yield self.finding(
                "method 'suffix' needs the arctic-inference package on the server (pip install arctic-inference==0.1.1); "
                "without it vLLM raises 'Arctic Inference is required for suffix decoding' at config time.",
                fixes=[ng], server_module="arctic_inference",  # the launcher refuses when its Python lacks it
            )
        checks = (("suffix_decoding_max_tree_depth", 1, None), ("suffix_decoding_max_cached_requests", 0, None),
                  ("suffix_decoding_max_spec_factor", 0, None), ("suffix_decoding_min_token_prob", 0, 1))
        if gpu_suffix:
            checks += (("suffix_decoding_corpus_tokens", 0, _CORPUS_MAX - 1),)
        for key, lo, hi in checks:
            v = getattr(spec, key, None)
            if v is None:
                v = (spec.model_extra or {}).get(key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or (v >= lo and (hi is None or v <= hi)):
                continue
            if key == "suffix_decoding_corpus_tokens":
                yield self.finding(
                    f"suffix_decoding_corpus_tokens={v} must be in [0, 2**31).",
                    fields=[f"speculative_config.{key}"], severity=Severity.ERROR,
                    title="Suffix decoding option out of range",
                    fixes=[Patch(description=f"Use vLLM's default for {key}", unset=[f"speculative_config.{key}"])])
                continue
            yield self.finding(
                f"speculative_config.{key}={v} must be " + (f"in [{lo}, {hi}]" if hi is not None else f">= {lo}") + ".",
                fields=[f"speculative_config.{key}"],
                severity=Severity.ERROR,
                title="Suffix decoding option out of range",
                fixes=[Patch(description=f"Use vLLM's default for {key}", unset=[f"speculative_config.{key}"])],
            )

    def _notes_034(self, ctx):
        """0.34 GPU suffix speculator: the default k and the deprecated knobs (INFO)."""
        spec = ctx.spec
        if spec.num_speculative_tokens is None:
            depth = spec.suffix_decoding_max_tree_depth
            depth = depth if isinstance(depth, int) and not isinstance(depth, bool) and depth >= 1 else 24
            k = min(8, depth)
            yield self.finding(
                f"num_speculative_tokens is unset: vLLM {ctx.version} defaults it to min(8, "
                f"suffix_decoding_max_tree_depth={depth}) = {k} (0.33 used the tree depth, {depth}).",
                severity=Severity.INFO, fields=["speculative_config.num_speculative_tokens"],
                fixes=[Patch(description=f"Set num_speculative_tokens={k}",
                             set={"speculative_config.num_speculative_tokens": k})])
        for key in ("suffix_decoding_max_spec_factor", "suffix_decoding_min_token_prob"):
            if getattr(spec, key) is not None:
                yield self.finding(
                    f"speculative_config.{key} is deprecated and has no effect in vLLM {ctx.version}: the GPU suffix "
                    "speculator always drafts num_speculative_tokens tokens (its range is still checked).",
                    severity=Severity.INFO, fields=[f"speculative_config.{key}"],
                    fixes=[Patch(description=f"Remove {key}", unset=[f"speculative_config.{key}"])])
