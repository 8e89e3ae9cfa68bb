"""The hardware catalog: ``presets/hardware.yaml`` -> :class:`~wizard.hardware.Hardware`.

    lookup("H100x8")   -> Hardware(name='H100-SXM', count=8, memory_bytes=85_520_809_984, ...)
    lookup("l4")       -> Hardware(name='L4', compute_capability=(8, 9), ...)
    lookup("cpu")      -> Hardware(name='CPU', vendor='cpu', isa='avx512', ...)
    catalog()          -> every catalog device (count 1)

Names are case-insensitive; ``-``, ``_`` and spaces are ignored when matching, and each device
has aliases (``h100`` = ``H100-SXM``, ``a100`` = ``A100-80GB``...). A count is written
``NAMExN`` (also ``N x NAME``, ``NAME*N``, ``NAME:N``).

The facts and their sources (datasheets, nvidia-smi totals) are in the YAML file, next to each
entry. What a device's attention backends accept for the KV cache is not catalogued: it depends
on the release and is derived by backend selection over the release's generated
``backends.json`` (``ctx.view.device_kv``, :func:`wizard.mechanisms.attention_backend.kv_support`)
from the device's vendor, compute capability and ISA.
The CPU entry is completed from the host at lookup time: memory = host RAM (bytes) and
``isa`` from the CPU flags (vLLM's CPU attention needs AVX-512 or AMX for fp8 KV:
``vllm/v1/attention/backends/cpu_attn.py::_get_attn_isa``).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

from wizard.datacache import cached
from wizard.hardware.spec import Hardware, HardwareError
from wizard.shipped import shipped_path

__all__ = ["lookup", "catalog", "catalog_path", "names", "host_cpu_isa", "HardwareError", "MAX_GPU_COUNT"]

#: the most devices a hardware spec may name (``--gpu NAMExN``, the UI's GPU count): beyond the
#: largest clusters a single vLLM deployment spans, so a larger N is a typo
MAX_GPU_COUNT = 4096

_PRESETS = shipped_path("presets", "hardware.yaml")  # package data in a wheel (wizard/shipped.py)


def catalog_path() -> Path:
    """Path of the YAML catalog (``presets/hardware.yaml``)."""
    return _PRESETS


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.strip().lower())


@functools.lru_cache(maxsize=1)
def _load() -> tuple[dict[str, Any], ...]:
    """Raw YAML entries (cached; across processes by :mod:`wizard.datacache` while the file is
    unchanged). Raises HardwareError when the file is missing/malformed."""
    return cached("hardware", sources=[_PRESETS], code=[__file__], build=_build)


def _build() -> tuple[dict[str, Any], ...]:
    import yaml

    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster (on every cold start)
        data = yaml.load(_PRESETS.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 - a safe loader
    except (OSError, yaml.YAMLError) as err:
        raise HardwareError(f"hardware catalog {_PRESETS} unreadable: {err}") from None
    devices = (data or {}).get("devices")
    if not isinstance(devices, list) or not devices:
        raise HardwareError(f"hardware catalog {_PRESETS} has no 'devices' list")
    return tuple(devices)


@functools.lru_cache(maxsize=1)
def _index() -> dict[str, dict[str, Any]]:
    idx: dict[str, dict[str, Any]] = {}
    for entry in _load():
        for n in [entry["name"], *(entry.get("aliases") or [])]:
            idx[_norm(str(n))] = entry
    return idx


@functools.lru_cache(maxsize=1)
def host_cpu_isa() -> str:
    """The host's best CPU ISA for vLLM's CPU attention: 'amx', 'avx512', 'avx2', 'arm', or
    'unknown' (read from /proc/cpuinfo flags; never raises)."""
    import platform

    machine = platform.machine().lower()
    if machine in ("aarch64", "arm64"):
        return "arm"
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown"
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[-1].split())
            break
    if "amx_tile" in flags:
        return "amx"
    if "avx512f" in flags:
        return "avx512"
    if "avx2" in flags:
        return "avx2"
    return machine or "unknown"


def _host_memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 0


def _to_hardware(entry: dict[str, Any], count: int) -> Hardware:
    vendor = entry.get("vendor", "nvidia")
    cc = entry.get("compute_capability")
    isa = entry.get("isa")
    mem = entry.get("memory_bytes")
    if vendor == "cpu":
        isa = host_cpu_isa() if isa in (None, "host") else isa
        if mem is None:
            mem = _host_memory_bytes()
    return Hardware(
        name=entry["name"],
        vendor=vendor,
        memory_bytes=int(mem or 0),
        compute_capability=tuple(cc) if cc else None,
        count=count,
        supports_bf16=bool(entry.get("supports_bf16", True)),
        source=f"{entry.get('source', '')} (memory: {entry.get('memory_source', 'catalog')})".strip(),
        isa=isa,
        memory_bandwidth_bytes_per_s=_positive(entry.get("memory_bandwidth_bytes_per_s")),
        dense_flops={str(k): float(v) for k, v in (entry.get("dense_flops") or {}).items() if _positive(v)},
        perf_source=entry.get("perf_source"),
    )


def _positive(v: Any) -> float | None:
    """A positive finite number from the YAML, else None (unknown)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < float("inf"):
        return None
    return float(v)


def names() -> list[str]:
    """Canonical catalog names, in file order."""
    return [e["name"] for e in _load()]


def catalog() -> list[Hardware]:
    """Every catalog device as a Hardware with count 1."""
    return [_to_hardware(e, 1) for e in _load()]


_COUNT_PATTERNS = (
    re.compile(r"^(?P<name>.+?)\s*[x×*:]\s*(?P<n>\d+)$", re.IGNORECASE),
    re.compile(r"^(?P<n>\d+)\s*[x×*]\s*(?P<name>.+)$", re.IGNORECASE),
)


def lookup(spec: str) -> Hardware:
    """Parse ``NAME[xN]`` against the catalog (case-insensitive, aliases accepted).

    Args:
        spec: e.g. 'H100x8', 'h100-sxm', 'L4', 'A100-80GBx2', '2xH200', 'cpu'.

    Returns:
        Hardware with ``count`` = N (default 1), memory per device in bytes.

    Raises:
        HardwareError: empty/unknown name or a count < 1; the message lists the catalog names.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise HardwareError(f"--gpu: empty hardware name; known: {', '.join(names())}")
    text = spec.strip()
    idx = _index()
    if _norm(text) in idx:
        return _to_hardware(idx[_norm(text)], 1)
    for pat in _COUNT_PATTERNS:
        m = pat.match(text)
        if m and _norm(m.group("name")) in idx:
            n = int(m.group("n"))
            if n < 1:
                raise HardwareError(f"--gpu {spec!r}: device count must be >= 1")
            if n > MAX_GPU_COUNT:
                raise HardwareError(f"--gpu {spec[:60]!r}: device count {n:,} is more than {MAX_GPU_COUNT:,} (the most "
                                    "devices the wizard models); give the GPUs one deployment uses")
            return _to_hardware(idx[_norm(m.group("name"))], n)
    raise HardwareError(
        f"--gpu {spec!r}: unknown hardware. Use NAME or NAMExCOUNT with NAME one of: {', '.join(names())}"
    )


def parse_gpu_spec(spec: str) -> Hardware:
    """Parse 'H100', 'H100x8', 'L4x2', 'cpu' against the hardware catalog (:func:`lookup`).

    Raises:
        HardwareError: unknown name or bad count (the message lists catalog names).
    """
    return lookup(spec)
