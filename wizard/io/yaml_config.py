"""The YAML file of ``vllm serve --config FILE`` -> ServeConfig, read as vLLM reads it.

    parse_yaml(open("serve.yaml").read(), source="serve.yaml")

vLLM's ``load_config_file`` (vllm/utils/argparse_utils.py, 0.32/0.33) turns each key into
``--key value``; the options then go through the same collector as a command line
(:mod:`wizard.io.collector`), so a YAML file and the equivalent command give the same ServeConfig
and the same import notes.
"""

from __future__ import annotations

import json
import re
import shlex

import yaml

from wizard.config import SERVE_FIELDS, ConfigError, ServeConfig
from wizard.io.argv import read_args
from wizard.io.collector import KNOWN_BOOLS, MAX_OPTIONS, MODELLED_BOOLS, Collector, bool_literal
from wizard.io.safeio import MAX_YAML_CONFIG_BYTES, InputRefused, read_text_file, yaml_load_bounded

__all__ = ["parse_yaml", "config_file_args"]

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
    col = Collector("yaml")
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
        if name == "model" and isinstance(value, list) and value:
            # load_config_file writes a list as `--model a b`: argparse takes a, and b is an
            # unrecognized argument (rule SD014)
            col.option("model", str(value[0]), spelled, typed=True)
            for extra in value[1:]:
                col.count(spelled)
                col.positional.append(str(extra))
            continue
        if name == "model" and value is not None and not isinstance(value, str):
            value = str(value)
        if name in SERVE_FIELDS and isinstance(value, str) and name in MODELLED_BOOLS:
            b = bool_literal(value)
            value = b if b is not None else value
        col.option(name, value, spelled, typed=True)
    if cli_args:
        read_args(cli_args, col)
    return col.build()


def config_file_args(path: str) -> list[str]:
    """The words vLLM puts in place of ``--config FILE`` on a command line
    (``FlexibleArgumentParser.load_config_file``, vllm/utils/argparse_utils.py 0.32): a yaml/yml
    file of ``key: value``; ``true`` -> ``--key``, ``false`` -> ``--no-key`` for a switch that has
    one (else nothing), a list -> ``--key item ...``, a mapping -> ``--key <JSON>``, anything else
    -> ``--key str(value)``.

    Raises:
        ConfigError (field ``config``): not a yaml/yml name, unreadable, not YAML, not a mapping.
    """
    ext = str(path).rsplit(".", 1)[-1]
    if ext not in ("yaml", "yml"):
        raise ConfigError(f"config: --config {path}: vLLM reads only a yaml/yml file ('Config file must be of a "
                          f"yaml/yml type. {ext} supplied')", field="config")
    try:
        text = read_text_file(path, limit=MAX_YAML_CONFIG_BYTES, what="--config")
        data = yaml_load_bounded(text, what=str(path))
    except InputRefused as err:
        raise ConfigError(f"config: {err}", field="config") from None
    except OSError as err:
        raise ConfigError(f"config: --config {path}: cannot read file ({err.strerror or err})", field="config") from None
    except (ValueError, yaml.YAMLError) as err:
        raise ConfigError(f"config: --config {path} is not valid YAML ({str(err).splitlines()[0][:200]})",
                          field="config") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config: --config {path} must be a mapping of vllm serve options (key: value), got "
                          f"{type(data).__name__}", field="config")
    out: list[str] = []
    for key, value in data.items():
        if isinstance(value, bool):
            if value:
                out.append(f"--{key}")
            elif str(key).replace("-", "_") in KNOWN_BOOLS:
                out.append(f"--no-{key}")
        elif isinstance(value, list):
            if value:
                out += [f"--{key}", *map(str, value)]
        elif isinstance(value, dict):
            out += [f"--{key}", json.dumps(value)]
        else:
            out += [f"--{key}", str(value)]
    return out
