"""The wizard's event machinery: field bindings, dependent widgets, the per-tab state, the panel.

Each step module builds its components and wires its own events (as LLaMA-Factory's webui
does); what they share is here:

* :meth:`WizardUI.field` registers a form field bound to a dotted path of the state;
  :meth:`WizardUI.bind` wires it: every edit -- typing, deletion, paste, a pick -- re-checks.
  Textboxes listen to ``change`` (Gradio 6.31's ``input`` does not fire on Backspace or cut;
  ``change`` fires for every value, and an event that changes nothing is answered with a skip).
* :meth:`WizardUI.react` registers a step widget with the fields it depends on. A field event
  updates the panel and only the widgets that depend on that field: at once for picks
  (dropdowns, checkboxes, sliders), after the user pauses for typed text (the panel's
  ``watch`` clicks the hidden sync button, :data:`wizard.ui.theme.PANEL_JS`).
* events that replace the whole configuration (import, preset, Apply, Undo, New, a loaded
  session) update every field and widget: :meth:`WizardUI.full`.
* no handler raises: :meth:`WizardUI.on` wraps each one; a failure is logged in one line and
  answered with a skip, never Gradio's red "Error".
* every field has a budget (:func:`wizard.ui.state.box_problem`: 256 KiB of text; a field's own
  ``check``, e.g. at most 1,000 "Other options"): text beyond it is not applied, the panel says
  why naming the field, and the box keeps the text.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import itertools
import json
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field as dc_field
from typing import Any, Callable, Iterable

import gradio as gr

from wizard import privacy, security
from wizard.ui import findings as fp
from wizard.ui import guard, services
from wizard.ui.delta import SentValues
from wizard.ui.state import CHANGE_NOTE, box_problem, browser_safe, field_value, redact_state, same_inputs, session_json, set_field

__all__ = ["WizardUI", "Reactor", "sess_of", "QUIET", "CHANGE_NOTE"]

log = logging.getLogger("wizard.ui")

#: every wizard event: no progress overlay, answered directly (no queue: one HTTP round trip), and
#: no loading status on its outputs (``show_progress_on=[]``): Gradio 6.31's frontend re-pushes
#: the loading status of every component that has one to all of them on each status change of any
#: event (a tree search and a re-render each, twice per event), and with nothing shown there is
#: nothing to push for outputs. (The larger cost was Gradio's run history, off in launch().)
QUIET = {"show_progress": "hidden", "show_progress_on": [], "queue": False}
SESSIONS_KEPT = 256  # newest-state entries kept (tabs and API clients); older ones fall back to their gr.State


def sess_of(request: gr.Request | None) -> str | None:
    """The browser tab's session id (None outside a request, e.g. in tests)."""
    return getattr(request, "session_hash", None) if request is not None else None


@dataclass
class Reactor:
    """A step widget group: ``outputs`` (components of ``owner``) derived by ``fn(ui, state, ev)``
    from the fields in ``paths`` (a path ending in '.' covers every path below it). ``sync``:
    also refreshed after every pause (exports)."""

    owner: str
    paths: tuple[str, ...]
    outputs: list
    fn: Callable[..., dict]
    sync: bool = False

    def matches(self, path: str) -> bool:
        return any(path == p or (p.endswith(".") and path.startswith(p)) for p in self.paths)

    @property
    def sync_only(self) -> bool:
        """Refreshed only after a pause (no field drives it at once): exports."""
        return self.sync and not any(self.paths)


@dataclass
class _Field:
    comp: Any
    to_form: Callable | None = None
    source: str = "config"  # config | gpu | setting
    setter: Callable[[dict, Any], dict] | None = None
    after: Callable[[dict, dict], dict] | None = None
    kind: str = "choice"  # text: typed (widgets after a pause) | choice: picked (widgets at once)
    extra: dict = dc_field(default_factory=dict)


