"""NVML discovery of the local GPUs (shared by the planner and the launcher).

    devices = discover()            # [] without a driver, without a GPU, or without pynvml
    hw = to_hardware(devices)       # catalog Hardware (count = len(devices), used_bytes set) or None

Uses ``nvidia-ml-py`` (module ``pynvml``): ``nvmlDeviceGetName``, ``nvmlDeviceGetMemoryInfo``
(total/used in bytes), ``nvmlDeviceGetCudaComputeCapability`` and
``nvmlDeviceGetComputeRunningProcesses`` / ``...GraphicsRunningProcesses`` (pid, usedGpuMemory
in bytes). :func:`discover` never raises: any NVML failure yields what was read so far, or [].
"""

from __future__ import annotations

import os
import re
from typing import Iterable

from pydantic import BaseModel, ConfigDict, Field

from wizard.hardware.catalog import lookup
from wizard.hardware.spec import Hardware

__all__ = ["GpuProcess", "GpuDevice", "discover", "to_hardware", "match_catalog_name"]


class GpuProcess(BaseModel):
    """A process holding GPU memory: pid and bytes used (None when NVML cannot tell)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # off the `check` path (issue 21)
    pid: int
    used_bytes: int | None = Field(None, description="GPU memory held by the process (bytes).")


class GpuDevice(BaseModel):
    """One GPU as NVML sees it. Memory in bytes."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # off the `check` path (issue 21)
    index: int
    name: str = Field(..., description="NVML product name, e.g. 'NVIDIA H100 80GB HBM3'.")
    memory_total_bytes: int
    memory_used_bytes: int
    compute_capability: tuple[int, int] | None = None
    uuid: str | None = None
    processes: list[GpuProcess] = Field(default_factory=list)

    @property
    def memory_free_bytes(self) -> int:
        return max(0, self.memory_total_bytes - self.memory_used_bytes)


def _s(x) -> str:
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


def discover() -> list[GpuDevice]:
    """Every NVIDIA GPU visible to NVML (CUDA_VISIBLE_DEVICES is NOT applied: NVML sees all).

    Returns [] when nvidia-ml-py is not installed, the driver is missing, or no GPU is
    present. Never raises.
    """
    try:
        import pynvml  # nvidia-ml-py
    except Exception:
        return []
    try:
        pynvml.nvmlInit()
    except Exception:
        return []
    out: list[GpuDevice] = []
    try:
        n = pynvml.nvmlDeviceGetCount()
        for i in range(n):
            try:
                h = pynvml.nvmlDeviceGetHandleByIndex(i)
                mem = pynvml.nvmlDeviceGetMemoryInfo(h)
                try:
                    cc = tuple(int(v) for v in pynvml.nvmlDeviceGetCudaComputeCapability(h))
                except Exception:
                    cc = None
                try:
                    uuid = _s(pynvml.nvmlDeviceGetUUID(h))
                except Exception:
                    uuid = None
                procs: dict[int, GpuProcess] = {}
                for fn in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
                    try:
                        for p in getattr(pynvml, fn)(h) or []:
                            used = getattr(p, "usedGpuMemory", None)
                            procs[int(p.pid)] = GpuProcess(pid=int(p.pid), used_bytes=int(used) if isinstance(used, int) else None)
                    except Exception:
                        pass
                out.append(
                    GpuDevice(
                        index=i,
                        name=_s(pynvml.nvmlDeviceGetName(h)),
                        memory_total_bytes=int(mem.total),
                        memory_used_bytes=int(mem.used),
                        compute_capability=cc if cc and len(cc) == 2 else None,
                        uuid=uuid,
                        processes=list(procs.values()),
                    )
                )
            except Exception:
                continue
    except Exception:
        pass
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
    return out


# NVML product name fragments -> catalog name (first match wins; most specific first)
_NAME_RULES: tuple[tuple[str, str], ...] = (
    (r"gb200", "GB200"),
    (r"b300|gb300", "B300"),
    (r"b200", "B200"),
    (r"h200|gh200", "H200"),
    (r"h100.*nvl|h100.*94", "H100-NVL"),
    (r"h100.*pcie", "H100-PCIe"),
    (r"h100|h800", "H100-SXM"),
    (r"a100.*(40|pcie-40)", "A100-40GB"),
    (r"a100", "A100-80GB"),
    (r"l40s", "L40S"),
    (r"\bl4\b", "L4"),
    (r"a10g|\ba10\b", "A10G"),
    (r"5090", "RTX-5090"),
    (r"4090", "RTX-4090"),
    (r"3090", "RTX-3090"),
    (r"v100.*16", "V100-16GB"),
    (r"v100", "V100-32GB"),
    (r"mi325", "MI325X"),
    (r"mi300", "MI300X"),
)


def match_catalog_name(nvml_name: str) -> str | None:
    """Catalog name for an NVML product name ('NVIDIA H100 80GB HBM3' -> 'H100-SXM'), or None."""
    low = nvml_name.lower()
    for pat, name in _NAME_RULES:
        if re.search(pat, low):
            return name
    return None


def to_hardware(devices: Iterable[GpuDevice], *, own_pids: Iterable[int] = ()) -> Hardware | None:
    """Map discovered devices to a catalog Hardware (count = number of devices).

    The catalog entry gives the static facts; ``memory_bytes`` is the smallest device's
    NVML total, ``compute_capability`` what NVML reports, and ``used_bytes`` the most memory
    held on any one device by processes other than ``own_pids`` (and this process): NVML
    ``used`` minus our own processes' usage. Returns None for an empty list or a name the
    catalog does not know (the caller may fall back to ``--gpu``).
    """
    devs = list(devices)
    if not devs:
        return None
    name = match_catalog_name(devs[0].name)
    if name is None:
        return None
    hw = lookup(name)
    mine = {os.getpid(), *own_pids}
    used = 0
    for d in devs:
        own = sum(p.used_bytes or 0 for p in d.processes if p.pid in mine)
        used = max(used, max(0, d.memory_used_bytes - own))
    update = {
        "count": len(devs),
        "memory_bytes": min(d.memory_total_bytes for d in devs),
        "used_bytes": used,
        "source": f"NVML discovery ({devs[0].name}); catalog: {hw.source}",
    }
    if devs[0].compute_capability:
        update["compute_capability"] = devs[0].compute_capability
    return hw.model_copy(update=update)
