"""wizard.launch.process / spawn with a stand-in server (tests/launch/fake_server.py): readiness,
SIGKILL escalation, grandchildren, crash diagnosis, the shown log, and no orphans however the
wizard process ends.

Why a stand-in server at all: real vLLM cannot be made, on demand, to (1) ignore SIGTERM so that
stop() must escalate to SIGKILL, (2) leave a grandchild that ignores SIGTERM and is not in the
API server's process tree as psutil sees it at stop time, or (3) answer /health before
/v1/models. Everything vLLM *can* do is tested with real vLLM in test_launch_vllm.py.

No test here depends on timing (issue 16 item 4): each waits on an event (a log line, the
readiness of the handle, a scrape, a process ending, a file appearing) and every wait has a
generous cap (CAP seconds) that only a hung run reaches.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from wizard.config import config_from_dict
from wizard.launch import Launcher, LaunchPlan, find_free_port, plot_data
from wizard.launch.metrics import MONITOR_PARAMS

HERE = Path(__file__).parent
DATA = HERE.parent / "data"
FAKE = HERE / "fake_server.py"
ROOT = HERE.parents[1]
REAPER = 1 if sys.platform.startswith("linux") else 0  # wizard/launch/reaper.py is the server's parent
CAP = 600.0  # seconds: a safety net for a hung run, never a schedule
pytestmark = pytest.mark.timeout(1800)


def _cfg():
    return config_from_dict({"model": "/tmp/model/target", "enforce_eager": True, "max_model_len": 512,
                             "speculative_config": {"method": "ngram", "num_speculative_tokens": 3}})


def _fake_argv(port: int, *args: str) -> list[str]:
    return [sys.executable, str(FAKE), "--port", str(port), "--metrics", str(DATA / "metrics" / "ngram_cpu.txt"), *args]


def _fake_plan(port: int, *args: str) -> LaunchPlan:
    return LaunchPlan(argv=_fake_argv(port, *args), env_changes={}, host="127.0.0.1", port=port, distribution=None,
                      argv_source="test", env=dict(os.environ, PYTHONUNBUFFERED="1"))


def _gone(pids: list[int], timeout: float = CAP) -> list[int]:
    """Wait until every pid has ended (or is a zombie); returns those still alive at the cap."""
    procs = []
    for pid in pids:
        try:
            procs.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    out = []
    for p in alive:
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                out.append(p.pid)
        except psutil.NoSuchProcess:
            pass
    return out


def test_stubborn_group_is_killed_and_readiness_waits_for_models(tmp_path):
    port = find_free_port()
    gate = tmp_path / "models-ready"
    h = Launcher(tmp_path, metrics_interval=0.3, poll_interval=0.05).start(
        _fake_plan(port, "--ignore-term", "--grandchild", "--models-gate", str(gate)), _cfg())
    try:
        # /health answers as soon as the server listens; /v1/models not until the gate opens
        assert h.wait_for_log("fake server listening", CAP)
        assert h.wait_for_log('"GET /v1/models', CAP)  # a readiness probe was refused (503) ...
        assert h.state == "starting"                    # ... so the handle is not healthy yet
        gate.touch()
        assert h.wait_healthy(CAP)
        assert h.status()["state"] == "healthy" and h.served_model == "fake-model"
        assert h.wait_for_metrics(1, CAP)
        assert h.latest_metrics().raw["num_drafts"] == 56
        assert any("fake server listening" in line for line in h.logs(50))
        assert len(h.remaining_processes()) == 2 + REAPER  # server + grandchild (started before it listened)
        code = h.stop(grace=1.0)
        assert code == -9  # SIGTERM ignored -> SIGKILL after the grace period
        assert h.state == "stopped"
        assert h.remaining_processes() == []
        assert (tmp_path / h.log_path.name).read_text().count("fake server listening") == 1
    finally:
        h.stop(grace=0.5)


def test_monitor_requests_stay_out_of_the_shown_log(tmp_path):
    """Issue 16 item 3: the readiness probes and /metrics scrapes of the watcher are in the log
    file and logs(monitor=True), not in logs(); a request of the user's own still shows."""
    import httpx

    port = find_free_port()
    h = Launcher(tmp_path, metrics_interval=0.2, poll_interval=0.05).start(_fake_plan(port), _cfg())
    try:
        assert h.wait_healthy(CAP)
        assert h.wait_for_metrics(3, CAP)
        httpx.get(h.url + "/metrics", timeout=CAP, trust_env=False).raise_for_status()  # the user's own scrape
        assert h.wait_for_log('"GET /metrics HTTP/1.1" 200', CAP)
        tag = "?" + "&".join(f"{k}={v}" for k, v in MONITOR_PARAMS.items())
        every = h.logs(None, monitor=True)
        shown = h.logs(None)
        assert sum(f'"GET /metrics{tag} HTTP/1.1" 200' in ln for ln in every) >= 3
        assert any(f'"GET /health{tag} HTTP/1.1" 200' in ln for ln in every)
        assert not any(tag in ln for ln in shown)
        assert [ln for ln in shown if '"GET /metrics HTTP/1.1" 200' in ln]  # the user's request is shown
        assert "fake server listening on" in shown[0]
    finally:
        h.stop()
    text = h.log_path.read_text()
    assert text.count(f'"GET /metrics{tag} HTTP/1.1" 200') >= 3  # the file keeps everything


