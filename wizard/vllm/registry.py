"""vLLM's model registry per release: which ``architectures`` names resolve, and what happens to one that does not.

    from wizard.vllm.registry import registered_archs, registry_of
    registered_archs("0.32")                  # frozenset of every name of _VLLM_MODELS in 0.32
    registry_of("0.32").dict_of("MedusaModel")  # '_SPECULATIVE_DECODING_MODELS'

Generated from each X.Y.0 wheel (0.10-0.34; patch releases that register other names have their own rows) by ``scripts/gen_registered_archs_history.py`` into
``wizard/data/vllm/history/registered_archs.json``: the names of each dict merged into
``vllm/model_executor/models/registry.py`` ``_VLLM_MODELS``, stored as per-release ``added`` /
``removed`` against the previous release and replayed here.

How vLLM resolves a ``ModelConfig``'s ``architectures`` (``ModelConfig.__post_init__`` ->
``_ModelRegistry.inspect_model_cls``, at config time, before any weights load):

* 0.11 on: a registered name (or, for a target, one whose suffix ``_normalize_arch`` swaps to a
  registered one) resolves. When none is registered and ``model_impl`` is ``auto`` (the
  drafter's ``ModelConfig`` never passes another: ``draft_model_config`` of the history) the
  Transformers backend is tried: ``_try_resolve_transformers`` needs ``getattr(transformers,
  arch)`` or an ``auto_map`` ``AutoModel*`` entry in the checkpoint's config. Otherwise
  ``_raise_for_unsupported``: ``Model architectures [...] are not supported for now`` (a name of
  ``_PREVIOUSLY_SUPPORTED_MODELS`` / ``_OOT_SUPPORTED_MODELS`` gets its own message first).
* 0.10: ``ModelConfig.architectures`` appends ``TransformersForCausalLM`` (registered) unless
  ``model_impl`` is ``vllm``, so config passes; the load then fails in
  ``model_loader/utils.py`` ``resolve_transformers_arch`` (``Cannot find model module. ...``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from packaging.version import Version

from wizard.vllm import releases

__all__ = ["Registry", "registry_of", "registered_archs", "nearest_registry", "unresolved_drafter"]

_HISTORY = "registered_archs"


@dataclass(frozen=True)
class Registry:
    """One release's registry. ``release``: the X.Y.Z read; ``names``: every key of
    ``_VLLM_MODELS``; ``dicts``: dict name -> its names; ``disabled``: entries present only as a
    comment (name -> {dict, line, ...}); ``fallback_mode``: 'inspect_model_cls' (0.11 on) or
    'architectures_append' (0.10), see the module docstring; ``unsupported_where``: file:line of
    the ``not supported for now`` raise."""

    release: str
    names: frozenset[str]
    dicts: Mapping[str, frozenset[str]] = field(default_factory=dict)
    disabled: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    previously_supported: Mapping[str, str] = field(default_factory=dict)
    oot_supported: Mapping[str, str] = field(default_factory=dict)
    fallback_mode: str | None = None
    unsupported_where: str | None = None
    draft_config_where: str | None = None

    @property
    def key(self) -> str:
        """'X.Y' of the release read."""
        return ".".join(self.release.split(".")[:2])

    def dict_of(self, arch: str) -> str | None:
        """The registry dict holding ``arch`` (the last one of the merge order when several)."""
        found = [d for d, names in self.dicts.items() if arch in names]
        return found[-1] if found else None

    def unsupported_message(self, archs: Iterable[str]) -> str:
        """What ``_raise_for_unsupported`` raises for names none of which is registered (0.11 on)."""
        archs = list(archs)
        for a in archs:
            if a in self.previously_supported:
                return (f"Model architecture {a} was supported in vLLM until v{self.previously_supported[a]}, "
                        "and is not supported anymore.")
            if a in self.oot_supported:
                return (f"Model architecture {a} is not supported in-tree anymore. Please install the plugin at "
                        f"{self.oot_supported[a]} if you want to use this model architecture.")
        return f"Model architectures {archs} are not supported for now."


@functools.lru_cache(maxsize=None)
def _all() -> dict[str, Registry]:
    rows = releases.history(_HISTORY)
    out: dict[str, Registry] = {}
    state: dict[str, frozenset[str]] = {}
    for key in sorted(rows, key=Version):
        row = rows[key]
        for d, names in (row.get("removed") or {}).items():
            state[d] = state.get(d, frozenset()) - frozenset(names)
        for d, names in (row.get("added") or {}).items():
            state[d] = state.get(d, frozenset()) | frozenset(names)
        order = list(row.get("merge_order") or state)
        state = {d: state.get(d, frozenset()) for d in order}
        fb = row.get("transformers_fallback") or {}
        out[key] = Registry(
            release=str(row.get("release", key)),
            names=frozenset().union(*state.values()) if state else frozenset(),
            dicts=dict(state),
            disabled=dict(row.get("disabled") or {}),
            previously_supported=dict(row.get("previously_supported") or {}),
            oot_supported=dict(row.get("oot_supported") or {}),
            fallback_mode=fb.get("mode"),
            unsupported_where=(row.get("unsupported") or {}).get("where"),
            draft_config_where=(row.get("draft_model_config") or {}).get("where"),
        )
    return out


def registry_of(version: Any) -> Registry | None:
    """The registry of ``version``'s own release: the newest patch release of its X.Y at or below
    it that registers other names ("0.10.2"), else its X.Y.0; None when the history lacks the X.Y
    (or the version is not one)."""
    try:
        key = releases.release_of(version)
    except ValueError:
        return None
    regs = _all()
    if key not in regs:
        return None
    try:
        exact = Version(Version(str(getattr(version, "version", version)).strip().lstrip("vV")).base_version)
    except ValueError:
        return regs[key]
    patches = [k for k in regs if k.startswith(key + ".") and Version(k) <= exact]
    return regs[max(patches, key=Version)] if patches else regs[key]


def registered_archs(version: Any) -> frozenset[str] | None:
    """Every architecture name vLLM ``version``'s registry knows (``_VLLM_MODELS``); None outside
    the history (0.10-0.34; patch releases that register other names have their own rows)."""
    reg = registry_of(version)
    return reg.names if reg is not None else None


def nearest_registry(version: Any) -> Registry | None:
    """``registry_of(version)``, else the history's newest release older than it (the oldest
    when it is older than all): for judging a version the history does not cover, with
    ``Registry.release`` saying which release stood in."""
    reg = registry_of(version)
    if reg is not None:
        return reg
    regs = _all()
    if not regs:
        return None
    try:
        v = Version(releases.release_of(version))
    except ValueError:
        return None
    older = [k for k in regs if Version(k) < v]
    return regs[max(older, key=Version) if older else min(regs, key=Version)]  # X.Y.Z keys sort in


def _has_automodel(auto_map: Mapping[str, Any] | None) -> bool:
    return bool(auto_map) and any(str(k).startswith("AutoModel") for k in auto_map)


def unresolved_drafter(version: Any, archs: Iterable[str], auto_map: Mapping[str, Any] | None,
                       *, no_transformers_class: bool) -> Registry | None:
    """The release's registry when the drafter's ``ModelConfig`` (``model_impl`` auto) fails at
    config time because none of ``archs`` is registered and the Transformers fallback cannot find a
    class: ``no_transformers_class`` is the caller's judgment that ``transformers`` has no class of
    that name, and the config has no ``auto_map`` ``AutoModel*`` entry. None otherwise, also for
    0.10 (config passes there) and outside the history."""
    archs = [a for a in archs if a]
    reg = registry_of(version)
    if reg is None or reg.fallback_mode != "inspect_model_cls" or not archs:
        return None
    if any(a in reg.names for a in archs):
        return None
    if not no_transformers_class or _has_automodel(auto_map):
        return None
    return reg
