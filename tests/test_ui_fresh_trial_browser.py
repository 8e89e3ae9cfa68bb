"""Fresh-user trial, in Chromium (the handler-level checks are tests/test_ui_fresh_trial.py):

C. text is escaped once on the page: the Launch step's list of options that need the opt-in shows
   ``--kv-events-config {"endpoint": ...}`` (it showed ``{&quot;endpoint&quot;: ...}``), and the
   Other options note quotes broken JSON with its quotes;
A. the Launch preview follows an import made while the Launch tab is open.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

pytestmark = pytest.mark.browser

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
JSON_CMD = (f"vllm serve {LLAMA} --kv-events-config '{{\"endpoint\": \"tcp://*:5557\"}}' "
            "--kv-transfer-config '{\"kv_connector\": \"X\", \"kv_role\": \"kv_both\"}'")


def test_text_is_escaped_once_and_the_launch_preview_follows_an_import(tmp_path):
    from ui_helpers import browser, handler_log, import_command, open_wizard, serve_app, shot, tab

    with handler_log() as records, serve_app() as (_demo, url), browser(tmp_path) as ctx:
        page = open_wizard(ctx, url)
        import_command(page, JSON_CMD)
        tab(page, "launch")
        review = page.locator("#sw-ln-review")
        page.wait_for_function("() => document.querySelector('#sw-ln-review').innerText.includes('opt-in')")
        text = review.inner_text()
        assert '--kv-events-config {"endpoint": ...}' in text, text[-1500:]
        assert '--kv-transfer-config {"kv_connector": ...}' in text
        assert "&quot;" not in text and "&amp;" not in text
        assert not review.locator("img").count()

        # A: an import while the Launch tab is open: the preview follows (after the pause's sync)
        if page.locator("#sw-import-cmd textarea").is_visible():  # the row is open: Import… would close it
            page.locator("#sw-import-acc").click()
        import_command(page, f"vllm serve {LLAMA} --max-num-seqs 6")
        page.wait_for_function("() => document.querySelector('#sw-ln-review').innerText.includes('--max-num-seqs 6')",
                               timeout=30000)
        assert "kv-events-config" not in review.inner_text()

        # C: the Other options note quotes the broken text as typed
        tab(page, "review")
        editor = page.locator("#f-extra_args .cm-content").first
        editor.click()
        page.keyboard.press("Control+A")
        page.keyboard.type('{"max_num_seqs": 4,')
        page.wait_for_function("() => (document.querySelector('#sw-extra-note') || {innerText: ''})"
                               ".innerText.includes('does not hold a JSON object')", timeout=30000)
        note = page.locator("#sw-extra-note").inner_text()
        assert '{"max_num_seqs": 4,' in note and "&quot;" not in note, note
        shot(page, "fresh-trial-escaped-once")
    assert not [r.getMessage() for r in records if r.exc_info or r.name == "wizard.ui"]
