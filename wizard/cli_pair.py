"""CLI face of prefill/decode pairs: ``python -m wizard pair PREFILL DECODE``.

Each of PREFILL and DECODE is a file holding a ``vllm serve ...`` command line, or a YAML file for
``vllm serve --config`` (``.yaml`` / ``.yml``). ``--to check`` (default) checks both sides and the
pair (exit 0 = no error, 1 = error findings, 2 = unusable input); ``--to commands|k8s|kserve|llm-d``
print the pair's export (:mod:`wizard.io.pd`) after the same check (exit 1, nothing printed on
stdout, when the pair has an error). No domain knowledge here: :mod:`wizard.pairs` checks,
:mod:`wizard.io.pd` exports.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wizard import api
from wizard.config import ConfigError

__all__ = ["add_parser", "cmd_pair", "load_side", "render_pair_text"]


def add_parser(sub) -> None:
    p = sub.add_parser("pair", help="check / export a prefill-decode pair (two configs joined by --kv-transfer-config)")
    p.add_argument("prefill", metavar="PREFILL", help="file: the prefill side's `vllm serve ...` line, or its --config YAML")
    p.add_argument("decode", metavar="DECODE", help="file: the decode side's `vllm serve ...` line, or its --config YAML")
    p.add_argument("--to", choices=("check", "commands", "k8s", "kserve", "llm-d"), default="check")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--vllm-version", metavar="V")
    p.add_argument("--gpu", metavar="NAME[xN]")
    p.add_argument("--offline", action="store_true", help="never contact the Hugging Face Hub")


def load_side(path: str, side: str):
    p = Path(path)
    try:
        if p.suffix.lower() in (".yaml", ".yml"):
            return api.load(config_file=p)
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{side}: cannot read {path!r} ({err.strerror or err})", field=side) from None
    lines = [ln.strip() for ln in text.replace("\\\n", " ").splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise ConfigError(f"{side}: {path!r} holds no `vllm serve ...` command", field=side)
    return api.load(command=" ".join(lines))


def render_pair_text(report) -> str:
    out = [f"pair verdict: {report.verdict} (vLLM {report.vllm_version})"]
    for f in report.findings:
        out.append(f"{f.severity.value.upper():7s} {f.rule} {f.title}")
        out.append(f"        {f.message}")
        for fix in f.fixes:
            out.append(f"        fix ({fix.side}): {fix.patch.description}")
    if not report.findings:
        out.append("no findings")
    return "\n".join(out) + "\n"


def cmd_pair(args: argparse.Namespace) -> int:
    from wizard.io.pd import pd_export  # the pair stack: imported by this command only
    from wizard.pairs import check_pair

    prefill, decode = load_side(args.prefill, "prefill"), load_side(args.decode, "decode")
    report = check_pair(prefill, decode, vllm_version=args.vllm_version, gpu=args.gpu, allow_hub=not args.offline)
    failed = report.verdict == "error"
    if args.to != "check" and not failed:
        sys.stdout.write(pd_export(prefill, decode, args.to, hardware=args.gpu).rstrip("\n") + "\n")
        return 0
    if args.format == "json":
        json.dump(report.as_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        (sys.stderr if args.to != "check" else sys.stdout).write(render_pair_text(report))
    return 1 if failed else 0
