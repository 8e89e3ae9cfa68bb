"""Budgets in bytes, not only counts (issue 20 item 3): inputs that are small in count but large
in bytes are refused (or cut) early, naming the field or file, in bounded memory.

* YAML: a ~900 KB scalar repeated through 10,000 aliases is 10,002 nodes (the node budget is
  100,000) but 8.4 GiB expanded: refused by the expanded-bytes budget before anything is built
  (it used to reach 20 GB in the UI; `wizard check --config` with 1,000 aliases took 15-20 s
  and 2.7 GB).
* the UI: a 200,000-key "Other options" box, the same configuration as the browser's copy of
  the tab (/restore) or as a session file, a 3 MB text in every box, the alias bomb uploaded.
* /metrics: ``position="10000000"``, a page of 60,000 per-position lines, a page that never
  ends, and the history of 1,800 scrapes.

Memory is measured (tracemalloc peaks; the UI's RSS; a subprocess under RLIMIT_AS); timing is
never asserted -- the subprocess timeout and hostile.TIME_CAP_S are safety nets only.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import budget_cases as B
import hostile as H
from wizard.config import ConfigError
from wizard.io.safeio import (MAX_YAML_EXPANDED_BYTES, InputRefused, json_loads_bounded, yaml_load_bounded)
from wizard.io.yaml_config import parse_yaml

ROOT = Path(__file__).resolve().parent.parent


def _peak(fn):
    """(result or exception, tracemalloc peak in bytes) of ``fn()``."""
    tracemalloc.start()
    try:
        try:
            out = fn()
        except Exception as err:  # the caller asserts on it
            out = err
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ---- YAML ----------------------------------------------------------------------------------------

def test_alias_bomb_is_refused_by_its_expanded_bytes():
    text = B.alias_bomb_yaml(10_000)
    assert len(text) < 1 << 20  # within the --config file budget, and 10,002 nodes: only bytes tell
    err, peak = _peak(lambda: parse_yaml(text, source="bomb.yaml"))
    assert isinstance(err, ConfigError) and err.field == "config", err
    msg = str(err)
    assert msg.startswith("config: bomb.yaml: YAML aliases expand to 8.4 GiB") and "`many`" in msg, msg
    assert "4.0 MiB" in msg and "is this the right file?" in msg, msg
    assert peak < 32 * 2 ** 20, f"{peak / 2**20:.1f} MiB"  # the text is 0.9 MB; nothing is expanded


def test_alias_bomb_through_the_cli_is_one_line_in_little_memory(tmp_path):
    f = tmp_path / "bomb.yaml"
    f.write_text(B.alias_bomb_yaml(1_000))
    limit = int(1.5 * 2 ** 30)  # it used to take 2.7 GB: a regression is a MemoryError here, not a swap

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    p = subprocess.run([sys.executable, "-m", "wizard", "check", "--offline", "--config", str(f)], capture_output=True,
                       text=True, timeout=300, preexec_fn=cap, cwd=str(ROOT), stdin=subprocess.DEVNULL,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"})
    assert p.returncode == 2, p.stderr[-1000:]
    H.check_error_line(p.stderr)
    assert "bomb.yaml" in p.stderr and "aliases expand to 859.2 MiB" in p.stderr, p.stderr[:400]
    assert len(p.stdout) == 0  # the 900 MB command line is never written


def test_aliases_within_the_byte_budget_still_load():
    ok = "model: m\nbase: &b {a: 1, b: 2}\nx: *b\ny: *b\n"
    assert parse_yaml(ok).extra_args == {"base": {"a": 1, "b": 2}, "x": {"a": 1, "b": 2}, "y": {"a": 1, "b": 2}}
    n = MAX_YAML_EXPANDED_BYTES // 100_000  # 41 uses of a 100 KB string: 4.1 MB, just below
    below = B.alias_bomb_yaml(n - 2, scalar=100_000)
    assert len(yaml_load_bounded(below)["many"]) == n - 2
    with pytest.raises(InputRefused, match=r"^x\.yaml: YAML aliases expand to 4\.\d MiB \(most of it under `many`\)"):
        yaml_load_bounded(B.alias_bomb_yaml(n + 1, scalar=100_000), what="x.yaml")
    assert yaml_load_bounded(B.alias_bomb_yaml(n + 1, scalar=100_000), max_bytes=None)["big"] == "x" * 100_000


def test_json_byte_budget_names_the_input():
    with pytest.raises(InputRefused, match=r"^session file is 5\.0 MiB, more than the 4\.0 MiB"):
        json_loads_bounded('"' + "x" * (5 * 2 ** 20 - 2) + '"', what="session file", max_bytes=4 * 2 ** 20)
    assert json_loads_bounded('{"a": 1}', max_bytes=8) == {"a": 1}


# ---- the UI's state --------------------------------------------------------------------------------

def test_session_budgets_name_the_field():
    from wizard.ui.state import (MAX_BOX_CHARS, SessionError, box_problem, config_problem, load_session,
                                 restore_session)

    with pytest.raises(SessionError, match=r"^session file: Other options \(extra_args\) holds 200,000 options, "
                                           r"more than the 1,000"):
        load_session(B.wide_session())
    with pytest.raises(SessionError, match=r"holds more than 20,000 values"):
        load_session(json.dumps({"config": {"model": "m", "extra_args": {"sizes": list(range(30_000))}}}))
    (st, notes), peak = _peak(lambda: restore_session(B.wide_bstate()))
    assert st["config"] == {"model": B.LLAMA, "max_num_seqs": 8} and st["gpu"]["name"] == "H100"  # the rest kept
    assert notes == ["Other options (extra_args) holds 200,000 options, more than the 1,000 a `vllm serve` command "
                     "can have (it has about 400): left out"]
    assert peak < 64 * 2 ** 20, f"{peak / 2**20:.1f} MiB"
    st, notes = restore_session({"config": {"model": "m"}, "raw": {"max_num_seqs": "9" * (MAX_BOX_CHARS + 1)}})
    assert st["raw"] == {} and "'max_num_seqs' is 262,145 characters" in notes[0]
    assert "max_num_seqs: 262,145 characters, more than the 262,144" in box_problem("max_num_seqs", "9" * 262_145)
    assert box_problem("max_num_seqs", "9" * 262_144) is None
    assert config_problem({"model": "m", "extra_args": B.many_options(1000)}) is None  # the budget itself is fine
    assert "as JSON, more than the 4 MiB" in config_problem({"model": "m", "extra_args": {"a": "x" * (5 << 20)}})


def test_typed_lists_are_not_split_beyond_their_budget():
    from wizard.ui.services import parse_acceptance, parse_ks

    (res, peak) = _peak(lambda: (parse_ks("1," * 2_000_000), parse_acceptance("0.5," * 2_000_000)))
    assert res == ((None, "k values: at most 16"), (None, "more than 64 positions: at most 64 (one per draft token)"))
    assert peak < 16 * 2 ** 20, f"{peak / 2**20:.1f} MiB"  # the 4-8 MB texts are never split into lists
    assert parse_ks("[1 2; 4]") == ([1, 2, 4], None)


# ---- the UI's HTTP API -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ui_server():
    import httpx

    tracing = tracemalloc.is_tracing()
    if tracing:
        tracemalloc.stop()
    server = H.UiServer()
    server.client = httpx.Client(timeout=120)  # a safety net (the handlers answer in well under a second)
    server.handler_errors = H.record_handler_errors(server)
    yield server
    server.close()


def _call(server, name, data, sess, budget):
    before = len(server.handler_errors)
    with budget.measure(f"{name} {str(data)[:100]}"):  # peak RSS of the process < 300 MiB per input
        event, body = B.session_call(server, name, data, sess)
    assert server.handler_errors[before:] == []
    assert event == "complete", (name, event, str(body)[:500])
    return B.texts_of(body)


def test_wide_other_options_box_is_refused_and_later_events_stay_fast(ui_server):
    ui = ui_server.demo.wizard_ui
    budget = H.Budget("budgets", mode="rss")
    sess = "budget-box"
    _call(ui_server, "restore", [None], sess, budget)
    _call(ui_server, "field_model", [B.LLAMA], sess, budget)
    _call(ui_server, "field_extra_args", [json.dumps({"enable-log-requests": True})], sess, budget)
    # 200,000 keys (3.6 MB): over the byte budget of a box; nothing of it is stored
    out = _call(ui_server, "field_extra_args", [B.wide_box()], sess, budget)
    assert "Other options (extra_args): 3,577,780 characters, more than the 262,144 one box takes" in out
    assert ui.newest(sess)["config"]["extra_args"] == {"enable-log-requests": True}
    assert "extra_args" not in ui.newest(sess).get("raw", {})
    # 5,000 keys (67 KB): within the bytes, beyond the options; the text is kept as typed
    box = B.wide_box(5000)
    out = _call(ui_server, "field_extra_args", [box], sess, budget)
    assert "Other options (extra_args) holds 5,000 options, more than the 1,000" in out
    st = ui.newest(sess)
    assert st["raw"]["extra_args"] == box and st["config"]["extra_args"] == {"enable-log-requests": True}
    out = _call(ui_server, "secondary", [], sess, budget)
    assert "holds 5,000 options" in out and "your text is kept" in out
    _call(ui_server, "field_max_num_seqs", ["8"], sess, budget)  # a later event: the checks saw 1 option
    assert ui.newest(sess)["config"]["max_num_seqs"] == 8
    assert budget.worst_mem < H.MEM_BUDGET


def test_restore_and_session_file_with_200000_options(ui_server):
    ui = ui_server.demo.wizard_ui
    budget = H.Budget("budgets", mode="rss")
    out = _call(ui_server, "restore", [B.wide_bstate()], "budget-restore", budget)
    assert "Restored without what was beyond the wizard's budgets: Other options (extra_args) holds 200,000" in out
    assert ui.newest("budget-restore")["config"] == {"model": B.LLAMA, "max_num_seqs": 8}
    _call(ui_server, "field_max_num_seqs", ["9"], "budget-restore", budget)
    sess = "budget-load"
    _call(ui_server, "restore", [None], sess, budget)
    _call(ui_server, "field_model", ["Qwen/Qwen3-8B"], sess, budget)
    out = _call(ui_server, "do_load_session", [ui_server.upload("s.json", B.wide_session())], sess, budget)
    assert "⚠ session file: Other options (extra_args) holds 200,000 options" in out
    assert ui.newest(sess)["config"]["model"] == "Qwen/Qwen3-8B"  # refused: the tab's configuration stays
    out = _call(ui_server, "do_import_yaml", [ui_server.upload("bomb.yaml", B.alias_bomb_yaml(10_000).encode())], sess,
                budget)
    assert "`bomb.yaml` not imported: config: bomb.yaml: YAML aliases expand to 8.4 GiB" in out
    assert ui.newest(sess)["config"]["model"] == "Qwen/Qwen3-8B"
    assert budget.worst_mem < H.MEM_BUDGET


def test_every_text_input_has_a_byte_budget(ui_server):
    """3 MB into every endpoint that takes text (launch endpoints aside): each answers, none
    raises, and the next event of the tab is not slowed by it."""
    budget = H.Budget("budgets", mode="rss")
    big = "9" * (3 << 20)
    names = sorted(n for n, params in ui_server.endpoints.items()
                   if not n.startswith(H.HTTP_SKIP) and n not in ("run_tune", "smoke_test")
                   and params and all(p.get("component") in ("Textbox", "Code", "Dropdown") for p in params))
    assert {"field_extra_args", "field_model", "do_import_cmd", "acceptance_changed", "hub_wanted"} <= set(names)
    for name in names:
        sess = f"budget-{name}"
        event, body = B.session_call(ui_server, name, [big] * len(ui_server.endpoints[name]), sess)
        assert event == "complete" or any(v in str(body) for v in H.GRADIO_VALIDATION), (name, event, str(body)[:300])
        assert ui_server.handler_errors == [], ui_server.handler_errors
        st = ui_server.demo.wizard_ui.newest(sess) or {}
        assert len(json.dumps(st, default=str)) < 1 << 20, name  # the 3 MB text is not kept
        _call(ui_server, "field_max_num_seqs", ["8"], sess, budget)
    assert budget.worst_mem < H.MEM_BUDGET


# ---- /metrics ---------------------------------------------------------------------------------------

def test_far_position_label_is_ignored_with_a_note():
    from wizard.launch.metrics import parse_metrics

    raw, peak = _peak(lambda: parse_metrics(B.metrics_far_position()))
    assert raw["accepted_per_pos"] == [52, 32, 16] and raw["num_drafts"] == 56
    assert raw["notes"] == ["vllm:spec_decode_num_accepted_tokens_per_pos_total: position label(s) '10000000' ignored "
                            "(outside 0..512; vLLM reports one position per draft token)"]
    assert peak < 16 * 2 ** 20, f"{peak / 2**20:.1f} MiB"  # a 10^7-entry list was 80+ MB per scrape


def test_oversized_and_endless_metrics_pages_are_cut():
    from wizard.launch.metrics import MAX_METRICS_BYTES, MAX_POSITIONS

    for srv in (B.MetricsServer(B.metrics_many_positions().encode()), B.MetricsServer(endless=True)):
        try:
            res, peak = _peak(lambda: B.scrape_case(srv.url, scrapes=2))
        finally:
            srv.close()
        assert not isinstance(res, Exception), res
        assert res["positions"] <= MAX_POSITIONS + 1 and res["kept"] == 2
        assert f"/metrics page larger than {MAX_METRICS_BYTES >> 20} MiB: only its first 4 MiB were read" in res["notes"]
        assert any("sample lines beyond the first 5,000" in n for n in res["notes"]), res["notes"]
        assert peak < 64 * 2 ** 20, f"{peak / 2**20:.1f} MiB"
        assert srv.sent < 64 * 2 ** 20  # the endless page: the reader hung up after ~4 MiB a scrape


def test_metrics_history_is_bounded_in_bytes():
    from wizard.launch.metrics import HISTORY_MAX_BYTES, MetricsSeries, snapshot_from_text

    hostile = B.metrics_many_positions(513)  # every position vLLM could report, each scrape
    res, peak = _peak(lambda: B.series_case(hostile))
    assert res["positions"] == 513 and res["history_bytes"] <= HISTORY_MAX_BYTES
    assert 300 < res["kept"] < 1800  # the oldest went first
    assert peak < 2 * HISTORY_MAX_BYTES, f"{peak / 2**20:.1f} MiB"  # the estimate is close to what it holds
    normal = B.series_case(B.real_metrics_page())
    assert normal["kept"] == 1800 and normal["history_bytes"] < 8 * 2 ** 20  # an hour of real scrapes: all kept
    ser = MetricsSeries(maxlen=10, max_bytes=1)
    ser.add(snapshot_from_text(B.real_metrics_page()))
    assert len(ser) == 1  # the newest stays even beyond the budget
