"""build_app(): the Gradio wizard (steps, live findings panel, import, presets, sessions).

    from wizard.ui import build_app
    build_app().launch()           # http://127.0.0.1:7860, or inline in Jupyter

The UI holds no rule logic: every change re-runs :func:`wizard.api.check_context` on the
state's ServeConfig (models are cached in :mod:`wizard.context`), fixes are applied with
:func:`wizard.config.apply_patch`, exports come from :mod:`wizard.io.export`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

import gradio as gr

from wizard.config import Patch, apply_patch
from wizard import privacy, security
from wizard.ui import findings as fp
from wizard.ui import guard, services
from wizard.ui.state import (SessionError, browser_safe, config_of, field_value, load_session, new_state, redact_state,
                             session_json, set_field, state_from_config)
from wizard.ui.steps import hardware, kv, launch, plan, review, speculation, target
from wizard.ui.theme import CSS, FOCUS_JS

__all__ = ["build_app", "WizardUI", "CSS"]

STEP_MODULES = (hardware, target, speculation, kv, review)
STEP_MODULES_LIGHT = (hardware, target, speculation, kv)  # per-change path; review follows in .then()
SYNC_DELAY_MS = 400  # exports and the browser copy of the state follow a field change after this pause
# fields the speculation/KV steps re-fill (choices, bounds, values) after a change
SPEC_FIELDS = ("speculative_config.method", "speculative_config.model", "speculative_config.num_speculative_tokens",
               "kv_cache_dtype", "speculative_config.kv_cache_dtype")
#: largest file the UI accepts for upload (sessions and YAML files are a few KB)
MAX_UPLOAD = "5mb"
SESSION_MAX_BYTES = 4 * 2 ** 20  # largest session file loaded (real ones are a few KiB)


class WizardUI:
    """Component registry and event wiring of one Blocks app."""

    def __init__(self, allow_launch: bool = True, policy: security.PathPolicy | None = None):
        self.allow_launch = allow_launch
        #: which local folders the UI may read models from, and whether unsafe options may launch
        self.policy = policy or security.PathPolicy(model_dirs=security.default_model_dirs())
        self.demo: gr.Blocks | None = None
        self.c: dict[str, Any] = {}
        self.fields: dict[str, Any] = {}
        self.meta: dict[str, dict] = {}
        self.slots: list[dict[str, Any]] = []
        self.last_timing_ms: float = 0.0
        # the newest state per browser session: every event starts from it and commits to it, so
        # events that overlap (a keystroke's .input and the .blur of a tab click) never lose a value
        self._lock = threading.Lock()
        self._latest: dict[str, dict] = {}
        self._rev = itertools.count(1)
        # per browser session: fields changed since the last debounced sync, each with the hub
        # setting of its event; their step widgets (facts tables, method notes) follow in the sync
        self._pending: dict[str, dict[str, bool | None]] = {}

    # ---- what this UI may do ------------------------------------------------------------------
    def launch_block(self) -> str | None:
        """Why servers may not be launched (nor vLLM's check run) from this UI now, or None.

        Decided at click time from how the app is actually served (:func:`guard.exposure`):
        loopback without a share link, or a login, whatever started it."""
        if not self.allow_launch:
            return "launching was turned off when this UI was built (build_app(allow_launch=False))"
        return guard.exposure(self.demo)

    def evaluate(self, state: dict, allow_hub: bool | None = None):
        """:func:`services.evaluate` under this UI's folder policy (local paths outside the allowed
        folders are not read at all)."""
        return services.evaluate(state, allow_hub=allow_hub, path_allowed=self.policy.allows)

    # ---- per-session newest state ------------------------------------------------------------
    def base(self, sess: str | None, state: dict) -> dict:
        """The newest committed state of browser session ``sess`` (``state`` when none is newer)."""
        if not sess:
            return state
        with self._lock:
            cur = self._latest.get(sess)
        if cur is None or int(cur.get("rev") or 0) < int((state or {}).get("rev") or 0):
            return state
        return cur

    def commit(self, sess: str | None, state: dict) -> dict:
        """Record ``state`` as the newest of ``sess``; returns it with a fresh ``rev``."""
        st = dict(state)
        st["rev"] = next(self._rev)
        if sess:
            with self._lock:
                self._latest[sess] = st
        return st

    def update_field(self, sess: str | None, state: dict, fn: Callable[[dict], dict]) -> dict:
        """Apply one field's change ``fn`` to the newest state of ``sess`` and commit it (atomic)."""
        if not sess:
            return self.commit(None, fn(state))
        with self._lock:
            cur = self._latest.get(sess)
            base = state if cur is None or int(cur.get("rev") or 0) < int((state or {}).get("rev") or 0) else cur
            st = dict(fn(base))
            st["rev"] = next(self._rev)
            self._latest[sess] = st
        return st

    def newest(self, sess: str | None) -> dict | None:
        if not sess:
            return None
        with self._lock:
            return self._latest.get(sess)

    def forget(self, sess: str | None) -> None:
        with self._lock:
            self._latest.pop(sess or "", None)
            self._pending.pop(sess or "", None)

    def mark_pending(self, sess: str | None, path: str, hub: bool | None = None) -> None:
        """Remember that field ``path`` changed in ``sess``; its step widgets follow in the next sync."""
        with self._lock:
            d = self._pending.setdefault(sess or "", {})
            d[path] = None if (path in d and d[path] is None) else hub

    def take_pending(self, sess: str | None) -> dict[str, bool | None]:
        """The fields changed in ``sess`` since the last sync (path -> hub setting); clears them."""
        with self._lock:
            return self._pending.pop(sess or "", {})

    def step_updates(self, state: dict, ev, changed) -> dict:
        """The step widgets' updates (facts tables, method notes, groups, dependent dropdowns)
        after the fields ``changed`` (an iterable of dotted paths) changed; ``ev`` checks ``state``."""
        out: dict = {}
        for path in changed:
            for mod in STEP_MODULES_LIGHT:
                try:
                    out.update(mod.update(self, state, ev, False, path))
                except Exception as err:  # a step must never take the panel down
                    out[self.c["toast"]] = f"step {mod.__name__.rsplit('.', 1)[-1]}: {type(err).__name__}: {err}"
        return out

    def render_newest(self, sess: str | None, state: dict, seq: int, **kw) -> dict:
        """:meth:`render` of ``state``; when a newer event committed meanwhile, render the newest
        state instead, so whichever response lands last shows the final value."""
        for _ in range(4):
            out = self.render(state, seq, **kw)
            cur = self.newest(sess)
            if cur is None or cur.get("rev") == state.get("rev"):
                return out
            state, kw = cur, {**kw, "changed": None}
        return out

    def field(self, path: str, comp, *, to_form: Callable | None = None, source: str = "config", event: str = "input",
              special: str | None = None):
        """Register a form field bound to dotted ``path`` of the state."""
        self.fields[path] = comp
        self.meta[path] = {"to_form": to_form, "source": source, "event": event, "special": special}
        return comp

    # ---- state -> updates ------------------------------------------------------------------
    def form_value(self, state: dict, path: str):
        m = self.meta[path]
        raw = (state.get("raw") or {}).get(path)
        if raw is not None and path != "extra_args":
            return raw
        if m["source"] == "gpu":
            v = (state.get("gpu") or {}).get(path.split(".", 1)[1])
        elif m["source"] == "setting":
            v = state.get(path)
        elif m["special"] == "extra_args":
            raw = (state.get("raw") or {}).get("extra_args")
            if raw is not None:
                return raw
            v = (state.get("config") or {}).get("extra_args") or {}
        else:
            v = field_value(state, path)
        if m["to_form"] is not None:
            try:
                return m["to_form"](v)
            except Exception:
                return v
        return "" if v is None else str(v) if not isinstance(v, (dict, list)) else json.dumps(v)

    def render(self, state: dict, seq: int, *, changed: str | None, full: bool, hub: bool | None = None,
               prev_meta: list | None = None, steps: bool = True) -> dict:
        """Check ``state`` and return every update: findings panel, steps, (full: field values).

        ``steps=False`` (per-keystroke path, not full): the panel only; the step widgets follow in
        the debounced :meth:`secondary` (see :meth:`mark_pending`)."""
        t0 = time.perf_counter()
        ev = self.evaluate(state, allow_hub=hub)
        seq = int(seq or 0) + 1
        out: dict = {self.c["state"]: state, self.c["seq"]: seq}
        out.update(self.panel(ev, seq, None if full else prev_meta))
        for mod in STEP_MODULES if full else STEP_MODULES_LIGHT if steps else ():
            try:
                out.update(mod.update(self, state, ev, full, changed))
            except Exception as err:  # a step must never take the panel down
                out[self.c["toast"]] = f"step {mod.__name__.rsplit('.', 1)[-1]}: {type(err).__name__}: {err}"
        if full:
            for path, comp in self.fields.items():
                upd = out.get(comp)
                val = self.form_value(state, path)
                if upd is None:
                    out[comp] = val
                elif isinstance(upd, gr.components.Component) or hasattr(upd, "value"):
                    try:
                        upd.value = val
                    except Exception:
                        pass
        self.last_timing_ms = (time.perf_counter() - t0) * 1000
        if full:
            out.update(self.secondary(state, ev))
        return out

    def secondary(self, state: dict, ev=None, pending: dict[str, bool | None] | None = None) -> dict:
        """What may lag the panel by one event: exports, downloads, the browser copy of the state,
        and the step widgets of the fields in ``pending`` (path -> hub setting of their event)."""
        if ev is None:
            hub = None if pending and any(h is None for h in pending.values()) else False
            ev = self.evaluate(state, allow_hub=hub)
        # the browser's copy (localStorage) holds credentials as $VAR references, like saved sessions
        out = {self.c["bstate"]: browser_safe(redact_state(state)), self.c["session_dl"]: self.session_file(state)}
        if pending:
            out.update(self.step_updates(state, ev, pending))
        try:
            out.update(review.update(self, state, ev, False, "secondary"))
        except Exception as err:
            out[self.c["toast"]] = f"review: {type(err).__name__}: {err}"
        return out

    def secondary_outputs(self) -> list:
        keys = ["bstate", "session_dl", "toast", "xc_wizard", "xc_vllm", "extra_note", "exp_yaml_dl"]
        keys += [k for k in self.c if k.startswith("exp_")]
        return [self.c[k] for k in dict.fromkeys(keys)] + self.step_outputs()

    def step_outputs(self) -> list:
        """The step widgets a field change may update (besides the findings panel)."""
        outs = [self.c[k] for k in ("hw_facts", "target_facts", "method_md", "drafter_group", "ngram_group",
                                    "suffix_group", "kv_md")]
        return outs + [self.fields[p] for p in SPEC_FIELDS]

    def panel(self, ev, seq: int, prev_meta: list | None = None) -> dict:
        c = self.c
        out: dict = {c["summary"]: fp.summary_html(ev, seq)}
        items = fp.ordered(ev.report.findings) if ev.report is not None else []
        meta = []
        counts: dict[str, int] = {}
        for f in items:
            counts[f.severity.value] = counts.get(f.severity.value, 0) + 1
        prev = None
        for i, slot in enumerate(self.slots):
            if i < len(items):
                f = items[i]
                sev = f.severity.value
                sig = [f.rule, f.message, f.fields, [p.description for p in f.fixes], sev != prev]
                old = prev_meta[i] if prev_meta and i < len(prev_meta) else None
                if old and old.get("sig") == sig:  # unchanged card: send nothing for it
                    meta.append(old)
                    prev = sev
                    continue
                out[slot["group"]] = gr.Column(visible=True)
                out[slot["html"]] = fp.card_html(f, sev != prev, counts[sev])
                prev = sev
                fld = f.fields[0] if f.fields else None
                out[slot["goto"]] = gr.Button(value="Go to field", visible=fld is not None)
                for j, b in enumerate(slot["fixes"]):
                    if j < len(f.fixes):
                        out[b] = gr.Button(value=f"Apply: {f.fixes[j].description}", visible=True)
                    else:
                        out[b] = gr.Button(visible=False)
                meta.append({"rule": f.rule, "field": fld, "fixes": [p.as_json() for p in f.fixes[: fp.MAX_FIXES]],
                             "sig": sig})
            else:
                if not (prev_meta and i < len(prev_meta) and prev_meta[i] is None):
                    out[slot["group"]] = gr.Column(visible=False)
                meta.append(None)
        out[c["overflow"]] = fp.overflow_html(items[len(self.slots):])
        out[c["slot_meta"]] = meta
        return out

    def session_file(self, state: dict) -> str:
        """The "Save session" file: credentials redacted (:func:`session_json`), mode 0600 in the
        wizard's private folder (:func:`wizard.privacy.private_dir`)."""
        text = session_json(state)
        h = hashlib.sha1(text.encode()).hexdigest()[:12]
        p = privacy.private_dir("sessions") / h / "specwizard-session.json"
        if not p.exists():
            privacy.write_private(p, text)
        return str(p)

    def outputs(self) -> list:
        outs = [self.c[k] for k in ("state", "bstate", "seq", "summary", "overflow", "slot_meta", "session_dl", "toast")]
        for s in self.slots:
            outs += [s["group"], s["html"], s["goto"], *s["fixes"]]
        for mod_keys in self.c_step_keys:
            outs.append(self.c[mod_keys])
        outs += [c for c in self.fields.values() if c not in outs]
        seen, uniq = set(), []
        for o in outs:
            if id(o) not in seen:
                seen.add(id(o))
                uniq.append(o)
        return uniq


