"""How a release of vLLM's own parser reads an argv: which option each word sets.

    from wizard.vllm.cli_parse import parse_serve_argv
    out = parse_serve_argv(["M", "--trust-remote", "--speculative-config.method", "ngram"], "0.32")
    [(o.typed, o.option, o.dest) for o in out.options]
    # [('--trust-remote', '--trust-remote-code', 'trust_remote_code'),
    #  ('--speculative-config.method', '--speculative-config', 'speculative_config')]

The launcher reviews *this* reading, not the fields the wizard modelled: vLLM's
``FlexibleArgumentParser`` (``vllm/utils/argparse_utils.py`` ``parse_args``) first rewrites the
words (``--model M`` moved to the front after ``serve``, ``_`` -> ``-`` in names, ``-O3`` ->
``--optimization-level 3``, dotted ``--X.a.b V`` merged into one ``--X JSON`` appended at the
end, ``KEY+`` lists) and then hands them to Python's ``argparse`` with ``allow_abbrev`` (a unique
prefix such as ``--trust-remote`` is the full option). This module repeats the rewrite and then
lets **the same argparse** (the interpreter that runs the server is this one,
``sys.executable``) parse the words against a parser rebuilt from the release's generated option
table (``wizard/data/vllm/<X.Y>/serve_options.json``: every option string, its action class and
``nargs``), so abbreviations, ``--opt=value``, short aliases (``-tp``, ``-cc``), ``--no-X``,
``nargs='+'`` and ``--`` resolve exactly as they will in the server.

``--config FILE`` is recorded as an option (dest ``config``) and its words are *not* read: the
policy treats the file as unreviewed input.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from wizard.io.spec_json import human_readable_int, parse_dotted_value
from wizard.vllm.options import serve_options
from wizard.vllm.releases import nearest_release

__all__ = ["SPEC_SHORTHANDS", "option_dest", "option_negates", "ParsedOption", "ParsedArgv", "parse_serve_argv", "preprocess", "ValueProblem", "value_problems",
           "convert", "dotted_value", "shortest_prefix"]


@dataclass(frozen=True)
class ParsedOption:
    """One option vLLM's parser will set.

    ``typed``: the word(s) as written ('--trust-remote', '-tp', '--speculative-config.method');
    ``option``: the option string argparse matched ('--trust-remote-code'); ``dest``: the
    attribute it sets; ``value``: True/False for a switch, a string, or a list of strings
    (``nargs='+'``, append); ``via``: 'exact', 'abbrev' (unique prefix), 'alias' (a short
    option), 'dotted' (``--X.key V`` merged into ``--X JSON``) or 'config' (``--config``)."""

    typed: str
    option: str
    dest: str
    value: Any
    via: str


@dataclass
class ParsedArgv:
    """The whole reading: options in order, positionals, and why vLLM would exit instead
    (``error``: argparse's own message, e.g. 'ambiguous option: --enable could match ...',
    'unrecognized arguments: --frobnicate'; None when the parser accepts the words)."""

    options: list[ParsedOption] = field(default_factory=list)
    positionals: list[str] = field(default_factory=list)
    error: str | None = None
    release: str = ""

    def by_dest(self) -> dict[str, list[ParsedOption]]:
        out: dict[str, list[ParsedOption]] = {}
        for o in self.options:
            out.setdefault(o.dest, []).append(o)
        return out


class _ParseError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse with errors raised and the typed spelling of each optional remembered."""

    def __init__(self, *a: Any, **k: Any) -> None:
        super().__init__(*a, **k)
        self.spelled: list[tuple[str, str]] = []

    def _get_formatter(self):  # type: ignore[override]
        # argparse builds one formatter per add_argument (to check its metavar), and each asks the
        # terminal for its size; this parser prints no help, so a fixed width does
        return self.formatter_class(prog=self.prog, width=100)

    def error(self, message: str):  # type: ignore[override]
        raise _ParseError(message)

    def exit(self, status: int = 0, message: str | None = None):  # type: ignore[override]
        raise _ParseError(message or f"exit {status}")

    def _parse_optional(self, arg_string):  # type: ignore[override]
        res = super()._parse_optional(arg_string)
        tuples = res if isinstance(res, list) else [res]  # Python >= 3.12.7 returns a list
        for t in tuples:
            if t and t[0] is not None:
                self.spelled.append((arg_string, t[1]))
        return res


