from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import ngram_fix
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL, is_eagle_head, is_noncausal, parallel_drafting_methods

@register
class ParallelDraftingMaskToken(Rule):
    r"""Parallel drafting needs a mask token id in the drafter config

    ## What it does

    Parallel drafting (dflash, dspark, or up to 0.33 ``parallel_drafting: true`` for
    P-EAGLE/PARD) fills draft slots with a mask token. Flags a drafter config with none of
    ``dflash_config.mask_token_id``, ``mask_token_id``, ``dspark_noise_token_id``,
    ``pard_token``, ``ptd_token_id``. (P-EAGLE's ``mask_hidden`` tensor is not checked: the
    inspector does not list every tensor name.)

    From 0.34 P-EAGLE and PARD are gone and the key itself is SD235's; this rule then covers the
    dflash/dspark drafters' mask token only.

    ## Why it matters

    The proposer raises "For parallel drafting, the draft model config must
    have ..." (or "mask_hidden not found in weights") at load. vLLM 0.34 raises
    "parallel_drafting is only supported by the dflash and dspark methods, not 'X'." at config time.

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3,"parallel_drafting":true}'
    ```

    ## Use instead

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-p-eagle3","num_speculative_tokens":3,"parallel_drafting":true}'
    ```

    ## Fix safety

    Dropping parallel_drafting (P-EAGLE) drafts sequentially: safe, slower drafting. The n-gram fallback changes acceptance.

    ## Source

    vllm/v1/spec_decode/llm_base_proposer.py (V1), vllm/v1/worker/gpu/spec_decode/utils.py
    (V2), 0.32/0.33; docs/vllm-rules.md R127; 0.34 v1/worker/gpu/spec_decode/utils.py:159.
    """

    id = "SD231"
    severity = Severity.ERROR
    fields = ("speculative_config.model", "speculative_config.parallel_drafting")
    phase = "load"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None:
            return
        allowed = parallel_drafting_methods(ctx.version)
        if allowed is not None:
            yield from self._check_034(ctx, allowed)
            return
        parallel = is_noncausal(ctx.method) or (spec.parallel_drafting is True and (is_eagle_head(ctx.method) or ctx.method == DRAFT_MODEL))
        d = ctx.drafter
        if not parallel or d is None or d is ctx.target or not d.has_config:
            return
        if d.mask_token_id is None:
            fixes = []
            if spec.parallel_drafting is True and not is_noncausal(ctx.method):
                fixes.append(Patch(description="Draft sequentially (drop parallel_drafting)", unset=["speculative_config.parallel_drafting"]))
            fixes.append(ngram_fix(ctx))
            yield self.finding(
                f"Parallel drafting ({ctx.method}) with drafter {d.short_name()}, whose config.json has no mask token id "
                "(dflash_config.mask_token_id / mask_token_id / dspark_noise_token_id / pard_token / ptd_token_id): "
                "vLLM refuses to load it.", fixes=fixes)

    def _check_034(self, ctx, allowed):
        """0.34: ``parallel_drafting`` itself is SD235's (refused with other methods, a deprecated
        no-op otherwise); what is left is the non-causal drafter's mask token."""
        method = ctx.method
        d = ctx.drafter
        if not is_noncausal(method) or d is None or d is ctx.target or not d.has_config or d.mask_token_id is not None:
            return
        yield self.finding(
            f"Parallel drafting ({method}) with drafter {d.short_name()}, whose config.json has no mask token id "
            "(dflash_config.mask_token_id / mask_token_id / dspark_noise_token_id / pard_token / ptd_token_id): vLLM "
            "refuses to load it ('Model config must specify `dflash_config.mask_token_id` ... for parallel drafting', "
            "v1/worker/gpu/spec_decode/utils.py:159).",
            fixes=[ngram_fix(ctx)])
