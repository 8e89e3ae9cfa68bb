"""KV-cache groups and page sizes of a target plus its drafter, per vLLM release.

vLLM gives every attention layer a ``KVCacheSpec`` (``vllm/v1/kv_cache_interface.py``) and
splits the layers -- target and drafter together, the drafter's registered after the
target's -- into KV-cache groups (``get_kv_cache_groups`` in ``vllm/v1/core/kv_cache_utils.py``;
``kv_cache_planning.py`` in 0.33). This module mirrors that step:

1. ``--disable-hybrid-kv-cache-manager`` promotes sliding-window layers to full attention.
2. All specs equal -> one group. All specs of one *type* (full attention incl. MLA, or
   sliding window, or Mamba state) with one block size -> one ``UniformTypeKVCacheSpecs``
   group, page sizes may differ.
3. Otherwise page sizes are unified to the largest: a layer whose page divides it gets a
   larger block size, a Mamba or non-MLA attention page is padded, an MLA page that does not
   divide it raises ``NotImplementedError`` -- unless the mix is MLA + sliding window, which
   falls back to allocating the sliding layers as full attention.
4. Same-spec layers form buckets; each bucket is cut into groups of ``group_size`` layers
   (the smallest bucket, or the largest when it is within 1.5x -- 1.25x in 0.12-0.15 -- of the
   smallest), padding the last group of each bucket.

Before 0.12 step 3 does not exist: differing pages that step 2 does not group end in a bare
``NotImplementedError``; 0.10 also lacks ``UniformTypeKVCacheSpecs`` (so a drafter with another KV
head count than the target's fails there), compares specs by ``type_id`` (kind, block size and
page size) and cuts buckets into consecutive slices (``get_kv_cache_config`` in 0.10).

Consequences worth a finding: a drafter with its own layer kind adds a bucket, so one
sliding-window drafter layer next to 32 full-attention target layers yields 34 groups of one
layer; a drafter whose layers land in several groups; pages that cannot be unified.

Layer inputs are :class:`LayerKV` (:func:`layers_for` derives them from ModelInfo). Page
sizes are bytes per block of ``block_size`` tokens. Release differences live in
``wizard/data/vllm/<X.Y>/kv_groups.json`` (features read from the source); the mirror is
checked against each release's real ``get_kv_cache_groups`` in ``tests/mechanisms``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Literal

from packaging.version import Version

from wizard.engine.kv_bytes import dtype_bytes, kv_dtype_bytes
from wizard.models.config_json import layer_kind
from wizard.vllm import releases

__all__ = ["LayerKV", "KVGroup", "GroupingResult", "kv_cache_groups", "layers_for", "release_for", "page_size"]

Kind = Literal["full", "sliding", "mla", "mamba"]
_BASE = {"full": "full", "mla": "full", "sliding": "sliding", "mamba": "mamba"}
_SPEC_NAME = {"full": "FullAttentionSpec", "sliding": "SlidingWindowSpec", "mla": "MLAAttentionSpec", "mamba": "MambaSpec"}


def release_for(version: Any) -> str:
    """The release whose kv_groups table stands for ``version``: the newest one not newer."""
    return releases.nearest_release(version, "kv_groups.json")


@dataclass(frozen=True)
class LayerKV:
    """One layer's KV cache as vLLM describes it.

    kind: 'full' | 'sliding' | 'mla' | 'mamba'. num_kv_heads/head_size: per GPU, elements
    (MLA: one head of kv_lora_rank + qk_rope_head_dim). dtype_bytes: bytes per KV element (2 for
    bf16/fp16, 1 for fp8). state_bytes: a Mamba/GDN/short-conv layer's state size in bytes
    (independent of block size). state_padded: the state page after the platform's hybrid
    alignment (``mamba_page_size_padded``; None = unpadded). role: 'target' or 'drafter'.
    """

    name: str
    kind: Kind
    role: str = "target"
    num_kv_heads: int = 1
    head_size: int = 0
    dtype_bytes: float = 2
    sliding_window: int | None = None
    state_bytes: int = 0
    state_padded: int | None = None


@dataclass(frozen=True)
class _Spec:
    kind: Kind
    block_size: int
    num_kv_heads: int
    head_size: int
    dtype_bytes: float
    sliding_window: int | None
    state_bytes: int
    padded: int | None = None

    @property
    def unpadded(self) -> int:
        if self.kind == "mamba":
            return self.state_bytes
        v = 0 if self.kind == "mla" else self.head_size
        return int(self.num_kv_heads * self.block_size * (self.head_size + v) * self.dtype_bytes)

    @functools.cached_property
    def page(self) -> int:
        return self.padded if self.padded is not None else self.unpadded

    @functools.cached_property
    def key(self) -> tuple:
        # FullAttentionSpec.merge accepts full layers that differ only in sliding window
        sw = None if self.kind == "full" else self.sliding_window
        return (self.kind, self.block_size, self.num_kv_heads, self.head_size, self.dtype_bytes, sw,
                self.state_bytes, self.padded)


def page_size(layer: LayerKV, block_size: int) -> int:
    """Bytes of one block of ``block_size`` tokens for this layer (Mamba: its state size)."""
    return _spec(layer, block_size).page


def _spec(layer: LayerKV, block: int) -> _Spec:
    return _spec_of(layer.kind, block, layer.num_kv_heads, layer.head_size, layer.dtype_bytes,
                    layer.sliding_window, layer.state_bytes,
                    layer.state_padded if layer.kind == "mamba" and layer.state_padded else None)


@functools.lru_cache(maxsize=256)
def _spec_of(*fields: Any) -> _Spec:
    """One shared (frozen) spec per distinct layer shape: a model's layers repeat a few shapes."""
    return _Spec(*fields)


