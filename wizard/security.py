"""What text may make a launched server do, and which local folders it may read.

A configuration reaches the launcher from text someone else may have written: a pasted command,
a YAML file (its ``# env:`` comments), a saved session. This module decides, from tables
generated out of vLLM itself (``scripts/dump_vllm_launch_policy.py`` ->
``wizard/data/vllm/<X.Y>/launch_policy.json``), what of it may run:

* **Environment** (:func:`classify_env`): a variable is passed to the server only when vLLM
  reads it as a number, a boolean, a fixed choice or plain text that names no file
  (``vllm/envs.py`` getters, classified by their code), or it is on :data:`KNOWN_HARMLESS` (CUDA
  device selection, thread counts, offline switches; each value checked). Variables that make a
  process load code or files (``PYTHONPATH``, ``LD_PRELOAD``, ``BASH_ENV``, vLLM's
  ``VLLM_LOGGING_CONFIG_PATH``/``VLLM_PLUGINS``/``*_SO_PATH``...) are **refused**; any other
  variable is **dropped** (not passed; the user sets it in the shell that starts the wizard,
  whose environment the server inherits). Secrets (``HF_TOKEN``, ``*_API_KEY``) are passed.
* **Options** are judged on the argv the server will parse, by an allowlist generated from each
  release's source: :mod:`wizard.launch_policy` (the table and the verdict) and
  :mod:`wizard.launch.review` (the plan that is both shown and run). Options that import code,
  read files outside the allowed folders, open listeners or take unreviewed text need the
  opt-in of the person who started the UI (``app.py --allow-unsafe-options``).
* **Uploads** (:func:`uses_upload`): no value may point into Gradio's upload folder or the
  wizard's private folder.

What stays private (secrets, redaction, the private folder) is :mod:`wizard.privacy`.

Threat model and how each issue is prevented: docs/security.md.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from packaging.version import Version

from wizard.paths import is_local_path, written_as_path
from wizard.privacy import created_private_dir, is_secret_env
from wizard.rules.optionvalues import _parse_text
from wizard.vllm import releases
from wizard.vllm.versions import default_version

__all__ = [
    "EnvVerdict",
    "classify_env",
    "review_env",
    "uses_upload",
    "PathPolicy",
    "default_model_dirs",
    "is_inside",
    "is_local_path",
    "written_as_path",
    "upload_dirs",
    "policy_table",
]



# ---- the generated table ---------------------------------------------------------------------

def policy_table(version: str | None = None) -> dict[str, Any]:
    """The launch-policy table for ``version`` ('0.32'...; default: the vLLM the wizard targets,
    :func:`wizard.vllm.versions.default_version`; the newest file not newer, else the oldest). Keys:
    options (option string -> {dest, risk, why, flag}), nested (DEST.FIELD -> {risk, why}), env
    (VAR -> {kind: typed|text, loads}). See scripts/dump_vllm_launch_policy.py."""
    if version is None:
        try:
            version = str(default_version())
        except Exception:  # pragma: no cover
            version = None
    return _policy_table(version)


@functools.lru_cache(maxsize=8)
def _policy_table(version: str | None) -> dict[str, Any]:
    """The generated ``launch_policy.json`` of ``version``'s release, else of the newest release
    not newer that has one, else the oldest (:mod:`wizard.vllm.releases`)."""
    have = [k for k in releases.known_releases() if releases.has_file(k, "launch_policy.json")]
    if not have:  # pragma: no cover - shipped with the package
        return {"options": {}, "nested": {}, "env": {}}
    chosen = have[-1]
    if version:
        try:
            want = Version(releases.release_of(version))
        except ValueError:
            want = None
        if want is not None:
            older = [k for k in have if Version(k) <= want]
            chosen = older[-1] if older else have[0]
    return releases.load(chosen, "launch_policy.json")


# ---- environment -------------------------------------------------------------------------------

#: process-wide loaders: the dynamic linker, shells, interpreters (man ld.so, bash(1), python(1))
_LOADER_EXACT = {"BASH_ENV", "ENV", "PATH", "IFS", "PS4", "SHELLOPTS", "BASHOPTS", "GLIBC_TUNABLES", "GCONV_PATH",
                 "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH", "CC", "CXX",
                 "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "TMPDIR", "HOME", "SSL_CERT_FILE",
                 "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                 "http_proxy", "https_proxy", "all_proxy"}
_LOADER_PREFIX = ("LD_", "DYLD_", "PYTHON", "XDG_", "BASH_FUNC_", "MALLOC_")
#: PYTHON* variables that change no import, file or code (python(1))
_PYTHON_HARMLESS = {"PYTHONUNBUFFERED", "PYTHONHASHSEED", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE",
                    "PYTHONFAULTHANDLER", "PYTHONUTF8", "PYTHONNOUSERSITE", "PYTHONSAFEPATH"}
#: words that make a variable name a path, library or module (the same markers the generator uses
#: for vLLM's own variables): HF_HOME, HF_MODULES_CACHE, TRITON_CACHE_DIR, CUDA_HOME, NCCL_NET_PLUGIN...
_LOADS_NAME = re.compile(r"PATH|_DIR$|_DIR_|ROOT|FOLDER|FILE|PLUGIN|_SO$|_SO_|CACHE|CONFIG|HOME|MODULE|_CLS$|PRELOAD|"
                         r"AUDIT|_LIB|OPTS?$|OPTIONS|STARTUP|BUNDLE|_CERT|_KEY_FILE", re.I)
#: variables that name a host or an address vLLM binds or advertises (VLLM_HOST_IP,
#: VLLM_NIXL_SIDE_CHANNEL_HOST, VLLM_DP_MASTER_IP, MASTER_ADDR ...): passed only with a loopback value
_ADDRESS_NAME = re.compile(r"(_HOST|_IP|_ADDR|_ADDRESS|^MASTER_ADDR)$", re.I)


def _loopback_value(value: Any) -> bool:
    """Whether an address variable's value stays on this machine (127.0.0.0/8, ::1, localhost)."""
    v = str(value).strip().strip("[]").lower()
    if v in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(v).is_loopback
    except ValueError:
        return False


