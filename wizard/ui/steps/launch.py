"""Step 7 · Launch & monitor: start vLLM via wizard.launch, stream logs, health, acceptance plots,
smoke test, and the startup diagnosis with "apply fix and relaunch"."""

from __future__ import annotations

import html
import re
import sys
import threading
import uuid
from typing import Any

import gradio as gr
import pandas as pd

from wizard import api, privacy, security, suggest
from wizard.config import apply_patch
from wizard.hardware import nvml
import wizard.launch as launch_api
from wizard.launch import compare_machine, metrics
from wizard.launch.install import (install_commands, refresh_install_state, render_commands,
                                   suggested_distribution, vllm_importable)
from wizard.launch.launcher import review_launch
from wizard.launch.ports import check_port_free, find_free_port, port_from_cfg
from wizard.ui import services
from wizard.ui import findings as fp
from wizard.ui.core import WizardUI, sess_of
from wizard.ui.state import config_of, gpu_spec, state_from_config

__all__ = ["build", "wire", "start", "start_checked", "monitor_reset", "stop", "smoke", "poll", "review_md", "gpu_hint", "diagnosis_fix", "stop_session",
           "stop_all", "vllm_installed", "launch_refusal", "tune_table", "HANDLES", "SESSIONS"]

#: live server handles of this UI process, by the id kept in the session state
HANDLES: dict[str, Any] = {}
#: browser session hash -> handle ids it started (stopped when that tab goes away)
SESSIONS: dict[str, list[str]] = {}
_SMOKE: dict[str, str] = {}
#: handle id -> the newest measured acceptance per draft position (the Plan step's input)
_MEASURED: dict[str, list[float]] = {}
#: the port "What Launch will run" shows and Launch then starts the server on, for configurations
#: without a --port of their own: picked once, picked again once something listens on it. (Each
#: preview picked a new free port, so the preview changed on every refresh and the server got
#: another port than the one shown.)
_PORT: dict[str, int] = {}
_PORT_LOCK = threading.Lock()


#: after each poll: keep the live log box at its newest line, unless the user scrolled up to read
#: (scrolling back to the bottom follows the tail again). Runs in the browser; no request.
LOG_FOLLOW_JS = """
() => {
  const follow = () => {
    const t = document.querySelector('#sw-ln-logs textarea');
    if (!t) return;
    if (!t.__swFollow) {
      t.__swFollow = {on: true};
      t.addEventListener('scroll', () => {
        t.__swFollow.on = t.scrollTop + t.clientHeight >= t.scrollHeight - 24;
      }, {passive: true});
    }
    if (t.__swFollow.on) t.scrollTop = t.scrollHeight;
  };
  requestAnimationFrame(follow);
  setTimeout(follow, 120);
}
"""


