"""ModelInfo.text_config: the one merge of a multimodal config's text sub-config (issue 21),
as vLLM's hf_text_config sees it."""

from __future__ import annotations

from wizard.models.config_json import info_from_config
from wizard.models.info import ModelInfo

WRAPPER = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
           "quantization_config": {"quant_method": "fp8"}, "vision_config": {"hidden_size": 8},
           "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "num_hidden_layers": 34,
                           "rope_scaling": {"rope_type": "linear", "factor": 8.0}}}


def test_text_config_merged_over_the_top_level():
    info = info_from_config(WRAPPER, id="x")
    t = info.text_config
    assert t["hidden_size"] == 2560 and t["rope_scaling"]["factor"] == 8.0
    assert t["model_type"] == "gemma3" and t["text_model_type"] == "gemma3_text"  # the wrapper's own type
    assert t["quantization_config"] == {"quant_method": "fp8"} and "vision_config" in t
    assert t["max_position_embeddings"] == 131072  # transformers' Gemma3TextConfig default
    assert info.hidden_size == 2560 and info.is_multimodal and info.has_mm_tower
    assert "hidden_size" not in info.raw_config  # raw stays as read


def test_same_view_without_the_parser():
    built = ModelInfo(id="x", raw_config=WRAPPER)
    assert built.text_config == info_from_config(WRAPPER, id="x").text_config
    assert ModelInfo(id="y").text_config == {} and not ModelInfo(id="y").has_config


def test_mistral_params_view_uses_hf_names():
    info = info_from_config({"dim": 4096, "n_layers": 32, "n_heads": 32, "n_kv_heads": 8, "vocab_size": 32000,
                             "max_seq_len": 32768}, id="m", native_mistral=True)
    assert info.text_config["hidden_size"] == 4096 and info.text_config["max_position_embeddings"] == 32768
