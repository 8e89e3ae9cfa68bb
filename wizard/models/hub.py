"""Inspect a Hugging Face Hub model without downloading weights.

* ``config.json`` (else Mistral ``params.json``) through ``huggingface_hub.hf_hub_download``,
  which stores it in huggingface_hub's own cache (``HF_HUB_CACHE``); later calls, and calls with
  ``HF_HUB_OFFLINE=1``, are answered from that cache.
* tensor names, shapes and dtypes through ``HfApi().get_safetensors_metadata`` (HTTP range
  requests for the safetensors headers only; kept in an in-process cache).

Both go through :func:`wizard.models.config_json.info_from_config` / ``apply_tensor_facts``, the code
used for local folders.

Errors: :class:`wizard.models.info.ModelLookupError` with a message that names the repo and the fix:
offline (``HF_HUB_OFFLINE=1`` without a cached config, or a connection error), repository not
found, gated repository, unknown revision, no config.json.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from wizard.models.config_json import info_from_config
from wizard.models.info import NOT_A_REPO_ID, ModelInfo, ModelLookupError, TensorInfo
from wizard.models.tensors import apply_tensor_facts

__all__ = ["inspect_hub", "offline_message", "hub_offline", "hub_endpoint", "hub_reachable"]

#: seconds the reachability probe waits for DNS + TCP connect to the Hub endpoint
PROBE_TIMEOUT_S = 1.5
#: seconds a probe result is reused (per endpoint)
PROBE_TTL_S = 60.0
_probe_cache: dict[str, tuple[float, bool]] = {}


def offline_message(repo_id: str) -> str:
    return (
        f"could not reach the Hugging Face Hub for '{repo_id}' (offline?): use a local folder, a catalog id "
        "(python -m wizard models to list), or set HF_HUB_OFFLINE=0"
    )


def hub_offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` (or the older ``TRANSFORMERS_OFFLINE``) is set to a true value."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(var, "").strip().upper() in ("1", "ON", "YES", "TRUE"):
            return True
    try:
        from huggingface_hub import constants

        return bool(constants.HF_HUB_OFFLINE)
    except Exception:  # pragma: no cover
        return False


def hub_endpoint() -> str:
    """The Hub base URL: ``HF_ENDPOINT`` (read now, so a changed environment counts), else
    huggingface_hub's configured endpoint (https://huggingface.co)."""
    env = os.environ.get("HF_ENDPOINT", "").strip()
    if env:
        return env.rstrip("/")
    try:
        from huggingface_hub import constants

        return str(constants.ENDPOINT).rstrip("/")
    except Exception:  # pragma: no cover
        return "https://huggingface.co"


def hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """One DNS lookup + TCP connect to the Hub endpoint's host:port, bounded by ``timeout``
    seconds (s) even when DNS hangs (it runs in a daemon thread). The answer is cached per
    endpoint for :data:`PROBE_TTL_S` seconds, so a check costs at most one probe a minute.

    Why: without it an unreachable Hub costs ~20 s of huggingface_hub's own retries per model
    ("Name or service not known ... Retrying in 1s [Retry 1/5]"). Never raises."""
    import socket
    import threading
    import time
    from urllib.parse import urlsplit

    url = hub_endpoint()
    now = time.monotonic()
    hit = _probe_cache.get(url)
    if hit is not None and now - hit[0] < PROBE_TTL_S:
        return hit[1]
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        host, port = None, 0
    result = {"ok": False}

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                result["ok"] = True
        except (OSError, ValueError):
            result["ok"] = False

    if host:
        t = threading.Thread(target=probe, daemon=True, name="wizard-hub-probe")
        t.start()
        t.join(timeout + 0.5)
    ok = bool(result["ok"])
    _probe_cache[url] = (now, ok)
    return ok


class _QuietHub:
    """Silence huggingface_hub's retry warnings ("Retrying in 1s [Retry 1/5]") while we call it:
    a failure is reported once, by our own message."""

    def __enter__(self):
        import logging

        self._logger = logging.getLogger("huggingface_hub")
        self._level = self._logger.level
        self._logger.setLevel(logging.ERROR)
        return self

    def __exit__(self, *exc):
        self._logger.setLevel(self._level)


def _is_connection_error(err: BaseException) -> bool:
    names = {c.__name__ for c in type(err).__mro__}
    return bool(
        names
        & {
            "ConnectionError", "Timeout", "TimeoutException", "ConnectError", "ConnectTimeout", "ReadTimeout",
            "NetworkError", "TransportError", "ProxyError", "OfflineModeIsEnabled", "LocalEntryNotFoundError",
            "gaierror",
        }
    )


def _download(repo_id: str, filename: str, revision: str | None, cache_dir: str | None, offline: bool) -> str:
    from huggingface_hub import hf_hub_download

    with _QuietHub():
        return hf_hub_download(
            repo_id, filename, revision=revision, cache_dir=cache_dir, local_files_only=offline, etag_timeout=5
        )


