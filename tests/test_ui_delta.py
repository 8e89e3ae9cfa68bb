"""Issue 23 item 7: events send only what changed (wizard.ui.delta), and a pick's duplicate input
event (Gradio 6.31 sends a dropdown's twice) is answered without a second check. Over the real
app's HTTP API in one browser session (tests/hostile.py UiServer)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import gradio as gr
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from wizard.ui.delta import SentValues  # noqa: E402


def _skip(v) -> bool:
    """gr.skip() as Python holds it, or as the API sends it (an HTML output's carries empty props)."""
    return (isinstance(v, dict) and v.get("__type__") == "update" and set(v) <= {"__type__", "props"}
            and v.get("props", {"__type__": "update"}) == {"__type__": "update"})


def test_unchanged_outputs_are_skipped_and_changed_ones_sent():
    a, b, st, field = gr.Markdown(render=False), gr.Dropdown(render=False), gr.State(render=False), gr.Textbox(render=False)
    sv = SentValues()
    out = sv.prune("s1", {a: "x", b: gr.Dropdown(choices=["p", "q"], value="p"), st: {"k": 1}})
    assert out[a] == "x" and isinstance(out[b], gr.Dropdown) and out[st] == {"k": 1}
    out = sv.prune("s1", {a: "x", b: gr.Dropdown(choices=["p", "q"], value="p"), st: {"k": 1}})
    assert _skip(out[a]) and _skip(out[b]) and out[st] == {"k": 1}  # the State is never pruned
    # same choices, another value: sent as the plain value (no new component built by Gradio)
    out = sv.prune("s1", {b: gr.Dropdown(choices=["p", "q"], value="q")})
    assert out[b] == "q"
    out = sv.prune("s1", {b: gr.Dropdown(choices=["p", "q"], value="q")})
    assert _skip(out[b])
    # other choices: the whole update
    out = sv.prune("s1", {b: gr.Dropdown(choices=["p", "r"], value="q")})
    assert isinstance(out[b], gr.Dropdown)
    # another tab remembers nothing
    assert sv.prune("s2", {a: "x"})[a] == "x"
    # no session (a direct call): nothing pruned
    assert sv.prune(None, {a: "x"})[a] == "x"
    # DataFrames (plots) by their data
    df = pd.DataFrame({"x": [1, 2]})
    assert isinstance(sv.prune("s1", {a: df})[a], pd.DataFrame)
    assert _skip(sv.prune("s1", {a: pd.DataFrame({"x": [1, 2]})})[a])
    assert isinstance(sv.prune("s1", {a: pd.DataFrame({"x": [1, 3]})})[a], pd.DataFrame)
    # an event's input (the user may have changed it in the browser) is never pruned, and forgotten
    sv.prune("s1", {field: "typed"})
    assert _skip(sv.prune("s1", {field: "typed"})[field])
    assert sv.prune("s1", {field: "typed"}, inputs=[field])[field] == "typed"
    assert sv.prune("s1", {field: "typed"})[field] == "typed"  # forgotten by the event above: sent again
    sv.forget("s1")
    assert sv.prune("s1", {a: "x"})[a] == "x"


@pytest.fixture(scope="module")
def srv():
    from hostile import UiServer

    s = UiServer()
    try:
        yield s
    finally:
        s.close()


def _call(srv, name, data, sess):
    event, body = srv.call(name, data, session=sess)
    assert event == "complete", (name, event, body[:300])
    return json.loads(body)


def test_a_repeated_pick_sends_nothing_new_and_the_form_stays_right(srv):
    """The same pick twice (what the dropdown's duplicate input event does): the second answer
    skips every output and runs no second check; a later pick sends what changed; the state, the
    panel and the export agree throughout."""
    ui = srv.demo.wizard_ui
    sess = "delta-1"
    _call(srv, "field_model", [None, "meta-llama/Llama-3.1-8B-Instruct"], sess)
    first = _call(srv, "field_speculative_config_method", [None, "eagle3"], sess)
    assert any(isinstance(x, str) and "sw-summary-inner" in x for x in first)  # the panel was sent
    rev = ui.newest(sess)["rev"]
    again = _call(srv, "field_speculative_config_method", [None, "eagle3"], sess)
    assert all(x is None or _skip(x) for x in again), again  # nothing re-sent
    assert ui.newest(sess)["rev"] == rev  # and nothing re-checked or committed
    ng = _call(srv, "field_speculative_config_method", [None, "ngram"], sess)
    assert any(isinstance(x, str) and "sw-summary-inner" in x for x in ng)
    assert ui.newest(sess)["config"]["speculative_config"]["method"] == "ngram"
    sync = _call(srv, "secondary", [None], sess)
    cmd = [x for x in sync if isinstance(x, str) and x.lstrip().startswith("vllm serve")]
    assert cmd and '"method":"ngram"' in cmd[0].replace(" ", "")
    # the sync again with nothing changed: every output skipped (no session file, export or copy re-sent)
    sync2 = _call(srv, "secondary", [None], sess)
    assert all(x is None or _skip(x) for x in sync2), [x for x in sync2 if not _skip(x)][:3]


def test_exports_follow_only_while_review_is_on_screen():
    """The sync computes the Review exports only while Review is the step shown; a change made on
    another step brings them up to date when Review opens. Before any step is opened (a fresh tab,
    an API client) everything is computed."""
    from wizard.ui import build_app
    from wizard.ui.state import new_state, set_field

    ui = build_app().wizard_ui
    cmd = ui.c["exp_command"]
    st = ui.commit("t", set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct"))
    assert "Llama-3.1-8B-Instruct" in ui.secondary("t", st)[cmd]  # no step known yet: computed
    assert ui.step_opened("t", "kv", st) == {}
    st = ui.commit("t", set_field(st, "max_num_seqs", "77"))
    out = ui.secondary("t", st)
    assert cmd not in out and ui.c["bstate"] in out  # the browser copy follows; the hidden export waits
    opened = ui.step_opened("t", "review", st)
    assert "--max-num-seqs 77" in opened[cmd]
    assert ui.step_opened("t", "review", st) == {}  # nothing left over
    st = ui.commit("t", set_field(st, "max_num_seqs", "78"))
    assert "--max-num-seqs 78" in ui.secondary("t", st)[cmd]  # on screen: follows every pause
