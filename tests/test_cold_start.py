"""`wizard check` starts without the launch stack (issue 21): neither wizard.launch nor httpx,
psutil, rich or gradio is imported, measured with ``python -X importtime`` in a fresh process.
(The time itself, against a bare pydantic+yaml interpreter, is benchmarks/cold_start.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK = ["check", "--gpu", "H100", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
FORBIDDEN = ("wizard.launch", "httpx", "psutil", "rich", "gradio")


def imported_modules(args: list[str]) -> set[str]:
    """The modules ``python -X importtime -m wizard ARGS`` imports (run from the repository)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "wizard", *args], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "verdict OK" in r.stdout, r.stdout
    names = set()
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "wizard.api" in names and "pydantic" in names  # the measurement saw the imports
    return names


def test_check_imports_no_launch_stack():
    names = imported_modules(CHECK)
    bad = sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in FORBIDDEN))
    assert not bad, f"`wizard check` imports {bad}"


#: what only other commands need: suggestions, the speed model, the writers and manifests, the
#: prefill/decode pair stack, NVML discovery and the Hub/folder inspectors (imported where used)
OTHER_COMMANDS = ("wizard.suggest", "wizard.plan.estimate", "wizard.io.forms", "wizard.io.scaleout", "wizard.io.pd",
                  "wizard.io.k8s", "wizard.io.multinode", "wizard.pairs", "wizard.hardware.nvml", "wizard.models.hub",
                  "wizard.models.local", "huggingface_hub", "safetensors")


def test_check_of_a_catalog_model_imports_only_what_it_uses():
    names = imported_modules(CHECK)
    bad = sorted(n for n in names if n in OTHER_COMMANDS)
    assert not bad, f"`wizard check` imports {bad}"


def test_every_cli_entry_freezes_the_startup_heap():
    """``python -m wizard`` and the ``specwizard`` console script both start through
    ``wizard.__main__.run``, which keeps the garbage collector off while the CLI's long-lived
    objects are imported and then freezes them (``gc.freeze``): without it one full collection of
    that heap cost a cold check about 55 ms (341 -> 285 ms, benchmarks/cold_start.py, 2026-12-04)."""
    import tomllib
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["specwizard"] == "wizard.__main__:run"
    code = ("import gc, sys, wizard.cli, wizard.__main__ as m\n"
            "wizard.cli.main = lambda: print(gc.isenabled(), gc.get_freeze_count() > 10000) or 0\n"
            "sys.exit(m.run())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["True", "True"]
