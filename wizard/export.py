"""PLACEHOLDER (to be replaced by the full exporter): ServeConfig -> command / dotted / YAML / Python."""

from __future__ import annotations

import json
import shlex

from wizard.config import ServeConfig

__all__ = ["to_command", "export"]


def to_command(cfg: ServeConfig) -> str:
    parts = ["vllm", "serve", cfg.model]
    d = cfg.to_dict()
    for k, v in d.items():
        if k in ("model", "import_notes", "invalid_values", "env", "extra_args"):
            continue
        flag = "--" + k.replace("_", "-")
        if k == "speculative_config":
            parts += [flag, json.dumps(v, separators=(",", ":"))]
        elif v is True:
            parts.append(flag)
        elif v is False:
            parts.append("--no-" + k.replace("_", "-"))
        else:
            parts += [flag, str(v)]
    return shlex.join(parts)


def export(cfg: ServeConfig, to: str = "command") -> str:
    if to == "command":
        return to_command(cfg)
    raise KeyError(f"unknown export format {to!r}")
