"""Step 6 · Review & export: command (JSON and dotted), YAML, Python, scale-out forms, other
options, and vLLM's own verdict beside the wizard's (wizard.vllm.crosscheck)."""

from __future__ import annotations

import hashlib
import html
import json
import re

import gradio as gr

from wizard.config import SERVE_FIELDS
from wizard.launch.launcher import review_launch

from wizard.privacy import private_dir, write_private
from wizard.ui import services
from wizard.ui.findings import md_code
from wizard.ui.core import WizardUI, sess_of
from wizard.ui.state import MAX_BOX_CHARS, config_of, config_problem
from wizard.ui.steps.launch import vllm_installed

__all__ = ["build", "wire", "wizard_verdict_html", "cross_check_html", "exports", "extra_args_problem"]

XC_OFF = '<div class="sw-xc sw-xc-off"><b>vLLM</b><div>Cross-check is off.</div></div>'
XC_STALE = '<div class="sw-xc sw-xc-stale"><b>vLLM</b><div>Configuration changed: press Re-run cross-check.</div></div>'


def _refused_keys(parsed: dict) -> str | None:
    """Options the box may not carry: one the form models itself (written twice, the export would
    give vLLM both and the last would win) or a null value (no value vLLM's parser reads)."""
    modelled = sorted(k for k in parsed if isinstance(k, str)
                      and k.replace("-", "_") in (*SERVE_FIELDS, "speculative_config"))
    if modelled:
        return (f"{', '.join(modelled)}: set in its own field of the form, not in Other options (the command "
                "would give it twice and vLLM keeps the last)")
    nulls = sorted(str(k) for k, v in parsed.items() if v is None)
    if nulls:
        return f"{', '.join(nulls)}: null is not a value vLLM's parser reads; give a value or remove the key"
    return None


def extra_args_problem(value) -> str | None:
    """Why the "Other options" text ``value`` is not used although it is JSON -- more options or
    values than a configuration holds (:func:`wizard.ui.state.config_problem`), an option the form
    models itself, a null value -- or None."""
    try:
        parsed = json.loads(value) if isinstance(value, str) and len(value) <= MAX_BOX_CHARS and value.strip() else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict) or not parsed:
        return None
    return config_problem({"extra_args": parsed}) or _refused_keys(parsed)


def _set_extra_args(state: dict, value) -> dict:
    """The "Other options" box: a JSON object replaces extra_args; other text -- not a JSON object,
    or one beyond the budgets (more than MAX_OPTIONS options) -- is kept in ``raw['extra_args']``
    (shown as typed, the last valid options stay in use)."""
    st = dict(state)
    st["raw"] = dict(st.get("raw") or {})
    try:
        parsed = json.loads(value) if str(value or "").strip() else {}
        if not isinstance(parsed, dict):
            raise ValueError("not an object")
        if parsed and (config_problem({"extra_args": parsed}) is not None or _refused_keys(parsed) is not None):
            raise ValueError("beyond the budget, or an option the form models / a null value")
        st["config"] = dict(st.get("config") or {"model": ""})
        if parsed:
            st["config"]["extra_args"] = parsed
        else:
            st["config"].pop("extra_args", None)
        st["raw"].pop("extra_args", None)
    except (ValueError, RecursionError):
        st["raw"]["extra_args"] = value
    return st


