"""Who decides a model's attention backend before selection runs, per vLLM release.

Facts from ``features.json`` ``backend_selection`` (generated from each release's source by
``scripts/vllm_probe/features_probe.py``; the newest generated release at or below the one asked
stands for it): whether the drafter inherits the target's backend (0.20), whether every layer
selects non-causal for DFlash (0.20), and the backend a model config class locks when the user
set none (Gemma 4's heterogeneous head dims -> TRITON_ATTN). Used by
:func:`wizard.mechanisms.attention_backend.select_for_pair`.
"""

from __future__ import annotations

from typing import Any

from packaging.version import Version

from wizard.vllm import releases

__all__ = ["selection_rules", "target_lock", "first_release_where"]


def selection_rules(release: Any) -> dict[str, Any]:
    """The release's ``backend_selection`` facts (module docstring) plus ``release`` (the version
    the table was generated from); {} when no generated table has them."""
    try:
        t = releases.load(release, "features.json")
    except Exception:  # no features table: the 0.28-0.33 behaviour (independent selection)
        return {}
    facts = (t.get("facts") or {}).get("backend_selection") or {}
    return {**facts, "release": t.get("release")} if facts else {}


def _fa4_available(hardware: Any, platform: str | None) -> bool:
    # is_fa_version_supported(4): SM 9.0 / 10.x / 11.x on the CUDA wheel (the assumption
    # scripts/vllm_probe/backends_probe.py records for the backend tables)
    cc = getattr(hardware, "compute_capability", None)
    if cc is None and platform and platform.startswith("cuda-"):
        try:
            cc = tuple(int(x) for x in platform[5:].split("."))
        except ValueError:
            cc = None
    vendor = getattr(hardware, "vendor", "nvidia") if hardware is not None else ("nvidia" if cc else None)
    return vendor == "nvidia" and cc is not None and cc[0] in (9, 10, 11)


def target_lock(release: Any, model: Any, hardware: Any = None, *, platform: str | None = None) -> dict[str, Any] | None:
    """The backend vLLM ``release`` forces on the target when the user set none (a model
    config class's ``verify_and_update_config``, ``features.json`` ``target_backend_locks``):
    {backend, config_class, why} or None. Only locks on heterogeneous head dims are modelled
    (the form every release so far uses)."""
    rules = selection_rules(release)
    archs = set(getattr(model, "architectures", None) or ())
    cfg = getattr(model, "text_config", None) or {}
    head, glob = cfg.get("head_dim"), cfg.get("global_head_dim")
    for lock in rules.get("target_backend_locks") or ():
        if not lock.get("heterogeneous_head_dims") or not archs & set(lock.get("architectures") or ()):
            continue
        if not (isinstance(head, int) and isinstance(glob, int) and head != glob):
            continue
        biggest = max(head, glob)
        over = lock.get("head_dim_over")
        if over is not None and biggest <= over:
            continue
        if lock.get("fa4_gate") and _fa4_available(hardware, platform) and biggest <= 512:
            continue
        why = (f"{lock['config_class']}.verify_and_update_config locks {lock['backend']} for heterogeneous head dims "
               f"(head_dim {head}, global_head_dim {glob}) when no backend is set (vllm/model_executor/models/config.py, "
               f"vLLM {rules.get('release', release)})")
        return {"backend": lock["backend"], "config_class": lock["config_class"], "why": why}
    return None


def first_release_where(release: Any, pred) -> str | None:
    """The first release newer than ``release`` whose ``backend_selection`` facts satisfy
    ``pred`` (a fix version to name), or None."""
    try:
        v = Version(releases.release_of(release))
    except ValueError:
        return None
    for key in releases.releases_with("features.json"):
        if Version(key) > v and pred(selection_rules(key)):
            return key
    return None