def test_crash_during_startup_is_diagnosed(tmp_path):
    port = find_free_port()
    h = Launcher(tmp_path).start(_fake_plan(port, "--crash", "ValueError: Unsupported speculative method: 'mtp'"), _cfg())
    assert not h.wait_healthy(CAP)
    assert h.wait(CAP) == "failed"
    assert h.exit_code == 1
    assert h.diagnosis.signature == "unsupported_method"
    assert h.status()["diagnosis"]["fixes"][0]["set"]["speculative_config"]["method"] == "ngram"
    assert h.remaining_processes() == []


def test_handle_smoke_and_advice_on_stand_in(tmp_path):
    """ServerHandle.smoke()/advice() as the UI calls them (the stand-in has no /v1/completions:
    the smoke result reports the errors instead of raising)."""
    port = find_free_port()
    h = Launcher(tmp_path, metrics_interval=0.2).start(_fake_plan(port), _cfg())
    try:
        assert h.wait_healthy(CAP)
        res = h.smoke(2, max_tokens=4, timeout=CAP)
        assert res.ok == 0 and len(res.errors) == 2 and "error:" in res.render_text()
        assert h.spec_method_and_k() == ("ngram", 3)
        assert h.wait_for_metrics(2, CAP)
        a = h.advice()
        assert a.level == "ok" and "2.79" in a.message
        pdata = plot_data(h.metrics_history())
        assert pdata["per_position"] == pytest.approx([52 / 56, 32 / 56, 16 / 56]) and len(pdata["time"]) >= 2
    finally:
        h.stop()
    assert h.remaining_processes() == []


# ---- the wizard process itself ends --------------------------------------------------------------

_PARENT = r"""
import os, signal, sys, time
# Ctrl-C as in a terminal: a suite started in the background by a non-interactive shell (CI,
# `cmd &`) inherits SIGINT ignored, and Python then never raises KeyboardInterrupt.
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {root!r})
from wizard.launch import Launcher, LaunchPlan
from wizard.config import config_from_dict
argv = {argv!r}
plan = LaunchPlan(argv=argv, env_changes={{}}, host="127.0.0.1", port={port}, distribution=None, argv_source="test",
                  env=dict(os.environ, PYTHONUNBUFFERED="1"))
h = Launcher({logdir!r}).start(plan, config_from_dict({{"model": "x"}}))
assert h.wait_healthy({cap}), h.logs(20)
if {grandchild}:
    assert h.wait_for_log({ready!r}, {cap})
    h._snapshot_descendants()
print("PIDS", *h.remaining_processes(), flush=True)
sys.stdin.read()  # until the test signals this process (never returns on its own)
"""


