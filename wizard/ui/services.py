"""What the UI asks the wizard's other modules, in the UI's terms (state dicts in, plain values out).

No rule logic here: findings come from :func:`wizard.api.resolve` + :func:`wizard.api.check_context`
(the two halves of ``api.check``, so the UI keeps the context for its step widgets), choices from
:mod:`wizard.suggest`, exports from :mod:`wizard.io.forms`, plans from :mod:`wizard.plan`,
launches from :mod:`wizard.launch`, vLLM's own verdict from :mod:`wizard.vllm.crosscheck`.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from wizard import api
from wizard.plan.acceptance import rising
from wizard.config import ServeConfig
from wizard.hardware import catalog as hw_catalog
from wizard.hardware import nvml
from wizard.io import presets as presets_mod
from wizard.io.forms import export
from wizard.models import catalog as model_catalog
from wizard.plan.inputs import K_HARD_MAX, MAX_CONCURRENCY
from wizard.ui.state import config_of, gpu_count_problem, gpu_spec
from wizard.vllm import crosscheck
from wizard.vllm.versions import VllmVersion, known_versions, default_version, is_known, parse_version

__all__ = [
    "Evaluation", "evaluate", "version_of", "hardware_catalog", "hardware_lookup", "detected_gpus", "catalog_models",
    "export_forms", "EXPORT_FORMS", "SCALEOUT_FORMS", "plan_for", "presets", "load_preset", "cross_check", "versions",
    "parse_acceptance", "parse_ks", "parse_concurrencies",
]


@dataclass
class Evaluation:
    """One check of the wizard state: config (None = no model yet), context and report."""

    config: ServeConfig | None
    report: Any = None  # wizard.api.Report
    ctx: Any = None  # wizard.context.CheckContext
    hardware: Any = None  # wizard.hardware.Hardware | None
    notes: list[str] = field(default_factory=list)  # problems of the wizard's own inputs (GPU count, version)
    hardware_error: str | None = None  # why the chosen GPU is not used (unknown name)
    version_error: str | None = None  # why the typed vLLM version is not used (not a version)


def hardware_lookup(spec: str | None):
    """Hardware for 'NAMExN' (:func:`wizard.hardware.catalog.parse_gpu_spec`); None for None.
    Raises HardwareError (a ValueError) for an unknown name."""
    return hw_catalog.parse_gpu_spec(spec) if spec else None


def version_of(state: dict[str, Any]) -> tuple[VllmVersion, str | None]:
    """(version to check against, why the typed one is not used or None)."""
    text = state.get("vllm_version")
    if not text:
        return default_version(), None
    try:
        return parse_version(str(text)), None
    except ValueError as err:
        return default_version(), str(err)


def evaluate(state: dict[str, Any], *, allow_hub: bool | None = None, path_allowed=None) -> Evaluation:
    """Resolve and check ``state`` with :mod:`wizard.api` (models cached in wizard.context).

    ``path_allowed``: the UI's folder policy (:meth:`wizard.security.PathPolicy.allows`); model
    names it refuses are not read (see :func:`wizard.context.resolve_context`)."""
    cfg = config_of(state)
    ev = Evaluation(config=cfg)
    problem = gpu_count_problem(state)
    if problem:
        ev.notes.append(problem)
    try:
        ev.hardware = hardware_lookup(gpu_spec(state))
    except ValueError as err:  # unknown name: check without hardware, and say so
        ev.hardware_error = str(err)
    version, ev.version_error = version_of(state)
    if ev.version_error:
        ev.notes.append(f"{ev.version_error}; checking against vLLM {version} instead")
    elif not is_known(version):  # a release the rules have no tables for: say which one stands in
        ev.notes.append(f"vLLM {version} is not a release the rules know (known: {', '.join(known_versions())}); "
                        f"the checks use the tables of vLLM {version.key}, the nearest known release")
    if cfg is None:
        return ev
    hub = state.get("allow_hub", False) if allow_hub is None else allow_hub
    ev.ctx = api.resolve(cfg, vllm_version=version, gpu=ev.hardware, allow_hub=bool(hub), path_allowed=path_allowed)
    ev.report = api.check_context(ev.ctx)
    return ev


# ---- catalogs ------------------------------------------------------------------------------

def hardware_catalog() -> list[Any]:
    """Every catalog GPU (:func:`wizard.hardware.catalog.catalog`)."""
    return list(hw_catalog.catalog())


@functools.lru_cache(maxsize=1)
def detected_gpus() -> tuple[Any, ...]:
    """The GPUs on this machine (NVML, read once per process); () without GPU or driver."""
    try:
        return tuple(nvml.discover())
    except Exception:  # no driver, no library: nothing detected
        return ()


def detected_spec() -> str | None:
    """'NAMExN' of the GPUs on this machine when the catalog knows them, else None."""
    gpus = detected_gpus()
    if not gpus:
        return None
    name = nvml.match_catalog_name(gpus[0].name)
    return f"{name}x{len(gpus)}" if name else None


def catalog_models(role: str | None = None) -> list[str]:
    """Catalog ids (:func:`wizard.models.catalog.entries`), sorted."""
    return sorted({e.id for e in model_catalog.entries(role=role)})


def versions() -> tuple[list[str], str]:
    """(releases the rules have tables for, the default version)."""
    known = list(known_versions())
    d = str(default_version())
    if d not in known:
        known.insert(0, d)
    return known, d


# ---- export --------------------------------------------------------------------------------

EXPORT_FORMS = ("command", "dotted", "yaml", "python")
SCALEOUT_FORMS = ("multi-gpu", "multinode", "docker", "k8s", "helm", "kserve", "llm-d", "ray")


def export_forms(cfg: ServeConfig, forms: tuple[str, ...] = EXPORT_FORMS, version: Any = None) -> dict[str, str]:
    """{form: text} (:func:`wizard.io.forms.export`; ``version``: the release the ``python`` form's
    ``vllm.LLM`` is written for, default the installed or newest); a form that fails says why in a comment."""
    out: dict[str, str] = {}
    for to in forms:
        try:
            out[to] = export(cfg, to, vllm_version=version)
        except Exception as err:  # one form failing must not hide the others
            msg = err.args[0] if err.args else err
            out[to] = f"# {to} export not available: {msg}"
    return out


# ---- plan ----------------------------------------------------------------------------------

_ITEM = re.compile(r"[^,; \t\r\n]+")


def _items(text: Any, limit: int | None = None) -> list[str]:
    """A typed list ("0.7, 0.48; 0.31" or "[1 2 4]") as its non-empty items; at most ``limit``
    of them (the rest is not even split: a pasted megabyte costs nothing)."""
    t = str(text or "").strip().strip("[]")
    return [m.group(0) for m in itertools.islice(_ITEM.finditer(t), limit)]


def parse_ks(text: Any) -> tuple[list[int] | None, str | None]:
    """Values of k to try, as typed ("1,2,4"): ([1, 2, 4], None), or (None, why) for anything
    else (at most 16 values, each a whole number from 1 to :data:`wizard.plan.inputs.K_HARD_MAX`)."""
    parts = _items(text, 17)
    if not parts:
        return None, "k values: give one or more whole numbers, e.g. 1,2,4"
    if len(parts) > 16:
        return None, "k values: at most 16"
    for p in parts:
        if not (p.isascii() and p.isdigit()) or len(p) > 6 or not 1 <= int(p) <= K_HARD_MAX:
            return None, f"k values: {p[:12]!r} is not a whole number from 1 to {K_HARD_MAX}"
    return sorted({int(p) for p in parts}), None


def parse_concurrencies(text: Any) -> tuple[list[int] | None, str | None]:
    """Concurrencies to sweep, as typed ("1,4,16" or "4"): ([1, 4, 16], None), or (None, why)
    (at most 16 values, each a whole number from 1 to :data:`wizard.plan.inputs.MAX_CONCURRENCY`, which wizard.launch.tune checks)."""
    parts = _items(text, 17)
    if not parts:
        return None, "concurrency: give one or more whole numbers, e.g. 4 or 1,4,16"
    if len(parts) > 16:
        return None, "concurrency: at most 16 values"
    for p in parts:
        if not (p.isascii() and p.isdigit()) or len(p) > 5 or not 1 <= int(p) <= MAX_CONCURRENCY:
            return None, f"concurrency: {p[:12]!r} is not a whole number from 1 to {MAX_CONCURRENCY}"
    return sorted({int(p) for p in parts}), None


def parse_acceptance(text: Any) -> tuple[list[float] | None, str | None]:
    """Per-position acceptance as typed ("0.7, 0.48, 0.31"): (rates, None), (None, None) when
    empty, or (None, why) when a value is not a number in [0, 1]."""
    out: list[float] = []
    for i, part in enumerate(_items(text, K_HARD_MAX + 1), 1):
        try:
            x = float(part)
        except ValueError:
            return None, f"position {i}: {part.strip()[:20]!r} is not a number"
        if not 0.0 <= x <= 1.0:
            return None, f"position {i}: {x:g} is not between 0 and 1"
        out.append(x)
    if len(out) > K_HARD_MAX:
        return None, f"more than {K_HARD_MAX} positions: at most {K_HARD_MAX} (one per draft token)"
    why = rising(out)
    if why:
        return None, why
    return (out or None), None


def plan_for(ctx: Any, acceptance: list[float] | None = None, source: str | None = None,
             task: str | None = None, report: Any = None) -> Any:
    """:func:`wizard.api.plan` of a context, with measured/entered per-position ``acceptance``,
    else the method's published acceptance for ``task`` (chat / code / math / summarization).
    ``report``: the live check of ``ctx`` (not run again for the plan's refusal)."""
    if acceptance:
        return api.plan(ctx, acceptance=acceptance, acceptance_kind="cumulative", acceptance_source=source or "entered",
                        report=report)
    return api.plan(ctx, task=task, report=report)


# ---- presets -------------------------------------------------------------------------------

def presets() -> list[tuple[str, str]]:
    """[(label, name)] of the curated presets (:func:`wizard.io.presets.list_presets`)."""
    out = []
    for p in presets_mod.list_presets():
        label = f"{p.title} ({p.hardware})" if p.title and p.hardware else (p.title or p.name)
        out.append((label[:120], p.name))
    return out


def load_preset(name: str) -> tuple[ServeConfig, str | None]:
    """(config, gpu spec or None) of a preset. Raises the preset module's error."""
    cfg, hardware, _meta = presets_mod.load_preset(name)
    return cfg, (hardware if isinstance(hardware, str) and hardware else None)


# ---- cross-check ---------------------------------------------------------------------------

def cross_check(cfg: ServeConfig, report: Any, timeout: float = 180.0) -> Any:
    """vLLM's own verdict (:func:`wizard.vllm.crosscheck.cross_check`, a separate process)."""
    return crosscheck.cross_check(cfg, report, timeout=timeout)
