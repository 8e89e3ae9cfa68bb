"""Hardware: GPUs (from the catalog in ``presets/hardware.yaml`` or NVML discovery) and CPU.

``Hardware`` describes one *kind* of device and how many of them. Memory is in bytes.
Compute capability is (major, minor) for CUDA; None for CPU/ROCm.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from wizard.mechanisms.attention_backend import kv_support
from wizard.vllm.versions import default_version

__all__ = ["Hardware", "HardwareError"]


class HardwareError(ValueError):
    """Unknown GPU name or malformed NAME[xN]; the message lists valid names."""


class Hardware(BaseModel):
    """A device kind and count, e.g. 2 x H100-SXM (80 GiB, SM 9.0)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(..., description="Catalog name, e.g. 'H100-SXM', 'L4', 'CPU'.")
    vendor: Literal["nvidia", "amd", "cpu"] = "nvidia"
    memory_bytes: int = Field(..., description="Memory per device (bytes).")
    compute_capability: tuple[int, int] | None = Field(None, description="CUDA SM version, e.g. (9, 0).")
    count: int = Field(1, ge=1, description="Number of devices.")
    supports_bf16: bool = True
    source: str | None = Field(None, description="Where the numbers come from.")
    isa: str | None = Field(None, description="Non-CUDA ISA: AMD gfx target ('gfx942') or CPU ISA ('avx512', 'amx', 'avx2', 'arm').")
    used_bytes: int | None = Field(
        None,
        description="Memory already in use on the busiest device by OTHER processes (bytes), from NVML "
        "discovery (wizard.hardware.nvml.to_hardware); None = unknown (catalog lookup). Read by SD503.",
    )

    # KV-cache capabilities are not stored: they are a fact of each vLLM release's attention
    # backends, derived from the generated tables (wizard.mechanisms.attention_backend.kv_support)
    # for the default release. Rules ask the backend selection for the release being checked.
    def kv_support(self, release=None) -> dict:
        """{kv_cache_dtypes, fp8_kv, fp8_noncausal_kv, release} for ``release`` (default: the
        installed or newest vLLM), derived from vLLM's backend classes."""
        return kv_support(release or default_version(), self)

    @property
    def fp8_kv(self) -> bool:
        """An attention backend of the default release serves an fp8 KV cache on this device."""
        return bool(self.kv_support()["fp8_kv"])

    @property
    def fp8_noncausal_kv(self) -> bool:
        """fp8 KV with non-causal attention (DFlash/DSpark drafters) on the default release."""
        return bool(self.kv_support()["fp8_noncausal_kv"])

    @property
    def kv_cache_dtypes(self) -> list[str]:
        """The ``--kv-cache-dtype`` values the default release serves on this device."""
        return list(self.kv_support()["kv_cache_dtypes"])

    @property
    def sm(self) -> int | None:
        """Compute capability as an int, e.g. 90 for SM 9.0."""
        if self.compute_capability is None:
            return None
        return self.compute_capability[0] * 10 + self.compute_capability[1]