@dataclass(frozen=True)
class KVGroup:
    """One KV-cache group: its layers, spec type, tokens per block and bytes per block."""

    layers: tuple[str, ...]
    spec: str
    block_size: int
    page_size: int
    roles: tuple[str, ...] = ()

    @property
    def has_drafter(self) -> bool:
        return "drafter" in self.roles


@dataclass(frozen=True)
class GroupingResult:
    """groups: vLLM's KV-cache groups (empty when ``error``). error: vLLM's exception text.
    drafter_groups: indexes of groups holding drafter layers. notes: warnings vLLM logs
    (padding layers, promotions) and consequences. With ``error`` only: grouped_from, the oldest
    release ('X.Y') from which every release with a table groups the same layers (None: none
    does); matching_drafter, the drafter KV shape ('8 KV heads x 128') with which this release
    groups them (None: changing the drafter's heads does not help, or its shape is the target's)."""

    release: str
    groups: tuple[KVGroup, ...] = ()
    error: str | None = None
    drafter_groups: tuple[int, ...] = ()
    padding_layers: int = 0
    notes: tuple[str, ...] = field(default=())
    grouped_from: str | None = None
    matching_drafter: str | None = None

    @property
    def num_groups(self) -> int:
        return len(self.groups)

    @property
    def drafter_spans_groups(self) -> bool:
        return len(self.drafter_groups) > 1


def _type_id(s: _Spec) -> tuple:
    """0.10.0's ``KVCacheSpec.type_id``: full attention (MLA included, a FullAttentionSpec with
    use_mla there) by block size and page size -- not by heads or head size; sliding window by
    window, block size and page size; Mamba by its state (shapes and dtype there, its size here)."""
    if s.kind in ("full", "mla"):
        return ("full", s.block_size, s.page)
    if s.kind == "sliding":
        return ("sliding", s.sliding_window, s.block_size, s.page)
    return ("mamba", s.state_bytes)


def _by_type_id(features: dict[str, Any]) -> bool:
    return features.get("spec_equality", "merge") == "type_id"


def _spec_name(kind: str, features: dict[str, Any]) -> str:
    return features.get("mla_spec", "MLAAttentionSpec") if kind == "mla" else _SPEC_NAME[kind]