class WizardUI:
    """Component registry, per-tab state and event wiring of one Blocks app."""

    def __init__(self, allow_launch: bool = True, policy: security.PathPolicy | None = None):
        self.allow_launch = allow_launch
        #: which local folders the UI may read models from, and whether unsafe options may launch
        self.policy = policy or security.PathPolicy(model_dirs=security.default_model_dirs())
        self.demo: gr.Blocks | None = None
        self.c: dict[str, Any] = {}
        self.fields: dict[str, Any] = {}
        self.meta: dict[str, _Field] = {}
        self.reactors: list[Reactor] = []
        self.last_timing_ms: float = 0.0
        # the newest state per browser session: every event starts from it and commits to it, so
        # events that overlap (a keystroke's change and a tab click's blur) never lose a value
        self._lock = threading.Lock()
        self._latest: OrderedDict[str, dict] = OrderedDict()
        self._rev = itertools.count(1)
        # per session: typed fields whose widgets follow in the next sync (path -> hub setting)
        self._pending: dict[str, dict[str, bool | None]] = {}
        #: per session, what each output last received: unchanged outputs are skipped (wizard.ui.delta)
        self.sent = SentValues()
        # per session: one pick at a time (Gradio 6.31 sends a dropdown's input event twice per pick)
        self._pick_locks: OrderedDict[str, threading.Lock] = OrderedDict()
        # per session: the step on screen (its tab's select event) and the sync-only views of other
        # steps left for when their step opens (they are not computed while nobody sees them)
        self._step: dict[str, str] = {}
        self._deferred: dict[str, set[int]] = {}

    # ---- what this UI may do ------------------------------------------------------------------
    def launch_block(self) -> str | None:
        """Why servers may not be launched (nor vLLM's check run) from this UI now, or None.

        Decided at click time from how the app is actually served (:func:`guard.exposure`):
        loopback without a share link, or a login, whatever started it."""
        if not self.allow_launch:
            return "launching was turned off when this UI was built (build_app(allow_launch=False))"
        return guard.exposure(self.demo)

    def evaluate(self, state: dict, allow_hub: bool | None = None) -> services.Evaluation:
        """:func:`services.evaluate` under this UI's folder policy (local paths outside the allowed
        folders are not read at all)."""
        return services.evaluate(state, allow_hub=allow_hub, path_allowed=self.policy.allows)

    # ---- per-session newest state ------------------------------------------------------------
    def base(self, sess: str | None, state: dict) -> dict:
        """The newest committed state of browser session ``sess`` (``state`` when none is newer)."""
        state = state if isinstance(state, dict) else {}
        if not sess:
            return state
        with self._lock:
            cur = self._latest.get(sess)
        if cur is None or int(cur.get("rev") or 0) < int(state.get("rev") or 0):
            return state
        return cur

    def commit(self, sess: str | None, state: dict) -> dict:
        """Record ``state`` as the newest of ``sess``; returns it with a fresh ``rev``."""
        st = dict(state)
        st["rev"] = next(self._rev)
        if sess:
            with self._lock:
                self._remember(sess, st)
        return st

    def _remember(self, sess: str, st: dict) -> None:
        self._latest[sess] = st
        self._latest.move_to_end(sess)
        while len(self._latest) > SESSIONS_KEPT:
            old, _ = self._latest.popitem(last=False)
            self._pending.pop(old, None)

    def update_field(self, sess: str | None, state: dict, fn: Callable[[dict], dict]) -> dict:
        """Apply one field's change ``fn`` to the newest state of ``sess`` and commit it (atomic)."""
        if not sess:
            return self.commit(None, fn(state))
        with self._lock:
            cur = self._latest.get(sess)
            base = state if cur is None or int(cur.get("rev") or 0) < int((state or {}).get("rev") or 0) else cur
            st = dict(fn(base))
            st["rev"] = next(self._rev)
            self._remember(sess, st)
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
            self._pick_locks.pop(sess or "", None)
            self._step.pop(sess or "", None)
            self._deferred.pop(sess or "", None)
        self.sent.forget(sess)

    def pick_lock(self, sess: str | None) -> threading.Lock:
        """The lock that runs one tab's picks one at a time, so the duplicate of a pick finds the
        state it set and is answered with a skip instead of a second check and render."""
        with self._lock:
            lk = self._pick_locks.get(sess or "")
            if lk is None:
                lk = self._pick_locks[sess or ""] = threading.Lock()
                while len(self._pick_locks) > SESSIONS_KEPT:
                    self._pick_locks.popitem(last=False)
            return lk

    def mark_pending(self, sess: str | None, path: str, hub: bool | None = None) -> None:
        """Remember that typed field ``path`` changed in ``sess``; its widgets follow in the next sync."""
        with self._lock:
            d = self._pending.setdefault(sess or "", {})
            d[path] = None if (path in d and d[path] is None) else hub

    def take_pending(self, sess: str | None) -> dict[str, bool | None]:
        """The typed fields changed in ``sess`` since the last sync (path -> hub setting); clears them."""
        with self._lock:
            return self._pending.pop(sess or "", {})

    # ---- registration ---------------------------------------------------------------------------
    def field(self, path: str, comp, *, to_form: Callable | None = None, source: str = "config",
              setter: Callable[[dict, Any], dict] | None = None, after: Callable[[dict, dict], dict] | None = None,
              **extra):
        """Register a form field bound to dotted ``path`` of the state. ``setter(state, value)``
        replaces :func:`set_field`; ``after(new, old)`` adjusts the state after a change (e.g. a
        method's default drafter); ``check(value)`` (in ``extra``) says why a value the setter
        kept aside is not used (a panel note; the message names the field). Typed components
        (Textbox, Number, Code) are ``text`` fields."""
        kind = "text" if isinstance(comp, (gr.Textbox, gr.Number, gr.Code)) else "choice"
        self.fields[path] = comp
        self.meta[path] = _Field(comp, to_form, source, setter, after, kind, extra)
        return comp

    def react(self, owner: str, paths: Iterable[str], outputs: list, fn: Callable[..., dict], *, sync: bool = False) -> None:
        """Register step widgets ``outputs`` (of step ``owner``) that ``fn(ui, state, ev)`` derives
        from the fields ``paths``."""
        self.reactors.append(Reactor(owner, tuple(paths), list(outputs), fn, sync))

    def field_name(self, path: str) -> str:
        """Field ``path`` in words, for messages: its label up to a parenthesis or colon, with the
        path when they differ ("Other options (extra_args)", "max_num_seqs")."""
        m = self.meta.get(path)
        label = str(getattr(m.comp, "label", None) or path) if m is not None else path
        label = label.split(" (")[0].split(":")[0].strip() or path
        return label if label == path else f"{label} ({path})"

    def reactors_for(self, paths: Iterable[str]) -> list[Reactor]:
        ps = list(paths)
        return [r for r in self.reactors if any(r.matches(p) for p in ps)]

    @staticmethod
    def unique(comps: Iterable) -> list:
        seen, out = set(), []
        for c in comps:
            if id(c) not in seen:
                seen.add(id(c))
                out.append(c)
        return out

    # ---- state -> updates -------------------------------------------------------------------------
    def form_value(self, state: dict, path: str):
        """What field ``path`` shows for ``state`` (typed text that did not parse is shown as typed)."""
        m = self.meta[path]
        raw = (state.get("raw") or {}).get(path)
        if raw is not None:
            return raw
        if m.source == "gpu":
            v = (state.get("gpu") or {}).get(path.split(".", 1)[1])
        elif m.source == "setting":
            v = state.get(path)
        else:
            v = field_value(state, path)
        if m.to_form is not None:
            try:
                return m.to_form(v)
            except Exception:
                return v
        return "" if v is None else str(v) if not isinstance(v, (dict, list)) else json.dumps(v)

    def hints(self, state: dict, ev: services.Evaluation) -> list[str]:
        """Where checks are off, in words: unknown hardware, unusable GPU count or version."""
        out = list(ev.notes)
        if ev.hardware_error:
            out.append(f"Hardware checks are skipped: {ev.hardware_error.splitlines()[0][:200]}")
        elif ev.hardware is None and ev.config is not None:
            out.append("Hardware unknown: hardware checks (memory fit, KV-cache dtypes, attention backends, compute "
                       "capability) are skipped. Choose a GPU in step 1.")
        return out

    def panel(self, state: dict, ev: services.Evaluation, note: str | None = None) -> dict:
        """The findings panel's update for ``state``."""
        hist = state.get("history") or []
        undo = hist[-1].get("label") if hist and isinstance(hist[-1], dict) else None
        html = fp.panel_html(ev, int(state.get("rev") or 0), hints=self.hints(state, ev), note=note, undo=undo)
        return {self.c["panel"]: html}

    def run_reactors(self, reactors: Iterable[Reactor], state: dict, ev: services.Evaluation) -> dict:
        """Updates of ``reactors`` for ``state``; a widget that fails says so in itself."""
        out: dict = {}
        for r in reactors:
            try:
                out.update(r.fn(self, state, ev))
            except Exception as err:  # a step must never take the panel down
                log.warning("step %s: %s: %s", r.owner, type(err).__name__, err)
        return out

    def render(self, sess: str | None, state: dict, reactors: list[Reactor], hub: bool | None = None,
               note: str | None = None) -> dict:
        """Check ``state`` and return the panel, the State and ``reactors``' widgets. When a newer
        event of the same tab committed meanwhile, the newest state is rendered instead, so
        whichever response lands last shows the final value."""
        for _ in range(4):
            t0 = time.perf_counter()
            ev = self.evaluate(state, allow_hub=hub)
            out = {self.c["state"]: state, **self.panel(state, ev, note)}
            out.update(self.run_reactors(reactors, state, ev))
            self.last_timing_ms = (time.perf_counter() - t0) * 1000
            cur = self.newest(sess)
            if cur is None or cur.get("rev") == state.get("rev"):
                break
            state = cur
        return out

    def full(self, sess: str | None, state: dict, *, note: str | None = None, hub: bool | None = None) -> dict:
        """Commit ``state`` (the whole configuration replaced) and update every field and widget."""
        st = self.commit(sess, state)
        self.take_pending(sess)
        out = self.render(sess, st, [r for r in self.reactors if not r.sync_only], hub, note)
        st = out[self.c["state"]]
        for path, comp in self.fields.items():
            val = self.form_value(st, path)
            upd = out.get(comp)
            if upd is None:
                out[comp] = val
            elif isinstance(upd, gr.components.Component) or hasattr(upd, "value"):
                try:
                    upd.value = val
                except Exception:
                    pass
        return out

    def full_outputs(self, *extra) -> list:
        """Outputs of an event that replaces the configuration: State, panel, every field and widget."""
        comps = [self.c["state"], self.c["panel"], *self.fields.values()]
        comps += [o for r in self.reactors if not r.sync_only for o in r.outputs]
        return self.unique([*comps, *extra])

    # ---- events -------------------------------------------------------------------------------------
    def on(self, listener, fn: Callable, inputs, outputs, **kw):
        """Wire ``fn`` to ``listener`` (e.g. ``comp.click``) so that it never raises and never
        answers with nothing (Gradio fails on an empty dict); QUIET unless overridden."""
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else ([outputs] if outputs is not None else [])
        first = outputs[0] if outputs else None
        if fn is None:  # a browser-only event (``js=``): no request, nothing to guard
            return listener(None, inputs, outputs or None, **{**QUIET, **kw})

        if inspect.isgeneratorfunction(fn):  # a streaming handler (progress, then the result)
            @functools.wraps(fn)
            def safe_gen(*args, **kwargs):
                try:
                    for out in fn(*args, **kwargs):
                        if first is not None and out:
                            yield out
                except Exception as err:  # a handler must never raise: one log line, the stream ends
                    log.warning("%s: %s: %s", getattr(fn, "__name__", "handler"), type(err).__name__, str(err)[:300])

            # Gradio streams a generator's updates only through its queue: with queue=False the
            # browser receives the first update and never the rest (the Tune sweep stayed at its
            # first progress line; tests/test_ui_tune_browser.py)
            return listener(safe_gen, inputs, outputs or None, **{**QUIET, "queue": True, **kw})

        ins = list(inputs) if isinstance(inputs, (list, tuple, set)) else ([inputs] if inputs is not None else [])

        @functools.wraps(fn)
        def safe(*args, **kwargs):
            try:
                out = fn(*args, **kwargs)
            except Exception as err:  # a handler must never raise: one log line, nothing changes
                log.warning("%s: %s: %s", getattr(fn, "__name__", "handler"), type(err).__name__, str(err)[:300])
                out = None
            if first is None:
                return None
            if out is None or (isinstance(out, dict) and not out):
                return {first: gr.skip()}
            req = next((a for a in (*args, *kwargs.values()) if isinstance(a, gr.Request)), None)
            return self.sent.prune(sess_of(req), out, ins)  # what the tab already shows: skipped

        opts = {**QUIET, **kw}
        return listener(safe, inputs, outputs or None, **opts)

    def bind(self, path: str) -> None:
        """Wire field ``path``: every edit re-checks; the panel and the widgets that depend on the
        field follow (picked values at once, typed text's widgets after the pause)."""
        m = self.meta[path]
        comp = m.comp
        reactors = self.reactors_for([path])
        text = m.kind == "text"
        state_c, panel_c = self.c["state"], self.c["panel"]
        now = [] if text else reactors
        # a field with an ``after`` hook (method, target) may rewrite other fields (drop the fields the
        # new method does not read, replace the drafter): those fields are outputs too, and the event
        # sends the new value of each one it changed (:meth:`rewritten`), so no field keeps showing a
        # value the state no longer holds
        others = [c for p, c in self.fields.items() if p != path] if m.after is not None else []
        outs = self.unique([state_c, panel_c, *[o for r in now for o in r.outputs], *others])
        setter = m.setter or (lambda st, v: set_field(st, path, v))

        def change(st: dict, value) -> dict:
            new = setter(st, value)
            return m.after(new, st) if m.after is not None else new

        def change_noted(st: dict, value, holder: dict) -> dict:
            """:func:`change`, the note its ``after`` hook left (what it removed or replaced, and
            why) moved from the state to ``holder['note']``: said in the panel, never kept."""
            new = change(st, value)
            if isinstance(new, dict) and CHANGE_NOTE in new:
                new = dict(new)
                holder["note"] = new.pop(CHANGE_NOTE)
            return new

        check = m.extra.get("check")

        def shown(st: dict, value) -> bool:
            """Whether ``value`` is what the field shows for ``st`` (:meth:`form_value`): an event
            that sends it back (a dropdown opened and closed with Escape, the duplicate of a pick)
            is no edit, even where the value shown stands for "unset" ('auto' for an unset KV
            dtype) and setting it would write the option. Fields with an ``after`` hook are left
            to it (picking the method shown again may still fill in its default drafter)."""
            if m.after is not None:
                return False
            try:
                return value is not None and value == self.form_value(st, path)
            except Exception:
                return False

        def make(hub: bool | None, force: bool, rs: list[Reactor]):
            def field_changed(state, value, request: gr.Request = None):
                if not text:  # a pick: one at a time per tab (its duplicate then finds nothing to do)
                    with self.pick_lock(sess_of(request)):
                        return changed(state, value, request)
                return changed(state, value, request)

            def changed(state, value, request):
                sess = sess_of(request)
                base = self.base(sess, state)
                too_big = box_problem(self.field_name(path), value)
                if too_big is not None:  # not applied, not stored: the box keeps the text, the panel says why
                    return self.render(sess, base, [], False, note=f"⚠ {too_big}")
                if not force and shown(base, value):
                    # what the field already shows for the state: an unset field that shows its
                    # default (KV dtype 'auto') stays unset when a dropdown is opened and closed
                    return {panel_c: gr.skip()}
                if not force and same_inputs(change(base, value), base):
                    return {panel_c: gr.skip()}  # a value the state already holds (e.g. set by the server)
                holder: dict = {}
                st = self.update_field(sess, state, lambda b: change_noted(b, value, holder))
                if text and not rs:
                    self.mark_pending(sess, path, hub)
                why = check(value) if check is not None else None
                notes = [f"⚠ {why}" if why else None, holder.get("note")]  # why names the field
                out = self.render(sess, st, rs, hub, note=" ".join(n for n in notes if n) or None)
                if m.after is not None:
                    out.update(self.rewritten(base, out[state_c], out, skip=path))
                return out
            field_changed.__name__ = f"field_{path.replace('.', '_')}"
            return field_changed

        typed_event = comp.input if isinstance(comp, gr.Number) else comp.change if text else comp.input
        self.on(typed_event, make(False if path == "model" else None, False, now), [state_c, comp], outs,
                trigger_mode="always_last")
        if path == "model":
            # leaving the box or Enter: the Hub lookup (when allowed) and the target's widgets
            full_outs = self.unique([state_c, panel_c, *[o for r in reactors for o in r.outputs], *others])

            def hub_wanted(state, value, request: gr.Request = None):
                st = self.base(sess_of(request), state)
                if not st.get("allow_hub") and same_inputs(change(st, value), st):
                    return {panel_c: gr.skip()}
                self.take_pending(sess_of(request))
                return make(None, True, reactors)(state, value, request)

            for ev in (comp.blur, comp.submit):
                self.on(ev, hub_wanted, [state_c, comp], full_outs, trigger_mode="always_last")

    def rewritten(self, before: dict, after: dict, out: dict, *, skip: str | None = None) -> dict:
        """Form values of the fields whose shown value differs between states ``before`` and
        ``after`` and that ``out`` does not already update (``skip``: the field being edited,
        which shows what the user typed)."""
        upd: dict = {}
        for p, comp in self.fields.items():
            if p == skip or comp in out:
                continue
            try:
                new = self.form_value(after, p)
                if new != self.form_value(before, p):
                    upd[comp] = new
            except Exception as err:  # one field must not take the event down
                log.warning("field %s: %s: %s", p, type(err).__name__, err)
        return upd

    # ---- what follows a pause -------------------------------------------------------------------
    def sync_reactors(self) -> list[Reactor]:
        """Widgets refreshed in the sync: exports, and those of typed fields."""
        typed = [p for p, m in self.meta.items() if m.kind == "text"]
        return [r for r in self.reactors if r.sync or any(r.matches(p) for p in typed)]

    def sync_outputs(self) -> list:
        return self.unique([self.c["bstate"], self.c["session_dl"], *[o for r in self.sync_reactors() for o in r.outputs]])

    def secondary(self, sess: str | None, state: dict) -> dict:
        """What follows the panel after a pause: the browser copy of the state, the session file,
        exports, and the widgets of the typed fields changed since the last sync."""
        pending = self.take_pending(sess)
        hub = None if pending and any(h is None for h in pending.values()) else False
        # the browser's copy (localStorage) holds credentials as $VAR references, like saved sessions
        out = {self.c["bstate"]: browser_safe(redact_state(state)), self.c["session_dl"]: self.session_file(state)}
        rs = [r for r in self.reactors if r.sync or any(r.matches(p) for p in pending)]
        with self._lock:
            step = self._step.get(sess or "")
            later = [r for r in rs if step is not None and r.sync_only and r.owner != step]
            if later:  # views of a step not on screen: computed when it opens (step_opened)
                self._deferred.setdefault(sess or "", set()).update(id(r) for r in later)
        now = [r for r in rs if r not in later]
        if now:  # the check runs only for views that need it
            out.update(self.run_reactors(now, state, self.evaluate(state, allow_hub=hub)))
        return out

    def step_outputs(self, step: str) -> list:
        """What opening ``step`` may update: its sync-only views (see :meth:`step_opened`)."""
        return self.unique([o for r in self.reactors if r.sync_only and r.owner == step for o in r.outputs])

    def step_opened(self, sess: str | None, step: str, state: dict) -> dict:
        """Step ``step`` is on screen in ``sess``: from now on the sync computes its sync-only views
        (exports) and leaves other steps' for when they open; the ones left for ``step`` while it was
        hidden are computed now. Before any step is opened (a fresh tab, an API client) every view
        is computed."""
        with self._lock:
            self._step[sess or ""] = step
            ids = self._deferred.get(sess or "", set())
            rs = [r for r in self.reactors if id(r) in ids and r.owner == step]
            ids.difference_update(id(r) for r in rs)
        if not rs:
            return {}
        return self.run_reactors(rs, state, self.evaluate(state))

    def session_file(self, state: dict) -> str:
        """The "Save session" file: credentials redacted (:func:`session_json`), mode 0600 in the
        wizard's private folder (:func:`wizard.privacy.private_dir`)."""
        text = session_json(state)
        h = hashlib.sha1(text.encode()).hexdigest()[:12]
        p = privacy.private_dir("sessions") / h / "specwizard-session.json"
        if not p.exists():
            privacy.write_private(p, text)
        return str(p)
