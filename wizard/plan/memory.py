"""What takes a device's memory besides the KV cache: weights per device, vLLM's reserve
(activations, CUDA graphs, non-torch memory), and which layers a drafter adds to the KV cache.
The scheduler defaults and block size are engine facts (``ctx.view``, :mod:`wizard.engine`).

Units: bytes per device; token counts.
"""

from __future__ import annotations

from typing import Any

from wizard.config import ServeConfig
from wizard.hardware.spec import Hardware
from wizard.models.info import ModelInfo
from wizard.engine.kv_bytes import dtype_bytes
from wizard.engine.mtp import mtp_layers
from wizard.plan.kv import GiB
from wizard.vllm.methods import MTP, has_no_model, is_eagle_head

__all__ = ["platform_of", "reserve_bytes", "weights_bytes", "drafter_kv_layers"]


def platform_of(hw: Hardware | None) -> str:
    """'cuda' / 'rocm' / 'cpu' / 'unknown' from the hardware vendor."""
    if hw is None:
        return "unknown"
    return {"nvidia": "cuda", "amd": "rocm", "cpu": "cpu"}.get(hw.vendor, "unknown")


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
    inter = (target.intermediate_size or target.moe_intermediate_size if target else None) or 4 * hidden
    vocab = (target.vocab_size if target else None) or 32000
    tp = cfg.tensor_parallel_size or 1
    act = int(max_num_batched_tokens * (4 * hidden + 2 * inter / tp) * 2 + max_num_seqs * vocab * 4)
    graphs = 0 if cfg.enforce_eager else GiB // 2
    non_torch = int(0.6 * GiB) + (int(0.4 * GiB) if tp > 1 else 0)
    return {"activations": act, "cuda_graphs": graphs, "non_torch": non_torch}


def weights_bytes(info: ModelInfo | None, dtype: str, split: int) -> tuple[int, str]:
    """(bytes of ``info``'s weights on one device when split ``split`` ways, how it was computed):
    the checkpoint size (an fp32 checkpoint loads in a 16-bit ``dtype``: half), else parameters x
    bytes per parameter (quantized formats 1 or 0.5 bytes)."""
    if info is None:
        return 0, "unknown model: weights not counted"
    if info.weight_bytes:
        ckpt = (info.torch_dtype or "").lower()
        if ckpt in ("float32", "float") and dtype_bytes(dtype) == 2 and not info.quant_method:
            # vLLM loads an fp32 checkpoint in the (downcast) model dtype: half the bytes
            return int(info.weight_bytes // 2 // split), f"fp32 checkpoint {info.weight_bytes} bytes loaded as {dtype} (/2) / {split}"
        return int(info.weight_bytes // split), f"checkpoint size {info.weight_bytes} bytes / {split}"
    if info.param_count:
        per = dtype_bytes(dtype)
        qm = (info.quant_method or "").lower()
        if qm in ("fp8", "modelopt", "compressed-tensors", "fbgemm_fp8"):
            per = 1
        elif qm in ("mxfp4", "awq", "gptq", "nvfp4", "modelopt_fp4", "bitsandbytes"):
            per = 0.5
        return int(info.param_count * per // split), f"{info.param_count} params x {per} bytes / {split}"
    return 0, "weight size unknown (no safetensors sizes, no parameter count)"


def drafter_kv_layers(ctx: Any, method: str | None, drafter: ModelInfo | None) -> tuple[ModelInfo | None, int | None, str]:
    """(model whose layers the drafter uses, how many layers, explanation)."""
    if method is None or has_no_model(method):
        return None, 0, f"{method or 'no speculation'}: no drafter KV cache"
    if method == MTP:
        base = drafter or ctx.target
        n = mtp_layers(base, ctx.version) or 1
        if base is not None and (base.layer_types or base.num_mamba_layers):
            # an MTP layer is a full-attention decoder layer even on a hybrid target (Qwen3-Next /
            # Qwen3.5 qwen3_next_mtp.py, qwen3_5_mtp.py: Qwen3NextDecoderLayer(layer_type="full_attention")),
            # not the first entries of the target's layer_types
            base = base.model_copy(update={"layer_types": None, "num_mamba_layers": 0})
            return base, n, f"MTP: {n} predict layer(s), full attention, each with its own KV"
        return base, n, f"MTP: {n} predict layer(s), each with its own KV (same attention as the target)"
    if drafter is None:
        return None, None, "drafter facts unknown: drafter KV not counted"
    n = drafter.num_hidden_layers or 1
    if is_eagle_head(method):
        return drafter, n, f"{method}: {n} drafter decoder layer(s)"
    return drafter, n, f"{method}: full drafter, {n} layers"
