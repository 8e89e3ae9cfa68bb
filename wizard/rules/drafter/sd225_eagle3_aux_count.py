from __future__ import annotations

from wizard.rules.helpers import eagle_drafter, ngram_fix
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import EAGLE3


@register
class Eagle3AuxCount(Rule):
    r"""EAGLE3 aux layer count does not match the fc the drafter class builds

    ## What it does

    Llama/DeepSeek EAGLE3 drafters size their ``fc`` from
    ``num_aux_hidden_states`` or the nested ``eagle_config`` list, else 3 — *not* from the
    top-level ``eagle_aux_hidden_state_layer_ids`` the runner uses to pick layers. Flags a
    top-level list whose length is not 3 without either of those keys (Qwen3 drafters read the
    top-level list and are exempt).

    ## Why it matters

    Weight-shape mismatch at load, or a runtime shape error.

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-four-aux","num_speculative_tokens":3}'
    ```

    ## Use instead

    Add ``num_aux_hidden_states`` (or mirror the list into ``eagle_config``).

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-four-aux-counted","num_speculative_tokens":3}'
    ```

    ## Fix safety

    The real fix is in the drafter's config.json; the offered n-gram fallback changes acceptance.

    ## Source

    vllm/model_executor/models/llama_eagle3.py, deepseek_eagle3.py vs qwen3_eagle3.py
    (0.32/0.33); docs/vllm-rules.md R122.
    """

    id = "SD225"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    phase = "load"

    def check(self, ctx):
        d = eagle_drafter(ctx)
        if d is None or ctx.method != EAGLE3 or not d.has_config:
            return
        archs = " ".join(d.architectures)
        if "Qwen3" in archs or d.num_aux_hidden_states is not None:
            return
        if isinstance(d.eagle_config.get("eagle_aux_hidden_state_layer_ids"), list):
            return
        top = d.eagle_aux_hidden_state_layer_ids
        if isinstance(top, list) and len(top) != 3:
            yield self.finding(
                f"Drafter {d.short_name()} lists {len(top)} aux layers at the top level but has no "
                "num_aux_hidden_states: its fc is built for 3 x target_hidden_size, so the checkpoint's fc weight "
                f"(or the {len(top)} captured states) do not fit. Add \"num_aux_hidden_states\": {len(top)} to its config.json.",
                fixes=[ngram_fix(ctx)])
