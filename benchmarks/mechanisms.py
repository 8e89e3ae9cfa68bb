"""Latency of the mechanism models (they run inside the full check, budget p99 < 20 ms).

    python benchmarks/mechanisms.py

Prints, per mechanism, the first (cold: table load) and p50/p99 warm call times in ms, and
checks each module's mirror against the release samples (agreement in %).
"""

from __future__ import annotations

import gzip
import json
import time

import _common  # noqa: F401  (puts the repo on sys.path)
from _common import ROOT, pct

from wizard.hardware.catalog import lookup
from wizard.models.config_json import info_from_config
from wizard.mechanisms.attention_backend import AttentionLayout, select_backend
from wizard.mechanisms.cudagraph import capture_plan
from wizard.mechanisms.drafter_context import drafter_context
from wizard.mechanisms.kv_groups import LayerKV, kv_cache_groups
from wizard.mechanisms.mamba_state import hybrid_alignment, state_page
from wizard.mechanisms.method_support import feature_support, route
from wizard.mechanisms.quantized_drafter import check_quantized_drafter

H100 = lookup("H100")
QWEN3_NEXT = info_from_config({"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 2048,
                               "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2,
                               "head_dim": 256, "full_attention_interval": 4, "linear_num_key_heads": 16,
                               "linear_key_head_dim": 128, "linear_num_value_heads": 32, "linear_value_head_dim": 128,
                               "linear_conv_kernel_dim": 4, "torch_dtype": "bfloat16"}, id="qwen3-next")
CALLS = {
    "attention_backend": lambda: select_backend("0.32", H100, AttentionLayout(128, kv_cache_dtype="fp8", use_non_causal=True)),
    "kv_groups": lambda: kv_cache_groups("0.32", [LayerKV(f"model.layers.{i}.attn", "sliding" if i % 2 else "full",
                                                          num_kv_heads=8, head_size=64, sliding_window=128)
                                                  for i in range(36)] + [LayerKV("draft.layers.0.attn", "full", "drafter", 8, 64)]),
    "mamba_state": lambda: hybrid_alignment(2048, state_page(QWEN3_NEXT, "0.32", num_speculative_tokens=3).page_bytes),
    "cudagraph": lambda: capture_plan("0.32", max_num_seqs=256, num_speculative_tokens=7),
    "drafter_context": lambda: drafter_context("0.32", "draft_model", drafter_len=4096, served_len=32768),
    "method_support": lambda: (route("0.32", "eagle3"), feature_support("0.32", "lora")),
    "quantized_drafter": lambda: check_quantized_drafter("0.33", "mtp", target_quantization="fp8",
                                                         draft_lm_head_quantization="fp8", hardware=H100),
}


def main() -> None:
    print(f"{'mechanism':20} {'cold ms':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for name, fn in CALLS.items():
        t0 = time.perf_counter()
        fn()
        cold = (time.perf_counter() - t0) * 1e3
        xs = []
        for _ in range(300):
            t = time.perf_counter()
            fn()
            xs.append((time.perf_counter() - t) * 1e3)
        print(f"{name:20} {cold:8.2f} {pct(xs, 50):8.3f} {pct(xs, 99):8.3f}")
    # agreement with the releases' own answers
    samples = ROOT / "tests" / "data" / "vllm_samples"
    for rel in sorted(p.name for p in samples.iterdir() if p.is_dir()):
        f = samples / rel / "backends.json.gz"
        if not f.exists():
            continue
        xs = json.loads(gzip.decompress(f.read_bytes()))["samples"]
        same = sum(
            (select_backend(rel, None, AttentionLayout(num_heads=x["num_heads"], **x["config"]), x["pinned"],
                            platform=x["profile"]).backend == x.get("backend"))
            for x in xs)
        print(f"backend selection {rel}: {same}/{len(xs)} samples agree with vLLM {rel}'s own selection")


if __name__ == "__main__":
    main()
