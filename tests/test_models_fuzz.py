"""Hypothesis fuzz of the config.json reader and the safetensors-header reader: only
ModelLookupError or a ModelInfo (with notes for what was wrong), never another exception."""

from __future__ import annotations

import json
import struct
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from wizard.models.info import ModelLookupError
from wizard.models.info import ModelInfo
from wizard.models.config_json import info_from_config
from wizard.models.local import inspect_folder

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CONFIG_KEYS = [
    "architectures", "model_type", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
    "head_dim", "vocab_size", "max_position_embeddings", "torch_dtype", "dtype", "quantization_config", "kv_lora_rank",
    "qk_rope_head_dim", "sliding_window", "use_sliding_window", "sliding_window_pattern", "layer_types", "attention_chunk_size",
    "num_kv_shared_layers", "layers_block_type", "hybrid_override_pattern", "full_attention_interval", "attn_layer_period",
    "attn_layer_offset", "num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules", "speculators_config",
    "draft_vocab_size", "target_hidden_size", "eagle_aux_hidden_state_layer_ids", "eagle_config", "n_predict", "text_config",
    "transformer_layer_config", "vision_config", "kv_cache_scheme", "kv_cache_quant_algo", "quant_method", "quantization",
    "proposal_methods", "speculative_tokens", "num_heads",
]
json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.text(max_size=12),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.one_of(st.sampled_from(CONFIG_KEYS), st.text(max_size=8)), inner, max_size=6),
    ),
    max_leaves=25,
)
config_dict = st.dictionaries(st.one_of(st.sampled_from(CONFIG_KEYS), st.text(max_size=8)), json_value, max_size=12)


def _check(folder: Path) -> None:
    try:
        info = inspect_folder(folder)
    except ModelLookupError as err:
        assert str(err)
        return
    assert isinstance(info, ModelInfo)
    ModelInfo.model_validate(info.model_dump())  # the result is itself valid


@SETTINGS
@given(data=st.binary(max_size=400))
def test_random_bytes_as_config_json(data):
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "config.json").write_bytes(data)
        _check(Path(d))


@SETTINGS
@given(cfg=config_dict)
def test_random_json_dicts_as_config(cfg):
    info = info_from_config(cfg, id="fuzz")
    assert isinstance(info, ModelInfo)
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "config.json").write_text(json.dumps(cfg))
        _check(Path(d))


@SETTINGS
@given(cfg=config_dict)
def test_random_json_as_params_json(cfg):
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "params.json").write_text(json.dumps(cfg))
        _check(Path(d))


@SETTINGS
@given(data=st.binary(max_size=600))
def test_random_bytes_as_safetensors(data):
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "config.json").write_text('{"model_type": "llama", "hidden_size": 8}')
        (Path(d) / "model.safetensors").write_bytes(data)
        _check(Path(d))


header_entry = st.fixed_dictionaries(
    {},
    optional={
        "dtype": st.one_of(st.sampled_from(["F16", "BF16", "F32", "I64", "BOOL", "F8_E4M3", "???"]), json_leaf),
        "shape": st.one_of(st.lists(st.integers(-3, 70000), max_size=3), json_leaf),
        "data_offsets": st.one_of(st.lists(st.integers(-5, 10**6), min_size=0, max_size=3), json_leaf),
    },
)
header = st.dictionaries(
    st.one_of(st.sampled_from(["lm_head.weight", "embed_tokens.weight", "d2t", "t2d", "__metadata__", "model.layers.9.x"]), st.text(max_size=10)),
    st.one_of(header_entry, json_value),
    max_size=6,
)


@SETTINGS
@given(h=header, pad=st.integers(0, 300), lie=st.integers(-50, 50))
def test_structured_safetensors_headers(h, pad, lie):
    """A well-framed file with a random (JSON) header and a possibly wrong length prefix."""
    blob = json.dumps(h).encode()
    n = max(len(blob) + lie, 0)
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "config.json").write_text('{"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 4}')
        (Path(d) / "model.safetensors").write_bytes(struct.pack("<Q", n) + blob + b"\0" * pad)
        (Path(d) / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {k: "model.safetensors" for k in h if isinstance(k, str)}}))
        _check(Path(d))


@SETTINGS
@given(idx=json_value)
def test_random_index_json(idx):
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "config.json").write_text('{"model_type": "llama"}')
        (Path(d) / "model.safetensors.index.json").write_text(json.dumps(idx))
        _check(Path(d))
