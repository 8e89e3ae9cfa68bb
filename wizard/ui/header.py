"""The header row: title, preset, Import (a `vllm serve` command or a YAML file), Save/Load
session, New (after a confirmation), and restoring the tab's state on page load.

Import runs on the Import button or Enter only: a half-typed command never replaces the
configuration. Every event here replaces the whole configuration (:meth:`WizardUI.full`) and
records the one it replaces, so Undo brings it back.
"""

from __future__ import annotations

import html

from pathlib import Path

import gradio as gr

from wizard import api
from wizard.io.safeio import read_regular_file
from wizard.ui import services
from wizard.ui.core import WizardUI, sess_of
from wizard.ui.state import (SESSION_MAX_BYTES, SessionError, config_problem, dump_config, load_session, new_state,
                             known_settings, push_history, restore_session, set_field, state_from_config)
from wizard.ui.theme import IMPORT_TOGGLE_JS

__all__ = ["build", "wire", "import_status", "SESSION_MAX_BYTES"]

# SESSION_MAX_BYTES (wizard.ui.state): largest session file loaded (real ones are a few KiB)


def build(ui: WizardUI) -> None:
    c = ui.c
    with gr.Row(elem_id="sw-header", equal_height=True):
        gr.HTML('<div class="sw-brand">SpecWizard</div><div class="sw-tag">Speculative decoding for vLLM: '
                "every change is checked live; export or launch when it looks good.</div>", elem_id="sw-title")
        try:
            choices, info = services.presets(), None
        except Exception as err:  # a broken presets folder: the wizard still works
            choices, info = [], f"presets unavailable: {err}"
        c["preset"] = gr.Dropdown(choices, value=None, label="Preset", show_label=False, container=False,
                                  info=info, elem_id="sw-preset", scale=3, min_width=200,
                                  allow_custom_value=False)
        c["import_open"] = gr.Button("Import…", size="sm", scale=0, min_width=80, elem_id="sw-import-acc")
        c["session_dl"] = gr.DownloadButton("Save", value=None, size="sm", scale=0, min_width=64,
                                            elem_id="sw-session-save")
        c["session_ul"] = gr.UploadButton("Load", file_types=[".json"], size="sm", scale=0, min_width=64,
                                          elem_id="sw-session-load")
        c["reset"] = gr.Button("New", size="sm", scale=0, min_width=56, elem_id="sw-reset")
    with gr.Row(elem_id="sw-import-row", equal_height=False):
        with gr.Column(scale=3, min_width=300):
            c["import_cmd"] = gr.Textbox(label="Paste a `vllm serve` command, then press Import (or Enter)",
                                         lines=1, max_lines=6, elem_id="sw-import-cmd",
                                         info="Paste a command, then press Import (or press Enter).",
                                         placeholder="vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{...}'")
            c["import_btn"] = gr.Button("Import", variant="primary", size="sm", elem_id="sw-import-btn")
        c["import_yaml"] = gr.File(label="…or a YAML file (vllm serve --config)", file_types=[".yaml", ".yml"],
                                   type="filepath", scale=1, min_width=200, elem_id="sw-import-yaml", height=110)
    c["import_status"] = gr.Markdown(elem_id="sw-import-status")
    with gr.Row(visible=False, elem_id="sw-new-confirm") as r:
        gr.Markdown("**Start a new configuration?** The current one is cleared (Undo brings it back).")
        c["reset_yes"] = gr.Button("Start new", variant="stop", size="sm", scale=0, min_width=100, elem_id="sw-reset-yes")
        c["reset_no"] = gr.Button("Keep editing", size="sm", scale=0, min_width=110, elem_id="sw-reset-no")
    c["reset_row"] = r
    c["bstate"] = gr.BrowserState(None, storage_key="specwizard-state")


def import_status(cfg, what: str) -> str:
    """One line after an import: what came in, what is kept aside."""
    n_extra = len(cfg.extra_args)
    bits = [f"✓ {what} imported: target `{cfg.model}`"]
    if cfg.speculative_config is not None:
        bits.append(f"method `{cfg.speculative_config.method or '(inferred)'}`")
    if n_extra:
        bits.append(f"{n_extra} option(s) the wizard does not model kept in *Other options* (Review)")
    if cfg.invalid_values:
        bits.append(f"{len(cfg.invalid_values)} ill-typed value(s) kept verbatim")
    shell = [n.message for n in cfg.import_notes if n.kind == "shell_syntax"]
    if shell:  # what the importer left out of a pasted shell line (rule SD019 says it again)
        bits.append(html.escape(shell[0][:200]))
    return " · ".join(bits)


def state_with_gpu(state: dict, spec: str) -> dict:
    """``state`` on the GPUs 'NAMExN'."""
    name, _, n = spec.rpartition("x")
    st = set_field(state, "gpu.name", name or spec)
    return set_field(st, "gpu.count", int(n) if n.isascii() and n.isdigit() and len(n) < 6 else 1)


