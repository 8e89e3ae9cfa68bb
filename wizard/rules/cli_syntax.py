"""How the command line was *written* (phase P in docs/vllm-rules.md: vLLM's argument parser).

These rules read ``ServeConfig.import_notes`` (set by the importer, wizard/importers.py):
malformed ``--speculative-config`` JSON (R001), the JSON form mixed with dotted keys (R002),
duplicate dotted keys (R003), ``--spec-*`` shorthands colliding with the JSON (R005) and
deprecated spellings. The exported command is always strict JSON with modern names, so each
fix removes the note: applying it means "write it the way the export does".
"""

from __future__ import annotations

import json

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register

_LLAMA = "vllm serve meta-llama/Llama-3.1-8B-Instruct"


def _notes(ctx, kind: str):
    return [n for n in ctx.config.import_notes if n.kind == kind]


def _spec_json(ctx) -> str:
    spec = ctx.spec
    if spec is None:
        return "{}"
    return json.dumps(spec.model_dump(exclude_none=True), separators=(",", ":"))


@register
class MalformedSpecJson(Rule):
    """SD002 — ``--speculative-config`` is not strict JSON (R001).

    **What it does.** Reports an ``import_notes`` entry of kind ``json_malformed``: single quotes,
    a Python dict (``True``/``None``), trailing commas or doubled escaping from wrapper scripts.
    The message shows where the problem is and the corrected JSON the wizard read.

    **Why it matters.** vLLM parses the value with ``json.loads``; argparse then exits with code
    2: ``argument --speculative-config/-sc: Value ... cannot be converted to``.

    **Anti-pattern.** ``--speculative-config "{'method':'ngram','num_speculative_tokens':3}"``

    **Best practice.** Single-quote the whole value in the shell and use double quotes inside,
    or use dotted keys (``--speculative-config.method ngram``).

    **Fix safety.** Safe: the export always writes strict JSON with the same content.

    Source: vllm/engine/arg_utils.py ``add_cli_args`` (type ``optional_type(json.loads)``),
    0.32 and 0.33; docs/vllm-rules.md R001 (C11).
    """

    id = "SD002"
    title = "--speculative-config is not valid JSON"
    severity = Severity.ERROR
    fields = ("speculative_config",)
    topic = "cli_syntax"
    phase = "parse"
    why = "vLLM reads --speculative-config with json.loads; anything else exits with code 2 before start."
    bad = _LLAMA + " --speculative-config \"{'method':'ngram','num_speculative_tokens':3}\""
    good = _LLAMA + " --speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3}'"
    source = "vllm/engine/arg_utils.py add_cli_args; docs/vllm-rules.md R001"
    fix_safety = "Safe: same content, strict JSON."

    def check(self, ctx):
        for note in _notes(ctx, "json_malformed"):
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


