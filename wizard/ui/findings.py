"""The live check panel as one HTML fragment: verdict, hints, findings grouped by severity,
each card with its field, "Go to field" and its fixes ("Apply: ..."), and Undo.

Pure rendering (escaped HTML strings, which step a field lives on); the findings come from
:func:`wizard.api.check_context`. The buttons carry data attributes that the panel's
``js_on_load`` (:data:`wizard.ui.theme.PANEL_JS`) turns into one ``click`` event with the
rule and fix description: the server finds the fix again in the current check, so a click on
a card rendered a moment earlier never applies a fix that no longer exists.
"""

from __future__ import annotations

from wizard.privacy import scrub, secret_values

import html
import json
import re
from typing import Any

__all__ = ["STEPS", "step_of", "elem_id", "panel_html", "summary_html", "card_html", "MAX_CARDS", "MAX_FIXES",
           "ordered", "fix_label", "patch_summary", "face_text", "md_code", "md_text"]

#: (tab id, label) in walking order
STEPS: tuple[tuple[str, str], ...] = (
    ("hardware", "1 · Hardware"),
    ("target", "2 · Target"),
    ("speculation", "3 · Speculation"),
    ("kv", "4 · KV cache"),
    ("plan", "5 · Plan"),
    ("review", "6 · Review"),
    ("launch", "7 · Launch"),
)

MAX_CARDS = 24  # finding cards with buttons; further findings are listed compactly
MAX_FIXES = 3  # Apply buttons per card
FIX_LABEL_CHARS = 40  # characters of a fix's description on its button (the whole text is its tooltip)

