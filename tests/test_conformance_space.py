"""The broad conformance corpus (tests/conformance_space.py): size, determinism, coverage.

No vLLM here: the corpus only has to be loadable by the wizard, deterministic for (seed, release),
and reach the option families and boundary values issue 12 lists. benchmarks/conformance.py runs
it against each release's own vLLM.
"""

from __future__ import annotations

import collections

import pytest

from wizard.config import config_from_dict


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from conformance_corpus import build_models
    from conformance_space import catalog_models

    root = tmp_path_factory.mktemp("space")
    m = build_models(root / "tiny")
    m.update(catalog_models(root / "catalog"))
    return m


@pytest.mark.parametrize("release", ["0.28", "0.32", "0.33"])
def test_thousand_deterministic_loadable_configs(models, release):
    from conformance_space import generate_space

    a = list(generate_space(models, 1000, seed=0, release=release))
    assert len(a) == 1000 and a == list(generate_space(models, 1000, seed=0, release=release))
    assert a != list(generate_space(models, 1000, seed=1, release=release))
    for _, d in a:
        config_from_dict(d)  # never raises: ill-typed values go to invalid_values
    dims = collections.Counter(d for cid, _ in a for d in cid.split("-", 3)[3].split("+"))
    assert set(dims) == {"parallel", "max_model_len", "scheduler", "dtype", "quantization", "kv_cache_dtype",
                         "block_size", "memory", "lora", "logprobs", "structured_outputs", "compilation", "misc", "spec"}
    assert min(dims.values()) >= 25, dims
    targets = collections.Counter(d["model"].rsplit("/", 1)[1] for _, d in a)
    assert {"llama31-8b", "qwen3-30b-a3b", "deepseek-v3", "gpt-oss-120b", "target"} <= set(targets)


def test_boundaries_are_reached(models):
    from conformance_space import generate_space, model_facts

    rows = [d for _, d in generate_space(models, 1000, seed=0, release="0.32")]
    facts = {p: model_facts(p) for p in {d["model"] for d in rows}}
    tp_nondiv = [d for d in rows if isinstance(d.get("tensor_parallel_size"), int) and d["tensor_parallel_size"] > 0
                 and facts[d["model"]]["heads"] % d["tensor_parallel_size"]]
    over_limit = [d for d in rows if isinstance(d.get("max_model_len"), int) and d["max_model_len"] > facts[d["model"]]["max_pos"]]
    assert len(tp_nondiv) >= 20 and len(over_limit) >= 20
    assert any(d.get("max_model_len") in (0, -1) for d in rows)
    assert any(d.get("enable_chunked_prefill") is False for d in rows)
    assert any(d.get("max_num_seqs", 0) > d.get("max_num_batched_tokens", 10 ** 9) for d in rows)
    assert any(d.get("dtype") == "float8" for d in rows) and any(d.get("quantization") == "nope" for d in rows)
    assert any(d.get("max_logprobs") == -5 for d in rows) and any("hf_overrides" in d for d in rows)
    assert any((d.get("env") or {}).get("VLLM_ALLOW_LONG_MAX_MODEL_LEN") for d in rows)
    assert any(d.get("max_lora_rank") == 24 for d in rows) and any(d.get("block_size") == 0 for d in rows)
