"""A browser model of the wizard UI for tests that drive the state layer without a browser
(tests/test_ui_state_machine.py, replayed in Chromium by tests/test_ui_state_browser.py).

:class:`Tab` keeps what one browser tab holds -- the gr.State value and the value each form field
shows -- and calls the functions the Gradio events call (the ones wired in ``demo.fns``, each
behind :meth:`wizard.ui.core.WizardUI.on`'s guard), applying their outputs the way Gradio 6.31's
``postprocess_data`` does: a component returned from a handler is an update of the props it was
built with (``constructor_args``), ``gr.skip()`` changes nothing, a plain value is the new value
(through the component's ``postprocess``). A user's edit reaches the handler through the
component's ``preprocess``, as in a real event.

:meth:`Tab.disagreements` is the invariant of issue #23: every field re-submitted as shown
changes nothing (fields == state), the Review export parses back (wizard/io/argv.py) to the
configuration the panel checked, the drafter fits the method and the target unless a finding
on ``speculative_config.model`` says it does not, and no handler or step widget failed.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gradio as gr

from wizard import suggest
from wizard.config import ConfigError
from wizard.engine.options import user_options
from wizard.io.argv import parse_command
from wizard.ui.state import dump_config, same_inputs, session_json, set_field

__all__ = ["Tab", "ErrorLog", "app", "replay", "export_spec"]

_APP: list = []
_TABS = itertools.count(1)


def app():
    """One ``build_app()`` per process (it takes seconds); its WizardUI is ``demo.wizard_ui``."""
    if not _APP:
        from wizard.ui import build_app

        _APP.append(build_app())
    return _APP[0]


class ErrorLog(logging.Handler):
    """Records what :meth:`WizardUI.on` (a handler raised) and ``run_reactors`` (a step widget
    failed) log on ``wizard.ui``: each is a defect."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage()[:500])

    def __enter__(self) -> "ErrorLog":
        logging.getLogger("wizard.ui").addHandler(self)
        return self

    def __exit__(self, *exc) -> None:
        logging.getLogger("wizard.ui").removeHandler(self)


def _is_update(v: Any) -> bool:
    return isinstance(v, dict) and v.get("__type__") == "update"


def _choice_values(choices: Any) -> list:
    out = []
    for c in choices or []:
        out.append(c[1] if isinstance(c, (tuple, list)) and len(c) == 2 else c)
    return out