_KV_FIELDS = {
    "kv_cache_dtype", "kv_sharing_fast_prefill", "gpu_memory_utilization", "block_size",
    "enable_prefix_caching", "speculative_config.kv_cache_dtype", "max_num_batched_tokens",
    "max_num_seqs", "enable_chunked_prefill", "enforce_eager",
}
_HW_FIELDS = {"tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "gpu", "vllm_version"}
_TARGET_FIELDS = {"model", "tokenizer", "revision", "dtype", "quantization", "max_model_len", "allow_hub"}

#: what the CLI says (its commands and options), and what a web user is told instead: where the same
#: choice is made in the UI. Regular expressions over the shared cores' text (model lookups, rules,
#: the machine comparison, the planner), applied by :func:`face_text`.
_CLI_POINTERS = ((r"\(python -m wizard models to list\)", "(see the Catalog list in step 2)"),
                 (r"\(python -m wizard models\)", "(the Catalog list in step 2)"),
                 (r"\s*\(CLI: --gpu cpu\)", " in step 1 (Hardware)"),
                 (r"\buse --gpu cpu\b", "choose the hardware 'cpu' in step 1"),
                 (r"\b(?:give|pass) --gpu(?: NAME\[xN\])?", "choose the hardware in step 1"),
                 (r"\(--gpu\)", "(step 1)"),
                 (r"\bfollow --gpu\b", "follow the hardware of step 1"),
                 (r"\s*\(--kv-cache-space-gib\)", ""),
                 (r"\b(?:python -m )?wizard tune\b", "Tune k (step 7)"))
_CLI_POINTER_RES = tuple((re.compile(a), b) for a, b in _CLI_POINTERS)


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


def face_text(text: str) -> str:
    """A finding's text for the web face: pointers to CLI commands become pointers into the UI."""
    for cli, ui in _CLI_POINTER_RES:
        text = cli.sub(ui, text)
    return text


def md_code(text: Any) -> str:
    """``text`` as one Markdown code span, escaped once: the Markdown renderer escapes a code span's
    content itself (``html.escape`` inside backticks showed ``&quot;``), so the text goes in as is,
    on one line, fenced by more backticks than any run of them in it (a backtick in the text never
    ends the span early)."""
    s = " ".join(str(text).splitlines())
    run = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (run + 1)
    pad = " " if not s or s[0] == "`" or s[-1] == "`" or (s[0] == " " and s[-1] == " ") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


_TICKS = re.compile(r"`+")


def _md_words(s: str) -> str:
    """Words for Markdown, HTML-escaped; backslashes and stray backticks as entities, so that they
    neither escape nor open anything next to the code spans :func:`md_text` writes."""
    return html.escape(s).replace("\\", "&#92;").replace("`", "&#96;")


def md_text(text: Any) -> str:
    """Text that mixes words and Markdown code spans (```--opt` = `{"a": 1}`: reads code```) for a
    Markdown view, escaped once: the words HTML-escaped, each code span (found as CommonMark finds
    them: a run of n backticks up to the next run of exactly n) kept as text through
    :func:`md_code`. On one line, so nothing in it starts a block of its own."""
    s = " ".join(str(text).splitlines())
    out: list[str] = []
    i = 0
    while True:
        m = _TICKS.search(s, i)
        if m is None:
            out.append(_md_words(s[i:]))
            break
        n = len(m.group())
        close = next((c for c in _TICKS.finditer(s, m.end()) if len(c.group()) == n), None)
        if close is None:  # no closing run of the same length: the backticks are literal
            out.append(_md_words(s[i:m.end()]))
            i = m.end()
            continue
        out.append(_md_words(s[i:m.start()]))
        body = s[m.end():close.start()]
        if len(body) >= 2 and body[0] == " " and body[-1] == " " and body.strip():
            body = body[1:-1]
        out.append(md_code(body))
        i = close.end()
    return "".join(out)


def _sev(f: Any) -> str:
    return getattr(f.severity, "value", str(f.severity))


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def fix_label(description: str, limit: int = FIX_LABEL_CHARS) -> str:
    """The short button text of a fix: its description cut at a word boundary (with an ellipsis)."""
    d = " ".join(str(description).split())
    if len(d) <= limit:
        return d
    cut = d[:limit].rsplit(" ", 1)[0] if " " in d[:limit] else d[:limit]
    return cut.rstrip(" ,;:(") + "…"


def patch_summary(patch: Any) -> str:
    """'set a = 1; unset b' for a Patch (its whole effect, for the button's tooltip)."""
    bits = [f"set {k} = {json.dumps(v) if not isinstance(v, str) else v}" for k, v in dict(patch.set).items()]
    bits += [f"unset {k}" for k in patch.unset]
    return "; ".join(bits)


def summary_html(ev: Any, seq: int, hints: list[str] | None = None, note: str | None = None) -> str:
    """Header of the panel: verdict, counts, the version checked against, hints where checks are
    off (``hints``) and the last action (``note``). ``data-seq`` increments with every check."""
    extra = "".join(f'<div class="sw-note">{_e(n)}</div>' for n in (hints or []))
    extra += f'<div class="sw-action-note">{_e(note)}</div>' if note else ""
    if ev is None or ev.config is None:
        return (f'<div id="sw-summary-inner" class="sw-summary sw-empty" data-seq="{seq}" data-verdict="none">'
                "<b>Start by choosing a target model</b> (step 2), importing a command or loading a preset."
                f"{extra}</div>")
    r = ev.report
    counts = {s: sum(1 for f in r.findings if _sev(f) == s) for s in ("error", "warning", "info")}
    label = {"error": "Will fail or mis-serve", "warning": "Runs, with caveats", "ok": "Looks good"}[r.verdict]
    pills = " ".join(f'<span class="sw-pill sw-{s}">{n} {s}{"s" if n != 1 else ""}</span>' for s, n in counts.items())
    return (f'<div id="sw-summary-inner" class="sw-summary sw-v-{r.verdict}" data-seq="{seq}" data-verdict="{r.verdict}">'
            f'<div class="sw-verdict">{label}</div><div>{pills}</div>'
            f'<div class="sw-small">checked against vLLM {_e(r.vllm_version)}</div>{extra}</div>')


def card_html(f: Any, index: int) -> str:
    """One finding card (escaped) with its "Go to field" and fix buttons."""
    sev = _sev(f)
    fields = " ".join(f"<code>{_e(x)}</code>" for x in f.fields)
    buttons = []
    if f.fields:
        fld = f.fields[0]
        buttons.append(f'<button class="sw-btn sw-goto" data-sw-goto="{_e(elem_id(fld))}" data-sw-step="{step_of(fld)}" '
                       f'title="Show {_e(fld)} in step {_e(step_of(fld))}">Go to field</button>')
    for p in f.fixes[:MAX_FIXES]:
        tip = f"{p.description}\n{patch_summary(p)}"
        buttons.append(f'<button class="sw-btn sw-fix" data-sw-fix="{_e(p.description)}" data-sw-rule="{_e(f.rule)}" '
                       f'title="{_e(tip)}">Apply: {_e(fix_label(p.description))}</button>')
    return (f'<div class="sw-slot" id="sw-slot-{index}" data-rule="{_e(f.rule)}">'
            f'<div class="sw-card sw-{sev}" data-rule="{_e(f.rule)}">'
            f'<div class="sw-head"><span class="sw-badge sw-{sev}">{sev.upper()}</span> '
            f'<b>{_e(f.rule)}</b> {_e(f.title)}</div>'
            f'<div class="sw-msg">{_e(face_text(f.message))}</div>'
            + (f'<div class="sw-fields">field: {fields}</div>' if fields else "")
            + (f'<div class="sw-actions">{"".join(buttons)}</div>' if buttons else "")
            + "</div></div>")


def overflow_html(rest: list[Any]) -> str:
    """Compact list of findings beyond the cards."""
    if not rest:
        return ""
    items = "".join(f'<li><span class="sw-badge sw-{_sev(f)}">{_sev(f).upper()}</span> <b>{_e(f.rule)}</b> '
                    f"{_e(f.title)}</li>" for f in rest)
    return f'<div class="sw-overflow"><div class="sw-small">{len(rest)} more:</div><ul>{items}</ul></div>'


def panel_html(ev: Any, seq: int, *, hints: list[str] | None = None, note: str | None = None,
               undo: str | None = None) -> str:
    """The whole panel: summary, Undo (``undo``: label of the step it reverts), then the cards,
    each severity group headed by its own count."""
    parts = [summary_html(ev, seq, hints, note)]
    if undo:
        parts.append(f'<div class="sw-undo-row"><button class="sw-btn sw-undo" id="sw-undo" data-sw-undo="1" '
                     f'title="Undo: {_e(undo)}">↶ Undo: {_e(fix_label(undo, 48))}</button></div>')
    items = ordered(ev.report.findings) if ev is not None and ev.report is not None else []
    counts: dict[str, int] = {}
    for f in items:
        counts[_sev(f)] = counts.get(_sev(f), 0) + 1
    prev = None
    for i, f in enumerate(items[:MAX_CARDS]):
        sev = _sev(f)
        if sev != prev:
            parts.append(f'<div class="sw-group sw-g-{sev}" data-count="{counts[sev]}">{sev.capitalize()}s ({counts[sev]})</div>')
            prev = sev
        parts.append(card_html(f, i))
    parts.append(overflow_html(items[MAX_CARDS:]))
    out = "".join(parts)
    cfg = getattr(ev, "config", None) if ev is not None else None
    if cfg is not None:  # a finding may quote a credential (SD004's repeated --api-key, a rename fix)
        secrets = secret_values(cfg)
        out = scrub(out, secrets + [html.escape(x) for x in secrets if html.escape(x) != x])
    return out
