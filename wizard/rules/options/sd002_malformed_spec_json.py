from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import import_notes
from wizard.rules.registry import Rule, Severity, register


@register
class MalformedSpecJson(Rule):
    r"""--speculative-config is not a JSON object vLLM can read

    ## What it does

    Reports an ``import_notes`` entry of kind ``json_malformed``: single quotes,
    a Python dict (``True``/``None``), trailing commas, doubled escaping from wrapper scripts,
    stray text after a complete object, or a file name (``spec.json``, ``@spec.json``: vLLM reads
    the value as JSON, never as a file; the fix inlines the file's object).
    The message shows where the problem is and the corrected JSON the wizard read. Also the
    kind ``not_an_object``: valid JSON that is not an object (``7``, ``[]``, ``"eagle3"``, a YAML
    list), or the flag with no value.

    ## Why it matters

    vLLM parses the value with ``json.loads``; argparse then exits with code
    2: ``argument --speculative-config/-sc: Value ... cannot be converted to``. A JSON value that
    is not an object passes the parser and stops the engine in
    ``EngineArgs.create_speculative_config`` (``self.speculative_config.items()``); the flag with
    no value is argparse's ``expected one argument``.

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

    vllm/engine/arg_utils.py ``add_cli_args`` (type ``optional_type(json.loads)``) and
    ``create_speculative_config`` (0.32 L2086), 0.32 and 0.33; docs/vllm-rules.md R001 (C11).
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
            if corrected and d.get("file"):
                fixes = [Patch(description=f"Inline the file's object as JSON: {corrected}",
                               unset=["import_notes.json_malformed"])]
                tail = (f" Inline its content ('{corrected}'), or put speculative_config in a --config YAML file, "
                        "which vLLM does read.")
            elif corrected:
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
        for note in import_notes(ctx, "not_an_object"):
            d = note.detail or {}
            remove = Patch(description="Remove the --speculative-config that is not an object (no speculation)",
                           unset=["import_notes.not_an_object", "speculative_config"])
            if d.get("raw") is True:  # the flag with no value
                msg = ("--speculative-config is given no value: vLLM's parser exits with 'argument "
                       "--speculative-config/-sc: expected one argument' (code 2).")
            else:
                msg = (f"--speculative-config is {d.get('error') or 'not a JSON object'} ({d.get('raw')!r}): vLLM's "
                       "parser reads any JSON value, then EngineArgs.create_speculative_config needs a mapping and "
                       "the engine stops at startup ('... has no attribute 'items''). Give a JSON object, e.g. "
                       "'{\"method\":\"ngram\",\"num_speculative_tokens\":3}'.")
            yield self.finding(msg, fields=[note.field or "speculative_config"], fixes=[remove])
