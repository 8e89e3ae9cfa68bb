"""Schema-driven conformance corpus: every `vllm serve` option and every ``speculative_config``
key of one release, drawn from that release's *generated* schema — never from a hand list.

Shared by ``benchmarks/conformance.py --corpus schema`` and ``tests/test_conformance_schema.py``;
put ``tests/`` on ``sys.path`` to import it.

Sources (all generated from vLLM, per release, under ``wizard/data/vllm/<X.Y>/``):

* ``serve_options.json`` — every option string vLLM's serve parser has (long form, short aliases
  such as ``-tp``), its dest, argparse action, ``type``, ``choices``, ``nargs``;
* ``constraints.json`` — the config classes' fields (``kinds``, ``literals``, ``bounds`` such as
  ``ge``/``le``/``gt``, defaults) and the ``EngineArgs`` field -> config class map.

For each option :func:`option_values` derives *valid*, *boundary* and *invalid* values from its
type alone (a switch: the flag and ``--no-`` form; choices: the first and last choice and a
non-choice; numbers: the bound, one past it, a non-number, argparse's number formats ``1e3`` /
``512.0``; JSON options: ``{}``, a list, a number, an unknown key; a config class: one case per
field of the class with the same derivation). Free-text options (``str`` with no choices) have no
value the schema can tell valid or invalid, so only their flag spellings of a safe value are
drawn where the class says the field is a plain label; they are otherwise left out and counted.

Every value is written in the CLI spellings vLLM's parser reads (:func:`spellings`): ``--opt V``,
``--opt=V``, ``--opt_with_underscores V``, the shortest unique prefix (argparse ``allow_abbrev``),
each short alias, and for config classes ``--opt.key V`` (FlexibleArgumentParser's dotted form)
beside ``--opt '{"key": V}'``.

A case is ``(case_id, words)``: the words after ``vllm serve`` (the model first). Judged by
vLLM with :meth:`wizard.vllm.oracle.VllmOracle.check_argv` (its own parser, serve validator and
``create_engine_config``) and by the wizard on ``parse_command(["vllm", "serve", *words])``.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

from wizard.vllm.cli_parse import shortest_prefix
from wizard.vllm.releases import load as load_release_data

__all__ = ["generate_schema", "option_values", "spellings", "SKIPPED_KINDS"]

#: options the corpus does not draw, with why (counted by :func:`generate_schema`'s ``stats``)
SKIPPED_KINDS = {
    "help": "-h/--help prints and exits",
    "free_text": "a free-text value: the schema cannot tell a valid one from an invalid one",
    "model": "the model itself is the case's base",
    "speculative": "drawn per key below (speculative_config)",
    "deprecated_file": "deprecated option that reads a file",
}

SPEC_OPTION = "--speculative-config"


def _classes(release: str) -> dict[str, Any]:
    return load_release_data(release, "constraints.json")["classes"]


def _bounds(release: str, cls: str | None, field: str) -> dict[str, Any]:
    if not cls:
        return {}
    return dict(((_classes(release).get(cls) or {}).get("fields", {}).get(field) or {}).get("bounds") or {})


def _num_values(kind: str, bounds: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) for an int/float field: valid, boundary (the bound), invalid (past it,
    not a number, argparse's other number formats)."""
    out: list[tuple[str, str]] = []
    lo = bounds.get("ge", None)
    gt = bounds.get("gt", None)
    hi = bounds.get("le", None)
    lt = bounds.get("lt", None)
    if kind == "int":
        valid = 1 if (lo is None or lo <= 1) and (gt is None or gt < 1) else int(lo if lo is not None else gt + 1)
        if hi is not None and valid > hi:
            valid = int(hi)
        out.append(("valid", str(valid)))
        if lo is not None:
            out += [("boundary", str(int(lo))), ("below", str(int(lo) - 1))]
        if gt is not None:
            out += [("boundary", str(int(gt) + 1)), ("below", str(int(gt)))]
        if hi is not None:
            out += [("boundary", str(int(hi))), ("above", str(int(hi) + 1))]
        if lt is not None:
            out += [("above", str(int(lt)))]
        out += [("text", "abc"), ("float_format", f"{valid}.0"), ("exp_format", "1e3")]
    else:
        valid = 0.5 if (lo is None or lo <= 0.5) and (hi is None or hi >= 0.5) else (lo if lo is not None else hi)
        out.append(("valid", repr(float(valid))))
        if lo is not None:
            out += [("boundary", repr(float(lo))), ("below", repr(float(lo) - 0.5))]
        if gt is not None:
            out += [("below", repr(float(gt)))]
        if hi is not None:
            out += [("boundary", repr(float(hi))), ("above", repr(float(hi) + 0.5))]
        out += [("text", "abc")]
    return out


