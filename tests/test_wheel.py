"""The built wheel works on its own (issue 21 item 5): build it, install it into a fresh venv that
cannot see this checkout, and run `check`, `plan`, `models`, `presets`, `rules` and the UI's start
from another folder.

The venv is made with ``python -m venv --without-pip``; a ``.pth`` line (a plain path: no ``.pth``
file of that folder runs, so this checkout's editable-install finder stays out) lets it reach the
test interpreter's site-packages for the dependencies, and the wheel is installed into it with
``pip --python V/bin/python install --no-deps``. Offline: the model comes from the bundled catalog
(``presets/models``, shipped under ``wizard/_shipped``, :mod:`wizard.shipped`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3 = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
_SKIP = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".pytest_cache",
                               ".hypothesis", "artifacts", "node_modules", ".gl", ".whl", "notebooks")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv python, a work folder outside the checkout, the site-packages the wheel went to)."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    shutil.copytree(ROOT, src, ignore=_SKIP)  # build from a copy: the checkout gets no build/ or egg-info
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                        str(base / "dist"), str(src)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    (whl,) = (base / "dist").glob("specwizard-*.whl")
    names = set(zipfile.ZipFile(whl).namelist())
    for need in ("wizard/_shipped/presets/hardware.yaml", "wizard/_shipped/presets/models/targets.yaml",
                 "wizard/_shipped/presets/deployments/llama31-8b-eagle3-h100.yaml",
                 "wizard/_shipped/tests/rules/SD001.yml", "wizard/data/vllm/0.32/backends.json"):
        assert need in names, f"{need} missing from {whl.name}"
    assert not any(n.startswith(("presets/", "tests/")) for n in names)  # nothing outside the package

    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "_specwizard_test_deps.pth").write_text("".join(f"{d}\n" for d in sorted(deps)))
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(whl)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    work = base / "elsewhere"
    work.mkdir()
    return py, work, site


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", VLLM_CPU_KVCACHE_SPACE="1")
    return env


def _wizard(installed, *args: str, ok=(0,)) -> subprocess.CompletedProcess:
    py, work, _site = installed
    r = subprocess.run([str(py), "-m", "wizard", *args], capture_output=True, text=True, cwd=work, env=_env(), timeout=300)
    assert r.returncode in ok, f"wizard {' '.join(args)}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    return r


def test_the_installed_package_is_the_wheel_not_the_checkout(installed):
    py, work, site = installed
    r = subprocess.run([str(py), "-c", "import wizard, wizard.shipped as s; print(wizard.__file__); print(s.shipped_path('presets'))"],
                       capture_output=True, text=True, cwd=work, env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    pkg, presets = r.stdout.split()
    assert Path(pkg).is_relative_to(site) and not Path(pkg).is_relative_to(ROOT)
    assert Path(presets) == site / "wizard" / "_shipped" / "presets"


def test_check_from_another_folder(installed):
    r = _wizard(installed, "check", "--gpu", "H100", "--", "vllm", "serve", LLAMA)
    assert "verdict OK (0 error(s), 0 warning(s))" in r.stdout and f"vllm serve {LLAMA}" in r.stdout
    spec = '{"method":"eagle3","model":"%s","num_speculative_tokens":3}' % EAGLE3
    data = json.loads(_wizard(installed, "check", "--format", "json", "--vllm-version", "0.32.0", "--gpu", "H100", "--",
                              "vllm", "serve", LLAMA, "--speculative-config", spec).stdout)
    assert data["verdict"] == "ok" and data["vllm_version"] == "0.32.0" and EAGLE3 in data["command"]
    bad = json.loads(_wizard(installed, "check", "--format", "json", "--gpu", "H100", "--", "vllm", "serve", LLAMA,
                             "--speculative-config", '{"method":"eagle3","num_speculative_tokens":0}', ok=(1,)).stdout)
    assert bad["verdict"] == "error" and bad["findings"]


def test_plan_from_another_folder(installed):
    data = json.loads(_wizard(installed, "plan", "--format", "json", "--gpu", "H100", "--", "vllm", "serve", LLAMA).stdout)
    assert data["fits"] is True and data["hardware"].startswith("H100")
    assert data["kv_capacity_tokens"] > 100_000 and data["weights_bytes"]["target"] == 16060522496


def test_models_presets_and_rules_from_another_folder(installed):
    models = json.loads(_wizard(installed, "models", "--format", "json").stdout)
    ids = {m["id"]: m["role"] for m in models}
    assert ids[LLAMA] == "target" and ids[EAGLE3] == "drafter"
    presets = {p["name"]: p for p in json.loads(_wizard(installed, "presets", "--format", "json").stdout)}
    assert presets["llama31-8b-eagle3-h100"]["hardware"].startswith("H100")
    assert len(presets) == len(list((ROOT / "presets" / "deployments").glob("*.yaml")))
    rules = _wizard(installed, "rules", "--format", "json").stdout
    assert '"SD001"' in rules


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_ui_starts_from_another_folder(installed):
    import httpx

    py, work, _site = installed
    port = _free_port()
    proc = subprocess.Popen([str(py), "-m", "wizard", "ui", "--port", str(port)], cwd=work, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline, body = time.monotonic() + 240, None
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"the UI exited with {proc.returncode}: {proc.stdout.read()[-3000:]}")
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                if r.status_code == 200:
                    body = r.text
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        assert body is not None, "the UI did not serve on 127.0.0.1"
        assert "gradio" in body.lower() and "SpecWizard" in body
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
