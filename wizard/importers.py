"""PLACEHOLDER (to be replaced by the full importer): `vllm serve` argv / YAML -> ServeConfig."""

from __future__ import annotations

import json
import shlex
from typing import Sequence

import yaml

from wizard.config import ConfigError, ServeConfig, config_from_dict

__all__ = ["parse_command", "parse_yaml"]


def parse_command(command: str | Sequence[str]) -> ServeConfig:
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if argv[:2] == ["vllm", "serve"]:
        argv = argv[2:]
    d: dict = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith("-"):
            d.setdefault("model", a)
            i += 1
            continue
        name = a.lstrip("-").replace("-", "_")
        val = True
        if "=" in name:
            name, val = name.split("=", 1)
        elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            val = argv[i + 1]
            i += 1
        if name in ("speculative_config", "sc") and isinstance(val, str):
            val = json.loads(val)
        d[name] = val
        i += 1
    return config_from_dict(d)


def parse_yaml(text: str, source: str | None = None) -> ServeConfig:
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ConfigError("YAML must be a mapping of vllm serve options")
    return config_from_dict(data)
