"""api.explain: the mechanisms' answers for one configuration as plain JSON."""

from __future__ import annotations

import json

from wizard import api
from wizard.io.argv import parse_command

EAGLE3 = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 32 --speculative-config "
          "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":16}'")


def test_explain_names_backends_runner_graphs_and_drafter_context():
    e = api.explain(parse_command(EAGLE3), vllm_version="0.32", gpu="H100", allow_hub=False)
    json.dumps(e)  # plain JSON
    assert e["speculating"] and e["method"] == "eagle3" and e["k"] == 16
    assert e["runner"]["runner"] == "v2" and e["runner"]["error"] is None
    assert e["attention"]["target"]["backend"] == "FLASH_ATTN" and e["attention"]["drafter"]["backend"] == "FLASH_ATTN"
    assert e["kv_cache"]["num_groups"] == 1
    cg = e["cuda_graphs"]  # 32 requests x 17 tokens = 544 > vLLM's 512-token ceiling
    assert cg["decode_query_len"] == 17 and cg["largest_graph_tokens"] == 512 and cg["eager_from_requests"] == 31
    assert e["drafter_context"]["outcome"] == "raised"
    assert e["unknown"] == []


def test_explain_without_hardware_says_what_it_could_not_predict():
    e = api.explain(parse_command(EAGLE3), vllm_version="0.32", allow_hub=False)
    assert e["attention"]["target"]["backend"] is None and "give --gpu" in e["attention"]["target"]["why"]
    assert any("hardware" in u for u in e["unknown"])


def test_explain_without_speculation():
    e = api.explain(parse_command("vllm serve meta-llama/Llama-3.1-8B-Instruct"), vllm_version="0.32", gpu="H100",
                    allow_hub=False)
    assert not e["speculating"] and e["runner"] is None and "drafter" not in e["attention"]
