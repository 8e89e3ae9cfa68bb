"""A watchdog process that outlives the wizard and cleans up after it, however it ends.

Why: the launcher stops its servers from ``atexit`` and SIGTERM/SIGHUP handlers, and
``PR_SET_PDEATHSIG`` sends SIGTERM to the API server when the wizard dies. None of that helps
when the wizard is SIGKILLed and the server ignores SIGTERM, or a server left a grandchild in
another session: they stay behind as orphans (issue 10, item 12). So the wizard starts this tiny
process (stdlib only, ``python -I -S``, its own session) and keeps the write end of a pipe to
it. The kernel closes that pipe when the wizard dies, for any reason; on end-of-file the
watchdog

1. SIGTERMs every registered process group and every registered process (checked by its start
   time, so a recycled pid is never hit) and all their descendants (walked through /proc),
2. waits up to ``GRACE_S`` seconds for them to exit, then SIGKILLs what is left,
3. removes the registered folders (the wizard's private temp folder), and exits.

Protocol (one line each, written by :class:`Watchdog`): ``group PGID``, ``pid PID START``,
``forget PGID``, ``rmtree PATH``. A clean stop sends ``forget`` so nothing is signalled twice.

Linux only (/proc); elsewhere :func:`watchdog` returns a no-op client.
"""

from __future__ import annotations

import os
import signal
import sys
import time

GRACE_S = 5.0


# ---- the watchdog process (stdlib only: runs under python -I -S) ------------------------------

def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (start time in clock ticks), or None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    return rest[19] if len(rest) > 19 else None


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgid) of ``pid`` or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    try:
        return rest[0], int(rest[1]), int(rest[2])
    except (IndexError, ValueError):
        return None


def _all_pids() -> list[int]:
    try:
        return [int(x) for x in os.listdir("/proc") if x.isdigit()]
    except OSError:
        return []


def _targets(groups: set[int], pids: dict[int, str]) -> set[int]:
    """Live (non-zombie) processes: members of ``groups``, registered ``pids`` (same start
    time) and every descendant of those."""
    table: dict[int, tuple[str, int, int]] = {}
    for p in _all_pids():
        st = _stat(p)
        if st is not None:
            table[p] = st
    me = os.getpid()
    roots = {p for p, (_s, _pp, pg) in table.items() if pg in groups}
    roots |= {p for p, start in pids.items() if p in table and _start_time(p) == start}
    out = set(roots)
    changed = True
    while changed:
        changed = False
        for p, (_s, pp, _pg) in table.items():
            if pp in out and p not in out:
                out.add(p)
                changed = True
    return {p for p in out if p != me and table.get(p, ("Z",))[0] not in ("Z", "X")}


def _signal_all(targets: set[int], groups: set[int], sig: int) -> None:
    for g in groups:
        try:
            os.killpg(g, sig)
        except OSError:
            pass
    for p in targets:
        try:
            os.kill(p, sig)
        except OSError:
            pass


def _clean(groups: set[int], pids: dict[int, str], folders: list[str]) -> None:
    targets = _targets(groups, pids)
    if targets:
        _signal_all(targets, groups, signal.SIGTERM)
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline:
            left = {p for p in targets if (_stat(p) or ("X",))[0] not in ("Z", "X")}
            if not left:
                break
            time.sleep(0.05)
        # anything still there (or started meanwhile) gets SIGKILL
        targets |= _targets(groups, pids)
        _signal_all(targets, groups, signal.SIGKILL)
    import shutil

    for d in folders:
        shutil.rmtree(d, ignore_errors=True)


def main() -> int:
    """Read registrations from stdin until end-of-file, then clean up (see the module docstring)."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (OSError, ValueError):
            pass
    groups: set[int] = set()
    pids: dict[int, str] = {}
    folders: list[str] = []
    stdin = sys.stdin.buffer
    while True:
        try:
            line = stdin.readline()
        except (OSError, ValueError):
            line = b""
        if not line:
            break
        parts = line.decode("utf-8", "replace").rstrip("\n").split(" ", 2)
        try:
            if parts[0] == "group":
                groups.add(int(parts[1]))
            elif parts[0] == "pid":
                pids[int(parts[1])] = parts[2]
            elif parts[0] == "forget":
                g = int(parts[1])
                groups.discard(g)
                for p in [p for p in pids if (_stat(p) or ("", 0, g))[2] == g or p == g]:
                    pids.pop(p, None)
            elif parts[0] == "rmtree":
                folders.append(parts[1])
        except (IndexError, ValueError):
            continue
    _clean(groups, pids, folders)
    return 0


# ---- the client in the wizard process ----------------------------------------------------------

class Watchdog:
    """Client of the watchdog process (started on first use). Thread-safe; never raises: the
    watchdog is a safety net on top of ``stop()``/atexit, not a requirement."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._proc = None
        self._pid = None  # the process that started it (a fork must start its own)

    @property
    def pid(self) -> int | None:
        """The watchdog's pid (None before the first registration)."""
        return self._proc.pid if self._proc is not None else None

    def _send(self, line: str) -> None:
        if not sys.platform.startswith("linux"):
            return
        import subprocess

        with self._lock:
            try:
                if self._pid is not None and self._pid != os.getpid():
                    # a forked child: the parent's watchdog and folders are the parent's business
                    self._proc, self._replay = None, []
                if self._proc is None or self._proc.poll() is not None:
                    self._proc = subprocess.Popen(
                        [sys.executable, "-I", "-S", os.path.abspath(__file__)],
                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        start_new_session=True, close_fds=True)
                    self._pid = os.getpid()
                    for old in self._replay:
                        self._proc.stdin.write(old.encode("utf-8"))
                self._proc.stdin.write((line + "\n").encode("utf-8"))
                self._proc.stdin.flush()
                self._replay.append(line + "\n")  # a restarted watchdog (the old one was killed) learns it all again
            except (OSError, ValueError):
                pass

    _replay: list[str] = []

    def track_group(self, pgid: int) -> None:
        """Kill process group ``pgid`` (and its descendants) if the wizard dies."""
        self._send(f"group {int(pgid)}")

    def track_pid(self, pid: int) -> None:
        """Kill ``pid`` (identified with its start time) and its descendants if the wizard dies."""
        start = _start_time(int(pid))
        if start is not None:
            self._send(f"pid {int(pid)} {start}")

    def forget_group(self, pgid: int) -> None:
        """``pgid`` was stopped cleanly: do not signal it later."""
        self._send(f"forget {int(pgid)}")

    def remove_on_exit(self, folder: str | os.PathLike) -> None:
        """Remove ``folder`` when the wizard is gone."""
        self._send(f"rmtree {os.fspath(folder)}")


_WATCHDOG: Watchdog | None = None


def watchdog() -> Watchdog:
    """The process-wide :class:`Watchdog` client."""
    global _WATCHDOG
    if _WATCHDOG is None:
        _WATCHDOG = Watchdog()
        _WATCHDOG._replay = []
    return _WATCHDOG


if __name__ == "__main__":
    sys.exit(main())
