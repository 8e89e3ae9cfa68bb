"""wizard.launch ports, argv and environment: entrypoints, the plan (--dry-run), precedence of
variables, port refusal before anything starts, refusal on error findings."""

from __future__ import annotations

import json
import socket
import sys

import pytest

from wizard.config import config_from_dict
from wizard.launch import LaunchRefused, PortInUse, launch, plan_launch
from wizard.launch.argv import ARGV_SOURCE, CPU_BUILD_BOOTSTRAP, entrypoint_for, entrypoint_len
from wizard.launch.review import argv_words, review_plan
from wizard.security import PathPolicy
from wizard.launch.env import build_env
from wizard.launch.ports import check_port_free


def _cfg(**over):
    d = {"model": "/tmp/model/target", "enforce_eager": True, "max_model_len": 512,
         "speculative_config": {"method": "ngram", "num_speculative_tokens": 3}}
    d.update(over)
    return config_from_dict(d)


def test_entrypoints():
    # `vllm serve` through this Python (no script on PATH, no shell); never the deprecated api_server module
    pre, flag = entrypoint_for("vllm-cpu")
    assert pre == [sys.executable, "-c", CPU_BUILD_BOOTSTRAP, "serve"] and not flag
    pre, flag = entrypoint_for("vllm")
    assert pre == [sys.executable, "-m", "vllm.entrypoints.cli.main", "serve"] and not flag
    assert entrypoint_for(None)[0] == pre
    for d in ("vllm", "vllm-cpu", None):
        assert not any("api_server" in w for w in entrypoint_for(d)[0])


def test_policy_reviews_the_words_after_the_entrypoint():
    # the launch policy judges exactly what vLLM's parser gets: `serve MODEL ...` for both builds
    for dist in ("vllm-cpu", "vllm"):
        p = plan_launch(_cfg(extra_args={"trust_remote_code": True}), port=8001, distribution=dist)
        words = argv_words(p)
        assert words[:2] == ["serve", "/tmp/model/target"] and words == p.argv[3:]
        rv = review_plan(p, _cfg(extra_args={"trust_remote_code": True}), PathPolicy(model_dirs=["/tmp/model"]))
        assert [x.option for x in rv.risky] == ["--trust-remote-code"] and not rv.blocking
    # a -c program that is not the wizard's own is not skipped: its words are reviewed (and refused)
    other = type("P", (), {"argv": [sys.executable, "-c", "import os", "serve", "m"], "secret_config": None})()
    assert entrypoint_len(other.argv) == 1 and argv_words(other)[:2] == ["-c", "import os"]


@pytest.mark.vllm
def test_cpu_bootstrap_runs_the_console_scripts_main():
    # the installed vLLM's console script is vllm.entrypoints.cli.main:main, and on the CPU build it dies
    # before reading its arguments (importlib.metadata.version("vllm")); the bootstrap runs the same main()
    import importlib.metadata as md
    import subprocess

    dist = md.distribution("vllm-cpu")
    assert [(e.name, e.value) for e in dist.entry_points if e.group == "console_scripts"] == [
        ("vllm", "vllm.entrypoints.cli.main:main")]
    plain = subprocess.run([sys.executable, "-m", "vllm.entrypoints.cli.main", "--version"], capture_output=True,
                           text=True, timeout=300)
    assert plain.returncode != 0 and "PackageNotFoundError" in plain.stderr
    ok = subprocess.run([sys.executable, "-c", CPU_BUILD_BOOTSTRAP, "--version"], capture_output=True, text=True,
                        timeout=300)
    assert ok.returncode == 0 and ok.stdout.strip() == md.version("vllm-cpu") + "+cpu", ok.stderr[-2000:]


def test_plan_cpu_and_gpu(tmp_path):
    cfg = _cfg(env={"VLLM_LOGGING_LEVEL": "DEBUG"}, extra_args={"port": 9999, "served_model_name": "tiny"})
    p = plan_launch(cfg, kv_cache_space_gib=1, distribution="vllm-cpu")
    assert p.port == 9999
    assert p.argv[:5] == [sys.executable, "-c", CPU_BUILD_BOOTSTRAP, "serve", "/tmp/model/target"]
    assert p.argv[-4:] == ["--host", "127.0.0.1", "--port", "9999"] and p.argv.count("--port") == 1
    assert "--served-model-name" in p.argv and "--enforce-eager" in p.argv
    sc = json.loads(p.argv[p.argv.index("--speculative-config") + 1])
    assert sc == {"method": "ngram", "num_speculative_tokens": 3}
    assert p.env_changes["VLLM_CPU_KVCACHE_SPACE"] == "1" and p.env_changes["VLLM_LOGGING_LEVEL"] == "DEBUG"
    g = plan_launch(_cfg(), port=8001, gpus=[0, 1], distribution="vllm")
    assert g.argv[1:5] == ["-m", "vllm.entrypoints.cli.main", "serve", "/tmp/model/target"]
    assert g.env_changes["CUDA_VISIBLE_DEVICES"] == "0,1" and "VLLM_CPU_KVCACHE_SPACE" not in g.env_changes


