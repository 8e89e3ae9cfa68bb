from __future__ import annotations

from wizard.rules.helpers import draft_vocab, eagle_drafter, ngram_fix, tensor_shape
from wizard.rules.registry import Rule, Severity, register


@register
class DraftVocabMapping(Rule):
    r"""EAGLE3 draft vocabulary: lm_head / d2t inconsistent with draft_vocab_size

    ## What it does

    Compares the drafter's ``draft_vocab_size`` (default ``vocab_size``), its
    ``lm_head`` and ``d2t`` tensors with the target's vocabulary:

    * ``draft_vocab_size`` < target vocab and no ``d2t``: draft id *i* maps to target id *i*
      (``draft_id_to_target_id`` stays zeros) — wrong tokens, zero acceptance;
    * ``draft_vocab_size`` declared but no ``lm_head``: vLLM shares the full-vocab target head
      and the d2t scatter receives logits of the wrong width (shape error), or the head stays
      random (SGLang#27908: accept length 1.00);
    * ``lm_head`` rows != ``draft_vocab_size``: weight-shape mismatch at load.

    ## Why it matters

    Reduced-vocab drafters need their own lm_head and a d2t map; otherwise tokens are wrong or shapes mismatch.

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-no-d2t","num_speculative_tokens":3}'
    ```

    ## Use instead

    A reduced-vocab drafter needs ``lm_head.weight`` [draft_vocab, hidden] and
    ``d2t``; a full-vocab drafter may omit ``lm_head`` and share the target's.

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Checkpoint problem: the real fix is a complete checkpoint; the offered n-gram
    fallback (no drafter) changes acceptance.

    ## Source

    docs/vllm-rules.md R125 (``llama_eagle3.py`` compute_logits/load_weights, 0.32/0.33);
    https://github.com/sgl-project/sglang/pull/27908
    """

    id = "SD221"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    phase = "load"

    def check(self, ctx):
        d = eagle_drafter(ctx)
        if d is None:
            return
        t = ctx.target
        tv = t.vocab_size if t is not None else None
        dv = draft_vocab(d)
        declared = dv is not None
        dv = dv or d.vocab_size
        if declared and d.has_lm_head is False:
            if tv and dv != tv:
                yield self.finding(
                    f"Drafter {d.short_name()} declares draft_vocab_size {dv} but ships no lm_head: vLLM shares the "
                    f"target's {tv}-token head, so the d2t mapping gets logits of the wrong width (shape error at "
                    "warm-up), or the head is random and acceptance is zero (SGLang#27908). Use a drafter checkpoint "
                    "that includes lm_head.weight.", fixes=[ngram_fix(ctx)])
            elif not tv:
                yield self.finding(
                    f"Drafter {d.short_name()} declares draft_vocab_size {dv} but ships no lm_head: unless the draft "
                    "vocabulary equals the target's, the shared target head does not fit (target vocab unknown).",
                    severity=Severity.WARNING)
            return
        if dv and tv and dv < tv and d.has_d2t is False:
            yield self.finding(
                f"Drafter {d.short_name()} has a reduced vocabulary ({dv} < target {tv}) but no d2t tensor: vLLM "
                "leaves draft_id_to_target_id at zeros, so draft token i is proposed as target token i (wrong tokens, "
                "no acceptance). Use a checkpoint with d2t.", fixes=[ngram_fix(ctx)])
            return
        shape = tensor_shape(d, "lm_head.weight")
        if d.has_lm_head and shape and dv and shape[0] != dv:
            yield self.finding(
                f"Drafter {d.short_name()}: lm_head.weight has {shape[0]} rows but the config's draft vocabulary is "
                f"{dv}: weight-shape mismatch when vLLM loads it.", fixes=[ngram_fix(ctx)])
