"""Hardware: GPUs (from the catalog in ``presets/hardware.yaml`` or NVML discovery) and CPU.

``Hardware`` describes one *kind* of device and how many of them. Memory is in bytes.
Compute capability is (major, minor) for CUDA; None for CPU/ROCm.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Hardware", "HardwareError"]


class HardwareError(ValueError):
    """Unknown GPU name or malformed NAME[xN]; the message lists valid names."""


class Hardware(BaseModel):
    """A device kind and count, e.g. 2 x H100-SXM (80 GiB, SM 9.0)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str = Field(..., description="Catalog name, e.g. 'H100-SXM', 'L4', 'CPU'.")
    vendor: Literal["nvidia", "amd", "cpu"] = "nvidia"
    memory_bytes: int = Field(..., description="Memory per device (bytes).")
    compute_capability: tuple[int, int] | None = Field(None, description="CUDA SM version, e.g. (9, 0).")
    count: int = Field(1, ge=1, description="Number of devices.")
    supports_bf16: bool = True
    source: str | None = Field(None, description="Where the numbers come from.")
    isa: str | None = Field(None, description="Non-CUDA ISA: AMD gfx target ('gfx942') or CPU ISA ('avx512', 'amx', 'avx2', 'arm').")
    memory_bandwidth_bytes_per_s: float | None = Field(
        None, description="Peak memory bandwidth per device (bytes/s, datasheet); None = unknown (CPU: host-dependent).")
    dense_flops: dict[str, float] = Field(
        default_factory=dict,
        description="Peak dense tensor FLOP/s per device by operand type ('bf16', 'fp16', 'fp8'); no sparsity.")
    perf_source: str | None = Field(None, description="Where the bandwidth and FLOP/s figures come from.")
    used_bytes: int | None = Field(
        None,
        description="Memory already in use on the busiest device by OTHER processes (bytes), from NVML "
        "discovery (wizard.hardware.nvml.to_hardware); None = unknown (catalog lookup). Read by SD503.",
    )

    @property
    def sm(self) -> int | None:
        """Compute capability as an int, e.g. 90 for SM 9.0."""
        if self.compute_capability is None:
            return None
        return self.compute_capability[0] * 10 + self.compute_capability[1]
