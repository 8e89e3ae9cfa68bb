from __future__ import annotations

from wizard import resolve
from wizard.fixes import ngram_fallback
from wizard.mechanisms import apply as A
from wizard.rules.helpers import has_v1
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import drafter_may_span_groups


@register
class DrafterSpansKvGroups(Rule):
    r"""Drafter layers land in several KV-cache groups

    ## What it does

    Groups the target's and the drafter's layers as vLLM does (``wizard.mechanisms.kv_groups``)
    and checks whether the drafter's layers fall into more than one KV-cache group (a drafter with
    sliding-window and full-attention layers, e.g. Gemma 3 or gpt-oss as draft models). On the V1
    model runner every proposer except extract_hidden_states and the Gemma 4 / Step-3.5 MTP
    proposers asserts that all drafter layers share one group. A release without Model Runner V1
    (0.34) has no such assertion: the rule does not apply there.

    ## Why it matters

    V1 stops at start-up with ``AssertionError: All drafting layers should belong to the same kv
    cache group`` after both models have loaded. (The V2 runner's speculators group by layer.)

    ## Example

    Gemma 3 270M (5 sliding : 1 full attention) as the draft model of Gemma 3 1B on the V1 runner:

    ```sh
    VLLM_USE_V2_MODEL_RUNNER=0 vllm serve ./sd721-gemma-3-1b-it \
      --speculative-config '{"method":"draft_model","model":"./sd721-gemma-3-270m-it","num_speculative_tokens":3}'
    ```

    ## Use instead

    N-gram speculation (no drafter layers), or a drafter whose layers are all one kind:

    ```sh
    VLLM_USE_V2_MODEL_RUNNER=0 vllm serve ./sd721-gemma-3-1b-it \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    n-gram needs no weights but accepts less.

    ## Source

    vllm/v1/spec_decode/llm_base_proposer.py ``validate_same_kv_cache_group`` (called from
    ``initialize_attn_backend``; overridden in gemma4.py, step3p5.py, extract_hidden_states.py),
    0.28-0.33 (0.34 removed the file with the V1 runner); vLLM issue #33133 / PR #33318 (Gemma 3
    and gpt-oss as draft models).
    """

    id = "SD721"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    phase = "load"

    def check(self, ctx):
        if not has_v1(ctx):
            return  # the assertion lived only in V1's llm_base_proposer.py
        g = A.kv_grouping(ctx)
        if g is None or g.error or not g.drafter_spans_groups:
            return
        if A.runner(ctx) != "v1":
            return
        d = ctx.drafter
        rw = resolve.mtp_rewrite(d) if d is not None else None
        if drafter_may_span_groups(ctx.method) or (rw is not None and drafter_may_span_groups(rw[0])):
            return
        yield self.finding(
            f"The {ctx.method} drafter's layers fall into {len(g.drafter_groups)} of the {g.num_groups} KV-cache groups "
            f"vLLM {ctx.version} forms for target + drafter, but the V1 proposer assumes one group: start-up stops with "
            "'All drafting layers should belong to the same kv cache group' after both models load.",
            fixes=[ngram_fallback(ctx.k or 3, "Use n-gram speculation instead of this drafter")])
