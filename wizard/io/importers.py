"""Importers: a `vllm serve` command line or a `vllm serve --config` YAML file -> ServeConfig.

    parse_command("VLLM_USE_V2_MODEL_RUNNER=1 vllm serve meta-llama/Llama-3.1-8B-Instruct "
                  "-tp 2 --speculative-config '{\\"method\\": \\"eagle3\\", ...}'")
    parse_yaml(open("serve.yaml").read(), source="serve.yaml")

Both read the input the way vLLM 0.32/0.33 reads it (``vllm/utils/argparse_utils.py``
``FlexibleArgumentParser.parse_args`` / ``load_config_file`` and ``vllm/engine/arg_utils.py``
``EngineArgs.add_cli_args`` / ``create_speculative_config``) and never lose what was typed:

* accepted entrypoints: ``vllm serve MODEL ...``, ``python -m vllm.entrypoints.openai.api_server
  --model M ...`` (also ``python -m vllm.entrypoints.cli.main serve``), a bare argv list
  (``["MODEL", "--flag", ...]`` or ``["serve", "MODEL", ...]``); leading ``VAR=value``
  assignments (and ``export VAR=value;`` / ``env VAR=value``) go to ``ServeConfig.env``;
  ``\\``-newline continuations, newlines, ``#`` comment lines and shell quoting (shlex);
* ``--flag=value``, ``--flag value``, bare booleans, ``--no-flag`` (False), vLLM's short
  aliases (``-tp -pp -dp -sc -q -n -r -dcp -pcp -dpn ... -ep -dc -cc -ac -asc``, ``-O3``),
  ``_`` and ``-`` in names are the same (as in vLLM);
* options not modelled by :class:`~wizard.config.ServeConfig` go to ``extra_args`` verbatim in
  the order given: value string, ``True`` for a bare flag, ``False`` for ``--no-flag``, a
  list for vLLM's ``nargs='+'`` options (``--served-model-name a b``) and repeated
  ``--middleware``; dotted keys of other JSON options keep their dotted name
  (``compilation_config.mode`` -> raw string); stray positionals go to
  ``extra_args["_positional"]`` (a list); unknown single-dash options keep their dash (``"-x"``);
* values of the wrong type go to ``invalid_values`` (via :func:`wizard.config.config_from_dict`).

Speculative config (``ServeConfig.speculative_config``) is built like vLLM builds it:
``--speculative-config JSON`` / ``-sc JSON`` (the last one given wins, like argparse), dotted
``--speculative-config.KEY VALUE`` (value read as JSON, else a human-readable int such as
``1k``, else a string; ``KEY+`` appends to a list), and the shorthands ``--spec-method``,
``--spec-model``, ``--spec-tokens``. What the importer noticed is kept in ``import_notes``
(kinds documented on :class:`wizard.config.ImportNote`):

``json_and_dotted``  JSON and dotted keys both given: vLLM keeps only the dotted keys
    (the dropped object is in ``detail["dropped"]``), reproduced here.
``duplicate_key``    a dotted key or an option given twice: the last wins (``detail["values"]``).
``shorthand_conflict`` ``--spec-X`` and the same key in the config: vLLM raises ValueError; the
    config keeps the ``--speculative-config`` value and the shorthand stays in ``extra_args``
    (``spec_method`` ...) so the export reproduces the command.
``deprecated_flag``  an old spelling (``--speculative-model``, ``--num-speculative-tokens``,
    ``--ngram-prompt-lookup-max``, JSON ``speculative_model``, ``num_lookahead_slots``...) was
    mapped to the modern key (``detail``: old, new, path, value). MTP aliases such as
    ``deepseek_mtp`` are *not* rewritten (a rule reports them).
``json_malformed``   the JSON text was not strict JSON; repaired when possible (single quotes,
    Python ``True``/``None``, trailing commas, literal outer quotes, backslash-escaped quotes,
    a double-encoded string, bare ``method:dspark``). ``detail``: raw, error, position (char
    offset of the strict-JSON error in ``raw``), corrected (strict JSON text, or None when the
    text could not be repaired; then the raw text is kept in
    ``invalid_values["speculative_config"]``).
``not_an_object``    the JSON is valid but not an object (a list, a number, a bare flag): the
    raw value is kept in ``invalid_values["speculative_config"]``.

``--speculative-config None`` / ``null`` / ``''`` means "no speculative decoding" in vLLM
(``optional_type``) and gives ``speculative_config=None``.

Raises (both functions): :class:`wizard.config.ConfigError` only, with a message naming the
field or flag (``command``, ``model``, ``config``): unbalanced quotes, no model, a ``vllm``
sub-command other than ``serve``, ``vllm serve --config FILE`` (out of scope here: pass the
file to :func:`parse_yaml`), YAML that does not parse (line and column) or is not a mapping.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
from typing import Any, Iterable, Sequence

import yaml

from wizard.config import SERVE_FIELDS, ConfigError, ImportNote, ServeConfig, config_from_dict
from wizard.io.safeio import MAX_YAML_CONFIG_BYTES, InputRefused, yaml_load_bounded
from wizard.vllm.options import cli_vocabulary

__all__ = [
    "parse_command",
    "parse_yaml",
    "parse_spec_json",
    "parse_dotted_value",
    "human_readable_int",
    "SHORT_ALIASES",
    "VLLM_BOOL_OPTIONAL_FLAGS",
    "VLLM_STORE_TRUE_FLAGS",
    "VLLM_NARGS_FLAGS",
    "VLLM_APPEND_FLAGS",
    "DEPRECATED_FLAGS",
    "DEPRECATED_SPEC_KEYS",
    "SPEC_SHORTHANDS",
    "POSITIONAL_KEY",
    "MAX_OPTIONS",
]

# ---- facts from vLLM's own parser ------------------------------------------------------
# Generated from every known release's `vllm serve` parser (ServeSubcommand().subparser_init;
# wizard/data/vllm/<X.Y>/serve_options.json via wizard.vllm.options.cli_vocabulary): every
# option with a short alias, every BooleanOptionalAction (has --no-X), store_true, nargs='+'
# and append action; a dest defined differently by two releases is read as the newest defines it.
_CLI = cli_vocabulary()

#: vLLM's single-dash aliases -> option dest (``-tp`` -> tensor_parallel_size, ...).
SHORT_ALIASES: dict[str, str] = dict(_CLI.short_aliases)

#: Options with argparse.BooleanOptionalAction in `vllm serve` (``--X`` and ``--no-X``).
VLLM_BOOL_OPTIONAL_FLAGS: frozenset[str] = _CLI.boolean_optional

#: store_true options of `vllm serve` (no ``--no-X`` form), plus three removed before 0.28 that
#: scripts still carry (they were store_true; not in any generated release).
VLLM_STORE_TRUE_FLAGS: frozenset[str] = _CLI.store_true | {"disable_log_requests", "use_v2_block_manager",
                                                           "enable_reasoning"}

#: nargs='+' options of `vllm serve` (one occurrence, several values).
VLLM_NARGS_FLAGS: frozenset[str] = _CLI.nargs

#: action='append' options of `vllm serve` (repeatable).
VLLM_APPEND_FLAGS: frozenset[str] = _CLI.append

#: Options taking an optional value (nargs='?', bare -> True).
_OPTIONAL_VALUE_FLAGS: frozenset[str] = _CLI.optional_value

#: Pre-0.8 spec-decode flags (vLLM <= 0.7 ``EngineArgs``; removed when ``--speculative-config``
#: took over, vllm PR #12932) -> SpeculativeConfig key. Keys without a modern field keep the old
#: meaning's name so the unknown-key rule (R009) can report them.
DEPRECATED_FLAGS: dict[str, str] = {
    "speculative_model": "model",
    "num_speculative_tokens": "num_speculative_tokens",
    "speculative_draft_tensor_parallel_size": "draft_tensor_parallel_size",
    "speculative_max_model_len": "max_model_len",
    "speculative_model_quantization": "quantization",
    "ngram_prompt_lookup_max": "prompt_lookup_max",
    "ngram_prompt_lookup_min": "prompt_lookup_min",
    "speculative_disable_by_batch_size": "disable_by_batch_size",
    "speculative_disable_mqa_scorer": "disable_mqa_scorer",
    "spec_decoding_acceptance_method": "acceptance_method",
    "typical_acceptance_sampler_posterior_threshold": "posterior_threshold",
    "typical_acceptance_sampler_posterior_alpha": "posterior_alpha",
    "disable_logprobs_during_spec_decoding": "disable_logprobs",
}
_DEPRECATED_BOOL_FLAGS = frozenset({"speculative_disable_mqa_scorer", "disable_logprobs_during_spec_decoding"})

#: Old keys inside the speculative-config JSON (0.7/0.8 spellings; vLLM 0.32 rejects them with
#: "Unexpected keyword argument", docs/vllm-rules.md R009) -> modern key.
DEPRECATED_SPEC_KEYS: dict[str, str] = {
    "speculative_model": "model",
    "draft_model": "model",
    "num_lookahead_slots": "num_speculative_tokens",
    "ngram_prompt_lookup_max": "prompt_lookup_max",
    "ngram_prompt_lookup_min": "prompt_lookup_min",
    "speculative_draft_tensor_parallel_size": "draft_tensor_parallel_size",
    "speculative_max_model_len": "max_model_len",
    "speculative_model_quantization": "quantization",
    "speculative_disable_by_batch_size": "disable_by_batch_size",
}

#: ``--spec-*`` shorthands (``EngineArgs.create_speculative_config``, 0.32/0.33) -> key.
SPEC_SHORTHANDS: dict[str, str] = {"spec_method": "method", "spec_model": "model", "spec_tokens": "num_speculative_tokens"}

#: ``extra_args`` key holding stray positional arguments (a list of strings).
POSITIONAL_KEY = "_positional"

#: Most options one command or --config file may give. vLLM 0.32's `vllm serve` parser has about
#: 400 (``wizard/data/vllm/<X.Y>/serve_options.json``); more is not a vLLM command, and the
#: per-option rules would take seconds on it.
MAX_OPTIONS = 1000
#: Longest command text read (characters); real `vllm serve` lines are a few hundred to a few thousand.
MAX_COMMAND_CHARS = 256 * 1024

_MODELLED_BOOLS = frozenset(n for n in SERVE_FIELDS if ServeConfig.model_fields[n].annotation in (bool | None,))
_MODELLED_STR = frozenset(n for n in SERVE_FIELDS if ServeConfig.model_fields[n].annotation in (str | None, str))
_KNOWN_BOOLS = VLLM_BOOL_OPTIONAL_FLAGS | VLLM_STORE_TRUE_FLAGS | _MODELLED_BOOLS | _DEPRECATED_BOOL_FLAGS
#: int options that vLLM parses with human_readable_int (arg_utils.py _compute_kwargs, 0.32)
_HUMAN_INT_FIELDS = frozenset({"max_model_len", "max_num_batched_tokens"})
_ENV_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_NEG_NUMBER_RE = re.compile(r"^-(\d|\.\d)")
_SPEC_NAMES = ("speculative_config", "sc")


# ---- small vLLM-compatible helpers -------------------------------------------------------

def human_readable_int(value: str) -> int:
    """vLLM's ``human_readable_int`` (``vllm/utils/argparse_utils.py``, 0.32): '1k' -> 1000,
    '1K' -> 1024, '25.6k' -> 25600, plain ints. Raises ValueError otherwise."""
    value = value.strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgGtT])", value)
    if m:
        number, suffix = m.groups()
        dec = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
        if suffix in dec:
            try:
                return int(float(number) * dec[suffix])
            except (OverflowError, ValueError) as err:
                raise ValueError(str(err)) from None
        return int(number) * {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[suffix]
    return int(value)


def parse_dotted_value(value_str: str) -> Any:
    """A dotted ``--json-arg.key VALUE`` value as vLLM reads it: ``json.loads``, else a
    human-readable int (``1k``), else the string itself (``FlexibleArgumentParser.parse_args``)."""
    try:
        return json.loads(value_str)
    except (ValueError, RecursionError):
        pass
    try:
        return human_readable_int(value_str)
    except (ValueError, TypeError):
        return value_str


def _json_text(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=str)


def _jsonable(obj: Any) -> Any:
    """obj as plain JSON types (tuples -> lists), or raise ValueError/TypeError."""
    return json.loads(json.dumps(obj, allow_nan=True))


# ---- --speculative-config JSON with repair ----------------------------------------------

_STR_OR_LITERAL = re.compile(r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')|\b(true|false|null)\b")
_PY_LITERAL = {"true": "True", "false": "False", "null": "None"}


def _try_json_obj(text: str) -> dict | None:
    try:
        v = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return v if isinstance(v, dict) else None


def _try_python_obj(text: str) -> dict | None:
    if len(text) > 20000:
        return None
    src = _STR_OR_LITERAL.sub(lambda m: m.group(1) or _PY_LITERAL[m.group(2)], text)
    try:
        v = ast.literal_eval(src)
        if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
            return None
        return _jsonable(v)
    except Exception:  # literal_eval raises many types (SyntaxError, ValueError, MemoryError...)
        return None


def _try_yaml_obj(text: str) -> dict | None:
    if len(text) > 20000:
        return None
    try:
        v = yaml_load_bounded(text, what="--speculative-config", max_nodes=_SPEC_YAML_NODES, max_depth=16)
        if not isinstance(v, dict) or not v or not all(isinstance(k, str) and _BARE_KEY.match(k) for k in v):
            return None
        return _jsonable(v)
    except Exception:
        return None


_BARE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
#: node budget when a malformed --speculative-config is read as YAML (SpeculativeConfig has ~40 keys)
_SPEC_YAML_NODES = 2000


def _try_bare_pairs(text: str) -> dict | None:
    """``method:dspark,num_speculative_tokens=3`` (no braces/quotes) -> dict."""
    s = text.strip()
    if s.startswith("{") and s.endswith("}"):
        s = s[1:-1]
    if any(c in s for c in "{}[]\"'\\"):
        return None
    out: dict[str, Any] = {}
    parts = [p for p in s.split(",") if p.strip()]
    if not parts:
        return None
    for part in parts:
        m = re.match(r"^\s*([^:=]+?)\s*[:=]\s*(.*?)\s*$", part, re.S)
        if not m:
            return None
        key, val = m.group(1).strip(), m.group(2)
        if not _BARE_KEY.match(key):
            return None
        out[key] = parse_dotted_value(val)
    return out


def _variants(raw: str) -> Iterable[str]:
    """Texts to try: stripped of literal outer quotes, unescaped (wrapper-script damage)."""
    seen: set[str] = set()
    frontier = [raw.strip()]
    for _ in range(4):
        nxt = []
        for s in frontier:
            if s in seen:
                continue
            seen.add(s)
            yield s
            if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"`":
                nxt.append(s[1:-1].strip())
            if "\\" in s:
                nxt.append(s.replace('\\"', '"').replace("\\'", "'").replace("\\\\", "\\"))
        frontier = nxt


def parse_spec_json(raw: str) -> tuple[dict | None, dict | None]:
    """Read a ``--speculative-config`` text like vLLM (``json.loads``), repairing what a human or
    a wrapper script typically breaks.

    Returns ``(obj, problem)``: ``obj`` the dict (None if unusable); ``problem`` None for strict
    JSON, else ``{"kind": "json_malformed"|"not_an_object", "raw", "error", "position",
    "corrected"}`` (``corrected``: strict compact JSON text of ``obj``, or None). Never raises.
    """
    try:
        v = json.loads(raw)
        if isinstance(v, dict):
            return v, None
        if isinstance(v, str):
            obj, _ = parse_spec_json(v) if v != raw else (None, None)
            if obj is not None:
                return obj, {"kind": "json_malformed", "raw": raw, "error": "a JSON string holding JSON (double-encoded)",
                             "position": 0, "corrected": _json_text(obj)}
        return None, {"kind": "not_an_object", "raw": raw, "error": f"JSON {type(v).__name__}, not an object",
                      "position": 0, "corrected": None}
    except json.JSONDecodeError as err:
        error, position = err.msg, err.pos
    except (ValueError, RecursionError) as err:
        error, position = str(err) or type(err).__name__, 0
    texts = list(_variants(raw))
    for attempt in (_try_json_obj, _try_python_obj, _try_yaml_obj, _try_bare_pairs):
        for text in texts:
            obj = attempt(text)
            if obj is not None:
                return obj, {"kind": "json_malformed", "raw": raw, "error": error, "position": position,
                             "corrected": _json_text(obj)}
    return None, {"kind": "json_malformed", "raw": raw, "error": error, "position": position, "corrected": None}


# ---- tokenising a command ----------------------------------------------------------------

_SEPARATORS = (";;", "&&", "||", "|&", ";", "&", "|", "(", ")")
_REDIRECTS = ("&>>", "&>", "<<<", "<<-", "<<", ">>", ">|", ">&", "<&", "<>", ">", "<")
_DQ_ESCAPABLE = '$`"\\\n'


class _Shell:
    """What a shell text holds besides the words of the chosen command (for an import note)."""

    def __init__(self) -> None:
        self.redirections: list[str] = []
        self.background = False
        self.other_commands: list[str] = []
        self.wrappers: list[str] = []


def _tokenize(text: str, shell: _Shell) -> list[list[str]]:
    """Split a POSIX shell text into commands (lists of words) the way sh does, for the subset
    pasted ``vllm serve`` lines use: single/double quotes and backslashes, ``\\``-newline
    continuations, ``#`` comments at the start of a word, command separators (``;`` ``&&``
    ``||`` ``|`` ``&`` and parentheses) and redirections (``> log``, ``2>&1``, ``&>> f``, ``<
    in``; a number written right before the operator is its file descriptor). Redirections
    and a trailing ``&`` are recorded on ``shell`` and not returned as words.

    Raises:
        ConfigError: an unterminated quote (field ``command``).
    """
    segments: list[list[str]] = [[]]
    i, n = 0, len(text)
    word: list[str] = []
    in_word = False  # a word was started (an empty quoted word "" counts)
    quoted = False  # some part of the current word was quoted or escaped
    redirect: str | None = None  # operator waiting for its target word

    def end_word() -> None:
        nonlocal word, in_word, quoted, redirect
        if in_word:
            w = "".join(word)
            if redirect is not None:
                shell.redirections.append(redirect + w)
                redirect = None
            else:
                segments[-1].append(w)
        word, in_word, quoted = [], False, False

    while i < n:
        ch = text[i]
        if ch == "\\":
            if i + 1 < n and text[i + 1] == "\n":
                i += 2
                continue
            if i + 2 < n and text[i + 1] == "\r" and text[i + 2] == "\n":
                i += 3
                continue
            if i + 1 < n:
                word.append(text[i + 1])
            in_word = quoted = True
            i += 2
            continue
        if ch == "'":
            j = text.find("'", i + 1)
            if j < 0:
                raise ConfigError(
                    "command: cannot split the command line (a ' quote is not closed); close the quote, e.g. around "
                    "the --speculative-config JSON", field="command")
            word.append(text[i + 1:j])
            in_word = quoted = True
            i = j + 1
            continue
        if ch == '"':
            j = i + 1
            buf: list[str] = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n and text[j + 1] in _DQ_ESCAPABLE:
                    if text[j + 1] != "\n":
                        buf.append(text[j + 1])
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            if j >= n:
                raise ConfigError(
                    'command: cannot split the command line (a " quote is not closed); close the quote, e.g. around '
                    "the --speculative-config JSON", field="command")
            word.append("".join(buf))
            in_word = quoted = True
            i = j + 1
            continue
        if ch in " \t\r\n":
            end_word()
            i += 1
            continue
        if ch == "#" and not in_word:
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if ch in "<>&;|()":
            fd = ""
            if in_word and not quoted and word and "".join(word).isdigit() and ch in "<>":
                fd = "".join(word)
                word, in_word = [], False
            else:
                if not (ch == "&" and text.startswith("&>", i)):
                    end_word()
                else:
                    end_word()
            op = next((o for o in _REDIRECTS if text.startswith(o, i)), None)
            if op is not None:
                if redirect is not None:  # `> > x`: keep going, the shell would reject it anyway
                    shell.redirections.append(redirect)
                redirect = fd + op
                i += len(op)
                if op in (">&", "<&"):  # >&1, >&-: the target follows directly
                    j = i
                    while j < n and (text[j].isdigit() or text[j] == "-"):
                        j += 1
                    if j > i:
                        shell.redirections.append(redirect + text[i:j])
                        redirect = None
                        i = j
                continue
            sep = next(o for o in _SEPARATORS if text.startswith(o, i))
            if redirect is not None:
                shell.redirections.append(redirect)
                redirect = None
            if sep == "&":
                shell.background = True
            segments.append([])
            i += len(sep)
            continue
        word.append(ch)
        in_word = True
        i += 1
    end_word()
    if redirect is not None:
        shell.redirections.append(redirect)
    return [s for s in segments if s]


def _split_text(text: str, shell: _Shell | None = None) -> list[list[str]]:
    """The commands of a shell text (see :func:`_tokenize`)."""
    return _tokenize(text, shell if shell is not None else _Shell())


# wrapper programs -> (options that take a value, whether the first non-option word is an
# argument of the wrapper rather than the command). Options are from each tool's --help
# (GNU coreutils env/nice/timeout/stdbuf/taskset, sudo 1.9, uv 0.8 `uv run`, conda run).
_WRAPPER_VALUE_OPTS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string", "--block-signal", "--default-signal",
                      "--ignore-signal"}),
    "nohup": frozenset(),
    "exec": frozenset({"-a"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}),
    "stdbuf": frozenset({"-i", "--input", "-o", "--output", "-e", "--error"}),
    "taskset": frozenset(),
    "numactl": frozenset({"-N", "-m", "-C", "-i", "-p", "--cpunodebind", "--membind", "--physcpubind", "--interleave",
                          "--preferred", "--preferred-many", "--weighted-interleave"}),
    "sudo": frozenset({"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p",
                       "--prompt", "-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user",
                       "-R", "--chroot"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "uv": frozenset({"--with", "--with-editable", "--with-requirements", "--extra", "--group", "--only-group",
                     "--no-group", "--env-file", "--package", "--python", "-p", "--directory", "--project", "--index",
                     "--default-index", "--index-url", "-i", "--extra-index-url", "--find-links", "-f",
                     "--index-strategy", "--keyring-provider", "--resolution", "--prerelease", "--exclude-newer",
                     "--link-mode", "--config-setting", "-C", "--refresh-package", "--reinstall-package",
                     "--upgrade-package", "-P", "--no-binary-package", "--no-build-package", "--cache-dir",
                     "--config-file", "--color", "--python-preference", "--python-platform", "--from",
                     "-m", "--module"}),
    "uvx": frozenset({"--with", "--with-editable", "--with-requirements", "--from", "--python", "-p", "--index",
                      "--default-index", "--index-url", "-i", "--extra-index-url", "--cache-dir", "--config-file",
                      "-m", "--module"}),
    "conda": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    "mamba": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    "micromamba": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    "pixi": frozenset({"-e", "--environment", "--manifest-path"}),
    "poetry": frozenset({"-C", "--directory", "-P", "--project"}),
}
#: wrappers whose first word after the options is theirs (taskset MASK, timeout DURATION,
#: and the sub-command `run` / `exec` of package managers)
_WRAPPER_FIRST_ARG = {"taskset": 1, "timeout": 1}
_WRAPPER_SUBCOMMANDS = {"uv": ("run", "tool"), "conda": ("run",), "mamba": ("run",), "micromamba": ("run",),
                        "pixi": ("run", "exec"), "poetry": ("run",)}
_CONTAINER_VALUE_OPTS = frozenset("""
-a --attach --add-host --annotation --blkio-weight --blkio-weight-device --cap-add --cap-drop --cgroup-parent
--cgroupns --cidfile -c --cpu-shares --cpu-period --cpu-quota --cpu-rt-period --cpu-rt-runtime --cpus --cpuset-cpus
--cpuset-mems --device --device-cgroup-rule --device-read-bps --device-read-iops --device-write-bps
--device-write-iops --dns --dns-option --dns-search --domainname --entrypoint -e --env --env-file --expose --gpus
--group-add --health-cmd --health-interval --health-retries --health-start-interval --health-start-period
--health-timeout -h --hostname --ip --ip6 --ipc --isolation --kernel-memory -l --label --label-file --link
--link-local-ip --log-driver --log-opt --mac-address -m --memory --memory-reservation --memory-swap
--memory-swappiness --mount --name --network --net --network-alias --oom-score-adj --pid --pids-limit --platform -p
--publish --pull --restart --runtime --security-opt --shm-size --stop-signal --stop-timeout --storage-opt --sysctl
--tmpfs -u --user --userns --uts -v --volume --volumes-from -w --workdir --detach-keys
""".split())


def _is_program(tokens: list[str]) -> bool:
    if not tokens:
        return False
    base = os.path.basename(tokens[0])
    return base in ("vllm", "vllm.exe") or bool(_PYTHON_RE.fullmatch(base))


_PYTHON_RE = re.compile(r"python[0-9.]*(\.exe)?")


def _skip_options(tokens: list[str], i: int, value_opts: frozenset[str], stop: tuple[str, ...] = ()) -> int:
    """Index of the first word after the options of a wrapper starting at ``i`` (an option in
    ``stop`` ends the options after its value: ``uv run -m MODULE ARGS``)."""
    while i < len(tokens):
        t = tokens[i]
        if t == "--":
            return i + 1
        if not t.startswith("-") or t == "-":
            return i
        i += 1
        if "=" not in t and t in value_opts and i < len(tokens):
            i += 1
        if t.partition("=")[0] in stop:
            return i
    return i


def _strip_prefix(tokens: list[str], env: dict[str, str], shell: _Shell | None = None) -> list[str]:
    """Remove what comes before the program: ``VAR=value`` assignments (into ``env``),
    ``export``, and wrapper programs with their own options -- ``env [-i] [-u VAR]`` (unset
    variables leave ``env``), ``nohup``, ``exec``, ``time [-p]``, ``nice -n N``, ``sudo [-E]
    [-u USER]``, ``timeout 10m``, ``taskset -c 0-7``, ``numactl ...``, ``stdbuf -oL``, ``uv run
    [--with X ...]``, ``uvx``, ``conda run -n ENV``, and ``docker run|exec [...] IMAGE`` /
    ``podman run`` (``-e VAR=value`` goes to ``env``; the image's entrypoint is ``vllm serve``,
    as in vllm/vllm-openai, so words after the image are serve arguments). The dropped wrapper
    words are recorded on ``shell.wrappers``."""
    i = 0
    n = len(tokens)
    start = 0
    while i < n:
        t = tokens[i]
        base = os.path.basename(t)
        m = _ENV_RE.match(t)
        if m:
            env[m.group(1)] = m.group(2)
            i += 1
        elif t in ("export", "readonly"):
            i += 1
            while i < n and tokens[i].startswith("-"):
                i += 1
        elif base in ("docker", "podman", "nerdctl") and i + 1 < n and tokens[i + 1] in ("run", "exec", "container"):
            j = i + 2
            if tokens[i + 1] == "container" and j < n and tokens[j] in ("run", "exec"):
                j += 1
            sub = tokens[j - 1]
            while j < n:
                t2 = tokens[j]
                if t2 == "--":
                    j += 1
                    break
                if not t2.startswith("-") or t2 == "-":
                    break
                opt, eq, val = t2.partition("=")
                j += 1
                if opt in _CONTAINER_VALUE_OPTS and not eq:
                    val = tokens[j] if j < n else ""
                    j += 1
                if opt in ("-e", "--env"):
                    m2 = _ENV_RE.match(val)
                    if m2:
                        env[m2.group(1)] = m2.group(2)
            if shell is not None:
                shell.wrappers.append(" ".join(tokens[start:j + 1]))
            image_end = j + 1  # the image (run) or the container (exec)
            rest = tokens[image_end:]
            if sub == "run" and not (_is_program(rest) or (rest and os.path.basename(rest[0]) in _WRAPPER_VALUE_OPTS)):
                return ["vllm", "serve"] + rest  # vllm/vllm-openai: ENTRYPOINT ["vllm", "serve"]
            i = start = image_end
            continue
        elif base in _WRAPPER_VALUE_OPTS:
            j = i + 1
            subs = _WRAPPER_SUBCOMMANDS.get(base)
            if subs is not None:
                if j < n and tokens[j] in subs:
                    j += 1
                    if tokens[j - 1] == "tool" and j < n and tokens[j] == "run":
                        j += 1
                elif base != "uvx":
                    break  # `uv pip ...`, `conda install`: not a wrapper
            j = _skip_options(tokens, j, _WRAPPER_VALUE_OPTS[base], ("-m", "--module") if base in ("uv", "uvx") else ())
            if base == "env":
                k = i + 1
                while k < j:
                    opt, eq, val = tokens[k].partition("=")
                    if opt in ("-u", "--unset"):
                        var = val if eq else (tokens[k + 1] if k + 1 < n else "")
                        env.pop(var, None)
                        k += 1 if eq else 2
                        continue
                    if opt in ("-i", "--ignore-environment") or tokens[k] == "-":
                        env.clear()
                    k += 1
            if base in ("uv", "uvx"):
                opt, eq, val = tokens[j - 1].partition("=") if j - 1 > i else ("", "", "")
                if j - 2 > i and tokens[j - 2] in ("-m", "--module"):
                    opt, eq, val = tokens[j - 2], "=", tokens[j - 1]
                if opt in ("-m", "--module") and eq:  # `uv run -m MODULE ...` is `python -m MODULE ...`
                    if shell is not None:
                        shell.wrappers.append(" ".join(tokens[i:j]))
                    return ["python", "-m", val] + tokens[j:]
            j += _WRAPPER_FIRST_ARG.get(base, 0) if j < n else 0
            if shell is not None:
                shell.wrappers.append(" ".join(tokens[i:j]))
            i = start = j
        else:
            break
    return tokens[i:]


_SERVER_MODULES = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server")


def _entry_args(tokens: list[str]) -> list[str]:
    """The arguments after the entrypoint (``vllm serve`` / ``python -m ...api_server``)."""
    if not tokens:
        return []
    base = os.path.basename(tokens[0])
    if base in ("vllm", "vllm.exe"):
        if len(tokens) < 2:
            raise ConfigError("command: `vllm` needs the `serve` sub-command: vllm serve MODEL [options]", field="command")
        if tokens[1] != "serve":
            raise ConfigError(
                f"command: `vllm {tokens[1]}` is not `vllm serve`; give a `vllm serve MODEL ...` command", field="command"
            )
        return tokens[2:]
    if re.fullmatch(r"python[0-9.]*(\.exe)?", base):
        j = 1
        module = None
        while j < len(tokens):
            t = tokens[j]
            if t == "-m" and j + 1 < len(tokens):
                module, j = tokens[j + 1], j + 2
                break
            if t.startswith("-m") and len(t) > 2:
                module, j = t[2:], j + 1
                break
            if not t.startswith("-"):
                break
            j += 1
        if module in _SERVER_MODULES:
            return tokens[j:]
        if module in ("vllm.entrypoints.cli.main", "vllm"):
            if j < len(tokens) and tokens[j] == "serve":
                return tokens[j + 1:]
            raise ConfigError(f"command: `python -m {module}` needs the `serve` sub-command", field="command")
        raise ConfigError(
            f"command: `{' '.join(tokens[:j + 1])}` is not a vLLM server; use `vllm serve MODEL` or "
            "`python -m vllm.entrypoints.openai.api_server --model MODEL`",
            field="command",
        )
    if tokens[0] == "serve":
        return tokens[1:]
    return tokens


# ---- the collector shared by the command and YAML importers ------------------------------

def _set_nested(d: dict, keys: list[str], value: Any) -> list[tuple[str, Any, Any]]:
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
            dups += [(f"{last}.{p}", o, n) for p, o, n in _set_nested(cur[last], [k], v)]
    else:
        if last in cur:
            dups.append((".".join(keys), cur[last], value))
        cur[last] = value
    return dups


class _Collector:
    """Collects options in order, then resolves them into a ServeConfig like vLLM does."""

    def __init__(self, origin: str):
        self.origin = origin  # 'command' | 'yaml'
        self.model: str | None = None
        self.top: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}
        self.invalid: dict[str, Any] = {}
        self.env: dict[str, str] = {}
        self.notes: list[ImportNote] = []
        self.spec_json: list[tuple[Any, str]] = []  # (raw value, spelling)
        self.dotted: dict[str, Any] = {}
        self.dotted_spellings: list[str] = []
        self.shorthands: list[tuple[str, str, Any]] = []  # (flag, key, value)
        self.deprecated: list[tuple[str, str, Any]] = []  # (old spelling, key, value)
        self.positional: list[str] = []
        self.n_options = 0

    def count(self, spelled: str) -> None:
        """One more option; more than :data:`MAX_OPTIONS` is not a real `vllm serve` command."""
        self.n_options += 1
        if self.n_options > MAX_OPTIONS:
            where = "command" if self.origin == "command" else "config"
            raise ConfigError(
                f"{where}: more than {MAX_OPTIONS} options (at {spelled[:60]!r}); `vllm serve` has about 400, so this "
                "is not a vLLM command line or --config file", field=where)

    def note(self, kind: str, field: str, message: str, **detail: Any) -> None:
        self.notes.append(ImportNote(kind=kind, field=field, message=message, detail=detail))

    # -- one option --------------------------------------------------------------------
    def option(self, name: str, value: Any, spelled: str, *, typed: bool = False) -> None:
        """``name``: normalised (snake before the first dot); ``value``: str, True (bare),
        False (--no-X), or (YAML) any typed value."""
        self.count(spelled)
        head, dot, rest = name.partition(".")
        if dot:
            if head in _SPEC_NAMES:
                self._dotted(rest, value, spelled, typed)
            else:
                self._extra(name, value, spelled)
            return
        if name == "model":
            if value is True or value is None:
                self.invalid["model"] = value
                return
            if self.model is not None and self.model != str(value):
                self.note("duplicate_key", "model", f"the model is given twice ({self.model!r} and {value!r}); the last wins",
                          key="model", values=[self.model, str(value)])
            self.model = str(value)
            return
        if name in _SPEC_NAMES:
            self.spec_json.append((value, spelled))
            return
        if name in SPEC_SHORTHANDS:
            if isinstance(value, str) and name == "spec_tokens":
                try:
                    value = int(value)
                except ValueError:
                    pass
            self.shorthands.append((spelled, name, value))
            return
        if name in DEPRECATED_FLAGS:
            if isinstance(value, str) and not typed:
                value = parse_dotted_value(value)
            self.deprecated.append((spelled, DEPRECATED_FLAGS[name], value))
            return
        if name in SERVE_FIELDS:
            if typed and value is None:
                return
            if value is True and name not in _MODELLED_BOOLS:
                # a value-taking option without its value: keep it raw (vLLM: expected one argument)
                self.invalid[name] = True
                self.top.pop(name, None)
                return
            if isinstance(value, str) and name in _HUMAN_INT_FIELDS:
                s = value.strip()
                if name == "max_model_len" and (s == "-1" or s.lower() == "auto"):
                    value = -1
                else:
                    try:
                        value = human_readable_int(s)
                    except (ValueError, TypeError):
                        pass
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
        if name in VLLM_APPEND_FLAGS and not isinstance(value, list):
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
        for path, old, new in _set_nested(self.dotted, keys, val):
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
            obj, problem = parse_spec_json(kept)
            if problem is None:
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
                      position=problem["position"], corrected=problem["corrected"])
            return obj, kept, obj is None
        # bare flag (True), a YAML list/number...
        what = "no value" if kept is True else f"a {type(kept).__name__}"
        self.note("not_an_object", "speculative_config", f"{spelled} has {what}; vLLM needs a JSON object",
                  raw=kept, error=f"{what}, not an object", position=0, corrected=None)
        return None, kept, True

    def _rename_deprecated_keys(self, spec: dict) -> dict:
        out: dict[str, Any] = {}
        renamed = []
        for k, v in spec.items():
            new = DEPRECATED_SPEC_KEYS.get(k)
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
                    f"drops the whole JSON object {_json_text(dropped)} and keeps only the dotted keys "
                    f"{_json_text(self.dotted)}; use one form",
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


# ---- command ------------------------------------------------------------------------------

def _is_option(tok: str) -> bool:
    return tok.startswith("-") and len(tok) > 1 and not _NEG_NUMBER_RE.match(tok)


def _bool_literal(tok: str) -> bool | None:
    low = tok.lower()
    return True if low == "true" else False if low == "false" else None


def _parse_args(args: list[str], col: _Collector) -> None:
    i, n = 0, len(args)
    only_positional = False
    while i < n:
        tok = args[i]
        i += 1
        if only_positional or not _is_option(tok):
            if col.model is None and not col.positional:
                col.model = tok
            else:
                col.count(tok)
                col.positional.append(tok)
            continue
        if tok == "--":
            only_positional = True
            continue
        if tok.startswith("--"):
            body = tok[2:]
            has_eq = "=" in body
            key, _, eq_value = body.partition("=")
        else:
            body = tok[1:]
            if body.startswith("O") and body != "O":  # -O3, -O=3, -Odecode (vLLM: --optimization-level)
                val = body[2:] if body[1:2] == "=" else body[1:]
                col.option("optimization_level", val, tok)
                continue
            has_eq = "=" in body
            key, _, eq_value = body.partition("=")
            head, dot, rest = key.partition(".")
            if head == "O" and not dot:
                if not has_eq and i < n and not _is_option(args[i]):
                    col.option("optimization_level", args[i], tok)
                    i += 1
                else:
                    col.option("optimization_level", eq_value if has_eq else True, tok)
                continue
            if head in SHORT_ALIASES:
                key = SHORT_ALIASES[head] + (dot + rest)
            else:
                # unknown single-dash option: kept verbatim with its dash
                if has_eq:
                    col.option("-" + key, eq_value, tok)
                elif i < n and not _is_option(args[i]):
                    col.option("-" + key, args[i], tok)
                    i += 1
                else:
                    col.option("-" + key, True, tok)
                continue
        head, dot, rest = key.partition(".")
        name = head.replace("-", "_") + dot + rest
        if name == "config":
            raise ConfigError(
                "--config: reading `vllm serve --config FILE` from a command is not supported here; check the YAML "
                "file itself (wizard check --config FILE) and pass the other options separately",
                field="config",
            )
        if dot and head.replace("-", "_") in _SPEC_NAMES:
            # vLLM takes the next token as the value, whatever it looks like
            if has_eq:
                col.option(name, eq_value, tok)
            elif i < n:
                col.option(name, args[i], tok)
                i += 1
            else:
                col.option(name, True, tok)
            continue
        if has_eq:
            base = name
            if base in _KNOWN_BOOLS:
                b = _bool_literal(eq_value)
                col.option(base, b if b is not None else eq_value, tok)
            else:
                col.option(base, eq_value, tok)
            continue
        if name.startswith("no_") and not dot:
            base = name[3:]
            if base in _KNOWN_BOOLS or base in SERVE_FIELDS or not (i < n and not _is_option(args[i])):
                col.option(base, False, tok)
                continue
        if name in _KNOWN_BOOLS:
            if i < n and _bool_literal(args[i]) is not None:
                col.option(name, _bool_literal(args[i]), tok)
                i += 1
            else:
                col.option(name, True, tok)
            continue
        if name in VLLM_NARGS_FLAGS:
            vals = []
            while i < n and not _is_option(args[i]):
                vals.append(args[i])
                i += 1
            col.option(name, vals if vals else True, tok)
            continue
        if i < n and not _is_option(args[i]):
            col.option(name, args[i], tok)
            i += 1
        else:
            col.option(name, True, tok)


def parse_command(command: str | Sequence[str]) -> ServeConfig:
    """A `vllm serve` command (shell text or argv list) -> ServeConfig (see the module doc).

    Args:
        command: e.g. ``"CUDA_VISIBLE_DEVICES=0,1 vllm serve M -tp 2 --speculative-config '{...}'"``
            or ``["vllm", "serve", "M", "-tp", "2"]`` / ``["M", "-tp", "2"]``.

    Returns:
        ServeConfig with ``import_notes`` describing spelling problems.

    Raises:
        ConfigError: not a string/sequence of strings, unbalanced quotes, no model, a ``vllm``
            sub-command other than ``serve``, a non-vLLM python module, or ``--config FILE``
            (``field``: command, model or config).
    """
    env: dict[str, str] = {}
    shell = _Shell()
    if isinstance(command, str):
        if len(command) > MAX_COMMAND_CHARS:
            raise ConfigError(f"command: {len(command):,} characters, more than the {MAX_COMMAND_CHARS:,} SpecWizard reads "
                              "for one `vllm serve` command; is this the right text?", field="command")
        segments = _split_text(command, shell)
        chosen: list[str] | None = None
        for idx, seg in enumerate(segments):
            rest = _strip_prefix(seg, env, shell)
            if _is_program(rest) or (rest and rest[0] == "serve"):
                chosen = rest
                shell.other_commands += [shlex.join(s) for s in segments[idx + 1:]]
                break
            if rest:
                shell.other_commands.append(shlex.join(seg))
        if chosen is None:
            shell.wrappers = []
            shell.other_commands = [shlex.join(s) for s in segments[:-1]]
            chosen = _strip_prefix(segments[-1], {}) if segments else []
            if segments:
                env = {}
                for seg in segments[:-1]:
                    _strip_prefix(seg, env)
                _strip_prefix(segments[-1], env, shell)
        tokens = chosen
    elif isinstance(command, (list, tuple)):
        if len(command) > 4 * MAX_OPTIONS:
            raise ConfigError(f"command: {len(command):,} arguments; `vllm serve` has about 400 options, so this is not "
                              "a vLLM command line", field="command")
        bad = [type(t).__name__ for t in command if not isinstance(t, str)]
        if bad:
            raise ConfigError(f"command: every argv item must be a string (got {bad[0]})", field="command")
        tokens = _strip_prefix(list(command), env, shell)
    else:
        raise ConfigError(f"command: expected a command string or an argv list, got {type(command).__name__}", field="command")
    args = _entry_args(tokens)
    col = _Collector("command")
    col.env = env
    _parse_args(args, col)
    dropped = shell.wrappers + shell.redirections + (["&"] if shell.background else []) + shell.other_commands
    if dropped:
        parts = []
        if shell.wrappers:
            parts.append("wrapper " + ", ".join(f"`{w}`" for w in shell.wrappers))
        if shell.redirections:
            parts.append("redirection " + " ".join(f"`{r}`" for r in shell.redirections))
        if shell.background:
            parts.append("background `&`")
        if shell.other_commands:
            parts.append("other command(s) " + "; ".join(f"`{c[:80]}`" for c in shell.other_commands))
        col.note("shell_syntax", "command",
                 "read only the vLLM command; not vLLM options, so left out: " + ", ".join(parts),
                 wrappers=list(shell.wrappers), redirections=list(shell.redirections), background=shell.background,
                 other_commands=list(shell.other_commands))
    return col.build()


# ---- YAML -----------------------------------------------------------------------------------

_ENV_COMMENT = re.compile(r"^\s*#\s*env:\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
#: ``# args: -x 5 -- word``: command-line arguments a --config file cannot hold (wizard.io.export.to_yaml)
_ARGS_COMMENT = re.compile(r"^\s*#\s*args:\s*(.*)$")


def parse_yaml(text: str, source: str | None = None) -> ServeConfig:
    """The YAML that ``vllm serve --config FILE`` reads -> ServeConfig.

    Keys are option names with dashes or underscores (``tensor-parallel-size: 2``); ``model:``
    gives the target; ``speculative-config:`` is a mapping or a JSON string; dotted keys
    (``speculative-config.method: mtp``) and ``no-X: true`` work as on the command line (vLLM's
    ``load_config_file`` turns each key into ``--key value``). ``# env: VAR=value`` comment
    lines (written by :func:`wizard.io.export.to_yaml`) fill ``env``; an ``# args: -x 5 -- word``
    line (same writer: what a --config file cannot hold) is read as command-line arguments
    given after ``--config FILE``. Budgets: 1 MiB of text, 100,000 YAML nodes with aliases
    expanded, 64 levels, :data:`MAX_OPTIONS` keys.

    Raises:
        ConfigError: not YAML (message with line and column), not a mapping, or no model
            (``field``: config or model). ``source`` (a file name) is used in messages.
    """
    where = source or "YAML"
    if not isinstance(text, str):
        raise ConfigError(f"config: {where} must be text, got {type(text).__name__}", field="config")
    if len(text) > MAX_YAML_CONFIG_BYTES:
        raise ConfigError(f"config: {where} has {len(text):,} characters, more than the {MAX_YAML_CONFIG_BYTES:,} "
                          "SpecWizard reads for a `vllm serve --config` file; is this the right file?", field="config")
    try:
        data = yaml_load_bounded(text, what=where)
    except InputRefused as err:
        raise ConfigError(f"config: {err}", field="config") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        pos = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"config: {where} is not valid YAML{pos}: {problem}", field="config") from None
    except Exception as err:  # anything else the YAML library raises: never a traceback
        raise ConfigError(f"config: {where} cannot be read as YAML ({type(err).__name__}: {err})"[:300], field="config") from None
    if data is None:
        raise ConfigError(f"config: {where} is empty; give vllm serve options such as `model: ...`", field="config")
    if not isinstance(data, dict):
        raise ConfigError(
            f"config: {where} must be a mapping of vllm serve options (key: value), got {type(data).__name__}", field="config"
        )
    col = _Collector("yaml")
    for line in text.splitlines():
        m = _ENV_COMMENT.match(line)
        if m:
            val = m.group(2).strip()
            if val.startswith('"'):
                try:
                    val = str(json.loads(val))
                except ValueError:
                    pass
            col.env[m.group(1)] = val
    cli_args: list[str] = []
    for line in text.splitlines():
        m = _ARGS_COMMENT.match(line)
        if m:
            try:
                cli_args += shlex.split(m.group(1))
            except ValueError as err:
                raise ConfigError(f"config: {where}: the '# args:' line cannot be split ({err}); fix its quoting",
                                  field="config") from None
    if len(data) > MAX_OPTIONS:
        raise ConfigError(f"config: {where} has {len(data):,} keys; `vllm serve` has about 400 options, so this is not a "
                          "vLLM --config file", field="config")
    for key, value in data.items():
        k = str(key).lstrip("-")
        head, dot, rest = k.partition(".")
        name = head.replace("-", "_") + dot + rest
        spelled = f"{key}:"
        if name.startswith("no_") and not dot and value is True:
            col.option(name[3:], False, spelled, typed=True)
            continue
        if name == "model" and value is not None and not isinstance(value, str):
            value = str(value)
        if name in SERVE_FIELDS and isinstance(value, str) and name in _MODELLED_BOOLS:
            b = _bool_literal(value)
            value = b if b is not None else value
        col.option(name, value, spelled, typed=True)
    if cli_args:
        _parse_args(cli_args, col)
    return col.build()
