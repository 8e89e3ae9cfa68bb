"""KV-cache grouping: the mirror against each release's own ``get_kv_cache_groups``, and
predictions for real model pairs (configs from tests/data/hf)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from factory import fixture_config, make_model_dir
from wizard.mechanisms.kv_groups import LayerKV, kv_cache_groups, layers_for, page_size
from wizard.models.local import inspect_folder

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "vllm_samples"
RELEASES = ["0.10", "0.11", "0.12", "0.15", "0.20", "0.24", "0.26", "0.28", "0.29", "0.30", "0.31", "0.32", "0.33"]  # 0.10-0.26: unpacked wheels (gen_mechanism_tables --source)


def _sample_layers(x):
    out = []
    n = len(x["target"])
    for i, l in enumerate(x["target"] + x["drafter"]):
        role = "target" if i < n else "drafter"
        name = f"model.layers.{i}.attn" if (i < n or x["method"] == "mtp") else f"draft.layers.{i - n}.attn"
        if l["kind"] == "mamba":  # the probe's Mamba states are bf16 tensors of these shapes
            out.append(LayerKV(name, "mamba", role, state_bytes=sum(math.prod(s) * 2 for s in l["shapes"])))
        elif l["kind"] == "mla":
            out.append(LayerKV(name, "mla", role, 1, l["head"], 2))
        else:
            out.append(LayerKV(name, l["kind"], role, l["kv_heads"], l["head"], 1 if l.get("fp8") else 2,
                               sliding_window=l.get("window")))
    return out


@pytest.mark.parametrize("rel", RELEASES)
def test_mirror_matches_release_code(rel):
    samples = json.loads(gzip.decompress((SAMPLES / rel / "kv_groups.json.gz").read_bytes()))["samples"]
    assert len(samples) >= 150
    bad = []
    for x in samples:
        r = kv_cache_groups(rel, _sample_layers(x), block_size=x["block_size"],
                            disable_hybrid_kv_cache_manager=x["disable_hybrid"])
        if "error" in x:
            ok = r.error is not None and r.error.split(":")[0] == x["error"].split(":")[0]
        else:
            want = [(g["layers"], g["spec"], g["block_size"], g["page_size"]) for g in x["groups"]]
            got = [(list(g.layers), g.spec, g.block_size, g.page_size) for g in r.groups]
            ok = want == got
        if not ok:
            bad.append((x, r))
    assert not bad, bad[:1]


def _model(tmp_path, name, cfg):
    return inspect_folder(make_model_dir(tmp_path / name, cfg))


def test_gpt_oss_20b_with_eagle3_two_groups_one_padding_layer(tmp_path):
    target = _model(tmp_path, "t", fixture_config("openai--gpt-oss-20b", "config.no-quantization-variant.json"))
    drafter = _model(tmp_path, "d", fixture_config("sgl-project--SpecForge", "configs/gpt-oss-20B-eagle3.json"))
    layers = layers_for(target) + layers_for(drafter, "drafter")
    r = kv_cache_groups("0.32", layers, block_size=16)
    assert r.error is None
    assert [(g.spec, len(g.layers)) for g in r.groups] == [("SlidingWindowSpec", 12), ("FullAttentionSpec", 13)]
    assert r.drafter_groups == (1,) and not r.drafter_spans_groups
    assert r.padding_layers == 1  # 12 sliding layers padded to the group size 13
    assert r.groups[0].page_size == 8 * 16 * 128 * 2  # 8 KV heads x 16 tokens x (64+64) x 2 bytes


def test_llama_8b_with_eagle3_is_one_group(tmp_path):
    target = _model(tmp_path, "t", fixture_config("meta-llama--Llama-3.1-8B-Instruct"))
    drafter = _model(tmp_path, "d", fixture_config("sgl-project--SpecForge", "configs/llama3-8B-eagle3.json"))
    r = kv_cache_groups("0.33", layers_for(target) + layers_for(drafter, "drafter"))
    assert r.num_groups == 1 and r.groups[0].spec == "FullAttentionSpec" and len(r.groups[0].layers) == 33


def test_deepseek_v3_mla_target_with_llama_style_drafter_is_one_uniform_type_group(tmp_path):
    target = _model(tmp_path, "t", fixture_config("deepseek-ai--DeepSeek-V3"))
    drafter = _model(tmp_path, "d", fixture_config("sgl-project--SpecForge", "configs/deepseek-v3-671b-eagle3.json"))
    layers = layers_for(target, tensor_parallel_size=8) + layers_for(drafter, "drafter", tensor_parallel_size=8)
    assert layers[0].kind == "mla" and layers[0].head_size == 576 and layers[-1].kind == "full"
    r = kv_cache_groups("0.32", layers, block_size=64)
    assert r.num_groups == 1 and r.groups[0].spec == "UniformTypeKVCacheSpecs"


def test_dflash_drafter_with_a_sliding_layer_splits_the_target_into_one_layer_groups(tmp_path):
    target = _model(tmp_path, "t", fixture_config("meta-llama--Llama-3.1-8B-Instruct"))
    drafter_cfg = {**fixture_config("meta-llama--Llama-3.1-8B-Instruct"), "num_hidden_layers": 2,
                   "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 2048}
    drafter = _model(tmp_path, "d", drafter_cfg)
    r = kv_cache_groups("0.32", layers_for(target) + layers_for(drafter, "drafter"))
    # buckets: 33 full layers and 1 sliding layer -> group size 1 -> 34 groups
    assert r.num_groups == 34 and r.drafter_spans_groups


def test_mla_pages_that_cannot_be_unified_raise_unless_the_other_kind_is_sliding_window():
    mla = [LayerKV(f"model.layers.{i}.attn", "mla", head_size=576) for i in range(4)]  # 18432 B per block
    # a recurrent-state layer with a bigger page that the MLA page does not divide -> vLLM raises
    r = kv_cache_groups("0.32", mla + [LayerKV("model.layers.4.attn", "mamba", state_bytes=100_000)], block_size=16)
    assert r.error is not None and r.error.startswith("NotImplementedError") and "model.layers.0.attn" in r.error
    # MLA next to a sliding-window drafter layer: allocation falls back to full attention
    swa = LayerKV("draft.layers.0.attn", "sliding", "drafter", 5, 96, sliding_window=4096)  # 30720 B
    fb = kv_cache_groups("0.32", mla + [swa], block_size=16)
    assert fb.error is None and fb.groups[0].spec == "UniformTypeKVCacheSpecs"
    assert any("full attention" in n for n in fb.notes)


def _sample(rel, target, drafter, method):
    samples = json.loads(gzip.decompress((SAMPLES / rel / "kv_groups.json.gz").read_bytes()))["samples"]
    return next(x for x in samples if x["target"] == target and x["drafter"] == drafter and x["method"] == method)


def test_eagle_drafter_with_half_the_kv_heads_fails_on_0_10_and_is_grouped_from_0_11(tmp_path):
    """vLLM issue 22432: Llama-3.1-8B (8 KV heads x 128) + an EAGLE drafter trained with 4 KV heads."""
    full8, full4 = {"kind": "full", "kv_heads": 8, "head": 128}, {"kind": "full", "kv_heads": 4, "head": 128}
    # what the releases' own code did (probe samples): 0.10.0's get_kv_cache_config raises, 0.11.0 groups
    assert _sample("0.10", [full8] * 32, [full4], "eagle")["error"].startswith("NotImplementedError")
    assert [g["spec"] for g in _sample("0.11", [full8] * 32, [full4], "eagle")["groups"]] == ["UniformTypeKVCacheSpecs"]
    target = _model(tmp_path, "t", fixture_config("meta-llama--Llama-3.1-8B-Instruct"))
    dcfg = {**fixture_config("SafeAILab--EAGLE", "eagle/train/EAGLE-LLaMA3-Instruct-8B.json"), "num_key_value_heads": 4}
    layers = layers_for(target) + layers_for(_model(tmp_path, "d", dcfg), "drafter")
    r = kv_cache_groups("0.10.0", layers)
    assert r.release == "0.10.0" and r.error.startswith("NotImplementedError: get_kv_cache_config")
    assert "65536 bytes per block for model.layers.0.attn" in r.error and "32768 bytes per block for draft.layers.0.attn" in r.error
    assert r.matching_drafter == "8 KV heads x 128" and r.grouped_from == "0.11"
    assert kv_cache_groups("0.10.2", layers).error is not None  # the 0.10 table stands for every 0.10.x
    ok = kv_cache_groups("0.11.0", layers)
    assert ok.error is None and ok.groups[0].spec == "UniformTypeKVCacheSpecs" and ok.release == "0.11.0"
    assert all(kv_cache_groups(rel, layers).error is None for rel in RELEASES[1:])  # hence grouped_from 0.11


def test_0_10_compares_type_ids_and_cuts_consecutive_slices():
    # 8 x 128 and 16 x 64 full-attention layers have one page size and one type_id in 0.10.0: one group
    a = [LayerKV(f"model.layers.{i}.attn", "full", num_kv_heads=8, head_size=128) for i in range(4)]
    b = [LayerKV("draft.layers.0.attn", "full", "drafter", 16, 64)]
    r = kv_cache_groups("0.10", a + b)
    assert r.error is None and [(g.spec, len(g.layers)) for g in r.groups] == [("FullAttentionSpec", 5)]
    assert kv_cache_groups("0.11", a + b).groups[0].spec == "UniformTypeKVCacheSpecs"
    # 4 sliding + 2 full layers of one page size: 0.10 slices [0, 1] [2, 3], later releases stride [0, 2] [1, 3]
    sw = [LayerKV(f"model.layers.{i}.attn", "sliding", num_kv_heads=8, head_size=128, sliding_window=512) for i in range(4)]
    full = [LayerKV(f"model.layers.{i}.attn", "full", num_kv_heads=8, head_size=128) for i in (4, 5)]
    old = kv_cache_groups("0.10", sw + full).groups
    new = kv_cache_groups("0.11", sw + full).groups
    assert [g.layers for g in old][:2] == [("model.layers.0.attn", "model.layers.1.attn"),
                                           ("model.layers.2.attn", "model.layers.3.attn")]
    assert [g.layers for g in new][:2] == [("model.layers.0.attn", "model.layers.2.attn"),
                                           ("model.layers.1.attn", "model.layers.3.attn")]


def test_page_size_formula():
    assert page_size(LayerKV("a", "full", num_kv_heads=8, head_size=128), 16) == 65536
    assert page_size(LayerKV("a", "mla", head_size=576, dtype_bytes=1), 64) == 36864
    assert page_size(LayerKV("a", "mamba", state_bytes=12345), 16) == 12345


@pytest.mark.vllm
def test_installed_vllm_groups_the_same_way():
    """The installed vLLM's own get_kv_cache_groups on real KVCacheSpec objects."""
    from types import SimpleNamespace as NS

    import torch
    from vllm.v1.core import kv_cache_utils
    from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec, SlidingWindowSpec

    from wizard.vllm.versions import installed_vllm

    inst = installed_vllm()
    if inst is None or not hasattr(kv_cache_utils, "get_kv_cache_groups"):
        pytest.skip("no vLLM with kv_cache_utils.get_kv_cache_groups")
    bf16 = torch.bfloat16
    scenarios = [
        # gpt-oss-20b + EAGLE3
        [("sliding", 8, 64), ("full", 8, 64)] * 12 + [("full", 8, 64)],
        # DFlash drafter with one sliding layer next to a full-attention target
        [("full", 8, 128)] * 8 + [("sliding", 8, 128), ("full", 8, 128)],
        # MLA target + Llama-style drafter
        [("mla", 1, 576)] * 6 + [("full", 8, 128)],
    ]
    for sc in scenarios:
        specs, layers = {}, []
        for i, (kind, h, d) in enumerate(sc):
            name = f"model.layers.{i}.attn"
            if kind == "full":
                specs[name] = FullAttentionSpec(block_size=16, num_kv_heads=h, head_size=d, dtype=bf16)
            elif kind == "sliding":
                specs[name] = SlidingWindowSpec(block_size=16, num_kv_heads=h, head_size=d, dtype=bf16, sliding_window=128)
            else:
                specs[name] = MLAAttentionSpec(block_size=16, num_kv_heads=1, head_size=d, dtype=bf16, cache_dtype_str="auto")
            layers.append(LayerKV(name, kind, num_kv_heads=h, head_size=d, sliding_window=128 if kind == "sliding" else None))
        layout = NS(is_block_outermost=False)
        vc = NS(scheduler_config=NS(disable_hybrid_kv_cache_manager=False), speculative_config=None,
                model_config=NS(hf_config=NS(model_type="llama")), attention_config=NS(hisparse_config=None),
                parallel_config=NS(decode_context_parallel_size=1, tensor_parallel_size=1),
                cache_config=NS(kv_cache_layout="LBNHC", get_resolved_kv_cache_layout=lambda: layout,
                                enable_prefix_caching=True), kv_transfer_config=None)
        real = kv_cache_utils.get_kv_cache_groups(vc, specs)
        mine = kv_cache_groups(inst.short, layers, block_size=16)
        assert [(list(g.layer_names), type(g.kv_cache_spec).__name__, g.kv_cache_spec.page_size_bytes) for g in real] == \
               [(list(g.layers), g.spec, g.page_size) for g in mine.groups]
