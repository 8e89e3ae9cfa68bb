#!/usr/bin/env bash
# Plan vs vLLM: KV-cache capacity on a real GPU (one H100/H200), with and without a drafter.
#
# Needs: one NVIDIA GPU, `pip install vllm` (CUDA build), this repository (no Hub access:
# the models are random, generated on the fly with tests/factory.py).
#
#   bash benchmarks/plan_accuracy_gpu.sh            # prints a table, exit 0 when every run logged
#   KEEP=1 bash benchmarks/plan_accuracy_gpu.sh     # keep the work dir (models + logs)
#
# Each configuration starts `python -m vllm.entrypoints.openai.api_server` with
# --gpu-memory-utilization 0.5, waits for vLLM's line
#   "GPU KV cache size: N tokens, Maximum concurrency for L tokens per request: Cx"
# (vllm/v1/core/kv_cache_utils.py update_kv_cache_capacity), stops the server, and prints it next to
# `python -m wizard plan --format json` for the same command (hardware from NVML discovery).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python}"
START_TIMEOUT="${START_TIMEOUT:-420}"     # seconds per server start
WORK="$(mktemp -d /tmp/plan_accuracy.XXXXXX)"
export PYTHONPATH="$REPO:$REPO/tests:${PYTHONPATH:-}"
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false VLLM_NO_USAGE_STATS=1

SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM -- "-$SERVER_PID" 2>/dev/null || kill -TERM "$SERVER_PID" 2>/dev/null || true
    sleep 5
    kill -KILL -- "-$SERVER_PID" 2>/dev/null || true
  fi
  if [[ -z "${KEEP:-}" ]]; then rm -rf "$WORK"; else echo "work dir kept: $WORK"; fi
}
trap cleanup EXIT INT TERM

echo "== environment"
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader || { echo "no GPU visible"; exit 2; }
"$PY" -c "import vllm, sys; print('vllm', vllm.__version__, 'python', sys.version.split()[0])"

echo "== generating random models in $WORK"
"$PY" - "$WORK" <<'EOF'
import sys
from pathlib import Path
import numpy as np
from factory import make_tiny_llama, llama_tensor_shapes, make_model_dir, write_tokenizer

work = Path(sys.argv[1])
# ~0.6 B parameters, bf16: big enough that weights and activations matter on the GPU
tcfg = dict(hidden_size=2048, num_attention_heads=16, num_key_value_heads=4, num_hidden_layers=16,
            head_dim=128, intermediate_size=5632, vocab_size=512, max_position_embeddings=8192)
