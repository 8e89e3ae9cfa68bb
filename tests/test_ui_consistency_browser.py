"""Issue 23 in Chromium: a k beyond the suggested range stays in the box and reaches the state and
the export (Gradio's slider snapped the box back while the state kept the old k)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ui_helpers import browser, open_wizard, seq, serve_app, tab, wait_seq_above

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not shutil.which("chromium") and not Path("/usr/bin/chromium").exists(),
                                 reason="Debian chromium not installed")]


def test_k_above_the_mtp_range_stays_typed(tmp_path):
    with serve_app() as (demo, url), browser(tmp_path) as ctx:
        page = open_wizard(ctx, url)
        n = seq(page)
        page.locator("#sw-preset input").first.click()
        page.locator("[role=option]", has_text="MiMo-7B-RL").first.click()
        wait_seq_above(page, n)
        tab(page, "speculation")
        box = page.locator("#f-speculative_config-num_speculative_tokens input").first
        box.wait_for(state="visible")
        n = seq(page)
        box.fill("8")
        box.press("Tab")
        wait_seq_above(page, n)
        page.wait_for_timeout(1500)  # the sync after the pause: notes and exports
        assert box.input_value() == "8"
        ui = demo.wizard_ui
        states = [s for s in ui._latest.values()]
        assert states and states[-1]["config"]["speculative_config"]["num_speculative_tokens"] == 8
        page.wait_for_function("() => document.querySelector('#sw-method-md').innerText.includes('k = 8')", timeout=30000)
        tab(page, "review")
        page.wait_for_function("() => [...document.querySelectorAll('textarea')].some(t => "
                               "t.value.includes('\"num_speculative_tokens\": 8') || t.value.includes('\"num_speculative_tokens\":8'))",
                               timeout=30000)
