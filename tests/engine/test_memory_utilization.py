"""gpu_memory_utilization as vLLM resolves it (wizard.engine.memory_utilization) and the release's
default block size, against the releases' own source: CacheConfig.gpu_memory_utilization defaults
to 0.9 up to 0.19 and 0.92 from 0.20 (vllm/config/cache.py); 0.34 defaults it to None and
``resolved_gpu_memory_utilization`` (0.34 L495) gives 1.0 with the extensible KV cache, which
``VllmConfig._resolve_extensible_kv_cache`` (0.34 L3180) turns on for CUDA/ROCm unless
kv_cache_memory_bytes, num_gpu_blocks_override or elastic EP is set; else DEFAULT_GPU_MEMORY_UTILIZATION
0.92. DEFAULT_BLOCK_SIZE: 16 up to 0.33, 64 in 0.34 (cache.py L185)."""

from __future__ import annotations

import pytest
from helpers import LLAMA, model

from wizard.engine.block_size import block_size, default_block_size
from wizard.engine.memory_utilization import memory_utilization
from wizard.hardware.catalog import lookup

H100, CPU = lookup("H100"), lookup("cpu")


@pytest.mark.parametrize("release, expected", [("0.10", 0.9), ("0.19", 0.9), ("0.20", 0.92), ("0.33", 0.92)])
def test_release_default_before_034(release, expected):
    mu = memory_utilization(None, {}, H100, release)
    assert (mu.value, mu.source, mu.extensible) == (expected, "default", False)


def test_given_value_wins():
    assert memory_utilization(0.5, {}, H100, "0.34").value == 0.5
    assert memory_utilization(0.5, {}, H100, "0.34").extensible is True


@pytest.mark.parametrize("options, hw, value, extensible", [
    ({}, H100, 1.0, True),
    ({"enable_extensible_kv_cache": False}, H100, 0.92, False),
    ({"kv_cache_memory_bytes": 8 << 30}, H100, 0.92, False),
    ({"num_gpu_blocks_override": 100}, H100, 0.92, False),
    ({"enable_elastic_ep": True}, H100, 0.92, False),
    ({}, CPU, 0.92, False),
    ({"kv_transfer_config": {"kv_connector": "NixlConnector", "kv_role": "kv_both"}}, H100, 0.92, None),
])
def test_034_extensible_kv_cache(options, hw, value, extensible):
    mu = memory_utilization(None, options, hw, "0.34")
    assert (mu.value, mu.extensible) == (value, extensible)
    assert mu.known == (extensible is not None)


def test_default_block_size_per_release():
    assert default_block_size("0.33") == 16 and default_block_size("0.10") == 16
    assert default_block_size("0.34") == 64
    t = model(LLAMA)
    assert block_size(None, H100, t, "0.33") == 16 and block_size(None, H100, t, "0.34") == 64
    assert block_size(32, H100, t, "0.34") == 32 and block_size(None, CPU, t, "0.34") == 128
