"""A `vllm serve` command line -> ServeConfig (the `--config` YAML file: :mod:`wizard.io.yaml_config`).

    parse_command("VLLM_USE_V2_MODEL_RUNNER=1 vllm serve meta-llama/Llama-3.1-8B-Instruct "
                  "-tp 2 --speculative-config '{\\"method\\": \\"eagle3\\", ...}'")

Reads the input the way vLLM 0.32/0.33 reads it (``vllm/utils/argparse_utils.py``
``FlexibleArgumentParser.parse_args`` and ``vllm/engine/arg_utils.py``
``EngineArgs.add_cli_args`` / ``create_speculative_config``) and never lose what was typed:

* accepted entrypoints: ``vllm serve MODEL ...``, ``python -m vllm.entrypoints.openai.api_server
  --model M ...`` (also ``python -m vllm.entrypoints.cli.main serve``), a bare argv list
  (``["MODEL", "--flag", ...]`` or ``["serve", "MODEL", ...]``); leading ``VAR=value``
  assignments (and ``export VAR=value;`` / ``env VAR=value``) go to ``ServeConfig.env``;
  ``\\``-newline continuations, newlines, ``#`` comment lines and shell quoting
  (:mod:`wizard.io.shell`);
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
``dotted_value_word`` a word vLLM's pre-parser reads as a dotted option (``--x -0.5``: a
    negative decimal as its own word; last on the line vLLM raises IndexError), rule SD018.
``deprecated_flag``  an old spelling (``--speculative-model``, ``--num-speculative-tokens``,
    ``--ngram-prompt-lookup-max``, JSON ``speculative_model``, ``num_lookahead_slots``...) was
    mapped to the modern key, as vLLM 0.8 mapped it (:mod:`wizard.vllm.legacy`; ``detail``: old,
    new, path, value). MTP aliases such as
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

Raises: :class:`wizard.config.ConfigError` only, with a message naming the field or flag
(``command``, ``model``, ``config``): unbalanced quotes, no model, a ``vllm`` sub-command other
than ``serve``, ``vllm serve --config FILE`` (out of scope here: pass the file to
:func:`wizard.io.yaml_config.parse_yaml`).
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from wizard.config import SERVE_FIELDS, ConfigError, ServeConfig
from wizard.io.collector import CLI, KNOWN_BOOLS, MAX_OPTIONS, SPEC_NAMES, Collector, bool_literal
from wizard.io.shell import Shell, entry_args, split_shell_text, strip_prefix

__all__ = ["parse_command", "read_args", "MAX_COMMAND_CHARS"]

#: Longest command text read (characters); real `vllm serve` lines are a few hundred to a few thousand.
MAX_COMMAND_CHARS = 256 * 1024
_NEG_NUMBER_RE = re.compile(r"^-(\d|\.\d)")


def _is_option(tok: str) -> bool:
    return tok.startswith("-") and len(tok) > 1 and not _NEG_NUMBER_RE.match(tok)


def _note_dotted_words(args: list[str], col: Collector) -> None:
    """vLLM's pre-parser (``FlexibleArgumentParser.parse_args``, 0.28-0.33) reads every word that
    starts with ``-`` and holds a ``.`` as a dotted ``--option.key VALUE`` and takes the next
    word as its value: a negative decimal given as its own word (``--x -0.5``) becomes a bogus
    option, and such a word last on the line raises ``IndexError``. Noted (kind
    ``dotted_value_word``) for rule SD018; real dotted options are not noted."""
    skip: set[int] = set()
    for i, a in enumerate(args):
        if i in skip or not a.startswith("-") or "." not in a or (a.startswith("--") and "." not in a):
            continue
        if "=" in a and "." not in a.split("=", 1)[0]:
            continue
        last = "=" not in a and i + 1 >= len(args)
        if "=" not in a:
            skip.add(i + 1)
        if _is_option(a) and not last:
            continue
        prev = args[i - 1] if i > 0 and _is_option(args[i - 1]) else None
        field = prev.lstrip("-").split("=", 1)[0].replace("-", "_") if prev else "command"
        col.note("dotted_value_word", field,
                 f"vLLM's parser reads {a!r} as a dotted option" + (" with no value after it (IndexError: list index "
                 "out of range)" if last else f" and takes {args[i + 1]!r} as its value"),
                 word=a, option=prev, last=last)


def read_args(args: list[str], col: Collector) -> None:
    _note_dotted_words(args, col)
    i, n = 0, len(args)
    only_positional = False
    while i < n:
        tok = args[i]
        i += 1
        if only_positional or not _is_option(tok):
            if col.model is None and not col.positional:
                col.model = tok
                col.model_positional = True
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
            if head in CLI.short_aliases:
                key = CLI.short_aliases[head] + (dot + rest)
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
            if has_eq:
                raise ConfigError(
                    f"--config: vLLM reads a config file only from `--config FILE` (two words); {tok!r} is parsed "
                    "and ignored, so none of the file's options apply", field="config")
            raise ConfigError(
                "--config: reading `vllm serve --config FILE` from a command is not supported here; check the YAML "
                "file itself (wizard check --config FILE) and pass the other options separately",
                field="config",
            )
        if dot and head.replace("-", "_") in SPEC_NAMES:
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
            if base in KNOWN_BOOLS:
                b = bool_literal(eq_value)
                col.option(base, b if b is not None else eq_value, tok)
            else:
                col.option(base, eq_value, tok)
            continue
        if name.startswith("no_") and not dot:
            base = name[3:]
            if base in KNOWN_BOOLS or base in SERVE_FIELDS or not (i < n and not _is_option(args[i])):
                col.option(base, False, tok)
                continue
        if name in KNOWN_BOOLS:
            if i < n and bool_literal(args[i]) is not None:
                col.option(name, bool_literal(args[i]), tok)
                i += 1
            else:
                col.option(name, True, tok)
            continue
        if name in CLI.nargs:
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


def _pull_config(args: list[str], read: Callable[[str], list[str]]) -> list[str]:
    """``args`` with ``--config FILE`` replaced by the file's words where vLLM puts them
    (``FlexibleArgumentParser._pull_args_from_config``): after the positional model when there is
    one, else first; the rest of the command line comes after them and wins."""
    if args.count("--config") > 1:
        raise ConfigError("--config: more than one config file given; vLLM asserts 'More than one config file "
                          "specified!'", field="config")
    i = args.index("--config")
    if i == len(args) - 1:
        raise ConfigError("--config: no file after it; vLLM stops with 'No config file specified!'", field="config")
    words = read(args[i + 1])
    rest = args[:i] + args[i + 2:]
    if rest and not _is_option(rest[0]):
        return [rest[0], *words, *rest[1:]]
    return [*words, *rest]


def parse_command(command: str | Sequence[str], *, config_file: Callable[[str], list[str]] | None = None) -> ServeConfig:
    """A `vllm serve` command (shell text or argv list) -> ServeConfig (see the module doc).

    Args:
        command: e.g. ``"CUDA_VISIBLE_DEVICES=0,1 vllm serve M -tp 2 --speculative-config '{...}'"``
            or ``["vllm", "serve", "M", "-tp", "2"]`` / ``["M", "-tp", "2"]``.

    Returns:
        ServeConfig with ``import_notes`` describing spelling problems.

    Raises:
        ConfigError: not a string/sequence of strings, unbalanced quotes, no model, a ``vllm``
            sub-command other than ``serve``, a non-vLLM python module, or ``--config FILE``
            without ``config_file`` (``field``: command, model or config).

    ``config_file``: how to read ``--config FILE`` (:func:`wizard.io.yaml_config.config_file_args`,
    given by the CLI); the faces that must not read files named in pasted text leave it None.
    """
    if isinstance(command, str):
        if len(command) > MAX_COMMAND_CHARS:
            raise ConfigError(f"command: {len(command):,} characters, more than the {MAX_COMMAND_CHARS:,} SpecWizard reads "
                              "for one `vllm serve` command; is this the right text?", field="command")
        tokens, env, shell = split_shell_text(command)
    elif isinstance(command, (list, tuple)):
        if len(command) > 4 * MAX_OPTIONS:
            raise ConfigError(f"command: {len(command):,} arguments; `vllm serve` has about 400 options, so this is not "
                              "a vLLM command line", field="command")
        bad = [type(t).__name__ for t in command if not isinstance(t, str)]
        if bad:
            raise ConfigError(f"command: every argv item must be a string (got {bad[0]})", field="command")
        env, shell = {}, Shell()
        tokens = strip_prefix(list(command), env, shell)
    else:
        raise ConfigError(f"command: expected a command string or an argv list, got {type(command).__name__}", field="command")
    args = entry_args(tokens)
    if config_file is not None and "--config" in args:
        args = _pull_config(args, config_file)
    col = Collector("command")
    col.env = env
    col.read_files = config_file is not None  # a face that reads --config FILE reads a spec-config file name too
    read_args(args, col)
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
