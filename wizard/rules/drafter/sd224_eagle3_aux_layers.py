from __future__ import annotations

from wizard.rules.helpers import has_v1, eagle_drafter, ngram_fix
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import EAGLE3


@register
class Eagle3AuxLayers(Rule):
    r"""EAGLE3 aux hidden-state layer ids missing, out of range or ambiguous

    ## What it does

    Reads the aux layer ids the drafter config gives (R121 order) and:

    * none given: warns — vLLM silently uses the target default (2, L//2, L-3), which must be
      what the drafter was trained on;
    * an id outside [0, target layers): error — that layer is never captured;
    * given only as ``target_layer_ids`` / ``dflash_config.target_layer_ids``: warns — vLLM
      adds 1 (output-of-layer convention) on the V2 runner, while the V1 runner only reads
      ``eagle_aux_hidden_state_layer_ids``; an offset by one layer cost ~0.1 accept length in
      SGLang#25454.

    ## Why it matters

    The drafter reads hidden states of specific target layers; the wrong layers silently collapse acceptance.

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-no-aux-ids","num_speculative_tokens":3}'
    ```

    ## Use instead

    Put ``eagle_aux_hidden_state_layer_ids`` (input-to-layer ids, as trained)
    in the drafter's config.json.

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    No config fix (drafter config.json).

    ## Source

    docs/vllm-rules.md R121; https://github.com/sgl-project/sglang/pull/25454
    """

    id = "SD224"
    severity = Severity.WARNING
    fields = ("speculative_config.model",)
    phase = "run"

    def check(self, ctx):
        d = eagle_drafter(ctx)
        if d is None or ctx.method != EAGLE3 or not d.has_config or not d.use_aux_hidden_state:
            return
        ids, key = d.aux_layers
        t = ctx.target
        L = t.num_hidden_layers if t is not None else None
        if ids is None:
            # The default (2, L//2, L-3) is what the EAGLE-3 reference trainer captures
            # (SafeAILab/EAGLE eagle/traineagle3), so a missing list is usually right: info only.
            if L:
                default = (f"the target's default layers ({2}, {L // 2}, {L - 3}), the ones the EAGLE-3 reference "
                           "trainer uses")
            else:
                default = ("the target's default layers (2, L/2 and L-3 for a target with L layers; the target "
                           "could not be inspected), the ones the EAGLE-3 reference trainer uses")
            yield self.finding(
                f"Drafter {d.short_name()} does not name its aux layers (eagle_aux_hidden_state_layer_ids): vLLM "
                f"uses {default}. If this drafter "
                "was trained on other layers acceptance collapses; then add the trained ids to its config.json.",
                severity=Severity.INFO)
            return
        if L:
            bad = [i for i in ids if not isinstance(i, int) or i < 0 or i >= (L + 1 if key and "target_layer_ids" in key else L)]
            if bad:
                yield self.finding(
                    f"Drafter {d.short_name()} aux layer ids {ids} (from {key}) include {bad}, outside the target's "
                    f"{L} layers: those hidden states are never captured (shape error or garbage drafts).",
                    severity=Severity.ERROR, fixes=[ngram_fix(ctx)])
                return
        if key in ("target_layer_ids", "dflash_config.target_layer_ids"):
            v1 = "" if not has_v1(ctx) else ", the V1 runner ignores them and uses the target default"
            yield self.finding(
                f"Drafter {d.short_name()} gives its aux layers only as {key} (output-of-layer convention): vLLM's V2 "
                f"runner shifts them by +1{v1}. Make sure the "
                "convention matches the drafter's training, or add eagle_aux_hidden_state_layer_ids.")
