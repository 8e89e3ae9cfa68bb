"""Fact: the KV block size vLLM uses when ``--block-size`` is unset (``view.block_size``).

* CUDA / ROCm: ``CacheConfig.DEFAULT_BLOCK_SIZE`` = 16 (vllm/config/cache.py, 0.32 L72; 0.33
  the same); MLA backends on CUDA (FlashMLA, CUTLASS MLA, FlashInfer MLA) need 64, which the
  backend's block-size update sets (vllm/platforms/cuda.py; the exact backend's kernel block
  sizes are the attention-backend mechanism's business).
* CPU (vllm/platforms/cpu.py ``check_and_update_config``, 0.32 L228-300; 0.33 L246-318): an MLA
  model gets 16 *even when a block size was given* (the reference CPU MLA kernel only compiles
  with 16), DeepSeek-V4 256 likewise, everything else 128 unless given.
"""

from __future__ import annotations

from typing import Any

from wizard.hardware.spec import Hardware
from wizard.models.info import ModelInfo

__all__ = ["DEFAULT_BLOCK_SIZE", "block_size"]

#: vllm/config/cache.py CacheConfig.DEFAULT_BLOCK_SIZE
DEFAULT_BLOCK_SIZE = 16


def block_size(given: Any, hw: Hardware | None, target: ModelInfo | None) -> int:
    """The block size of the target's KV cache (see the module docstring)."""
    user = given if isinstance(given, int) and not isinstance(given, bool) and given > 0 else None
    mla = bool(target is not None and target.use_mla)
    if hw is not None and hw.vendor == "cpu":
        if target is not None and target.model_type == "deepseek_v4":
            return 256
        if mla:
            return 16
        return user or 128
    if user:
        return user
    return 64 if mla and hw is not None and hw.vendor == "nvidia" else DEFAULT_BLOCK_SIZE
