"""Wizard UI state and app wiring without a browser: fields, invalid values, sessions, app.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.config import Patch, apply_patch
from wizard.ui.state import (SessionError, config_of, field_value, load_session, new_state, session_json, set_field,
                             state_from_config)

ROOT = Path(__file__).resolve().parent.parent


def handler(demo, comp, event: str):
    """The function wired to ``comp``'s ``event`` (what a browser event calls)."""
    return next(bf.fn for bf in demo.fns.values() if bf.targets and bf.targets[0] == (comp._id, event))


def panel_rules(html_text: str) -> list[str]:
    """Rule ids of the finding cards in the panel's HTML."""
    return re.findall(r'<div class="sw-card [^"]*" data-rule="([^"]+)"', html_text)


def test_fields_coerce_and_keep_invalid_text():
    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    st = set_field(st, "speculative_config.method", "ngram")
    st = set_field(st, "speculative_config.num_speculative_tokens", "4")
    assert config_of(set_field(st, "max_model_len", "8k")).max_model_len == 8000  # vLLM: human_readable_int
    st = set_field(st, "max_model_len", "8q")  # not a number vLLM reads: kept, not dropped
    cfg = config_of(st)
    assert cfg.speculative_config.num_speculative_tokens == 4
    assert cfg.invalid_values == {"max_model_len": "8q"}
    assert field_value(st, "max_model_len") == "8q"
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
    from wizard.ui.panel import apply_fix

    demo = build_app()
    ui = demo.wizard_ui
    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    st = set_field(st, "speculative_config.method", "ngram")
    st = set_field(st, "speculative_config.num_speculative_tokens", 3)
    st = set_field(st, "speculative_config.method", "eagle3")
    st = set_field(st, "kv_sharing_fast_prefill", True)
    out = ui.render(None, st, ui.reactors_for(["kv_sharing_fast_prefill"]))
    html_text = out[ui.c["panel"]]
    assert "SD001" in panel_rules(html_text)
    card = html_text[html_text.index('data-rule="SD001"'):]
    assert 'data-sw-goto="f-kv_sharing_fast_prefill"' in card.split("sw-slot")[0]
    sd001 = next(f for f in ui.evaluate(st).report.findings if f.rule == "SD001")
    assert sd001.fields[0] == "kv_sharing_fast_prefill"
    assert 'data-sw-fix="' in card.split("sw-slot")[0] and 'data-sw-rule="SD001"' in card
    fixed, note = apply_fix(ui, st, "SD001", sd001.fixes[0].description)
    assert fixed is not None and note.startswith("Applied")
    assert fixed["history"] and fixed["history"][-1]["label"].startswith("Apply")  # Undo brings it back
    out = ui.full(None, fixed)
    assert "SD001" not in panel_rules(out[ui.c["panel"]])
    assert 'data-seq="' in out[ui.c["panel"]] and "sw-undo" in out[ui.c["panel"]]
    sec = ui.secondary(None, out[ui.c["state"]])
    assert sec[ui.c["exp_command"]].startswith("vllm serve meta-llama/Llama-3.1-8B-Instruct")


