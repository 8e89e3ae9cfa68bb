"""Spawning servers so that none outlives the wizard: one forking thread, PDEATHSIG, exit hooks,
the watchdog.

    h = start_server(plan, cfg, log_dir)      # a ServerHandle in state 'starting'

* ``subprocess.Popen(list, start_new_session=True)``: never a shell; the server leads its own
  process group, so Ctrl-C in the wizard's terminal does not reach it and one ``killpg`` reaches
  the whole tree.
* ``PR_SET_PDEATHSIG`` (Linux; set in the child before exec) sends SIGTERM to the server when the
  *thread* that forked it dies, so every server is forked from one long-lived daemon thread.
* :mod:`wizard.launch.reaper` (Linux) is the server's parent: a child subreaper, so a descendant
  that double-forks and calls ``setsid`` is still handed back to it, and none survives the server.
* ``atexit`` and SIGTERM/SIGHUP handlers stop every live server
  (:func:`wizard.launch.process.stop_all`); the :mod:`wizard.launch.watchdog` process takes
  over when the wizard is killed hard.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from wizard.config import ServeConfig
from wizard.launch.errors import LaunchError
from wizard.launch.process import _LIVE, LaunchPlan, ServerHandle, stop_all
from wizard.launch.watchdog import watchdog
from wizard.privacy import scrub, write_private

__all__ = ["start_server"]

_PR_SET_PDEATHSIG = 1
try:  # loaded in the parent: the child must not dlopen between fork and exec
    _LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
except OSError:  # pragma: no cover
    _LIBC = None


def _child_setup() -> None:  # runs in the child between fork and exec: keep it minimal
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


class _Spawner:
    """One long-lived daemon thread that forks every server (PDEATHSIG is per forking thread)."""

    def __init__(self) -> None:
        self._q: queue.Queue = queue.Queue()
        self._t: threading.Thread | None = None
        self._lock = threading.Lock()

    def _run(self) -> None:
        while True:
            fn, box, done = self._q.get()
            try:
                box["value"] = fn()
            except BaseException as err:  # handed back to the caller
                box["error"] = err
            done.set()

    def call(self, fn: Callable[[], Any]) -> Any:
        with self._lock:
            if self._t is None or not self._t.is_alive():
                self._t = threading.Thread(target=self._run, name="wizard-launch-spawner", daemon=True)
                self._t.start()
        box: dict[str, Any] = {}
        done = threading.Event()
        self._q.put((fn, box, done))
        done.wait()
        if "error" in box:
            raise box["error"]
        return box["value"]


_SPAWNER = _Spawner()
_HOOKS_INSTALLED = False


def _install_exit_hooks() -> None:
    """atexit + SIGTERM/SIGHUP handlers (main thread only) that stop every live server.

    The previous handler is chained (called after stopping; default action re-raised)."""
    global _HOOKS_INSTALLED
    if _HOOKS_INSTALLED:
        return
    _HOOKS_INSTALLED = True
    atexit.register(stop_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            prev = signal.getsignal(sig)
        except (ValueError, OSError):  # pragma: no cover
            continue

        def handler(signum, frame, _prev=prev):
            stop_all()
            if callable(_prev):
                _prev(signum, frame)
            elif _prev == signal.SIG_IGN:
                return
            else:
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)

        try:
            signal.signal(sig, handler)
        except (ValueError, OSError):  # pragma: no cover
            pass


_REAPER = Path(__file__).with_name("reaper.py")


def _under_reaper(argv: list[str], env: dict[str, str] | None) -> list[str]:
    """``argv`` started through :mod:`wizard.launch.reaper` (a child subreaper: no descendant
    of the server survives it), on Linux. The program is resolved here, on the child's PATH, so a
    missing program is still a LaunchError before anything starts."""
    if _LIBC is None or not argv:
        return list(argv)
    path = (env if env is not None else os.environ).get("PATH", os.defpath)
    prog = shutil.which(argv[0], path=path)
    if prog is None:
        raise LaunchError(f"cannot start {argv[0]!r}: no such executable on PATH")
    return [sys.executable, "-I", "-S", str(_REAPER), os.path.abspath(prog), *argv[1:]]


def start_server(plan: LaunchPlan, cfg: ServeConfig, log_dir: Path, *, metrics_interval: float = 2.0,
                 poll_interval: float = 0.1) -> ServerHandle:
    """Start ``plan`` as is (no rules check, no port test) and return its handle.

    The log file ``log_dir/vllm-<port>-<time>-<pid>.log`` (mode 0600) starts with the argv,
    credentials masked. Raises LaunchError when the program cannot be executed."""
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"vllm-{plan.port}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    write_private(log_path, "# " + scrub(" ".join(plan.argv), plan.secrets) + "\n")

    argv = _under_reaper(plan.argv, plan.env)

    def spawn() -> subprocess.Popen:
        return subprocess.Popen(
            argv,
            env=plan.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_child_setup if _LIBC is not None else None,
            close_fds=True,
        )

    try:
        proc = _SPAWNER.call(spawn)
    except OSError as err:
        raise LaunchError(f"cannot start {plan.argv[0]!r}: {err.strerror or err}") from None
    _install_exit_hooks()
    watchdog().track_group(proc.pid)  # if the wizard is killed, the watchdog takes the group down
    watchdog().track_pid(proc.pid)
    h = ServerHandle(plan, cfg, proc, log_path, metrics_interval=metrics_interval, poll_interval=poll_interval)
    _LIVE.add(h)
    return h