make_tiny_llama(work / "target", dtype="bfloat16", **tcfg)
# EAGLE-1-shaped drafter (vllm/model_executor/models/llama_eagle.py): one decoder layer without
# input_layernorm, fc: (hidden, 2 x hidden), own embed_tokens, shares the target lm_head.
cfg = {"architectures": ["EagleLlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
       "intermediate_size": 5632, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
       "num_hidden_layers": 1, "vocab_size": 512, "max_position_embeddings": 8192, "rms_norm_eps": 1e-5,
       "rope_theta": 10000.0, "hidden_act": "silu", "tie_word_embeddings": False, "torch_dtype": "bfloat16",
       "bos_token_id": 0, "eos_token_id": 1}
shapes = llama_tensor_shapes(cfg, lm_head=False, embed=True, prefix="")
shapes.pop("layers.0.input_layernorm.weight", None)
shapes.pop("norm.weight", None)
shapes["fc.weight"] = (2048, 4096)
d = make_model_dir(work / "eagle-drafter", cfg, shapes, dtype="bfloat16")
write_tokenizer(d, 512)
print("models ready")
EOF

T="$WORK/target"
D="$WORK/eagle-drafter"
SPEC="{\"method\":\"eagle\",\"model\":\"$D\",\"num_speculative_tokens\":3}"
declare -a NAMES=("target-only" "target+eagle" "target+eagle-fp8kv")
declare -a ARGS=(
  "$T --max-model-len 4096 --gpu-memory-utilization 0.5"
  "$T --max-model-len 4096 --gpu-memory-utilization 0.5 --speculative-config $SPEC"
  "$T --max-model-len 4096 --gpu-memory-utilization 0.5 --kv-cache-dtype fp8 --speculative-config $SPEC"
)

free_port() { "$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1]); s.close()"; }

RESULTS="$WORK/results.tsv"
: > "$RESULTS"
FAILED=0
for i in "${!NAMES[@]}"; do
  name="${NAMES[$i]}"
  read -r -a argv <<< "${ARGS[$i]}"
  log="$WORK/$name.log"
  port="$(free_port)"
  echo "== $name: vllm serve ${argv[*]}"
  # plan first (no GPU needed beyond NVML discovery)
  plan_json="$WORK/$name.plan.json"
  if ! "$PY" -m wizard plan --format json --offline -- vllm serve "${argv[@]}" > "$plan_json" 2> "$WORK/$name.plan.err"; then
    echo "   plan exited non-zero (see $WORK/$name.plan.err); continuing with its JSON if any"
  fi
  setsid "$PY" -m vllm.entrypoints.openai.api_server --host 127.0.0.1 --port "$port" --model "${argv[@]}" \
      > "$log" 2>&1 &
  SERVER_PID=$!
  got=""
  for _ in $(seq 1 "$START_TIMEOUT"); do
    if got="$(grep -m1 -oE 'KV cache size: [0-9,]+ tokens, Maximum concurrency for [0-9,]+ tokens per request: [0-9.]+x' "$log")"; then
      break
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
    sleep 1
  done
  kill -TERM -- "-$SERVER_PID" 2>/dev/null || true
  for _ in $(seq 1 30); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 1; done
  kill -KILL -- "-$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
  if [[ -z "$got" ]]; then
    echo "   vLLM did not log its KV cache size; last lines:"; tail -n 25 "$log" | sed 's/^/   | /'
    FAILED=1
    printf '%s\t%s\t%s\n' "$name" "-" "-" >> "$RESULTS"
    continue
  fi
  vtok="$(sed -E 's/KV cache size: ([0-9,]+) tokens.*/\1/' <<< "$got" | tr -d ,)"
  vconc="$(sed -E 's/.*: ([0-9.]+)x$/\1/' <<< "$got")"
  echo "   vLLM: $got"
  grep -m1 -E "Available KV cache memory|Model loading took|Memory profiling takes|Graph capturing finished" "$log" | sed 's/^/   | /' || true
  printf '%s\t%s\t%s\n' "$name" "$vtok" "$vconc" >> "$RESULTS"
done

echo
echo "== plan vs vLLM (gpu_memory_utilization 0.5, max_model_len 4096)"
"$PY" - "$WORK" "$RESULTS" <<'EOF'
import json, sys
from pathlib import Path
work, results = Path(sys.argv[1]), Path(sys.argv[2])
print(f"{'config':22s} {'KV B/tok t+d':>14s} {'plan KV GiB':>11s} {'plan tokens':>12s} {'vLLM tokens':>12s} {'error':>8s}")
for line in results.read_text().splitlines():
    name, vtok, vconc = line.split("\t")
    try:
        p = json.loads((work / f"{name}.plan.json").read_text())
    except (OSError, ValueError):
        print(f"{name:22s} plan unavailable"); continue
    kv = p["kv_bytes_per_token"]
    ptok = p["kv_capacity_tokens"]
    err = "-" if vtok == "-" else f"{(ptok - int(vtok)) / int(vtok) * 100:+.1f}%"
    print(f"{name:22s} {kv['target']:>6d}+{kv['drafter']:<7d} {p['kv_cache_bytes'] / 2**30:11.2f} {ptok:12,d} "
          f"{(int(vtok) if vtok != '-' else 0):12,d} {err:>8s}")
    print(f"{'':22s} weights t/d {p['weights_bytes']['target'] / 2**30:.2f}/{p['weights_bytes']['drafter'] / 2**30:.2f} GiB, "
          f"reserve {sum(p['reserve_bytes'].values()) / 2**30:.2f} GiB {p['reserve_bytes']}")
EOF
exit "$FAILED"
