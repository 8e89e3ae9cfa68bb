"""Small builders for the engine-view tests (a context from a config dict, a model from a config.json dict)."""

from __future__ import annotations

from wizard.config import config_from_dict
from wizard.context import CheckContext
from wizard.hardware.catalog import lookup
from wizard.models.config_json import info_from_config
from wizard.vllm.versions import parse_version

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
         "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}


def model(raw: dict, name: str = "./m"):
    return info_from_config(raw, id=name)


def ctx(cfg: dict | None = None, target=None, drafter=None, gpu: str | None = None, version: str = "0.32"):
    c = {"model": "./m", **(cfg or {})}
    return CheckContext(config=config_from_dict(c), version=parse_version(version), target=target, drafter=drafter,
                        hardware=lookup(gpu) if gpu else None)