def _fetch_config(repo_id: str, revision: str | None, cache_dir: str | None, offline: bool) -> tuple[Any, bool, list[str]]:
    from huggingface_hub import errors as hf_errors

    notes: list[str] = []
    last: BaseException | None = None
    for filename, native in (("config.json", False), ("params.json", True)):
        try:
            path = _download(repo_id, filename, revision, cache_dir, offline)
        except hf_errors.GatedRepoError:
            raise ModelLookupError(
                f"'{repo_id}' is a gated repository on the Hugging Face Hub: accept its license and log in "
                "(hf auth login / HF_TOKEN), or use a local folder or a catalog id"
            ) from None
        except hf_errors.RepositoryNotFoundError:
            raise ModelLookupError(
                f"'{repo_id}' was not found on the Hugging Face Hub (nor as a local folder or catalog id): "
                "check the spelling, or log in for a private repository"
            ) from None
        except hf_errors.RevisionNotFoundError:
            raise ModelLookupError(f"revision '{revision}' of '{repo_id}' was not found on the Hugging Face Hub: check --revision") from None
        except hf_errors.EntryNotFoundError as err:  # includes RemoteEntryNotFoundError
            if isinstance(err, hf_errors.LocalEntryNotFoundError):
                last = err
                break
            last = err
            continue
        except hf_errors.HFValidationError as err:
            raise ModelLookupError(f"'{repo_id}' {NOT_A_REPO_ID}: {err}") from None
        except Exception as err:
            if _is_connection_error(err) or offline:
                raise ModelLookupError(offline_message(repo_id)) from None
            raise ModelLookupError(f"Hugging Face Hub lookup of '{repo_id}' failed: {type(err).__name__}: {err}") from None
        try:
            with open(path, encoding="utf-8-sig") as fh:
                return json.load(fh), native, notes
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
            notes.append(f"{filename} from the Hub cache is unreadable ({type(err).__name__}); no fields read")
            return None, native, notes
    from huggingface_hub import errors as hf_errors2

    if last is not None and isinstance(last, hf_errors2.LocalEntryNotFoundError):
        raise ModelLookupError(offline_message(repo_id))
    raise ModelLookupError(f"'{repo_id}' on the Hugging Face Hub has no config.json (nor params.json): is it a model repository?")


@functools.lru_cache(maxsize=128)
def _safetensors_meta(repo_id: str, revision: str | None) -> tuple[dict[str, TensorInfo], int] | str:
    """(tensors, total bytes) or the reason it is unavailable."""
    try:
        from huggingface_hub import HfApi

        with _QuietHub():
            meta = HfApi().get_safetensors_metadata(repo_id, revision=revision, timeout=10)
    except Exception as err:
        return f"safetensors metadata unavailable ({type(err).__name__})"
    tensors: dict[str, TensorInfo] = {}
    total = 0
    for fmeta in (meta.files_metadata or {}).values():
        for name, t in (fmeta.tensors or {}).items():
            try:
                tensors[name] = TensorInfo(shape=list(t.shape), dtype=str(t.dtype))
                total += int(t.data_offsets[1]) - int(t.data_offsets[0])
            except Exception:
                continue
    return tensors, total


def inspect_hub(repo_id: str, revision: str | None = None, *, cache_dir: str | None = None) -> ModelInfo:
    """ModelInfo for a Hub repo from config.json and safetensors headers (no weight download).

    ``cache_dir`` overrides huggingface_hub's cache folder (tests use a local HF-cache layout).
    With ``HF_HUB_OFFLINE=1`` only the cache is used and tensor facts stay unknown (None).

    Raises:
        ModelLookupError: offline without a cached config, connection error, repo/revision not
            found, gated repo, or no config.json/params.json in the repo.
    """
    offline = hub_offline()
    unreachable = not offline and not hub_reachable()
    # no network: answer from huggingface_hub's cache only (fast), else the clear "offline?" message
    raw, native, notes = _fetch_config(repo_id, revision, cache_dir, offline or unreachable)
    if unreachable:
        offline = True
        notes.append(f"Hugging Face Hub endpoint {hub_endpoint()} unreachable: answered from the local cache")
    if raw is None:
        return ModelInfo(id=repo_id, source="hub", notes=notes)
    info = info_from_config(raw, id=repo_id, source="hub", notes=notes, native_mistral=native)
    if offline:
        info.notes.append("HF_HUB_OFFLINE: safetensors headers not fetched; tensor facts unknown")
        return info
    meta = _safetensors_meta(repo_id, revision)
    if isinstance(meta, str):
        info.notes.append(meta + "; tensor facts unknown")
        return info
    tensors, total = meta
    if tensors:
        apply_tensor_facts(info, list(tensors), tensors, total_size=total or None)
    return info


def repo_id_problem(name: str) -> str | None:
    """huggingface_hub's reason ``name`` is no Hub repo id at all (``validate_repo_id``), None when
    it is one: checked without the network, so an offline check still knows no Hub serves it."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError as err:
        return str(err)
    return None
