from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import import_notes
from wizard.rules.registry import Rule, Severity, register


@register
class MalformedSpecJson(Rule):
    r"""--speculative-config is not valid JSON

    ## What it does

    Reports an ``import_notes`` entry of kind ``json_malformed``: single quotes,
    a Python dict (``True``/``None``), trailing commas or doubled escaping from wrapper scripts.
    The message shows where the problem is and the corrected JSON the wizard read.

    ## Why it matters

    vLLM parses the value with ``json.loads``; argparse then exits with code
    2: ``argument --speculative-config/-sc: Value ... cannot be converted to``.

    ## Example

    ``--speculative-config "{'method':'ngram','num_speculative_tokens':3}"``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config "{'method':'ngram','num_speculative_tokens':3}"
    ```

    ## Use instead

    Single-quote the whole value in the shell and use double quotes inside,
    or use dotted keys (``--speculative-config.method ngram``).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: the export always writes strict JSON with the same content.

    ## Source

    vllm/engine/arg_utils.py ``add_cli_args`` (type ``optional_type(json.loads)``),
    0.32 and 0.33; docs/vllm-rules.md R001 (C11).
    """

    id = "SD002"
    severity = Severity.ERROR
    fields = ("speculative_config",)
    phase = "parse"

    def check(self, ctx):
        for note in import_notes(ctx, "json_malformed"):
            d = note.detail or {}
            pos = d.get("position")
            raw = d.get("raw")
            err = d.get("error") or note.message
            corrected = d.get("corrected")
            where = f" at position {pos}" if pos is not None else ""
            shown = f" in {raw!r}" if raw is not None else ""
            if corrected:
                fixes = [Patch(description=f"Write strict JSON: {corrected}", unset=["import_notes.json_malformed"])]
                tail = f" Corrected: '{corrected}'"
            else:
                fixes = [Patch(description="Remove the unreadable --speculative-config (no speculation)",
                               unset=["import_notes.json_malformed", "speculative_config"])]
                tail = " The text could not be repaired; write it as a JSON object in single quotes, or as dotted keys."
            yield self.finding(
                f"--speculative-config is not strict JSON{where}{shown}: {err}. vLLM exits with "
                f"'cannot be converted to'.{tail}",
                fields=[note.field or "speculative_config"],
                fixes=fixes,
            )