def _parent(tmp_path, argv: list[str], port: int, grandchild: bool) -> subprocess.Popen:
    ready = "daemon ready" if "--daemon" in argv else "grandchild ready"
    code = _PARENT.format(root=str(ROOT), argv=argv, port=port, logdir=str(tmp_path), cap=CAP, grandchild=grandchild,
                          ready=ready)
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_no_orphan_when_the_wizard_process_ends(tmp_path, how):
    """Ctrl-C (KeyboardInterrupt -> atexit), SIGTERM (handler) and SIGKILL (PR_SET_PDEATHSIG) of
    the process that launched the server all take the server down. Waits on the processes
    themselves (the PIDS line once healthy, then psutil.wait_procs), with generous caps."""
    port = find_free_port()
    parent = _parent(tmp_path, _fake_argv(port), port, grandchild=False)
    try:
        line = parent.stdout.readline()  # printed once the server is healthy
        assert line.startswith("PIDS "), line
        pids = [int(x) for x in line.split()[1:]]
        assert len(pids) == 1 + REAPER and all(psutil.pid_exists(p) for p in pids)
        parent.send_signal(getattr(signal, how))
        assert _gone(pids) == [], f"server {pids} still alive after the wizard process got {how}"
        parent.wait(CAP)
    finally:
        if parent.poll() is None:
            parent.kill()


@pytest.mark.parametrize("grandchild", ["--grandchild", "--grandchild-session", "--daemon"])
def test_no_orphan_when_the_wizard_is_sigkilled_with_a_stubborn_server(tmp_path, grandchild):
    """Issue 10 item 12: a server that ignores SIGTERM and leaves a grandchild (in its group, or in
    a session of its own) is gone after the wizard process is SIGKILLed: the watchdog
    (wizard/launch/watchdog.py) sees its pipe close and takes the group and every descendant down."""
    port = find_free_port()
    parent = _parent(tmp_path, _fake_argv(port, "--ignore-term", grandchild), port, grandchild=True)
    pids: list[int] = []
    try:
        line = parent.stdout.readline()
        assert line.startswith("PIDS "), line
        pids = [int(x) for x in line.split()[1:]]
        assert len(pids) == 2 + REAPER, pids  # the server and its grandchild (and the reaper)
        parent.send_signal(signal.SIGKILL)
        parent.wait(CAP)
        alive = _gone(pids)
        assert not alive, f"orphans left after SIGKILL of the wizard: {alive}"
    finally:
        if parent.poll() is None:
            parent.kill()
        for pid in pids:
            try:
                psutil.Process(pid).kill()
            except psutil.Error:
                pass


@pytest.mark.skipif(not REAPER, reason="PR_SET_CHILD_SUBREAPER is Linux only")
def test_a_daemonised_descendant_does_not_survive_stop(tmp_path):
    """Issue 20 item 7: a descendant that forks, calls setsid, forks again and whose middle
    process exits at once (the classic daemon) has left the server's group and tree before any
    snapshot can record it. wizard/launch/reaper.py is a child subreaper: the orphan is handed to
    it, not to init, and stop() takes it down with the server."""
    port = find_free_port()
    h = Launcher(tmp_path).start(_fake_plan(port, "--daemon"), _cfg())
    daemon = None
    try:
        assert h.wait_healthy(CAP), h.logs(20)
        assert h.wait_for_log("daemon ready", CAP)
        daemon = int(next(ln for ln in h.logs(None, monitor=True) if "daemon ready" in ln).split()[-1])
        p = psutil.Process(daemon)
        assert p.ppid() == h.pid, "the orphan must be handed to the reaper (the server's parent)"
        assert os.getpgid(daemon) != h.pgid  # it left the server's process group
        h.stop(grace=5)
        assert _gone([daemon]) == [], f"daemonised descendant {daemon} survived stop()"
        assert h.remaining_processes() == []
    finally:
        h.stop(grace=1)
        if daemon is not None:
            try:
                psutil.Process(daemon).kill()
            except psutil.Error:
                pass