class _Record(argparse.Action):
    """Stores nothing; appends (option string, values) to ``namespace._seen``."""

    def __init__(self, option_strings, dest, nargs=None, negative=(), **kw):
        self._negative = frozenset(negative)
        super().__init__(option_strings, dest, nargs=nargs, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        if self.nargs == 0:
            values = option_string not in self._negative
        namespace._seen.append((option_string, self.dest, values))


def _nargs(e: dict[str, Any]) -> Any:
    if not e.get("takes_value", True) or e.get("kind") in ("BooleanOptionalAction", "_StoreTrueAction",
                                                             "_StoreFalseAction", "_StoreConstAction",
                                                             "_HelpAction", "_VersionAction", "_CountAction"):
        return 0
    n = e.get("nargs")
    return n if n in ("+", "*", "?") or isinstance(n, int) else None


@functools.lru_cache(maxsize=16)
def _parser(release: str) -> _Parser:
    data = serve_options(release)
    groups: dict[tuple[str, str], list[str]] = {}
    facts: dict[tuple[str, str], dict[str, Any]] = {}
    for opt, e in data["options"].items():
        key = (e["dest"], e.get("kind", ""))
        groups.setdefault(key, []).append(opt)
        facts.setdefault(key, e)
    p = _Parser(prog="vllm serve", add_help=False, allow_abbrev=bool(data.get("allow_abbrev", True)))
    p.add_argument("model_tag", nargs="?", action=_Record)
    for key, opts in groups.items():
        e = facts[key]
        nargs = _nargs(e)
        neg = [o for o in opts if data["options"][o].get("negative") or o.startswith("--no-")] if nargs == 0 else []
        p.add_argument(*opts, dest=key[0], nargs=nargs, action=_Record, negative=neg)
    return p


#: the ``--spec-*`` shorthands' dests -> the speculative-config key each sets
#: (``EngineArgs.create_speculative_config``, vllm/engine/arg_utils.py, 0.22-0.33: ``--spec-method``,
#: ``--spec-model``, ``--spec-tokens``; mutually exclusive with the same key in ``--speculative-config``)
SPEC_SHORTHANDS: dict[str, str] = {"spec_method": "method", "spec_model": "model", "spec_tokens": "num_speculative_tokens"}


def option_dest(spelled: str, version: Any) -> str | None:
    """The dest ``version``'s parser stores option ``spelled`` in: an exact option string, an alias
    (``--device-memory-utilization``, ``-tp``) or an abbreviation argparse resolves to one option
    (``--gp`` -> ``gpu_memory_utilization``); ``_`` in the name read as ``-`` like
    FlexibleArgumentParser. None when the parser does not know it or the prefix is ambiguous."""
    act, _ = _resolve_option(spelled, version)
    return None if act is None else act.dest


def _resolve_option(spelled: str, version: Any) -> tuple[Any, str]:
    """(argparse action or None, the option string it was matched by) for ``spelled`` in
    ``version``'s mirror parser: exact, ``_`` read as ``-``, or a unique abbreviation."""
    p = _parser(nearest_release(version))
    opt = spelled.split("=", 1)[0]
    if opt.startswith("--"):
        opt = "--" + opt[2:].replace("_", "-")
    act = p._option_string_actions.get(opt)
    if act is None and opt.startswith("--") and p.allow_abbrev:
        tuples = p._get_option_tuples(opt)
        if len(tuples) == 1:
            act, opt = tuples[0][0], tuples[0][1]
    return act, opt


def option_negates(spelled: str, version: Any) -> bool:
    """True when switch ``spelled`` (exact, ``_`` for ``-``, or an abbreviation argparse resolves)
    stores False in ``version``'s parser: ``--no-X``, and the ``--disable-X`` of 0.33's
    ``EnableDisableAction`` (``--enable-hybrid-kv-cache-manager`` for ``disable_hybrid_kv_cache_manager``)."""
    act, opt = _resolve_option(spelled, version)
    return act is not None and opt in getattr(act, "_negative", ())


def shortest_prefix(opt: str, version: Any) -> str | None:
    """The shortest abbreviation of ``opt`` that ``version``'s parser resolves to ``opt`` alone
    (argparse's own ``allow_abbrev`` matching on the mirror parser); None when only the full
    name works."""
    p = _parser(nearest_release(version))
    for n in range(3, len(opt)):
        pre = opt[:n]
        if pre in p._option_string_actions:
            continue
        tuples = p._get_option_tuples(pre)
        if len(tuples) == 1 and tuples[0][1] == opt:
            return pre
    return None


_DOT_HEAD = re.compile(r"(?<=--)[^.]*")


def preprocess(args: list[str]) -> tuple[list[str], dict[str, list[str]], list[str] | None]:
    """vLLM's rewrite of the words before argparse (``FlexibleArgumentParser.parse_args``):
    returns (words, {dotted head -> typed spellings}, the ``--config`` words or None)."""
    args = list(args)
    if args and args[0] == "serve":
        idx = next((i for i, a in enumerate(args) if re.match(r"^--model(=.+|$)", a)), None)
        if idx is not None:
            if args[idx] == "--model" and idx + 1 < len(args):
                tag, rest = args[idx + 1], idx + 2
            else:
                tag, rest = args[idx].removeprefix("--model="), idx + 1
            args = ["serve", tag, *args[1:idx], *args[rest:]]
        args = args[1:]
    config_words = None
    if "--config" in args:
        i = args.index("--config")
        config_words = args[i:i + 2]
        args = args[:i] + args[i + 2:]
    words: list[str] = []
    for i, a in enumerate(args):
        if a.startswith("--"):
            if "=" in a:
                k, v = a.split("=", 1)
                words.append(_DOT_HEAD.sub(lambda m: m.group(0).replace("_", "-"), k, count=1) + "=" + v)
            else:
                words.append(_DOT_HEAD.sub(lambda m: m.group(0).replace("_", "-"), a, count=1))
        elif a.startswith("-O") and a != "-O":
            words += ["--optimization-level", a[3:] if a[2:3] == "=" else a[2:]]
        elif a == "-O" and i + 1 < len(args) and args[i + 1] in {"0", "1", "2", "3"}:
            words.append("--optimization-level")
        else:
            words.append(a)
    # dotted keys: merged into one JSON per head, appended at the end (as vLLM does)
    out: list[str] = []
    dotted: dict[str, Any] = {}
    spelled: dict[str, list[str]] = {}
    skip = set()
    for i, w in enumerate(words):
        if i in skip:
            continue
        if w.startswith("-") and "." in w:
            if "=" in w:
                name, value = w.split("=", 1)
                if "." not in name:
                    out.append(w)
                    continue
            else:
                name = w
                value = words[i + 1] if i + 1 < len(words) else ""
                skip.add(i + 1)
            if name.endswith("+"):
                name = name[:-1]
                value = json.dumps(list(value.split(",")))
            head, *keys = name.split(".")
            try:
                val: Any = json.loads(value)
            except ValueError:
                val = value
            node = dotted.setdefault(head, {})
            for k in keys[:-1]:
                nxt = node.get(k)
                if not isinstance(nxt, dict):
                    nxt = node[k] = {}
                node = nxt
            if keys:
                node[keys[-1]] = val
            spelled.setdefault(head, []).append(name)
            continue
        out.append(w)
    for head, obj in dotted.items():
        out += [head, json.dumps(obj)]
    return out, spelled, config_words


def parse_serve_argv(args: list[str], version: Any) -> ParsedArgv:
    """Read ``args`` (the words after the entrypoint: ``["serve", M, ...]`` for ``vllm serve``,
    ``["--model", M, ...]`` for the api_server module) the way ``version``'s parser reads them.
    Never raises: argparse's refusal is in ``error``."""
    release = nearest_release(version)
    out = ParsedArgv(release=release)
    words, dotted_spelled, config_words = preprocess([str(a) for a in args])
    if config_words is not None:
        out.options.append(ParsedOption("--config", "--config", "config",
                                        config_words[1] if len(config_words) > 1 else True, "config"))
    p = _parser(release)
    p.spelled = []
    ns = argparse.Namespace(_seen=[])
    try:
        _, extra = p.parse_known_args(words, ns)
    except _ParseError as err:
        out.error = str(err)
        extra = []
    except Exception as err:  # pragma: no cover - argparse internals
        out.error = f"{type(err).__name__}: {err}"
        extra = []
    if extra:
        unknown = [w for w in extra if w.startswith("-")]
        out.error = out.error or ("unrecognized arguments: " + " ".join(extra))
        out.positionals += [w for w in extra if not w.startswith("-")]
        for w in unknown:
            out.options.append(ParsedOption(w, w, "", True, "unknown"))
    typed_of: dict[str, list[str]] = {}
    for typed, opt in p.spelled:
        typed_of.setdefault(opt, []).append(typed.split("=", 1)[0])
    data = serve_options(release)["options"]
    for opt, dest, values in ns._seen:
        if opt is None:  # the positional model
            if values is not None:
                out.positionals.append(values)
            continue
        spellings = typed_of.get(opt)
        typed = spellings.pop(0) if spellings else opt
        if typed in dotted_spelled and not (spellings and typed in spellings):  # the merged dotted words
            via, typed = "dotted", ", ".join(dotted_spelled.pop(typed))
        elif not opt.startswith("--"):
            via = "alias"
        elif typed != opt:
            via = "abbrev"
        else:
            via = "exact"
        if opt not in data:  # pragma: no cover
            via = "unknown"
        out.options.append(ParsedOption(typed, opt, dest, values, via))
    return out



# ---- the values: the release's argparse ``type`` functions ------------------------------------------
#
# argparse converts each value with the option's ``type`` (then checks ``choices``) and exits with
# code 2 on failure, before vLLM builds anything. ``serve_options.json`` records each option's type
# by name; these are vLLM's own functions of that name (vllm/engine/arg_utils.py ``parse_type``,
# ``optional_type``, ``union_dict_and_str``, ``parse_dataclass``; vllm/utils/argparse_utils.py
# ``human_readable_int``, ``human_readable_int_or_auto``), written from the 0.28-0.33 source.


@dataclass(frozen=True)
class ValueProblem:
    """A value vLLM's parser refuses: ``option`` as matched, ``dest``, the ``value`` text and
    argparse's message (``argument --max-num-seqs: invalid int value: 'abc'``)."""

    option: ParsedOption
    message: str


class _TypeError(ValueError):
    pass


def _human(value: str, auto: bool = False) -> int:
    v = value.strip()
    if auto and (v == "-1" or v.lower() == "auto"):
        return -1
    try:
        return human_readable_int(v)
    except (ValueError, TypeError, KeyError):
        raise _TypeError(f"invalid {'human_readable_int_or_auto' if auto else 'human_readable_int'} value: {value!r}")


def _base(name: str):
    """(converter, the name argparse prints) of a plain type name."""
    if name == "int":
        return int, "int"
    if name == "float":
        return float, "float"
    if name == "human_readable_int":
        return (lambda v: _human(v)), None
    if name == "human_readable_int_or_auto":
        return (lambda v: _human(v, auto=True)), None
    if name == "json.loads":
        return json.loads, "loads"
    return None, None


def convert(type_name: str | None, value: str) -> Any:
    """``value`` through the argparse ``type`` named ``type_name`` (as serve_options.json writes
    it); raises ValueError with argparse's message text (without the ``argument --X:`` head).
    Unknown type names (a lambda, a custom action) pass the text through."""
    t = str(type_name or "None")
    if t in ("None", "str"):
        return value
    m = re.fullmatch(r"optional_type\((.*)\)", t)
    if m:
        if value in ("", "None"):
            return None
        return convert(f"parse_type({m.group(1)})", value)
    m = re.fullmatch(r"parse_type\((.*)\)", t)
    if m:
        inner = m.group(1)
        while inner.startswith("parse_type(") and inner.endswith(")"):  # parse_type(parse_type(f)) is f
            inner = inner[len("parse_type("):-1]
        if inner.startswith("parse_dataclass("):
            return convert(inner, value)
        fn, _ = _base(inner)
        if fn is None:
            return value
        try:
            return fn(value)
        except (ValueError, RecursionError):
            shown = {"int": "<class 'int'>", "float": "<class 'float'>", "json.loads": "<function loads>"}.get(inner, inner)
            raise _TypeError(f"Value {value} cannot be converted to {shown}.") from None
    if t == "union_dict_and_str":
        if not re.match(r"(?s)^\s*{.*}\s*$", value):
            return value
        return convert("optional_type(json.loads)", value)
    if t.startswith("parse_dataclass("):
        try:
            obj = json.loads(value)
        except (ValueError, RecursionError):
            obj = _NOT_JSON
        if not isinstance(obj, dict):  # pydantic: "Input should be an object" / JSON invalid
            raise _TypeError(f"{t[16:-1]} needs a JSON object, not {value[:60]!r}")
        return obj
    fn, shown = _base(t)
    if fn is None:
        return value
    try:
        return fn(value)
    except _TypeError:
        raise
    except (ValueError, RecursionError, OverflowError):
        raise _TypeError(f"invalid {shown} value: {value!r}") from None


_NOT_JSON = object()


def value_problems(parsed: ParsedArgv) -> list[ValueProblem]:
    """Every value in ``parsed`` that its release's parser refuses (type conversion, then
    ``choices``), with argparse's message; an option that reads no value is never a problem."""
    data = serve_options(parsed.release)["options"]
    out: list[ValueProblem] = []
    for o in parsed.options:
        e = data.get(o.option)
        if e is None or o.via in ("unknown", "config") or isinstance(o.value, bool) or o.value is None:
            continue
        names = "/".join(sorted({k for k, v in data.items() if v["dest"] == o.dest and v.get("kind") == e.get("kind")},
                                key=lambda k: (not k.startswith("--"), k)))
        values = o.value if isinstance(o.value, list) else [o.value]
        for v in values:
            try:
                got = convert(e.get("type"), str(v))
            except ValueError as err:
                out.append(ValueProblem(o, f"argument {names}: {err}"))
                break
            ch = e.get("choices")
            # argparse: ``got not in choices`` after the type converted it; a None ("None" read by
            # optional_type) is in [fp8, None] (0.32) but not in ['fp8', 'None'] (0.21-0.23 list the text)
            if ch and got not in ch and (got is None or str(got) not in {str(c) for c in ch if c is not None}):
                shown = ", ".join(repr(c) for c in ch[:12]) + (", ..." if len(ch) > 12 else "")
                out.append(ValueProblem(o, f"argument {names}: invalid choice: {got!r} (choose from {shown})"))
                break
    return out


def dotted_value(text: str) -> Any:
    """The value of a dotted ``--X.key TEXT`` as FlexibleArgumentParser reads it (JSON, else a
    human-readable int, else the text)."""
    return parse_dotted_value(text)
