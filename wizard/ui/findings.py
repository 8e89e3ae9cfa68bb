"""The live validation panel: findings grouped by severity, each with its field and fixes.

Pure rendering helpers (HTML strings and which step a field lives on); the findings themselves
come from :func:`wizard.api.check` (see :mod:`wizard.ui.services`).
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["STEPS", "step_of", "elem_id", "summary_html", "card_html", "MAX_SLOTS", "MAX_FIXES", "ordered"]

#: (tab id, label) in walking order
STEPS: tuple[tuple[str, str], ...] = (
    ("hardware", "1 · Hardware"),
    ("target", "2 · Target model"),
    ("speculation", "3 · Speculation"),
    ("kv", "4 · KV cache"),
    ("plan", "5 · Plan"),
    ("review", "6 · Review & export"),
    ("launch", "7 · Launch & monitor"),
)

MAX_SLOTS = 8  # finding cards with buttons; further findings are listed compactly
MAX_FIXES = 2  # Apply buttons per card

_KV_FIELDS = {
    "kv_cache_dtype", "kv_sharing_fast_prefill", "gpu_memory_utilization", "block_size",
    "enable_prefix_caching", "speculative_config.kv_cache_dtype", "max_num_batched_tokens",
    "max_num_seqs", "enable_chunked_prefill",
}
_HW_FIELDS = {"tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "gpu", "vllm_version"}
_TARGET_FIELDS = {"model", "tokenizer", "revision", "dtype", "quantization", "max_model_len"}


def step_of(path: str) -> str:
    """Tab id showing dotted field ``path`` (unknown fields: the Review step's "other options")."""
    if path in _KV_FIELDS:
        return "kv"
    if path in _HW_FIELDS or path.startswith("gpu"):
        return "hardware"
    if path in _TARGET_FIELDS:
        return "target"
    if path.startswith("speculative_config") or path.startswith("import_notes"):
        return "speculation"
    return "review"


def elem_id(path: str) -> str:
    """DOM id of the form field for ``path`` ('speculative_config.method' -> 'f-speculative_config-method')."""
    return "f-" + path.replace(".", "-")


def ordered(findings: list[Any]) -> list[Any]:
    """Errors, then warnings, then infos (api.check already sorts; kept stable)."""
    return sorted(findings, key=lambda f: f.severity.rank)


def _sev(f: Any) -> str:
    return getattr(f.severity, "value", str(f.severity))


def summary_html(ev: Any, seq: int, extra: list[str] | None = None) -> str:
    """Header of the panel: verdict and counts. ``data-seq`` increments with every check."""
    notes = "".join(f'<div class="sw-note">{html.escape(n)}</div>' for n in (extra or []) + list(getattr(ev, "notes", []) or []))
    if ev is None or ev.config is None:
        return (f'<div id="sw-summary-inner" class="sw-summary sw-empty" data-seq="{seq}" data-verdict="none">'
                "<b>Start by choosing a target model</b> (step 2), importing a command or loading a preset."
                f"{notes}</div>")
    r = ev.report
    counts = {s: sum(1 for f in r.findings if _sev(f) == s) for s in ("error", "warning", "info")}
    label = {"error": "Will fail or mis-serve", "warning": "Runs, with caveats", "ok": "Looks good"}[r.verdict]
    pills = " ".join(
        f'<span class="sw-pill sw-{s}">{n} {s}{"s" if n != 1 else ""}</span>' for s, n in counts.items()
    )
    return (
        f'<div id="sw-summary-inner" class="sw-summary sw-v-{r.verdict}" data-seq="{seq}" data-verdict="{r.verdict}">'
        f'<div class="sw-verdict">{label}</div><div>{pills}</div>'
        f'<div class="sw-small">checked against vLLM {html.escape(r.vllm_version)}</div>{notes}</div>'
    )


def card_html(f: Any, first_of_group: bool, group_count: int) -> str:
    """One finding card (escaped). A group heading precedes the first card of each severity."""
    sev = _sev(f)
    head = ""
    if first_of_group:
        head = f'<div class="sw-group sw-g-{sev}">{sev.capitalize()}s ({group_count})</div>'
    fields = " ".join(f"<code>{html.escape(x)}</code>" for x in f.fields)
    return (
        f'{head}<div class="sw-card sw-{sev}" data-rule="{html.escape(f.rule)}">'
        f'<div class="sw-head"><span class="sw-badge sw-{sev}">{sev.upper()}</span> '
        f'<b>{html.escape(f.rule)}</b> {html.escape(f.title)}</div>'
        f'<div class="sw-msg">{html.escape(f.message)}</div>'
        + (f'<div class="sw-fields">field: {fields}</div>' if fields else "")
        + "</div>"
    )


def overflow_html(rest: list[Any]) -> str:
    """Compact list of findings beyond the card slots."""
    if not rest:
        return ""
    items = "".join(
        f'<li><span class="sw-badge sw-{_sev(f)}">{_sev(f).upper()}</span> <b>{html.escape(f.rule)}</b> '
        f"{html.escape(f.title)}</li>" for f in rest
    )
    return f'<div class="sw-overflow"><div class="sw-small">{len(rest)} more:</div><ul>{items}</ul></div>'