@register
class JsonAndDottedMixed(Rule):
    """SD003 — JSON ``--speculative-config`` together with dotted ``--speculative-config.KEY`` (R002).

    **What it does.** Reports an ``import_notes`` entry of kind ``json_and_dotted``.

    **Why it matters.** vLLM's parser turns the dotted keys into one extra
    ``--speculative-config`` JSON appended at the end; argparse keeps the last one, so the
    **whole JSON object is dropped silently** (method and model disappear), whatever the order.

    **Anti-pattern.** ``--speculative-config '{"method":"eagle3","model":"..."}' --speculative-config.num_speculative_tokens 5``

    **Best practice.** One spelling per command: all JSON or all dotted keys.

    **Fix safety.** The merge keeps what the user wrote (dotted keys win on a clash), which is
    not what vLLM would have run; review it.

    Source: vllm/utils/argparse_utils.py ``FlexibleArgumentParser.parse_args`` (0.32, 0.33);
    docs/vllm-rules.md R002, §8.1 (C05, C06).
    """

    id = "SD003"
    title = "JSON --speculative-config mixed with dotted keys: vLLM drops the JSON"
    severity = Severity.WARNING
    fields = ("speculative_config",)
    topic = "cli_syntax"
    phase = "parse"
    why = "argparse keeps only the last --speculative-config, which vLLM builds from the dotted keys."
    bad = _LLAMA + " --speculative-config '{\"method\":\"ngram\",\"prompt_lookup_max\":4}' --speculative-config.num_speculative_tokens 3"
    good = _LLAMA + " --speculative-config.method ngram --speculative-config.prompt_lookup_max 4 --speculative-config.num_speculative_tokens 3"
    source = "vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args; docs/vllm-rules.md R002"
    fix_safety = "Review: the merged config is what was meant, not what vLLM would run."

    def check(self, ctx):
        for note in _notes(ctx, "json_and_dotted"):
            d = note.detail or {}
            dropped = d.get("json") if isinstance(d.get("json"), dict) else d.get("dropped")
            current = ctx.spec.model_dump(exclude_none=True) if ctx.spec is not None else {}
            fixes = []
            if isinstance(dropped, dict):
                merged = {**dropped, **current}
                fixes.append(Patch(description="Merge both into one JSON object",
                                   set={"speculative_config": merged}, unset=["import_notes.json_and_dotted"]))
            fixes.append(Patch(description="Keep only the dotted keys (what vLLM runs)", unset=["import_notes.json_and_dotted"]))
            extra = f" Dropped: {json.dumps(dropped)}." if isinstance(dropped, dict) else ""
            yield self.finding(
                "--speculative-config JSON and --speculative-config.KEY dotted keys are both given: vLLM keeps "
                f"only the dotted keys and silently drops the whole JSON object.{extra}",
                fields=[note.field or "speculative_config"],
                fixes=fixes,
            )


@register
class DuplicateDottedKey(Rule):
    """SD004 — the same dotted ``--speculative-config.KEY`` given twice (R003).

    **What it does.** Reports ``import_notes`` of kind ``duplicate_key``.

    **Why it matters.** vLLM keeps the last value with a ``Found duplicate keys`` warning; an
    earlier value the user may rely on is ignored.

    **Anti-pattern.** ``--speculative-config.num_speculative_tokens 3 ... --speculative-config.num_speculative_tokens 4``

    **Best practice.** Give each key once.

    **Fix safety.** Safe: keeps the last value, exactly what vLLM runs.

    Source: vllm/utils/argparse_utils.py ``parse_args`` (0.32, 0.33); docs/vllm-rules.md R003 (C07).
    """

    id = "SD004"
    title = "Dotted speculative-config key given twice (last wins)"
    severity = Severity.WARNING
    fields = ("speculative_config",)
    topic = "cli_syntax"
    phase = "parse"
    why = "vLLM keeps the last value and only logs a warning."
    bad = _LLAMA + " --speculative-config.method ngram --speculative-config.num_speculative_tokens 3 --speculative-config.num_speculative_tokens 4"
    good = _LLAMA + " --speculative-config.method ngram --speculative-config.num_speculative_tokens 4"
    source = "vllm/utils/argparse_utils.py; docs/vllm-rules.md R003"
    fix_safety = "Safe."

    def check(self, ctx):
        for note in _notes(ctx, "duplicate_key"):
            yield self.finding(
                f"{note.field}: given more than once; vLLM keeps the last value. {note.message}",
                fields=[note.field],
                fixes=[Patch(description="Keep the last value only", unset=["import_notes.duplicate_key"])],
            )


