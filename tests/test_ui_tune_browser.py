"""A full Tune sweep from the Launch step in a real browser (Debian chromium + Playwright) against
REAL vLLM (CPU build) with the tiny random Llama: n-gram, k in {1, 2} plus the no-speculation
baseline (three server starts, one at a time), a few requests each.

Waits on events only (the results table appearing, the Plan step's field filling); the caps are
safety nets for a loaded 2-core machine. Every server the sweep starts is recorded and checked
stopped, also when the test fails half-way (later starts are then refused).
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from ui_helpers import (assert_no_traceback, browser, handler_log, import_command, open_wizard, serve_app, shot, tab,
                        type_text)
from wizard.launch.errors import LaunchError
from wizard.vllm.versions import installed_vllm

pytestmark = [
    pytest.mark.browser,
    pytest.mark.vllm,
    pytest.mark.slow,
    pytest.mark.skipif(not shutil.which("chromium") and not Path("/usr/bin/chromium").exists(),
                       reason="Debian chromium not installed"),
    pytest.mark.skipif(installed_vllm() is None, reason="vLLM (CPU build) not installed"),
    pytest.mark.timeout(7200),
]

#: safety cap for the whole sweep (ms): three CPU server starts (~40 s each unloaded) + benchmarks
SWEEP_CAP_MS = 3_600_000


@pytest.fixture
def recorded_launches(monkeypatch):
    """Every server handle `wizard tune` starts; on teardown later starts are refused and every
    recorded server is stopped (a failed test leaves nothing running)."""
    import wizard.launch.tune as tune_mod

    real = tune_mod.launch
    handles: list = []
    closed = threading.Event()

    def recording(*args, **kwargs):
        if closed.is_set():
            raise LaunchError("test finished: no more servers")
        h = real(*args, **kwargs)
        handles.append(h)
        return h

    monkeypatch.setattr(tune_mod, "launch", recording)
    yield handles
    closed.set()
    for h in list(handles):
        h.stop()
        h.wait(timeout=300)


def test_tune_sweep_from_the_launch_step(tmp_path, capfd, recorded_launches):
    pytest.importorskip("vllm")
    from factory import make_tiny_llama

    model = make_tiny_llama(tmp_path / "tiny")
    with handler_log() as records, serve_app(allow_model_dirs=[str(tmp_path)]) as (_demo, url), \
            browser(tmp_path / "profile") as ctx:
        page = open_wizard(ctx, url)
        import_command(page, f"vllm serve {model} --enforce-eager --max-model-len 512 --speculative-config "
                       "'{\"method\":\"ngram\",\"num_speculative_tokens\":2,\"prompt_lookup_min\":1,\"prompt_lookup_max\":4}'")

        tab(page, "launch")
        page.locator("#sw-ln-force input[type=checkbox]").check()  # CPU: hardware rules may warn; run anyway
        page.locator("#sw-tune-acc").click()
        type_text(page, "#sw-tune-ks textarea, #sw-tune-ks input", "1,2")
        type_text(page, "#sw-tune-conc textarea, #sw-tune-conc input", "2")
        type_text(page, "#sw-tune-prompts input", "4")
        page.locator("#sw-tune-run").click()

        # progress first, then the results table (or a failure message, which fails the test below)
        page.wait_for_function("() => document.querySelector('#sw-tune-out').innerText.includes('Sweep running')")
        page.wait_for_function(
            "() => { const o = document.querySelector('#sw-tune-out');"
            " return o.querySelector('table') || o.innerText.includes('Tune failed'); }",
            timeout=SWEEP_CAP_MS)
        out = page.locator("#sw-tune-out")
        assert out.locator("table").count() == 1, out.inner_text()
        shot(page, "launch-tune-table")
        rows = out.locator("table tbody tr")
        firsts = [rows.nth(i).locator("td").first.inner_text().strip() for i in range(rows.count())]
        assert firsts == ["baseline", "1", "2"], out.inner_text()
        for i in range(rows.count()):
            tokens_per_s = rows.nth(i).locator("td").nth(1).inner_text().strip()
            assert float(tokens_per_s) > 0, out.inner_text()
        head = out.inner_text()
        assert "Recommended k = " in head or "No k recommended" in head
        page.wait_for_selector("#sw-tune-chart img", timeout=120000)

        # three servers started, one at a time, each stopped by the sweep itself
        assert len(recorded_launches) == 3
        for h in recorded_launches:
            h.wait(timeout=300)
            assert h.remaining_processes() == []

        if "Recommended k = " in head:  # the measured acceptance feeds the Plan step
            tab(page, "plan")
            page.wait_for_function(
                "() => ((document.querySelector('#f-acceptance textarea, #f-acceptance input') || {}).value || '').trim().length > 0",
                timeout=120000)
            page.wait_for_function("() => document.querySelector('#sw-plan-md').innerText.includes('measured by Tune')",
                                   timeout=120000)
            shot(page, "plan-after-tune")
    assert_no_traceback(capfd, records)