def _uniform(specs: list[_Spec], features: dict[str, Any] | None = None) -> bool:
    """``is_kv_cache_spec_uniform``: merging all specs succeeds. FullAttentionSpec.merge raises
    ValueError (not caught there) for two different sliding windows on full layers. 0.10.0
    (``is_kv_cache_type_uniform``) compares type ids instead; the window clash then surfaces when
    the single group's specs are merged."""
    first = specs[0]
    if features and _by_type_id(features):
        if len({_type_id(s) for s in specs}) > 1:
            return False
        if len({s.sliding_window for s in specs if s.kind == "full" and s.sliding_window is not None}) > 1:
            raise ValueError("All attention layers in the same KV cache group must have the same window size.")
        return True
    if first.kind == "full":  # FullAttentionSpec.merge: type asserts, then the window merge, then fields
        if any(s.kind != "full" for s in specs):
            return False
        if len({s.sliding_window for s in specs if s.sliding_window is not None}) > 1:
            raise ValueError("All attention layers in the same KV cache group must have the same window size.")
    return all(s.key == first.key for s in specs[1:])


def _base(s: _Spec) -> tuple:
    return ("sliding", s.sliding_window) if s.kind == "sliding" else (_BASE[s.kind],)


def _uniform_type(specs: list[_Spec], features: dict[str, Any] | None = None) -> bool:
    """``UniformTypeKVCacheSpecs.is_uniform_type`` (absent before 0.11: always False there)."""
    if features is not None and not features.get("uniform_type_specs", True):
        return False
    if len({s.block_size for s in specs}) > 1:
        return False
    base = _base(specs[0])
    return all(_base(s) == base for s in specs)


def _promote_local(specs: dict[str, _Spec], features: dict[str, Any]) -> dict[str, _Spec]:
    """``_promote_local_kv_cache_specs`` (``unify_hybrid_kv_cache_specs`` before 0.28):
    sliding-window layers become full attention (keeping their window) when full layers --
    MLA included, a FullAttentionSpec subclass -- exist; the result must be one (uniform) type."""
    vals = list(specs.values())
    if _uniform(vals, features) or _uniform_type(vals, features):
        return specs
    kinds = {s.kind for s in vals}
    out = dict(specs)
    if kinds & {"full", "mla"} and "sliding" in kinds:
        fb = {s.block_size for s in vals if s.kind in ("full", "mla")}
        out = {n: (replace(s, kind="full", block_size=next(iter(fb)) if len(fb) == 1 else s.block_size)
                   if s.kind == "sliding" else s) for n, s in specs.items()}
    vals = list(out.values())
    if not (_uniform(vals, features) or _uniform_type(vals, features)):
        raise ValueError("Failed to promote local KV cache specs to one unified type.")
    return out