@register
class ShorthandConflict(Rule):
    """SD005 — ``--spec-method``/``--spec-model``/``--spec-tokens`` together with the same key in
    ``--speculative-config`` (R005).

    **What it does.** Reports ``import_notes`` of kind ``shorthand_conflict``.

    **Why it matters.** ``EngineArgs.create_speculative_config`` raises
    ``--spec-method and --speculative-config['method'] are mutually exclusive`` (a bare ValueError).

    **Anti-pattern.** ``--spec-method ngram --speculative-config '{"method":"ngram",...}'``

    **Best practice.** One spelling per key.

    **Fix safety.** Safe: keeps the value the wizard imported, written once.

    Source: vllm/engine/arg_utils.py ``create_speculative_config`` (0.32 L2068, 0.33 L2108);
    docs/vllm-rules.md R005 (E13, C18).
    """

    id = "SD005"
    title = "--spec-* shorthand and --speculative-config set the same key"
    severity = Severity.ERROR
    fields = ("speculative_config",)
    topic = "cli_syntax"
    phase = "config"
    why = "vLLM refuses a key given both as --spec-* and inside --speculative-config."
    bad = _LLAMA + " --spec-method ngram --speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3}'"
    good = _LLAMA + " --speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3}'"
    source = "vllm/engine/arg_utils.py create_speculative_config; docs/vllm-rules.md R005"
    fix_safety = "Safe."

    _SHORTHANDS = {"spec_method": "method", "spec_model": "model", "spec_tokens": "num_speculative_tokens"}

    def check(self, ctx):
        noted = {(n.detail or {}).get("key") or n.field.split(".")[-1] for n in _notes(ctx, "shorthand_conflict")}
        spec = ctx.spec
        for name, key in self._SHORTHANDS.items():
            # dict/YAML input: the shorthand sits in extra_args next to the same key
            if name in ctx.config.extra_args and spec is not None and key not in noted and key in spec.model_fields_set:
                flag = "--" + name.replace("_", "-")
                yield self.finding(
                    f"{flag} and --speculative-config['{key}'] are mutually exclusive: vLLM raises ValueError. "
                    "Give the key once.",
                    fields=[f"speculative_config.{key}"],
                    fixes=[Patch(description=f"Drop {flag}; keep speculative_config.{key}", unset=[f"extra_args.{name}"])],
                )
        for note in _notes(ctx, "shorthand_conflict"):
            d = note.detail or {}
            flag = d.get("flag") or d.get("old") or "--spec-*"
            key = d.get("key") or note.field.split(".")[-1]
            name = str(flag).lstrip("-").replace("-", "_")
            yield self.finding(
                f"{flag} and --speculative-config['{key}'] are mutually exclusive: vLLM raises ValueError. "
                "Give the key once.",
                fields=[note.field],
                fixes=[Patch(description=f"Drop {flag}; keep speculative_config.{key}",
                             unset=["import_notes.shorthand_conflict", f"extra_args.{name}"])],
            )


@register
class DeprecatedSpelling(Rule):
    """SD006 — a deprecated option spelling (``--speculative-model``, ``--num-speculative-tokens``,
    ``ngram_prompt_lookup_max`` ...).

    **What it does.** Reports ``import_notes`` of kind ``deprecated_flag`` with the modern spelling
    the wizard used instead.

    **Why it matters.** The V0 flags were removed from vLLM; current versions fail with
    ``unrecognized arguments``. Old tutorials still show them.

    **Anti-pattern.** ``vllm serve M --speculative-model D --num-speculative-tokens 3``

    **Best practice.** ``--speculative-config '{"model":"D","num_speculative_tokens":3}'``.

    **Fix safety.** Safe: same meaning, current spelling (the export writes it).

    An error, not a warning: vLLM 0.32/0.33 reject every one of these spellings (removed flags
    fail in argparse, legacy JSON keys with ``Unexpected keyword argument``). MTP method aliases,
    which vLLM still accepts, are SD041.

    Source: vLLM V0 -> V1 migration (flags removed in vLLM 0.10); vllm/engine/arg_utils.py
    (0.32, 0.33) has no such flags; SpeculativeConfig forbids the legacy keys (R009).
    """

    id = "SD006"
    title = "Deprecated option spelling"
    severity = Severity.ERROR
    fields = ()
    topic = "cli_syntax"
    phase = "parse"
    why = "Old V0 spellings are not understood by current vLLM; the modern form is shown."
    bad = "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-model '[ngram]' --num-speculative-tokens 3 --ngram-prompt-lookup-max 4"
    good = _LLAMA + " --speculative-config '{\"model\":\"[ngram]\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'"
    source = "vLLM V1 migration; vllm/engine/arg_utils.py (0.32, 0.33)"
    fix_safety = "Safe."

    def check(self, ctx):
        notes = _notes(ctx, "deprecated_flag")
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
