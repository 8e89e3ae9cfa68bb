"""``view.batch_defaults`` / ``view.budget`` against vLLM's own ``EngineArgs.get_batch_defaults``
and ``_set_default_max_num_seqs_and_batched_tokens_args`` (vllm/engine/arg_utils.py, 0.32 installed
here; 0.33 adds the GB10 small tier)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from helpers import LLAMA, ctx, model

from wizard.engine.batch import batch_defaults
from wizard.hardware.catalog import lookup
from wizard.vllm.versions import parse_version

GiB = 1 << 30


def _vllm_defaults(monkeypatch, memory: int, name: str, cpu: bool, world: int) -> tuple[int, int]:
    """vLLM 0.32's OPENAI_API_SERVER defaults with its platform replaced by one with this device."""
    from vllm.engine import arg_utils
    from vllm.usage.usage_lib import UsageContext
    fake = SimpleNamespace(get_device_total_memory=lambda: memory, get_device_name=lambda: name,
                           is_tpu=lambda: False, is_cpu=lambda: cpu)
    monkeypatch.setattr(arg_utils, "current_platform", fake)
    t, s = arg_utils.EngineArgs.get_batch_defaults(world)
    return t[UsageContext.OPENAI_API_SERVER], s[UsageContext.OPENAI_API_SERVER]


@pytest.mark.parametrize("gpu,world", [("H100", 1), ("A100-80GB", 1), ("B200", 1), ("L4", 1), ("cpu", 4)])
def test_batch_defaults_match_vllm_032(monkeypatch, gpu, world):
    pytest.importorskip("vllm")
    hw = lookup(gpu)
    d = batch_defaults(hw, world, parse_version("0.32"))
    assert (d.tokens, d.seqs) == _vllm_defaults(monkeypatch, hw.memory_bytes, hw.name, hw.vendor == "cpu", world)


def test_cpu_defaults_scale_with_world_size():
    """Resolved disagreement: mechanisms/apply.py had no CPU case (256/2048 on CPU); vLLM's CPU
    platform gives 2048 x world / 128 x world (get_batch_defaults 'cpu specific default values')."""
    c = ctx({"tensor_parallel_size": 2}, target=model(LLAMA), gpu="cpu")
    assert (c.view.batch_defaults.tokens, c.view.batch_defaults.seqs) == (4096, 256)


def test_unknown_hardware_is_vllms_fallback_but_marked_unknown():
    """Resolved disagreement: sd094 returned None, plan/memory 2048/256: vLLM's except-branch
    (device_memory = 0) gives 2048/256; the view keeps both, flagged hardware_known=False."""
    d = batch_defaults(None, 1, parse_version("0.32"))
    assert (d.tokens, d.seqs, d.hardware_known) == (2048, 256, False)


def test_gb10_small_tier_from_033():
    hw = SimpleNamespace(vendor="nvidia", memory_bytes=120 * GiB, name="GB10", compute_capability=(12, 1))
    assert batch_defaults(hw, 1, parse_version("0.32")).tokens == 8192
    assert batch_defaults(hw, 1, parse_version("0.33")).tokens == 2048


def test_budget_capped_by_max_seqs_times_len_and_seqs_by_budget():
    """Resolved disagreement: planner / sd501 / apply.py used the raw defaults; vLLM caps a defaulted
    budget at max_num_seqs x max_model_len and a defaulted max_num_seqs at the budget."""
    c = ctx({"max_model_len": 4, "max_num_seqs": 8}, target=model(LLAMA), gpu="H100")
    assert c.view.budget.tokens == 32  # min(8 x 4, 8192)
    c = ctx({"max_num_batched_tokens": 100}, target=model(LLAMA), gpu="H100")
    assert c.view.budget.seqs == 100  # min(1024, 100)
    c = ctx({"enable_chunked_prefill": False, "max_model_len": 20000}, target=model(LLAMA), gpu="H100")
    assert c.view.budget.tokens == 20000  # max(max_model_len, 8192) without chunked prefill


def test_throughput_mode_doubles_defaults():
    c = ctx({"extra_args": {"performance_mode": "throughput"}}, target=model(LLAMA), gpu="H100")
    assert (c.view.budget.tokens, c.view.budget.seqs) == (16384, 2048)