@pytest.mark.parametrize("args", [["--host", "0.0.0.0"], ["--share"]])
def test_app_refuses_beyond_loopback_without_auth(args):
    r = subprocess.run([sys.executable, str(ROOT / "app.py"), *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert "--auth" in r.stderr and "refusing" in r.stderr


def _app(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    base = {k: v for k, v in os.environ.items() if k != "SPECWIZARD_AUTH"}
    return subprocess.run([sys.executable, str(ROOT / "app.py"), *args], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, env={**base, **(env or {})})


def test_app_refuses_a_password_on_the_command_line():
    """Issue 20 item 7: `--auth user:pass` put the password in `ps` for every local user."""
    r = _app("--host", "0.0.0.0", "--auth", "alice:s3cret-pw")
    assert r.returncode == 2 and "s3cret-pw" not in r.stderr
    assert "--auth USER" in r.stderr and "SPECWIZARD_AUTH" in r.stderr and "--auth-file" in r.stderr, r.stderr


def test_app_bad_auth_value():
    r = _app("--host", "0.0.0.0", env={"SPECWIZARD_AUTH": "nocolon"})
    assert r.returncode == 2 and "SPECWIZARD_AUTH" in r.stderr and "user:password" in r.stderr
    # --auth USER with no password anywhere and no terminal to ask on: refused, saying where to put it
    r = _app("--host", "0.0.0.0", "--auth", "alice")
    assert r.returncode == 2 and "terminal" in r.stderr and "SPECWIZARD_AUTH" in r.stderr, r.stderr


def _load_app_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("specwizard_app_py", ROOT / "app.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_app_auth_user_takes_the_password_from_file_environment_or_terminal(tmp_path):
    app = _load_app_module()

    def parse(argv, environ, ask=None):
        return app.parse_auth(app.build_parser().parse_args(argv), environ=environ, ask=ask)

    def never(prompt):
        raise AssertionError("asked for a password that was given")

    env = {"SPECWIZARD_AUTH": "alice:pw:with:colons", "OTHER": "1"}
    assert parse(["--auth", "alice"], env, never) == [("alice", "pw:with:colons")]
    assert env == {"OTHER": "1"}  # read once and removed: the servers the wizard launches never inherit it
    assert parse([], {"SPECWIZARD_AUTH": "bob:pw"}) == [("bob", "pw")]  # alone, it is a login too
    f = tmp_path / "auth"
    f.write_text("# logins\nalice:from-file\n")
    assert parse(["--auth", "alice", "--auth-file", str(f)], {}, never) == [("alice", "from-file")]
    prompts: list[str] = []
    assert parse(["--auth", "carol"], {}, lambda p: prompts.append(p) or "typed") == [("carol", "typed")]
    assert prompts and "carol" in prompts[0]
    with pytest.raises(SystemExit) as e:
        parse(["--auth", "carol"], {}, lambda p: "")
    assert e.value.code == 2
    assert parse([], {}) is None


def test_app_auth_user_asks_on_the_terminal_and_keeps_the_password_out_of_ps():
    """End to end: `app.py --auth alice` on a terminal (a pty) asks for the password without
    echo; the UI then accepts that login, and no process's command line holds the password."""
    import os
    import pty
    import time

    import httpx
    import psutil
    from ui_helpers import free_port

    port = free_port()
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "SPECWIZARD_AUTH"}
    # a session of its own: getpass uses this pty, never the terminal the tests run in
    def own_terminal():  # a session of its own whose controlling terminal is the pty (getpass opens /dev/tty)
        import fcntl
        import termios

        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port), "--auth", "alice"],
                            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            preexec_fn=own_terminal)
    os.close(slave)
    try:
        seen = b""
        deadline = time.monotonic() + 300  # a safety net for a hung start, never a schedule
        import select

        while b"Password for alice" not in seen and time.monotonic() < deadline and proc.poll() is None:
            ready, _, _ = select.select([master], [], [], 1.0)  # never blocks past the safety net
            if not ready:
                continue
            try:
                seen += os.read(master, 1024)
            except OSError:
                break
        assert b"Password for alice" in seen, seen
        os.write(master, b"typed-pw-42\n")
        url = f"http://127.0.0.1:{port}"
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"app.py exited with {proc.returncode}: {proc.stdout.read()[-2000:]!r}")
            try:
                r = httpx.post(url + "/login", data={"username": "alice", "password": "typed-pw-42"}, timeout=10,
                               trust_env=False)
                break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("app.py did not serve")
        assert r.status_code == 200, r.text
        for p in psutil.process_iter(["cmdline"]):
            assert "typed-pw-42" not in " ".join(p.info["cmdline"] or [])
    finally:
        proc.terminate()
        proc.wait(timeout=300)
        os.close(master)


