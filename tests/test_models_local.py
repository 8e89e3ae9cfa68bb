"""wizard.models.local: real fixture configs (tests/data/hf) and tiny folders from tests/factory.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from factory import HF, fixture_config, llama_tensor_shapes, make_model_dir, make_tiny_llama
from wizard.models.info import ModelLookupError
from wizard.models.local import inspect_folder
from wizard.models.tensors import SafetensorsHeaderError, read_safetensors_header


def _folder(tmp_path: Path, fixture: str, *files: str) -> Path:
    """Copy fixture files into tmp_path/<name> (renaming variants to config.json)."""
    dst = tmp_path / fixture
    dst.mkdir(parents=True, exist_ok=True)
    for f in files or ("config.json",):
        src_name, _, dst_name = f.partition(":")
        shutil.copy(HF / fixture / src_name, dst / (dst_name or src_name))
    return dst


# ---------------------------------------------------------------- real fixture configs

def test_llama_31_8b_fixture():
    info = inspect_folder(HF / "meta-llama--Llama-3.1-8B-Instruct")
    assert info.architectures == ["LlamaForCausalLM"]
    assert (info.hidden_size, info.num_hidden_layers, info.num_attention_heads) == (4096, 32, 32)
    assert info.num_key_value_heads == 8 and info.head_dim == 128
    assert info.vocab_size == 128256 and info.max_position_embeddings == 131072
    assert info.torch_dtype == "bfloat16" and info.quant_method is None and info.kv_cache_quant is None
    assert not info.use_mla and info.mtp_layers is None and info.num_mamba_layers == 0
    # no weights file: tensor facts unknown, not False
    assert info.has_lm_head is None and info.has_embed_tokens is None and info.has_d2t is None
    assert info.tensor_names_known is False and info.param_count is None


def test_llama_32_1b_head_dim_explicit():
    info = inspect_folder(HF / "meta-llama--Llama-3.2-1B-Instruct")
    assert (info.hidden_size, info.num_hidden_layers, info.head_dim, info.num_key_value_heads) == (2048, 16, 64, 8)


def test_llama_31_70b_fixture():
    info = inspect_folder(HF / "meta-llama--Llama-3.1-70B-Instruct")
    assert (info.hidden_size, info.num_hidden_layers, info.num_attention_heads, info.num_key_value_heads) == (8192, 80, 64, 8)
    assert info.head_dim == 128


def test_deepseek_v3_mla_and_mtp():
    info = inspect_folder(HF / "deepseek-ai--DeepSeek-V3")
    assert info.model_type == "deepseek_v3" and info.num_hidden_layers == 61
    assert info.use_mla and info.kv_lora_rank == 512 and info.qk_rope_head_dim == 64
    assert info.head_dim == 576  # vLLM's MLA head size: kv_lora_rank + qk_rope_head_dim
    assert info.mtp_layers == 1 and info.mtp_field == "num_nextn_predict_layers"
    assert info.quant_method == "fp8" and info.kv_cache_quant is None
    assert info.vocab_size == 129280 and info.num_attention_heads == 128


def test_deepseek_v3_mtp_tensor_layout(tmp_path):
    """MTP weights at model.layers.61.* (DeepSeek README_WEIGHTS, mtp-tensor-layout.json)."""
    layout = json.loads((HF / "deepseek-ai--DeepSeek-V3" / "mtp-tensor-layout.json").read_text())
    cfg = fixture_config("deepseek-ai--DeepSeek-V3")
    prefix = layout["mtp_module_prefix"]
    names = ["model.embed_tokens.weight", "lm_head.weight", "model.norm.weight", "model.layers.0.self_attn.kv_a_proj_with_mqa.weight"]
    names += [f"{prefix}{part}.weight" for part in ("enorm", "hnorm", "eh_proj", "shared_head.head")]
    wm = {n: "model-00001-of-00001.safetensors" for n in names}
    folder = tmp_path / "dsv3"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(cfg))
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 123}, "weight_map": wm}))
    info = inspect_folder(folder)
    assert info.has_mtp_weights is True and info.has_lm_head is True and info.has_embed_tokens is True
    assert info.weight_bytes == 123
    # the same index without layer 61 -> MTP weights missing (R126)
    wm2 = {n: f for n, f in wm.items() if not n.startswith(prefix)}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 100}, "weight_map": wm2}))
    assert inspect_folder(folder).has_mtp_weights is False


def test_gpt_oss_120b_sliding_and_layer_types():
    info = inspect_folder(HF / "openai--gpt-oss-120b")
    assert info.sliding_window == 128 and info.num_hidden_layers == 36
    assert info.layer_types is not None and len(info.layer_types) == 36
    assert info.layer_types[:2] == ["sliding_attention", "full_attention"]
    assert info.layer_types.count("full_attention") == 18
    assert info.quant_method == "mxfp4" and info.head_dim == 64 and info.num_key_value_heads == 8
    assert info.torch_dtype is None  # the file has no torch_dtype


def test_gpt_oss_20b_variant(tmp_path):
    info = inspect_folder(_folder(tmp_path, "openai--gpt-oss-20b", "config.no-quantization-variant.json:config.json"))
    assert info.num_hidden_layers == 24 and len(info.layer_types) == 24 and info.quant_method is None


def test_qwen3_30b_a3b():
    info = inspect_folder(HF / "Qwen--Qwen3-30B-A3B")
    assert info.model_type == "qwen3_moe" and info.architectures == ["Qwen3MoeForCausalLM"]
    assert (info.hidden_size, info.num_hidden_layers, info.num_attention_heads, info.num_key_value_heads) == (2048, 48, 32, 4)
    assert info.head_dim == 128 and info.vocab_size == 151936 and info.max_position_embeddings == 40960
    assert info.sliding_window is None


def test_qwen3_8b_and_variant_without_head_dim(tmp_path):
    info = inspect_folder(HF / "Qwen--Qwen3-8B")
    assert (info.hidden_size, info.num_hidden_layers, info.head_dim, info.num_key_value_heads) == (4096, 36, 128, 8)
    v = inspect_folder(_folder(tmp_path, "Qwen--Qwen3-8B", "config.tt-metal-variant.json:config.json"))
    assert v.head_dim == 4096 // 32  # derived hidden/heads when head_dim is absent


def test_gemma3_text_config_merge():
    info = inspect_folder(HF / "google--gemma-3-27b-it")
    assert info.is_multimodal and info.model_type == "gemma3"
    assert info.architectures == ["Gemma3ForConditionalGeneration"]
    assert (info.hidden_size, info.num_hidden_layers, info.num_attention_heads, info.num_key_value_heads, info.head_dim) == (5376, 62, 32, 16, 128)
    assert info.sliding_window == 1024
    assert info.torch_dtype == "bfloat16"
    assert len(info.layer_types) == 62 and info.layer_types[5] == "full_attention" and info.layer_types[4] == "sliding_attention"
    assert info.raw_config["text_config"]["hidden_size"] == 5376  # raw kept unmerged


def test_gemma3_4b_sparse_defaults():
    info = inspect_folder(HF / "google--gemma-3-4b-it")
    assert (info.hidden_size, info.num_hidden_layers) == (2560, 34)
    # transformers Gemma3TextConfig defaults, with a note saying so
    assert (info.num_attention_heads, info.num_key_value_heads, info.head_dim, info.vocab_size) == (8, 4, 256, 262208)
    assert any("defaults" in n for n in info.notes)


def test_mimo_mtp_from_config_and_index():
    info = inspect_folder(HF / "XiaomiMiMo--MiMo-7B")
    assert info.architectures == ["MiMoForCausalLM"] and info.mtp_layers == 1
    assert info.mtp_field == "num_nextn_predict_layers"
    assert info.tensor_names_known and info.has_mtp_weights is True  # model.mtp_layers.0.*
    assert info.has_lm_head is True and info.has_embed_tokens is True and info.has_d2t is False
    assert info.weight_bytes == 15666819072
    assert info.sliding_window is None  # use_sliding_window: false
    assert any("no shard files" in n for n in info.notes)


def test_mimo_github_config_two_mtp_layers(tmp_path):
    info = inspect_folder(_folder(tmp_path, "XiaomiMiMo--MiMo-7B", "config.github-XiaomiMiMo-MiMo.json:config.json"))
    assert info.mtp_layers == 2


def test_devstral_hf_and_params_json(tmp_path):
    info = inspect_folder(HF / "mistralai--Devstral-Small-2507")
    assert (info.hidden_size, info.num_hidden_layers, info.num_key_value_heads, info.head_dim, info.vocab_size) == (5120, 40, 8, 128, 131072)
    assert info.param_count == 23572403200 and info.weight_bytes == 47144806400
    assert info.has_lm_head is True and info.has_embed_tokens is True
    native = inspect_folder(_folder(tmp_path, "mistralai--Devstral-Small-2507", "params.json"))
    assert native.architectures == ["MistralForCausalLM"] and native.model_type == "mistral"
    assert (native.hidden_size, native.num_hidden_layers, native.num_attention_heads, native.num_key_value_heads) == (5120, 40, 32, 8)
    assert native.head_dim == 128 and native.vocab_size == 131072
    assert native.raw_config["dim"] == 5120 and any("params.json" in n for n in native.notes)


def test_devstral_2_fp8_multimodal():
    info = inspect_folder(HF / "mistralai--Devstral-Small-2-24B-Instruct")
    assert info.is_multimodal and info.quant_method == "fp8" and info.torch_dtype == "bfloat16"  # 'dtype' key
    assert info.num_hidden_layers == 40 and info.max_position_embeddings == 393216


def test_eagle_templates(tmp_path):
    e3 = inspect_folder(_folder(tmp_path, "SafeAILab--EAGLE", "eagle/traineagle3/config.json:config.json"))
    assert e3.draft_vocab_size == 32000 and e3.vocab_size == 128256 and e3.num_hidden_layers == 1
    sf = tmp_path / "sf"
    sf.mkdir()
    shutil.copy(HF / "sgl-project--SpecForge/configs/gpt-oss-120B-eagle3.json", sf / "config.json")
    info = inspect_folder(sf)
    assert info.eagle_aux_hidden_state_layer_ids == [1, 17, 33] and info.draft_vocab_size == 32000


# ---------------------------------------------------------------- tiny folders with weights

EAGLE3_CFG = {
    "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
    "num_key_value_heads": 2, "num_hidden_layers": 1, "intermediate_size": 128, "vocab_size": 512,
    "draft_vocab_size": 256, "torch_dtype": "float16", "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 2, 3]},
}


def _eagle3_tensors(lm=True, embed=True, d2t=True):
    t = {"fc.weight": (64, 192), "layers.0.self_attn.q_proj.weight": (64, 128), "norm.weight": (64,)}
    if lm:
        t["lm_head.weight"] = (256, 64)
    if embed:
        t["embed_tokens.weight"] = (512, 64)
    if d2t:
        t["d2t"] = (256,)
        t["t2d"] = (512,)
    return t


def test_eagle3_drafter_full(tmp_path):
    info = inspect_folder(make_model_dir(tmp_path / "d", EAGLE3_CFG, _eagle3_tensors()))
    assert info.has_lm_head and info.has_embed_tokens and info.has_d2t and info.has_t2d
    assert info.tensors["lm_head.weight"].shape == [256, 64] and info.tensors["lm_head.weight"].dtype == "F16"
    assert info.tensors["embed_tokens.weight"].shape == [512, 64]
    assert info.tensors["d2t"].shape == [256] and info.tensors["t2d"].shape == [512]
    assert info.tensors["fc.weight"].shape == [64, 192]
    expected = 64 * 192 + 64 * 128 + 64 + 256 * 64 + 512 * 64 + 256 + 512
    assert info.param_count == expected and info.weight_bytes == expected * 2
    assert info.draft_vocab_size == 256 and info.eagle_aux_hidden_state_layer_ids == [1, 2, 3]
    assert info.has_mtp_weights is False and info.notes == []


def test_eagle3_drafter_without_own_layers(tmp_path):
    info = inspect_folder(make_model_dir(tmp_path / "d", EAGLE3_CFG, _eagle3_tensors(lm=False, embed=False, d2t=False)))
    assert info.has_lm_head is False and info.has_embed_tokens is False and info.has_d2t is False and info.has_t2d is False
    assert "lm_head.weight" not in info.tensors


def test_eagle3_model_prefix_and_shards(tmp_path):
    t = {"model." + k if k.startswith(("embed", "layers", "norm", "fc")) else k: v for k, v in _eagle3_tensors(lm=True, embed=True, d2t=False).items()}
    info = inspect_folder(make_model_dir(tmp_path / "d", EAGLE3_CFG, t, shards=2))
    assert info.has_embed_tokens and info.tensors["model.embed_tokens.weight"].shape == [512, 64]
    assert info.has_lm_head and info.has_d2t is False
    assert info.weight_bytes == sum(a * (b if len(s) > 1 else 1) for s in t.values() for a, b in [(s[0], s[1] if len(s) > 1 else 1)]) * 2


def test_tiny_llama_bf16(tmp_path):
    folder = make_tiny_llama(tmp_path / "m", dtype="bfloat16", tokenizer=False)
    info = inspect_folder(folder)
    shapes = llama_tensor_shapes(json.loads((folder / "config.json").read_text()))
    n = sum(__import__("math").prod(s) for s in shapes.values())
    assert info.param_count == n and info.weight_bytes == 2 * n
    assert info.tensors["lm_head.weight"].dtype == "BF16" and info.tensors["model.embed_tokens.weight"].shape == [512, 128]
    assert info.has_lm_head and info.has_embed_tokens and info.tensor_names_known


def test_quant_kv_cache_schemes(tmp_path):
    base = dict(EAGLE3_CFG)
    ct = dict(base, quantization_config={"quant_method": "compressed-tensors", "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": False, "symmetric": True}})
    assert inspect_folder(make_model_dir(tmp_path / "ct", ct)).kv_cache_quant == "fp8"
    mo = dict(base, quantization_config={"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"})
    i = inspect_folder(make_model_dir(tmp_path / "mo", mo))
    assert i.quant_method == "modelopt" and i.kv_cache_quant == "fp8"
    nv = dict(base, quantization_config={"quant_method": "modelopt_fp4", "quantization": {"kv_cache_scheme": {"num_bits": 4, "type": "float"}}})
    assert inspect_folder(make_model_dir(tmp_path / "nv", nv)).kv_cache_quant == "nvfp4"
    # ModelOpt hf_quant_config.json next to a config without quantization_config
    folder = make_model_dir(tmp_path / "hq", base)
    (folder / "hf_quant_config.json").write_text(json.dumps({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}))
    i = inspect_folder(folder)
    assert i.quant_method == "modelopt" and i.kv_cache_quant == "fp8"
    # unknown algo: stays None, noted
    bad = dict(base, quantization_config={"quant_method": "modelopt", "kv_cache_quant_algo": "INT3"})
    i = inspect_folder(make_model_dir(tmp_path / "bad", bad))
    assert i.kv_cache_quant is None and any("INT3" in n for n in i.notes)


def test_mtp_spellings_and_hybrids(tmp_path):
    q35 = {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "vision_config": {},
           "text_config": {"model_type": "qwen3_5_text", "hidden_size": 64, "num_hidden_layers": 8, "num_attention_heads": 4,
                           "mtp_num_hidden_layers": 1, "layer_types": ["linear_attention"] * 3 + ["full_attention"] + ["linear_attention"] * 3 + ["full_attention"]}}
    i = inspect_folder(make_model_dir(tmp_path / "q35", q35))
    assert i.mtp_layers == 1 and i.mtp_field == "text_config.mtp_num_hidden_layers"
    assert i.num_mamba_layers == 6 and i.is_multimodal
    mm = {"model_type": "minimax_m3", "num_mtp_modules": 3, "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2}
    i = inspect_folder(make_model_dir(tmp_path / "mm", mm))
    assert (i.mtp_layers, i.mtp_field) == (3, "num_mtp_modules")
    nh = {"model_type": "nemotron_h", "hybrid_override_pattern": "M-M*-M-", "num_hidden_layers": 7}
    assert inspect_folder(make_model_dir(tmp_path / "nh", nh)).num_mamba_layers == 3
    qn = {"model_type": "qwen3_next", "num_hidden_layers": 48, "full_attention_interval": 4}
    assert inspect_folder(make_model_dir(tmp_path / "qn", qn)).num_mamba_layers == 36
    g3n = {"model_type": "gemma3n", "text_config": {"num_kv_shared_layers": 15, "num_hidden_layers": 35}}
    assert inspect_folder(make_model_dir(tmp_path / "g3n", g3n)).num_kv_shared_layers == 15
    l4 = {"model_type": "llama4", "text_config": {"attention_chunk_size": 8192}}
    assert inspect_folder(make_model_dir(tmp_path / "l4", l4)).attention_chunk_size == 8192


def test_speculators_format(tmp_path):
    cfg = {
        "architectures": ["Eagle3Speculator"], "speculators_model_type": "eagle3", "draft_vocab_size": 32000,
        "transformer_layer_config": {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                                     "num_hidden_layers": 1, "vocab_size": 128256, "head_dim": 128},
        "speculators_config": {"algorithm": "eagle3", "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 5}],
                               "verifier": {"name_or_path": "meta-llama/Llama-3.1-8B-Instruct"}},
    }
    i = inspect_folder(make_model_dir(tmp_path / "s", cfg))
    assert i.hidden_size == 4096 and i.vocab_size == 128256 and i.draft_vocab_size == 32000
    assert i.n_predict == 5 and i.speculators_config["verifier"]["name_or_path"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert i.model_type == "llama" and not i.is_multimodal


# ---------------------------------------------------------------- bad input

def test_missing_folder_and_config(tmp_path):
    with pytest.raises(ModelLookupError, match="does not exist"):
        inspect_folder(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLookupError, match="no config.json"):
        inspect_folder(tmp_path / "empty")


def test_config_not_json(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text("{'hidden_size': 4096,")
    info = inspect_folder(d)
    assert info.hidden_size is None and info.architectures == []
    # an error (rule SD007), not only a note: vLLM cannot load such a checkpoint
    assert any("config.json is not valid JSON (line 1" in e for e in info.errors)
    (d / "config.json").write_text("[1, 2]")
    assert any("config.json is a JSON list, not an object" in e for e in inspect_folder(d).errors)


def test_wrong_types_noted(tmp_path):
    cfg = {"hidden_size": "big", "num_hidden_layers": 2.0, "architectures": "Llama", "layer_types": [1], "torch_dtype": 16, "num_attention_heads": True}
    i = inspect_folder(make_model_dir(tmp_path / "m", cfg))
    assert i.hidden_size is None and i.num_hidden_layers == 2 and i.architectures == [] and i.layer_types is None
    assert i.num_attention_heads is None and i.torch_dtype is None
    # sizes of the wrong type are errors (SD007); other fields stay notes
    assert any("'hidden_size'" in e for e in i.errors) and any("'num_attention_heads'" in e for e in i.errors)
    assert any("'architectures'" in n for n in i.notes)


def test_corrupt_safetensors_header(tmp_path):
    folder = make_model_dir(tmp_path / "m", EAGLE3_CFG, _eagle3_tensors())
    st = folder / "model.safetensors"
    data = bytearray(st.read_bytes())
    data[8:12] = b"#!?x"
    st.write_bytes(bytes(data))
    info = inspect_folder(folder)
    assert info.has_lm_head is None and info.param_count is None and info.hidden_size == 64
    assert any("header is not valid JSON" in n for n in info.notes)
    with pytest.raises(SafetensorsHeaderError):
        read_safetensors_header(st)


def test_truncated_safetensors(tmp_path):
    folder = make_model_dir(tmp_path / "m", EAGLE3_CFG, _eagle3_tensors())
    st = folder / "model.safetensors"
    data = st.read_bytes()
    st.write_bytes(data[: len(data) - 100])
    info = inspect_folder(folder)
    assert info.has_lm_head is None and any("truncated" in n for n in info.notes)
    st.write_bytes(data[:5])
    info = inspect_folder(folder)
    assert any("too short" in n for n in info.notes)
    st.write_bytes(b"\xff" * 8 + b"{}")
    assert any("does not fit" in n for n in inspect_folder(folder).notes)


def test_bin_weights_unknown(tmp_path):
    folder = make_model_dir(tmp_path / "m", EAGLE3_CFG)
    (folder / "pytorch_model.bin").write_bytes(b"PK\x03\x04")
    info = inspect_folder(folder)
    assert info.has_lm_head is None and any("pytorch_model.bin" in n for n in info.notes)


def test_index_not_json(tmp_path):
    folder = make_model_dir(tmp_path / "m", EAGLE3_CFG, _eagle3_tensors(), shards=2)
    (folder / "model.safetensors.index.json").write_text("{nope")
    info = inspect_folder(folder)
    # headers still read; index problem noted
    assert info.has_lm_head is True and any("model.safetensors.index.json" in n for n in info.notes)
