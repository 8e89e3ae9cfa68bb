"""Offline model catalog: popular speculative-decoding targets and drafters (``presets/models/*.yaml``).

Each YAML entry holds ``id``, ``role`` (target | drafter), ``title``, ``source`` (fixture path or
public URL/model card), optional ``approximate`` (what was reconstructed), ``aliases``,
``methods`` (suggested ``speculative_config.method`` values), ``verifier`` (drafters),
``draft_for`` (small same-family models usable as ``draft_model``), ``acceptance`` (public
figures), the own-layer tensor facts (``has_lm_head``, ``has_embed_tokens``, ``has_d2t``,
``has_t2d``, ``has_mtp_weights``, ``tensors: {name: {shape, dtype}}``), ``param_count``
(parameters), ``weight_bytes`` (bytes) and ``config``: a config.json-like dict that is parsed by
:func:`wizard.models.config_json.info_from_config`, the same code as a local folder, so a catalog id
resolves exactly like a folder holding that config.json.

The YAML is read once (``functools.lru_cache``; across processes the parsed entries come from
:mod:`wizard.datacache` while the files are unchanged); after the first call :func:`lookup` costs a
dict lookup (the UI calls it on every keystroke). Returned ModelInfo objects are shared:
treat them as read-only.
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from wizard.datacache import cached
from wizard.models.info import ModelInfo, TensorInfo
from wizard.models.config_json import info_from_config
from wizard.shipped import shipped_path

__all__ = ["CatalogEntry", "CATALOG_DIR", "entries", "lookup", "get_entry", "drafters_for", "load_errors", "reload",
           "closest_catalog_ids"]

CATALOG_DIR = shipped_path("presets", "models")  # package data in a wheel (wizard/shipped.py)

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_FACT_KEYS = ("has_lm_head", "has_embed_tokens", "has_d2t", "has_t2d", "has_mtp_weights")


@dataclass(frozen=True)
class CatalogEntry:
    """One catalog model. ``roles`` contains 'drafter' also for targets with ``draft_for``
    (small same-family models usable as ``method: draft_model``)."""

    id: str
    role: str
    title: str
    source: str
    verifier: str | None = None
    methods: tuple[str, ...] = ()
    acceptance: dict[str, Any] | None = None
    approximate: str | None = None
    aliases: tuple[str, ...] = ()
    draft_for: tuple[str, ...] = ()
    param_count: int | None = None
    weight_bytes: int | None = None
    file: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def roles(self) -> tuple[str, ...]:
        if self.role == "target" and self.draft_for:
            return ("target", "drafter")
        return (self.role,)


def _key(name: str) -> str:
    return name.strip().rstrip("/").lower()


def _files() -> list[Path]:
    return sorted(CATALOG_DIR.glob("*.yaml")) if CATALOG_DIR.is_dir() else []


@functools.lru_cache(maxsize=1)
def _load() -> tuple[dict[str, CatalogEntry], dict[str, str], tuple[str, ...]]:
    """(entries by lower id, alias -> lower id, load errors); from the per-user cache
    (:mod:`wizard.datacache`) while the YAML files and this module are unchanged."""
    return cached("model-catalog", sources=_files(), code=[__file__], build=_build)


def _build() -> tuple[dict[str, CatalogEntry], dict[str, str], tuple[str, ...]]:
    by_id: dict[str, CatalogEntry] = {}
    alias: dict[str, str] = {}
    errors: list[str] = []
    files = _files()
    if not files:
        errors.append(f"no catalog files under {CATALOG_DIR}")
    for f in files:
        try:
            data = yaml.load(f.read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506 - safe loader
        except (OSError, yaml.YAMLError) as err:
            errors.append(f"{f.name}: {err}")
            continue
        if not isinstance(data, list):
            errors.append(f"{f.name}: expected a list of entries")
            continue
        for i, raw in enumerate(data):
            if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or raw.get("role") not in ("target", "drafter"):
                errors.append(f"{f.name}[{i}]: entry needs 'id' and role target|drafter")
                continue
            if not isinstance(raw.get("config"), dict) or not raw.get("source"):
                errors.append(f"{f.name}[{i}] {raw['id']}: entry needs 'config' and 'source'")
                continue
            e = CatalogEntry(
                id=raw["id"],
                role=raw["role"],
                title=str(raw.get("title") or raw["id"]),
                source=str(raw["source"]),
                verifier=raw.get("verifier"),
                methods=tuple(raw.get("methods") or ()),
                acceptance=raw.get("acceptance"),
                approximate=raw.get("approximate") or None,
                aliases=tuple(raw.get("aliases") or ()),
                draft_for=tuple(raw.get("draft_for") or ()),
                param_count=raw.get("param_count"),
                weight_bytes=raw.get("weight_bytes"),
                file=f.name,
                raw=raw,
            )
            k = _key(e.id)
            if k in by_id:
                errors.append(f"{f.name}: duplicate id {e.id}")
                continue
            by_id[k] = e
            for a in e.aliases:
                alias.setdefault(_key(a), k)
    return by_id, alias, tuple(errors)


def reload() -> None:
    """Forget the loaded catalog (after editing ``presets/models/*.yaml``)."""
    _load.cache_clear()
    _info.cache_clear()


def load_errors() -> list[str]:
    """Problems found while loading the YAML files (bad entries are skipped, never raised)."""
    return list(_load()[2])


def get_entry(name: str) -> CatalogEntry | None:
    """The entry for ``name`` (id or alias, case-insensitive), or None."""
    if not isinstance(name, str):
        return None
    by_id, alias, _ = _load()
    k = _key(name)
    return by_id.get(k) or by_id.get(alias.get(k, ""))


def entries(role: str | None = None) -> list[CatalogEntry]:
    """All entries, or those with ``role`` in their roles ('target' or 'drafter'; 'drafter'
    includes small same-family models that declare ``draft_for``). File order."""
    by_id = _load()[0]
    return [e for e in by_id.values() if role is None or role in e.roles]


def _same(a: str, b: str) -> bool:
    ea, eb = get_entry(a), get_entry(b)
    if ea is not None and eb is not None:
        return ea.id == eb.id
    return _key(a) == _key(b)


def drafters_for(target_id: str) -> list[CatalogEntry]:
    """Catalog drafters whose verifier is ``target_id`` (id or alias), plus same-family draft
    models that list it in ``draft_for``."""
    out = []
    for e in _load()[0].values():
        if e.role == "drafter" and e.verifier and _same(e.verifier, target_id):
            out.append(e)
        elif e.draft_for and any(_same(t, target_id) for t in e.draft_for):
            out.append(e)
    return out


@functools.lru_cache(maxsize=512)
def _info(key: str) -> ModelInfo | None:
    by_id, alias, _ = _load()
    e = by_id.get(key) or by_id.get(alias.get(key, ""))
    if e is None:
        return None
    raw = e.raw
    info = info_from_config(raw["config"], id=e.id, source="catalog")
    for k in _FACT_KEYS:
        v = raw.get(k)
        if isinstance(v, bool):
            setattr(info, k, v)
    tensors = raw.get("tensors") or {}
    if isinstance(tensors, dict):
        for name, t in tensors.items():
            try:
                info.tensors[str(name)] = TensorInfo(shape=list(t["shape"]), dtype=str(t["dtype"]))
            except (KeyError, TypeError, ValueError) as err:
                info.notes.append(f"catalog: tensor {name!r} unreadable ({type(err).__name__})")
    if isinstance(e.param_count, int):
        info.param_count = e.param_count
    if isinstance(e.weight_bytes, int):
        info.weight_bytes = e.weight_bytes
    prov = f"catalog ({e.file}): {e.source}"
    if e.approximate:
        prov += f" | approximate: {e.approximate}"
    info.provenance = prov
    return info


def lookup(name: str) -> ModelInfo | None:
    """ModelInfo for a catalog id or alias (case-insensitive; trailing '/' ignored), else None.

    Built with :func:`wizard.models.config_json.info_from_config` from the entry's ``config`` plus
    its tensor facts. Cached: the same (read-only) object is returned for repeated lookups.
    """
    if not isinstance(name, str) or not name.strip():
        return None
    return _info(_key(name))


def closest_catalog_ids(text: str | None, role: str | None = "target", n: int = 3) -> list[str]:
    """Catalog ids closest to ``text`` (case-insensitive, difflib ratio >= 0.4), best first."""
    t = str(text or "").strip()
    if not t:
        return []
    ids = [e.id for e in entries(role=role)]
    low = {i.lower(): i for i in ids}
    hits = difflib.get_close_matches(t.lower(), list(low), n=n, cutoff=0.4)
    if not hits:  # a fragment: ids that contain it
        hits = [k for k in low if t.lower() in k][:n]
    return [low[h] for h in hits]
