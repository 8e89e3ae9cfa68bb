from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import import_notes
from wizard.rules.registry import Rule, Severity, register


@register
class DeprecatedSpelling(Rule):
    r"""Deprecated option spelling

    ## What it does

    Reports ``import_notes`` of kind ``deprecated_flag`` with the modern spelling
    the wizard used instead.

    ## Why it matters

    The V0 flags were removed from vLLM; current versions fail with
    ``unrecognized arguments``. Old tutorials still show them.

    ## Example

    ``vllm serve M --speculative-model D --num-speculative-tokens 3``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-model '[ngram]' \
      --num-speculative-tokens 3 --ngram-prompt-lookup-max 4
    ```

    ## Use instead

    ``--speculative-config '{"model":"D","num_speculative_tokens":3}'``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"model":"[ngram]","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Safe: same meaning, current spelling (the export writes it).

    An error, not a warning: vLLM 0.32/0.33 reject every one of these spellings (removed flags
    fail in argparse, legacy JSON keys with ``Unexpected keyword argument``). MTP method aliases,
    which vLLM still accepts, are SD041.

    ## Source

    vLLM V0 -> V1 migration (flags removed in vLLM 0.10); vllm/engine/arg_utils.py
    (0.32, 0.33) has no such flags; SpeculativeConfig forbids the legacy keys (R009).
    """

    id = "SD006"
    severity = Severity.ERROR
    fields = ()
    phase = "parse"

    def check(self, ctx):
        notes = import_notes(ctx, "deprecated_flag")
        if not notes:
            return
        parts = []
        for n in notes:
            d = n.detail or {}
            parts.append(f"{d.get('old', n.field)} -> {d.get('new', n.field)}")
        yield self.finding(
            "Deprecated spelling(s): " + "; ".join(parts) + f". vLLM {ctx.version} rejects the old form; "
            "the wizard understood it and exports the modern one.",
            fields=sorted({n.field for n in notes}),
            fixes=[Patch(description="Use the modern spelling (as exported)", unset=["import_notes.deprecated_flag"])],
        )
