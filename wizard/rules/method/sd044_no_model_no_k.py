from __future__ import annotations

from wizard.fixes import catalog_drafter, ngram_fallback
from wizard.plan.k_policy import default_k
from wizard.rules.helpers import given_keys, raw_method
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import is_allowed, needs_drafter_checkpoint


@register
class NoModelNoK(Rule):
    r"""Drafter method without model and num_speculative_tokens

    ## What it does

    eagle, eagle3, dflash and draft_model without both keys.

    ## Why it matters

    vLLM fails with ``num_speculative_tokens must be provided ...``; adding
    k alone then fails with the missing-model error, so both are reported together.

    ## Example

    ``{"method":"eagle3"}``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{"method":"eagle3"}'
    ```

    ## Use instead

    ``{"method":"eagle3","model":"<drafter>","num_speculative_tokens":3}``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Review: the first fix, where the catalog has a drafter of this method for the target, sets
    it and the method's default k (as SD042 does); the n-gram fallback changes drafting.

    ## Source

    vllm/config/speculative.py ``__post_init__`` / ``_verify_args``; docs/vllm-rules.md R024, R025.
    """

    id = "SD044"
    severity = Severity.ERROR
    fields = ("speculative_config.model", "speculative_config.num_speculative_tokens")
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.model is not None or "num_speculative_tokens" in given_keys(ctx):
            return
        m = raw_method(ctx)
        if not needs_drafter_checkpoint(m) or not is_allowed(m, ctx.version):
            return
        yield self.finding(
            f"method '{m}' needs speculative_config.model and num_speculative_tokens: vLLM fails with "
            "'num_speculative_tokens must be provided with speculative model'.",
            fixes=[f for f in (catalog_drafter(ctx.config.model, m, k=default_k(m, ctx.target)), ngram_fallback(3, "Use n-gram speculation"))
                   if f is not None],
        )