def _unify(specs: dict[str, _Spec], features: dict[str, Any]) -> dict[str, _Spec]:
    pages = {s.page for s in specs.values()}
    if len(pages) <= 1:
        return specs
    mx = max(pages)
    out = {}
    for name, s in specs.items():
        if s.page == mx:
            out[name] = s
        elif s.kind == "mamba" and features.get("pad_mamba_pages", True):
            out[name] = replace(s, padded=mx)
        elif s.kind == "mamba":
            # before 0.26 a Mamba layer went through the block-size branch, which leaves its page
            # unchanged: the post-scaling assert fails (or, not divisible, NotImplementedError)
            if s.page <= 0:  # no state page given (the caller did not size the recurrent state)
                raise NotImplementedError(f"Layer {name}: recurrent-state page size unknown; cannot unify page sizes")
            if mx % s.page == 0:
                raise AssertionError(
                    f"Layer {name}: recurrent-state page of {s.page} bytes cannot grow to the largest page "
                    f"({mx} bytes): this release scales a Mamba layer's block_size, which does not change its page "
                    "(assert new_spec.page_size_bytes == max_page_size)")
            raise NotImplementedError(
                f"Layer {name}: the page size of the layer ({s.page} bytes) is not divisible by the maximum "
                f"page size ({mx} bytes). Cannot unify by adjusting block_size.")
        elif mx % s.page == 0:
            out[name] = replace(s, block_size=s.block_size * (mx // s.page))
        elif s.kind in ("full", "sliding") and features.get("pad_attention_pages", True):
            out[name] = replace(s, padded=mx)
        else:
            raise NotImplementedError(
                f"Layer {name}: page size is not divisible by the maximum page size and cannot be padded. "
                "Padding is only supported for non-MLA attention layers.")
    return out


def kv_cache_groups(
    release: Any,
    layers: Iterable[LayerKV],
    *,
    block_size: int = 16,
    disable_hybrid_kv_cache_manager: bool = False,
) -> GroupingResult:
    """vLLM's KV-cache groups for ``layers`` (target layers first, then the drafter's).

    ``block_size``: tokens per block for attention layers (``--block-size``; hybrid models
    get a larger one chosen by vLLM so the attention page covers the Mamba state).
    Never raises: vLLM's refusal comes back as ``error`` (with the releases and the drafter
    shape that avoid it: ``grouped_from``, ``matching_drafter``).
    """
    key, layers = release_for(release), tuple(layers)
    disable = bool(disable_hybrid_kv_cache_manager)
    r = _kv_cache_groups(key, layers, block_size, disable)
    if r.error is None:
        return r
    return replace(r, grouped_from=_grouped_from(key, layers, block_size, disable),
                   matching_drafter=_matching_drafter(key, layers, block_size, disable))


def _grouped_from(key: str, layers: tuple[LayerKV, ...], block_size: int, disable: bool) -> str | None:
    """The oldest release newer than ``key`` from which every release's table groups ``layers``."""
    later = [k for k in releases.releases_with("kv_groups.json") if Version(k) > Version(key)]
    since, verdicts = None, {}
    for k in reversed(later):
        # the verdict depends on the release's features only: releases that share them share it
        fk = repr(sorted(releases.load(k, "kv_groups.json").get("features", {}).items()))
        if fk not in verdicts:
            verdicts[fk] = _kv_cache_groups(k, layers, block_size, disable).error is None
        if not verdicts[fk]:
            break
        since = k
    return since


def _matching_drafter(key: str, layers: tuple[LayerKV, ...], block_size: int, disable: bool) -> str | None:
    """The target's attention KV shape, when drafter attention layers of that shape are grouped."""
    tgt = next((l for l in layers if l.role == "target" and l.kind in ("full", "sliding")), None)
    if tgt is None:
        return None
    swapped = tuple(replace(l, num_kv_heads=tgt.num_kv_heads, head_size=tgt.head_size, dtype_bytes=tgt.dtype_bytes)
                    if l.role == "drafter" and l.kind in ("full", "sliding") else l for l in layers)
    if swapped == layers or _kv_cache_groups(key, swapped, block_size, disable).error is not None:
        return None
    shape = f"{tgt.num_kv_heads} KV heads x {tgt.head_size}"
    return shape if all(l.dtype_bytes == tgt.dtype_bytes for l in layers if l.role == "drafter") else \
        f"{shape}, {tgt.dtype_bytes:g}-byte KV elements"


@functools.lru_cache(maxsize=1024)
def _kv_cache_groups(key: str, layers: tuple[LayerKV, ...], block_size: int,
                     disable_hybrid_kv_cache_manager: bool) -> GroupingResult:
    """:func:`kv_cache_groups`, memoised (frozen layers in, frozen result out)."""
    table = releases.load(key, "kv_groups.json")
    rel = table.get("release", key)
    features = table.get("features", {})
    layers = list(layers)
    roles = {l.name: l.role for l in layers}
    specs = {l.name: _spec(l, block_size) for l in layers}
    notes: list[str] = []
    if not specs:
        return GroupingResult(rel, notes=("attention-free model: no KV cache groups",))
    if disable_hybrid_kv_cache_manager:
        try:
            promoted = _promote_local(specs, features)
        except ValueError as e:
            return GroupingResult(rel, error=f"ValueError: {e}")
        if promoted != specs:
            notes.append("hybrid KV cache manager disabled: sliding-window layers allocate KV for every token")
        specs = promoted
    vals = list(specs.values())

    def result(groups: list[tuple[list[str], str, int, int]], padding: int = 0) -> GroupingResult:
        gs = tuple(KVGroup(tuple(ls), sp, bs, pg, tuple(sorted({roles[l] for l in ls}))) for ls, sp, bs, pg in groups)
        dg = tuple(i for i, g in enumerate(gs) if g.has_drafter)
        n = list(notes)
        if len(dg) > 1:
            n.append(f"the drafter's layers span {len(dg)} KV-cache groups")
        if padding:
            n.append(f"{padding} padding layer(s) added to equalise group sizes (wasted KV memory)")
        return GroupingResult(rel, gs, None, dg, padding, tuple(n))

    try:
        uniform = _uniform(vals, features)
    except ValueError as e:
        return GroupingResult(rel, error=f"ValueError: {e}", notes=tuple(notes))
    if uniform:
        return result([(list(specs), _spec_name(vals[0].kind, features), vals[0].block_size, vals[0].page)])
    if _uniform_type(vals, features):
        return result([(list(specs), "UniformTypeKVCacheSpecs", vals[0].block_size, sum(s.page for s in vals))])
    if not features.get("unify_page_sizes", True) and len({s.page for s in vals}) > 1:
        # before 0.12 nothing unified page sizes: get_kv_cache_groups (0.11) / get_kv_cache_config
        # (0.10) end in a bare ``raise NotImplementedError`` when the pages differ
        return GroupingResult(rel, error=f"NotImplementedError: {_unequal_pages(specs, roles, features)}",
                              notes=tuple(notes))
    try:
        specs = _unify(specs, features)
    except AssertionError as e:
        return GroupingResult(rel, error=f"AssertionError: {e}", notes=tuple(notes))
    except NotImplementedError as e:
        has_mla = any(s.kind == "mla" for s in specs.values())
        has_swa = any(s.kind == "sliding" for s in specs.values())
        if features.get("mla_swa_full_allocation_fallback") and has_mla and has_swa and \
                not any(s.kind == "mamba" for s in specs.values()):
            promoted = [replace(s, kind="full") if s.kind == "sliding" else s for s in specs.values()]
            if _uniform_type(promoted):
                notes.append("page sizes cannot be unified: sliding-window layers are allocated as full attention")
                return result([(list(specs), "UniformTypeKVCacheSpecs", promoted[0].block_size,
                                sum(s.page for s in promoted))])
        return GroupingResult(rel, error=f"NotImplementedError: {e}", notes=tuple(notes))
    # buckets of equal specs, merged when FullAttentionSpec.merge accepts them
    buckets: list[tuple[_Spec, list[str]]] = []
    same = _type_id if _by_type_id(features) else (lambda s: s.key)
    for name, s in specs.items():
        for spec0, names in buckets:
            if same(spec0) == same(s):
                names.append(name)
                break
        else:
            buckets.append((s, [name]))
    sizes = [len(n) for _, n in buckets]
    group_size = min(sizes)
    within = features.get("group_size_max_within", 1.5)
    if within and max(sizes) < min(sizes) * within:
        group_size = max(sizes)
    groups = []
    padding = 0
    for spec0, names in buckets:
        pad = group_size - len(names) % group_size
        if pad != group_size:
            padding += pad
        n_groups = math.ceil(len(names) / group_size)
        for i in range(n_groups):
            # 0.10 cuts a bucket into consecutive slices, later releases into strided ones
            ls = (names[i * group_size:(i + 1) * group_size] if features.get("group_split") == "contiguous"
                  else names[i::n_groups])
            groups.append((ls, _spec_name(spec0.kind, features), spec0.block_size, spec0.page))
    return result(groups, padding)


def _unequal_pages(specs: dict[str, _Spec], roles: dict[str, str], features: dict[str, Any]) -> str:
    """What the bare NotImplementedError of releases without page-size unification stands for."""
    first: dict[int, tuple[str, _Spec]] = {}
    for name, s in specs.items():
        first.setdefault(s.page, (name, s))
    parts = []
    for page, (name, s) in first.items():
        shape = (f"{s.num_kv_heads} KV heads x {s.head_size}" if s.kind in ("full", "sliding")
                 else f"MLA {s.head_size}" if s.kind == "mla" else "recurrent state")
        parts.append(f"{page} bytes per block for {name} ({roles.get(name, 'target')}, {shape})")
    entry = features.get("entry", "get_kv_cache_groups")
    why = ("this release neither unifies page sizes nor puts layers of one attention type with different pages "
           "into one group" if not features.get("uniform_type_specs", True) else "this release does not unify page sizes")
    return f"{entry} needs one KV page size across layers of different specs, got " + "; ".join(parts) + f": {why}"


# ------------------------------------------------------------------------------------------
# layers from model facts

def _dtype_bytes(kv_cache_dtype: str | None, model: Any) -> float:
    """Bytes per KV element (:mod:`wizard.engine.kv_bytes`); ``auto`` stores the dtype the model
    runs in (fp8 when the checkpoint forces an fp8 KV cache)."""
    kv = kv_cache_dtype or "auto"
    if kv == "auto" and getattr(model, "kv_cache_quant", None) == "fp8":
        return 1
    run = "float32" if (getattr(model, "torch_dtype", None) or "").lower() in ("float32", "float") else "bfloat16"
    try:
        return kv_dtype_bytes(kv, run)
    except ValueError:  # a name this table does not know: the model dtype (SD021 reports the name)
        return dtype_bytes(run)


def layers_for(
    model: Any,
    role: str = "target",
    *,
    kv_cache_dtype: str | None = "auto",
    tensor_parallel_size: int = 1,
    first_index: int = 0,
    state_bytes: int | None = None,
) -> list[LayerKV]:
    """Per-layer KV specs of a :class:`wizard.models.info.ModelInfo` (one GPU's share).

    Uses ``layer_types`` (full / sliding / linear / mamba...), ``sliding_window``, MLA fields
    and ``num_kv_shared_layers`` (the last N layers reuse earlier layers' KV and get no spec).
    Recurrent-state layers need ``state_bytes`` (their state size in bytes; unknown -> 0, which
    makes page-size results for hybrids uncertain). Layers are named like vLLM's
    ('model.layers.N.attn' for the target, 'draft.layers.N.attn' for a drafter).
    """
    n = getattr(model, "num_hidden_layers", None) or 0
    tp = max(1, tensor_parallel_size)
    kvh = max(1, (getattr(model, "num_key_value_heads", None) or getattr(model, "num_attention_heads", None) or 1) // tp)
    hd = getattr(model, "head_dim", None) or 0
    # full-attention layers of their own shape (Gemma 4 global layers: wizard.models.config_json)
    full_hd = getattr(model, "full_attention_head_dim", None) or hd
    full_kvh = max(1, g // tp) if (g := getattr(model, "full_attention_kv_heads", None)) else kvh
    db = _dtype_bytes(kv_cache_dtype, model)
    types = list(getattr(model, "layer_types", None) or [])
    shared = getattr(model, "num_kv_shared_layers", 0) or 0
    sw = getattr(model, "sliding_window", None)
    prefix = "model" if role == "target" else "draft"
    out: list[LayerKV] = []
    for i in range(max(0, n - shared)):
        # what the layer holds: wizard.models.config_json.layer_kind, the one reading of layer_types
        kind = layer_kind(types[i]) if i < len(types) else "full"
        name = f"{prefix}.layers.{first_index + i}.attn"
        if kind == "none":  # Nemotron-H MLP / MoE blocks: no attention, no state, no spec
            continue
        if kind == "state":
            out.append(LayerKV(name, "mamba", role, state_bytes=state_bytes or 0))
        elif getattr(model, "use_mla", False):
            head = (getattr(model, "kv_lora_rank", 0) or 0) + (getattr(model, "qk_rope_head_dim", 0) or 0)
            out.append(LayerKV(name, "mla", role, 1, head, db))
        elif kind == "sliding" or (not types and sw and getattr(model, "model_type", "") in ("mistral",)):
            out.append(LayerKV(name, "sliding", role, kvh, hd, db, sliding_window=sw))
        else:
            out.append(LayerKV(name, "full", role, full_kvh, full_hd, db))
    return out
