"""Options, in the order given, -> ServeConfig, resolved the way vLLM resolves them: the collector
shared by the command importer (:mod:`wizard.io.argv`) and the ``--config`` YAML importer
(:mod:`wizard.io.yaml_config`).

What it reproduces (vLLM 0.32/0.33 ``vllm/utils/argparse_utils.py`` ``FlexibleArgumentParser``
and ``vllm/engine/arg_utils.py`` ``EngineArgs.create_speculative_config``): the last value of an
option wins; dotted ``--speculative-config.KEY`` options replace the whole JSON object; the
``--spec-*`` shorthands conflict with the same key in the config; old spellings (vLLM 0.8's
standalone flags and keys, :mod:`wizard.vllm.legacy`) map to the modern key. Every such event
becomes an :class:`~wizard.config.ImportNote` (kinds documented there); options ServeConfig does
not model go to ``extra_args`` verbatim.

How each option reads its value (no value, ``--no-X``, ``nargs='+'``, repeatable, human-readable
ints) comes from vLLM's own parsers of every known release (:data:`CLI`,
:func:`wizard.vllm.options.cli_vocabulary`).
"""

from __future__ import annotations

import json
from typing import Any

from wizard.config import SERVE_FIELDS, ConfigError, ImportNote, ServeConfig, config_from_dict
from wizard.io.spec_json import duplicate_keys, json_text, parse_dotted_value, parse_spec_json
from wizard.vllm import legacy
from wizard.vllm.cli_parse import SPEC_SHORTHANDS, convert
from wizard.vllm.options import cli_vocabulary

__all__ = ["Collector", "CLI", "SPEC_SHORTHANDS", "SPEC_NAMES", "POSITIONAL_KEY", "MAX_OPTIONS", "KNOWN_BOOLS",
           "MODELLED_BOOLS", "bool_literal", "set_nested"]

#: how `vllm serve` reads each option, over every known release (generated data)
CLI = cli_vocabulary()


#: the dests that hold the speculative config: its long name and its short alias (``-sc``)
SPEC_NAMES = ("speculative_config", *sorted(a for a, d in CLI.short_aliases.items() if d == "speculative_config"))

#: ``extra_args`` key holding stray positional arguments (a list of strings).
POSITIONAL_KEY = "_positional"

#: Most options one command or --config file may give. vLLM 0.32's `vllm serve` parser has about
#: 400 (``wizard/data/vllm/<X.Y>/serve_options.json``); more is not a vLLM command, and the
#: per-option rules would take seconds on it.
MAX_OPTIONS = 1000

MODELLED_BOOLS = frozenset(n for n in SERVE_FIELDS if ServeConfig.model_fields[n].annotation in (bool | None,))
_MODELLED_STR = frozenset(n for n in SERVE_FIELDS if ServeConfig.model_fields[n].annotation in (str | None, str))
#: options that take no value or an optional true/false (``--X``, ``--X true``, ``--X=false``)
KNOWN_BOOLS = CLI.boolean_optional | CLI.store_true | CLI.store_boolean | MODELLED_BOOLS


def bool_literal(tok: str) -> bool | None:
    """``true``/``false`` (any case) -> bool, else None."""
    low = tok.lower()
    return True if low == "true" else False if low == "false" else None


def set_nested(d: dict, keys: list[str], value: Any) -> list[tuple[str, Any, Any]]:
    """vLLM's create_nested_dict + recursive_dict_update; returns duplicates (path, old, new)."""
    dups: list[tuple[str, Any, Any]] = []
    cur = d
    for k in keys[:-1]:
        nxt = cur.get(k)
        if not isinstance(nxt, dict):
            if k in cur:
                dups.append((k, cur[k], {}))
            nxt = {}
            cur[k] = nxt
        cur = nxt
    last = keys[-1]
    if isinstance(value, list) and isinstance(cur.get(last), list):
        cur[last] = cur[last] + value
    elif isinstance(value, dict) and isinstance(cur.get(last), dict):
        for k, v in value.items():
            dups += [(f"{last}.{p}", o, n) for p, o, n in set_nested(cur[last], [k], v)]
    else:
        if last in cur:
            dups.append((".".join(keys), cur[last], value))
        cur[last] = value
    return dups


