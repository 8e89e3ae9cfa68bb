"""The defects a new user met in the wizard (Chromium + Playwright), one test each: a stale panel
after deleting characters, wrong group counts, importing on every keystroke, handlers that
raise, free text in the Catalog list, an unknown vLLM version. After every test the server log
holds no traceback and no handler failed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ui_helpers import (assert_no_traceback, browser, choose, fill, handler_log, open_wizard, seq, serve_app, shot, tab,
                        type_text, wait_seq_above)

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not shutil.which("chromium") and not Path("/usr/bin/chromium").exists(),
                                 reason="Debian chromium not installed")]

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
SEED = (f"vllm serve {LLAMA} --speculative-config "
        "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}' "
        "--kv-sharing-fast-prefill")
#: every severity group's count equals the cards under it (all cards shown: fewer than MAX_CARDS)
GROUPS_JS = """() => {
  const out = [];
  let cur = null;
  for (const el of document.querySelector('#sw-summary').querySelectorAll('.sw-group, .sw-slot')) {
    if (el.classList.contains('sw-group')) { cur = {label: el.innerText, count: +el.dataset.count, cards: 0}; out.push(cur); }
    else if (cur) cur.cards += 1;
  }
  return out;
}"""


@pytest.fixture(scope="module")
def app_url():
    with serve_app() as (demo, url):
        yield url


@pytest.fixture(autouse=True)
def server_log_clean(capfd):
    with handler_log() as records:
        yield
    assert_no_traceback(capfd, records)


@pytest.fixture
def page(app_url, tmp_path):
    with browser(tmp_path / "profile") as ctx:
        yield open_wizard(ctx, app_url)


def panel_text(page) -> str:
    return page.locator("#sw-summary").inner_text()


def no_error_badges(page) -> None:
    assert page.locator(".toast-body, .error").filter(has_text="Error").count() == 0


def do_import(page, command: str) -> None:
    page.locator("#sw-import-acc").click()
    page.wait_for_selector("#sw-import-cmd textarea", state="visible")
    type_text(page, "#sw-import-cmd textarea", command)
    n = seq(page)
    page.locator("#sw-import-btn").click()
    wait_seq_above(page, n)


def test_deleting_characters_rechecks_without_leaving_the_box(page):
    """Defect 1: Backspace (no ``input`` event in Gradio 6.31) re-checks while the box has focus."""
    tab(page, "target")
    fill(page, "f-model", LLAMA + "-x")
    page.wait_for_function("() => document.querySelector('#sw-summary').innerText.includes('SD009')")
    box = page.locator("#f-model textarea, #f-model input").first
    n = seq(page)
    box.press("Backspace")
    box.press("Backspace")
    wait_seq_above(page, n)
    page.wait_for_function("() => !document.querySelector('#sw-summary').innerText.includes('SD009')")
    assert box.input_value() == LLAMA
    assert page.evaluate("() => document.activeElement.closest('#f-model') !== null")  # never left the box
    page.wait_for_function("() => document.querySelector('#sw-target-facts').innerText.includes('LlamaForCausalLM')")
    # a cut (select all, delete) re-checks too
    n = seq(page)
    box.press("Control+a")
    box.press("Delete")
    wait_seq_above(page, n)
    page.wait_for_function("() => document.querySelector('#sw-summary-inner').dataset.verdict === 'none'")


def test_group_counts_match_their_cards(page):
    """Defect 2: each severity group is headed by the number of cards under it, as they change."""
    do_import(page, SEED)
    seen = set()
    for value in ("5", "0.9", "5"):
        tab(page, "kv")
        fill(page, "f-gpu_memory_utilization", value)
        page.wait_for_function(
            "v => document.querySelector('#sw-summary').innerText.includes('SD011') === (v === '5')", arg=value)
        groups = page.evaluate(GROUPS_JS)
        assert groups and all(g["count"] == g["cards"] for g in groups), groups
        assert all(f"({g['count']})" in g["label"] for g in groups), groups
        seen.add(next(g["count"] for g in groups if g["label"].lower().startswith("error")))
    assert seen == {1, 2}
    shot(page, "defect-group-counts")


def test_import_only_on_button_or_enter(page):
    """Defect 3: typing a command never replaces the configuration; the button or Enter does."""
    tab(page, "target")
    fill(page, "f-model", LLAMA)
    page.locator("#sw-import-acc").click()
    box = page.locator("#sw-import-cmd textarea")
    box.wait_for(state="visible")
    n = seq(page)
    box.press_sequentially("vllm serve Qwen/Qwen3-8B --max-model-len 4", delay=10)
    page.wait_for_timeout(1500)
    assert seq(page) == n  # no check ran: nothing was imported
    assert page.locator("#f-model textarea, #f-model input").first.input_value() == LLAMA
    box.press("Enter")
    wait_seq_above(page, n)
    page.wait_for_function("() => document.querySelector('#sw-import-status').innerText.includes('imported')")
    assert page.locator("#f-model textarea, #f-model input").first.input_value() == "Qwen/Qwen3-8B"
    # and Undo brings the configuration the import replaced back
    n = seq(page)
    page.locator("#sw-undo").click()
    wait_seq_above(page, n)
    page.wait_for_function(f"() => document.querySelector('#f-model textarea, #f-model input').value === '{LLAMA}'")


def test_stop_without_server_and_cleared_dropdowns_do_not_raise(page):
    """Defect 4: Stop with no server, clearing the Catalog or the preset dropdown: no Error badge,
    no traceback (checked by the fixture)."""
    tab(page, "launch")
    page.locator("#sw-ln-stop").click()
    page.wait_for_function("() => document.querySelector('#sw-ln-status').innerText.includes('No server')")
    no_error_badges(page)
    pre = page.locator("#sw-preset input").first
    pre.click()
    opt = page.locator("[role=option]").first
    opt.wait_for()
    n = seq(page)
    opt.click()
    wait_seq_above(page, n)
    pre.click()
    pre.press("Control+a")
    pre.press("Backspace")
    pre.press("Tab")
    page.wait_for_timeout(800)
    no_error_badges(page)
    tab(page, "target")
    choose(page, "sw-target-catalog", LLAMA)
    inp = page.locator("#sw-target-catalog input").first
    inp.click()
    inp.press("Control+a")
    inp.press("Backspace")
    inp.press("Tab")
    page.wait_for_timeout(800)
    no_error_badges(page)
    assert page.locator("#f-model textarea, #f-model input").first.input_value() == LLAMA  # nothing lost


def test_free_text_in_catalog_offers_closest_ids(page):
    """Defect 5: free text typed in the Catalog list does not become the model; the closest
    catalog ids are offered, and model-not-found points at the Catalog list, not a CLI command."""
    tab(page, "target")
    fill(page, "f-model", LLAMA)
    inp = page.locator("#sw-target-catalog input").first
    inp.click()
    inp.fill("llama-3.1-8b")
    inp.press("Enter")
    page.wait_for_function("() => document.querySelector('#sw-catalog-note').innerText.includes('not a catalog id')")
    note = page.locator("#sw-catalog-note").inner_text()
    assert LLAMA in note and "Closest" in note
    assert page.locator("#f-model textarea, #f-model input").first.input_value() == LLAMA
    fill(page, "f-model", "no-such/model-here")
    page.wait_for_function("() => document.querySelector('#sw-summary').innerText.includes('SD009')")
    text = panel_text(page)
    assert "python -m wizard" not in text and "Catalog list" in text
    shot(page, "defect-catalog-free-text")


def test_unknown_vllm_version_is_said_and_known_ones_listed(page):
    """Defect 6: a typed version the rules don't know is not accepted silently; the box lists
    the releases the rules know."""
    from wizard.vllm.versions import known_versions

    tab(page, "hardware")
    assert all(v in page.locator("#f-vllm_version").inner_text() for v in known_versions())
    tab(page, "target")
    fill(page, "f-model", LLAMA)
    tab(page, "hardware")
    choose(page, "f-vllm_version", "0.99.1")
    page.wait_for_function("() => document.querySelector('#sw-summary').innerText.includes('not a release the rules know')")
    assert "0.99.1" in panel_text(page)
