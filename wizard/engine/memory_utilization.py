"""Fact: the fraction of device memory vLLM sizes its budget with (``view.memory_utilization``).

* ``--gpu-memory-utilization`` given: that value.
* Unset, releases whose ``CacheConfig.gpu_memory_utilization`` has a number as its default: that
  default, read from the release's generated ``constraints.json`` (0.9 up to 0.19, 0.92 from 0.20).
* Unset, 0.34 and later (default ``None``): ``CacheConfig.resolved_gpu_memory_utilization``
  (vllm/config/cache.py 0.34 L495): 1.0 when the extensible KV cache is on, else
  ``DEFAULT_GPU_MEMORY_UTILIZATION`` (0.92, the table's ``class_defaults``). The extensible KV cache
  is settled by ``VllmConfig._resolve_extensible_kv_cache`` (vllm/config/vllm.py 0.34 L3180):
  on when not disabled, on CUDA/ROCm, with no ``kv_cache_memory_bytes``, no
  ``num_gpu_blocks_override`` and no elastic EP; a KV connector may turn it off (legacy IPC, a
  custom memory pool, ROCm connectors that register the cache, no IMEX channel), which a
  configuration alone does not tell, so with ``kv_transfer_config`` the value is not known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wizard.hardware.spec import Hardware
from wizard.vllm import releases

__all__ = ["MemoryUtilization", "memory_utilization"]


@dataclass(frozen=True)
class MemoryUtilization:
    """``value``: the fraction vLLM uses; ``source``: where it comes from ('given', 'default',
    'extensible' -- 1.0 with the extensible KV cache --, or 'default (... off: why)');
    ``extensible``: whether the extensible KV cache is on (False on releases without it, None
    when a KV connector decides); ``known``: False when ``value`` depends on what the
    connector does (it is then the lower candidate)."""

    value: float
    source: str
    extensible: bool | None = False
    known: bool = True


def _cache_entry(version: Any) -> dict:
    return releases.load(version, "constraints.json").get("classes", {}).get("CacheConfig", {})


def _set(v: Any) -> bool:
    return v is not None and v is not False and v != ""


def _off(v: Any) -> bool:
    return v is False or (isinstance(v, str) and v.strip().lower() in ("false", "0", "no"))


def extensible_kv_cache(options: dict[str, Any], hw: Hardware | None, version: Any) -> tuple[bool | None, str]:
    """(on, why) of ``_resolve_extensible_kv_cache`` (see the module docstring); (False, ...) on
    releases whose CacheConfig has no ``enable_extensible_kv_cache``."""
    if "enable_extensible_kv_cache" not in _cache_entry(version).get("fields", {}):
        return False, "the release has no extensible KV cache"
    if _off(options.get("enable_extensible_kv_cache")):
        return False, "--no-enable-extensible-kv-cache"
    if hw is not None and hw.vendor == "cpu":
        return False, "it is only supported on CUDA and ROCm"
    for name in ("kv_cache_memory_bytes", "num_gpu_blocks_override"):
        if _set(options.get(name)):
            return False, f"{name} is set"
    if _set(options.get("enable_elastic_ep")) and not _off(options.get("enable_elastic_ep")):
        return False, "elastic EP"
    if _set(options.get("kv_transfer_config")):
        return None, "the KV connector decides"
    return True, "on by default on CUDA and ROCm"


def memory_utilization(given: Any, options: dict[str, Any], hw: Hardware | None, version: Any) -> MemoryUtilization:
    """See the module docstring. ``options``: the EngineArgs names the user set
    (``view.options``); ``given``: ``ServeConfig.gpu_memory_utilization``."""
    ext, why = extensible_kv_cache(options, hw, version)
    if isinstance(given, (int, float)) and not isinstance(given, bool) and 0 < given <= 1:
        return MemoryUtilization(float(given), "given", ext)
    entry = _cache_entry(version)
    default = entry.get("fields", {}).get("gpu_memory_utilization", {}).get("default")
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        return MemoryUtilization(float(default), "default", ext)
    fallback = float(entry.get("class_defaults", {}).get("DEFAULT_GPU_MEMORY_UTILIZATION", 0.92))
    if ext:
        return MemoryUtilization(1.0, "extensible", True)
    return MemoryUtilization(fallback, f"default (extensible KV cache off: {why})", ext, known=ext is not None)
