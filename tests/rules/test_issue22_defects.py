"""The two defects of issue #22: SD722 on a hybrid target (ZeroDivisionError) and SD750 judging
0.12 with 0.20's drafter-context facts."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from factory import make_model_dir
from wizard import api
from wizard.mechanisms import kv_groups as KG
from wizard.mechanisms.drafter_context import drafter_context
from wizard.models.local import inspect_folder
from wizard.rules.registry import get_rule
from wizard.vllm.versions import parse_version

SD720 = yaml.safe_load((Path(__file__).parent / "SD720.yml").read_text(encoding="utf-8"))["context"]["models"]


def _hybrid(tmp_path, groups: int = 3):
    # the SD720 Qwen3.5-style hybrid with `groups` x (3 Gated-DeltaNet + 1 full-attention) layers
    cfg = json.loads(json.dumps(SD720["./sd720-qwen35-hybrid"]["config"]))
    cfg["text_config"]["num_hidden_layers"] = 4 * groups
    cfg["text_config"]["layer_types"] = sum([["linear_attention"] * 3 + ["full_attention"] for _ in range(groups)], [])
    return make_model_dir(tmp_path / "hybrid", cfg)


def test_sd722_hybrid_target_with_dflash_on_rocm_has_no_internal_error(tmp_path):
    target = _hybrid(tmp_path)
    drafter = make_model_dir(tmp_path / "dflash", SD720["./sd720-dflash-kv4"]["config"])
    cmd = (f"vllm serve {target} --speculative-config "
           f"'{{\"method\":\"dflash\",\"model\":\"{drafter}\",\"num_speculative_tokens\":8}}'")
    for v in ("0.20", "0.24", "0.32"):
        rep = api.check(api.load(command=cmd), vllm_version=v, gpu="MI300X", allow_hub=False)
        assert not [f for f in rep.findings if "internal error" in f.title], v
        ctx = api.resolve(api.load(command=cmd), vllm_version=v, gpu="MI300X", allow_hub=False)
        found = list(get_rule("SD722").check(ctx))  # called directly: an exception fails the test
        assert found and "padding layer" in found[0].message, v


def test_unsized_mamba_layers_are_an_error_result_not_a_zero_division(tmp_path):
    t = inspect_folder(_hybrid(tmp_path))
    layers = KG.layers_for(t, "target", kv_cache_dtype="auto", tensor_parallel_size=1)
    r = KG.kv_cache_groups(parse_version("0.24.0"), layers, block_size=16)
    assert r.error and "NotImplementedError" in r.error


LLAMA_EAGLE3 = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
                "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}'")


def test_sd750_at_0_12_uses_0_12s_own_v1_length_gate():
    # 0.12's gpu_model_runner.py (sample_tokens) keeps effective_drafter_max_model_len =
    # draft_model_config.max_model_len and skips drafting for the whole batch past it: speculation
    # off for long batches (warning), not the crash the 0.20 facts (no gate found) predicted
    rep = api.check(api.load(command=LLAMA_EAGLE3), vllm_version="0.12.0", gpu="H100", allow_hub=False)
    sd750 = [f for f in rep.findings if f.rule == "SD750"]
    assert sd750 and all(f.severity.name == "WARNING" for f in sd750)
    msg = sd750[0].message
    assert "0.20" not in msg and "0.12" in msg and "skipped" in msg
    assert rep.verdict.lower() != "error"


def test_drafter_context_facts_are_per_release(tmp_path):
    d = inspect_folder(make_model_dir(tmp_path / "d", {
        "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 1, "vocab_size": 128256,
        "max_position_embeddings": 2048, "torch_dtype": "float16"}))
    old = drafter_context("0.10.0", "eagle3", drafter=d, served_len=131072, runner="v1")
    assert old.outcome == "crash_on_long_prompts" and old.release.startswith("0.10")
    assert "spec_decode/eagle.py" in old.source  # no llm_base_proposer.py before 0.20
    for rel in ("0.11.0", "0.12.0", "0.20.0", "0.23.0"):
        r = drafter_context(rel, "eagle3", drafter=d, served_len=131072, runner="v1")
        assert r.outcome == "speculation_skipped" and r.release == rel, (rel, r)
    assert drafter_context("0.27.0", "eagle3", drafter=d, served_len=131072, runner="v1").outcome == "raised"
    assert drafter_context("0.28", "eagle3", drafter=d, served_len=131072, runner="v1").outcome == "raised"
