"""The Live check sidebar: one HTML panel (verdict, hints, finding cards with their fixes, Undo)
and the events it owns: Apply a fix, Undo, and the sync that follows a pause.

"Go to field" runs in the browser alone (:data:`wizard.ui.theme.PANEL_JS`). Apply finds the fix
again in a fresh check of the newest state (by rule and description), records the state it
replaces (Undo brings it back) and updates every field.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from wizard.config import Patch, apply_patch
from wizard.ui import findings as fp
from wizard.ui.core import WizardUI, sess_of
from wizard.ui.state import config_of, pop_history, push_history, state_from_config
from wizard.ui.theme import PANEL_JS

__all__ = ["build", "wire", "apply_fix", "undo"]


def build(ui: WizardUI) -> None:
    gr.HTML('<div class="sw-panel-title"><b>Live check</b></div>', elem_id="sw-panel-title")
    ui.c["panel"] = gr.HTML(fp.panel_html(None, 0), elem_id="sw-summary", js_on_load=PANEL_JS)
    # clicked by the panel's script once the user pauses: exports, downloads, browser copy
    ui.c["sync"] = gr.Button("sync", visible="hidden", elem_id="sw-sync")


def apply_fix(ui: WizardUI, state: dict, rule: str, description: str) -> tuple[dict | None, str]:
    """(new state, note) after applying the fix ``description`` of ``rule``'s finding, found in a
    fresh check of ``state``; (None, why) when that fix is no longer offered."""
    cfg = config_of(state)
    if cfg is None:
        return None, "Nothing to fix yet: choose a target model."
    ev = ui.evaluate(state)
    for f in ev.report.findings if ev.report is not None else []:
        if f.rule != rule:
            continue
        for p in f.fixes:
            if p.description == description:
                new = state_from_config(apply_patch(cfg, Patch(**p.as_json())), base=push_history(state, f"Apply: {description}"))
                new = _hardware_for(new, p)
                return new, f"Applied: {description} (fix of {rule}). Undo brings the previous configuration back."
    return None, f"That fix of {rule} is no longer offered for the current configuration."


def _hardware_for(state: dict, patch: Patch) -> dict:
    """A fix that spreads the model over more GPUs (tensor x pipeline parallel) than the chosen
    hardware has also raises the GPU count, so the checks plan for the GPUs the fix needs."""
    gpu = dict(state.get("gpu") or {})
    if not gpu.get("name"):
        return state
    cfg = state.get("config") or {}
    world = 1
    for k in ("tensor_parallel_size", "pipeline_parallel_size"):
        v = cfg.get(k)
        world *= v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 1
    if any(k in patch.set for k in ("tensor_parallel_size", "pipeline_parallel_size")) and world > int(gpu.get("count") or 1):
        st = dict(state)
        st["gpu"] = {**gpu, "count": world}
        return st
    return state


def undo(state: dict) -> tuple[dict | None, str]:
    """(state before the last Apply/Import/New, note), or (None, why) when there is nothing to undo."""
    st, label = pop_history(state)
    if label is None:
        return None, "Nothing to undo."
    return st, f"Undone: {label}."


def wire(ui: WizardUI) -> None:
    c = ui.c
    outs = ui.full_outputs()

    def panel_action(state, evt: gr.EventData = None, request: gr.Request = None):
        data: Any = getattr(evt, "_data", None) if evt is not None else None
        if not isinstance(data, dict):
            return {c["panel"]: gr.skip()}
        sess = sess_of(request)
        base = ui.base(sess, state)
        if data.get("act") == "fix":
            new, note = apply_fix(ui, base, str(data.get("rule") or ""), str(data.get("fix") or ""))
        elif data.get("act") == "undo":
            new, note = undo(base)
        else:
            return {c["panel"]: gr.skip()}
        if new is None:  # nothing to apply: say why, keep everything
            return ui.render(sess, base, [], note=note)
        return ui.full(sess, new, note=note)

    ui.on(c["panel"].click, panel_action, [c["state"]], outs)

    def secondary(state, request: gr.Request = None):
        sess = sess_of(request)
        return ui.secondary(sess, ui.base(sess, state))

    ui.on(c["sync"].click, secondary, [c["state"]], ui.sync_outputs(), trigger_mode="always_last")
