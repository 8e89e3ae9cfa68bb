from __future__ import annotations

from wizard.config import Patch
from wizard.fixes import ngram_fallback
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL
from wizard.vllm.versions import spec_fields


@register
class DraftVocabMismatch(Rule):
    r"""Draft model vocabulary size differs from the target's

    ## What it does

    For method ``draft_model`` (after detection; 0.34 keeps an explicit method as written) without
    ``use_heterogeneous_vocab`` (to 0.33), compares ``vocab_size`` of target and drafter. Sizes only: a
    different tokenizer with the same size passes vLLM (and is caught elsewhere). Not applied to
    eagle/eagle3/mtp.

    ## Why it matters

    vLLM raises ``Target and draft model should have the same vocabulary
    size`` at config time; otherwise draft ids would index out of range.

    ## Example

    A Qwen3 draft model for a Llama target.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"draft_model","model":"Qwen/Qwen3-8B","num_speculative_tokens":3}'
    ```

    ## Use instead

    A drafter from the same family (same tokenizer), or
    ``use_heterogeneous_vocab: true`` for a different tokenizer.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"draft_model","model":"Qwen/Qwen3-8B","num_speculative_tokens":3,"use_heterogeneous_vocab":true}'
    ```

    ## Fix safety

    ``use_heterogeneous_vocab`` maps tokens through text, which costs speed;
    choosing a same-family drafter is better but only the user can pick it.

    ## Source

    vllm/config/speculative.py ``verify_equal_vocab_size_if_draft_model`` (0.32, 0.33);
    docs/vllm-rules.md R063 (E17, E18). 0.34: the same check for the draft_model speculator
    (``draft_has_own_vocab``, speculative.py:1725-1740, standalone_ar/config.py:15); an explicit
    ``draft_model`` is no longer re-detected as eagle/eagle3 from its path, so it applies to those
    drafters too (speculator_config.py:412), and ``use_heterogeneous_vocab`` is gone.
    """

    id = "SD048"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        hetero = "use_heterogeneous_vocab" in spec_fields(ctx.version)  # removed in 0.34
        if spec is None or (hetero and spec.use_heterogeneous_vocab) or ctx.method != DRAFT_MODEL:
            return
        t, d = ctx.target, ctx.drafter
        if t is None or d is None or not t.vocab_size or not d.vocab_size or t.vocab_size == d.vocab_size:
            return
        fixes = []
        if hetero and (spec.draft_sample_method or "greedy") == "greedy" and not spec.use_local_argmax_reduction:
            fixes.append(Patch(description="Map tokens between vocabularies (use_heterogeneous_vocab)",
                               set={"speculative_config.use_heterogeneous_vocab": True}))
        fixes.append(ngram_fallback(ctx.k or 3, "Use n-gram speculation instead"))
        yield self.finding(
            f"Target and draft model should have the same vocabulary size: target {t.vocab_size}, "
            f"draft {d.vocab_size}. vLLM rejects this draft_model at config time.",
            fixes=fixes,
        )