class Collector:
    """Collects options in order, then resolves them into a ServeConfig like vLLM does."""

    def __init__(self, origin: str):
        self.origin = origin  # 'command' | 'yaml'
        self.model: str | None = None
        self.top: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}
        self.invalid: dict[str, Any] = {}
        self.env: dict[str, str] = {}
        self.read_files = False  # read a --speculative-config value that names a file (faces that read --config FILE)
        self.notes: list[ImportNote] = []
        self.spec_json: list[tuple[Any, str]] = []  # (raw value, spelling)
        self.dotted: dict[str, Any] = {}
        self.dotted_spellings: list[str] = []
        self.shorthands: list[tuple[str, str, Any]] = []  # (flag, key, value)
        self.deprecated: list[tuple[str, str, Any]] = []  # (old spelling, key, value)
        self.positional: list[str] = []
        self.model_positional = False  # the model is `vllm serve MODEL`'s positional argument
        self.n_options = 0

    def count(self, spelled: str) -> None:
        """One more option; more than :data:`MAX_OPTIONS` is not a real `vllm serve` command."""
        self.n_options += 1
        if self.n_options > MAX_OPTIONS:
            where = "command" if self.origin == "command" else "config"
            raise ConfigError(
                f"{where}: more than {MAX_OPTIONS} options (at {spelled[:60]!r}); `vllm serve` has about 400, so this "
                "is not a vLLM command line or --config file", field=where)

    def _spelling(self, head: str, spelled: str) -> None:
        """Note the option string vLLM's parser gets for a modelled option that is not its full
        name (an alias such as ``-tp`` / ``-sc``, a ``--spec-*`` shorthand, a YAML ``tp:``): the
        config keeps only the field, and which release's parser knows that string varies (rule
        SD008). A command word loses its ``=value``; a YAML key ``K:`` reaches argparse as ``--K``."""
        if head in SPEC_SHORTHANDS:
            path = f"speculative_config.{SPEC_SHORTHANDS[head]}"
        elif head in SPEC_NAMES:
            path = "speculative_config"
        elif head in SERVE_FIELDS and head != "model":
            path = head
        else:
            return
        opt = spelled.split("=", 1)[0] if self.origin == "command" else "--" + spelled[:-1].lstrip("-")
        opt = opt.split(".", 1)[0]  # --speculative-config.KEY: argparse gets --speculative-config '{...}'
        if opt.startswith("-O") and not opt.startswith("--"):
            opt = "-O"  # -O3 / -Odecode: argparse's attached value of -O
        full = "--" + head.replace("_", "-")
        if opt.replace("_", "-") in (full, "--no-" + full[2:]) and head not in SPEC_SHORTHANDS:
            return  # the full name or its --no- form (FlexibleArgumentParser reads '_' as '-')
        if any(n.kind == "option_spelling" and n.detail.get("option") == opt for n in self.notes):
            return
        self.note("option_spelling", path, f"{opt} (for {path})", option=opt)

    def note(self, kind: str, field: str, message: str, **detail: Any) -> None:
        self.notes.append(ImportNote(kind=kind, field=field, message=message, detail=detail))

    # -- one option --------------------------------------------------------------------
    def option(self, name: str, value: Any, spelled: str, *, typed: bool = False) -> None:
        """``name``: normalised (snake before the first dot); ``value``: str, True (bare),
        False (--no-X), or (YAML) any typed value."""
        self.count(spelled)
        head, dot, rest = name.partition(".")
        self._spelling(head, spelled)
        if dot:
            if head in SPEC_NAMES:
                self._dotted(rest, value, spelled, typed)
            else:
                self._extra(name, value, spelled)
            return
        if name == "model":
            if value is True or value is None:
                self.invalid["model"] = value
                return
            if self.model is not None and self.model != str(value) and self.model_positional:
                # vllm/entrypoints/cli/serve.py: args.model = args.model_tag -- the positional model
                # (a --config file's `model:` comes in as --model after it) is the one served
                self.note("duplicate_key", "model", f"the model is given twice ({self.model!r} as the positional "
                          f"argument and {value!r}); vLLM serves the positional one", key="model",
                          values=[str(value), self.model], positional=True)
                return
            if self.model is not None and self.model != str(value):
                self.note("duplicate_key", "model", f"the model is given twice ({self.model!r} and {value!r}); the last wins",
                          key="model", values=[self.model, str(value)])
            self.model = str(value)
            return
        if name in SPEC_NAMES:
            self.spec_json.append((value, spelled))
            return
        if name in SPEC_SHORTHANDS:
            if value in ("", "None") and not typed and name != "spec_tokens":
                # optional_type(str): vLLM's parser reads '' / 'None' as not given -- where the
                # option's choices hold None (0.31+); 0.27-0.30 list the text 'None', so argparse
                # refuses the None it converted to. Kept raw (no speculative config) so the export
                # reproduces it and SD017 judges it with the release's own choices.
                self.extra[name] = value
                return
            if isinstance(value, str) and name == "spec_tokens":
                try:
                    value = int(value)
                except ValueError:
                    pass
            self.shorthands.append((spelled, name, value))
            return
        if name in legacy.SPEC_FLAGS:
            if isinstance(value, str) and not typed:
                value = parse_dotted_value(value)
            self.deprecated.append((spelled, legacy.SPEC_FLAGS[name], value))
            return
        if name in SERVE_FIELDS:
            if typed and value is None:
                return
            if value is True and name not in MODELLED_BOOLS:
                # a value-taking option without its value: keep it raw (vLLM: expected one argument)
                self.invalid[name] = True
                self.top.pop(name, None)
                return
            if name in CLI.number_types and (isinstance(value, str) or (
                    typed and isinstance(value, (int, float)) and not isinstance(value, bool))):
                # the text goes through the option's own argparse type (int, float,
                # human_readable_int[_or_auto]: '1k', 'auto'), never pydantic's lax reading
                # ('1.0' -> 1); a --config YAML number is passed to argparse as str(value)
                # (FlexibleArgumentParser.load_config_file). What argparse refuses is kept raw
                # for SD010 to name.
                try:
                    value = convert(CLI.number_types[name], value if isinstance(value, str) else str(value))
                except ValueError:
                    self.invalid[name] = value
                    self.top.pop(name, None)
                    return
            if typed and name in _MODELLED_STR and isinstance(value, (int, float)) and not isinstance(value, bool):
                value = str(value)  # vLLM's YAML loader passes str(value) to argparse
            if name in self.top and self.top[name] != value:
                self.note("duplicate_key", name, f"{spelled} is given twice; the last value ({value!r}) wins",
                          key=name, values=[self.top[name], value])
            self.invalid.pop(name, None)
            self.top[name] = value
            return
        self._extra(name, value, spelled)

    def _extra(self, name: str, value: Any, spelled: str) -> None:
        if value is True and name in CLI.takes_value:
            # a value-taking option without its value (vLLM: "expected one argument", exit 2):
            # kept raw, so the check says so and the export writes it as typed (never "true")
            self.invalid[name] = True
            self.extra.pop(name, None)
            return
        if name in CLI.append and not isinstance(value, list):
            prev = self.extra.get(name)
            self.extra[name] = (prev if isinstance(prev, list) else ([] if prev is None else [prev])) + [value]
            return
        if name in self.extra and self.extra[name] != value:
            self.note("duplicate_key", f"extra_args.{name}", f"{spelled} is given twice; the last value ({value!r}) wins",
                      key=name, values=[self.extra[name], value])
        self.extra[name] = value

    def _dotted(self, rest: str, value: Any, spelled: str, typed: bool) -> None:
        append = rest.endswith("+")
        if append:
            rest = rest[:-1]
        keys = rest.split(".")
        keys[0] = keys[0].replace("-", "_")
        if any(k == "" for k in keys):
            self._extra(f"speculative_config.{rest}" + ("+" if append else ""), value, spelled)
            return
        if value is True and not typed:
            val: Any = True  # `--speculative-config.KEY` at the very end: no value (vLLM: IndexError)
        elif append:
            val = str(value if not isinstance(value, bool) else json.dumps(value)).split(",")
        elif isinstance(value, str) and not typed:
            val = parse_dotted_value(value)
        else:
            val = value
        self.dotted_spellings.append(spelled)
        for path, old, new in set_nested(self.dotted, keys, val):
            self.note("duplicate_key", f"speculative_config.{path}",
                      f"--speculative-config.{path} is given twice; vLLM keeps the last value ({new!r})",
                      key=path, values=[old, new])

    # -- resolution ----------------------------------------------------------------------
    def _spec_from_json(self) -> tuple[dict | None, Any, bool]:
        """(obj, raw, keep_raw_as_invalid) of the effective --speculative-config value."""
        if len(self.spec_json) > 1:
            kept = self.spec_json[-1][0]
            self.note("duplicate_key", "speculative_config",
                      f"{self.spec_json[-1][1]} is given {len(self.spec_json)} times; vLLM keeps the last one",
                      key="speculative_config", values=[v for v, _ in self.spec_json], dropped=[v for v, _ in self.spec_json[:-1]])
        else:
            kept = self.spec_json[-1][0]
        spelled = self.spec_json[-1][1]
        if isinstance(kept, dict):
            return {str(k): v for k, v in kept.items()}, kept, False
        if kept is None:
            return None, None, False
        if isinstance(kept, str):
            if kept.strip() in ("", "None", "null"):
                return None, kept, False
            obj, problem = parse_spec_json(kept, read_files=self.read_files)
            if problem is None:
                for key, values in duplicate_keys(kept).items():  # json.loads keeps the last, silently (SD004)
                    self.note("duplicate_key", f"speculative_config.{key}", f"{spelled} gives the JSON key {key!r} "
                              f"{len(values)} times; vLLM's json.loads keeps the last ({values[-1]!r}) without a warning",
                              key=key, values=values, source="json")
                return obj, kept, False
            if problem["kind"] == "json_malformed":
                if problem["corrected"] is not None:
                    msg = (f"{spelled} is not strict JSON ({problem['error']} at char {problem['position']}); "
                           f"vLLM rejects it. Read as {problem['corrected']}")
                else:
                    msg = (f"{spelled} is not valid JSON ({problem['error']} at char {problem['position']}) and could "
                           "not be repaired; vLLM rejects it. Give a JSON object in single quotes, or dotted keys")
            else:
                msg = f"{spelled} must be a JSON object ({problem['error']}); vLLM cannot use it"
            self.note(problem["kind"], "speculative_config", msg, raw=problem["raw"], error=problem["error"],
                      position=problem["position"], corrected=problem["corrected"],
                      **({"file": problem["file"]} if problem.get("file") else {}))
            return obj, kept, obj is None
        # bare flag (True), a YAML list/number...
        name = type(kept).__name__
        what = "no value" if kept is True else f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
        self.note("not_an_object", "speculative_config", f"{spelled} has {what}; vLLM needs a JSON object",
                  raw=kept, error=f"{what}, not an object", position=0, corrected=None)
        return None, kept, True

    def _rename_deprecated_keys(self, spec: dict) -> dict:
        out: dict[str, Any] = {}
        renamed = []
        for k, v in spec.items():
            new = legacy.SPEC_KEY_RENAMES.get(k)
            if new is None:
                out[k] = v
            else:
                renamed.append((k, new, v))
        for old, new, v in renamed:
            detail = {"old": f"speculative_config.{old}", "new": f"speculative_config.{new}", "path": f"speculative_config.{new}",
                      "value": v}
            if new in out:
                detail["dropped"] = v
                msg = (f"speculative_config key '{old}' is an old spelling of '{new}' (vLLM rejects it: Unexpected keyword "
                       f"argument); '{new}' is also given, so {new}={out[new]!r} is kept")
            else:
                out[new] = v
                msg = f"speculative_config key '{old}' is an old spelling; vLLM now calls it '{new}'"
            self.notes.append(ImportNote(kind="deprecated_flag", field=f"speculative_config.{new}", message=msg, detail=detail))
        return out

    def build(self) -> ServeConfig:
        spec: dict | None = None
        spec_raw_invalid = False
        raw: Any = None
        obj = None
        if self.spec_json:
            obj, raw, spec_raw_invalid = self._spec_from_json()
        if self.dotted:
            spec = dict(self.dotted)
            if self.spec_json:
                dropped = obj if obj is not None else raw
                self.note(
                    "json_and_dotted", "speculative_config",
                    "--speculative-config JSON and dotted --speculative-config.KEY options are both given: vLLM silently "
                    f"drops the whole JSON object {json_text(dropped)} and keeps only the dotted keys "
                    f"{json_text(self.dotted)}; use one form",
                    dropped=dropped, raw=raw, dotted=dict(self.dotted),
                )
                spec_raw_invalid = False
        elif obj is not None:
            spec = obj
        if spec is not None:
            spec = {str(k).replace("-", "_"): v for k, v in spec.items()}
            spec = self._rename_deprecated_keys(spec)
        for old, key, value in self.deprecated:
            new_spelling = f"--speculative-config.{key}"
            detail = {"old": old, "new": new_spelling, "path": f"speculative_config.{key}", "value": value}
            if spec is None:
                spec = {}
            if key in spec and spec[key] != value:
                detail["dropped"] = value
                msg = (f"{old} is an old flag (removed from vLLM; use {new_spelling}); the speculative config already "
                       f"sets {key}={spec[key]!r}, which is kept")
            else:
                spec[key] = value
                msg = f"{old} is an old flag removed from vLLM; use {new_spelling} (or the key in --speculative-config)"
            self.notes.append(ImportNote(kind="deprecated_flag", field=f"speculative_config.{key}", message=msg, detail=detail))
        for flag, name, value in self.shorthands:
            key = SPEC_SHORTHANDS[name]
            if spec is not None and key in spec:
                self.note(
                    "shorthand_conflict", f"speculative_config.{key}",
                    f"{flag} {value} and --speculative-config['{key}'] ({spec[key]!r}) are both given: vLLM raises "
                    f"'{flag} and --speculative-config['{key}'] are mutually exclusive'; keep one",
                    flag=flag, key=key, shorthand_value=value, config_value=spec[key],
                )
                self.extra[name] = value
            else:
                if spec is None:
                    spec = {}
                spec[key] = value
        d: dict[str, Any] = {}
        if self.model is not None:
            d["model"] = self.model
        d.update(self.top)
        if spec is not None:
            d["speculative_config"] = spec
        if self.positional:
            self.extra[POSITIONAL_KEY] = list(self.positional)
        invalid = dict(self.invalid)
        if spec_raw_invalid and spec is None:
            invalid["speculative_config"] = raw
        d["extra_args"] = self.extra
        d["env"] = self.env
        d["invalid_values"] = invalid
        if self.model is None:
            hint = ("`vllm serve MODEL ...` or `--model MODEL`" if self.origin == "command" else "a `model:` key")
            raise ConfigError(f"model: no target model given; add {hint}", field="model")
        cfg = config_from_dict(d)
        return cfg.model_copy(update={"import_notes": list(cfg.import_notes) + self.notes})