class Tab:
    """One browser tab of the wizard (see the module docstring)."""

    def __init__(self, demo=None) -> None:
        self.demo = demo or app()
        self.ui = self.demo.wizard_ui
        self.c = self.ui.c
        self.fns: dict[str, Any] = {}
        for bf in self.demo.fns.values():
            fn = getattr(bf, "fn", None)
            if fn is not None:
                self.fns.setdefault(getattr(fn, "__name__", "?"), fn)
        self.by_id = {id(comp): path for path, comp in self.ui.fields.items()}
        self.state: dict = {}
        self.form: dict[str, Any] = {}
        self.choices: dict[str, list] = {}
        self.exports: dict[str, str] = {}
        self.panel = ""
        self.shown: dict[int, Any] = {}  # component id -> its visible prop, once an update set it
        self.errors: list[str] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="sw-tab-"))
        # a browser session of its own: the handlers keep its newest state and what it was last sent
        # (wizard.ui.delta prunes outputs the tab already shows), as for a real tab
        self.req = gr.Request(session_hash=f"sm-{next(_TABS)}")
        for path, comp in self.ui.fields.items():
            self.form[path] = self._post(comp, getattr(comp, "value", None), path)
            if hasattr(comp, "choices"):
                self.choices[path] = _choice_values(comp.choices)
        self.apply(self.call("restore", None))
        self.sync()

    # ---- the browser side of an event ----------------------------------------------------------
    def _post(self, comp, value, path: str):
        try:
            return comp.postprocess(value)
        except Exception as err:  # Gradio would answer the event with its red "Error"
            self.errors.append(f"postprocess of {path} failed for {value!r:.80}: {type(err).__name__}: {err}")
            return value

    def _pre(self, path: str, payload):
        comp = self.ui.fields[path]
        try:
            return comp.preprocess(payload)
        except Exception as err:
            self.errors.append(f"preprocess of {path} refused {payload!r:.80}: {type(err).__name__}: {err}")
            return payload

    #: the group a field sits in (what hides it): Speculation step's drafter, n-gram and suffix rows
    GROUPS = {"speculative_config.model": "drafter_group", "speculative_config.draft_tensor_parallel_size": "drafter_group",
              "speculative_config.prompt_lookup_min": "ngram_group", "speculative_config.prompt_lookup_max": "ngram_group"}

    def visible(self, path: str) -> bool:
        """Whether the user can reach field ``path`` now (it and its group are shown)."""
        comp = self.ui.fields[path]
        group = self.c.get(self.GROUPS.get(path, "suffix_group" if "suffix_decoding" in path else ""))
        return all(self.shown.get(id(x), getattr(x, "visible", True)) not in (False, "hidden")
                   for x in (comp, group) if x is not None)

    def apply(self, out: Any, cascade: bool = True) -> None:
        """Take a handler's outputs as the browser would. A typed field (Textbox, Code) whose
        value an output changed fires its ``change`` event, as Gradio's frontend does for every
        value change, programmatic ones included (``cascade``: run those events too)."""
        if not isinstance(out, dict):
            return
        changed: list[str] = []
        for comp, v in out.items():
            if comp is self.c["state"]:
                if isinstance(v, dict) and not _is_update(v):
                    self.state = v
                continue
            if comp is self.c["panel"] and isinstance(v, str):
                self.panel = v
            path = self.by_id.get(id(comp))
            name = next((k for k, c in self.c.items() if c is comp and k.startswith("exp_")), None)
            if path is None and name is None:
                args = getattr(v, "constructor_args", None) if not isinstance(v, (str, dict)) else None
                if isinstance(args, dict) and "visible" in args:
                    self.shown[id(comp)] = args["visible"]
                continue
            if _is_update(v):
                continue
            args = v.constructor_args if hasattr(v, "constructor_args") and not isinstance(v, (str, dict)) else None
            if args is not None and "visible" in args:
                self.shown[id(comp)] = args["visible"]
            if args is not None:
                if path is not None and "choices" in args:
                    self.choices[path] = _choice_values(args["choices"])
                if "value" not in args:
                    continue
                v = args["value"]
            if path is not None:
                new = self._post(self.ui.fields[path], v, path)
                if new != self.form.get(path):
                    changed.append(path)
                self.form[path] = new
            elif isinstance(v, str):
                self.exports[name] = v
        for path in changed if cascade else ():
            m = self.ui.meta[path]
            if m.kind == "text" and not isinstance(m.comp, gr.Number):  # Number listens to input only
                self.apply(self.handler(path)(self.state, self._pre(path, self.form[path]), request=self.req),
                           cascade=False)

    def call(self, name: str, *args, **kwargs):
        """Run the event function ``name`` for this tab's session."""
        return self.fns[name](*args, request=self.req, **kwargs)

    def close(self) -> None:
        self.ui.forget(self.req.session_hash)

    def handler(self, path: str):
        """The function field ``path``'s edit event calls."""
        return self.fns["acceptance_changed" if path == "acceptance" else "field_" + path.replace(".", "_")]

    def sync(self) -> None:
        """What follows a pause: the panel's script clicks the hidden sync button."""
        self.apply(self.call("secondary", self.state))

    # ---- user actions ----------------------------------------------------------------------------
    def edit(self, path: str, payload: Any) -> None:
        """The user sets field ``path`` to ``payload`` (typed, picked or ticked) and pauses."""
        self.form[path] = payload
        self.apply(self.handler(path)(self.state, self._pre(path, payload), request=self.req))
        if path == "model":  # leaving the box: the Hub lookup (when allowed) and the target's widgets
            self.apply(self.call("hub_wanted", self.state, self._pre(path, payload)))
        self.sync()

    def pick_catalog(self, model_id: str) -> None:
        self.apply(self.call("pick_catalog", self.state, model_id))
        self.sync()

    def import_command(self, text: str) -> None:
        self.apply(self.call("do_import_cmd", self.state, text))
        self.sync()

    def preset(self, name: str) -> None:
        self.apply(self.call("do_preset", self.state, name))
        self.sync()

    def new(self) -> None:
        """New, then Start new in the confirmation row."""
        self.apply(self.call("do_reset", self.state))
        self.sync()

    def fixes(self) -> list[tuple[str, str]]:
        """(rule, fix description) of every Apply button the panel offers now."""
        ev = self.ui.evaluate(self.state)
        return [(f.rule, p.description) for f in (ev.report.findings if ev.report is not None else []) for p in f.fixes]

    def apply_fix(self, rule: str, description: str) -> None:
        evt = SimpleNamespace(_data={"act": "fix", "rule": rule, "fix": description})
        self.apply(self.call("panel_action", self.state, evt=evt))
        self.sync()

    def undo(self) -> None:
        self.apply(self.call("panel_action", self.state, evt=SimpleNamespace(_data={"act": "undo"})))
        self.sync()

    def save_and_load(self) -> None:
        """Save session (the file the Save button offers), then Load it in this tab."""
        p = self.tmp / "session.json"
        p.write_text(session_json(self.state))
        self.apply(self.call("do_load_session", self.state, str(p)))
        self.sync()

    # ---- the invariant -----------------------------------------------------------------------------
    def _change(self, path: str, value: Any) -> dict:
        m = self.ui.meta[path]
        new = m.setter(self.state, value) if m.setter is not None else set_field(self.state, path, value)
        if m.after is not None:
            new = m.after(new, self.state)
        return new

    def disagreements(self) -> list[str]:
        """Every way the tab disagrees with itself now (empty: one consistent configuration)."""
        out = list(self.errors)
        st = self.state
        for path, comp in self.ui.fields.items():
            shown = self.form.get(path)
            # the field shows what the state renders to (an unset checkbox shows False, an unset
            # KV dtype 'auto'), or something the state already holds (typed '4 ' for k = 4)
            try:
                if shown == self._post(comp, self.ui.form_value(st, path), path):
                    continue
                again = self._change(path, self._pre(path, shown))
            except Exception as err:
                out.append(f"field {path}: re-submitting {shown!r:.80} raised {type(err).__name__}: {err}")
                continue
            if not same_inputs(again, st):
                diff = {k: (st.get(k), again.get(k)) for k in ("config", "raw", "stash", "gpu", "vllm_version", "allow_hub",
                                                                "acceptance") if st.get(k) != again.get(k)}
                out.append(f"field {path} shows {shown!r:.120} but the state holds something else: {str(diff)[:600]}")
        ev = self.ui.evaluate(st)
        cmd = self.exports.get("exp_command", "")
        if ev.config is None:
            if cmd and cmd.startswith("vllm serve"):
                out.append(f"no configuration, yet the export is {cmd[:200]}")
            return out
        try:
            back = parse_command(cmd)
        except (ConfigError, ValueError) as err:
            out.append(f"the exported command does not parse back ({err}): {cmd[:300]}")
            return out
        a, b = _comparable(back, ev.ctx.version), _comparable(ev.config, ev.ctx.version)
        if a != b:
            keys = sorted(set(a) | set(b))
            out.append("export != checked config: " + str({k: (a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)})[:800])
        spec = ev.config.speculative_config
        ctx = ev.ctx
        if spec is not None and isinstance(spec.model, str) and spec.model.strip() and ctx is not None:
            fit = suggest.drafter_fit(ev.config.model, ctx.method or spec.method, spec.model, target=ctx.target,
                                      drafter=ctx.drafter if ctx.drafter is not ctx.target else None)
            said = [f.rule for f in ev.report.findings if "speculative_config.model" in f.fields
                    or "speculative_config.method" in f.fields]
            if fit.fits is False and not said:
                out.append(f"drafter {spec.model} does not fit {ev.config.model} / {spec.method} ({fit.why}) and no finding says so")
        return out


