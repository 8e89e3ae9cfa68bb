from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import CUSTOM_CLASS, DFLASH, DRAFT_MODEL, is_lookup, is_noncausal


def lookahead_slots(ctx) -> int:
    """Per-request slots vLLM reserves (R087): 0.32 ``max_num_new_slots_for_drafting``,
    0.33 and 0.34 ``num_lookahead_tokens``. 0.34 reads it from the speculator
    (``SpeculatorConfig.num_lookahead_tokens``, v1/worker/gpu/spec_decode/speculator_config.py:111:
    0 for ngram/suffix/extract_hidden_states; K for eagle/eagle3/mtp (eagle/config.py:56) and
    draft_model (standalone_ar/config.py:20); K+1 for dflash (dflash/config.py:54); dspark K, K+1
    without ``sample_from_anchor``) -- the values 0.33 computed in ``VllmConfig``. P-EAGLE/PARD
    (``parallel_drafting`` on eagle/draft_model) are gone there (SD235), and
    ``max_num_new_slots_for_drafting`` (1 for draft_model only, standalone_ar/config.py:24) no
    longer takes part in this check."""
    spec = ctx.spec
    k = ctx.k or 0
    m = ctx.method
    parallel = bool(spec.parallel_drafting) or is_noncausal(m)
    if ctx.version.at_least("0.33"):
        if is_lookup(m) or m == CUSTOM_CLASS:
            return 0
        if m == DFLASH:
            return k + 1
        return k
    if m == DFLASH:
        return k
    if parallel:
        return k if m == DRAFT_MODEL else k - 1
    return 1 if m == DRAFT_MODEL else 0


@register
class BatchedTokensTooSmall(Rule):
    r"""max_num_batched_tokens too small for the speculative lookahead

    ## What it does

    vLLM reserves per-request slots for drafting. 0.32: ``max_num_batched_tokens``
    must exceed ``max_num_new_slots_for_drafting`` (1 for draft_model, k for PARD/dflash, k-1 for
    P-EAGLE/dspark, else 0). 0.33: it must exceed ``num_lookahead_tokens`` (k for
    eagle/eagle3/mtp/draft_model, k+1 for dflash, 0 for n-gram). 0.34: the same
    ``num_lookahead_tokens``, now each speculator's own (P-EAGLE/PARD removed;
    ``max_num_new_slots_for_drafting`` is 1 for draft_model only and not part of the check).

    ## Why it matters

    vLLM raises ``VllmConfig does not have enough slots to schedule a token
    and support the speculative decoding settings``. Both versions also warn below 8192.

    ## Example

    A tiny token budget copied from a latency test.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 1 --max-num-batched-tokens 1 \
      --speculative-config '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":3}'
    ```

    ## Use instead

    Leave it unset or >= 8192.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 1 --max-num-batched-tokens 8192 \
      --speculative-config '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: vLLM's default budget.

    ## Source

    vllm/config/vllm.py ``_set_max_num_scheduled_tokens`` (0.32 L2254, 0.33 L2341, 0.34 L2263:
    the check at L2293 reads ``num_lookahead_tokens``, vllm.py:601 -> the speculator's);
    docs/vllm-rules.md R087 (E57-E59).
    """

    id = "SD093"
    severity = Severity.ERROR
    fields = ("max_num_batched_tokens",)
    phase = "config"

    def check(self, ctx):
        mnbt = ctx.config.max_num_batched_tokens
        if ctx.spec is None or not isinstance(mnbt, int) or ctx.k is None:
            return
        slots = lookahead_slots(ctx)
        if mnbt > slots:
            return
        yield self.finding(
            f"VllmConfig does not have enough slots to schedule a token and support the speculative decoding settings: "
            f"max_num_batched_tokens={mnbt}, drafting slots per request={slots} (vLLM {ctx.version}, method {ctx.method}).",
            fixes=[Patch(description="Use vLLM's default token budget", unset=["max_num_batched_tokens"])],
        )
