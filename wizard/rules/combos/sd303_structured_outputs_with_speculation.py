from __future__ import annotations

import json

from wizard.config import Patch
from wizard.context import CheckContext
from wizard.rules.helpers import extra_arg
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import NGRAM, NGRAM_GPU, is_eagle_head, parallel_drafting_methods


def structured_backend(ctx: "CheckContext") -> str | None:
    """The structured-output backend the user configured (``--structured-outputs-config``
    ``backend``, or the old ``--guided-decoding-backend``), 'auto' when configured without a
    backend, else None (not configured)."""
    so = extra_arg(ctx, "structured_outputs_config")
    if isinstance(so, str):
        try:
            so = json.loads(so)
        except ValueError:
            return so or None
    if isinstance(so, dict):
        return str(so.get("backend") or "auto")
    g = extra_arg(ctx, "guided_decoding_backend")
    return str(g) if g else None


@register
class StructuredOutputsWithSpeculation(Rule):
    r"""Structured outputs with ngram_gpu+async or P-EAGLE

    ## What it does

    When a structured-output backend is configured
    (``--structured-outputs-config``): warns for ``ngram_gpu`` with async scheduling (grammar-
    illegal drafts accepted: "Failed to advance FSM", HTTP 500, truncated output) and for
    parallel drafting with EAGLE (P-EAGLE: severe acceptance cliff at draft position 1 under
    JSON-schema constraints).

    0.34 changed how grammar-invalid drafts are handled: the scheduler no longer strips them
    ("Preserve draft slots; rejection sampling handles grammar violations.",
    v1/core/sched/scheduler.py:3039; 0.33 filtered them with ``validate_tokens`` and the runner
    forced their rejection through ``GrammarOutput.num_acceptable_drafts`` /
    ``grammar_invalid_drafts``, both removed). The grammar bitmask is filled for each draft
    position up to the first invalid one (v1/structured_output/__init__.py:480-500) and the
    rejection sampler rejects a draft the mask excludes, so an invalid draft still costs its
    verification slot. The ngram_gpu warning is kept (nothing in 0.34 shows vllm#49694 fixed); P-EAGLE is gone
    in 0.34 (``parallel_drafting`` with eagle is a config error, SD235), so that warning is not
    given there.

    ## Why it matters

    Grammar masks and these drafting modes interact badly: errors under concurrency, or acceptance cliffs.

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-8B --async-scheduling --structured-outputs-config '{"backend":"xgrammar"}' \
      --speculative-config '{"method":"ngram_gpu","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'
    ```

    ## Use instead

    Use ``ngram`` (CPU) for grammar traffic; compare P-EAGLE against
    sequential EAGLE3.

    ```sh
    vllm serve Qwen/Qwen3-8B --structured-outputs-config '{"backend":"xgrammar"}' \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'
    ```

    ## Fix safety

    Changes speed only.

    ## Source

    https://github.com/vllm-project/vllm/issues/49694, https://github.com/vllm-project/vllm/issues/42004;
    vllm/v1/core/sched/scheduler.py:3039 ``update_draft_token_ids_in_output`` and
    vllm/v1/structured_output/__init__.py:358 ``trim_spec_tokens`` (0.34).
    """

    id = "SD303"
    severity = Severity.WARNING
    fields = ("speculative_config.method", "async_scheduling")
    phase = "run"

    def check(self, ctx):
        spec = ctx.spec
        backend = structured_backend(ctx)
        if spec is None or backend is None:
            return
        if ctx.method == NGRAM_GPU and ctx.config.async_scheduling is not False:
            yield self.finding(
                f"ngram_gpu with async scheduling and structured outputs ({backend}): the verifier can accept "
                "grammar-illegal draft tokens ('Failed to advance FSM', HTTP 500, truncated output; vllm#49694).",
                fields=["speculative_config.method", "async_scheduling"],
                fixes=[Patch(description="Use CPU n-gram (method ngram) for structured-output traffic"
                             + (" and drop --async-scheduling (CPU n-gram cannot run async)"
                                if ctx.config.async_scheduling is True else ""),
                             set={"speculative_config.method": NGRAM},
                             unset=["async_scheduling"] if ctx.config.async_scheduling is True else [])])
        if spec.parallel_drafting is True and is_eagle_head(ctx.method) and parallel_drafting_methods(ctx.version) is None:
            yield self.finding(
                f"Parallel drafting (P-EAGLE) with structured outputs ({backend}): acceptance falls off a cliff after "
                "draft position 1 under grammar constraints (vllm#42004); compare with sequential EAGLE3.",
                fields=["speculative_config.parallel_drafting"],
                fixes=[Patch(description="Draft sequentially (drop parallel_drafting)", unset=["speculative_config.parallel_drafting"])])
