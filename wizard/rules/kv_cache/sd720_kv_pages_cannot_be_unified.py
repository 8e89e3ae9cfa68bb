from __future__ import annotations

from wizard.fixes import ngram_fallback
from wizard.mechanisms import apply as A
from wizard.rules.registry import Rule, Severity, register


@register
class KvPagesCannotBeUnified(Rule):
    r"""KV-cache pages of target and drafter cannot be unified

    ## What it does

    Runs vLLM's KV-cache grouping over the target's and the drafter's layers
    (``wizard.mechanisms.kv_groups``, per release): layers of different kinds (full, sliding window,
    MLA) are given one page size; an MLA page that does not divide the largest page cannot be
    padded, and sliding windows that differ between full-attention layers cannot share a group.
    For hybrid targets (Mamba / Gated-DeltaNet / short-conv layers) the recurrent-state page comes
    from the model class (``wizard.mechanisms.mamba_state``) and is padded to the target's attention
    page after the block size is raised to cover it; before 0.26 vLLM cannot pad it further, so a
    drafter page larger than that (more KV bytes per token than the target) fails the unification.
    Before 0.12 nothing unifies pages: differing pages that 0.11's ``UniformTypeKVCacheSpecs`` does
    not group end in ``NotImplementedError``, and 0.10 lacks that class too, so an EAGLE drafter
    trained with another KV-head count than its full-attention target already fails there.
    Reports vLLM's exception, the drafter KV shape that this release would group, and the release
    from which every modelled release groups these layers.

    ## Why it matters

    ``get_kv_cache_config`` raises (``NotImplementedError: ... cannot be padded``, or ``ValueError``)
    after both models have loaded, before serving.

    ## Example

    On vLLM 0.28, gpt-oss-20b (sliding + full layers, 8 KV heads of 64: 32 KiB pages) with a draft
    model of one KV head of 96 elements (6 KiB pages): 32 KiB is not a multiple of 6 KiB and 0.28
    does not pad attention pages:

    ```sh
    vllm serve openai/gpt-oss-20b \
      --speculative-config '{"method":"draft_model","model":"./sd720-kv1x96-draft","num_speculative_tokens":3}'
    ```

    ## Use instead

    A drafter whose page size divides the target's (the EAGLE-3 head trained for gpt-oss):

    ```sh
    vllm serve openai/gpt-oss-20b \
      --speculative-config '{"method":"eagle3","model":"RedHatAI/gpt-oss-20b-speculator.eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    n-gram needs no drafter but accepts less; another drafter (or 0.29+, which pads attention
    pages; 0.26+ for a hybrid target's state pages; 0.11+ for full-attention pages that differ)
    keeps the drafter's acceptance.

    ## Source

    vllm/v1/core/kv_cache_utils.py ``get_kv_cache_groups`` / ``unify_kv_cache_spec_page_size``
    (``kv_cache_planning.py`` in 0.33; ``get_kv_cache_config`` in 0.10), vllm/v1/kv_cache_interface.py
    (0.10, 0.11, 0.12, 0.15, 0.20, 0.24, 0.26, 0.28-0.33, wizard/data/vllm/<X.Y>/kv_groups.json); vLLM
    issue 22432 (0.10.0, an EAGLE drafter with 4 KV heads on an 8-KV-head Llama); hybrid targets:
    vllm/platforms/interface.py
    ``_align_hybrid_block_size`` and each model's ``get_mamba_state_shape_from_config``
    (wizard/data/vllm/<X.Y>/mamba_state.json).
    """

    id = "SD720"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    phase = "load"

    def check(self, ctx):
        g = A.kv_grouping(ctx)
        if g is None or not g.error:
            return
        ways = []
        if g.matching_drafter:
            ways.append(f"a drafter whose KV layout matches the target's ({g.matching_drafter} per GPU)")
        if g.grouped_from:
            ways.append(f"vLLM {g.grouped_from} or later, whose KV-cache grouping accepts these layers")
        fix = f" Use {' or '.join(ways)}, or n-gram speculation." if ways else ""
        yield self.finding(
            f"vLLM {ctx.version} cannot put the target's and the {ctx.method} drafter's KV caches into groups: "
            f"{g.error.rstrip('.')}. vLLM raises this after loading both models.{fix}",
            fixes=[ngram_fallback(ctx.k or 3, "Use n-gram speculation instead of this drafter")])
