"""Wizard UI state and app wiring without a browser: fields, invalid values, sessions, app.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.config import Patch, apply_patch
from wizard.ui.state import (SessionError, config_of, field_value, load_session, new_state, session_json, set_field,
                             state_from_config)

ROOT = Path(__file__).resolve().parent.parent


def test_fields_coerce_and_keep_invalid_text():
    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    st = set_field(st, "speculative_config.method", "ngram")
    st = set_field(st, "speculative_config.num_speculative_tokens", "4")
    st = set_field(st, "max_model_len", "8k")  # not a number: kept, not dropped
    cfg = config_of(st)
    assert cfg.speculative_config.num_speculative_tokens == 4
    assert cfg.invalid_values == {"max_model_len": "8k"}
    assert field_value(st, "max_model_len") == "8k"
    st = set_field(st, "max_model_len", "8192")
    assert config_of(st).max_model_len == 8192 and not config_of(st).invalid_values


def test_no_speculation_puts_config_aside_and_back():
    st = set_field(new_state(), "model", "m")
    st = set_field(st, "speculative_config.method", "eagle3")
    st = set_field(st, "speculative_config.model", "d")
    st = set_field(st, "speculative_config.method", "none")
    assert config_of(st).speculative_config is None
    st = set_field(st, "speculative_config.method", "eagle3")
    assert config_of(st).speculative_config.model == "d"


def test_session_roundtrip_and_errors():
    st = set_field(new_state(), "model", "m")
    st = set_field(st, "gpu.name", "H100-SXM")
    st = set_field(st, "gpu.count", 2)
    again = load_session(session_json(st))
    assert again["config"] == st["config"] and again["gpu"] == {"name": "H100-SXM", "count": 2}
    with pytest.raises(SessionError, match="not JSON"):
        load_session("{nope")
    with pytest.raises(SessionError, match="config"):
        load_session(json.dumps({"x": 1}))


def test_render_seed_misconfiguration_and_fix():
    from wizard.ui import build_app

    demo = build_app()
    ui = demo.wizard_ui
    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    st = set_field(st, "speculative_config.method", "ngram")
    st = set_field(st, "speculative_config.num_speculative_tokens", 3)
    st = set_field(st, "speculative_config.method", "eagle3")
    st = set_field(st, "kv_sharing_fast_prefill", True)
    out = ui.render(st, 0, changed="kv_sharing_fast_prefill", full=False)
    meta = out[ui.c["slot_meta"]]
    sd001 = next(m for m in meta if m and m["rule"] == "SD001")
    assert sd001["field"] == "kv_sharing_fast_prefill"
    fixed = apply_patch(config_of(st), Patch(**sd001["fixes"][0]))
    out = ui.render(state_from_config(fixed, base=st), 1, changed=None, full=True)
    assert all(m is None or m["rule"] != "SD001" for m in out[ui.c["slot_meta"]])
    assert 'data-seq="2"' in out[ui.c["summary"]]
    assert out[ui.c["exp_command"]].startswith("vllm serve meta-llama/Llama-3.1-8B-Instruct")


@pytest.mark.parametrize("args", [["--host", "0.0.0.0"], ["--share"]])
def test_app_refuses_beyond_loopback_without_auth(args):
    r = subprocess.run([sys.executable, str(ROOT / "app.py"), *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "--auth" in r.stderr and "refusing" in r.stderr


def test_app_bad_auth_value():
    r = subprocess.run([sys.executable, str(ROOT / "app.py"), "--host", "0.0.0.0", "--auth", "nocolon"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "user:password" in r.stderr


def test_app_serves_loopback_by_default(tmp_path):
    import httpx
    from ui_helpers import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        import time

        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
                if r.status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("app.py did not serve on 127.0.0.1")
        assert "SpecWizard" in r.text
        import psutil

        conns = [c for c in psutil.Process(proc.pid).net_connections() if c.status == "LISTEN" and c.laddr.port == port]
        assert conns and all(c.laddr.ip == "127.0.0.1" for c in conns)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_notebook_executes_with_nbclient(tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient
    from ui_helpers import free_port

    nb = nbformat.read(ROOT / "notebooks" / "wizard.ipynb", as_version=4)
    monkeypatch.setenv("SPECWIZARD_PORT", str(free_port()))
    NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = json.dumps(outputs)
    assert "iframe" in text or "127.0.0.1" in text  # rendered inline
    assert "error" in text or "ok" in text or "warning" in text  # api.check verdict printed
    assert not any(o.get("output_type") == "error" for o in outputs)


def test_plan_frames_from_the_real_planner():
    pytest.importorskip("wizard.plan")
    from wizard.ui import services
    from wizard.ui.steps.plan import memory_frame, plan_dict, speedup_frame

    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    st = set_field(st, "speculative_config.method", "eagle3")
    st = set_field(st, "speculative_config.model", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    st = set_field(st, "speculative_config.num_speculative_tokens", 3)
    st = set_field(st, "gpu.name", "H100-SXM")
    ev = services.evaluate(st)
    d = plan_dict(services.plan_for(ev.ctx))
    mem = memory_frame(d)
    parts = dict(zip(mem["part"], mem["GiB"]))
    assert parts["target weights"] == pytest.approx(d["weights_bytes"]["target"] / 1024**3)
    assert parts["drafter weights"] == pytest.approx(d["weights_bytes"]["drafter"] / 1024**3)
    assert "KV cache" in parts
    sp = speedup_frame(d)
    assert list(sp["k"]) == sorted(sp["k"]) and 3 in list(sp["k"])
    assert (sp["speedup"] > 0).all()


def test_method_choices_put_fitting_methods_first():
    from wizard.ui import services
    from wizard.ui.steps.speculation import method_choices
    from wizard.versions import default_version

    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    choices = method_choices(services.evaluate(st), default_version())
    values = [v for _, v in choices]
    assert values[0] == "none"
    starred = [v for label, v in choices if label.startswith("★")]
    assert "eagle3" in starred and "ngram" in starred
    assert "mtp" not in starred  # Llama 3.1 has no MTP layers: still reachable, with the reason
    mtp_label = next(label for label, v in choices if v == "mtp")
    assert "no MTP layers" in mtp_label


def test_other_options_box_keeps_broken_json_text():
    from wizard.ui import build_app

    demo = build_app()
    ui = demo.wizard_ui
    comp = ui.fields["extra_args"]
    fn = next(bf.fn for bf in demo.fns.values() if bf.targets and bf.targets[0] == (comp._id, "input"))
    st = set_field(new_state(), "model", "m")
    out = fn(st, 0, '{"tokenizer_mode": "slow"}')
    st2 = out[ui.c["state"]]
    assert st2["config"]["extra_args"] == {"tokenizer_mode": "slow"}
    out = fn(st2, 1, '{"tokenizer_mode": "slow",')  # half-typed: kept verbatim, last valid options used
    st3 = out[ui.c["state"]]
    assert st3["raw"]["extra_args"] == '{"tokenizer_mode": "slow",'
    assert st3["config"]["extra_args"] == {"tokenizer_mode": "slow"}
    assert ui.form_value(st3, "extra_args") == '{"tokenizer_mode": "slow",'