def build(ui: WizardUI) -> None:
    ui.c["ln_hint"] = gr.Markdown(elem_id="sw-ln-hint")
    # the commands that install vLLM for this Python, whole and copyable (shown while it is missing)
    ui.c["ln_install"] = gr.Textbox("", label="vLLM is not installed: run these commands in a terminal, then press "
                                    "Launch again (no restart needed)", lines=2, max_lines=6, interactive=False,
                                    buttons=["copy"], visible=False, elem_id="sw-ln-install")
    with gr.Row():
        ui.c["ln_launch"] = gr.Button("Launch server", variant="primary", elem_id="sw-ln-launch")
        ui.c["ln_stop"] = gr.Button("Stop", variant="stop", elem_id="sw-ln-stop")
        ui.c["ln_smoke_n"] = gr.Number(8, label="smoke requests", precision=0, minimum=1, scale=0, min_width=120)
        ui.c["ln_smoke"] = gr.Button("Smoke test", elem_id="sw-ln-smoke")
        ui.c["ln_force"] = gr.Checkbox(False, label="launch even with error findings", elem_id="sw-ln-force")
    ui.c["ln_status"] = gr.HTML('<div class="sw-status sw-st-idle" data-state="idle">No server launched.</div>',
                                elem_id="sw-ln-status")
    with gr.Accordion("What Launch will run: command, environment, options that load code", open=True,
                      elem_id="sw-ln-review-acc"):
        ui.c["ln_review"] = gr.Markdown("_Open this step with a configuration to see what Launch would start._",
                                        elem_id="sw-ln-review")
    with gr.Row(visible=False) as r:
        ui.c["ln_diag"] = gr.Markdown(elem_id="sw-ln-diag")
        ui.c["ln_fix_relaunch"] = gr.Button("Apply fix and relaunch", variant="primary", elem_id="sw-ln-fix", scale=0)
    ui.c["ln_diag_row"] = r
    with gr.Row():
        ui.c["ln_pos"] = gr.BarPlot(pd.DataFrame({"position": pd.Series(dtype="str"), "acceptance": pd.Series(dtype="float")}), x="position", y="acceptance",
                                    title="Acceptance per draft position", y_lim=[0, 1], elem_id="sw-ln-pos", height=260)
        ui.c["ln_time"] = gr.LinePlot(pd.DataFrame({"seconds": pd.Series(dtype="float"), "acceptance": pd.Series(dtype="float"),
                                                    "series": pd.Series(dtype="str")}), x="seconds", y="acceptance", color="series",
                                      title="Draft acceptance over time", y_lim=[0, 1], elem_id="sw-ln-time", height=260)
    ui.c["ln_metrics"] = gr.Markdown(elem_id="sw-ln-metrics")
    # autoscroll off: Gradio 6.31's Textbox scrolls down once (its effect re-runs only when its
    # "near the bottom" flag flips, not when the value changes), so the box stayed at the top;
    # LOG_FOLLOW_JS follows the tail after each poll instead
    ui.c["ln_logs"] = gr.Textbox(label="Server log (live)", lines=14, max_lines=14, autoscroll=False, interactive=False,
                                 elem_id="sw-ln-logs")
    ui.c["ln_timer"] = gr.Timer(1.0, active=False)
    with gr.Accordion("Tune k: measure output speed vs num_speculative_tokens and concurrency (one server per k, "
                      "plus a no-speculation baseline)", open=False, elem_id="sw-tune-acc"):
        with gr.Row():
            ui.c["tn_ks"] = gr.Textbox("1,2,4", label="k values", elem_id="sw-tune-ks")
            ui.c["tn_conc"] = gr.Textbox("4", label="concurrency (one, or a list to sweep: 1,4,16)",
                                         elem_id="sw-tune-conc")
            ui.c["tn_prompts"] = gr.Number(32, label="prompts", precision=0, minimum=1, elem_id="sw-tune-prompts")
            ui.c["tn_run"] = gr.Button("Run sweep", elem_id="sw-tune-run")
        ui.c["tn_out"] = gr.Markdown("_Stops the server above first; each k restarts vLLM (minutes per k)._",
                                     elem_id="sw-tune-out")
        ui.c["tn_chart"] = gr.Image(label="speed vs k", type="filepath", visible=False, elem_id="sw-tune-chart")
    # "What Launch will run" and the banner follow every change of the configuration while the step
    # is on screen (the sync after a pause; computed when the step opens if it changed meanwhile):
    # after "Apply fix and relaunch", an import, a preset or Undo on this tab they showed the old command
    ui.react("launch", ("",), [ui.c["ln_review"], ui.c["ln_hint"]], _review_views, sync=True)


def _review_views(ui: WizardUI, state: dict, ev) -> dict:
    """The Launch step's review and banner for ``state``."""
    return {ui.c["ln_review"]: review_md(ui, state), ui.c["ln_hint"]: gpu_hint(state)}


def launch_port(cfg) -> int | None:
    """The port to preview and launch ``cfg`` on: None when the configuration gives its own
    ``--port`` (or one the plan refuses: the plan says why), else :data:`_PORT` while it is free on
    127.0.0.1, else a new free port."""
    try:
        if port_from_cfg(cfg) is not None:
            return None
    except Exception:
        return None
    with _PORT_LOCK:
        port = _PORT.get("port")
        if port is not None:
            try:
                check_port_free("127.0.0.1", port)
            except Exception:
                port = None
        if port is None:
            port = _PORT["port"] = find_free_port("127.0.0.1")
        return port


def review_md(ui, state: dict) -> str:
    """Markdown for "What Launch will run": the exposure verdict, the exact argv the server will
    get (credentials masked), the environment passed (the allow-list), left out and refused,
    and every option vLLM's parser will read from it that needs the opt-in, with the
    allowlist's reason and source (:func:`wizard.launch.review.review_launch`). Never raises."""
    try:
        return _review_md(ui, state)
    except Exception as err:  # the step must never break on a strange configuration
        return f"_Could not prepare the launch summary: {html.escape(type(err).__name__)}: {html.escape(str(err))}_"


