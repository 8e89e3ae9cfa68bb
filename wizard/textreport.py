"""Plain-text rendering of a Report (CLI face).

Fix lines show the patch as ``[set PATH=VALUE; unset PATH]``, except for patches that touch
``import_notes`` (internal record of how the input was spelled): those show the description
only. The trailing line is the normalised ``vllm serve`` command. The JSON output
(``Report.as_json``) is unchanged by this module.
"""

from __future__ import annotations

import json

__all__ = ["render_text", "long_form_label"]

_ICON = {"error": "ERROR", "warning": "WARN ", "info": "INFO "}


def render_text(report) -> str:
    lines = [f"vLLM {report.vllm_version}: verdict {report.verdict.upper()} "
             f"({sum(f.severity.value == 'error' for f in report.findings)} error(s), "
             f"{sum(f.severity.value == 'warning' for f in report.findings)} warning(s))"]
    for f in report.findings:
        lines.append(f"{_ICON[f.severity.value]} {f.rule} {f.title}")
        lines.append(f"       {f.message}")
        if f.fields:
            lines.append(f"       fields: {', '.join(f.fields)}")
        for i, fix in enumerate(f.fixes, 1):
            # import_notes.* are internal bookkeeping (how the input was spelled): the description says it all
            parts = [f"set {k}={json.dumps(v)}" for k, v in fix.set.items() if not k.startswith("import_notes")]
            parts += [f"unset {k}" for k in fix.unset if not k.startswith("import_notes")]
            internal = any(k.startswith("import_notes") for k in list(fix.set) + list(fix.unset))
            lines.append(f"       fix {i}: {fix.description}" + (f" [{'; '.join(parts)}]" if parts and not internal else ""))
    lines.append("")
    lines.append("normalised command:")
    lines.append(report.command)
    if getattr(report, "long_command", ""):
        lines.append("")
        lines.append(long_form_label(report))
        lines.append(report.long_command)
    return "\n".join(lines) + "\n"


def long_form_label(report) -> str:
    """The heading of the long form, naming what was rewritten (the report's facts): a speculators
    checkpoint given as the model (the verifier becomes the model, the checkpoint the drafter)
    and/or abbreviated options spelled out."""
    what = []
    checkpoint = getattr(report, "speculators_checkpoint", None)
    if checkpoint:
        what.append(f"the speculators checkpoint {checkpoint} served as verifier {report.verifier} + drafter")
    spelled = list(getattr(report, "abbreviations", None) or [])
    if spelled:
        opts = ", ".join("--" + k.replace("_", "-") for k in spelled[:6]) + (" ..." if len(spelled) > 6 else "")
        what.append(f"abbreviated option{'s' if len(spelled) > 1 else ''} {opts} spelled out")
    return "long form (what vLLM builds from it" + (": " + "; ".join(what) if what else "") + "):"