def _field_values(release: str, cls: str, name: str, f: dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, JSON value) for one field of a config class, from its kinds/literals/bounds."""
    kinds = f.get("kinds") or []
    out: list[tuple[str, Any]] = []
    if f.get("literals"):
        lits = list(f["literals"])
        out += [("valid", lits[0]), ("valid_last", lits[-1])]
        if not f.get("open"):
            out.append(("not_a_choice", "not-a-choice"))
    elif "bool" in kinds:
        out += [("valid", True), ("valid_false", False), ("not_a_bool", "maybe")]
    elif "int" in kinds:
        for label, text in _num_values("int", f.get("bounds") or {}):
            if label in ("float_format", "exp_format"):
                continue
            out.append((label, int(text) if label != "text" else text))
    elif "float" in kinds:
        for label, text in _num_values("float", f.get("bounds") or {}):
            out.append((label, float(text) if label != "text" else text))
    if "none" in kinds:
        out.append(("null", None))
    return out


def option_values(release: str, opt: str, e: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(label, value words) for one option of ``serve_options.json`` (label ``skip:<kind>`` when
    the schema gives no judgeable value)."""
    dest = e["dest"]
    kind = e["kind"]
    t = str(e.get("type"))
    ea = load_release_data(release, "constraints.json")["engine_args"].get(dest) or {}
    if kind == "_HelpAction":
        return [("skip:help", [])]
    if dest == "model":
        return [("skip:model", [])]
    if opt == SPEC_OPTION or dest == "speculative_config":
        return [("skip:speculative", [])]
    if kind in ("_StoreTrueAction", "BooleanOptionalAction") or not e.get("takes_value", True):
        return [("switch", [])]
    if e.get("choices"):
        ch = [str(c) for c in e["choices"]]
        return [("valid", [ch[0]]), ("valid_last", [ch[-1]]), ("not_a_choice", ["not-a-choice"])]
    if "human_readable_int" in t:
        return [("valid", ["1024"]), ("human", ["1k"]), ("human_binary", ["1Ki"]), ("text", ["abc"]),
                ("float_format", ["512.0"])]
    if t in ("int", "optional_type(int)") or t.endswith("(int)"):
        return [(lab, [v]) for lab, v in _num_values("int", _bounds(release, ea.get("config_class"), dest))]
    if t in ("float", "optional_type(float)"):
        return [(lab, [v]) for lab, v in _num_values("float", _bounds(release, ea.get("config_class"), dest))]
    if "json.loads" in t or "union_dict_and_str" in t:
        return [("empty_object", ["{}"]), ("list", ["[]"]), ("number", ["3"]), ("not_json", ["{bad"])]
    if "parse_dataclass" in t:
        return [("empty_object", ["{}"]), ("list", ["[]"]), ("unknown_key", ['{"no_such_key_zz": 1}'])]
    if kind == "DeprecatedLogConfigFileAction":
        return [("skip:deprecated_file", [])]
    return [("skip:free_text", [])]


def spellings(opt: str, words: list[str], release: str, aliases: list[str]) -> list[tuple[str, list[str]]]:
    """The CLI spellings vLLM's parser reads for ``opt`` with ``words`` as its value."""
    out = [("long", [opt, *words])]
    if len(words) == 1:
        out.append(("equals", [f"{opt}={words[0]}"]))
    if "-" in opt[2:]:
        out.append(("underscores", ["--" + opt[2:].replace("-", "_"), *words]))
    pre = shortest_prefix(opt, release)
    if pre:
        out.append(("prefix", [pre, *words]))
    out += [(f"alias{a}", [a, *words]) for a in aliases]
    return out