def _review_md(ui: WizardUI, state: dict) -> str:
    policy, block = ui.policy, ui.launch_block()
    lines: list[str] = []
    if block:
        lines.append(f"**Launching is disabled:** {html.escape(block)}.")
    cfg = config_of(state)
    dirs = ", ".join(fp.md_code(d) for d in (policy.model_dirs or [])) or "any"
    lines.append(f"Local models are read only from: {dirs} (`app.py --allow-model-dir DIR`).")
    lines.append("Options that load code, read other files, open listeners or take unreviewed text (vLLM's generated "
                 "allowlist): " + ("**allowed** (this UI was started with `--allow-unsafe-options`)."
                                   if policy.allow_unsafe_options else
                                   "refused (start `app.py --allow-unsafe-options` to allow them)."))
    if cfg is None:
        return "\n\n".join(lines)
    rv = review_launch(cfg, policy, port=launch_port(cfg))
    plan = rv.plan
    env_set: dict[str, str] = {}
    if plan is not None:
        cmd = " ".join(privacy.scrub(a, plan.secrets) for a in plan.argv)
        fence = "`" * max(3, 1 + max((len(t) for t in re.findall(r"`+", cmd)), default=0))
        lines.append(f"**Command** (exactly the words the server gets; no shell):\n\n{fence}\n{cmd}\n{fence}")
        if plan.secret_config:
            lines.append("`--config` above is the launcher's own file of API keys (mode 0600, in the wizard's private "
                         "folder): several keys cannot travel in `VLLM_API_KEY`, and the command line is public.")
        try:
            for d in compare_machine(cfg, gpu_spec(state)):  # this machine vs the hardware chosen in step 1
                lines.append(f"**{'⚠ ' if d.severity == 'warning' else ''}On this machine:** {html.escape(d.message, quote=False)}")
        except Exception:
            pass
        env_set = {k: ("***" if privacy.is_secret_env(k) else v) for k, v in plan.env_changes.items()}
    passed = [v for v in rv.env.get("pass", [])]
    env_lines = [f"- {fp.md_code(f'{k}={v}')}" for k, v in env_set.items()]
    lines.append("**Environment set for the server** (allow-list: vLLM's own variables, device selection, credentials; "
                 "the server also inherits this wizard's environment):\n" + ("\n".join(env_lines) or "- (none)"))
    if passed:
        lines.append("Allowed from the configuration: " + ", ".join(fp.md_code(v.name) for v in passed) + ".")
    if rv.env.get("drop"):
        lines.append("**Not passed** (set them in the shell that starts the wizard):\n" +
                     "\n".join(f"- {fp.md_text(v.reason)}" for v in rv.env["drop"]))
    if rv.blocking:
        lines.append("**Refused** (Launch will not start this):\n" + "\n".join(f"- {fp.md_text(b)}" for b in rv.blocking))
    if rv.risky:
        state_txt = "allowed by --allow-unsafe-options" if policy.allow_unsafe_options else "refused without --allow-unsafe-options"
        lines.append(f"**Options that need the opt-in** ({state_txt}; vLLM {html.escape(rv.argv.release)}'s allowlist):\n"
                     + "\n".join(f"- {fp.md_text(r.text())}" for r in rv.risky))
    return "\n\n".join(lines)


def install_box() -> dict:
    """The install state, read again now (:func:`wizard.launch.install.refresh_install_state`:
    a vLLM installed while the UI runs is seen without a restart, and without importing it):
    ``{"installed": bool, "commands": "one command a line" (empty when installed)}``. The
    commands are those of :func:`wizard.launch.install.install_commands` for this machine's GPUs,
    for the Python that starts the servers, shell-quoted, whole (the UI shows them in a box with
    a copy button)."""
    refresh_install_state()
    if vllm_installed():
        return {"installed": True, "commands": ""}
    cmds = install_commands(suggested_distribution(len(nvml.discover())))
    return {"installed": False, "commands": render_commands(cmds, "")}


def install_updates(ui) -> dict:
    """The Launch step's install box for the install state read now (:func:`install_box`)."""
    box = install_box()
    return {ui.c["ln_install"]: gr.Textbox(value=box["commands"], visible=not box["installed"])}