def test_app_serves_loopback_by_default(tmp_path):
    import httpx
    from ui_helpers import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        import time

        deadline = time.time() + 600  # a safety net for a hung start, never a schedule
        while time.time() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"app.py exited with {proc.returncode}: {proc.stdout.read()[-2000:]}")
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
        proc.wait(timeout=300)


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
    assert list(mem["part"]) == ["target weights", "drafter weights", "reserve", "target KV", "drafter KV", "free"]
    kv = d["kv_cache_bytes"] / 1024**3
    t, dr = d["kv_bytes_per_token"]["target"], d["kv_bytes_per_token"]["drafter"]
    assert parts["target KV"] == pytest.approx(kv * t / (t + dr))
    assert parts["drafter KV"] == pytest.approx(kv * dr / (t + dr))
    assert parts["reserve"] == pytest.approx(sum(d["reserve_bytes"].values()) / 1024**3)
    assert sum(parts.values()) == pytest.approx(d["memory_per_device_bytes"] / 1024**3)  # totals are not bars
    sp = speedup_frame(d)
    assert list(sp["k"]) == sorted(sp["k"]) and 3 in list(sp["k"])
    assert (sp["speedup"] > 0).all()


def test_method_choices_put_fitting_methods_first():
    from wizard.ui import services
    from wizard.ui.steps.speculation import method_choices
    from wizard.vllm.versions import default_version

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
    fn = handler(demo, comp, "change")  # every edit, deletion included
    st = set_field(new_state(), "model", "m")
    out = fn(st, '{"tokenizer_mode": "slow"}')
    st2 = out[ui.c["state"]]
    assert st2["config"]["extra_args"] == {"tokenizer_mode": "slow"}
    out = fn(st2, '{"tokenizer_mode": "slow",')  # half-typed: kept verbatim, last valid options used
    st3 = out[ui.c["state"]]
    assert st3["raw"]["extra_args"] == '{"tokenizer_mode": "slow",'
    assert st3["config"]["extra_args"] == {"tokenizer_mode": "slow"}
    assert ui.form_value(st3, "extra_args") == '{"tokenizer_mode": "slow",'


def test_gpu_count_is_validated_not_clamped():
    from wizard.ui import services
    from wizard.ui.state import gpu_count_problem

    st = set_field(set_field(new_state(), "gpu.name", "H100-SXM"), "gpu.count", 2)
    for bad in (-3, "-3", 2.5, "abc", 0):
        s2 = set_field(st, "gpu.count", bad)
        assert s2["gpu"]["count"] == 2  # the last valid count is used ...
        assert s2["raw"]["gpu.count"] == str(bad)  # ... and the typed text kept
        msg = gpu_count_problem(s2)
        assert "whole number" in msg and repr(str(bad)) in msg
        s2 = set_field(s2, "model", "meta-llama/Llama-3.1-8B-Instruct")
        assert msg in services.evaluate(s2).notes  # shown in the panel header too
    ok = set_field(set_field(st, "gpu.count", -3), "gpu.count", 4.0)
    assert ok["gpu"]["count"] == 4 and "gpu.count" not in ok["raw"] and gpu_count_problem(ok) is None


def test_hardware_step_shows_count_message_and_one_memory_unit():
    from wizard.ui import build_app, services
    from wizard.ui.steps.hardware import _catalog_choices

    ui = build_app().wizard_ui
    st = set_field(set_field(new_state(), "gpu.name", "H100-SXM"), "gpu.count", -3)
    out = ui.render(None, st, ui.reactors_for(["gpu.count"]))
    md = out[ui.c["hw_facts"]]
    assert "GPU count must be a whole number" in md and "'-3'" in md
    assert ui.form_value(st, "gpu.count") == "-3"  # the box keeps what was typed
    label = next(lbl for lbl, v in _catalog_choices() if v == "H100-SXM")
    h = services.hardware_lookup("H100-SXM")
    shown = f"{h.memory_bytes / 1024**3:.1f} GiB"
    assert shown in label and shown in md  # dropdown and table agree (79.6 GiB, not 80 vs 79.6)


