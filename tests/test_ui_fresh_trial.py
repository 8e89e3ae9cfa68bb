"""Defects of a fresh-user trial of the wizard UI, checked at the handlers (the browser side of
item C is tests/test_ui_fresh_trial_browser.py):

A. the Launch step's "What Launch will run" follows the configuration while the step is open
   (after "Apply fix and relaunch", after an import on that tab);
B. a new launch attempt clears the previous server's monitoring (metrics, advice, smoke result,
   plots, log, diagnosis);
C. text is HTML-escaped once in Markdown views (code spans are escaped by the renderer itself);
D. opening the Target kv_cache_dtype dropdown and closing it with Escape (its input event sends
   the 'auto' it shows for an unset dtype) leaves the dtype unset;
E. a loaded session's unknown release / unknown GPU is reset to the default, with a note naming
   the field and the value; the rest of the session is kept.
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ui_state_model import ErrorLog, Tab  # noqa: E402

from wizard.config import Patch  # noqa: E402
from wizard.ui import findings as fp  # noqa: E402
from wizard.ui.state import new_state  # noqa: E402
from wizard.ui.steps import launch as step  # noqa: E402
from wizard.vllm.versions import default_version  # noqa: E402

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3 = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
CMD = (f"vllm serve {LLAMA} --speculative-config "
       f"'{{\"method\": \"eagle3\", \"model\": \"{EAGLE3}\", \"num_speculative_tokens\": 3}}'")


@pytest.fixture()
def tab():
    with ErrorLog() as log:
        t = Tab()
        yield t
        t.close()
        assert not log.records


class FakeHandle:
    """The ServerHandle calls the Launch step makes: a server in ``state`` with what a poll reads."""

    def __init__(self, state: str, exit_code: int | None = None, *, metrics: bool = False, fixes=()):
        self._state, self.exit_code, self.metrics = state, exit_code, metrics
        self.diagnosis = (SimpleNamespace(fixes=list(fixes), as_json=lambda: {"title": "startup failed", "message": "x",
                                                                              "fixes": [1] if fixes else []})
                          if fixes else None)

    def status(self) -> dict:
        return {"state": self._state, "pid": 4242, "url": "http://127.0.0.1:8001", "exit_code": self.exit_code,
                "uptime_s": 3.0, "time_to_healthy_s": None}

    def stop(self):
        self._state = "stopped"
        return self.exit_code

    def logs(self, n: int) -> list[str]:
        return ["INFO old server line"] if self.metrics else ["ERROR failed"]

    def latest_metrics(self):
        return SimpleNamespace(notes=[]) if self.metrics else None

    def metrics_history(self):
        return [SimpleNamespace(acceptance_rate=0.4)] if self.metrics else []

    def spec_method_and_k(self):
        return ("eagle3", 3) if self.metrics else (None, None)

    def advice(self):
        return SimpleNamespace(level="warning", message="acceptance is low: try a smaller k", suggestions=[])


@pytest.fixture()
def servers(monkeypatch):
    """Launch without vLLM: the gate says nothing, launch_api.launch hands out FakeHandles."""
    made: list[FakeHandle] = []
    monkeypatch.setattr(step, "launch_refusal", lambda ev, block, policy: None)
    monkeypatch.setattr(step.metrics, "summary_line", lambda latest: "accept 0.0% | MAL 1.00 | drafts 504")
    monkeypatch.setattr(step.metrics, "plot_data", lambda hist: {"per_position": [0.5] if hist else [],
                                                                 "time": [1.0] if hist else [],
                                                                 "acceptance_rate": [0.4] if hist else []})
    nxt: list[FakeHandle] = []

    def launch(cfg, **kw):
        h = nxt.pop(0) if nxt else FakeHandle("starting")
        made.append(h)
        return h

    monkeypatch.setattr(step.launch_api, "launch", launch)
    before = set(step.HANDLES)
    yield nxt
    for hid in set(step.HANDLES) - before:
        step.HANDLES.pop(hid, None)
        step._SMOKE.pop(hid, None)
        step._MEASURED.pop(hid, None)


def _launch(t: Tab, force: bool = True) -> dict:
    out = t.call("do_launch", t.state, force)
    t.apply(out)
    return out


# ---- A: the Launch step's preview follows the configuration ---------------------------------------

def _review(out: dict, t: Tab) -> str:
    v = out.get(t.c["ln_review"])
    assert isinstance(v, str), f"the Launch preview was not refreshed: {v!r:.200}"
    return v


def test_launch_preview_follows_an_import_on_the_launch_tab(tab):
    tab.import_command(CMD)
    tab.call("open_launch", tab.state)
    tab.call("open_step_launch", tab.state)  # the Launch tab is on screen
    assert '"num_speculative_tokens":3' in step.review_md(tab.ui, tab.state)
    out = tab.call("do_import_cmd", tab.state, CMD.replace('"num_speculative_tokens": 3', '"num_speculative_tokens": 5')
                   + " --max-num-seqs 4")
    tab.apply(out)
    synced = tab.call("secondary", tab.state)  # what follows the pause after the import
    md = _review(synced, tab)
    assert '"num_speculative_tokens":5' in md and "--max-num-seqs 4" in md and '"num_speculative_tokens":3' not in md


def test_launch_preview_not_computed_while_another_step_is_shown_then_follows_on_open(tab):
    tab.import_command(CMD)
    tab.call("open_step_review", tab.state)
    tab.apply(tab.call("do_import_cmd", tab.state, CMD + " --max-num-seqs 7"))
    synced = tab.call("secondary", tab.state)
    assert tab.c["ln_review"] not in synced  # deferred: nobody sees it
    opened = tab.call("open_step_launch", tab.state)
    assert "--max-num-seqs 7" in _review(opened, tab)


def test_launch_preview_is_stable_and_is_what_launch_runs(tab, servers):
    """The preview's port stays put between refreshes (a sync with nothing changed sends nothing),
    and Launch starts the server on the port shown."""
    tab.import_command(CMD)
    tab.call("open_step_launch", tab.state)
    md = step.review_md(tab.ui, tab.state)
    assert md == step.review_md(tab.ui, tab.state)
    port = step.launch_port(step.config_of(tab.state))
    assert f"--port {port}" in md
    got: list = []
    real = step.launch_api.launch
    step.launch_api.launch = lambda cfg, **kw: (got.append(kw.get("port")), real(cfg, **kw))[1]
    try:
        _launch(tab)
    finally:
        step.launch_api.launch = real
    assert got == [port]


def test_apply_fix_and_relaunch_shows_the_fixed_command(tab, servers):
    tab.import_command(CMD)
    tab.call("open_step_launch", tab.state)
    fix = Patch(description="Set max_model_len to 4096", set={"max_model_len": 4096})
    servers.append(FakeHandle("failed", 1, fixes=[fix]))
    _launch(tab)
    assert "--max-model-len" not in step.review_md(tab.ui, tab.state)
    out = tab.call("fix_relaunch", tab.state, True)
    tab.apply(out)
    assert tab.state["config"]["max_model_len"] == 4096
    assert "--max-model-len 4096" in _review(out, tab)  # at once, not only after the next pause
    assert tab.state.get("server") and step.HANDLES[tab.state["server"]].diagnosis is None  # the relaunched one


# ---- B: a new launch attempt clears the previous server's monitoring -------------------------------

def test_failed_launch_clears_the_previous_servers_monitoring(tab, servers):
    c = tab.c
    tab.import_command(CMD)
    servers.append(FakeHandle("healthy", metrics=True))
    _launch(tab)
    old = tab.state["server"]
    step._SMOKE[old] = "Smoke test done: smoke: 8/8 ok"
    polled = tab.call("poll_server", tab.state)
    assert "accept 0.0% | MAL 1.00 | drafts 504" in polled[c["ln_metrics"]]
    assert "Smoke test done" in polled[c["ln_metrics"]] and "acceptance is low" in polled[c["ln_metrics"]]
    assert not polled[c["ln_pos"]].empty and not polled[c["ln_time"]].empty
    tab.call("stop_server", tab.state)
    servers.append(FakeHandle("failed", 1))
    out = _launch(tab, force=True)
    assert tab.state["server"] != old
    for k in ("ln_metrics", "ln_logs", "ln_diag"):  # cleared (or already clear: nothing sent)
        assert out[c[k]] == "" or _is_skip(out[c[k]]), f"{k} still shows the previous server: {out[c[k]]!r:.200}"
    assert out[c["ln_pos"]].empty and out[c["ln_time"]].empty
    row = out[c["ln_diag_row"]]
    assert _is_skip(row) or row.constructor_args.get("visible") is False  # hidden (or still hidden)
    polled = tab.call("poll_server", tab.state)  # the failed server: its own status, nothing of the old one
    assert "failed" in polled[c["ln_status"]] and "exit code 1" in polled[c["ln_status"]]
    assert c["ln_metrics"] not in polled or polled[c["ln_metrics"]] == "" or _is_skip(polled[c["ln_metrics"]])


def _is_skip(v) -> bool:
    return isinstance(v, dict) and v.get("__type__") == "update" and len(v) == 1


def test_launch_refused_at_the_gate_keeps_the_running_servers_monitoring(tab, servers, monkeypatch):
    tab.import_command(CMD)
    servers.append(FakeHandle("healthy", metrics=True))
    _launch(tab)
    monkeypatch.setattr(step, "launch_refusal", lambda ev, block, policy: step._refused("Launching is disabled: x."))
    out = _launch(tab)
    assert tab.c["ln_metrics"] not in out and 'data-state="refused"' in out[tab.c["ln_status"]]


# ---- C: escaped once ------------------------------------------------------------------------------

def test_code_spans_are_not_escaped_twice():
    text = '`--kv-events-config {"endpoint": ...}` = `tcp://*:5557` (opens <a port>)'
    md = fp.md_text(text)
    assert '{"endpoint": ...}' in md and "&quot;" not in md and "&lt;a port&gt;" in md
    assert fp.md_code('{"max_num_seqs": 4,') == '`{"max_num_seqs": 4,`'
    # a backtick in the text never ends the span early, and stray backticks open nothing
    assert fp.md_code("a`b") == "``a`b``" and fp.md_code("`x") == "`` `x ``"
    assert fp.md_text("` a ``<img src=x>``") == "&#96; a `<img src=x>`"
    assert "\n" not in fp.md_text("a\n# b `c\nd`")


def test_launch_review_shows_json_options_with_their_quotes(tab):
    tab.import_command(f"vllm serve {LLAMA} --kv-events-config '{{\"endpoint\": \"tcp://*:5557\"}}' "
                       "--kv-transfer-config '{\"kv_connector\": \"X\", \"kv_role\": \"kv_both\"}'")
    md = step.review_md(tab.ui, tab.state)
    risky = md.split("**Options that need the opt-in**", 1)[1]
    assert '`--kv-events-config {"endpoint": ...}`' in risky and '`--kv-transfer-config {"kv_connector": ...}`' in risky
    assert "&quot;" not in risky


def test_other_options_note_shows_the_typed_text_with_its_quotes(tab):
    tab.import_command(CMD)
    tab.edit("extra_args", '{"max_num_seqs": 4,')
    out = tab.call("secondary", tab.state)
    note = out.get(tab.c["extra_note"])
    if _is_skip(note) or note is None:
        from wizard.ui.steps import review

        note = review.exports(tab.ui, tab.state, tab.ui.evaluate(tab.state))[tab.c["extra_note"]]
    assert '`{"max_num_seqs": 4,`' in note and "&quot;" not in note


# ---- D: an unset KV dtype stays unset --------------------------------------------------------------

def test_opening_and_closing_the_kv_dtype_dropdown_changes_nothing(tab):
    tab.import_command(CMD)
    before = dict(tab.state["config"])
    assert tab.form["kv_cache_dtype"] == "auto" and "kv_cache_dtype" not in before
    tab.edit("kv_cache_dtype", "auto")  # Escape: the input event sends the value shown
    assert "kv_cache_dtype" not in tab.state["config"] and tab.state["config"] == before
    assert "--kv-cache-dtype" not in tab.exports["exp_command"]
    assert "kv-cache-dtype" not in tab.exports["exp_yaml"]
    assert not tab.disagreements()
    tab.edit("kv_cache_dtype", "fp8")  # a real pick is taken, and picking 'auto' back is a pick too
    assert tab.state["config"]["kv_cache_dtype"] == "fp8" and "--kv-cache-dtype fp8" in tab.exports["exp_command"]
    tab.edit("kv_cache_dtype", "auto")
    assert tab.state["config"]["kv_cache_dtype"] == "auto"


def test_the_drafter_and_hardware_dropdowns_closed_unchanged_change_nothing(tab):
    tab.import_command(CMD)
    before = {k: tab.state.get(k) for k in ("config", "gpu", "vllm_version")}
    for path in ("speculative_config.kv_cache_dtype", "enable_prefix_caching", "dtype", "gpu.name", "vllm_version"):
        tab.edit(path, tab.form[path])
    assert {k: tab.state.get(k) for k in before} == before


# ---- E: a session's unknown release / GPU ------------------------------------------------------------

def _session(tmp_path: Path, **over) -> str:
    data = {"specwizard_session": 1, "v": 1, "config": {"model": LLAMA, "max_model_len": 8192,
                                                        "speculative_config": {"method": "eagle3", "model": EAGLE3,
                                                                               "num_speculative_tokens": 4}},
            "gpu": {"name": "H100-SXM", "count": 2}, "vllm_version": "0.32.0", "allow_hub": False,
            "raw": {}, "stash": {}, "acceptance": "0.7, 0.5"}
    data.update(over)
    p = tmp_path / "session.json"
    p.write_text(json.dumps(data))
    return str(p)


def test_session_with_unknown_release_and_gpu_is_reset_with_a_note(tab, tmp_path):
    bad_gpu = "<img src=x onerror=alert(1)>"
    out = tab.call("do_load_session", tab.state, _session(tmp_path, vllm_version="9.9.9",
                                                          gpu={"name": bad_gpu, "count": 2}))
    tab.apply(out)
    st = tab.state
    assert st["vllm_version"] == str(default_version()) and st["gpu"] == {"name": None, "count": 2}
    assert st["config"]["max_model_len"] == 8192 and st["config"]["speculative_config"]["num_speculative_tokens"] == 4
    assert st["acceptance"] == "0.7, 0.5"  # nothing else the session holds is lost
    assert tab.form["vllm_version"] == str(default_version()) and tab.form["gpu.name"] == "unknown"
    status, panel = out[tab.c["import_status"]], tab.panel
    for text in (status, panel):
        assert "vllm_version" in text and "9.9.9" in text and "gpu.name" in text
        assert html.escape(bad_gpu) in text and bad_gpu not in text  # named, escaped once
    assert "against vLLM 9.9.9" not in panel and f"checked against vLLM {default_version()}" in panel
    tab.sync()
    assert not tab.disagreements()


def test_session_with_known_values_loads_as_it_is(tab, tmp_path):
    out = tab.call("do_load_session", tab.state, _session(tmp_path, gpu={"name": "h100", "count": 2},
                                                          vllm_version="0.30"))
    tab.apply(out)
    assert tab.state["vllm_version"] == "0.30" and tab.state["gpu"] == {"name": "h100", "count": 2}  # alias, X.Y
    assert out[tab.c["import_status"]] == "" and "⚠" not in tab.panel.split("sw-action-note", 1)[1][:300]


def test_known_settings_uses_the_cores_lists():
    from wizard.hardware.catalog import names
    from wizard.ui.state import known_settings
    from wizard.vllm.versions import known_versions

    for v in known_versions():
        assert known_settings({**new_state(), "vllm_version": v})[1] == []
    for n in names():
        assert known_settings({**new_state(), "gpu": {"name": n, "count": 1}})[1] == []
    st, notes = known_settings({**new_state(), "vllm_version": 32, "gpu": {"name": ["H100"], "count": 1}})
    assert st["vllm_version"] == str(default_version()) and st["gpu"]["name"] is None and len(notes) == 2
    assert known_settings({**new_state(), "gpu": {"name": "unknown", "count": 1}}) == (
        {**new_state(), "gpu": {"name": None, "count": 1}}, [])