def gpu_hint(state: dict) -> str:
    """A warning banner before Launch when this machine differs from the hardware chosen for the
    checks (:func:`wizard.launch.compare_machine`: GPU model, count, no GPU, vLLM build), else ''.
    A missing vLLM is said in one line: its commands are in the install box (:func:`install_box`).
    Pointers to CLI options are said as what to do in the UI (:func:`wizard.ui.findings.face_text`)."""
    cfg = config_of(state)
    if cfg is None:
        return ""
    try:
        diffs = [d for d in compare_machine(cfg, gpu_spec(state)) if d.severity == "warning"]
    except Exception:  # an unknown GPU name: the Hardware step says so already
        return ""
    if not diffs:
        return ""
    items = "".join(f"<li>{_diff_html(d)}</li>" for d in diffs[:4])
    return f'<div class="sw-hint">⚠ Launch runs on this machine, which differs from the hardware checked:<ul>{items}</ul></div>'


def _diff_html(d) -> str:
    """One machine difference for the web page (HTML): a missing vLLM in one sentence (the commands
    are in the install box), anything else whole, CLI pointers turned into UI ones, and commands
    (the message's indented lines) each in a ``<code>`` line of its own, never cut off."""
    if d.key == "no_vllm":
        return (f"vLLM is not installed for <code>{html.escape(sys.executable)}</code> (the Python that starts the "
                "server): the commands that install it are in the box below.")
    lines = d.message.splitlines()
    text = html.escape(fp.face_text(" ".join(ln.strip() for ln in lines if not ln.startswith("  "))))
    cmds = "".join(f"<br><code>{html.escape(ln.strip())}</code>" for ln in lines if ln.startswith("  ") and ln.strip())
    return text + cmds


def vllm_installed() -> bool:
    """Whether the Python that launches servers can import vllm (checked without importing it)."""
    return vllm_importable()


def _refused(msg: str) -> str:
    return f'<div class="sw-status sw-st-failed" data-state="refused">{msg}</div>'


def start(state: dict, ev, force: bool, block: str | bool | None, session: str | None = None,
          policy: security.PathPolicy | None = None) -> tuple[dict, str]:
    """Launch the configuration. Returns (state with the handle id, status message html).

    ``block``: why launching is disabled in this UI now (None: allowed; see
    :meth:`wizard.ui.app.WizardUI.launch_block`). ``policy``: allowed model folders and whether
    options that load code may launch. Refused whatever ``force`` says: environment variables
    that load code, values pointing into the upload folder, local models outside the allowed
    folders, and (without the opt-in) options that load code, read files or widen the API."""
    refusal = launch_refusal(ev, block, policy)
    if refusal:
        return state, refusal
    return start_checked(state, ev, force, session, policy)


def start_checked(state: dict, ev, force: bool, session: str | None = None,
                  policy: security.PathPolicy | None = None) -> tuple[dict, str]:
    """:func:`start` past its gate (:func:`launch_refusal` said nothing): stop this tab's server,
    then launch. The previous server's monitoring no longer applies from here on, whatever the
    launch does (:func:`monitor_reset`)."""
    stop(state)
    try:
        h = launch_api.launch(ev.config, port=launch_port(ev.config), force=force, report=ev.report, gpu=ev.hardware,
                              policy=policy or security.PathPolicy(model_dirs=security.default_model_dirs()))
    except Exception as err:
        msg = str(err)
        if isinstance(err, launch_api.LaunchRefused):
            msg = "the configuration has error findings (see the panel); fix them or tick 'launch even with error findings'."
        return state, f'<div class="sw-status sw-st-failed" data-state="refused">Not launched: {html.escape(msg)}</div>'
    hid = uuid.uuid4().hex
    HANDLES[hid] = h
    if session:
        SESSIONS.setdefault(session, []).append(hid)
    st = dict(state)
    st["server"] = hid
    return st, '<div class="sw-status sw-st-starting" data-state="starting">Starting…</div>'


def launch_refusal(ev: Any, block: Any, policy: security.PathPolicy | None) -> str | None:
    """Why this UI must not start a server for ``ev`` (status html), or None. The one gate of
    Launch and Tune: the UI's exposure (``block``), a missing target, environment variables and
    values that load code, local models outside the allowed folders, options that need the
    opt-in, and a missing vLLM."""
    if block:
        return _refused(f"Launching is disabled: {html.escape(str(block))}.")
    if ev is None or ev.config is None:
        return '<div class="sw-status sw-st-failed">Choose a target model first (step 2).</div>'
    policy = policy or security.PathPolicy(model_dirs=security.default_model_dirs())
    problems = review_launch(ev.config, policy).problems(policy)
    if problems:
        items = "".join(f"<li>{html.escape(p)}</li>" for p in problems)
        return _refused(f"Not launched: this configuration has inputs the UI never launches:<ul>{items}</ul>")
    refresh_install_state()  # installed while the UI runs: seen now
    if not vllm_installed():
        return (f'<div class="sw-status sw-st-failed" data-state="no-vllm">Not launched: vLLM is not installed for '
                f"<code>{html.escape(sys.executable)}</code> (the Python that starts the server). Run the commands in "
                "the box below in a terminal, then press Launch again; no restart is needed.</div>")
    return None