def build(ui: WizardUI) -> None:
    ui.c["exp_command"] = gr.Textbox(label="vllm serve (JSON --speculative-config)", lines=2, max_lines=8,
                                     interactive=False, buttons=["copy"], elem_id="sw-exp-command", elem_classes=["sw-mono"])
    ui.c["exp_dotted"] = gr.Textbox(label="vllm serve (dotted --speculative-config.KEY)", lines=2, max_lines=8,
                                    interactive=False, buttons=["copy"], elem_id="sw-exp-dotted", elem_classes=["sw-mono"])
    with gr.Row():
        ui.c["exp_yaml"] = gr.Code(label="YAML for `vllm serve --config`", language="yaml", lines=8, max_lines=16, interactive=False,
                                   buttons=["copy"], elem_id="sw-exp-yaml")
        ui.c["exp_python"] = gr.Code(label="Python (vllm.LLM)", language="python", lines=8, max_lines=16, interactive=False,
                                     buttons=["copy"], elem_id="sw-exp-python")
    ui.c["exp_yaml_dl"] = gr.DownloadButton("Download YAML", value=None, elem_id="sw-exp-yaml-dl", size="sm")
    with gr.Accordion("Scale-out: multi-GPU, multi-node, Docker, Kubernetes, Helm, KServe, llm-d, Ray", open=False):
        for form in services.SCALEOUT_FORMS:
            yaml_form = form in ("k8s", "helm", "kserve", "llm-d")
            ui.c[f"exp_{form}"] = gr.Code(label=form, language="yaml" if yaml_form else "shell", lines=6, max_lines=20,
                                          interactive=False, buttons=["copy"], elem_id=f"sw-exp-{form}")
    ui.field("extra_args", gr.Code(label="Other options (not modelled by the wizard; kept verbatim, JSON)", language="json",
                                   lines=3, max_lines=10, interactive=True, elem_id="f-extra_args"),
             to_form=lambda v: json.dumps(v or {}, indent=1), setter=_set_extra_args, check=extra_args_problem)
    ui.c["extra_note"] = gr.Markdown(elem_id="sw-extra-note")
    gr.Markdown("### Wizard vs installed vLLM")
    with gr.Row():
        ui.c["xc_toggle"] = gr.Checkbox(False, label="Cross-check with installed vLLM (runs vLLM's own config validation "
                                                     "in a separate process; takes seconds)", elem_id="sw-xc-toggle")
        ui.c["xc_rerun"] = gr.Button("Re-run cross-check", size="sm", elem_id="sw-xc-rerun", scale=0)
    with gr.Row(equal_height=True):
        ui.c["xc_wizard"] = gr.HTML(elem_id="sw-xc-wizard")
        ui.c["xc_vllm"] = gr.HTML(XC_OFF, elem_id="sw-xc-vllm")
    c = ui.c
    outs = [c["xc_wizard"], c["exp_yaml_dl"], c["extra_note"], c["xc_vllm"]]
    outs += [c[f"exp_{f}"] for f in services.EXPORT_FORMS + services.SCALEOUT_FORMS]
    ui.react("review", ("",), outs, exports, sync=True)


def _yaml_file(text: str) -> str | None:
    """The "Download YAML" file (credentials already redacted by wizard.io.export), mode 0600 in the
    wizard's private folder."""
    if text.startswith("# yaml export not available") or text.startswith("# choose"):
        return None
    h = hashlib.sha1(text.encode()).hexdigest()[:12]
    p = private_dir("downloads") / h / "vllm-serve.yaml"
    if not p.exists():
        write_private(p, text)
    return str(p)


def wizard_verdict_html(ev) -> str:
    if ev is None or ev.report is None:
        return '<div class="sw-xc"><b>SpecWizard</b><div>No configuration yet.</div></div>'
    r = ev.report
    items = "".join(f"<li><b>{html.escape(f.rule)}</b> {html.escape(f.title)}</li>" for f in r.errors) or "<li>no error</li>"
    return (f'<div class="sw-xc sw-v-{r.verdict}" data-verdict="{r.verdict}"><b>SpecWizard</b> says '
            f'<span class="sw-pill sw-{ "error" if r.verdict == "error" else "warning" if r.verdict == "warning" else "ok"}">'
            f"{r.verdict}</span><ul>{items}</ul></div>")


def _config_key(state: dict) -> str:
    return hashlib.sha1(json.dumps(state.get("config") or {}, sort_keys=True, default=str).encode()).hexdigest()


def exports(ui: WizardUI, state: dict, ev) -> dict:
    """The Review step after a change: every export form, the YAML download, the wizard's verdict,
    the note on broken "Other options" text, and the cross-check marked stale."""
    c = ui.c
    out: dict = {c["xc_wizard"]: wizard_verdict_html(ev)}
    if ev.config is None:
        empty = "# choose a target model first"
        for k in ("exp_command", "exp_dotted", "exp_yaml", "exp_python", *(f"exp_{f}" for f in services.SCALEOUT_FORMS)):
            out[c[k]] = empty
        out[c["exp_yaml_dl"]] = gr.DownloadButton(value=None, interactive=False)
        return out
    forms = services.export_forms(ev.config, services.EXPORT_FORMS + services.SCALEOUT_FORMS,
                                  version=getattr(ev.ctx, "version", None))
    for f, text in forms.items():
        out[c[f"exp_{f}"]] = text
    path = _yaml_file(forms["yaml"])
    out[c["exp_yaml_dl"]] = gr.DownloadButton(value=path, interactive=path is not None)
    raw = (state.get("raw") or {}).get("extra_args")
    why = extra_args_problem(raw) if raw is not None else None
    out[c["extra_note"]] = ("" if raw is None else
                            f"⚠ {html.escape(why)}; your text is kept and the last valid options are used."
                            if why else
                            f"⚠ The box does not hold a JSON object yet; your text is kept and the last valid options "
                            f"are used: {md_code(str(raw)[:80])}")
    if state.get("xc_on") and state.get("xc_for") != _config_key(state):
        out[c["xc_vllm"]] = XC_STALE
    elif not state.get("xc_on"):
        out[c["xc_vllm"]] = XC_OFF
    return out


