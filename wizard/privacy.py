"""What stays private: which values are secrets, how they are redacted and scrubbed, and the
wizard's private files.

* **Secrets** (:func:`redact_dict`, :func:`redact_config`, :func:`secret_values`, :func:`scrub`):
  a variable whose name ends in TOKEN/SECRET/API_KEY... (:func:`is_secret_env`) or a `vllm serve`
  option whose dest ends in api_key/token/secret/password in vLLM's own parser table
  (:data:`SECRET_OPTION_DESTS`, from ``wizard/data/vllm/<X.Y>/serve_options.json``). Session
  files, exports, browser storage and shown logs hold ``$HF_TOKEN``-style references, never the
  value; ``to_argv`` (which launches) keeps them.
* **Files** (:func:`private_dir`, :func:`write_private`): everything the wizard writes lives in
  one per-process folder of mode 0700 (files 0600), removed when the wizard exits (also when it
  is killed: the launcher's watchdog removes it, :mod:`wizard.launch.watchdog`).

What text may make a launched server do (environment, risky options, paths) is
:mod:`wizard.security`; the threat model is docs/security.md.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping

from wizard.config import config_from_dict
from wizard.vllm import options as vllm_options

__all__ = ["is_secret_env", "dest_of", "secret_dest", "walk_strings", "SECRET_OPTION_DESTS", "secret_ref", "env_for_option",
           "redact_dict", "redact_config", "secret_values", "scrub", "private_dir", "created_private_dir",
           "write_private"]

_SECRET_NAME = re.compile(r"(?:^|_)(?:TOKEN|SECRETS?|KEYS?|PASS|PWD|PASSWD|CREDENTIALS?|AUTH)$|PASSWORD", re.I)


#: variables whose names look like a credential's but hold none: the shell's current and previous
#: folder (``PWD`` would match ``PWD`` as in ``MYSQL_PWD``, and scrubbing it masked every path in a
#: shown argv)
_NOT_SECRET = frozenset({"PWD", "OLDPWD"})


def is_secret_env(name: str) -> bool:
    """Whether variable ``name`` holds a credential: ``*_TOKEN``, ``*_KEY`` (``VLLM_API_KEY``,
    ``OPENAI_API_KEY``, ``AWS_SECRET_ACCESS_KEY``), ``*_SECRET``, ``*PASSWORD*``, ``*_PWD``
    (``MYSQL_PWD``), ``*_CREDENTIALS``; not ``PWD`` / ``OLDPWD`` (the shell's folders)."""
    name = str(name)
    return name.upper() not in _NOT_SECRET and bool(_SECRET_NAME.search(name))


def dest_of(key: str) -> str:
    return str(key).lstrip("-").replace("-", "_")


def walk_strings(v: Any) -> Iterable[str]:
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from walk_strings(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from walk_strings(x)


# ---- secrets -----------------------------------------------------------------------------------

#: `vllm serve` options that carry a credential, over every known release (api_key, hf_token in
#: 0.32): :attr:`wizard.vllm.options.CliVocabulary.secret_dests`, read from each release's
#: serve_options.json once and cached across processes with the rest of the vocabulary
SECRET_OPTION_DESTS = vllm_options.cli_vocabulary().secret_dests
_SECRET_OPTIONS = vllm_options.cli_vocabulary().secret_options


def secret_dest(key: Any) -> str | None:
    """The secret dest (``api_key``, ``hf_token``) that option ``key`` sets in vLLM's parser, in
    any spelling it accepts: ``api_key``, ``--api-key``, ``--api_key=...``, and every prefix argparse
    may expand (``--api-k``, ``--hf-tok``: ``allow_abbrev``); None for other options. A prefix
    that could also be another option counts as secret here (redacting more is harmless)."""
    k = str(key).split("=", 1)[0].split(".", 1)[0]
    dest = dest_of(k)
    if dest in SECRET_OPTION_DESTS:
        return dest
    opt = "--" + dest.replace("_", "-")
    if len(opt) < 4:  # '--a' ... reaches everything; vLLM calls it ambiguous
        return None
    hits = {d for o in _SECRET_OPTIONS if o.startswith(opt) for d in [dest_of(o)]}
    hits = {h.removeprefix("no_") for h in hits}
    return sorted(hits)[0] if hits else None
#: the variable vLLM itself reads for a secret option (vllm/envs.py VLLM_API_KEY; huggingface_hub HF_TOKEN)
_SECRET_ENV_FOR = {"api_key": "VLLM_API_KEY", "hf_token": "HF_TOKEN"}
_REF = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")


def secret_ref(value: Any) -> str | None:
    """The variable name when ``value`` is a reference such as ``$HF_TOKEN``/``${HF_TOKEN}``, else None."""
    m = _REF.match(value) if isinstance(value, str) else None
    return m.group(1) if m else None


def env_for_option(dest: str) -> str:
    """The variable a redacted secret option refers to (api_key -> VLLM_API_KEY)."""
    return _SECRET_ENV_FOR.get(dest, dest.upper())


def _is_secret_value(dest: str, v: Any) -> bool:
    if isinstance(v, bool) or v is None:
        return False
    if isinstance(v, str):
        return bool(v.strip()) and v.strip().lower() not in ("true", "false") and secret_ref(v) is None
    if isinstance(v, list):
        return any(_is_secret_value(dest, x) for x in v)
    return True


def redact_dict(d: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of config dict ``d`` with secret values replaced by references: ``env.HF_TOKEN``
    -> ``"$HF_TOKEN"``, ``extra_args.api_key`` -> ``"$VLLM_API_KEY"`` (a list keeps its length)."""
    out = dict(d)
    env = out.get("env")
    if isinstance(env, dict) and any(is_secret_env(k) for k in env):
        out["env"] = {k: (f"${k}" if is_secret_env(k) and secret_ref(v) is None else v) for k, v in env.items()}
    extra = out.get("extra_args")
    if isinstance(extra, dict):
        new = {}
        for k, v in extra.items():
            dest = secret_dest(k)
            if dest is not None and _is_secret_value(dest, v):
                ref = f"${env_for_option(dest)}"
                v = [ref] * len(v) if isinstance(v, list) else ref
            new[k] = v
        out["extra_args"] = new
    inv = out.get("invalid_values")
    if isinstance(inv, dict):
        out["invalid_values"] = {k: (f"${env_for_option(secret_dest(k))}" if secret_dest(k) is not None
                                     and _is_secret_value(secret_dest(k), v) else v) for k, v in inv.items()}
    # whatever else repeats a secret value (import notes: a repeated --api-key keeps every value)
    values = set(secret_values(d))
    for note in out.get("import_notes") or []:
        if isinstance(note, dict) and _note_is_secret(note):
            detail = note.get("detail") or {}
            held = [detail.get(k) for k in ("values", "value", "raw", "shorthand_value", "config_value", "dropped")]
            values |= {x for x in walk_strings(held) if len(x) >= 4 and secret_ref(x) is None}
    values = sorted(values, key=len, reverse=True)
    if values:
        for k in list(out):
            if k not in ("env", "extra_args"):
                out[k] = _scrub_deep(out[k], values)
    return out


def _note_is_secret(note: Mapping[str, Any]) -> bool:
    """Whether an import note is about a credential option (its field, key or option names one)."""
    detail = note.get("detail") if isinstance(note.get("detail"), dict) else {}
    names = [note.get("field"), detail.get("key"), detail.get("option"), detail.get("flag"), detail.get("old")]
    return any(isinstance(n, str) and secret_dest(n.rsplit(".", 1)[-1]) is not None for n in names)


def _scrub_deep(v: Any, values: list[str]) -> Any:
    if isinstance(v, str):
        return scrub(v, values)
    if isinstance(v, dict):
        return {k: _scrub_deep(x, values) for k, x in v.items()}
    if isinstance(v, list):
        return [_scrub_deep(x, values) for x in v]
    if isinstance(v, tuple):
        return tuple(_scrub_deep(x, values) for x in v)
    return v


def redact_config(cfg: Any) -> Any:
    """:func:`redact_dict` on a ServeConfig (returns a ServeConfig; the input is unchanged)."""
    d = cfg.model_dump(exclude_none=True)
    if cfg.speculative_config is not None:
        d["speculative_config"] = cfg.speculative_config.model_dump(exclude_none=True)
    red = redact_dict(d)
    if red == d:
        return cfg
    return config_from_dict(red)


def secret_values(cfg: Any = None, environ: Mapping[str, str] | None = None, argv: Iterable[str] = ()) -> list[str]:
    """Secret values to hide from shown logs: secret variables of ``environ`` and ``cfg.env``,
    secret options of ``cfg`` (a ServeConfig or its dict; any spelling, :func:`secret_dest`)
    and the values after a secret option in ``argv`` (every value of ``--api-key K1 K2``)
    (longest first; values shorter than 4 characters are not worth hiding and would mangle logs)."""
    vals: set[str] = set()
    for k, v in (environ or {}).items():
        if is_secret_env(k) and isinstance(v, str):
            vals.add(v)
    if cfg is not None:
        get = cfg.get if isinstance(cfg, Mapping) else (lambda name, default=None: getattr(cfg, name, default))
        for k, v in (get("env", None) or {}).items():
            if is_secret_env(k) and isinstance(v, str) and secret_ref(v) is None:
                vals.add(v)
        for part in ("extra_args", "invalid_values"):
            for k, v in (get(part, None) or {}).items():
                if secret_dest(k) is not None:
                    for s in walk_strings(v):
                        if secret_ref(s) is None:
                            vals.add(s)
    argv = list(argv)
    for i, a in enumerate(argv):
        if not a.startswith("--") or secret_dest(a) is None:
            continue
        if "=" in a:
            vals.add(a.split("=", 1)[1])
            continue
        j = i + 1
        while j < len(argv) and not argv[j].startswith("-"):
            vals.add(argv[j])
            j += 1
    return sorted((v for v in vals if len(v) >= 4 and v.lower() not in ("true", "false")), key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every value of ``secrets`` replaced by ``***``."""
    for s in secrets:
        if s and s in text:
            text = text.replace(s, "***")
    return text


# ---- private files -----------------------------------------------------------------------------

_PRIVATE: dict[str, Any] = {"dir": None}
_PRIVATE_LOCK = threading.Lock()


def private_dir(sub: str | None = None) -> Path:
    """The wizard's per-process folder (mode 0700, under $TMPDIR), or ``sub`` folder in it
    (0700). Created on first use; removed at exit (atexit) and by the launcher's watchdog when
    the process is killed."""
    with _PRIVATE_LOCK:
        if _PRIVATE["dir"] is None or not Path(_PRIVATE["dir"]).is_dir():
            d = Path(tempfile.mkdtemp(prefix=f"specwizard-{os.getpid()}-"))  # mkdtemp: mode 0700
            os.chmod(d, 0o700)
            _PRIVATE["dir"] = d
            atexit.register(_cleanup_private, d)
            try:
                from wizard.launch.watchdog import watchdog  # here: `check` starts without the launch stack

                watchdog().remove_on_exit(d)
            except Exception:  # the watchdog is a safety net, not a requirement
                pass
        base: Path = _PRIVATE["dir"]
    if not sub:
        return base
    p = base / sub
    p.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(p, 0o700)
    return p


def _cleanup_private(d: Path) -> None:
    shutil.rmtree(d, ignore_errors=True)
    if _PRIVATE["dir"] == d:
        _PRIVATE["dir"] = None


def write_private(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` with mode 0600 (created so; never readable by others, even
    for a moment), creating its folder with mode 0700."""
    p = Path(path)
    p.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
    return p



def created_private_dir() -> Path | None:
    """The private folder when it exists already (None before the first :func:`private_dir`)."""
    return _PRIVATE["dir"]