def test_ill_typed_and_huge_numbers_are_kept_and_browser_safe():
    from wizard.io.forms import export
    from wizard.ui import build_app
    from wizard.ui.state import browser_safe

    huge = "9" * 23
    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    for text, expect in (("abc", "abc"), ("-5", "-5"), (huge, huge), ("1e30", "1e30")):
        s2 = set_field(st, "max_num_seqs", text)
        cfg = config_of(s2)
        cmd = export(cfg, "command")
        assert f"--max-num-seqs {expect}" in cmd or f"--max-num-seqs={expect}" in cmd  # never changed silently
        if text in ("abc", "1e30"):
            assert cfg.invalid_values == {"max_num_seqs": text}  # the rules see it as ill-typed
    s2 = set_field(st, "gpu_memory_utilization", "5")
    assert config_of(s2).gpu_memory_utilization == 5.0
    s2 = set_field(st, "max_num_seqs", huge)
    safe = browser_safe(s2)
    assert safe["config"]["max_num_seqs"] == huge  # text, not a 76-bit int
    again = load_session(json.dumps(safe))
    assert config_of(again).max_num_seqs == int(huge)  # reads back to the same value
    ui = build_app().wizard_ui
    s2 = set_field(s2, "speculative_config.num_speculative_tokens", huge)
    out = ui.full(None, s2)
    sec = ui.secondary(None, out[ui.c["state"]])
    import orjson

    orjson.dumps(sec[ui.c["bstate"]])  # the browser copy serialises (ints beyond 64 bits did not)
    assert sec[ui.c["bstate"]]["config"]["max_num_seqs"] == huge
    k_box = out[ui.fields["speculative_config.num_speculative_tokens"]]
    # the k box (no range: issue 23) never gets a 76-bit k a browser would round; the step's note
    # shows the value as given and the config keeps it
    assert getattr(k_box, "value", None) is None and ui.form_value(s2, "speculative_config.num_speculative_tokens") is None
    assert getattr(k_box, "maximum", None) is None
    assert ui.form_value(s2, "max_num_seqs") == huge


def test_plan_step_never_raises_on_huge_values():
    from wizard.ui import build_app
    from wizard.ui.steps import plan

    ui = build_app().wizard_ui
    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    st = set_field(st, "speculative_config.method", "eagle3")
    st = set_field(st, "gpu.name", "H100-SXM")
    st = set_field(st, "max_num_seqs", "9" * 23)
    out = plan.compute_safe(ui, st)
    import orjson

    orjson.dumps(out[ui.c["plan_json"]].value)  # the raw figures travel as text where needed
    sp = out[ui.c["plan_speedup"]]
    for _, line in sp.groupby("batch"):  # one line per batch size, whole k on the axis
        assert list(line["k"]) == [str(k) for k in range(1, len(line) + 1)]
    assert "max concurrency" in out[ui.c["plan_md"]]
    import re

    conc = re.search(r"max concurrency at max_model_len: \*\*([^*]+)\*\*", out[ui.c["plan_md"]]).group(1)
    assert re.fullmatch(r"[\d,]+\.\d\d", conc)  # 2 decimals


def test_choosing_a_method_fills_the_catalog_drafter_it_names():
    from wizard.ui import build_app, services
    from wizard.ui.steps.speculation import method_choices
    from wizard.vllm.versions import default_version

    demo = build_app()
    ui = demo.wizard_ui
    comp = ui.fields["speculative_config.method"]
    fn = handler(demo, comp, "input")
    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    label = next(lbl for lbl, v in method_choices(services.evaluate(st), default_version()) if v == "eagle3")
    named = label.split("catalog drafter ", 1)[1]
    out = fn(st, "eagle3")
    spec = out[ui.c["state"]]["config"]["speculative_config"]
    assert spec["model"] == named and spec["num_speculative_tokens"] == 3
    assert "SD042" not in panel_rules(out[ui.c["panel"]])
    # eagle (EAGLE-1) then eagle3: the EAGLE-1 head is replaced by the eagle3 drafter
    out = fn(out[ui.c["state"]], "eagle")
    assert out[ui.c["state"]]["config"]["speculative_config"]["model"] == "yuhuili/EAGLE-LLaMA3.1-Instruct-8B"
    out = fn(out[ui.c["state"]], "eagle3")
    assert out[ui.c["state"]]["config"]["speculative_config"]["model"] == named
    # a drafter the user typed is kept
    st2 = set_field(set_field(st, "speculative_config.model", "/models/my-eagle3"), "speculative_config.method", "ngram")
    out = fn(st2, "eagle3")
    assert out[ui.c["state"]]["config"]["speculative_config"]["model"] == "/models/my-eagle3"


