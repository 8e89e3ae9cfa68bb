"""Step 7 · Launch & monitor: start vLLM via wizard.launch, stream logs, health, acceptance plots,
smoke test, and the startup diagnosis with "apply fix and relaunch"."""

from __future__ import annotations

import html
import threading
import uuid
from typing import Any

import gradio as gr
import pandas as pd

from wizard import privacy, security
from wizard.hardware import nvml
from wizard.launch.install import install_hint, render_commands, vllm_importable
from wizard.ui import services

#: live server handles of this UI process, by the id kept in the session state
HANDLES: dict[str, Any] = {}
#: browser session hash -> handle ids it started (stopped when that tab goes away)
SESSIONS: dict[str, list[str]] = {}
_SMOKE: dict[str, str] = {}


def _get(obj: Any, *names: str, default: Any = None) -> Any:
    """First present attribute/key of ``obj`` among ``names`` (snapshots may be objects or dicts)."""
    if obj is None:
        return default
    if not isinstance(obj, dict):
        for n in names:
            v = getattr(obj, n, None)
            if v is not None:
                return v
        fn = getattr(obj, "as_json", None)
        obj = fn() if callable(fn) else {}
    for n in names:
        if isinstance(obj, dict) and obj.get(n) is not None:
            return obj[n]
    return default


_PER_POS = ("acceptance_per_position", "per_position_acceptance", "accepted_per_position_rate", "per_pos_acceptance",
            "acceptance_by_position")
_RATE = ("acceptance_rate", "draft_acceptance_rate")
_MAL = ("mean_acceptance_length", "acceptance_length")
_TIME = ("t", "timestamp", "time", "scraped_at")


def build(ui) -> None:
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
    ui.c["ln_logs"] = gr.Textbox(label="Server log (live)", lines=14, max_lines=14, autoscroll=True, interactive=False,
                                 elem_id="sw-ln-logs")
    ui.c["ln_timer"] = gr.Timer(1.0, active=False)


_RISK = {"code": "imports or runs code", "file": "reads a file outside the allowed folders",
         "exposes": "widens what API clients may do"}


def review_md(ui, state: dict) -> str:
    """Markdown for "What Launch will run": the exposure verdict, the command (credentials
    masked), the environment passed (the allow-list), left out and refused, and the options that
    load code with their opt-in status. Never raises."""
    try:
        return _review_md(ui, state)
    except Exception as err:  # the step must never break on a strange configuration
        return f"_Could not prepare the launch summary: {html.escape(type(err).__name__)}: {html.escape(str(err))}_"


