from __future__ import annotations

from wizard.mechanisms import apply as A
from wizard.mechanisms import kv_groups as KG
from wizard.rules.registry import Rule, Severity, register


@register
class DrafterAddsKvPadding(Rule):
    r"""The drafter's layers add KV-cache groups and padding layers

    ## What it does

    Compares vLLM's KV-cache grouping of the target alone with target + drafter
    (``wizard.mechanisms.kv_groups``): a drafter whose layer kind differs from most of the target's
    (a sliding-window layer next to full-attention layers, or the reverse) makes vLLM cut the
    layers into many small groups, padded with empty layers to equal size.

    ## Why it matters

    Padding layers hold KV memory nobody uses: fewer tokens fit in the cache than the model sizes
    suggest. Serving is correct; it is advice about the drafter's layout.

    ## Example

    gpt-oss-20b (12 sliding + 12 full layers) with a one-layer full-attention EAGLE-3 drafter:
    13 full vs 12 sliding layers, one padding layer:

    ```sh
    vllm serve openai/gpt-oss-20b \
      --speculative-config '{"method":"eagle3","model":"RedHatAI/gpt-oss-20b-speculator.eagle3","num_speculative_tokens":3}'
    ```

    ## Use instead

    A target whose layers are all one kind keeps one group:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Informational.

    ## Source

    vllm/v1/core/kv_cache_utils.py ``_get_kv_cache_groups_uniform_page_size`` (group size and
    padding, 0.28-0.33); wizard/data/vllm/<X.Y>/kv_groups.json.
    """

    id = "SD722"
    severity = Severity.INFO
    fields = ("speculative_config.model",)
    phase = "plan"

    def check(self, ctx):
        g = A.kv_grouping(ctx)
        if g is None or g.error or not g.padding_layers:
            return
        tl = KG.layers_for(ctx.target, "target", kv_cache_dtype=ctx.target_kv_dtype(), tensor_parallel_size=ctx.tp)
        block = ctx.view.block_size
        if any(layer.kind == "mamba" for layer in tl):
            # a hybrid target alone is grouped with the same recurrent-state pages and aligned block
            # size as with the drafter (A.kv_grouping); unsized Mamba layers (page 0) made _unify
            # divide by zero before 0.26 ("internal error in rule SD722", issue #22)
            aligned = A._hybrid_layers(ctx, tl, block)
            if aligned is None:
                return
            tl, block = aligned
        alone = KG.kv_cache_groups(ctx.version, tl, block_size=block)
        extra = g.padding_layers - (alone.padding_layers if not alone.error else 0)
        if extra <= 0:
            return
        total = sum(len(x.layers) for x in g.groups)
        yield self.finding(
            f"With the {ctx.method} drafter vLLM {ctx.version} forms {g.num_groups} KV-cache groups (the target alone: "
            f"{alone.num_groups}) and adds {extra} padding layer(s): about {100 * extra / max(1, total + extra):.0f}% of the "
            "KV cache holds nothing.")
