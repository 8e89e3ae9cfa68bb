"""Curated deployment presets: complete, checked `vllm serve` configurations for common pairs.

Each preset is one YAML file ``presets/deployments/<name>.yaml`` (repository root)::

    name: llama31-8b-eagle3-h100          # must equal the file name (without .yaml)
    title: Llama 3.1 8B Instruct + EAGLE-3 on one H100
    rationale: one line: why this pair / method / parallelism on this hardware
    hardware: H100-SXMx1                  # a GPU spec for wizard.hardware.parse_gpu_spec
    expected_acceptance:                  # null where no public figure exists
      metric: mean acceptance length ...
      value: {mt_bench: 2.77, ...}        # a number or a mapping of numbers
      conditions: temperature, K ...
      source: https://...                 # public URL the figure comes from
    sources: [https://..., ...]           # model cards / docs the configuration follows
    config:                               # vllm serve options, vLLM names (as in `--config` YAML)
      model: meta-llama/Llama-3.1-8B-Instruct
      speculative_config: {method: eagle3, model: ..., num_speculative_tokens: 3}

``config`` goes through :func:`wizard.config.config_from_dict`, so options the wizard does not
model (``tokenizer_mode``, ``load_format``...) are kept verbatim in ``extra_args``.

Every preset is tested to pass :func:`wizard.api.check` with no error finding on its own
hardware (tests/test_presets.py).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from wizard.config import ConfigError, ServeConfig, config_from_dict
from wizard.shipped import shipped_path

__all__ = ["Preset", "PRESETS_DIR", "list_presets", "load_preset", "clear_cache"]

#: Folder of the shipped presets (``presets/deployments`` at the repository root; package data
#: in a wheel, :mod:`wizard.shipped`).
PRESETS_DIR: Path = shipped_path("presets", "deployments")

_REQUIRED = ("name", "title", "rationale", "hardware", "sources", "config")


@dataclass(frozen=True)
class Preset:
    """One deployment preset.

    Attributes:
        name: stable id, equal to the file stem (e.g. ``llama31-8b-eagle3-h100``).
        title: human title for the UI dropdown.
        rationale: one line, why this configuration.
        hardware: GPU spec string for :func:`wizard.hardware.parse_gpu_spec` (``H100-SXMx4``,
            ``CPU``); pass it as ``gpu=`` to :func:`wizard.api.check`.
        config: the :class:`ServeConfig` (a private copy; mutate freely).
        expected_acceptance: ``None`` or a mapping with ``metric``, ``value``, ``conditions``
            and ``source`` (a public URL).
        sources: URLs the configuration follows.
        path: the YAML file.
    """

    name: str
    title: str
    rationale: str
    hardware: str
    config: ServeConfig
    expected_acceptance: dict[str, Any] | None = None
    sources: tuple[str, ...] = ()
    path: Path | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def gpu(self) -> str:
        """Alias of :attr:`hardware` (the ``gpu=`` argument of :func:`wizard.api.check`)."""
        return self.hardware


def _fail(path: Path, msg: str, fld: str | None = None) -> ConfigError:
    return ConfigError(f"preset {path}: {msg}", field=fld)


@functools.lru_cache(maxsize=256)
def _read(path: Path, mtime_ns: int) -> dict[str, Any]:
    """Parse and validate one preset file (cached per path and modification time).

    Raises:
        ConfigError: unreadable file, invalid YAML, missing/ill-typed keys; names the file.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise _fail(path, f"cannot read file ({err.strerror or err})") from None
    except UnicodeDecodeError:
        raise _fail(path, "not a UTF-8 text file") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        where = ""
        mark = getattr(err, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        raise _fail(path, f"invalid YAML{where}: {getattr(err, 'problem', None) or err}") from None
    if not isinstance(data, dict):
        raise _fail(path, f"must be a mapping with keys {', '.join(_REQUIRED)}; got {type(data).__name__}")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise _fail(path, f"missing key(s): {', '.join(missing)}", missing[0])
    if data["name"] != path.stem:
        raise _fail(path, f"name {data['name']!r} must equal the file name {path.stem!r}", "name")
    for key in ("title", "rationale", "hardware"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise _fail(path, f"{key!r} must be a non-empty string", key)
    if "\n" in data["rationale"].strip():
        raise _fail(path, "'rationale' must be one line", "rationale")
    sources = data["sources"]
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise _fail(path, "'sources' must be a list of URLs", "sources")
    acc = data.get("expected_acceptance")
    if acc is not None and (not isinstance(acc, dict) or "source" not in acc or "value" not in acc):
        raise _fail(path, "'expected_acceptance' must be null or a mapping with 'value' and 'source'", "expected_acceptance")
    if not isinstance(data["config"], dict):
        raise _fail(path, "'config' must be a mapping of vllm serve options", "config")
    try:
        config_from_dict(data["config"])
    except ConfigError as err:
        raise _fail(path, f"config: {err}", "config") from None
    return data


def _preset_from(path: Path) -> Preset:
    data = _read(path, path.stat().st_mtime_ns if path.exists() else 0)
    cfg = config_from_dict(data["config"])  # a fresh object per call: callers may mutate it
    meta = {k: v for k, v in data.items() if k != "config"}
    return Preset(
        name=data["name"],
        title=data["title"].strip(),
        rationale=data["rationale"].strip(),
        hardware=data["hardware"].strip(),
        config=cfg,
        expected_acceptance=data.get("expected_acceptance"),
        sources=tuple(data["sources"]),
        path=path,
        metadata=meta,
    )


def list_presets(directory: str | Path | None = None) -> list[Preset]:
    """All presets in ``directory`` (default :data:`PRESETS_DIR`), sorted by name.

    Raises:
        ConfigError: a preset file is invalid (the message names the file).
    """
    d = Path(directory) if directory is not None else PRESETS_DIR
    if not d.is_dir():
        return []
    return [_preset_from(p) for p in sorted(d.glob("*.yaml"))]


def load_preset(name: str, directory: str | Path | None = None) -> tuple[ServeConfig, str, dict[str, Any]]:
    """Load one preset by name.

    Returns:
        ``(config, hardware, metadata)``: a fresh :class:`ServeConfig`, the GPU spec string
        (e.g. ``"H100-SXMx4"``) and the preset's other keys (name, title, rationale,
        hardware, expected_acceptance, sources).

    Raises:
        ConfigError: unknown name (the message lists the known ones) or an invalid file.
    """
    d = Path(directory) if directory is not None else PRESETS_DIR
    stem = str(name).strip()
    if stem.endswith(".yaml"):
        stem = stem[:-5]
    path = d / f"{stem}.yaml"
    if not stem or "/" in stem or "\\" in stem or not path.is_file():
        known = ", ".join(p.stem for p in sorted(d.glob("*.yaml"))) if d.is_dir() else "(none)"
        raise ConfigError(f"unknown preset {name!r}; known presets: {known}", field="preset")
    p = _preset_from(path)
    return p.config, p.hardware, dict(p.metadata)


def clear_cache() -> None:
    """Forget parsed preset files (files are also re-read when their mtime changes)."""
    _read.cache_clear()
