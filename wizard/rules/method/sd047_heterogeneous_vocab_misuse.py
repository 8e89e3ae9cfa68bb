from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL, is_allowed
from wizard.vllm.versions import spec_fields


@register
class HeterogeneousVocabMisuse(Rule):
    r"""use_heterogeneous_vocab needs draft_model with greedy drafting

    ## What it does

    The option is valid only with method ``draft_model``, with
    ``draft_sample_method`` greedy, and not with ``use_local_argmax_reduction``. Only for
    releases that have the key (to 0.33).

    ## Why it matters

    vLLM raises ``use_heterogeneous_vocab only works with method='draft_model'``
    / ``... only supports greedy draft sampling`` at config time.

    ## Example

    EAGLE drafter with ``use_heterogeneous_vocab: true``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"use_heterogeneous_vocab":true}'
    ```

    ## Use instead

    Use it only for a draft model with a different tokenizer.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Removing the flag is safe for eagle/mtp (they map vocabularies themselves).

    ## Source

    vllm/config/speculative.py ``_verify_args`` (0.32, 0.33); docs/vllm-rules.md R064 (E19, F25).
    vLLM 0.34 removed the key with its three errors (``SpeculativeConfig`` has no such field,
    ``extra="forbid"``, vllm/config/utils.py:72): the release's field list says so and SD020
    reports the unknown key.
    """

    id = "SD047"
    severity = Severity.ERROR
    fields = ("speculative_config.use_heterogeneous_vocab",)
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or not spec.use_heterogeneous_vocab:
            return
        if "use_heterogeneous_vocab" not in spec_fields(ctx.version):
            return  # 0.34 removed the key (and TLI): pydantic's 'Unexpected keyword argument' is SD020's
        m = ctx.method
        if m is None or not is_allowed(m, ctx.version):
            return
        if m != DRAFT_MODEL:
            yield self.finding(
                f"use_heterogeneous_vocab only works with method='draft_model' (vLLM will run {m}).",
                fixes=[Patch(description="Remove use_heterogeneous_vocab", unset=["speculative_config.use_heterogeneous_vocab"])],
            )
        elif (spec.draft_sample_method or "greedy") != "greedy":
            yield self.finding(
                "use_heterogeneous_vocab currently only supports greedy draft sampling.",
                fields=["speculative_config.draft_sample_method"],
                fixes=[Patch(description="Use greedy draft sampling", unset=["speculative_config.draft_sample_method"])],
            )
