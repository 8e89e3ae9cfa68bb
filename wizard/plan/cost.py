"""The cost side of speculative decoding: time of one forward pass of the target or of a drafter
from a roofline of the hardware catalog (memory bandwidth, dense FLOP/s) plus a fixed per-pass
overhead.

One forward over ``batch`` sequences with ``tokens`` tokens each (decode: 1; verification: 1 + k)::

    bytes = dense weights + routed-expert weights x coverage(batch) + KV read (batch x context)
    flops = batch x tokens x (2 x active parameters + attention over the context)
    t_mem = bytes / (bandwidth x ETA_BW);  t_cmp = flops / (dense FLOP/s x ETA_FLOPS)
    time  = overhead + max(t_mem, t_cmp) + GEMM_SERIAL_FRACTION x min(t_mem, t_cmp)

Load-dependent terms (issue 24), fitted by ``scripts/fit_speedup_cost.py`` on the ``split: fit``
rows of tests/data/spec_decode_published.yaml plus the EAGLE-3 paper's batch-64 / batch-1 shape
(docs/plan.md, "The fitted constants"):

* ``GEMM_SERIAL_FRACTION`` = 0.7: small-M GEMMs do not hide their math under the weight
  streaming (nor the reverse); 0 would be the ideal roofline. The pass's achieved GEMM efficiency
  ``t_cmp / body`` (:func:`gemm_efficiency`) is a saturating curve in the token count.
* ``PER_DRAFT_TOKEN_S`` = 20 us per drafted token per step (rejection sampling, the drafter's
  sampling row, draft bookkeeping), added by :class:`wizard.plan.speedup.SpeedModel`.
* The drafter's KV share and weights lower the number of requests that fit at saturation
  (:func:`wizard.plan.estimate._kv_caps`).

* Weights are read once per pass whatever the number of tokens (decode is memory-bound at
  small batch, so verifying 1 + k tokens costs about as much as decoding 1); as
  ``batch x (1 + k)`` grows the pass becomes compute-bound and speculation's gain falls.
* The KV cache of a sequence is read once per pass too (the k extra tokens attend to the same
  cache); sliding-window layers read at most their window.
* MoE: a pass reads the experts its tokens route to: ``coverage = 1 - (1 - top_k / E) ** n`` of
  the routed-expert bytes, with ``n = batch x (1 + DRAFT_TOKEN_EXPERT_SHARE x k)``: the k draft
  tokens of a sequence are adjacent to it and reuse much of its experts (expert locality), so
  each counts as a quarter of an independent token. Independent routing (share 1) predicts
  0.94x where 1.25x was measured for gpt-oss-120b + EAGLE-3 at batch 8 on an H100; full
  locality (share 0) 1.52x; 0.25 gives 1.25x (tests/data/spec_decode_published.yaml).
* ``overhead`` (kernel launches, scheduling, sampling; CUDA graphs on) is
  ``OVERHEAD_BASE_S + OVERHEAD_PER_LAYER_S x layers``, three times that per layer with
  ``--enforce-eager``. A decode batch above vLLM's largest CUDA-graph capture size runs eagerly
  (``wizard.mechanisms.cudagraph``; with speculation the ceiling is reached at
  ``capture size / (1 + k)`` requests): its kernel launches (3x the per-layer figure) then
  overlap the GPU work instead of vanishing into a graph replay; a speculative step adds
  ``SPEC_STEP_S`` (rejection sampling, draft input preparation).
* A drafter pass runs inside the engine step (vLLM's propose loop,
  ``vllm/v1/spec_decode/llm_base_proposer.py``): no scheduling or sampling of its own, so its
  overhead is the per-layer part only, and its host-side work (attention-metadata update,
  CUDA-graph replay, eager logits/argmax) takes ``DRAFT_PASS_HOST_S`` and overlaps its GPU work
  (``launch_overlap``): a one-layer EAGLE head at small batch costs that host time whatever its
  size, as a vLLM maintainer put it ("the cost of evaluating an EAGLE layer should be the same for
  EAGLE1 vs EAGLE3", vLLM PR #16937); a big drafter or a big batch costs its bytes / FLOPs.

Constants: ``ETA_BW`` 0.85 and ``ETA_FLOPS`` 0.6 are achieved fractions of the datasheet peaks;
the target overheads were fitted once to vLLM issue #20780 (Llama-3.1-8B-Instruct on an H100,
batch 1: 7.07 ms per output token without speculation, ~8.2 ms step at k = 0 with EAGLE-3).
``DRAFT_PASS_HOST_S`` is the per-drafted-token growth of the EAGLE-1 step in the same issue
(step = TPOT x MAL: 9.18 ms at k = 2 to 12.84 ms at k = 7, 0.74 ms per drafted token) less the
per-layer part, where EAGLE-1's GPU work per pass (1.55 GB: its layer + the target's lm_head,
0.55 ms) is below it. Charging each drafter pass a whole engine step's overhead instead (the
former model) predicted 1.04 ms per EAGLE-1 token and under-predicted EAGLE-1 by 9-16%; the
EAGLE-3 head measured 1.02 ms per token, more than its 0.85 GB explain, so EAGLE-3 stays
over-predicted (+8 to +17%; tests/data/spec_decode_published.yaml, docs/plan.md).
A measured baseline step time (``wizard tune``, or
``--baseline-tpot-ms``) replaces the target's overhead estimate: ``overhead = measured -
roofline``; on a GPU the drafter and speculative-step overheads stay the constants (they do not
grow with the target), on hardware without catalogued bandwidth/FLOP/s (CPU) every overhead is
scaled by measured / estimated, the only time scale there is.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from wizard.hardware.spec import Hardware
from wizard.models.info import ModelInfo
from wizard.plan.kv import KvLayout, dtype_bytes

__all__ = ["ETA_BW", "ETA_FLOPS", "OVERHEAD_BASE_S", "OVERHEAD_PER_LAYER_S", "EAGER_LAYER_FACTOR", "SPEC_STEP_S", "DRAFT_PASS_HOST_S", "DRAFT_TOKEN_EXPERT_SHARE",
           "GEMM_SERIAL_FRACTION", "PER_DRAFT_TOKEN_S", "FITTED",
           "Roofline", "PassShape", "model_shape", "pass_time", "gemm_efficiency", "overhead_s", "eager_launch_s", "draft_pass_costs",
           "moe_facts"]

ETA_BW = 0.85
ETA_FLOPS = 0.6
OVERHEAD_BASE_S = 0.45e-3
OVERHEAD_PER_LAYER_S = 0.0415e-3
EAGER_LAYER_FACTOR = 3.0
SPEC_STEP_S = 0.9e-3
DRAFT_PASS_HOST_S = 0.70e-3
DRAFT_TOKEN_EXPERT_SHARE = 0.25
# ---- load-dependent terms (issue 24), fitted by scripts/fit_speedup_cost.py on the `fit` rows of
# tests/data/spec_decode_published.yaml; see the module docstring and docs/plan.md ----------------
#: How much of the shorter of (weight/KV streaming, math) a pass fails to hide under the longer:
#: ``body = max(t_mem, t_cmp) + GEMM_SERIAL_FRACTION x min(t_mem, t_cmp)``. 0 is the ideal roofline
#: (perfect overlap); 1 adds the two. Equivalently the pass's GEMMs reach the saturating efficiency
#: ``eta(n) = t_cmp / body`` of the large-M figure: far below peak for small-M GEMMs (a few tokens),
#: approaching it once ``n`` tokens make the pass compute-bound (:func:`gemm_efficiency`).
GEMM_SERIAL_FRACTION = 0.7
#: Per drafted token per step (rejection sampling over the vocabulary, the drafter's own sampling
#: row, draft-token bookkeeping): what makes a speculative step grow with batch x k.
PER_DRAFT_TOKEN_S = 20e-6
#: Names of the constants the fit script may set (the rest are physical or fitted elsewhere).
FITTED = ("GEMM_SERIAL_FRACTION", "PER_DRAFT_TOKEN_S")


@dataclass(frozen=True)
class Roofline:
    """One device's achievable bandwidth (bytes/s) and FLOP/s for the weights' operand type; None
    when the catalog has no figure (then only the overhead counts)."""

    bandwidth: float | None
    flops: float | None
    source: str = ""

    @classmethod
    def of(cls, hw: Hardware | None, weight_dtype: str) -> "Roofline":
        if hw is None or not hw.memory_bandwidth_bytes_per_s:
            return cls(None, None, "no bandwidth/FLOP/s figure for this hardware")
        kind = "fp8" if weight_dtype == "fp8" else ("fp16" if weight_dtype == "float16" else "bf16")
        flops = hw.dense_flops.get(kind) or hw.dense_flops.get("bf16") or hw.dense_flops.get("fp16")
        return cls(hw.memory_bandwidth_bytes_per_s * ETA_BW, flops * ETA_FLOPS if flops else None,
                   f"{hw.name}: {hw.perf_source or 'catalog'}; x {ETA_BW} bandwidth, x {ETA_FLOPS} FLOP/s achieved")


@dataclass(frozen=True)
class PassShape:
    """What one forward pass of a model (or of a slice of it) reads and computes, per device.

    dense_bytes: weights read every pass (input embedding table excluded: only its rows are
    read). expert_bytes / experts / top_k: routed MoE experts (0 for dense models).
    active_params: parameters a token multiplies (dense + top_k/E of the experts), per device.
    kv_full_bytes / kv_sliding_bytes / window: KV bytes per context token per device.
    attn_flops_per_ctx: attention FLOPs per new token per context token, per device.
    layers: layers of this pass (for the overhead).
    """

    dense_bytes: float
    expert_bytes: float = 0.0
    experts: int = 0
    top_k: int = 0
    active_params: float = 0.0
    kv_full_bytes: float = 0.0
    kv_sliding_bytes: float = 0.0
    window: int | None = None
    attn_flops_per_ctx: float = 0.0
    layers: int = 1

    def scaled(self, fraction: float, layers: int) -> "PassShape":
        """A slice of the model (e.g. one MTP layer): every size times ``fraction``."""
        return replace(self, dense_bytes=self.dense_bytes * fraction, expert_bytes=self.expert_bytes * fraction,
                       active_params=self.active_params * fraction, kv_full_bytes=self.kv_full_bytes * fraction,
                       kv_sliding_bytes=self.kv_sliding_bytes * fraction,
                       attn_flops_per_ctx=self.attn_flops_per_ctx * fraction, layers=layers)


def moe_facts(info: ModelInfo | None) -> tuple[int, int, float]:
    """(routed experts E, experts per token, routed-expert parameters), 0s for a dense model, from
    the MoE fields of :class:`ModelInfo` (read from config.json once by
    :mod:`wizard.models.config_json`). Expert parameters = MoE layers x E x 3 x hidden x expert FFN
    width (gate, up and down projections); shared experts are always read, so they stay in the
    dense part (parameters - routed-expert parameters)."""
    if info is None or not info.num_experts or not info.num_experts_per_tok or info.num_experts <= 1:
        return 0, 0, 0.0
    experts, top_k = info.num_experts, min(info.num_experts_per_tok, info.num_experts)
    inter = info.moe_intermediate_size
    moe_layers = info.num_moe_layers if info.num_moe_layers is not None else (info.num_hidden_layers or 0)
    if not inter or not info.hidden_size:
        return experts, top_k, 0.0
    return experts, top_k, float(moe_layers * experts * 3 * info.hidden_size * inter)


def _param_count(info: ModelInfo, dtype: str) -> float | None:
    if info.param_count:
        return float(info.param_count)
    if info.weight_bytes:
        return info.weight_bytes / dtype_bytes(dtype)
    return None


def model_shape(info: ModelInfo | None, weight_bytes: int, dtype: str, kv: KvLayout | None, tp: int,
                *, include_embedding: bool = False) -> PassShape | None:
    """The per-device pass shape of ``info`` whose weights take ``weight_bytes`` on one device
    (already split ``tp`` ways, :func:`wizard.plan.memory.weights_bytes`); None when unknown.

    ``include_embedding``: count the input embedding table as read (never for a decode pass; the
    lm_head is read, and it is the same tensor when embeddings are tied)."""
    if info is None or not weight_bytes:
        return None
    tp = max(1, tp)
    params = _param_count(info, dtype)
    experts, top_k, expert_params = moe_facts(info)
    vocab, hidden = info.vocab_size or 0, info.hidden_size or 0
    tied = info.tie_word_embeddings
    # the input table is not read by a decode pass; a drafter without its own (EAGLE-3) has none
    has_embed = info.has_embed_tokens is not False
    embed_params = 0.0 if (tied or include_embedding or not has_embed) else float(vocab * hidden)
    total_bytes = float(weight_bytes) * tp
    bpp = total_bytes / params if params else dtype_bytes(dtype)
    if params:
        expert_params = min(expert_params, 0.98 * params)
        dense_params = max(0.0, params - expert_params - embed_params)
    else:
        dense_params = max(0.0, total_bytes / bpp - expert_params - embed_params)
    active = dense_params + (expert_params * top_k / experts if experts else 0.0)
    heads = info.num_attention_heads or 0
    head_dim = info.head_dim or (hidden // heads if heads else 0)
    full = kv.full_layers if kv else (info.num_hidden_layers or 0)
    sliding = kv.sliding_layers if kv else 0
    attn_full = 4.0 * heads * head_dim * full
    return PassShape(
        dense_bytes=dense_params * bpp / tp,
        expert_bytes=expert_params * bpp / tp,
        experts=experts, top_k=top_k,
        active_params=active / tp,
        kv_full_bytes=float(kv.full_bytes_per_token) if kv else 0.0,
        kv_sliding_bytes=float(kv.sliding_bytes_per_token) if kv else 0.0,
        window=kv.sliding_window if kv else None,
        attn_flops_per_ctx=(attn_full + (4.0 * heads * head_dim * sliding)) / tp,
        layers=max(1, info.num_hidden_layers or 1),
    )


def overhead_s(layers: int, *, eager: bool = False) -> float:
    """Fixed time of one forward pass (s): launches, scheduling, sampling (see the module docstring)."""
    per = OVERHEAD_PER_LAYER_S * (EAGER_LAYER_FACTOR if eager else 1.0)
    return OVERHEAD_BASE_S + per * max(1, layers)


def draft_pass_costs(layers: int, *, eager: bool = False) -> tuple[float, float]:
    """(overhead, host time) of one drafter pass, seconds. A drafter pass runs inside the engine
    step (vLLM's propose loop, ``vllm/v1/spec_decode/llm_base_proposer.py``): no scheduling or
    sampling of its own, so its overhead is the per-layer launch part only; each iteration's
    host-side work (attention-metadata update, CUDA-graph replay, the eager logits/argmax kernels)
    takes :data:`DRAFT_PASS_HOST_S` and overlaps the pass's GPU work
    (:func:`pass_time` ``launch_overlap``): a small drafter at small batch costs that host time
    whatever its size, a large one or a large batch its bytes / FLOPs."""
    per = OVERHEAD_PER_LAYER_S * (EAGER_LAYER_FACTOR if eager else 1.0)
    return per * max(1, layers), DRAFT_PASS_HOST_S


def eager_launch_s(layers: int) -> float:
    """CPU time to launch one pass's kernels without a CUDA graph (s); it overlaps the GPU work
    (:func:`pass_time` ``launch_overlap``)."""
    return OVERHEAD_PER_LAYER_S * EAGER_LAYER_FACTOR * max(1, layers)


def gemm_efficiency(t_mem: float, t_cmp: float) -> float:
    """Fraction of the large-M FLOP/s a pass reaches: ``t_cmp / body`` with ``body`` as in
    :func:`pass_time` (tends to 1 as the tokens of the pass grow, ~ n / (n + n_ridge) for a dense
    pass whose ridge point is n_ridge tokens)."""
    body = max(t_mem, t_cmp) + GEMM_SERIAL_FRACTION * min(t_mem, t_cmp)
    return t_cmp / body if body > 0 else 0.0


def pass_time(shape: PassShape, roof: Roofline, *, batch: int, tokens: int, context: int,
              overhead: float, launch_overlap: float = 0.0) -> tuple[float, str]:
    """(seconds, what bounds it: 'memory' | 'compute' | 'overhead') of one pass over ``batch``
    sequences x ``tokens`` new tokens each, every sequence holding ``context`` tokens of KV.

    ``launch_overlap``: a pass without a CUDA graph (more tokens than the largest capture size,
    :mod:`wizard.mechanisms.cudagraph`) waits for the CPU to launch its kernels; that time
    overlaps the GPU work, so the pass takes ``overhead + max(GPU work, launch time)``."""
    batch, tokens, context = max(1, batch), max(1, tokens), max(0, context)
    routed = batch * (1.0 + DRAFT_TOKEN_EXPERT_SHARE * (tokens - 1))
    coverage = 1.0 - (1.0 - shape.top_k / shape.experts) ** routed if shape.experts else 0.0
    window_ctx = min(context, shape.window) if shape.window else context
    kv = batch * (shape.kv_full_bytes * context + shape.kv_sliding_bytes * window_ctx)
    moved = shape.dense_bytes + shape.expert_bytes * coverage + kv
    n = batch * tokens
    flops = n * (2.0 * shape.active_params + shape.attn_flops_per_ctx * context)
    t_mem = moved / roof.bandwidth if roof.bandwidth else 0.0
    t_cmp = flops / roof.flops if roof.flops else 0.0
    body = max(t_mem, t_cmp) + GEMM_SERIAL_FRACTION * min(t_mem, t_cmp)
    bound = "overhead" if max(body, launch_overlap) < overhead or launch_overlap > body else (
        "compute" if t_cmp > t_mem else "memory")
    return overhead + max(body, launch_overlap), bound