def _comparable(cfg, version) -> dict:
    """The configuration as vLLM receives it: the options as its config classes get them
    (:func:`wizard.engine.options.user_options`: `--nnodes 2` text and a fix's int 2 are the same
    option), the speculative config, the environment and the ill-typed values kept verbatim."""
    d = dump_config(cfg)
    return {"options": user_options(cfg, version), "speculative_config": d.get("speculative_config"),
            "env": d.get("env"), "invalid_values": d.get("invalid_values")}


# ---- fixed sequences (issue #23 defects found by the machine; replayed in Chromium) ------------------

def replay(tab: Tab, steps: list[tuple[str, Any]]) -> list[str]:
    """Run ``steps`` on ``tab``; the disagreements after each step, prefixed with its number."""
    out: list[str] = []
    for i, (act, arg) in enumerate(steps, 1):
        if act == "edit":
            tab.edit(*arg)
        elif act == "catalog":
            tab.pick_catalog(arg)
        elif act == "import":
            tab.import_command(arg)
        elif act == "preset":
            tab.preset(arg)
        elif act == "fix":
            fixes = [f for f in tab.fixes() if f[0] == arg] if isinstance(arg, str) else []
            if fixes:
                tab.apply_fix(*fixes[0])
        elif act == "undo":
            tab.undo()
        elif act == "session":
            tab.save_and_load()
        else:
            raise ValueError(act)
        out += [f"step {i} {act}: {d}" for d in tab.disagreements()]
    return out


def export_spec(text: str) -> dict:
    m = re.search(r"--speculative-config '(\{.*?\})'", text or "", re.S)
    return json.loads(m.group(1)) if m else {}

