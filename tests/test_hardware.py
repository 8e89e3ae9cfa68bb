"""Hardware catalog (presets/hardware.yaml) and NVML discovery (wizard/hardware/nvml.py)."""

from __future__ import annotations

import sys
import types

import pytest

from wizard.hardware import nvml as gpu
from wizard.hardware.spec import Hardware, HardwareError
from wizard.hardware.catalog import parse_gpu_spec
from wizard.hardware.catalog import catalog, host_cpu_isa, lookup, names

REQUIRED = [
    "H100-SXM", "H100-PCIe", "H100-NVL", "H200", "B200", "GB200", "B300", "A100-40GB", "A100-80GB",
    "L40S", "L4", "A10G", "RTX-4090", "RTX-5090", "RTX-3090", "V100-32GB", "MI300X", "MI325X", "CPU",
]


def test_catalog_has_every_required_device_with_a_source():
    got = {h.name: h for h in catalog()}
    for n in REQUIRED:
        assert n in got, n
        h = got[n]
        assert h.memory_bytes > 0 and h.source and "http" in h.source or h.vendor == "cpu"
        assert "auto" in _kv(n)["kv_cache_dtypes"]


@pytest.mark.parametrize(
    "spec, name, count",
    [("H100x8", "H100-SXM", 8), ("h100-sxm", "H100-SXM", 1), ("L4", "L4", 1), ("l4x2", "L4", 2),
     ("2xH200", "H200", 2), ("A100", "A100-80GB", 1), ("a100-40gb", "A100-40GB", 1), ("RTX4090x2", "RTX-4090", 2),
     ("rtx-5090", "RTX-5090", 1), ("cpu", "CPU", 1), ("MI300X*8", "MI300X", 8), ("B300:4", "B300", 4)],
)
def test_lookup_names_aliases_counts(spec, name, count):
    h = lookup(spec)
    assert (h.name, h.count) == (name, count)
    assert parse_gpu_spec(spec) == h


def test_lookup_unknown_lists_names():
    with pytest.raises(HardwareError) as e:
        lookup("TPU-v5")
    msg = str(e.value)
    assert "TPU-v5" in msg and "H100-SXM" in msg and "L4" in msg
    with pytest.raises(HardwareError):
        lookup("")
    with pytest.raises(HardwareError):
        lookup("H100x0")
    assert isinstance(HardwareError("x"), ValueError)


def test_memory_and_capability_facts():
    # nvidia-smi totals in MiB x 2**20
    assert lookup("H100").memory_bytes == 81559 * 2**20
    assert lookup("H200").memory_bytes == 143771 * 2**20
    assert lookup("A100-80GB").memory_bytes == 81920 * 2**20
    assert lookup("L4").memory_bytes == 23034 * 2**20
    assert lookup("H100").compute_capability == (9, 0) and lookup("H100").sm == 90
    assert lookup("B200").compute_capability == (10, 0)
    assert lookup("B300").compute_capability == (10, 3)
    assert lookup("L40S").sm == 89 and lookup("A10G").sm == 86 and lookup("RTX-5090").sm == 120
    assert lookup("MI300X").vendor == "amd" and lookup("MI300X").isa == "gfx942"


def _kv(name: str, release: str = "0.32"):
    from wizard.mechanisms.attention_backend import kv_support
    return kv_support(release, lookup(name))


def test_kv_capabilities_follow_vllm_backends():
    """The catalog holds no KV column: the backends of each release decide (backends.json)."""
    v100 = _kv("V100")
    assert lookup("V100").supports_bf16 is False and v100["fp8_kv"] is False and "fp8" not in v100["kv_cache_dtypes"]
    for n in ("A100", "A10G", "L4", "H100", "B200", "RTX-5090"):
        h = _kv(n)
        assert h["fp8_kv"] and h["fp8_noncausal_kv"] and "fp8_e4m3" in h["kv_cache_dtypes"], n
    assert "nvfp4" in _kv("B200")["kv_cache_dtypes"] and "nvfp4" not in _kv("H100", "0.28")["kv_cache_dtypes"]
    assert "fp8_ds_mla" in _kv("H200")["kv_cache_dtypes"] and "fp8_ds_mla" not in _kv("A100")["kv_cache_dtypes"]
    # vLLM 0.32 vllm/v1/attention/backends/rocm_attn.py: ROCM_ATTN supports_non_causal() and fp8 KV
    # (the hand-typed catalog column said no, so SD200 refused DFlash + fp8 KV on an MI300X)
    assert _kv("MI300X")["fp8_noncausal_kv"] is True
    # issue 21: every catalog device agrees with its release's backend selection, none hand-typed
    for h in catalog():
        assert not {"fp8_kv", "fp8_noncausal_kv", "kv_cache_dtypes"} & set(h.model_dump()), h.name


