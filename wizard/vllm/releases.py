"""The vLLM releases the wizard has generated data for, and the nearest one for any version.

    from wizard.vllm.releases import known_releases, nearest_release, load
    known_releases()                 # ('0.28', '0.29', '0.30', '0.31', '0.32', '0.33')
    nearest_release("0.10.1")        # '0.28' (older than every known release -> the oldest)
    load("0.33", "tables.json")      # the parsed file (cached)

Data: ``wizard/data/vllm/<X.Y>/<name>.json``, generated from each release's own code (never
edited by hand): ``serve_options``, ``constraints``, ``tables`` (scripts/gen_vllm_data.py),
``backends``, ``kv_groups``, ``cudagraph``, ``proposers``, ``features``
(scripts/gen_mechanism_tables.py) and ``launch_policy`` (scripts/dump_vllm_launch_policy.py).
Each file records the exact vLLM version it was generated from. A file a release lacks comes
from the nearest release that has it. Facts read from every minor release's wheel 0.10-0.33 (the
per-release tables above cover fewer) sit in ``wizard/data/vllm/history/<name>.json`` as
``{"releases": {"X.Y": {...}}}``, read with :func:`history`.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from typing import Any

from packaging.version import InvalidVersion, Version

__all__ = ["ReleaseDataError", "known_releases", "releases_with", "nearest_release", "load", "has_file",
           "release_of", "is_known", "history"]

_NAME = re.compile(r"^[a-z_]+\.json$")


class ReleaseDataError(RuntimeError):
    """A generated data file is missing or unreadable (a packaging problem, not user input)."""


def _root():
    return resources.files("wizard").joinpath("data", "vllm")


@functools.lru_cache(maxsize=None)
def releases_with(name: str) -> tuple[str, ...]:
    """Release keys ('X.Y') that have the generated file ``name``, oldest first (read once per
    process: the package data does not change while it runs)."""
    keys = []
    try:
        entries = list(_root().iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return ()
    for entry in entries:
        if entry.is_dir() and entry.joinpath(name).is_file():
            try:
                Version(entry.name)
            except InvalidVersion:
                continue
            keys.append(entry.name)
    return tuple(sorted(keys, key=Version))


def known_releases() -> tuple[str, ...]:
    """Release keys ('X.Y') with generated release tables, oldest first."""
    return releases_with("tables.json")


def release_of(version: Any) -> str:
    """'X.Y' of a version given as text ('0.32.0+cpu', 'v0.33'), a packaging Version or anything
    with a ``version`` attribute (wizard.vllm.versions.VllmVersion).

    Raises:
        ValueError: not a version.
    """
    v = getattr(version, "version", version)
    if isinstance(v, Version):
        return f"{v.major}.{v.minor}"
    key = _release_of_text(str(v))
    if key is None:
        raise ValueError(f"{str(version)[:40]!r} is not a vLLM version (e.g. '0.32' or '0.33.0')")
    return key


@functools.lru_cache(maxsize=256)
def _release_of_text(text: str) -> str | None:
    """'X.Y' of a version text, None when it is not one (parsed once per distinct text)."""
    text = text.strip().lstrip("vV")
    try:
        if len(text) > 64:  # no version is that long (and packaging would parse 4300+ digit ints)
            return None
        v = Version(text)
    except (InvalidVersion, ValueError):
        return None
    return f"{v.major}.{v.minor}"


def is_known(version: Any) -> bool:
    """True when release tables were generated for this version's X.Y release."""
    return release_of(version) in known_releases()


def nearest_release(version: Any, name: str = "tables.json") -> str:
    """The release whose file ``name`` stands for ``version``: its own X.Y when it has one; older
    than every such release -> the oldest; newer -> the newest; in a gap -> the newest older one.

    Raises:
        ValueError: not a version. ReleaseDataError: no release has ``name``.
    """
    return _nearest(release_of(version), name)


@functools.lru_cache(maxsize=256)
def _nearest(key: str, name: str) -> str:
    known = releases_with(name)
    if not known:
        raise ReleaseDataError(f"no generated {name} under wizard/data/vllm/ (a packaging problem)")
    if key in known:
        return key
    v = Version(key)
    older = [k for k in known if Version(k) < v]
    return older[-1] if older else known[0]


def has_file(release: str, name: str) -> bool:
    """Whether release ``release`` ('X.Y') has its own generated ``name``."""
    return release in releases_with(name)


@functools.lru_cache(maxsize=None)
def _load(release: str, name: str) -> dict[str, Any]:
    try:
        return json.loads(_root().joinpath(release, name).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ReleaseDataError(f"wizard/data/vllm/{release}/{name}: {err}") from None


def load(version: Any, name: str) -> dict[str, Any]:
    """The parsed data file ``name`` (e.g. 'tables.json') of the release nearest to ``version``
    that has it (cached; treat it as read-only).

    Raises:
        ValueError: not a file name or not a version. ReleaseDataError: missing or unreadable.
    """
    if not _NAME.match(name):
        raise ValueError(f"unknown vLLM data file {name!r}")
    return _load(nearest_release(version, name), name)


@functools.lru_cache(maxsize=None)
def history(name: str) -> dict[str, Any]:
    """``{'X.Y': facts}`` of the generated history file ``wizard/data/vllm/history/<name>.json``
    (cached; treat it as read-only), e.g. ``history('drafter_context')['0.12']``.

    Raises:
        ValueError: not a history name. ReleaseDataError: missing or unreadable (a packaging problem).
    """
    if not re.fullmatch(r"[a-z][a-z0-9_]*", str(name)):
        raise ValueError(f"unknown vLLM history file {name!r}")
    try:
        data = json.loads(_root().joinpath("history", name + ".json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ReleaseDataError(f"wizard/data/vllm/history/{name}.json: {err}") from None
    rows = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(rows, dict):
        raise ReleaseDataError(f"wizard/data/vllm/history/{name}.json: no 'releases' object")
    return rows
