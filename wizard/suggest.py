"""What fits a configuration: the choices every face offers (UI, CLI, notebook).

    from wizard import api
    s = api.suggest(api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct"), gpu="H100-SXM")
    s.methods, s.drafters, s.k, s.kv_dtypes, s.backends     # or: python -m wizard suggest -- vllm serve ...

* :func:`methods_for` -- the speculative methods vLLM ``version`` accepts, those that fit the
  target first (its MTP layers, catalog drafters, a speculators-format checkpoint), each with
  what it needs (:mod:`wizard.vllm.methods` traits);
* :func:`drafters_for` -- catalog drafters for a target, optionally of one method's family;
* :func:`k_range` -- the num_speculative_tokens range: vLLM's bounds (k > 0, SD022; 1 + k
  within max_num_batched_tokens and max_model_len, SD026), the checkpoint's (an MTP target's
  n_predict: k must be a multiple of it, SD062, and a 1-layer MTP reruns its one layer, SD064,
  so the default k is n_predict), and a practical top per method family;
* :func:`kv_dtypes` -- every ``CacheDType`` of the release with the attention backend vLLM
  selects for it on the hardware, or why none fits (:mod:`wizard.mechanisms.attention_backend`,
  tables generated from each release, not the catalog's hand flags);
* :func:`backends` -- which backend the target and the drafter get with the configured KV
  dtypes: what the UI shows where a user expects a finding ("why nothing fired").

Nothing here decides a verdict: the rules do. These are the options a form lists.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Iterable

from wizard.context import CheckContext
from wizard.hardware.spec import Hardware
from wizard.mechanisms.attention_backend import AttentionLayout, Selection, layout_for, select_backend
from wizard.mechanisms import method_support
from wizard.mechanisms.drafter_context import drafter_context, drafter_max_len
from wizard.models import catalog
from wizard.models.catalog import closest_catalog_ids
from wizard.models.info import ModelInfo
from wizard.plan.inputs import K_HARD_MAX, MAX_CONCURRENCY
from wizard.plan.k_policy import KRange, default_k, k_range, mtp_k_step
from wizard.config import Patch
from wizard.rules.helpers import draft_vocab, patched_ctx, tensor_shape
from wizard.rules.registry import Severity, iter_findings
from wizard.vllm import methods as M
from wizard.vllm.versions import VllmVersion, kv_cache_dtypes

__all__ = [
    "MethodChoice", "DrafterChoice", "KRange", "KvChoice", "BackendChoice", "Suggestions",
    "methods_for", "drafters_for", "drafter_method", "k_range", "kv_dtypes", "checked_kv_dtypes", "backends", "suggest",
    "closest_catalog_ids", "K_HARD_MAX", "MAX_CONCURRENCY", "FactRow", "drafter_facts", "default_drafter", "default_k",
    "DrafterFit", "drafter_fit", "drafter_family", "method_reads", "SpecChange", "spec_for_target", "spec_for_method",
]


#: attention layout assumed when the target's head size is unknown (Llama/Qwen-style 128-dim heads)
GENERIC_LAYOUT = AttentionLayout(head_size=128)


# ---- methods --------------------------------------------------------------------------------

@dataclass(frozen=True)
class MethodChoice:
    """One method a form offers. ``recommended``: it fits this target (``why`` says how);
    ``needs``: what the method needs, in a few words; ``drafter``: the catalog drafter it names."""

    method: str
    recommended: bool
    why: str
    needs: str
    drafter: str | None = None


def methods_for(target: ModelInfo | None, version: VllmVersion, model_id: str | None = None) -> list[MethodChoice]:
    """Methods ``version`` accepts: those that fit ``target`` first (its MTP layers, catalog
    drafters of ``model_id``, a speculators-format checkpoint, then the general-purpose eagle3,
    draft_model, ngram and suffix), then every other one. MTP aliases are collapsed into ``mtp``
    (vLLM rewrites them all to mtp, R023)."""
    allowed = set(M.allowed_methods(version))
    out: list[MethodChoice] = []
    seen: set[str] = set()

    def add(method: str, recommended: bool, why: str, drafter: str | None = None) -> None:
        if method in seen or method not in allowed:
            return
        seen.add(method)
        t = M.traits(method)
        out.append(MethodChoice(method, recommended, why, t.summary if t else "see vLLM docs", drafter))

    if target is not None and target.mtp_layers:
        add(M.MTP, True, f"the checkpoint has {target.mtp_layers} MTP layer(s)")
    unrunnable: list[tuple[str, str, str]] = []
    for d in drafters_for(model_id):
        if d.method:
            r = method_support.route(version, d.method)
            if r.ok:
                add(d.method, True, f"catalog drafter {d.id}", d.id)
            else:  # accepted by the config but no proposer (mlp_speculator, SD760): listed after the fitting ones
                unrunnable.append((d.method, f"catalog drafter {d.id}; vLLM {version} cannot run it ({r.error})", d.id))
    if target is not None and target.speculators_config:
        m = str(target.speculators_config.get("speculators_model_type") or M.EAGLE3)
        add(m, True, "the model itself is a speculators-format drafter")
    for m in (M.EAGLE3, M.DRAFT_MODEL, M.NGRAM, M.SUFFIX):
        t = M.traits(m)
        add(m, True, t.summary if t else m)
    for m, why, drafter in unrunnable:
        add(m, False, why, drafter)
    aliases = set(M.mtp_types(version)) - {M.MTP}
    for m in M.allowed_methods(version):
        if m in aliases:
            continue
        if m == M.MTP:
            add(m, False, "target has no MTP layers" if not (target and target.mtp_layers)
                else "multi-token prediction layers of the checkpoint")
        else:
            t = M.traits(m)
            add(m, False, t.summary if t else "see vLLM docs")
    return out


# ---- drafters -------------------------------------------------------------------------------

@dataclass(frozen=True)
class DrafterChoice:
    """A catalog drafter for a target: its id, the method it drafts with, its title."""

    id: str
    method: str | None
    title: str


def drafter_method(entry: catalog.CatalogEntry) -> str | None:
    """The method a catalog entry drafts with: its declared drafter method (eagle, eagle3 ...),
    or ``draft_model`` for a small target-role model listed in ``draft_for`` (such entries list
    the methods they *serve* with, e.g. ngram, not how they draft)."""
    if entry.role != "drafter" and entry.draft_for:
        return M.DRAFT_MODEL
    for m in entry.methods:
        if m and not M.is_lookup(m):
            return str(m)
    return None


def drafters_for(target_id: str | None, method: str | None = None) -> list[DrafterChoice]:
    """Catalog drafters for ``target_id`` (catalog order); with ``method``, only that method's
    (an EAGLE-1 head is no eagle3 drafter). [] for an unknown target."""
    if not target_id:
        return []
    try:
        entries = catalog.drafters_for(str(target_id))
    except Exception:  # a broken catalog file: no suggestions, never an error here
        return []
    out = [DrafterChoice(e.id, drafter_method(e), e.title or "") for e in entries]
    return [d for d in out if method is None or d.method == method]


# ---- defaults a form fills in when the method changes (UI Speculation step, `wizard suggest`) ----

def default_drafter(target_id: str | None, method: str | None, current: str | None = None,
                    version: Any = None) -> str | None:
    """The ``speculative_config.model`` to use once the method becomes ``method``: the catalog's
    drafter of that method for ``target_id``, unless ``current`` is already set and is not a
    catalog drafter of another method (the user's own choice, or one of this method, is kept).
    ``current`` unchanged for a method without a drafter checkpoint or with no catalog drafter,
    and for a method vLLM ``version`` (when given) does not accept (0.33: mlp_speculator, medusa)."""
    if not M.needs_drafter_checkpoint(method) or (version is not None and not M.is_allowed(method, version)):
        return current
    known = {d.id: d.method for d in drafters_for(target_id)}
    named = next((d for d, m in known.items() if m == method), None)
    if named and (not current or (current in known and known[current] != method)):
        return named
    return current


# ---- is the configured drafter still valid? (UI Speculation/Target steps, `wizard suggest`) --------

@dataclass(frozen=True)
class DrafterFit:
    """Whether ``speculative_config.model`` fits the target and method: ``fits`` True (the
    catalog lists it for this target), False (``why`` says what contradicts it), None (nothing
    known says either way: a drafter the user named, kept)."""

    fits: bool | None
    why: str = ""


def drafter_family(drafter_id: str | None) -> str | None:
    """The method a drafter checkpoint drafts with: its catalog entry's (:func:`drafter_method`),
    else the marker vLLM detects in its lower-cased path (``eagle-``, ``eagle3``, ``dflash``,
    ``dspark``: :data:`wizard.vllm.methods.PATH_MARKERS`, R026), else None."""
    if not isinstance(drafter_id, str) or not drafter_id.strip():
        return None
    try:
        e = catalog.get_entry(drafter_id)
    except Exception:
        e = None
    if e is not None and ("drafter" in e.roles):
        m = drafter_method(e)
        if m:
            return m
    low = drafter_id.lower()
    for marker, m in M.PATH_MARKERS:
        if marker in low:
            return m
    return None


def _catalog_targets_of(entry: catalog.CatalogEntry) -> list[str]:
    return [t for t in ([entry.verifier] if entry.verifier else []) + list(entry.draft_for) if t]


def drafter_fit(target_id: str | None, method: str | None, drafter_id: str | None, *,
                target: ModelInfo | None = None, drafter: ModelInfo | None = None) -> DrafterFit:
    """Is ``drafter_id`` still a valid ``speculative_config.model`` for ``target_id`` and ``method``?

    * the method reads no drafter checkpoint (ngram, suffix ...; :func:`method_reads`): no;
    * a drafter of another family (an EAGLE-1 head under eagle3, a DFlash drafter under dspark:
      :func:`drafter_family`): no;
    * a catalog drafter with a catalog target: yes iff the catalog lists it for that target
      (``catalog.drafters_for``); one trained for other targets is not;
    * otherwise, with both models inspected and an EAGLE-family method (the drafter drafts over
      the target's vocabulary): a different ``vocab_size`` is not;
    * else unknown (None): the user's own drafter, kept.
    """
    d = str(drafter_id or "").strip()
    if not d:
        return DrafterFit(None)
    if method and not method_reads(method, "model"):
        return DrafterFit(False, f"method {method} reads no drafter model")
    fam = drafter_family(d)
    if method and fam and fam != method and not (M.is_mtp(method) and M.is_mtp(fam)):
        return DrafterFit(False, f"it is a {fam} drafter, not one for {method}")
    try:
        entry = catalog.get_entry(d)
        tentry = catalog.get_entry(target_id) if target_id else None
        listed = {e.id for e in catalog.drafters_for(str(target_id))} if target_id else set()
    except Exception:  # a broken catalog file: nothing known
        entry, tentry, listed = None, None, set()
    if entry is not None and tentry is not None and _catalog_targets_of(entry):
        if entry.id in listed:
            return DrafterFit(True, f"the catalog lists it for {tentry.id}")
        return DrafterFit(False, f"the catalog lists it for {', '.join(_catalog_targets_of(entry)[:3])}, not {tentry.id}")
    if (M.use_eagle(method) and target is not None and drafter is not None and drafter is not target
            and isinstance(target.vocab_size, int) and isinstance(drafter.vocab_size, int)
            and target.vocab_size != drafter.vocab_size):
        return DrafterFit(False, f"its vocabulary ({drafter.vocab_size:,}) is not the target's ({target.vocab_size:,})")
    return DrafterFit(None)


# ---- which speculative_config fields a method reads ---------------------------------------------

#: speculative_config fields only some methods read, each with the test of the methods that do
#: (``SpeculativeConfig.__post_init__``: ngram's prompt_lookup_*, suffix decoding's suffix_*,
#: dspark's top-k; a drafter checkpoint and its parallelism only where a drafter network runs)
_METHOD_FIELDS: dict[str, Any] = {
    "model": lambda m: not M.has_no_model(m) or m == M.CUSTOM_CLASS,
    "draft_tensor_parallel_size": lambda m: not M.has_no_model(m),
    "prompt_lookup_min": M.use_ngram,
    "prompt_lookup_max": M.use_ngram,
    "suffix_decoding_max_tree_depth": lambda m: m == M.SUFFIX,
    "suffix_decoding_max_cached_requests": lambda m: m == M.SUFFIX,
    "suffix_decoding_max_spec_factor": lambda m: m == M.SUFFIX,
    "suffix_decoding_min_token_prob": lambda m: m == M.SUFFIX,
    "dspark_draft_topk": lambda m: m == M.DSPARK,
}


def method_reads(method: str | None, name: str) -> bool:
    """Whether vLLM reads ``speculative_config.<name>`` for ``method`` (traits of
    :mod:`wizard.vllm.methods`: a method with no model reads no drafter checkpoint; n-gram reads
    prompt_lookup_*, suffix decoding suffix_decoding_*). Fields every method reads (k, method,
    ...) and unknown methods: True."""
    test = _METHOD_FIELDS.get(name)
    if test is None or not method or M.traits(method) is None:
        return True
    return bool(test(method))


@dataclass
class SpecChange:
    """``speculative_config`` after a target or method change: ``spec`` (a new dict), and one
    ``notes`` line per field removed or replaced, naming it and why."""

    spec: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.notes)


def _replace_drafter(spec: dict[str, Any], target_id: str | None, method: str | None, why: str) -> str:
    old = spec.get("model")
    new = default_drafter(target_id, method) if M.needs_drafter_checkpoint(method) else None
    if new and new != old:
        spec["model"] = new
        return f"Drafter `{old}` replaced by `{new}` (the catalog's {method} drafter for `{target_id}`): {why}."
    spec.pop("model", None)
    return f"Drafter `{old}` removed: {why}" + (f"; choose a {method} drafter for `{target_id}`." if M.needs_drafter_checkpoint(method) else ".")


def spec_for_target(spec: dict[str, Any] | None, target_id: str | None, *, target: ModelInfo | None = None,
                    drafter: ModelInfo | None = None) -> SpecChange:
    """``spec`` (a speculative_config dict) once the target becomes ``target_id``: a drafter that
    no longer fits (:func:`drafter_fit` False) is replaced by the catalog's drafter of the method
    for the new target (:func:`default_drafter`), or removed; the notes say which and why."""
    out = dict(spec or {})
    method = out.get("method") if isinstance(out.get("method"), str) else None
    cur = out.get("model")
    if not isinstance(cur, str) or not cur.strip():
        return SpecChange(out)
    fit = drafter_fit(target_id, method, cur, target=target, drafter=drafter)
    if fit.fits is not False:
        return SpecChange(out)
    return SpecChange(out, [_replace_drafter(out, target_id, method, f"{fit.why}")])


def spec_for_method(spec: dict[str, Any] | None, target_id: str | None, previous_method: str | None = None) -> SpecChange:
    """``spec`` once its method became ``spec['method']`` (from ``previous_method``): fields the
    new method does not read (:func:`method_reads`) are removed; a drafter of another family is
    replaced by the catalog's drafter of the new method (:func:`default_drafter`) or removed;
    a method with a catalog drafter and none configured gets it. Notes name what changed."""
    out = dict(spec or {})
    method = out.get("method") if isinstance(out.get("method"), str) else None
    notes: list[str] = []
    if not method or method == previous_method:
        return SpecChange(out)
    for name in list(out):
        if name == "model" or not isinstance(name, str) or method_reads(method, name):
            continue
        notes.append(f"`{name}` removed: method {method} does not read it.")
        out.pop(name)
    cur = out.get("model")
    if isinstance(cur, str) and cur.strip():
        fit = drafter_fit(target_id, method, cur)
        if fit.fits is False:
            notes.append(_replace_drafter(out, target_id, method, fit.why))
    else:
        named = default_drafter(target_id, method)
        if named:
            out["model"] = named
    return SpecChange(out, notes)


# ---- KV dtypes and attention backends -----------------------------------------------------------

@dataclass(frozen=True)
class KvChoice:
    """One ``--kv-cache-dtype`` value: ``usable`` True (``backend`` selected), False (``why`` is
    vLLM's reason) or None (hardware unknown: not checked)."""

    dtype: str
    usable: bool | None
    backend: str | None = None
    why: str = ""
    #: the rule whose error this dtype brings in the configuration (:func:`checked_kv_dtypes`), when a
    #: backend accepts it but the check refuses it; None otherwise
    refused_by: str | None = None


def _hw_key(hw: Hardware) -> tuple:
    return (hw.name, hw.vendor, hw.compute_capability, hw.isa)


@functools.lru_cache(maxsize=4096)
def _select(release: str, hw_key: tuple, hw_json: str, layout: AttentionLayout, pinned: str | None) -> Selection:
    return select_backend(release, Hardware.model_validate_json(hw_json), layout, pinned)


def select(version: VllmVersion, hardware: Hardware, layout: AttentionLayout, pinned: str | None = None) -> Selection:
    """:func:`wizard.mechanisms.attention_backend.select_backend`, cached per (release, device
    kind, layout): forms ask the same questions on every keystroke."""
    hw = hardware.model_copy(update={"count": 1, "used_bytes": None})
    return _select(str(version), _hw_key(hw), hw.model_dump_json(), layout, pinned)


def _usable(sel: Selection) -> tuple[bool, str]:
    if not sel.ok:
        return False, sel.error or "no attention backend"
    chosen = sel.check(sel.backend)
    if chosen is not None and chosen.reasons:  # CPU: selected anyway, its kernels fail at load
        return False, f"{sel.backend}: {'; '.join(chosen.reasons)}"
    return True, ""


def kv_dtypes(version: VllmVersion, hardware: Hardware | None, model: ModelInfo | None = None, *,
              dtype: str | None = None, tensor_parallel_size: int = 1, method: str | None = None,
              role: str = "target", only_usable: bool = False) -> list[KvChoice]:
    """Every ``CacheDType`` of ``version`` with the backend vLLM selects for ``model``'s layout
    on ``hardware`` (a generic 128-dim layout when the model is unknown). Without hardware each
    choice is ``usable=None``. ``only_usable`` drops the ones no backend accepts ('auto' stays)."""
    out: list[KvChoice] = []
    for d in kv_cache_dtypes(version):
        if hardware is None:
            out.append(KvChoice(d, None, None, "hardware unknown"))
            continue
        lay = None
        if model is not None:
            try:
                lay = layout_for(model, kv_cache_dtype=d, dtype=dtype, method=method, role=role,
                                 tensor_parallel_size=max(1, tensor_parallel_size or 1))
            except Exception:
                lay = None
        if lay is None:
            lay = AttentionLayout(head_size=GENERIC_LAYOUT.head_size, kv_cache_dtype=d)
        sel = select(version, hardware, lay)
        ok, why = _usable(sel)
        if ok or not only_usable or d == "auto":
            out.append(KvChoice(d, ok, sel.backend if ok else None, why))
    return out


@dataclass(frozen=True)
class BackendChoice:
    """The attention backend one model (``role`` 'target' or 'drafter') gets: ``backend`` or
    ``error`` (vLLM's text), with the KV dtype and layout facts that decided it.
    ``rejected``: candidates vLLM tried first and why each was refused."""

    role: str
    kv_cache_dtype: str
    backend: str | None
    error: str | None = None
    certain: bool = True
    layout: dict[str, Any] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def _choice(role: str, kv: str, lay: AttentionLayout | None, sel: Selection | None, why_none: str) -> BackendChoice:
    if lay is None or sel is None:
        return BackendChoice(role, kv, None, why_none, certain=False)
    facts = {k: v for k, v in asdict(lay).items() if v not in (False, None) or k in ("head_size", "dtype")}
    return BackendChoice(role, kv, sel.backend, sel.error, sel.certain, facts, sel.why_not(), tuple(sel.notes))


def backends(ctx: CheckContext) -> list[BackendChoice]:
    """Backends vLLM selects for the target and (with a drafter that has attention layers) the
    drafter, with the effective KV dtypes (``ctx.target_kv_dtype()``, ``ctx.drafter_kv_dtype()``).
    The drafter never inherits ``--attention-backend``; a non-causal DFlash drafter selects with
    ``use_non_causal``. [] without hardware."""
    hw = ctx.hardware
    if hw is None:
        return []
    cfg = ctx.config
    tp = max(1, cfg.tensor_parallel_size or 1) if isinstance(cfg.tensor_parallel_size, int) else 1
    dtype = cfg.dtype if isinstance(cfg.dtype, str) else None
    out: list[BackendChoice] = []
    tkv = _safe(ctx.target_kv_dtype, "auto")
    tlay = _layout(ctx.target, tkv, dtype, tp, None, "target")
    pinned = _pin(cfg.attention_backend)
    tsel = select(ctx.version, hw, tlay, pinned) if tlay is not None else None
    out.append(_choice("target", tkv, tlay, tsel, "target attention layout unknown (no head size)"))
    spec = ctx.spec
    method = ctx.method
    if spec is None or not M.uses_draft_kv_cache(method):
        return out
    dkv = _safe(ctx.drafter_kv_dtype, tkv)
    model = ctx.target if M.is_mtp(method) else ctx.drafter
    dtp = spec.draft_tensor_parallel_size if isinstance(spec.draft_tensor_parallel_size, int) else tp
    # the draft model runs in the target's dtype (ctx.view.drafter_dtype), not its checkpoint's
    dlay = _layout(model, dkv, ctx.view.drafter_dtype or dtype, max(1, dtp or 1), method, "drafter")
    dpin = _pin(spec.attention_backend)
    dsel = select(ctx.version, hw, dlay, dpin) if dlay is not None else None
    out.append(_choice("drafter", dkv, dlay, dsel, "drafter attention layout unknown (drafter not inspected)"))
    return out


def _pin(name: Any) -> str | None:
    """A pinned backend name ('auto' and empty mean none: vLLM selects)."""
    return name if isinstance(name, str) and name.strip() and name.strip().lower() != "auto" else None


def _safe(fn, default: str) -> str:
    try:
        return str(fn() or default)
    except Exception:
        return default


def _layout(model: ModelInfo | None, kv: str, dtype: str | None, tp: int, method: str | None, role: str):
    if model is None:
        return None
    try:
        return layout_for(model, kv_cache_dtype=kv, dtype=dtype, tensor_parallel_size=tp, method=method, role=role)
    except Exception:
        return None


# ---- drafter facts beside the target's ----------------------------------------------------------

@dataclass(frozen=True)
class FactRow:
    """One fact of the pair: the target's value, the drafter's, and what the vLLM release does with it."""

    fact: str
    target: str
    drafter: str
    vllm: str = ""


def _v(x: Any) -> str:
    return "?" if x is None else str(x)


def _shape(info: ModelInfo | None, name: str) -> list[int] | None:
    return tensor_shape(info, name) if info is not None else None


def drafter_facts(ctx: CheckContext) -> list[FactRow]:
    """The drafter's facts beside the target's, each with what ``ctx.version`` does with it (the
    behaviour the drafter rules model: SD220-SD225, SD062/SD064, SD082). [] without speculation
    or when the method runs no drafter network."""
    spec, method, t, v = ctx.spec, ctx.method, ctx.target, ctx.version
    if spec is None or method is None or M.has_no_model(method) or M.is_lookup(method):
        return []
    rows: list[FactRow] = []
    if M.is_mtp(method):
        n, repeats = mtp_k_step(method, t, ctx.drafter if ctx.drafter is not t else None)
        rows.append(FactRow("MTP layers", _v(t.mtp_layers if t else None), "(the target's)",
                            f"vLLM {v} drafts with them; k must be a multiple of n_predict={_v(n)}"
                            + ("; k > n reruns the same layer (lower acceptance)" if repeats and n else "")))
        return rows
    d = ctx.drafter
    if d is None or d is t:
        return [FactRow("drafter", _v(t.id if t else None), "not inspected",
                        (ctx.lookup_errors.get("speculative_config.model") or "no drafter model given")[:200])]
    rows.append(FactRow("architecture", ", ".join(t.architectures) if t else "?", ", ".join(d.architectures) or _v(d.model_type),
                        f"vLLM names the drafter class {M.arch_prefix(method)}…" if M.arch_prefix(method) else ""))
    rows.append(FactRow("hidden_size", _v(t.hidden_size if t else None), _v(d.hidden_size),
                        "differs: an EAGLE-family drafter must declare target_hidden_size (SD223)"
                        if (M.use_eagle(method) and t and d.hidden_size and t.hidden_size and d.hidden_size != t.hidden_size
                            and not d.target_hidden_size) else ""))
    rows.append(FactRow("layers", _v(t.num_hidden_layers if t else None), _v(d.num_hidden_layers)))
    dv = draft_vocab(d)
    rows.append(FactRow("vocabulary", _v(t.vocab_size if t else None),
                        _v(d.vocab_size) + (f" (draft vocab {dv})" if dv else ""),
                        ("reduced draft vocabulary: drafts over its own lm_head and maps ids with d2t"
                         if d.has_d2t and d.has_lm_head else "reduced draft vocabulary: needs its own lm_head and d2t (SD221)")
                        if dv and t and t.vocab_size and dv < t.vocab_size else ""))
    eagle_head = M.is_eagle_head(method)
    lm = _shape(d, "lm_head.weight")
    rows.append(FactRow("lm_head", _v(_shape(t, "lm_head.weight") or ([t.vocab_size, t.hidden_size] if t else None)),
                        f"own {lm}" if lm else ("none" if d.has_lm_head is False else "unknown"),
                        ("shares the target's lm_head" if not lm and eagle_head and d.has_lm_head is False else
                         "uses the drafter's own" if lm else "")))
    emb = _shape(d, "embed_tokens.weight")
    rows.append(FactRow("embed_tokens", _v(_shape(t, "embed_tokens.weight") or ([t.vocab_size, t.hidden_size] if t else None)),
                        f"own {emb}" if emb else ("none" if d.has_embed_tokens is False else "unknown"),
                        ("shares the target's only if byte-identical; otherwise keeps the drafter's (SD220)" if emb and eagle_head
                         else "shares the target's" if eagle_head and d.has_embed_tokens is False else "")))
    if eagle_head or dv:
        rows.append(FactRow("d2t / t2d", "—", f"d2t {'yes' if d.has_d2t else 'no' if d.has_d2t is False else '?'}, "
                                              f"t2d {'yes' if d.has_t2d else 'no' if d.has_t2d is False else '?'}",
                            "d2t maps draft ids to target ids (needed when the draft vocabulary is smaller)"))
    if M.uses_aux_hidden_states(method):
        ids = d.eagle_aux_hidden_state_layer_ids
        L = t.num_hidden_layers if t else None
        default = f"(2, {L // 2}, {L - 3})" if isinstance(L, int) and L > 3 else "(2, L/2, L-3)"
        rows.append(FactRow("aux layer ids", f"{_v(L)} layers", _v(ids) if ids else "not given",
                            "reads these target layers' hidden states" if ids else
                            f"not given: vLLM uses {default} of the target, which must be what it was trained on (SD224)"))
    tmax = t.max_position_embeddings if t else None
    served = ctx.config.max_model_len if isinstance(ctx.config.max_model_len, int) else tmax
    try:
        dc = drafter_context(v, method, drafter=d, served_len=served if isinstance(served, int) else None)
        what = "" if dc.outcome in ("ok", "unknown") else dc.message
    except Exception:  # release tables missing: the fact without the verdict
        what = ""
    rows.append(FactRow("max positions", _v(tmax), _v(drafter_max_len(d)), what))
    return rows


# ---- all at once ------------------------------------------------------------------------------

@dataclass
class Suggestions:
    """Everything :func:`suggest` found for one configuration (see the module docstring)."""

    vllm_version: str
    hardware: str | None
    methods: list[MethodChoice]
    drafters: list[DrafterChoice]
    k: KRange | None
    kv_dtypes: list[KvChoice]
    drafter_kv_dtypes: list[KvChoice]
    backends: list[BackendChoice]
    #: the catalog drafter a form fills in for the configured method (:func:`default_drafter`)
    default_drafter: str | None = None
    #: why the target model could not be read (its lookup error): nothing is judged against it,
    #: so no method is marked as fitting
    target_problem: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "vllm_version": self.vllm_version,
            "hardware": self.hardware,
            "methods": [asdict(m) for m in self.methods],
            "drafters": [asdict(d) for d in self.drafters],
            "k": asdict(self.k) if self.k else None,
            "kv_cache_dtypes": [asdict(c) for c in self.kv_dtypes],
            "drafter_kv_cache_dtypes": [asdict(c) for c in self.drafter_kv_dtypes],
            "backends": [asdict(b) for b in self.backends],
            "default_drafter": self.default_drafter,
            "target_problem": self.target_problem,
        }

    def render_text(self) -> str:
        lines = [f"== suggestions for vLLM {self.vllm_version}, hardware {self.hardware or 'unknown'} =="]
        if self.target_problem:
            lines.append(f"target: could not be read -- {self.target_problem}; nothing below is judged against it")
        lines.append("methods (fitting ones first):" if not self.target_problem else "methods (the target unknown):")
        for m in self.methods:
            mark = "*" if m.recommended else " "
            lines.append(f"  {mark} {m.method:22s} {m.why}" + (f"  [{m.needs}]" if m.needs != m.why else ""))
        lines.append("catalog drafters: " + (", ".join(f"{d.id} ({d.method})" for d in self.drafters) or "none"))
        if self.default_drafter:
            lines.append(f"default drafter: {self.default_drafter}")
        if self.k is not None:
            k = self.k
            lines.append(f"num_speculative_tokens: {k.minimum}..{k.maximum}" + (f" in steps of {k.step}" if k.step > 1 else "")
                         + f", default {k.default} ({k.why})" + (f"; vLLM can run at most {k.vllm_max}" if k.vllm_max else ""))
        for title, rows in (("kv_cache_dtype", self.kv_dtypes), ("speculative_config.kv_cache_dtype", self.drafter_kv_dtypes)):
            if not rows:
                continue
            if all(r.usable is None for r in rows):
                lines.append(f"{title}: {', '.join(r.dtype for r in rows)} (hardware unknown: not narrowed)")
                continue
            ok = [f"{r.dtype} ({r.backend})" for r in rows if r.usable]
            bad = [r.dtype for r in rows if r.usable is False and not r.refused_by]
            refused = [f"{r.dtype} ({r.why})" for r in rows if r.usable is False and r.refused_by]
            lines.append(f"{title}: {', '.join(ok)}" + (f"; no backend: {', '.join(bad)}" if bad else "")
                         + (f"; refused by the check: {', '.join(refused)}" if refused else ""))
        for b in self.backends:
            if b.backend:
                lines.append(f"attention backend, {b.role}: {b.backend} (KV {b.kv_cache_dtype})"
                             + ("" if b.certain else " (not certain: some facts unknown)"))
            else:
                lines.append(f"attention backend, {b.role}: none -- {b.error}")
        return "\n".join(lines) + "\n"


def _kv_inputs(ctx: CheckContext, role: str) -> tuple[ModelInfo | None, str | None, int, str | None]:
    """(model, dtype, tensor_parallel_size, method) the ``role`` side's KV dtype list is built for."""
    cfg = ctx.config
    method = ctx.method if ctx.spec is not None else None
    model = ctx.target if role == "target" or M.is_mtp(method) else ctx.drafter
    dtype = cfg.dtype if isinstance(cfg.dtype, str) else None
    if role == "drafter" and ctx.view.drafter_dtype:  # the draft model runs in the target's dtype
        dtype = ctx.view.drafter_dtype
    tp = cfg.tensor_parallel_size if isinstance(cfg.tensor_parallel_size, int) and cfg.tensor_parallel_size > 0 else 1
    return model, dtype, tp, method


def checked_kv_dtypes(ctx: CheckContext, role: str = "target") -> list[KvChoice]:
    """:func:`kv_dtypes` for ``ctx``'s target (``role`` 'target') or drafter side, where each dtype an
    attention backend accepts is then checked in this configuration: one that brings an error the
    configuration does not have without it (0.33's float KV dtype that differs from the model's,
    SD031; a drafter no backend fits, SD701) is marked unusable with that rule, so what ``suggest``
    and the UI offer passes ``check``."""
    model, dtype, tp, method = _kv_inputs(ctx, role)
    out = kv_dtypes(ctx.version, ctx.hardware, model, dtype=dtype, tensor_parallel_size=tp, method=method, role=role)
    if ctx.hardware is None:
        return out
    path = "kv_cache_dtype" if role == "target" else "speculative_config.kv_cache_dtype"
    before = {f.rule for f in iter_findings(ctx) if f.severity == Severity.ERROR}
    checked = []
    for c in out:
        if c.usable and c.dtype != "auto":
            try:
                new = [f for f in iter_findings(patched_ctx(ctx, Patch(description="", set={path: c.dtype})))
                       if f.severity == Severity.ERROR and f.rule not in before]
            except Exception:  # a configuration the patch cannot build: leave the choice as it was
                new = []
            if new:
                c = KvChoice(c.dtype, False, None, f"{new[0].rule}: {new[0].title}", refused_by=new[0].rule)
        checked.append(c)
    return checked


def suggest(ctx: CheckContext) -> Suggestions:
    """All suggestions for a resolved context (see the module docstring). Never raises for
    missing facts: what is unknown is left out or marked unknown."""
    cfg = ctx.config
    spec = ctx.spec
    method = ctx.method if spec is not None else None
    drafter_model = ctx.drafter if spec is not None else None
    ints = lambda v: v if isinstance(v, int) and not isinstance(v, bool) else None  # noqa: E731
    k = k_range(method, ctx.target, drafter_model, max_model_len=ints(cfg.max_model_len),
                max_num_batched_tokens=ints(cfg.max_num_batched_tokens),
                current=ints(spec.num_speculative_tokens) if spec is not None else None) if method else None
    tkv = checked_kv_dtypes(ctx, "target")
    dkv = checked_kv_dtypes(ctx, "drafter") if method and M.uses_draft_kv_cache(method) else []
    problem = ctx.target_problem
    methods = methods_for(ctx.target, ctx.version, cfg.model)
    if problem:  # nothing fits a model that could not be read
        methods = [replace(m, recommended=False) for m in methods]
    return Suggestions(
        vllm_version=str(ctx.version),
        hardware=f"{ctx.hardware.name}x{ctx.hardware.count}" if ctx.hardware is not None else None,
        methods=methods,
        target_problem=problem,
        drafters=[d for d in drafters_for(cfg.model, method if method and M.needs_drafter_checkpoint(method) else None)
                  if d.method is None or M.is_allowed(d.method, ctx.version)],  # 0.33: no medusa / mlp_speculator
        k=k,
        kv_dtypes=tkv,
        drafter_kv_dtypes=dkv,
        backends=backends(ctx),
        default_drafter=default_drafter(cfg.model, method, version=ctx.version) if method else None,
    )


def iter_usable(choices: Iterable[KvChoice]) -> list[str]:
    """The dtypes a form lists: usable ones ('auto' always), all of them when not checked."""
    return [c.dtype for c in choices if c.usable is not False or c.dtype == "auto"]
