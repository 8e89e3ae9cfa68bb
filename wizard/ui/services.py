"""Adapters from the UI to the wizard's other modules, each degrading gracefully.

Every function returns what the step needs, or raises :class:`Unavailable` with one line that
says which module is missing (a step shows it instead of crashing). No rule logic here: the
findings come from :mod:`wizard.api`, exports from :mod:`wizard.io.export`, plans from
:mod:`wizard.plan`, launches from :mod:`wizard.launch`, vLLM's own verdict from
:mod:`wizard.vllm.crosscheck`.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from typing import Any

from wizard.config import ServeConfig

__all__ = [
    "Unavailable",
    "Evaluation",
    "evaluate",
    "hardware_catalog",
    "hardware_lookup",
    "detected_gpus",
    "catalog_models",
    "drafters_for",
    "export_forms",
    "EXPORT_FORMS",
    "SCALEOUT_FORMS",
    "plan_for",
    "presets",
    "load_preset",
    "cross_check",
    "versions",
]


class Unavailable(RuntimeError):
    """A module the step needs is not installed yet (or failed); ``str()`` is one line."""


def _module(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as err:
        raise Unavailable(f"needs {name} ({err.msg if hasattr(err, 'msg') else err})") from None


# ---- checking ------------------------------------------------------------------------------

@dataclass
class Evaluation:
    """One check of the wizard state: config (None = no model yet), context and report."""

    config: ServeConfig | None
    report: Any = None  # wizard.api.Report
    ctx: Any = None  # wizard.context.CheckContext
    hardware: Any = None  # wizard.hardware.Hardware | None
    notes: list[str] = field(default_factory=list)  # problems of the wizard itself (hardware unknown...)


def hardware_lookup(spec: str | None):
    """Hardware for 'NAMExN' via wizard.hardware.parse_gpu_spec; None for None.

    Raises: Unavailable (no catalog yet); HardwareError (unknown name).
    """
    if not spec:
        return None
    from wizard.hardware.catalog import parse_gpu_spec

    try:
        return parse_gpu_spec(spec)
    except ImportError as err:
        raise Unavailable(f"needs wizard.hardware.catalog ({err})") from None


def evaluate(state: dict[str, Any], *, allow_hub: bool | None = None, path_allowed=None) -> Evaluation:
    """Resolve and check ``state`` with wizard.api (models cached in wizard.context).

    ``path_allowed``: the UI's folder policy (:meth:`wizard.security.PathPolicy.allows`); model
    names it refuses are not read (see :func:`wizard.context.resolve_context`)."""
    from wizard import api
    from wizard.context import resolve_context
    from wizard.ui.state import config_of, gpu_count_problem, gpu_spec
    from wizard.vllm.versions import default_version, parse_version

    cfg = config_of(state)
    ev = Evaluation(config=cfg)
    problem = gpu_count_problem(state)
    if problem:
        ev.notes.append(problem)
    try:
        ev.hardware = hardware_lookup(gpu_spec(state))
    except Exception as err:  # unknown name or catalog missing: check without hardware
        ev.notes.append(f"hardware not used: {err}")
    if cfg is None:
        return ev
    try:
        version = parse_version(state.get("vllm_version")) if state.get("vllm_version") else default_version()
    except ValueError as err:
        ev.notes.append(str(err))
        version = default_version()
    hub = state.get("allow_hub", False) if allow_hub is None else allow_hub
    ev.ctx = resolve_context(cfg, version, ev.hardware, allow_hub=bool(hub), path_allowed=path_allowed)
    ev.report = api.check_context(ev.ctx)
    return ev


# ---- catalogs ------------------------------------------------------------------------------

def hardware_catalog() -> list[Any]:
    """wizard.hardware.catalog.catalog() -> list[Hardware]. Raises Unavailable."""
    mod = _module("wizard.hardware.catalog")
    return list(mod.catalog())


def detected_gpus() -> list[Any]:
    """wizard.hardware.nvml.discover() (NVML); [] without GPU. Raises Unavailable when the module is missing."""
    mod = _module("wizard.hardware.nvml")
    try:
        return list(mod.discover())
    except Exception:
        return []


def _entry_id(e: Any) -> str:
    for attr in ("id", "name"):
        v = getattr(e, attr, None) if not isinstance(e, dict) else e.get(attr)
        if v:
            return str(v)
    return str(e)


def catalog_models(role: str | None = None) -> list[str]:
    """Catalog ids (wizard.models.catalog.entries(role)). Raises Unavailable."""
    mod = _module("wizard.models.catalog")
    try:
        entries = mod.entries(role=role)
    except TypeError:
        entries = mod.entries()
    return sorted({_entry_id(e) for e in entries})


def drafters_for(target_id: str) -> list[Any]:
    """Catalog drafter entries for a target (may be [] ). Raises Unavailable."""
    mod = _module("wizard.models.catalog")
    try:
        return list(mod.drafters_for(target_id) or [])
    except Exception:
        return []


def entry_method(entry: Any) -> str | None:
    """The speculative method a catalog drafter entry declares, if any."""
    for attr in ("method", "spec_method", "methods"):
        v = entry.get(attr) if isinstance(entry, dict) else getattr(entry, attr, None)
        if isinstance(v, (list, tuple)):
            v = v[0] if v else None
        if v:
            return str(v)
    return None


def versions() -> tuple[list[str], str]:
    """(known versions, default) from wizard.vllm.versions."""
    from wizard.vllm.versions import KNOWN_VERSIONS, default_version

    known = list(KNOWN_VERSIONS)
    d = str(default_version())
    if d not in known:
        known.insert(0, d)
    return known, d


# ---- export --------------------------------------------------------------------------------

EXPORT_FORMS = ("command", "dotted", "yaml", "python")
SCALEOUT_FORMS = ("multi-gpu", "docker", "k8s", "helm", "ray")


def export_forms(cfg: ServeConfig, forms: tuple[str, ...] = EXPORT_FORMS) -> dict[str, str]:
    """{form: text} via wizard.io.export.export; a form that is not available says so in a comment."""
    from wizard.io.forms import export

    out: dict[str, str] = {}
    for to in forms:
        try:
            out[to] = export(cfg, to)
        except Exception as err:  # KeyError: not implemented yet
            msg = err.args[0] if err.args else err
            out[to] = f"# {to} export not available: {msg}"
    return out


# ---- plan ----------------------------------------------------------------------------------

def plan_for(ctx: Any) -> Any:
    """wizard.plan.plan(ctx) -> Plan. Raises Unavailable (module missing) or its own error."""
    mod = _module("wizard.plan")
    if not hasattr(mod, "plan"):
        raise Unavailable("needs wizard.plan.plan(ctx)")
    return mod.plan(ctx)


# ---- presets -------------------------------------------------------------------------------

def presets() -> list[tuple[str, str]]:
    """[(label, name)] from wizard.io.presets.list_presets(). Raises Unavailable."""
    mod = _module("wizard.io.presets")
    out = []
    for p in mod.list_presets():
        if isinstance(p, str):
            out.append((p, p))
            continue
        name = _entry_id(p)
        get = (lambda k: p.get(k)) if isinstance(p, dict) else (lambda k: getattr(p, k, None))
        desc = get("title") or get("description") or get("rationale")
        hw = get("hardware")
        label = f"{desc} ({hw})" if desc and isinstance(hw, str) else (desc or name)
        out.append((label[:120], name))
    return out


def load_preset(name: str) -> tuple[ServeConfig, str | None]:
    """(config, gpu spec or None) of a preset. Raises Unavailable, or the preset module's error."""
    mod = _module("wizard.io.presets")
    p = mod.load_preset(name)
    if isinstance(p, ServeConfig):
        return p, None
    if isinstance(p, tuple) and p and isinstance(p[0], ServeConfig):
        return p[0], (p[1] if len(p) > 1 and isinstance(p[1], str) else None)
    cfg = p.get("config") if isinstance(p, dict) else getattr(p, "config", None)
    if isinstance(cfg, dict):
        from wizard.config import config_from_dict

        cfg = config_from_dict(cfg)
    if not isinstance(cfg, ServeConfig):
        raise Unavailable(f"preset {name!r}: wizard.io.presets.load_preset returned {type(p).__name__} without a config")
    gpu = None
    for attr in ("gpu", "hardware"):
        v = p.get(attr) if isinstance(p, dict) else getattr(p, attr, None)
        if isinstance(v, str):
            gpu = v
            break
        if v is not None and hasattr(v, "name"):
            gpu = f"{v.name}x{getattr(v, 'count', 1)}"
            break
    return cfg, gpu


# ---- cross-check ---------------------------------------------------------------------------

def cross_check(cfg: ServeConfig, report: Any, timeout: float = 180.0) -> Any:
    """wizard.vllm.crosscheck.cross_check(cfg, report, timeout) -> CrossCheck. Raises Unavailable."""
    mod = _module("wizard.vllm.crosscheck")
    return mod.cross_check(cfg, report, timeout=timeout)


@functools.lru_cache(maxsize=1)
def launch_module():
    """wizard.launch (raises Unavailable when launch() is not there yet)."""
    mod = _module("wizard.launch")
    if not hasattr(mod, "launch"):
        raise Unavailable("needs wizard.launch.launch(cfg, ...)")
    return mod
