"""KV bytes per element and the default block size, against vLLM 0.32 (installed) and 0.33 source.

nvfp4: FlashInfer's page holds ``nvfp4_kv_cache_full_dim(head_size) = head_size // 2 + head_size // 16``
bytes per head (vllm/utils/torch_utils.py; v1/attention/backends/flashinfer.py), 0.5625 per element."""

from __future__ import annotations

import pytest
from helpers import LLAMA, ctx, model

from wizard.engine.block_size import block_size
from wizard.engine.kv_bytes import KV_BYTES, kv_dtype_bytes
from wizard.hardware.catalog import lookup
from wizard.mechanisms import kv_groups as KG


def test_nvfp4_matches_vllm_full_dim():
    pytest.importorskip("vllm")
    from vllm.utils.torch_utils import nvfp4_kv_cache_full_dim
    for hs in (64, 128, 256):
        assert kv_dtype_bytes("nvfp4") * hs == nvfp4_kv_cache_full_dim(hs)


def test_every_kv_dtype_is_one_vllm_knows():
    pytest.importorskip("vllm")
    from vllm.utils.torch_utils import STR_DTYPE_TO_TORCH_DTYPE
    assert {k for k in KV_BYTES if not k.startswith("octave")} <= set(STR_DTYPE_TO_TORCH_DTYPE)
    assert kv_dtype_bytes("fp8") == 1 and kv_dtype_bytes("auto", "bfloat16") == 2


def test_kv_groups_page_uses_the_same_bytes():
    """Resolved disagreement: kv_groups.py gave nvfp4 2 bytes (its table lacked it), plan/kv.py 0.5625."""
    t = model(LLAMA)
    layer = KG.layers_for(t, "target", kv_cache_dtype="nvfp4")[0]
    assert layer.dtype_bytes == 0.5625


def test_default_block_size_per_platform():
    """vllm/config/cache.py DEFAULT_BLOCK_SIZE 16; vllm/platforms/cpu.py 128 (16 for MLA, forced)."""
    t = model(LLAMA)
    assert block_size(None, lookup("H100"), t) == 16
    assert block_size(None, lookup("cpu"), t) == 128
    assert block_size(32, lookup("cpu"), t) == 32
    mla = model({**LLAMA, "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "kv_lora_rank": 512,
                 "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128})
    assert block_size(64, lookup("cpu"), mla) == 16
    assert ctx(target=t, gpu="cpu").view.block_size == 128
