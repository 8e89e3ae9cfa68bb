"""Which model runner vLLM uses has one definition (issue 21): the generated routing
(``wizard.mechanisms.apply.runner``, from each release's proposers.json); the rules' helper
``uses_v1_runner`` reads it. The helper used to decide by itself and missed that
``VLLM_USE_V2_MODEL_RUNNER`` defaulted to 0 up to 0.21 (vllm/envs.py), so on 0.20 it said V2."""

from __future__ import annotations

import pytest

from helpers import LLAMA, ctx, model
from wizard.mechanisms import apply as A
from wizard.rules.helpers import uses_v1_runner

NGRAM = {"speculative_config": {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}}


@pytest.mark.parametrize("version,env,expected", [
    ("0.20", None, "v1"),   # the variable defaulted to 0 up to 0.21
    ("0.22", None, "v1"),   # V2 by default from 0.22, but n-gram blocks it there (generated v2_unsupported)
    ("0.32", "0", "v1"),    # forced
    ("0.32", None, "v2"),
])
def test_rules_read_the_routed_runner(version, env, expected):
    cfg = dict(NGRAM, **({"env": {"VLLM_USE_V2_MODEL_RUNNER": env}} if env else {}))
    c = ctx(cfg, target=model(LLAMA), gpu="H100", version=version)
    assert A.runner(c) == expected
    assert uses_v1_runner(c) is (expected == "v1")