def _import_status(cfg, what: str) -> str:
    n_extra = len(cfg.extra_args)
    bits = [f"✓ {what} imported: target `{cfg.model}`"]
    if cfg.speculative_config is not None:
        bits.append(f"method `{cfg.speculative_config.method or '(inferred)'}`")
    if n_extra:
        bits.append(f"{n_extra} option(s) the wizard does not model kept in *Other options* (Review)")
    if cfg.invalid_values:
        bits.append(f"{len(cfg.invalid_values)} ill-typed value(s) kept verbatim")
    return " · ".join(bits)


def build_app(*, allow_launch: bool = True, title: str = "SpecWizard",
              allow_model_dirs: list[str | os.PathLike] | None = None, allow_unsafe_options: bool = False) -> gr.Blocks:
    """Build the wizard.

    Args:
        allow_launch: whether the Launch step may start servers at all. Even when True, launching
            (and vLLM's own config check) works only while the UI is bound to loopback without a
            share link, or a login is set, however it is started (:meth:`WizardUI.launch_block`).
        allow_model_dirs: local folders the UI may read and launch models from (default: the
            current folder and the Hugging Face cache); other local paths are refused without
            saying whether they exist. Gradio's upload folder is never allowed.
        allow_unsafe_options: let the Launch step start configurations with options that import
            code, read files outside those folders or widen the server's API
            (``--trust-remote-code``, ``--tool-parser-plugin``, ``--chat-template``...). Only the
            person starting the UI can turn this on; the Launch step says so when it is on.

    Returns a ``gr.Blocks``; call ``.launch()`` (inline in Jupyter). ``launch()`` binds 127.0.0.1
    and installs :class:`wizard.ui.guard.RequestGuard` (Host/Origin check, login throttling)
    unless told otherwise. Files the UI writes, Gradio's uploads included, live in the wizard's
    private folder (mode 0700), removed on exit.
    """
    if not os.environ.get("GRADIO_TEMP_DIR"):  # Gradio's uploads and copies: private, removed on exit
        os.environ["GRADIO_TEMP_DIR"] = str(privacy.private_dir("gradio"))
    dirs = security.default_model_dirs() if allow_model_dirs is None else [os.fspath(d) for d in allow_model_dirs]
    ui = WizardUI(allow_launch=allow_launch,
                  policy=security.PathPolicy(model_dirs=dirs, allow_unsafe_options=bool(allow_unsafe_options)))
    c = ui.c
    with gr.Blocks(title=title, fill_width=True) as demo:
        c["state"] = gr.State(new_state())
        c["seq"] = gr.State(0)
        c["slot_meta"] = gr.State([])
        c["bstate"] = gr.BrowserState(None, storage_key="specwizard-state")
        c["focus"] = gr.Textbox(visible=False, elem_id="sw-focus")
        # clicked (debounced, from the browser) after field changes: exports, downloads and the
        # browser copy of the state follow the panel without sharing each keystroke's round trip
        c["sync"] = gr.Button("sync", visible="hidden", elem_id="sw-sync")
        with gr.Row(equal_height=False):
            with gr.Column(scale=3):
                gr.Markdown("# SpecWizard\nConfigure **speculative decoding in vLLM**: pick the hardware and the "
                            "target, choose a method and drafter, check every change live, then export or launch.",
                            elem_id="sw-title")
                with gr.Row():
                    try:
                        preset_choices, preset_info = services.presets(), "Curated, checked deployments."
                    except Exception as err:
                        preset_choices, preset_info = [], f"presets unavailable: {err}"
                    c["preset"] = gr.Dropdown(preset_choices, value=None, label="Start from a preset",
                                              info=preset_info, elem_id="sw-preset", scale=3)
                    c["session_dl"] = gr.DownloadButton("Save session", value=None, elem_id="sw-session-save", size="sm",
                                                        scale=1)
                    c["session_ul"] = gr.UploadButton("Load session", file_types=[".json"], elem_id="sw-session-load",
                                                      size="sm", scale=1)
                    c["reset"] = gr.Button("New", size="sm", scale=0, elem_id="sw-reset")
                with gr.Accordion("Import a `vllm serve` command or a YAML file", open=False, elem_id="sw-import-acc"):
                    with gr.Row():
                        with gr.Column(scale=3):
                            c["import_cmd"] = gr.Textbox(label="Paste a command", lines=1, max_lines=6, elem_id="sw-import-cmd",
                                                         info="Paste a command, then press Import (or press Enter).",
                                                         placeholder="vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{...}'")
                            c["import_btn"] = gr.Button("Import", variant="primary", size="sm", elem_id="sw-import-btn")
                        c["import_yaml"] = gr.File(label="…or upload YAML (vllm serve --config)", file_types=[".yaml", ".yml"],
                                                   type="filepath", scale=1, elem_id="sw-import-yaml", height=140)
                    c["import_status"] = gr.Markdown(elem_id="sw-import-status")
                c["toast"] = gr.Markdown(elem_id="sw-toast")
                with gr.Tabs(elem_id="sw-tabs", overflow_behavior="wrap") as tabs:
                    c["tabs"] = tabs
                    for step_id, label in fp.STEPS:
                        with gr.Tab(label, id=step_id, elem_id=f"sw-tab-{step_id}") as tab:
                            c[f"tab_{step_id}"] = tab
                            {"hardware": hardware, "target": target, "speculation": speculation, "kv": kv,
                             "plan": plan, "review": review, "launch": launch}[step_id].build(ui)
            with gr.Column(scale=2, min_width=340, elem_id="sw-sidebar"):
                gr.Markdown("### Live check")
                c["summary"] = gr.HTML(fp.summary_html(None, 0), elem_id="sw-summary")
                for i in range(fp.MAX_SLOTS):
                    with gr.Column(visible=False, elem_classes=["sw-slot"], elem_id=f"sw-slot-{i}") as g:
                        h = gr.HTML(elem_id=f"sw-finding-{i}")
                        with gr.Row():
                            goto = gr.Button("Go to", size="sm", elem_id=f"sw-goto-{i}", scale=0, min_width=80)
                            fixes = [gr.Button("Apply", size="sm", variant="primary", elem_id=f"sw-fix-{i}-{j}", visible=False)
                                     for j in range(fp.MAX_FIXES)]
                    ui.slots.append({"group": g, "html": h, "goto": goto, "fixes": fixes})
                c["overflow"] = gr.HTML(elem_id="sw-overflow")

        ui.c_step_keys = [k for k in c if k not in ("state", "bstate", "seq", "slot_meta", "focus", "sync", "tabs", "preset",
                                                    "session_ul", "reset", "import_cmd", "import_yaml", "import_btn")
                          and not k.startswith("tab_") and not k.startswith("ln_") and not k.startswith("plan_")
                          and not k.startswith("xc_") or k in ("xc_wizard", "xc_vllm")]
        outputs = ui.outputs()
        quiet = {"show_progress": "hidden"}

        # ---- every field re-validates on change (no submit button) ---------------------------
        def sess_of(request) -> str | None:
            return getattr(request, "session_hash", None) if request is not None else None

        def make_handler(path: str, hub: bool | None = None):
            special = ui.meta[path]["special"]

            def change(state: dict, value) -> dict:
                if special == "extra_args":
                    st = dict(state)
                    st["raw"] = dict(st.get("raw") or {})
                    try:
                        parsed = json.loads(value) if str(value or "").strip() else {}
                        if not isinstance(parsed, dict):
                            raise ValueError("not an object")
                        st["config"] = dict(st["config"])
                        if parsed:
                            st["config"]["extra_args"] = parsed
                        else:
                            st["config"].pop("extra_args", None)
                        st["raw"].pop("extra_args", None)
                    except ValueError:
                        st["raw"]["extra_args"] = value
                    return st
                st = set_field(state, path, value)
                if path == "speculative_config.method":
                    st = speculation.on_method_chosen(st, state)
                return st

            # the method fills the drafter list, k bounds and groups at once; every other field sends
            # the panel only and leaves its step widgets to the debounced sync
            steps = path == "speculative_config.method"
            allowed = set(map(id, method_outs if steps else fast_outs))

            def handler(state, seq, value, prev_meta=None, request: gr.Request = None):
                sess = sess_of(request)
                st = ui.update_field(sess, state, lambda base: change(base, value))
                if not steps:
                    ui.mark_pending(sess, path, hub)
                out = ui.render_newest(sess, st, seq, changed=path, full=False, hub=hub, prev_meta=prev_meta,
                                       steps=steps)
                return {k: v for k, v in out.items() if id(k) in allowed}

            return handler

        sec_outs = ui.secondary_outputs()
        # per-keystroke outputs: the panel only (step widgets follow in the debounced sync)
        fast_outs = [c[k] for k in ("state", "seq", "summary", "overflow", "slot_meta")]
        for s_ in ui.slots:
            fast_outs += [s_["group"], s_["html"], s_["goto"], *s_["fixes"]]
        # the method dropdown also fills the drafter list, k bounds, groups and notes at once
        method_outs = fast_outs + [c["toast"]] + [o for o in ui.step_outputs() if o not in fast_outs]

        def secondary(state, request: gr.Request = None):
            sess = sess_of(request)
            return ui.secondary(ui.base(sess, state), pending=ui.take_pending(sess))

        # exports/downloads/browser copy follow SYNC_DELAY_MS after the last change (one request per
        # pause, not per keystroke: the per-keystroke follow-up doubled the field -> panel latency)
        sync_js = ("() => { clearTimeout(window.__swSync); window.__swSync = setTimeout(() => "
                   "{ const b = document.querySelector('#sw-sync'); if (b) b.click(); }, %d); }" % SYNC_DELAY_MS)
        c["sync"].click(secondary, [c["state"]], sec_outs, queue=False, trigger_mode="always_last", **quiet)

        def bind(evt, fn, comp, outs=fast_outs):
            # the panel first (no queue: one HTTP round trip), then, debounced, exports/downloads/browser
            # copy/step widgets. always_last: a keystroke made while the previous one is being checked
            # is sent after it (the default, "once", drops it: typing "55" fast used to check "5").
            evt(fn, [c["state"], c["seq"], comp, c["slot_meta"]], outs, queue=False, trigger_mode="always_last",
                **quiet).then(None, None, None, js=sync_js, queue=False, **quiet)

        for path, comp in ui.fields.items():
            if path == "model":
                bind(comp.input, make_handler(path, hub=False), comp)
                bind(comp.blur, make_handler(path), comp)
                bind(comp.submit, make_handler(path), comp)
                continue
            bind(comp.input, make_handler(path), comp, method_outs if path == "speculative_config.method" else fast_outs)
            # typed boxes also commit on leaving the box / Enter, so the final text always wins
            # (a tab click right after typing, or a programmatic fill without key events)
            if isinstance(comp, (gr.Textbox, gr.Number, gr.Code)):
                bind(comp.blur, make_handler(path), comp)
                if hasattr(comp, "submit"):
                    bind(comp.submit, make_handler(path), comp)

        def full(state, seq, request=None, **kw):
            st = ui.commit(sess_of(request), state)
            return ui.render(st, seq, changed=None, full=True)

        # catalog pick fills the model box
        def pick_catalog(state, seq, value, request: gr.Request = None):
            if not value:
                return {c["state"]: gr.skip()}  # nothing to do (an empty dict reads as one missing value)
            return full(set_field(ui.base(sess_of(request), state), "model", value), seq, request)

        c["target_catalog"].input(pick_catalog, [c["state"], c["seq"], c["target_catalog"]], outputs, **quiet)

        # ---- findings panel actions ---------------------------------------------------------
        def apply_fix(i: int, j: int):
            def fn(state, seq, meta, request: gr.Request = None):
                state = ui.base(sess_of(request), state)
                m = meta[i] if i < len(meta or []) else None
                cfg = config_of(state)
                if not m or j >= len(m["fixes"]) or cfg is None:
                    return {c["state"]: gr.skip()}  # nothing to do (an empty dict reads as one missing value)
                new = apply_patch(cfg, Patch(**m["fixes"][j]))
                out = full(state_from_config(new, base=state), seq, request)
                out[c["toast"]] = f"Applied: {m['fixes'][j]['description']} (fix of {m['rule']})"
                return out
            return fn

        def goto(i: int):
            def fn(meta):
                m = meta[i] if i < len(meta or []) else None
                if not m or not m["field"]:
                    return {c["focus"]: gr.skip()}
                return {c["tabs"]: gr.Tabs(selected=fp.step_of(m["field"])),
                        c["focus"]: f"{fp.elem_id(m['field'])}#{time.time_ns()}"}
            return fn

        for i, slot in enumerate(ui.slots):
            slot["goto"].click(goto(i), [c["slot_meta"]], [c["tabs"], c["focus"]], **quiet)
            for j, b in enumerate(slot["fixes"]):
                b.click(apply_fix(i, j), [c["state"], c["seq"], c["slot_meta"]], outputs, **quiet)
        c["focus"].change(None, [c["focus"]], None, js=FOCUS_JS)

        # ---- import / presets / sessions ------------------------------------------------------
        def do_import_cmd(state, seq, text, request: gr.Request = None):
            text = (text or "").strip()
            if not text:
                return {c["import_status"]: "Paste a `vllm serve ...` command first."}
            try:
                cfg = services_load(command=text)
            except Exception as err:
                return {c["import_status"]: f"⚠ Not imported yet: {err}"}
            out = full(state_from_config(cfg, base=ui.base(sess_of(request), state)), seq, request)
            out[c["import_status"]] = _import_status(cfg, "command")
            return out

        imp_in, imp_out = [c["state"], c["seq"], c["import_cmd"]], outputs + [c["import_status"]]
        c["import_cmd"].input(do_import_cmd, imp_in, imp_out, trigger_mode="always_last", **quiet)
        c["import_cmd"].submit(do_import_cmd, imp_in, imp_out, **quiet)
        c["import_btn"].click(do_import_cmd, imp_in, imp_out, **quiet)

        def do_import_yaml(state, seq, path, request: gr.Request = None):
            if not path:
                return {c["state"]: gr.skip()}  # nothing to do (an empty dict reads as one missing value)
            name = Path(path).name  # the user's file name; never the server's upload folder
            try:
                cfg = services_load(config_file=path)
            except Exception as err:
                msg = str(err).replace(str(path), name).replace(str(Path(path).parent) + "/", "")
                return {c["import_status"]: f"⚠ `{name}` not imported: {msg}"}
            out = full(state_from_config(cfg, base=ui.base(sess_of(request), state)), seq, request)
            out[c["import_status"]] = _import_status(cfg, f"YAML `{name}`")
            return out

        c["import_yaml"].upload(do_import_yaml, [c["state"], c["seq"], c["import_yaml"]], outputs + [c["import_status"]], **quiet)

        def do_preset(state, seq, name, request: gr.Request = None):
            if not name:
                return {c["state"]: gr.skip()}  # nothing to do (an empty dict reads as one missing value)
            try:
                cfg, gpu = services.load_preset(name)
            except Exception as err:
                return {c["toast"]: f"⚠ preset {name}: {err}"}
            out = full(state_from_config(cfg, base=ui.base(sess_of(request), state), gpu=gpu), seq, request)
            out[c["toast"]] = f"Loaded preset **{name}**" + (f" for {gpu}" if gpu else "")
            return out

        c["preset"].input(do_preset, [c["state"], c["seq"], c["preset"]], outputs, **quiet)

        def do_load_session(seq, path, request: gr.Request = None):
            if not path:
                return {c["state"]: gr.skip()}  # nothing to do (an empty dict reads as one missing value)
            try:
                from wizard.io.safeio import read_regular_file

                # a session is a few KiB: a huge upload is refused, not read into memory
                st = load_session(read_regular_file(path, limit=SESSION_MAX_BYTES, what="session file"))
            except (OSError, ValueError, SessionError) as err:
                return {c["toast"]: f"⚠ {str(err).replace(str(path), Path(path).name)}"}
            out = full(st, seq, request)
            out[c["toast"]] = "Session loaded."
            return out

        c["session_ul"].upload(do_load_session, [c["seq"], c["session_ul"]], outputs, **quiet)

        def do_reset(seq, request: gr.Request = None):
            return full(new_state(), seq, request)

        c["reset"].click(do_reset, [c["seq"]], outputs, **quiet)

        def restore(bstate, seq, request: gr.Request = None):
            st = new_state()
            if isinstance(bstate, dict) and isinstance(bstate.get("config"), dict):
                try:
                    st = load_session(json.dumps(bstate))
                except SessionError:
                    pass
            elif hardware.detected_spec():  # a fresh wizard starts on this machine's GPUs
                st = state_from_config_gpu(st, hardware.detected_spec())
            out = full(st, seq, request)
            try:  # catalogs may have grown since the app was built
                out[c["preset"]] = gr.Dropdown(choices=services.presets())
            except Exception:
                pass
            try:
                out[c["target_catalog"]] = gr.Dropdown(choices=services.catalog_models("target"))
            except Exception:
                pass
            return out

        demo.load(restore, [c["bstate"], c["seq"]], outputs + [c["preset"]], **quiet)

        # ---- plan (computed when the step is opened) ------------------------------------------
        plan_outs = [c["plan_md"], c["plan_mem"], c["plan_speedup"], c["plan_json"]]

        def open_plan(state, request: gr.Request = None):
            return plan.compute_safe(ui, ui.base(sess_of(request), state))

        # the charts are laid out while the tab is still appearing; a resize makes Vega measure the
        # axis labels again (without it they were cut off on the first showing)
        c["tab_plan"].select(open_plan, [c["state"]], plan_outs, **quiet).then(
            None, None, None, js="() => { for (const t of [150, 600]) setTimeout(() => window.dispatchEvent(new Event('resize')), t); }")

        # ---- cross-check ------------------------------------------------------------------------
        def xc(state, on, request: gr.Request = None):
            sess = sess_of(request)
            st = dict(ui.base(sess, state))
            st["xc_on"] = bool(on)
            st = ui.commit(sess, st)
            if not on:
                return {c["state"]: st, c["xc_vllm"]: '<div class="sw-xc sw-xc-off"><b>vLLM</b><div>Cross-check is off.</div></div>'}
            block = ui.launch_block()
            if block is None:
                rv = security.review_launch(config_of(st), ui.policy) if config_of(st) is not None else None
                if rv is not None and (rv.blocking or rv.needs_opt_in(ui.policy)):
                    block = "the configuration has inputs the Launch step refuses (see there)"
            if block is not None:
                return {c["state"]: st, c["xc_vllm"]: ('<div class="sw-xc sw-xc-off" data-verdict="unavailable"><b>vLLM</b>'
                                                       f"<div>Cross-check is disabled: {html_escape(block)}.</div></div>")}
            return {c["state"]: st, c["xc_vllm"]: review.cross_check_html(ui.evaluate(st))}

        c["xc_toggle"].input(xc, [c["state"], c["xc_toggle"]], [c["state"], c["xc_vllm"]])
        def xc_rerun(state, request: gr.Request = None):
            return xc(state, True, request)

        c["xc_rerun"].click(xc_rerun, [c["state"]], [c["state"], c["xc_vllm"]])

        # ---- launch & monitor -----------------------------------------------------------------
        ln_outs = [c["state"], c["ln_status"], c["ln_timer"], c["ln_logs"], c["ln_pos"], c["ln_time"], c["ln_metrics"],
                   c["ln_diag"], c["ln_diag_row"], c["ln_fix_relaunch"]]

        def do_launch(state, force, request: gr.Request):
            sess = sess_of(request)
            state = ui.base(sess, state)
            st, msg = launch.start(state, ui.evaluate(state), bool(force), ui.launch_block(), sess, policy=ui.policy)
            if st is not state:
                st = ui.commit(sess, st)
            return {c["state"]: st, c["ln_status"]: msg, c["ln_timer"]: gr.Timer(active=st.get("server") != state.get("server")),
                    c["ln_review"]: launch.review_md(ui, st)}

        c["ln_launch"].click(do_launch, [c["state"], c["ln_force"]], ln_outs + [c["ln_review"]])

        def open_launch(state, request: gr.Request = None):
            return {c["ln_review"]: launch.review_md(ui, ui.base(sess_of(request), state))}

        c["tab_launch"].select(open_launch, [c["state"]], [c["ln_review"]], **quiet)
        c["ln_stop"].click(lambda s: launch.stop(s) or {}, [c["state"]], ln_outs)
        c["ln_smoke"].click(lambda s, n: {c["ln_metrics"]: launch.smoke(s, n or 8)}, [c["state"], c["ln_smoke_n"]], ln_outs)
        c["ln_timer"].tick(lambda s: launch.poll(ui, s), [c["state"]], ln_outs, **quiet)

        def fix_relaunch(state, seq, force, request: gr.Request):
            sess = sess_of(request)
            state = ui.base(sess, state)
            patch = launch.diagnosis_fix(state)
            cfg = config_of(state)
            if patch is None or cfg is None:
                return {c["toast"]: "No fix to apply."}
            st = state_from_config(apply_patch(cfg, patch), base=state)
            st["server"] = state.get("server")
            out = full(st, seq, request)
            st = out[c["state"]]
            st2, msg = launch.start(st, ui.evaluate(st), bool(force), ui.launch_block(), sess, policy=ui.policy)
            out[c["state"]] = ui.commit(sess, st2)
            out[c["ln_status"]] = msg
            out[c["ln_timer"]] = gr.Timer(active=True)
            out[c["toast"]] = f"Applied: {patch.description}; relaunching."
            return out

        c["ln_fix_relaunch"].click(fix_relaunch, [c["state"], c["seq"], c["ln_force"]], outputs + ln_outs)

        def on_unload(request: gr.Request):
            sess = sess_of(request)
            launch.stop_session(sess)
            ui.forget(sess)

        demo.unload(on_unload)

    demo.wizard_ui = ui  # for tests and benchmarks
    ui.demo = demo
    _default_launch_kwargs(demo)
    return demo