def wire(ui: WizardUI) -> None:
    c = ui.c
    outs = ui.full_outputs()
    st_c = c["state"]

    ui.on(c["import_open"].click, None, None, None, js=IMPORT_TOGGLE_JS)

    def do_import_cmd(state, text, request: gr.Request = None):
        text = (text or "").strip()
        if not text:
            return {c["import_status"]: "Paste a `vllm serve ...` command first."}
        try:
            cfg = api.load(command=text)
        except Exception as err:
            return {c["import_status"]: f"⚠ Not imported yet: {err}"}
        problem = config_problem(dump_config(cfg))
        if problem is not None:  # beyond what one tab holds: the current configuration stays
            return {c["import_status"]: f"⚠ Not imported: the command: {problem}"}
        sess = sess_of(request)
        base = ui.base(sess, state)
        out = ui.full(sess, state_from_config(cfg, base=push_history(base, "Import a command")))
        out[c["import_status"]] = import_status(cfg, "command")
        return out

    imp_in, imp_out = [st_c, c["import_cmd"]], outs + [c["import_status"]]
    ui.on(c["import_cmd"].submit, do_import_cmd, imp_in, imp_out)
    ui.on(c["import_btn"].click, do_import_cmd, imp_in, imp_out)

    def do_import_yaml(state, path, request: gr.Request = None):
        if not path:
            return {c["import_status"]: gr.skip()}
        name = Path(path).name  # the user's file name; never the server's upload folder
        try:
            cfg = api.load(config_file=path)
        except Exception as err:
            msg = str(err).replace(str(path), name).replace(str(Path(path).parent) + "/", "")
            return {c["import_status"]: f"⚠ `{name}` not imported: {msg}"}
        problem = config_problem(dump_config(cfg))
        if problem is not None:  # beyond what one tab holds: the current configuration stays
            return {c["import_status"]: f"⚠ `{name}` not imported: {problem}"}
        sess = sess_of(request)
        out = ui.full(sess, state_from_config(cfg, base=push_history(ui.base(sess, state), f"Import {name}")))
        out[c["import_status"]] = import_status(cfg, f"YAML `{name}`")
        return out

    ui.on(c["import_yaml"].upload, do_import_yaml, [st_c, c["import_yaml"]], imp_out)

    def do_preset(state, name, request: gr.Request = None):
        if not name:  # cleared: nothing to load
            return {c["panel"]: gr.skip()}
        try:
            cfg, gpu = services.load_preset(name)
        except Exception as err:
            return {c["import_status"]: f"⚠ preset {name}: {err}"}
        sess = sess_of(request)
        st = state_from_config(cfg, base=push_history(ui.base(sess, state), f"Load preset {name}"), gpu=gpu)
        return ui.full(sess, st, note=f"Loaded preset {name}" + (f" for {gpu}" if gpu else ""))

    ui.on(c["preset"].input, do_preset, [st_c, c["preset"]], imp_out)

    def do_load_session(state, path, request: gr.Request = None):
        if not path:
            return {c["panel"]: gr.skip()}
        try:  # a session is a few KiB: a huge upload is refused, not read into memory
            st = load_session(read_regular_file(path, limit=SESSION_MAX_BYTES, what="session file"))
        except (OSError, ValueError, SessionError) as err:
            return {c["import_status"]: f"⚠ {str(err).replace(str(path), Path(path).name)}"}
        # a release or GPU the wizard does not know is reset (as the Hardware step's dropdowns offer
        # them), said naming the field and the value; the rest of the session is loaded as it is
        st, reset = known_settings(st)
        sess = sess_of(request)
        base = ui.base(sess, state)
        st["history"] = push_history(base, "Load session").get("history", [])
        note = "Session loaded." + "".join(f" ⚠ {n}." for n in reset)
        out = ui.full(sess, st, note=note)
        out[c["import_status"]] = ("⚠ Session loaded with changes: " + "; ".join(html.escape(n) for n in reset) + "."
                                   if reset else "")  # no earlier import's or load's line left standing
        return out

    ui.on(c["session_ul"].upload, do_load_session, [st_c, c["session_ul"]], imp_out)

    # New: confirm first (the row), then clear; Undo brings the old configuration back
    ui.on(c["reset"].click, lambda: gr.Row(visible=True), None, [c["reset_row"]])
    ui.on(c["reset_no"].click, lambda: gr.Row(visible=False), None, [c["reset_row"]])

    def do_reset(state, request: gr.Request = None):
        sess = sess_of(request)
        base = ui.base(sess, state)
        st = new_state(base.get("vllm_version"))
        st["gpu"] = dict(base.get("gpu") or st["gpu"])  # the hardware stays: it is the machine, not the config
        st["history"] = push_history(base, "New configuration").get("history", [])
        out = ui.full(sess, st, note="Started a new configuration (Undo brings the previous one back).")
        out[c["reset_row"]] = gr.Row(visible=False)
        out[c["import_status"]] = ""
        return out

    ui.on(c["reset_yes"].click, do_reset, [st_c], outs + [c["reset_row"], c["import_status"]])

    def restore(bstate, request: gr.Request = None):
        """The tab's configuration from the browser's copy; what is beyond a budget (a 200,000-key
        Other options box, an over-long box text) is left out, and the status line says so."""
        st, notes = new_state(), []
        if isinstance(bstate, dict) and isinstance(bstate.get("config"), dict):
            try:
                st, notes = restore_session(bstate)
            except (SessionError, TypeError, ValueError) as err:
                notes = [f"{err}; a new configuration was started"]
        elif services.detected_spec():  # a fresh wizard starts on this machine's GPUs
            st = state_with_gpu(st, services.detected_spec())
        note = ("⚠ Restored without what was beyond the wizard's budgets: " + "; ".join(notes)[:600]) if notes else None
        out = ui.full(sess_of(request), st, note=note)
        out[c["preset"]] = gr.Dropdown(choices=services.presets())  # catalogs may have grown
        if note:
            out[c["import_status"]] = note
        return out

    ui.on(ui.demo.load, restore, [c["bstate"]], outs + [c["preset"], c["import_status"]])

    def on_unload(request: gr.Request):
        ui.forget(sess_of(request))

    ui.demo.unload(on_unload)