def _class_of(t: str) -> str | None:
    if "parse_dataclass(" in t:
        return t.split("parse_dataclass(", 1)[1].split(")", 1)[0]
    return None


def generate_schema(model: str, release: str, stats: dict[str, int] | None = None,
                    all_spellings: bool = False) -> Iterator[tuple[str, list[str]]]:
    """Every option and config-class key of ``release`` (see the module doc), on ``model``.
    Valid values in every spelling; other values in the long form and one more spelling (all
    spellings with ``all_spellings``). ``stats`` counts cases and skipped options per kind."""
    so = load_release_data(release, "serve_options.json")["options"]
    longs = [o for o in so if o.startswith("--")]
    by_dest: dict[str, list[str]] = {}
    for o, e in so.items():
        by_dest.setdefault(e["dest"], []).append(o)
    stats = stats if stats is not None else {}
    seen = set()
    for opt in sorted(longs):
        e = so[opt]
        if opt.startswith("--no-") and e.get("negative"):
            continue
        aliases = [a for a in by_dest[e["dest"]] if not a.startswith("--")]
        vals = option_values(release, opt, e)
        for label, words in vals:
            if label.startswith("skip:"):
                stats[label] = stats.get(label, 0) + 1
                continue
            if label == "switch":
                forms = [("long", [opt])] + [(f"alias{a}", [a]) for a in aliases]
                pre = shortest_prefix(opt, release)
                if pre:
                    forms.append(("prefix", [pre]))
                neg = "--no-" + opt[2:]
                if neg in so:
                    forms.append(("negative", [neg]))
                for sp, w in forms:
                    yield _case(model, e["dest"], label, sp, w, seen, stats)
                continue
            forms = spellings(opt, words, release, aliases)
            if not (label.startswith("valid") or all_spellings):
                forms = forms[:1] + forms[1 + (len(seen) % max(1, len(forms) - 1)):][:1]
            for sp, w in forms:
                yield _case(model, e["dest"], label, sp, w, seen, stats)
        cls = _class_of(str(e.get("type")))
        if cls and cls in _classes(release):
            for name, f in sorted(_classes(release)[cls].get("fields", {}).items()):
                for label, v in _field_values(release, cls, name, f):
                    text = json.dumps(v) if not isinstance(v, str) else v
                    yield _case(model, f"{e['dest']}.{name}", label, "json", [opt, json.dumps({name: v})], seen, stats)
                    if label.startswith("valid") or all_spellings:
                        yield _case(model, f"{e['dest']}.{name}", label, "dotted", [f"{opt}.{name}", text], seen, stats)
    # speculative_config keys on an n-gram base (the one method that needs no drafter files)
    spec = _classes(release).get("SpeculativeConfig", {}).get("fields", {})
    base = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3}
    for name, f in sorted(spec.items()):
        if name in ("method", "model", "draft_model_config", "target_model_config", "draft_parallel_config",
                    "target_parallel_config", "quantization", "revision", "code_revision", "tokenizer"):
            stats["skip:speculative_model_key"] = stats.get("skip:speculative_model_key", 0) + 1
            continue
        for label, v in _field_values(release, "SpeculativeConfig", name, f):
            d = {**base, name: v}
            yield _case(model, f"speculative_config.{name}", label, "json", [SPEC_OPTION, json.dumps(d)], seen, stats)
            if label.startswith("valid") or all_spellings:
                words = []
                for k, x in d.items():
                    words += [f"{SPEC_OPTION}.{k}", json.dumps(x) if not isinstance(x, str) else x]
                yield _case(model, f"speculative_config.{name}", label, "dotted", words, seen, stats)


def _case(model: str, key: str, label: str, spelling: str, words: list[str], seen: set, stats: dict) -> tuple[str, list[str]]:
    cid = f"{key}:{label}:{spelling}"
    while cid in seen:
        cid += "'"
    seen.add(cid)
    stats["cases"] = stats.get("cases", 0) + 1
    return cid, [model, *words]
