from __future__ import annotations

from wizard.rules.helpers import draft_vocab, eagle_drafter, ngram_fix
from wizard.rules.registry import Rule, Severity, register


@register
class SharedLayersMustMatchTarget(Rule):
    r"""Drafter relies on the target's embedding/head but its sizes differ

    ## What it does

    When the drafter checkpoint lacks ``embed_tokens`` (or ``lm_head``), vLLM
    uses the target's. Those have the target's width (hidden size) and vocabulary, so the
    drafter's ``hidden_size`` and ``vocab_size`` must match (or the vocabulary be mapped with
    ``draft_vocab_size`` + ``d2t`` and an own head).

    ## Why it matters

    vLLM shares only same-width embeddings; a narrower drafter without its
    own keeps a randomly initialised embedding (silent, acceptance ~0) or fails with a shape
    error in the shared head.

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-narrow","num_speculative_tokens":3}'
    ```

    ## Use instead

    Pair drafters with the target they were trained for (same hidden size
    and tokenizer), or use a checkpoint that carries its own layers.

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    No config fix.

    ## Source

    docs/vllm-rules.md R124/R125 (0.32/0.33).
    """

    id = "SD222"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    phase = "load"

    def check(self, ctx):
        d = eagle_drafter(ctx)
        t = ctx.target
        if d is None or t is None:
            return
        problems = []
        if d.has_embed_tokens is False and d.hidden_size and t.hidden_size and d.hidden_size != t.hidden_size:
            problems.append(f"it has no embed_tokens, and the target's embedding is {t.hidden_size} wide while the "
                            f"drafter's hidden size is {d.hidden_size} (vLLM shares only equal widths: the drafter "
                            "keeps a random embedding)")
        if d.has_lm_head is False:
            if d.hidden_size and t.hidden_size and d.hidden_size != t.hidden_size:
                problems.append(f"it has no lm_head, and the target's head expects hidden size {t.hidden_size}, "
                                f"not {d.hidden_size}")
            if draft_vocab(d) is None and d.vocab_size and t.vocab_size and d.vocab_size != t.vocab_size:
                problems.append(f"it has no lm_head, and its vocab_size {d.vocab_size} differs from the target's "
                                f"{t.vocab_size} (map with draft_vocab_size + d2t and an own lm_head)")
        if problems:
            yield self.finding(f"Drafter {d.short_name()} does not fit target {t.short_name()}: " + "; ".join(problems) + ".",
                               fixes=[ngram_fix(ctx)])