#: vLLM booleans/choices that widen what the server runs or exposes (vllm/envs.py comments, 0.32):
#: each one would let an API client or a file run code or read files.
VLLM_UNSAFE_ENV = {
    "VLLM_ALLOW_INSECURE_SERIALIZATION": "lets vLLM unpickle messages (\"allow insecure serialization using pickle\")",
    "VLLM_SERVER_DEV_MODE": "adds development endpoints to the server's API",
    "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "lets API clients load LoRA adapters from server paths at run time",
    "VLLM_LOGGING_STREAM": "is resolved by logging.dictConfig, whose ext:// values import modules",
    "VLLM_TRACE_FUNCTION": "writes a trace of every function call to files",
    "VLLM_USAGE_STATS_SERVER": "sends usage data to the URL given",
    "VLLM_TEST_FORCE_LOAD_FORMAT": "forces a weight loader (vLLM's tests only)",
}
#: variables outside vllm/envs.py that are harmless, with the check each value must pass
KNOWN_HARMLESS: dict[str, str] = {
    "CUDA_VISIBLE_DEVICES": r"^\s*(?:(?:\d+|GPU-[0-9a-fA-F-]+|MIG-[\w/-]+)\s*(?:,\s*|$))*$",
    "CUDA_DEVICE_ORDER": r"^(?:FASTEST_FIRST|PCI_BUS_ID)$",
    "CUDA_LAUNCH_BLOCKING": r"^[01]$",
    "OMP_NUM_THREADS": r"^\d{1,4}$",
    "MKL_NUM_THREADS": r"^\d{1,4}$",
    "TOKENIZERS_PARALLELISM": r"^(?i:true|false|1|0)$",
    "HF_HUB_OFFLINE": r"^(?i:1|0|true|false|yes|no|on|off)$",
    "TRANSFORMERS_OFFLINE": r"^(?i:1|0|true|false|yes|no|on|off)$",
    "HF_HUB_DISABLE_TELEMETRY": r"^(?i:1|0|true|false)$",
    "HF_HUB_ENABLE_HF_TRANSFER": r"^(?i:1|0|true|false)$",
    "NCCL_DEBUG": r"^(?i:VERSION|WARN|INFO|TRACE)$",
    "NCCL_P2P_DISABLE": r"^[01]$",
    "NCCL_IB_DISABLE": r"^[01]$",
    "NCCL_SHM_DISABLE": r"^[01]$",
    "NCCL_CUMEM_ENABLE": r"^[01]$",
    "NCCL_SOCKET_IFNAME": r"^[\w.,^=-]{1,64}$",
    "PYTORCH_CUDA_ALLOC_CONF": r"^[\w:.,]{1,200}$",
    "PYTHONHASHSEED": r"^\d{1,10}$",
}


