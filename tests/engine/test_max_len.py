"""``view.served_max_model_len`` / ``view.drafter_max_len`` against vLLM's ``_get_and_verify_max_len``
(vllm/config/model.py; 0.32 installed here; 0.28's YaRN rule from its generated checks.json)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from helpers import LLAMA, ctx, model

YARN4 = {**LLAMA, "max_position_embeddings": 32768,
         "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
DYN2 = {**LLAMA, "max_position_embeddings": 32768, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}


def _vllm_032(raw: dict) -> int:
    from transformers import PretrainedConfig
    from vllm.config.model import _get_and_verify_max_len
    cfg = PretrainedConfig(**{k: v for k, v in raw.items() if k != "model_type"})
    cfg.model_type = raw["model_type"]
    arch = SimpleNamespace(derived_max_model_len_and_key=(float(raw["max_position_embeddings"]), "max_position_embeddings"))
    return _get_and_verify_max_len(cfg, arch, None, None, False, None)


@pytest.mark.parametrize("raw", [YARN4, DYN2, LLAMA])
def test_served_len_matches_vllm_032(raw):
    pytest.importorskip("vllm")
    assert ctx(target=model(raw)).view.served_max_model_len == _vllm_032(raw)


def test_yarn_x4_at_028_is_original_times_factor():
    """Resolved disagreement (issue #21): checks.py 131072 vs drafter_context.py / planner.py 32768 at
    0.28. vLLM 0.28/0.29 derive YaRN as original_max_position_embeddings x factor (generated
    wizard/data/vllm/0.28/checks.json rope_types.yarn = 'original*factor'); 0.30+ treat it as
    pre-scaled. All three readers now use the view."""
    c = ctx(target=model(YARN4), version="0.28")
    assert c.view.served_max_model_len == 131072
    assert ctx(target=model(YARN4), version="0.32").view.served_max_model_len == 32768


def test_drafter_len_uses_the_same_derivation():
    d = model(YARN4, "./d")
    c = ctx({"speculative_config": {"method": "draft_model", "model": "./d", "num_speculative_tokens": 2}},
            target=model(LLAMA), drafter=d, version="0.28")
    assert c.view.drafter_max_len == 131072
    assert ctx({"max_model_len": 4096}, target=model(LLAMA)).view.served_max_model_len == 4096