def state_from_config_gpu(state: dict, spec: str) -> dict:
    name, _, n = spec.rpartition("x")
    st = set_field(state, "gpu.name", name or spec)
    return set_field(st, "gpu.count", int(n) if n.isascii() and n.isdigit() and len(n) < 6 else 1)


def html_escape(text: str) -> str:
    import html

    return html.escape(str(text))


def services_load(**kw):
    from wizard import api

    return api.load(**kw)


def _default_launch_kwargs(demo: gr.Blocks) -> None:
    """Make ``demo.launch()`` bind 127.0.0.1, apply the wizard's CSS, cap uploads, and put
    :class:`wizard.ui.guard.RequestGuard` in front of every request, unless told otherwise."""
    orig = demo.launch

    def launch_(*args, **kwargs):
        from starlette.middleware import Middleware

        kwargs.setdefault("server_name", "127.0.0.1")
        kwargs.setdefault("css", CSS)
        kwargs.setdefault("theme", gr.themes.Soft())
        kwargs.setdefault("max_file_size", MAX_UPLOAD)
        # Gradio's start-up probe of its own URL (one HEAD request, 3 s timeout) makes launch()
        # raise "localhost is not accessible" on a loaded machine; the wizard binds loopback
        # itself, so that probe can only fail spuriously.
        kwargs.setdefault("_frontend", False)
        app_kwargs = dict(kwargs.get("app_kwargs") or {})
        app_kwargs["middleware"] = [*app_kwargs.get("middleware", []),
                                    Middleware(guard.RequestGuard, demo=demo, **getattr(demo, "guard_options", {}))]
        kwargs["app_kwargs"] = app_kwargs
        return orig(*args, **kwargs)

    demo.launch = launch_  # type: ignore[method-assign]