def _review_md(ui, state: dict) -> str:
    from wizard.ui.state import config_of, gpu_spec

    policy = getattr(ui, "policy", None) or security.PathPolicy(model_dirs=security.default_model_dirs())
    block = ui.launch_block() if hasattr(ui, "launch_block") else None
    lines: list[str] = []
    if block:
        lines.append(f"**Launching is disabled:** {html.escape(block)}.")
    cfg = config_of(state)
    dirs = ", ".join(f"`{d}`" for d in (policy.model_dirs or [])) or "any"
    lines.append(f"Local models are read only from: {dirs} (`app.py --allow-model-dir DIR`).")
    lines.append("Options that load code, read other files or widen the API: " + (
        "**allowed** (this UI was started with `--allow-unsafe-options`)." if policy.allow_unsafe_options else
        "refused (start `app.py --allow-unsafe-options` to allow them)."))
    if cfg is None:
        return "\n\n".join(lines)
    rv = security.review_launch(cfg, policy)
    try:
        from wizard.launch import compare_machine, plan_launch

        # the command as it would run: variables from text that are not passed are left out
        plan = plan_launch(cfg.model_copy(update={"env": {v.name: cfg.env[v.name] for v in rv.env.get("pass", [])}}))
        cmd = " ".join(privacy.scrub(a, plan.secrets) for a in plan.argv)
        lines.append(f"**Command** (no shell):\n\n```\n{cmd}\n```")
        for d in compare_machine(cfg, gpu_spec(state)):  # this machine vs the hardware chosen in step 1
            lines.append(f"**{'⚠ ' if d.severity == 'warning' else ''}On this machine:** {html.escape(d.message, quote=False)}")
        env_set = {k: ("***" if privacy.is_secret_env(k) else v) for k, v in plan.env_changes.items()}
    except Exception as err:
        env_set = {}
        lines.append(f"**Command:** not prepared ({html.escape(str(err))}).")
    passed = [v for v in rv.env.get("pass", [])]
    env_lines = [f"- `{k}={html.escape(str(v))}`" for k, v in env_set.items()]
    lines.append("**Environment set for the server** (allow-list: vLLM's own variables, device selection, credentials; "
                 "the server also inherits this wizard's environment):\n" + ("\n".join(env_lines) or "- (none)"))
    if passed:
        lines.append("Allowed from the configuration: " + ", ".join(f"`{v.name}`" for v in passed) + ".")
    if rv.env.get("drop"):
        lines.append("**Not passed** (set them in the shell that starts the wizard):\n" +
                     "\n".join(f"- {html.escape(v.reason)}" for v in rv.env["drop"]))
    if rv.blocking:
        lines.append("**Refused** (Launch will not start this):\n" + "\n".join(f"- {html.escape(b)}" for b in rv.blocking))
    if rv.risky:
        state_txt = "allowed by --allow-unsafe-options" if policy.allow_unsafe_options else "refused without --allow-unsafe-options"
        lines.append(f"**Options that load code, read files or widen the API** ({state_txt}):\n" + "\n".join(
            f"- `{html.escape(r.option)}` = `{html.escape(r.value)}`: {_RISK[r.risk]} (vLLM: \"{html.escape(r.reason)}\")"
            for r in rv.risky))
    return "\n\n".join(lines)


def no_vllm_hint() -> str:
    """What to run when vLLM is missing: :func:`wizard.launch.install.install_hint` for this
    machine's GPUs (its commands are the tested ones, also in the README)."""
    return install_hint(gpu_count=len(nvml.discover()))


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
    if block is True or block is False:  # the old boolean form: allow_launch
        block = None if block else "launching is disabled in this UI"
    if block:
        return state, _refused(f"Launching is disabled: {html.escape(str(block))}.")
    if ev is None or ev.config is None:
        return state, '<div class="sw-status sw-st-failed">Choose a target model first (step 2).</div>'
    policy = policy or security.PathPolicy(model_dirs=security.default_model_dirs())
    rv = security.review_launch(ev.config, policy)
    problems = list(rv.blocking) + [
        f"{r.option} = {r.value!r}: {_RISK[r.risk]} (vLLM: \"{r.reason}\"); allowed only when the UI was started with "
        "--allow-unsafe-options" for r in rv.needs_opt_in(policy)]
    if problems:
        items = "".join(f"<li>{html.escape(p)}</li>" for p in problems)
        return state, _refused(f"Not launched: this configuration has inputs the UI never launches:<ul>{items}</ul>")
    if not vllm_installed():
        return state, (f'<div class="sw-status sw-st-failed" data-state="no-vllm">'
                       f'<pre style="white-space:pre-wrap">{html.escape(no_vllm_hint())}</pre></div>')
    try:
        mod = services.launch_module()
    except services.Unavailable as err:
        return state, f'<div class="sw-status sw-st-failed">Launching {html.escape(str(err))}.</div>'
    stop(state)
    try:
        h = mod.launch(ev.config, force=force, report=ev.report, gpu=ev.hardware)
    except Exception as err:
        msg = str(err)
        if type(err).__name__ == "LaunchRefused":
            msg = "the configuration has error findings (see the panel); fix them or tick 'launch even with error findings'."
        return state, f'<div class="sw-status sw-st-failed" data-state="refused">Not launched: {html.escape(msg)}</div>'
    hid = uuid.uuid4().hex
    HANDLES[hid] = h
    if session:
        SESSIONS.setdefault(session, []).append(hid)
    st = dict(state)
    st["server"] = hid
    return st, '<div class="sw-status sw-st-starting" data-state="starting">Starting…</div>'


