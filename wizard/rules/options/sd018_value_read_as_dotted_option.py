from __future__ import annotations

from wizard.config import SERVE_FIELDS, Patch
from wizard.rules.helpers import import_notes
from wizard.rules.registry import Rule, Severity, register


@register
class ValueReadAsDottedOption(Rule):
    r"""A word vLLM's parser reads as a dotted option (a negative decimal as its own word)

    ## What it does

    Every word of the command that starts with ``-`` and holds a ``.`` is, to vLLM's
    pre-parser, a dotted ``--option.key VALUE``: it takes the next word as its value and hands
    argparse a bogus option. A negative decimal written as its own word (``--video-pruning-rate
    -0.5``) is such a word; last on the line, vLLM crashes with ``IndexError``; a dotted option
    with nothing after it too. The ``=`` form (``--video-pruning-rate=-0.5``) is read as meant.

    ## Why it matters

    ``vllm serve`` fails before loading anything: ``IndexError: list index out of range`` (or
    argparse's "expected one argument" / "unrecognized arguments"), far from the value that
    caused it.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --mm-processor-cache-gb -0.5
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --mm-processor-cache-gb=-0.5
    ```

    ## Fix safety

    The fix writes the value with ``=`` (the form SpecWizard's exports always use); whether a
    negative value is meant is for the user to check.

    ## Source

    vllm/utils/argparse_utils.py ``FlexibleArgumentParser.parse_args`` (the dotted-argument loop:
    ``processed_arg.startswith("-") and "." in processed_arg`` ... ``processed_args[i + 1]``), 0.32;
    found by the schema corpus (``benchmarks/conformance_schema.py``, 0.32).
    """

    id = "SD018"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("command",)
    phase = "parse"

    def check(self, ctx):
        for note in import_notes(ctx, "dotted_value_word"):
            d = note.detail or {}
            word = d.get("word", "?")
            opt = d.get("option")
            hint = f" Write {opt}={word}." if opt and not str(word).startswith("--") else ""
            yield self.finding(f"{note.message}: `vllm serve` fails before loading anything.{hint}",
                               fields=[note.field if note.field in SERVE_FIELDS or note.field == "command"
                                       else f"extra_args.{note.field}"],
                               fixes=[Patch(description="Write the value with '=' (--option=VALUE)",
                                            unset=["import_notes.dotted_value_word"])])