def test_cpu_entry_follows_host_isa():
    cpu = lookup("cpu")
    assert cpu.vendor == "cpu" and cpu.memory_bytes > 0 and cpu.compute_capability is None
    isa = host_cpu_isa()
    assert cpu.isa == isa
    kv = _kv("cpu")
    assert kv["fp8_kv"] == (isa in ("avx512", "amx"))
    assert ("fp8" in kv["kv_cache_dtypes"]) == kv["fp8_kv"]


def test_names_in_file_order():
    assert names()[0] == "H100-SXM" and names()[-1] == "CPU"


# ---- NVML discovery --------------------------------------------------------------------------

def test_discover_without_gpu_returns_empty_list():
    assert gpu.discover() == [] or all(isinstance(d, gpu.GpuDevice) for d in gpu.discover())


def test_discover_survives_a_failing_nvml(monkeypatch):
    fake = types.ModuleType("pynvml")

    def boom(*a):
        raise RuntimeError("NVML Shared Library Not Found")

    fake.nvmlInit = boom
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert gpu.discover() == []


def test_discover_reads_fake_nvml(monkeypatch):
    fake = types.ModuleType("pynvml")
    Mem = types.SimpleNamespace
    fake.nvmlInit = lambda: None
    fake.nvmlShutdown = lambda: None
    fake.nvmlDeviceGetCount = lambda: 2
    fake.nvmlDeviceGetHandleByIndex = lambda i: i
    fake.nvmlDeviceGetName = lambda h: b"NVIDIA H100 80GB HBM3"
    fake.nvmlDeviceGetUUID = lambda h: f"GPU-{h}"
    fake.nvmlDeviceGetMemoryInfo = lambda h: Mem(total=81559 * 2**20, used=(10 if h == 0 else 30) * 2**30, free=0)
    fake.nvmlDeviceGetCudaComputeCapability = lambda h: (9, 0)
    fake.nvmlDeviceGetComputeRunningProcesses = lambda h: [Mem(pid=4242, usedGpuMemory=(10 if h == 0 else 30) * 2**30)]
    fake.nvmlDeviceGetGraphicsRunningProcesses = lambda h: (_ for _ in ()).throw(RuntimeError("not supported"))
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    devs = gpu.discover()
    assert [d.index for d in devs] == [0, 1]
    assert devs[1].memory_used_bytes == 30 * 2**30 and devs[1].processes[0].pid == 4242
    assert devs[0].compute_capability == (9, 0) and devs[0].memory_free_bytes == 81559 * 2**20 - 10 * 2**30
    hw = gpu.to_hardware(devs)
    assert isinstance(hw, Hardware)
    assert (hw.name, hw.count, hw.used_bytes) == ("H100-SXM", 2, 30 * 2**30)
    # our own process's memory does not count as "used by others"
    assert gpu.to_hardware(devs, own_pids=[4242]).used_bytes == 0


@pytest.mark.parametrize(
    "nvml, name",
    [("NVIDIA H100 80GB HBM3", "H100-SXM"), ("NVIDIA H100 PCIe", "H100-PCIe"), ("NVIDIA H100 NVL", "H100-NVL"),
     ("NVIDIA H200", "H200"), ("NVIDIA B200", "B200"), ("NVIDIA GB200", "GB200"), ("NVIDIA L4", "L4"),
     ("NVIDIA L40S", "L40S"), ("NVIDIA A10G", "A10G"), ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
     ("NVIDIA A100-SXM4-80GB", "A100-80GB"), ("NVIDIA GeForce RTX 4090", "RTX-4090"),
     ("Tesla V100-SXM2-16GB", "V100-16GB"), ("Tesla T4", None)],
)
def test_nvml_names_map_to_catalog(nvml, name):
    assert gpu.match_catalog_name(nvml) == name


def test_to_hardware_empty_or_unknown():
    assert gpu.to_hardware([]) is None
    d = gpu.GpuDevice(index=0, name="Tesla T4", memory_total_bytes=16 * 2**30, memory_used_bytes=0)
    assert gpu.to_hardware([d]) is None


def test_gpu_count_bound_is_one_fact_for_cli_and_ui():
    """--gpu H100x99999 was planned (target weights 0.00 GiB, 'fits') while the UI refused a GPU
    count above 4096: both read wizard.hardware.catalog.MAX_GPU_COUNT."""
    from wizard.hardware.catalog import MAX_GPU_COUNT, HardwareError, lookup
    from wizard.ui.state import _gpu_count

    assert lookup(f"H100x{MAX_GPU_COUNT}").count == MAX_GPU_COUNT
    with pytest.raises(HardwareError, match="more than 4,096"):
        lookup(f"H100x{MAX_GPU_COUNT + 1}")
    assert _gpu_count(str(MAX_GPU_COUNT)) == MAX_GPU_COUNT and _gpu_count(str(MAX_GPU_COUNT + 1)) is None