def stop(state: dict) -> None:
    hid = state.get("server")
    h = HANDLES.get(hid) if hid else None
    if h is not None:
        threading.Thread(target=h.stop, daemon=True).start()


def smoke(state: dict, n: int) -> str:
    """Start N smoke requests in the background (wizard.launch smoke API); the poll shows the result."""
    hid = state.get("server")
    h = HANDLES.get(hid) if hid else None
    if h is None:
        return "No server running."
    try:
        mod = services.launch_module()
    except services.Unavailable as err:
        return str(err)
    run_smoke = getattr(mod, "run_smoke", None)
    if run_smoke is None:
        return "Smoke test needs wizard.launch.run_smoke(url, n) (not available yet)."
    fn = lambda n_: run_smoke(h.url, n_)  # noqa: E731

    def run():
        _SMOKE[hid] = f"Smoke test: {n} requests running…"
        try:
            res = fn(int(n))
            text = res.render_text() if hasattr(res, "render_text") else str(res.as_json() if hasattr(res, "as_json") else res)
            _SMOKE[hid] = f"Smoke test done: {text}"
        except Exception as err:
            _SMOKE[hid] = f"Smoke test failed: {type(err).__name__}: {err}"

    threading.Thread(target=run, daemon=True).start()
    return f"Smoke test: {n} requests started…"


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
    mod = services.launch_module()
    pd_fn = getattr(mod, "plot_data", None)
    data = pd_fn(hist) if pd_fn is not None else {"per_position": list(_get(latest, *_PER_POS, default=[]) or []),
                                                  "time": [], "acceptance_rate": []}
    if data.get("per_position"):
        out[c["ln_pos"]] = pd.DataFrame({"position": [f"pos {i}" for i in range(len(data["per_position"]))],
                                         "acceptance": [float(x) for x in data["per_position"]]})
    pts = [(float(t), float(a), "per interval") for t, a in zip(data.get("time", []), data.get("acceptance_rate", []))
           if a is not None]
    t0 = hist[0].time if hist and hasattr(hist[0], "time") else None
    for snap in hist:
        a = getattr(snap, "acceptance_rate", None)
        if a is not None and t0 is not None:
            pts.append((round(snap.time - t0, 3), float(a), "cumulative"))
    if pts:
        out[c["ln_time"]] = pd.DataFrame(pts, columns=["seconds", "acceptance", "series"])
    lines = []
    if latest is not None:
        sl = getattr(mod, "summary_line", None)
        lines.append(f"`{sl(latest)}`" if sl else "")
        adv_fn = getattr(mod, "advice", None)
        ctx_method = (h.cfg.speculative_config.method if getattr(h, "cfg", None) is not None and h.cfg.speculative_config else None)
        k = h.cfg.speculative_config.num_speculative_tokens if ctx_method else None
        if adv_fn is not None:
            a = adv_fn(latest, ctx_method, k)
            icon = {"ok": "✓", "warning": "⚠"}.get(a.level, "ℹ")
            lines.append(f"{icon} {a.message}" + "".join(f"\n- {x}" for x in a.suggestions))
    if hid in _SMOKE:
        lines.append(_SMOKE[hid])
    if lines:
        out[c["ln_metrics"]] = "\n\n".join(x for x in lines if x)
    diag = getattr(h, "diagnosis", None)
    if diag is not None:
        d = diag.as_json() if hasattr(diag, "as_json") else dict(diag)
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
    diag = getattr(h, "diagnosis", None) if h is not None else None
    fixes = getattr(diag, "fixes", None) or []
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