@dataclass(frozen=True)
class EnvVerdict:
    """What the launcher does with one variable from text.

    ``action``: 'pass' (handed to the server), 'refuse' (the launch is refused: the variable
    loads code or files), 'drop' (not passed; set it in the wizard's own environment).
    ``reason``: one sentence naming why (for findings and the Launch step)."""

    name: str
    action: str
    reason: str
    secret: bool = False
    #: refused because it binds or advertises an address beyond loopback (a launch-policy matter,
    #: not a vLLM failure: a multi-node manifest needs VLLM_HOST_IP); SD600 says it at info
    address: bool = False


def classify_env(name: str, value: Any = None, version: str | None = None) -> EnvVerdict:
    """Classify one environment variable from imported text (see the module docstring)."""
    n = str(name)
    table = policy_table(version).get("env", {})
    entry = table.get(n)
    if n in VLLM_UNSAFE_ENV:
        return EnvVerdict(n, "refuse", f"{n} {VLLM_UNSAFE_ENV[n]} (vllm/envs.py)")
    if entry is not None and entry.get("loads"):
        return EnvVerdict(n, "refuse", f"{n} names a file, folder, library or plugin that vLLM loads (vllm/envs.py)")
    if n in _LOADER_EXACT or (n.startswith(_LOADER_PREFIX) and n not in _PYTHON_HARMLESS):
        return EnvVerdict(n, "refuse", f"{n} makes the dynamic linker, a shell or Python load code or files")
    if is_secret_env(n):
        return EnvVerdict(n, "pass", f"{n} is a credential: passed to the server, never written to files", secret=True)
    if _ADDRESS_NAME.search(n) and value is not None and not _loopback_value(value):
        return EnvVerdict(n, "refuse", f"{n}={str(value)[:60]!r} makes vLLM bind or advertise an address beyond loopback "
                                       "(the launcher serves on 127.0.0.1 only)", address=True)
    if entry is not None:
        return EnvVerdict(n, "pass", f"{n} is read by vLLM as " + ("a number, switch or fixed choice" if entry["kind"] == "typed"
                                                                   else "text that names no file") + " (vllm/envs.py)")
    if n in _PYTHON_HARMLESS and n not in KNOWN_HARMLESS:
        return EnvVerdict(n, "pass", f"{n} changes no import, file or code (python(1))")
    if n in KNOWN_HARMLESS:
        if value is None or re.match(KNOWN_HARMLESS[n], str(value)):
            return EnvVerdict(n, "pass", f"{n} selects devices, threads or offline mode")
        return EnvVerdict(n, "drop", f"{n}={str(value)[:40]!r} is not a value it takes")
    if _LOADS_NAME.search(n):
        return EnvVerdict(n, "refuse", f"{n} names a path, library or module (its name says so)")
    return EnvVerdict(n, "drop", f"{n} is neither a vLLM variable nor on the wizard's list of harmless ones")