def test_env_precedence():
    env, ch = build_env(_cfg(env={"VLLM_CPU_KVCACHE_SPACE": "2"}), distribution="vllm-cpu", base={})
    assert ch["VLLM_CPU_KVCACHE_SPACE"] == "2"
    env, ch = build_env(_cfg(env={"VLLM_CPU_KVCACHE_SPACE": "2"}), distribution="vllm-cpu", kv_cache_space_gib=0.5, base={})
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "0.5"
    env, ch = build_env(_cfg(), distribution="vllm-cpu", base={})
    assert ch["VLLM_CPU_KVCACHE_SPACE"] == "4"


def test_port_in_use_refused_before_start(tmp_path):
    # (d) a port already bound is refused before anything starts, naming a free alternative
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        busy = s.getsockname()[1]
        with pytest.raises(PortInUse) as ei:
            # force: /tmp/model/target does not exist (SD009 error); this test is about the port
            launch(_cfg(), port=busy, kv_cache_space_gib=1, log_dir=tmp_path, force=True)
        e = ei.value
        assert e.port == busy and e.free_port and e.free_port != busy
        assert f"port {busy} on 127.0.0.1 is already in use" in str(e) and str(e.free_port) in str(e)
        with pytest.raises(PortInUse):
            check_port_free("127.0.0.1", busy)
    assert not list(tmp_path.iterdir())  # no log file: nothing was started


def test_refused_on_error_findings(tmp_path):
    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "kv_sharing_fast_prefill": True,
                            "speculative_config": {"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}})
    with pytest.raises(LaunchRefused) as ei:
        launch(cfg, log_dir=tmp_path, allow_hub=False)
    assert any(f.rule == "SD001" for f in ei.value.findings)
    assert "SD001" in str(ei.value) and "force" in str(ei.value)


def test_cli_dry_run(capsys, monkeypatch):
    from wizard.cli import main
    from wizard.hardware import nvml

    # the CPU build's environment: on a machine whose NVML finds a GPU and that has no vLLM, the
    # build that would run is the CUDA one (test_no_vllm_installed_follows_the_build_...; seen on an H200)
    monkeypatch.setattr(nvml, "discover", lambda: [])

    rc = main(["serve", "--dry-run", "--port", "8123", "--kv-cache-space-gib", "1", "--", "vllm", "serve", "/tmp/model/target",
               "--max-model-len", "512", "--speculative-config", '{"method":"ngram","num_speculative_tokens":3}'])
    out = capsys.readouterr().out
    assert rc == 1 and "# check: 1 error(s) (SD009)" in out  # /tmp/model/target does not exist: the launch is refused
    assert "VLLM_CPU_KVCACHE_SPACE=1" in out
    argv = json.loads(out.split("# argv\n")[1].splitlines()[0])
    assert argv[-4:] == ["--host", "127.0.0.1", "--port", "8123"] and "--max-model-len" in argv




def test_argv_comes_from_the_export():
    """No second argv writer: the launcher's options are wizard.io.export.to_argv's, word for word."""
    from wizard.io.export import to_argv

    cfg = _cfg(extra_args={"served_model_name": "tiny", "port": 9999})
    p = plan_launch(cfg, distribution="vllm")
    assert p.argv_source == ARGV_SOURCE == "wizard.io.export.to_argv"
    bare = to_argv(cfg.model_copy(update={"extra_args": {"served_model_name": "tiny"}}), entrypoint=("vllm", "serve"))
    assert p.argv[3:-4] == bare[1:]


def test_no_vllm_installed_follows_the_build_this_machine_would_install(monkeypatch):
    """Seen on an H200 machine without vLLM (benchmarks/gpu_discovery.sh, 2026-12-04): the launch plan
    set VLLM_CPU_KVCACHE_SPACE as if the CPU build would run. With no vLLM (distribution None), the
    CPU build is assumed only when NVML finds no NVIDIA GPU (the build `pip install` would bring)."""
    from wizard.hardware import nvml
    from wizard.launch.machine import is_cpu_build

    monkeypatch.setattr(nvml, "discover", lambda: [object()])
    assert is_cpu_build(None) is False and is_cpu_build("vllm-cpu") is True and is_cpu_build("vllm") is False
    _, ch = build_env(_cfg(), distribution=None, base={})
    assert "VLLM_CPU_KVCACHE_SPACE" not in ch
    monkeypatch.setattr(nvml, "discover", lambda: [])
    assert is_cpu_build(None) is True
    _, ch = build_env(_cfg(), distribution=None, base={})
    assert ch["VLLM_CPU_KVCACHE_SPACE"] == "4"
