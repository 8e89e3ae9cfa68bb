"""Loading the generated per-release mechanism tables (``wizard/data/vllm/<X.Y>/<name>.json``).

The tables are written by ``scripts/gen_mechanism_tables.py`` from each release's own source;
each records ``release`` (the exact installed version it was read from). A version that has no
table of its own uses the nearest one: older than every release -> the oldest, newer -> the
newest, in a gap -> the newest older one.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from packaging.version import InvalidVersion, Version

__all__ = ["MechanismDataError", "releases", "release_key", "load_table"]


class MechanismDataError(RuntimeError):
    """A generated table is missing or unreadable (a packaging problem, not user input)."""


def _root():
    return resources.files("wizard").joinpath("data", "vllm")


@functools.lru_cache(maxsize=None)
def releases(name: str) -> tuple[str, ...]:
    """Release keys ('0.28' ... '0.33') that have ``<name>.json``, oldest first."""
    keys = []
    try:
        entries = list(_root().iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return ()
    for entry in entries:
        if entry.is_dir() and entry.joinpath(f"{name}.json").is_file():
            try:
                Version(entry.name)
            except InvalidVersion:
                continue
            keys.append(entry.name)
    return tuple(sorted(keys, key=Version))


def release_key(version: Any, name: str) -> str:
    """The release whose ``<name>`` table stands for ``version``.

    ``version``: '0.32', '0.33.0', 'v0.31.0+cpu', a packaging Version, or anything with a
    ``version`` attribute (:class:`wizard.versions.VllmVersion`).

    Raises:
        ValueError: not a version.
        MechanismDataError: no table of that name at all.
    """
    v = getattr(version, "version", version)
    if not isinstance(v, Version):
        try:
            v = Version(str(v).strip().lstrip("vV"))
        except InvalidVersion:
            raise ValueError(f"{version!r} is not a vLLM version (e.g. '0.32' or '0.33.0')") from None
    key = f"{v.major}.{v.minor}"
    known = releases(name)
    if not known:
        raise MechanismDataError(f"no generated {name}.json under wizard/data/vllm/; run scripts/gen_mechanism_tables.py")
    if key in known:
        return key
    older = [k for k in known if Version(k) < Version(key)]
    return older[-1] if older else known[0]


@functools.lru_cache(maxsize=None)
def load_table(release: str, name: str) -> dict[str, Any]:
    """Parsed ``wizard/data/vllm/<release>/<name>.json`` (cached; treat as read-only).

    Raises:
        MechanismDataError: missing or not JSON.
    """
    try:
        text = _root().joinpath(release, f"{name}.json").read_text(encoding="utf-8")
        return json.loads(text)
    except (OSError, ValueError) as e:
        raise MechanismDataError(f"wizard/data/vllm/{release}/{name}.json: {e}") from None
