"""The vLLM releases the wizard has generated data for, and the nearest one for any version.

    from wizard.vllm.releases import known_releases, nearest_release, load
    known_releases()                 # ('0.28', '0.29', '0.30', '0.31', '0.32', '0.33')
    nearest_release("0.10.1")        # '0.28' (older than every known release -> the oldest)
    load("0.33", "tables.json")      # the parsed file (cached)

Data: ``wizard/data/vllm/<X.Y>/{serve_options,constraints,tables}.json``, written by
``scripts/gen_vllm_data.py`` inside each release's own environment (never edited by hand).
Each file records the exact vLLM version (``vllm_version``), the distribution and its generator.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from packaging.version import InvalidVersion, Version

__all__ = ["known_releases", "nearest_release", "load", "release_of", "is_known"]

_FILES = ("serve_options.json", "constraints.json", "tables.json")


def _root():
    return resources.files("wizard").joinpath("data", "vllm")


@functools.lru_cache(maxsize=1)
def known_releases() -> tuple[str, ...]:
    """Release keys ('X.Y') with generated data, oldest first."""
    keys = []
    for entry in _root().iterdir():
        if entry.is_dir() and entry.joinpath("tables.json").is_file():
            try:
                Version(entry.name)
            except InvalidVersion:
                continue
            keys.append(entry.name)
    return tuple(sorted(keys, key=Version))


def release_of(version: Any) -> str:
    """'X.Y' of a version given as text ('0.32.0+cpu', 'v0.33'), a packaging Version or anything
    with a ``version`` attribute (wizard.versions.VllmVersion).

    Raises:
        ValueError: not a version.
    """
    v = getattr(version, "version", version)
    if not isinstance(v, Version):
        try:
            v = Version(str(v).strip().lstrip("vV"))
        except InvalidVersion:
            raise ValueError(f"{version!r} is not a vLLM version") from None
    return f"{v.major}.{v.minor}"


def is_known(version: Any) -> bool:
    """True when data was generated for this version's X.Y release."""
    return release_of(version) in known_releases()


def nearest_release(version: Any) -> str:
    """The known release whose data stands for ``version``: its own X.Y when known; older than
    every known release -> the oldest; newer -> the newest; in a gap -> the newest older one.

    Raises:
        ValueError: not a version.
    """
    key = release_of(version)
    known = known_releases()
    if key in known:
        return key
    v = Version(key)
    older = [k for k in known if Version(k) < v]
    return older[-1] if older else known[0]


@functools.lru_cache(maxsize=None)
def _load(release: str, name: str) -> dict[str, Any]:
    return json.loads(_root().joinpath(release, name).read_text(encoding="utf-8"))


def load(version: Any, name: str) -> dict[str, Any]:
    """The parsed data file ``name`` of the release nearest to ``version`` (cached; treat it as
    read-only).

    Raises:
        ValueError: unknown file name or not a version. OSError: the packaged file is missing.
    """
    if name not in _FILES:
        raise ValueError(f"unknown vLLM data file {name!r}; one of {', '.join(_FILES)}")
    return _load(nearest_release(version), name)