def review_env(env: Mapping[str, Any] | None, version: str | None = None) -> dict[str, list[EnvVerdict]]:
    """{'pass': [...], 'refuse': [...], 'drop': [...]} for every variable of ``env``."""
    out: dict[str, list[EnvVerdict]] = {"pass": [], "refuse": [], "drop": []}
    for k, v in (env or {}).items():
        verdict = classify_env(k, v, version)
        out[verdict.action].append(verdict)
    return out


# ---- paths -------------------------------------------------------------------------------------

def _real(p: str | os.PathLike) -> str:
    s = str(p)
    if s.startswith("file://"):
        s = s[7:]
    return os.path.realpath(os.path.expanduser(s))


def is_inside(path: str | os.PathLike, folders: Iterable[str | os.PathLike]) -> bool:
    """Whether ``path`` (symlinks and ``..`` resolved) is one of ``folders`` or below one."""
    rp = _real(path)
    for f in folders:
        rf = _real(f)
        if rp == rf or rp.startswith(rf.rstrip(os.sep) + os.sep):
            return True
    return False


def default_model_dirs() -> list[str]:
    """Folders the UI may read models from unless told otherwise: the current folder and the
    Hugging Face cache (``huggingface_hub.constants.HF_HUB_CACHE``)."""
    out = [os.getcwd()]
    try:
        from huggingface_hub import constants

        out.append(str(constants.HF_HUB_CACHE))
    except Exception:  # pragma: no cover
        out.append(os.path.expanduser("~/.cache/huggingface/hub"))
    return out


def upload_dirs() -> list[str]:
    """Folders that hold files uploaded through the UI or written by the wizard: Gradio's upload
    folder (``GRADIO_TEMP_DIR``, else ``$TMPDIR/gradio``) and the wizard's private folder."""
    out = [os.environ.get("GRADIO_TEMP_DIR") or os.path.join(tempfile.gettempdir(), "gradio"),
           os.path.join(tempfile.gettempdir(), "gradio")]
    if created_private_dir() is not None:
        out.append(str(created_private_dir()))
    return list(dict.fromkeys(out))


@dataclass
class PathPolicy:
    """Which local folders a face may read and launch models from.

    ``model_dirs``: None = any (the CLI: the local user); a list = only these (the UI).
    ``allow_unsafe_options``: options that load code, read files outside ``model_dirs`` or widen
    the API may be launched (the UI's ``--allow-unsafe-options``)."""

    model_dirs: list[str] | None = None
    allow_unsafe_options: bool = False

    def allows(self, name: Any) -> bool:
        """Whether model/tokenizer name ``name`` may be read: a Hub/catalog id always; a local path
        only inside ``model_dirs`` and never inside an upload folder. The answer does not depend
        on whether the path exists (the UI must not reveal that)."""
        if not is_local_path(name):
            return True
        if is_inside(name, upload_dirs()):
            return False
        return self.model_dirs is None or is_inside(name, self.model_dirs)


# ---- options -----------------------------------------------------------------------------------

def uses_upload(cfg: Any, dirs: Iterable[str] | None = None) -> list[str]:
    """Dotted fields of ``cfg`` whose value points into an upload folder (:func:`upload_dirs`)."""
    dirs = list(dirs if dirs is not None else upload_dirs())
    if not dirs:
        return []
    d = cfg.model_dump(exclude_none=True) if hasattr(cfg, "model_dump") else dict(cfg)
    hits: list[str] = []
    real_dirs = [_real(x) for x in dirs]

    def visit(prefix: str, v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                visit(f"{prefix}.{k}" if prefix else str(k), x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                visit(prefix, x)
        elif isinstance(v, str):
            obj = _parse_text(v)
            if obj is not v:
                visit(prefix, obj)
                return
            for piece in re.split(r"[:,;\s=]", v):
                if piece and (any(rd in _real(piece) for rd in real_dirs) if is_local_path(piece) else
                              any(rd in piece for rd in real_dirs) or any(x in piece for x in dirs)):
                    hits.append(prefix)
                    return

    visit("", d)
    return sorted(set(hits))
