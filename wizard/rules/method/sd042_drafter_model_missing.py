from __future__ import annotations

from wizard.fixes import catalog_drafter, ngram_fallback
from wizard.rules.helpers import raw_method
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import CUSTOM_CLASS, is_allowed, needs_drafter_checkpoint


@register
class DrafterModelMissing(Rule):
    r"""Speculative method needs a drafter model

    ## What it does

    With ``num_speculative_tokens`` given and no ``model``: eagle, eagle3,
    dflash, draft_model (and 0.32's medusa/mlp_speculator) need a drafter path;
    ``custom_class`` needs the proposer's import path. mtp/dspark borrow the target;
    ngram/ngram_gpu/suffix/extract_hidden_states need none.

    ## Why it matters

    vLLM raises ``num_speculative_tokens was provided but without speculative
    model`` (or the custom_class message) at config time.

    ## Example

    ``{"method":"eagle3","num_speculative_tokens":3}``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","num_speculative_tokens":3}'
    ```

    ## Use instead

    Name the drafter: ``"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    When the offline catalog has a drafter for this target and method
    (``wizard.models.catalog.drafters_for``), the first fix names it: the real fix, but check it
    is the drafter you meant. Switching to n-gram (the later fix) changes the speed-up.

    ## Source

    vllm/config/speculative.py ``__post_init__`` (0.32 L1147-1191, 0.33 L1252-1296);
    docs/vllm-rules.md R024 (E08, E68, F05).
    """

    id = "SD042"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.model is not None or spec.num_speculative_tokens is None:
            return
        m = raw_method(ctx)
        if not (needs_drafter_checkpoint(m) or m == CUSTOM_CLASS) or not is_allowed(m, ctx.version):
            return
        k = spec.num_speculative_tokens
        if m == CUSTOM_CLASS:
            msg = "method='custom_class' requires 'model' to contain the custom proposer module path (e.g. 'my_module.MyProposer')."
        else:
            msg = f"method '{m}' needs speculative_config.model (the drafter checkpoint): vLLM fails with " \
                  "'num_speculative_tokens was provided but without speculative model'."
        drafter = catalog_drafter(ctx.config.model, m) if m != CUSTOM_CLASS else None
        fixes = [drafter] if drafter is not None else []
        fixes.append(ngram_fallback(k, "Use n-gram speculation (no drafter model)"))
        yield self.finding(msg, fixes=fixes)
