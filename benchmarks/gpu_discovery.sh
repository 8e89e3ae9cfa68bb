#!/usr/bin/env bash
# The wizard on a real NVIDIA GPU without vLLM: NVML discovery -> Hardware -> plan/check/serve --dry-run.
#
#   bash benchmarks/gpu_discovery.sh            # prints what NVML reports and what the wizard makes of it
#
# Needs: an NVIDIA GPU with its driver, python3 with the wizard's dependencies (pydantic, PyYAML,
# packaging, nvidia-ml-py, numpy, safetensors, huggingface_hub, httpx, psutil); no vLLM, no Hub.
# Checks that the discovered device maps onto the hardware catalog (name, memory, compute
# capability), that `plan` with no --gpu plans on it, and that the machine comparison of
# `serve --dry-run` sees it.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
export PYTHONPATH="$REPO:${PYTHONPATH:-}" HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
CMD=(vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config
     '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}')
rc=0
echo "== nvidia-smi"
nvidia-smi --query-gpu=name,memory.total,memory.used,compute_cap,driver_version --format=csv || rc=1
echo "== NVML discovery (wizard.hardware.nvml)"
"$PY" - <<'PYEOF' || rc=1
from wizard.hardware import nvml
devs = nvml.discover()
print("devices:", devs)
hw = nvml.to_hardware(devs)
print("hardware:", hw)
assert devs and hw is not None, "NVML found no GPU"
print("catalog name:", hw.name, "| memory GiB:", round(hw.memory_bytes / 2**30, 1), "| cc:", hw.compute_capability)
PYEOF
echo "== plan with no --gpu (discovered hardware)"
"$PY" -m wizard plan -- "${CMD[@]}" || rc=1
echo "== check --gpu H200 vs the discovered device"
"$PY" -m wizard check --gpu H200 -- "${CMD[@]}"
echo "== serve --dry-run (machine comparison; no vLLM here)"
"$PY" -m wizard serve --dry-run --gpu H100 -- "${CMD[@]}" --port 8000
echo "== cold start (side by side)"
"$PY" benchmarks/cold_start.py --repeat 5 || rc=1
exit $rc
