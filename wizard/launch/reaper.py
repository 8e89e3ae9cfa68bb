"""The server's parent: a child subreaper, so that no descendant of the server outlives it.

Why: the server leads its own process group and the launcher records its descendants, but a
descendant that double-forks and calls ``setsid`` leaves both the group and the process tree
(its parent exits, the kernel hands it to init) before anyone can record it (issue 20, item 7).
Linux's ``PR_SET_CHILD_SUBREAPER`` changes where orphans go: to the nearest living ancestor that
is a subreaper. So :func:`wizard.launch.spawn.start_server` starts

    python -I -S wizard/launch/reaper.py /abs/path/to/vllm serve ...

and this process (stdlib only)

1. marks itself a child subreaper, forks, and execs the server in the child (PDEATHSIG set, so
   the server gets SIGTERM if this process dies);
2. forwards SIGTERM/SIGINT/SIGHUP to the server and reaps every child it is handed (orphans
   included) until the server itself has exited;
3. then SIGTERMs every remaining descendant (all of them are in its subtree: that is what being
   a subreaper buys), SIGKILLs what is left after ``GRACE_S`` seconds, and exits with the
   server's own status (re-raising the server's fatal signal on itself, so the launcher sees
   the same ``returncode``).

While it lives, every descendant is reachable by walking /proc from its pid, which is what the
launcher's ``stop()`` and the :mod:`watchdog` do. ``GRACE_S`` is below the watchdog's grace, so
the reaper finishes its own clean-up before the watchdog escalates.

Linux only; elsewhere the launcher starts the server directly.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import resource
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 3.0


def _load_watchdog():
    """wizard/launch/watchdog.py (stdlib only, beside this file), loaded by path: this process
    runs as a script under ``-I -S`` and shares the watchdog's /proc walk."""
    spec = importlib.util.spec_from_file_location("_sw_watchdog", os.path.join(os.path.dirname(__file__),
                                                                                "watchdog.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_WD = _load_watchdog()


def descendants(root: int) -> set[int]:
    """Live (non-zombie) descendants of ``root`` (the watchdog's /proc walk from that process)."""
    start = _WD._start_time(root)
    return _WD._targets(set(), {root: start}) - {root} if start is not None else set()


def _reap_nohang() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _signal(pids: set[int], sig: int) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except OSError:
            pass


def end_descendants(grace: float = GRACE_S) -> None:
    """SIGTERM every descendant, SIGKILL those left after ``grace`` s, reaping as they exit."""
    me = os.getpid()
    left = descendants(me)
    if not left:
        return
    _signal(left, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while left and time.monotonic() < deadline:
        _reap_nohang()
        time.sleep(0.05)
        left = descendants(me)
    for _ in range(3):  # SIGKILL, reap; again for any that forked meanwhile
        left = descendants(me)
        if not left:
            break
        _signal(left, signal.SIGKILL)
        end = time.monotonic() + 2.0
        while descendants(me) & left and time.monotonic() < end:
            _reap_nohang()
            time.sleep(0.02)
    _reap_nohang()


def main(argv: list[str]) -> int:
    if not argv:
        os.write(2, b"reaper: no program given\n")
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    server = os.fork()
    if server == 0:  # the server: default signal dispositions, PDEATHSIG, exec
        try:
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
            os.execv(argv[0], argv)
        except OSError as err:
            os.write(2, f"cannot start {argv[0]!r}: {err.strerror or err}\n".encode())
        os._exit(127)

    def forward(signum, _frame):
        try:
            os.kill(server, signum)
        except OSError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    status = None
    while status is None:
        try:
            pid, st = os.waitpid(-1, 0)  # the server, or an orphan handed to this subreaper
        except ChildProcessError:
            break
        if pid == server:
            status = st
    end_descendants()
    if status is None:
        return 1
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:  # the server's core dump (if any) is the server's; this process leaves none
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (OSError, ValueError):
            pass
        if sig != signal.SIGKILL:  # SIGKILL cannot be caught: no handler to reset
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
