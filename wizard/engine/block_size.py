"""Fact: the KV block size vLLM uses when ``--block-size`` is unset (``view.block_size``).

* CUDA / ROCm: ``CacheConfig.DEFAULT_BLOCK_SIZE`` (vllm/config/cache.py): 16 up to 0.33 (0.32 L72,
  0.33 L185), **64 from 0.34** (0.34 L185), read from the release's generated constraints.json
  (``class_defaults``, recorded from 0.34 on; 16 where a table predates the key); MLA backends on CUDA (FlashMLA, CUTLASS MLA, FlashInfer MLA) need 64, which the
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
from wizard.vllm import releases

__all__ = ["DEFAULT_BLOCK_SIZE", "default_block_size", "block_size"]

#: vllm/config/cache.py CacheConfig.DEFAULT_BLOCK_SIZE of the releases whose tables predate
#: ``class_defaults`` (0.10-0.33 read from their source: 16)
DEFAULT_BLOCK_SIZE = 16


def default_block_size(version: Any) -> int:
    """``CacheConfig.DEFAULT_BLOCK_SIZE`` of the release (see the module docstring)."""
    if version is None:
        return DEFAULT_BLOCK_SIZE
    entry = releases.load(version, "constraints.json").get("classes", {}).get("CacheConfig", {})
    v = entry.get("class_defaults", {}).get("DEFAULT_BLOCK_SIZE")
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else DEFAULT_BLOCK_SIZE


def block_size(given: Any, hw: Hardware | None, target: ModelInfo | None, version: Any = None) -> int:
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
    default = default_block_size(version)
    return max(64, default) if mla and hw is not None and hw.vendor == "nvidia" else default
