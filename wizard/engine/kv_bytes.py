"""Fact: bytes per stored element of a model dtype and of each ``--kv-cache-dtype``
(``view.kv_bytes`` for target and drafter).

vllm/utils/torch_utils.py ``STR_DTYPE_TO_TORCH_DTYPE`` (0.32; 0.33 the same names) stores every
quantised KV format as uint8/int8; the page size of the attention spec then says how many bytes
an element takes (vllm/v1/kv_cache_interface.py ``AttentionSpec.page_size_bytes``;
``state_content_bytes`` of the backend that packs the format):

* fp8 / fp8_e4m3 / fp8_e5m2 / fp8_inc / int8 per tensor: 1 byte;
* ``*_per_token_head``: 1 byte (int4: 0.5) plus one fp32 scale per (token, head), added by
  :func:`wizard.plan.kv.kv_layout` as ``4 / head_dim``;
* nvfp4 / nvfp4_4over6: FlashInfer packs ``head_size // 2 + head_size // 16`` bytes per head
  (vllm/utils/torch_utils.py ``nvfp4_kv_cache_full_dim``; flashinfer.py get_kv_cache_spec),
  i.e. 0.5625 bytes per element;
* TurboQuant / UltraQuant / Octave (0.33): bits per element as the names say (approximate);
* DeepSeek's packed MLA rows: bytes per token per layer (:data:`MLA_PACKED_ROW`).

``auto`` stores KV in the dtype the model runs in.
"""

from __future__ import annotations

__all__ = ["DTYPE_BYTES", "KV_BYTES", "MLA_PACKED_ROW", "PER_TOKEN_HEAD_SCALE", "dtype_bytes", "kv_dtype_bytes"]

#: bytes per element of a model (or Mamba state) dtype name
DTYPE_BYTES: dict[str, float] = {
    "float32": 4, "float": 4, "fp32": 4,
    "bfloat16": 2, "bf16": 2, "float16": 2, "half": 2, "fp16": 2,
    "float8": 1, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "int8": 1,
}

#: bytes per stored K or V element for each explicit --kv-cache-dtype
KV_BYTES: dict[str, float] = {
    "float16": 2, "bfloat16": 2, "float32": 4,
    "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1,
    "int8_per_token_head": 1, "fp8_per_token_head": 1,
    "int4_per_token_head": 0.5,
    "nvfp4": 0.5625, "nvfp4_4over6": 0.5625,
    "turboquant_k8v4": 0.75, "turboquant_4bit_nc": 0.5, "turboquant_k3v4_nc": 0.4375,
    "turboquant_3bit_nc": 0.375, "ultraquant_4bit": 0.5,
    "octave_k3v4": 0.4375, "octave_k3v3": 0.375, "octave_k3v3_compact": 0.375,
}

#: formats with one fp32 scale per (token, head) beside the elements
PER_TOKEN_HEAD_SCALE = frozenset({"int8_per_token_head", "fp8_per_token_head", "int4_per_token_head"})

#: per-token row sizes of DeepSeek's packed MLA layouts (vllm/model_executor/layers/attention/
#: mla_attention.py get_kv_cache_spec state_content_bytes; flashmla_sparse.py: 512 fp8 NoPE +
#: 4 fp32 scales + 64 bf16 RoPE = 512 + 16 + 128 = 656 bytes)
MLA_PACKED_ROW: dict[str, int] = {"fp8_ds_mla": 656, "nvfp4_ds_mla": 352}


def dtype_bytes(dtype: str | None, default: float = 2.0) -> float:
    """Bytes per element of a model dtype name ('bfloat16' 2, 'float32' 4, 'fp8' 1 ...); ``default``
    for names not listed."""
    return float(DTYPE_BYTES.get((dtype or "").lower(), default))


def kv_dtype_bytes(kv_dtype: str | None, model_dtype_name: str = "bfloat16") -> float:
    """Bytes per KV element for ``--kv-cache-dtype`` (``auto`` = the model dtype).

    Raises:
        ValueError: unknown dtype name (the message lists the known ones).
    """
    kv = (kv_dtype or "auto").lower()
    if kv == "auto":
        return dtype_bytes(model_dtype_name)
    if kv in KV_BYTES:
        return float(KV_BYTES[kv])
    if kv in MLA_PACKED_ROW:
        return 1.0  # per-element view; the packed row size is used for MLA layers
    raise ValueError(f"kv_cache_dtype {kv_dtype!r}: unknown; known: auto, {', '.join(sorted(KV_BYTES))}")
