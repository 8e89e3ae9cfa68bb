"""Send only what changed: per browser tab, the last value each output component was sent, so an
event's unchanged outputs are answered with ``gr.skip()`` (no serialisation, no re-render in the
browser).

    sent = SentValues()
    out = sent.prune(sess, out, inputs)   # in the event guard (WizardUI.on), after the handler

Why: a pick re-derives the panel and every widget that depends on the field; most of those
(dtype dropdowns and their choices, the drafter facts, the step notes, the exports, the session
file, the browser copy of the state) come out identical, and Gradio 6.31 still serialises each,
copies files into its cache, and re-renders each component in the browser
(``benchmarks/ui_latency.py``).

What is never pruned, so the page always ends up showing what the state holds:

* the event's own inputs: the user may have changed them in the browser (a value typed, a pick),
  so what was last sent to them says nothing about what they show; their memory is dropped, and
  the next update to them is sent whatever it is;
* the session state (``gr.State``: server-side, nothing is sent) and ``gr.skip()`` itself;
* a component whose value cannot be fingerprinted (sent, and forgotten).

A tab that reloads gets a new session (Gradio's ``session_hash``), so it starts with nothing
remembered; :meth:`forget` drops a tab that went away.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any, Iterable

import gradio as gr

__all__ = ["SentValues", "fingerprint"]

SESSIONS_KEPT = 256


def _default(o: Any) -> Any:
    to_json = getattr(o, "to_json", None)  # a pandas DataFrame (the plots)
    if callable(to_json):
        return {"__df__": to_json(orient="split", date_format="iso")}
    return repr(o)


_NO_VALUE = object()


def fingerprint(value: Any) -> bytes | None:
    """A digest of ``value`` as JSON (a DataFrame: its data), or None when it has none."""
    try:
        text = json.dumps(value, sort_keys=True, default=_default)
    except Exception:
        return None
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def split_update(value: Any) -> tuple[bytes | None, Any]:
    """(fingerprint of the properties, the value) of a component update (``gr.Dropdown(choices=...,
    value=...)``: its constructor arguments, what :meth:`gradio.blocks.Blocks.postprocess_data`
    sends); (None, value) for a plain value. The value is ``_NO_VALUE`` when the update sets none."""
    if not isinstance(value, gr.blocks.Block):
        return None, value
    args = dict(value.constructor_args)
    v = args.pop("value", _NO_VALUE)
    return fingerprint({"__update__": type(value).__name__, **args}) or b"?", v


def _is_skip(value: Any) -> bool:
    return isinstance(value, dict) and value.get("__type__") == "update" and len(value) == 1


class SentValues:
    """Per session: component id -> (fingerprint of its properties last sent, of its value)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sent: OrderedDict[str, dict[int, list]] = OrderedDict()

    def prune(self, sess: str | None, out: Any, inputs: Iterable[Any] = ()) -> Any:
        """``out`` (an event's ``{component: value}``) with what this tab already shows left out:
        an update whose properties and value were both sent last is ``gr.skip()``; one whose
        properties were sent last but whose value differs goes as the plain value (Gradio then
        neither builds a new component nor re-renders its properties). Records what is sent.
        ``inputs``: the event's input components (never pruned, their memory dropped). Anything
        but a dict, or no session: unchanged."""
        if not sess or not isinstance(out, dict):
            return out
        ins = {id(c) for c in inputs or () if c is not None}
        with self._lock:
            memo = self._sent.get(sess)
            if memo is None:
                memo = self._sent[sess] = {}
                while len(self._sent) > SESSIONS_KEPT:
                    self._sent.popitem(last=False)
            self._sent.move_to_end(sess)
            for i in ins:
                memo.pop(i, None)
            pruned = dict(out)
            for comp, value in out.items():
                cid = id(comp)
                if isinstance(comp, gr.State) or _is_skip(value) or cid in ins:
                    continue
                props, v = split_update(value)
                vfp = fingerprint(v) if v is not _NO_VALUE else None
                if (props is not None and props == b"?") or (v is not _NO_VALUE and vfp is None):
                    memo.pop(cid, None)  # cannot tell what it shows: sent, forgotten
                    continue
                last = memo.get(cid)
                same_props = last is not None and (props is None or last[0] == props)
                if same_props and (v is _NO_VALUE or last[1] == vfp):
                    pruned[comp] = gr.skip()
                    continue
                if same_props and props is not None and isinstance(comp, gr.components.Component):
                    pruned[comp] = v  # only the value changed: sent as a value
                if props is not None and not same_props:
                    memo[cid] = [props, vfp if v is not _NO_VALUE else (last[1] if last else None)]
                elif last is not None:
                    last[1] = vfp
                else:  # a plain value before any update: its properties are the built ones
                    memo[cid] = [None, vfp]
        return pruned

    def forget(self, sess: str | None) -> None:
        with self._lock:
            self._sent.pop(sess or "", None)