def _xc_header(text: str, v: dict) -> str:
    """Replace the "(?, platform ?)" header of an unknown vLLM by what is known: "vLLM not
    installed", or the reason vLLM's check did not run."""
    if v.get("vllm_version") and v.get("platform"):
        return text
    if not v.get("vllm_version"):
        what = "vLLM not installed" if not vllm_installed() else (
            f"vLLM did not report its version: {' '.join(str(v.get('message') or 'no reason given').split())[:160]}")
    else:
        what = f"vLLM {v['vllm_version']}, platform unknown"
    return re.sub(r"== vLLM cross-check \([^\n]*\) ==", lambda _m: f"== vLLM cross-check: {what} ==", text, count=1)


def cross_check_html(ev, timeout: float = 180.0) -> str:
    """vLLM's verdict via wizard.vllm.crosscheck.cross_check, as HTML (says what it needs if unavailable)."""
    if ev is None or ev.config is None:
        return '<div class="sw-xc"><b>vLLM</b><div>No configuration yet.</div></div>'
    try:
        xc = services.cross_check(ev.config, ev.report, timeout=timeout)
    except Exception as err:
        return (f'<div class="sw-xc sw-xc-off" data-verdict="unavailable"><b>vLLM</b><div>Cross-check failed: '
                f"{html.escape(type(err).__name__)}: {html.escape(str(err))}</div></div>")
    data = xc.as_json() if hasattr(xc, "as_json") else {}
    text = xc.render_text() if hasattr(xc, "render_text") else json.dumps(data, indent=1)
    v = data.get("vllm") if isinstance(data.get("vllm"), dict) else data
    text = _xc_header(text, v)
    verdict = v.get("verdict") or data.get("status") or "?"
    agree = data.get("agreement", data.get("agree"))
    badge = {"agree": '<span class="sw-pill sw-ok">agrees with the wizard</span>',
             True: '<span class="sw-pill sw-ok">agrees with the wizard</span>',
             "unavailable": '<span class="sw-pill">did not run</span>'}.get(
        agree, "" if agree is None else '<span class="sw-pill sw-error">DISAGREES with the wizard</span>')
    return (f'<div class="sw-xc" data-verdict="{html.escape(str(verdict))}" data-agreement="{html.escape(str(agree))}"><b>vLLM</b> says '
            f'<span class="sw-pill">{html.escape(str(verdict))}</span> {badge}'
            f'<pre class="sw-pre">{html.escape(text)}</pre></div>')


def wire(ui: WizardUI) -> None:
    c = ui.c
    ui.bind("extra_args")

    def xc(state, on, request: gr.Request = None):
        sess = sess_of(request)
        st = dict(ui.base(sess, state))
        st["xc_on"] = bool(on)
        if not on:
            return {c["state"]: ui.commit(sess, st), c["xc_vllm"]: XC_OFF}
        block = ui.launch_block()
        cfg = config_of(st)
        if block is None and cfg is not None:
            rv = review_launch(cfg, ui.policy)
            if rv.problems(ui.policy):
                block = "the configuration has inputs the Launch step refuses (see there)"
        st["xc_for"] = _config_key(st)
        st = ui.commit(sess, st)
        if block is not None:
            return {c["state"]: st, c["xc_vllm"]: ('<div class="sw-xc sw-xc-off" data-verdict="unavailable"><b>vLLM</b>'
                                                    f"<div>Cross-check is disabled: {html.escape(block)}.</div></div>")}
        return {c["state"]: st, c["xc_vllm"]: cross_check_html(ui.evaluate(st))}

    ui.on(c["xc_toggle"].input, xc, [c["state"], c["xc_toggle"]], [c["state"], c["xc_vllm"]], show_progress="minimal",
          show_progress_on=[c["xc_vllm"]], queue=True)

    def xc_rerun(state, request: gr.Request = None):
        return xc(state, True, request)

    ui.on(c["xc_rerun"].click, xc_rerun, [c["state"]], [c["state"], c["xc_vllm"]], show_progress="minimal",
          show_progress_on=[c["xc_vllm"]], queue=True)
