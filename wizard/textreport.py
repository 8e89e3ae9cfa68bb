"""Plain-text rendering of a Report (CLI face)."""

from __future__ import annotations

import json

__all__ = ["render_text"]

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
            parts = [f"set {k}={json.dumps(v)}" for k, v in fix.set.items()] + [f"unset {k}" for k in fix.unset]
            lines.append(f"       fix {i}: {fix.description} [{'; '.join(parts)}]")
    lines.append("")
    lines.append(report.command)
    return "\n".join(lines) + "\n"
