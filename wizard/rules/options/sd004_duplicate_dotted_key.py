from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import import_notes
from wizard.rules.registry import Rule, Severity, register


@register
class DuplicateDottedKey(Rule):
    r"""Dotted speculative-config key given twice (last wins)

    ## What it does

    Reports ``import_notes`` of kind ``duplicate_key``: a dotted key given twice, and a key
    repeated inside the ``--speculative-config`` JSON object
    (``'{"method":"eagle3","method":"ngram"}'``), which vLLM reads with ``json.loads``: the last
    value wins without a warning.

    ## Why it matters

    vLLM keeps the last value with a ``Found duplicate keys`` warning; an
    earlier value the user may rely on is ignored.

    ## Example

    ``--speculative-config.num_speculative_tokens 3 ... --speculative-config.num_speculative_tokens 4``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config.method ngram \
      --speculative-config.num_speculative_tokens 3 --speculative-config.num_speculative_tokens 4
    ```

    ## Use instead

    Give each key once.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config.method ngram \
      --speculative-config.num_speculative_tokens 4
    ```

    ## Fix safety

    Safe: keeps the last value, exactly what vLLM runs.

    ## Source

    vllm/utils/argparse_utils.py ``parse_args`` (0.32, 0.33); docs/vllm-rules.md R003 (C07);
    ``--speculative-config`` is ``optional_type(json.loads)`` (vllm/engine/arg_utils.py 0.32), and
    ``json.loads`` keeps the last of repeated keys.
    """

    id = "SD004"
    severity = Severity.INFO  # docs/severity.md: serves correctly; advice
    fields = ("speculative_config",)
    phase = "parse"

    def check(self, ctx):
        for note in import_notes(ctx, "duplicate_key"):
            in_json = note.detail.get("source") == "json"
            if note.field == "model" and note.detail.get("positional"):  # serve.py: args.model = args.model_tag
                yield self.finding(
                    f"model: given twice; vLLM serves the positional model. {note.message} (a --config file's "
                    "`model:` does not replace it).", fields=["model"],
                    fixes=[Patch(description="Keep the positional model only", unset=["import_notes.duplicate_key"])],
                    title="Model given twice (the positional one is served)")
                continue
            if note.field == "speculative_config":  # a whole object dropped: method, drafter and k of the first
                yield self.finding(
                    f"--speculative-config: given more than once; vLLM's parser keeps only the last object and drops "
                    f"the earlier one whole (its method, drafter and k). {note.message}", fields=[note.field],
                    severity=Severity.WARNING, title="--speculative-config given twice (the first is ignored)",
                    fixes=[Patch(description="Keep the last --speculative-config only", unset=["import_notes.duplicate_key"])])
                continue
            yield self.finding(
                f"{note.field}: given more than once; vLLM keeps the last value. {note.message}",
                fields=[note.field],
                fixes=[Patch(description="Keep the last value only", unset=["import_notes.duplicate_key"])],
                title=("speculative-config JSON key given twice (last wins)" if in_json else None)
                if str(note.field).startswith("speculative_config") else "Option given twice (last wins)",
            )