def tune_table(res: Any) -> str:
    """Markdown of a TuneResult: one row per k (baseline first), the recommendation, the files."""
    rows = list(getattr(res, "baselines", None) or ([res.baseline] if res.baseline else [])) + list(res.runs)
    out = ["| k | tokens/s | concurrency | TPOT ms | mean acceptance length | per position | note |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        f = lambda v, d=1: "–" if v is None else f"{v:.{d}f}"  # noqa: E731
        pos = ", ".join(f"{x:.2f}" for x in (r.per_position or [])) or "–"
        out.append(f"| {'baseline' if r.k == 0 else r.k} | {f(r.output_tokens_per_s)} | "
                   f"{getattr(r, 'concurrency', None) or res.concurrency} | {f(r.mean_tpot_ms, 2)} | "
                   f"{f(r.mean_acceptance_length, 2)} | {pos} | {html.escape(str(r.error or ''))[:120]} |")
    by_c = getattr(res, "by_concurrency", None) or []
    if by_c:
        out.append("")
    for b in by_c:
        out_k = "no speculation" if b["best_k"] == 0 else f"k={b['best_k']}"
        sp = f" ({b['speedup']:.2f}× the baseline)" if b.get("speedup") else ""
        out.append(f"- concurrency {b['concurrency']}: fastest {out_k}{sp}")
    if getattr(res, "schedule", None):
        out.append(f"- measured schedule: `num_speculative_tokens_per_batch_size = {res.schedule}`, "
                   f"`num_speculative_tokens = {res.schedule_max}`")
    elif len(getattr(res, "concurrencies", None) or []) > 1 and res.schedule_note:
        out.append(f"- schedule: {html.escape(res.schedule_note)}")
    head = (f"**Recommended k = {res.recommended_k}**" if res.recommended_k is not None else "**No k recommended**")
    if res.best_speedup:
        head += f" ({res.best_speedup:.2f}× the baseline)"
    if res.speculation_pays is False:
        head += " — speculation does not pay" + (" at this concurrency" if len(getattr(res, "concurrencies", None) or [1]) <= 1 else
                                                 " over the swept concurrencies")
    notes = "".join(f"\n- {html.escape(n)}" for n in res.notes)
    return f"{head}\n\n" + "\n".join(out) + f"\n\nResults: `{res.json_path}`{notes}"


def stop(state: dict) -> None:
    hid = state.get("server")
    h = HANDLES.get(hid) if hid else None
    if h is not None:
        threading.Thread(target=h.stop, daemon=True).start()


_ENDED = {"failed": "failed during startup", "exited": "exited", "stopped": "was stopped"}


def stop_status(state: dict) -> str:
    """Stop, answered as status HTML: 'Stopping…' while the tab's server runs (the poll then shows
    'stopped'), else what already happened to it -- a server that failed or exited is not
    stopping, it has ended, with its exit status -- or 'No server running.'."""
    hid = state.get("server")
    h = HANDLES.get(hid) if hid else None
    if h is None:
        return '<div class="sw-status sw-st-idle" data-state="idle">No server running.</div>'
    st = h.status()
    s = st.get("state", "?")
    if s in _ENDED:
        code = st.get("exit_code")
        status = f"exit code {code}" if code is not None else "exit status unknown"
        if isinstance(code, int) and code < 0:
            status = f"killed by signal {-code}"
        return (f'<div class="sw-status sw-st-{s}" data-state="{s}">Nothing to stop: the server already {_ENDED[s]} '
                f"({html.escape(status)}, pid {st.get('pid')}).</div>")
    stop(state)
    return '<div class="sw-status sw-st-stopping" data-state="stopping">Stopping…</div>'


def smoke(state: dict, n: int) -> str:
    """Start N smoke requests in the background (wizard.launch smoke API); the poll shows the result."""
    hid = state.get("server")
    h = HANDLES.get(hid) if hid else None
    if h is None:
        return "No server running."

    def run():
        _SMOKE[hid] = f"Smoke test: {n} requests running…"
        try:
            _SMOKE[hid] = f"Smoke test done: {h.smoke(int(n)).render_text()}"
        except Exception as err:
            _SMOKE[hid] = f"Smoke test failed: {type(err).__name__}: {err}"

    threading.Thread(target=run, daemon=True).start()
    return f"Smoke test: {n} requests started…"


def monitor_reset(ui) -> dict:
    """The monitoring views as they are before any server: no log, plots, metrics, smoke result,
    advice or diagnosis. A new launch attempt starts from here, so a launch that fails (or is
    refused after the old server was stopped) never shows the previous server's numbers."""
    c = ui.c
    return {c["ln_logs"]: "", c["ln_metrics"]: "",
            c["ln_pos"]: pd.DataFrame({"position": pd.Series(dtype="str"), "acceptance": pd.Series(dtype="float")}),
            c["ln_time"]: pd.DataFrame({"seconds": pd.Series(dtype="float"), "acceptance": pd.Series(dtype="float"),
                                        "series": pd.Series(dtype="str")}),
            c["ln_diag"]: "", c["ln_diag_row"]: gr.Row(visible=False), c["ln_fix_relaunch"]: gr.Button(visible=False)}


def poll(ui, state: dict) -> dict:
    """Updates from the running server: status/health, logs, metrics plots, diagnosis."""
    c = ui.c
    hid = state.get("server")
    h = HANDLES.get(hid) if hid else None
    if h is None:
        return {c["ln_timer"]: gr.Timer(active=False)}
    st = h.status()
    s = st.get("state", "?")
    health = {"starting": "starting (waiting for /health and /v1/models)", "healthy": "healthy ✓",
              "exited": "exited", "stopped": "stopped", "failed": "failed"}.get(s, s)
    extra = f" · ready in {st['time_to_healthy_s']:.0f} s" if st.get("time_to_healthy_s") else ""
    code = f" · exit code {st['exit_code']}" if st.get("exit_code") is not None else ""
    out = {
        c["ln_status"]: (f'<div class="sw-status sw-st-{s}" data-state="{s}"><b>{health}</b> · '
                         f'{html.escape(str(st.get("url", "")))} · pid {st.get("pid")} · up {st.get("uptime_s", 0):.0f} s'
                         f"{extra}{code}</div>"),
        c["ln_logs"]: "\n".join(h.logs(200)),
    }
    latest = h.latest_metrics()
    hist = list(h.metrics_history() or [])
    data = metrics.plot_data(hist)
    if data["per_position"]:
        _MEASURED[hid] = [float(x) for x in data["per_position"]][:suggest.K_HARD_MAX]
        out[c["ln_pos"]] = pd.DataFrame({"position": [f"pos {i}" for i in range(len(data["per_position"]))],
                                         "acceptance": [float(x) for x in data["per_position"]]})
    pts = [(t, float(a), "per interval") for t, a in zip(data["time"], data["acceptance_rate"]) if a is not None]
    pts += [(t, float(s_.acceptance_rate), "cumulative") for t, s_ in zip(data["time"], hist)
            if s_.acceptance_rate is not None]
    if pts:
        out[c["ln_time"]] = pd.DataFrame(pts, columns=["seconds", "acceptance", "series"])
    lines = []
    if latest is not None:
        lines.append(f"`{metrics.summary_line(latest)}`")
        lines += [f"ℹ {html.escape(n)}" for n in latest.notes[:3]]  # what the scrape left out (a hostile page)
        if h.spec_method_and_k()[0]:
            a = h.advice()
            icon = {"ok": "✓", "warning": "⚠"}.get(a.level, "ℹ")
            lines.append(f"{icon} {a.message}" + "".join(f"\n- {x}" for x in a.suggestions))
    if hid in _SMOKE:
        lines.append(_SMOKE[hid])
    if lines:
        out[c["ln_metrics"]] = "\n\n".join(x for x in lines if x)
    if h.diagnosis is not None:
        d = h.diagnosis.as_json()
        md = f"**{d.get('title')}** — {d.get('message')}"
        if d.get("commands"):  # the installation, not the configuration, needs the fix
            md += "\n\nRun:\n```\n" + render_commands(d["commands"], "") + "\n```"
        if d.get("rule"):
            md += f" (prevented by rule {d['rule']})"
        if d.get("last_lines"):
            md += "\n\n```\n" + "\n".join(d["last_lines"][-12:]) + "\n```"
        out[c["ln_diag"]] = md
        out[c["ln_diag_row"]] = gr.Row(visible=True)
        out[c["ln_fix_relaunch"]] = gr.Button(visible=bool(d.get("fixes")))
    else:
        out[c["ln_diag_row"]] = gr.Row(visible=False)
    if s in ("exited", "stopped", "failed"):
        out[c["ln_timer"]] = gr.Timer(active=False)
    return out


def diagnosis_fix(state: dict):
    """The first fix (Patch) of the current server's diagnosis, or None."""
    h = HANDLES.get(state.get("server") or "")
    fixes = h.diagnosis.fixes if h is not None and h.diagnosis is not None else []
    return fixes[0] if fixes else None


def stop_session(session: str | None) -> None:
    """Stop the servers one browser session started (called when its tab closes)."""
    for hid in SESSIONS.pop(session or "", []):
        h = HANDLES.pop(hid, None)
        if h is not None:
            threading.Thread(target=h.stop, daemon=True).start()


def stop_all() -> None:
    """Stop every server this UI started (e.g. when the app closes)."""
    for h in list(HANDLES.values()):
        try:
            h.stop()
        except Exception:
            pass
    HANDLES.clear()


def acceptance_text(rates: list[float]) -> str:
    """Per-position acceptance as the Plan step's field shows it: "0.70, 0.48, 0.31"."""
    return ", ".join(f"{x:.2f}" for x in rates)


def measured_acceptance(state: dict) -> list[float] | None:
    """The newest per-position acceptance measured on this tab's server, if any."""
    return _MEASURED.get(state.get("server") or "")


def wire(ui: WizardUI) -> None:
    c = ui.c
    ln_outs = [c["state"], c["ln_status"], c["ln_timer"], c["ln_logs"], c["ln_pos"], c["ln_time"], c["ln_metrics"],
               c["ln_diag"], c["ln_diag_row"], c["ln_fix_relaunch"]]

    def do_launch(state, force, request: gr.Request):
        sess = sess_of(request)
        state = ui.base(sess, state)
        ev = ui.evaluate(state)
        refusal = launch_refusal(ev, ui.launch_block(), ui.policy)
        # refused at the gate: the tab's server (if any) is left running, its monitoring with it;
        # past the gate the old server is stopped and its monitoring cleared, whatever follows
        st, msg = (state, refusal) if refusal else start_checked(state, ev, bool(force), sess, policy=ui.policy)
        if st is not state:
            st = ui.commit(sess, st)
        out = {} if refusal else monitor_reset(ui)
        out.update({c["state"]: st, c["ln_status"]: msg,
                    c["ln_timer"]: gr.Timer(active=st.get("server") != state.get("server")),
                    c["ln_review"]: review_md(ui, st), c["ln_hint"]: gpu_hint(st), **install_updates(ui)})
        return out

    ui.on(c["ln_launch"].click, do_launch, [c["state"], c["ln_force"]],
          ln_outs + [c["ln_review"], c["ln_hint"], c["ln_install"]])

    def open_launch(state, request: gr.Request = None):
        """Opening the step (its banner): the install state is read again, so a vLLM installed
        while the UI runs is seen (install box, banner and review) without a restart."""
        st = ui.base(sess_of(request), state)
        upd = install_updates(ui)  # first: the banner and the review read the fresh state
        return {c["ln_review"]: review_md(ui, st), c["ln_hint"]: gpu_hint(st), **upd}

    ui.on(c["tab_launch"].select, open_launch, [c["state"]], [c["ln_review"], c["ln_hint"], c["ln_install"]])

    def stop_server(state, request: gr.Request = None):
        msg = stop_status(ui.base(sess_of(request), state))
        # while it stops, the poll follows it to 'stopped'
        return {c["ln_status"]: msg, c["ln_timer"]: gr.Timer(active='data-state="stopping"' in msg)}

    ui.on(c["ln_stop"].click, stop_server, [c["state"]], ln_outs)

    def smoke_test(state, n, request: gr.Request = None):
        try:
            n = int(n or 8)
        except (TypeError, ValueError, OverflowError):
            n = 8
        return {c["ln_metrics"]: smoke(ui.base(sess_of(request), state), max(1, min(n, 10000)))}

    ui.on(c["ln_smoke"].click, smoke_test, [c["state"], c["ln_smoke_n"]], ln_outs)

    def to_plan(sess, state, rates, source):
        """The session state with measured per-position ``rates`` as the Plan step's acceptance."""
        text = acceptance_text(rates)
        return ui.update_field(sess, state, lambda b: {**b, "acceptance": text, "acceptance_source": source})

    def poll_server(state, request: gr.Request = None):
        sess = sess_of(request)
        st = ui.base(sess, state)
        out = poll(ui, st)
        rates = measured_acceptance(st)
        if rates and st.get("acceptance") != acceptance_text(rates):  # the Plan step plans with what this server measured
            out[c["state"]] = to_plan(sess, state, rates, "measured on the running server")
        return out

    tick = ui.on(c["ln_timer"].tick, poll_server, [c["state"]], ln_outs)
    ui.on(tick.then, None, None, None, js=LOG_FOLLOW_JS)

    def fix_relaunch(state, force, request: gr.Request):
        sess = sess_of(request)
        state = ui.base(sess, state)
        patch = diagnosis_fix(state)
        cfg = config_of(state)
        if patch is None or cfg is None:
            return {c["ln_status"]: gr.skip()}
        st = state_from_config(apply_patch(cfg, patch), base=state)
        st["server"] = state.get("server")
        out = ui.full(sess, st, note=f"Applied: {patch.description}; relaunching.")
        st = out[c["state"]]
        ev = ui.evaluate(st)
        refusal = launch_refusal(ev, ui.launch_block(), ui.policy)
        st2, msg = (st, refusal) if refusal else start_checked(st, ev, bool(force), sess, policy=ui.policy)
        if not refusal:
            out.update(monitor_reset(ui))
        out[c["state"]] = ui.commit(sess, st2)
        out[c["ln_status"]] = msg
        out[c["ln_timer"]] = gr.Timer(active=st2.get("server") != state.get("server"))
        # what Launch runs now: the fixed configuration (the view is not refreshed by `full`)
        out[c["ln_review"]] = review_md(ui, st2)
        out[c["ln_hint"]] = gpu_hint(st2)
        return out

    ui.on(c["ln_fix_relaunch"].click, fix_relaunch, [c["state"], c["ln_force"]],
          ui.full_outputs(*ln_outs, c["ln_review"], c["ln_hint"]))

    def run_tune(state, ks_text, conc, n_prompts, force, request: gr.Request = None):
        """A generator: progress lines while the sweep runs, then the table and chart. Never raises."""
        sess = sess_of(request)
        st = ui.base(sess, state)
        ks, why = services.parse_ks(ks_text)
        concs, why_c = services.parse_concurrencies(conc)
        why = why or why_c
        if why:
            yield {c["tn_out"]: f"⚠ {html.escape(why, quote=False)}"}
            return
        ev = ui.evaluate(st)
        refusal = launch_refusal(ev, ui.launch_block(), ui.policy)
        if refusal:
            yield {c["tn_out"]: refusal}
            return
        stop(st)  # one server at a time on this machine
        lines: list[str] = []
        done = threading.Event()
        box: dict[str, Any] = {}

        def progress(e: dict) -> None:
            lines.append(f"{e.get('index', '?')}/{e.get('total', '?')} · {e.get('stage')}: {e.get('message', '')}")

        def work() -> None:
            try:
                box["res"] = api.tune(ev.config, ks=ks, concurrency=concs, num_prompts=int(n_prompts or 32),
                                      out_dir=privacy.private_dir("tune") / uuid.uuid4().hex[:8], progress=progress,
                                      force=bool(force))
            except Exception as err:  # TuneError (unusable input) or anything unexpected: shown, not raised
                box["error"] = f"{type(err).__name__}: {err}"
            done.set()

        threading.Thread(target=work, daemon=True, name="wizard-tune").start()
        shown = -1
        while not done.wait(1.0):
            if len(lines) != shown:
                shown = len(lines)
                yield {c["tn_out"]: "Sweep running…\n\n" + "\n".join(f"- {html.escape(x)}" for x in lines[-12:])}
        if "error" in box:
            yield {c["tn_out"]: f"⚠ Tune failed: {html.escape(box['error'])}"}
            return
        res = box["res"]
        out = {c["tn_out"]: tune_table(res),
               c["tn_chart"]: gr.Image(value=res.chart_path, visible=bool(res.chart_path))}
        best = next((r for r in res.runs if r.k == res.recommended_k and r.per_position), None)
        if best is not None:  # the Plan step plans with the measured per-position acceptance
            out[c["state"]] = to_plan(sess, state, best.per_position, f"measured by Tune (k={best.k})")
        yield out

    ui.on(c["tn_run"].click, run_tune, [c["state"], c["tn_ks"], c["tn_conc"], c["tn_prompts"], c["ln_force"]],
          [c["state"], c["tn_out"], c["tn_chart"]])

    def on_unload(request: gr.Request):
        stop_session(sess_of(request))

    ui.demo.unload(on_unload)