def test_drafter_list_follows_the_method_family():
    from wizard.ui import build_app

    ui = build_app().wizard_ui
    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    for method, must, must_not in (("eagle3", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "yuhuili/EAGLE-LLaMA3.1-Instruct-8B"),
                                   ("draft_model", "meta-llama/Llama-3.2-1B-Instruct", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")):
        s2 = set_field(st, "speculative_config.method", method)
        out = ui.render(None, s2, ui.reactors_for(["speculative_config.method"]))
        choices = out[ui.fields["speculative_config.model"]].choices
        values = [v for _, v in choices]
        assert must in values and must_not not in values
        assert all("(ngram)" not in str(lbl) for lbl, _ in choices)


def test_method_list_collapses_mtp_aliases():
    from wizard.ui import services
    from wizard.ui.steps.speculation import method_choices
    from wizard.vllm.versions import default_version
    from wizard.vllm.methods import mtp_types

    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    values = [v for _, v in method_choices(services.evaluate(st), default_version())]
    aliases = set(mtp_types(default_version())) - {"mtp"}
    assert aliases and not aliases & set(values)
    assert values.count("mtp") == 1


def test_yaml_import_error_names_the_users_file_only(tmp_path):
    from wizard.ui import build_app

    demo = build_app()
    ui = demo.wizard_ui
    up = tmp_path / "gradio" / "0123abcd" / "bin.yaml"
    up.parent.mkdir(parents=True)
    up.write_bytes(bytes(range(256)))
    fn = handler(demo, ui.c["import_yaml"], "upload")
    out = fn(new_state(), str(up))
    msg = out[ui.c["import_status"]]
    assert "bin.yaml" in msg and str(up.parent) not in msg and "0123abcd" not in msg


def test_cross_check_header_without_vllm_version():
    from wizard.ui.steps.review import _xc_header

    text = "\n== vLLM cross-check (?, platform ?) ==\nvLLM's own check did not run: boom\n"
    out = _xc_header(text, {"verdict": "unavailable", "message": "boom"})
    assert "(?, platform ?)" not in out and "== vLLM cross-check:" in out


def test_every_preset_loads_in_the_ui_and_cleared_dropdowns_skip():
    """Issue 14: a preset replaces the configuration (and the hardware); clearing the preset or
    the Catalog dropdown answers with a skip, never Gradio's 'not enough output values'."""
    from wizard.io.presets import list_presets
    from wizard.ui import build_app

    demo = build_app()
    ui = demo.wizard_ui
    fn = handler(demo, ui.c["preset"], "input")
    for p in list_presets():
        out = fn(new_state(), p.name)
        st = out[ui.c["state"]]
        assert st["config"]["model"] == p.config.model, p.name
        assert ui.c["import_status"] not in out  # no error line
    for value in (None, ""):
        out = fn(new_state(), value)
        assert list(out) == [ui.c["panel"]]  # a skip of one output, not an empty answer
        out = handler(demo, ui.c["target_catalog"], "input")(new_state(), value)
        assert ui.c["state"] not in out


def test_tune_section_refuses_like_launch_and_never_raises(tmp_path, monkeypatch):
    """Issue 15 item 4 (Tune in the Launch step): bad k values are named; a configuration that
    Launch refuses (a code-loading variable from imported text) is refused by Tune too, before
    anything starts; the handler streams (a generator) and never raises."""
    import inspect

    from wizard.io.argv import parse_command
    from wizard.ui import build_app
    from wizard.ui import services
    from wizard.ui.steps import launch as launch_step

    started = []
    monkeypatch.setattr(launch_step.api, "tune", lambda *a, **k: started.append(k))
    demo = build_app()
    ui = demo.wizard_ui
    fn = handler(demo, ui.c["tn_run"], "click")
    assert inspect.isgeneratorfunction(fn)
    st = state_from_config(parse_command(
        "PYTHONPATH=/tmp/x vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
        "'{\"method\":\"ngram\",\"num_speculative_tokens\":2,\"prompt_lookup_max\":4}'"))
    out = list(fn(st, "1,x", 4, 32, False))
    assert len(out) == 1 and "'x' is not a whole number" in out[0][ui.c["tn_out"]]
    out = list(fn(st, "1,2", 4, 32, False))  # not started by launch(): bind address unknown, no login
    assert len(out) == 1 and "Launching is disabled" in out[0][ui.c["tn_out"]]
    monkeypatch.setattr(ui, "launch_block", lambda: None)  # as if on loopback
    out = list(fn(st, "1,2", 4, 32, False))
    assert len(out) == 1 and "PYTHONPATH" in out[0][ui.c["tn_out"]] and "Not launched" in out[0][ui.c["tn_out"]]
    assert started == []
    assert services.parse_ks("4, 1,2,2") == ([1, 2, 4], None)
    assert services.parse_ks(",".join(["1"] * 17))[1] == "k values: at most 16"


def test_target_step_shows_both_models_for_a_speculators_checkpoint():
    """Issue #25 item 1: a speculators checkpoint given as the model shows the verifier vLLM serves
    as the target and the checkpoint as the drafter (vLLM's maybe_override_with_speculators)."""
    from wizard.ui import services
    from wizard.ui.state import new_state, set_field
    from wizard.ui.steps.target import speculators_md

    spec = "RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3"
    ev = services.evaluate(set_field(new_state("0.32.0"), "model", spec))
    md = speculators_md(ev.ctx)
    assert "speculators checkpoint" in md and "`meta-llama/Llama-3.1-8B-Instruct`" in md and "method eagle3" in md
    target, drafter = md.split("**Drafter (the checkpoint)**")
    assert "**Target (verifier)**" in target and "| layers | 32 |" in target and "LlamaForCausalLM" in target
    assert "| layers | 1 |" in drafter and "Eagle3Speculator" in drafter
    # a plain target: no second table
    assert speculators_md(services.evaluate(set_field(new_state("0.32.0"), "model", "Qwen/Qwen3-8B")).ctx) == ""
    assert speculators_md(None) == ""


def test_ui_plan_step_shows_no_best_k_when_it_does_not_fit():
    from wizard.ui import build_app
    from wizard.ui.steps import plan as plan_step  # trial defect A: the UI renders the core's withheld k

    ui = build_app().wizard_ui
    st = new_state()
    for key, val in (("model", "meta-llama/Llama-3.1-8B-Instruct"), ("speculative_config.method", "eagle3"),
                     ("speculative_config.model", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"),
                     ("speculative_config.num_speculative_tokens", 3), ("gpu.name", "L4")):
        st = set_field(st, key, val)
    md = plan_step.compute_safe(ui, st)[ui.c["plan_md"]]
    assert "No k recommended: the configuration does not fit" in md and "hypothetical" in md
    assert "best k per batch size" not in md and "is best at every concurrency" not in md
    assert "k schedule" not in md and "best k by the estimate" not in md


def test_other_options_refuse_modelled_fields_and_nulls():
    """The "Other options" box may not repeat an option the form models (the export would give
    vLLM both, the last wins) nor carry null (exported as the text None): the box text is kept
    raw and the panel says why (trial 2026-12-04, N3)."""
    from wizard.ui.steps.review import _set_extra_args, extra_args_problem

    st = {"config": {"model": "m", "extra_args": {"port": 8001}}, "raw": {}}
    for text, word in (('{"speculative_config": "{\\"method\\":\\"eagle3\\"}"}', "own field"),
                       ('{"enable_prefix_caching": null}', "own field"), ('{"max_logprobs2": null}', "null")):
        out = _set_extra_args(st, text)
        assert out["config"]["extra_args"] == {"port": 8001} and out["raw"]["extra_args"] == text
        assert word in extra_args_problem(text)
    assert _set_extra_args(st, '{"port": 9000}')["config"]["extra_args"] == {"port": 9000}
