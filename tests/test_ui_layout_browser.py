"""Layout in a real browser at 1280 and 1920 px: screenshots of every step under
artifacts/screenshots/, and element boxes measured: no truncated label, no button outside its
card, the tab row fits, the header (title, preset, import) is short, the Live check sticks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ui_helpers import (assert_no_traceback, browser, choose, handler_log, open_wizard, seq, serve_app, shot, tab,
                        type_text, wait_seq_above)

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not shutil.which("chromium") and not Path("/usr/bin/chromium").exists(),
                                 reason="Debian chromium not installed")]

STEPS = ("hardware", "target", "speculation", "kv", "plan", "review", "launch")
SEED = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
        "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}' "
        "--kv-sharing-fast-prefill --gpu-memory-utilization 0.92")
#: header height before the first step: issue 14 asks for less than half of the 370 px it was
HEADER_MAX_PX = 185

#: visible labels and buttons whose text is cut (content wider than the box), buttons outside
#: their finding card, and whether the tab row overflows
MEASURE_JS = """() => {
  const vis = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 &&
                      getComputedStyle(el).visibility !== 'hidden'; };
  const cut = [];
  for (const el of document.querySelectorAll('[data-testid=block-info], label span, button')) {
    if (!vis(el) || el.closest('[role=tablist]') || el.closest('.sw-hidden-measure')) continue;
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible') {
      cut.push((el.innerText || el.getAttribute('aria-label') || el.tagName).slice(0, 60));
    }
  }
  const outside = [];
  for (const b of document.querySelectorAll('.sw-card button')) {
    if (!vis(b)) continue;
    const c = b.closest('.sw-card').getBoundingClientRect(), r = b.getBoundingClientRect();
    if (r.left < c.left - 1 || r.right > c.right + 1) outside.push(b.innerText.slice(0, 60));
  }
  const wide = [];
  for (const b of document.querySelectorAll('button')) {
    if (vis(b) && b.getBoundingClientRect().right > document.documentElement.clientWidth + 1) wide.push(b.innerText.slice(0, 40));
  }
  const tl = document.querySelector('#sw-tabs [role=tablist]');
  const tabs = [...document.querySelectorAll('#sw-tabs [role=tab]')].filter(vis).length;
  const tabsTop = document.querySelector('#sw-tabs').getBoundingClientRect().top + window.scrollY;
  const side = document.querySelector('#sw-sidebar');
  return {cut, outside, wide, tabs, tabsOverflow: tl ? tl.scrollWidth > tl.clientWidth + 1 : true, tabsTop,
          sticky: side ? getComputedStyle(side).position : null};
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


@pytest.mark.parametrize("width", [1280, 1920])
def test_every_step_fits_at_desktop_widths(app_url, tmp_path, width):
    with browser(tmp_path / "profile") as ctx:
        page = open_wizard(ctx, app_url)
        page.set_viewport_size({"width": width, "height": 1000})
        page.wait_for_timeout(300)
        first = page.evaluate(MEASURE_JS)
        assert first["tabsTop"] < HEADER_MAX_PX, first["tabsTop"]  # title, preset and import row are short
        page.locator("#sw-import-acc").click()
        type_text(page, "#sw-import-cmd textarea", SEED)
        n = seq(page)
        page.locator("#sw-import-btn").click()
        wait_seq_above(page, n)
        page.locator("#sw-import-acc").click()  # closed again
        tab(page, "hardware")
        choose(page, "f-gpu-name", "H100-SXM")
        problems = {}
        for step in STEPS:
            tab(page, step)
            if step == "plan":
                page.wait_for_function("() => !document.querySelector('#sw-plan-md').innerText.includes('Open this step')",
                                       timeout=30000)
                page.wait_for_timeout(800)
            shot(page, f"step-{step}-{width}")
            m = page.evaluate(MEASURE_JS)
            bad = {k: m[k] for k in ("cut", "outside", "wide") if m[k]}
            if m["tabsOverflow"] or m["tabs"] != len(STEPS):
                bad["tabs"] = (m["tabs"], m["tabsOverflow"])
            if bad:
                problems[step] = bad
        assert not problems, problems
        assert m["sticky"] == "sticky"  # the Live check panel stays in view on desktop
        assert page.locator(".sw-card").count() >= 1  # the measured page had finding cards with Apply buttons
