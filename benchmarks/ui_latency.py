"""Time from a user's key press or click in the browser to the re-rendered findings panel.

    python benchmarks/ui_latency.py [--rounds 1]

Serves the wizard in-process on a free loopback port and drives Debian chromium (Playwright).
Starting from Llama-3.1-8B-Instruct + EAGLE-3 on one H100 (hardware checks on), it measures,
in the page, from the ``keydown``/``click`` event to the panel showing the new check
(``data-seq`` of ``#sw-summary-inner`` changing), three kinds of change across every step:

* typing: digits and Backspace in text fields of steps 1-4 (TP, max_model_len, draft TP,
  n-gram lookup, gpu_memory_utilization, max_num_seqs, max_num_batched_tokens, block_size);
* dropdown: picks in GPU, vLLM version, dtype, method, drafter, KV dtypes, prefix caching;
* checkbox: kv_sharing_fast_prefill and enforce_eager (step 4).

Prints one line per kind: ``kind: p50 X ms, p95 Y ms, max Z ms (n=N)`` (goal: typing p95 <
150 ms, dropdown p95 < 300 ms, checkbox p95 < 100 ms), then the server's share (check + render)
and the number of components each kind of event updates.

It also clicks one checkbox 8 times, 1 s apart, before and after the typing/dropdown passes: a
cost that grows with use shows as a difference. Gradio 6's run history did that (every event's
inputs and outputs kept in localStorage, ~1 MB after these passes, re-read and re-written two or
three times per event: the click went from ~120 to ~600 ms); the wizard launches with
``run_history=False``, and so does the bare app here.

What cut the dropdown's cost (issue 23): the sync that follows a pause (session file, browser
copy, exports) landed in the middle of the next pick and doubled it, so it now waits for a pause
in key and pointer presses too (wizard.ui.theme.PANEL_JS); outputs whose value the tab already
shows are skipped (wizard.ui.delta); a pick's duplicate input event (Gradio 6.31 sends two per
pick) waits for the first and finds nothing to do; the Review exports are computed only while
Review is on screen. ``--per-field`` prints each dropdown's figures.

The same run also measures Gradio's own floor on this machine: a bare Blocks app (one textbox,
dropdown and checkbox, each answered by one HTML update with no work, the same event options)
driven by the same clicks and keys. On a shared, loaded machine absolute figures move with the
load; the ratio wizard / bare app in one run says what the wizard itself adds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from _common import pct, test_env_defaults  # noqa: E402  (sets sys.path)

GOALS = {"typing": 150.0, "dropdown": 300.0, "checkbox": 100.0}

ARM_JS = """
() => {
  window.__swT0 = null; window.__swT1 = null;
  const before = document.querySelector('#sw-summary-inner').dataset.seq;
  const mark = () => { if (window.__swT0 === null) window.__swT0 = performance.now(); };
  document.addEventListener('keydown', mark, {capture: true, once: true});
  document.addEventListener('mousedown', mark, {capture: true, once: true});
  document.addEventListener('click', mark, {capture: true, once: true});
  const panel = document.querySelector('#sw-summary');
  const obs = new MutationObserver(() => {
    const e = document.querySelector('#sw-summary-inner');
    if (e && e.dataset.seq !== before) { window.__swT1 = performance.now(); obs.disconnect(); }
  });
  obs.observe(panel, {subtree: true, childList: true, attributes: true});
}
"""
DONE_JS = "() => window.__swT1 !== null && window.__swT0 !== null"
READ_JS = "() => window.__swT1 - window.__swT0"


def measure(page, action) -> float:
    """ms from the user's key/click event to the findings panel showing the new check."""
    page.evaluate(ARM_JS)
    action()
    page.wait_for_function(DONE_JS, timeout=20000)
    return float(page.evaluate(READ_JS))


def typing(page, tab, samples: list[float], server: list[float], ui) -> None:
    fields = [("hardware", "f-tensor_parallel_size"), ("target", "f-max_model_len"),
              ("speculation", "f-speculative_config-draft_tensor_parallel_size"),
              ("kv", "f-gpu_memory_utilization"), ("kv", "f-max_num_seqs"), ("kv", "f-max_num_batched_tokens"),
              ("kv", "f-block_size")]
    keys = ["1", "6", "Backspace", "Backspace", "2", "Backspace"]
    for step, elem in fields:
        tab(page, step)
        box = page.locator(f"#{elem} textarea, #{elem} input").first
        box.click()
        box.press("Control+a")
        box.press("Delete")
        page.wait_for_timeout(300)
        for k in keys:
            samples.append(measure(page, lambda: box.press(k)))
            server.append(ui.last_timing_ms)
            page.wait_for_timeout(120)


#: per dropdown: its samples (printed with --per-field: which pick costs what)
PER_FIELD: dict[str, list[float]] = {}


def _pick(page, elem: str, text: str, samples: list[float], server: list[float], ui) -> None:
    inp = page.locator(f"#{elem} input").first
    inp.click()
    opt = page.locator("[role=option]", has_text=text).first
    opt.wait_for(timeout=10000)
    page.wait_for_timeout(80)
    samples.append(measure(page, lambda: opt.click()))
    PER_FIELD.setdefault(elem, []).append(samples[-1])
    server.append(ui.last_timing_ms)
    page.wait_for_timeout(150)


def dropdowns(page, tab, samples: list[float], server: list[float], ui) -> None:
    plan = [("hardware", "f-gpu-name", ["A100-80GB", "H100-SXM"]),
            ("hardware", "f-vllm_version", ["0.33.0", "0.32.0"]),
            ("target", "f-dtype", ["float32", "bfloat16"]),
            ("speculation", "f-speculative_config-method", ["ngram", "eagle3"]),
            ("speculation", "f-speculative_config-model", ["RedHatAI", "yuhuili/EAGLE3"]),
            ("kv", "f-kv_cache_dtype", ["fp8_e5m2", "auto"]),
            ("kv", "f-speculative_config-kv_cache_dtype", ["bfloat16", "inherit"]),
            ("kv", "f-enable_prefix_caching", ["false", "(default)"])]
    for step, elem, values in plan:
        tab(page, step)
        for v in values * 2:  # there and back, twice: 32 samples over 8 dropdowns
            _pick(page, elem, v, samples, server, ui)


def checkboxes(page, tab, samples: list[float], server: list[float], ui, n: int) -> None:
    tab(page, "kv")
    for i in range(n):
        elem = "f-kv_sharing_fast_prefill" if i % 4 < 2 else "f-enforce_eager"
        cb = page.locator(f"#{elem} input[type=checkbox]")
        samples.append(measure(page, lambda: cb.click()))
        server.append(ui.last_timing_ms)
        page.wait_for_timeout(150)


def spaced_clicks(page, tab, n: int = 8) -> list[float]:
    """``n`` clicks of one checkbox, 1 s apart (no overlap with the sync that follows a pause)."""
    tab(page, "kv")
    cb = page.locator("#f-enforce_eager input[type=checkbox]")
    xs = []
    for _ in range(n):
        xs.append(measure(page, lambda: cb.click()))
        page.wait_for_timeout(1000)
    return xs


def bare_app():
    """The floor: Gradio with the wizard's event options (QUIET, always_last) and no work."""
    import itertools

    import gradio as gr

    from wizard.ui.core import QUIET

    n = itertools.count(1)

    def answer(_v):
        return f'<div id="sw-summary-inner" data-seq="{next(n)}">ok</div>'

    with gr.Blocks() as demo:
        out = gr.HTML('<div id="sw-summary-inner" data-seq="0">ok</div>', elem_id="sw-summary")
        box = gr.Textbox(elem_id="b-text")
        dd = gr.Dropdown(["alpha", "beta"], value="alpha", elem_id="b-dd")
        cb = gr.Checkbox(elem_id="b-cb")
        box.change(answer, box, out, trigger_mode="always_last", **QUIET)
        dd.input(answer, dd, out, trigger_mode="always_last", **QUIET)
        cb.input(answer, cb, out, trigger_mode="always_last", **QUIET)
    return demo


def measure_bare(ctx, kinds: dict[str, list[float]], rounds: int) -> None:
    from ui_helpers import free_port

    demo = bare_app()
    port = free_port()
    demo.launch(server_port=port, prevent_thread_lock=True, quiet=True, _frontend=False, run_history=False)
    try:
        page = ctx.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("#sw-summary-inner")
        box = page.locator("#b-text textarea, #b-text input").first
        box.click()
        for i in range(42 * rounds + 6):
            x = measure(page, lambda: box.press(["1", "6", "Backspace", "Backspace", "2", "Backspace"][i % 6]))
            if i >= 6:
                kinds["typing"].append(x)
            page.wait_for_timeout(120)
        inp = page.locator("#b-dd input").first
        for i in range(32 * rounds):
            inp.click()
            opt = page.locator("[role=option]", has_text=["beta", "alpha"][i % 2]).first
            opt.wait_for(timeout=10000)
            page.wait_for_timeout(80)
            kinds["dropdown"].append(measure(page, lambda: opt.click()))
            page.wait_for_timeout(150)
        cb = page.locator("#b-cb input[type=checkbox]")
        for _ in range(32 * rounds):
            kinds["checkbox"].append(measure(page, lambda: cb.click()))
            page.wait_for_timeout(150)
        page.close()
    finally:
        demo.close()


def line(kind: str, xs: list[float]) -> str:
    return f"{kind}: p50 {statistics.median(xs):.0f} ms, p95 {pct(xs, 95):.0f} ms, max {max(xs):.0f} ms (n={len(xs)})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=1, help="repeat every kind this many times")
    ap.add_argument("--per-field", action="store_true", help="also print each dropdown's p50/p95 and outputs")
    args = ap.parse_args()
    test_env_defaults()
    from ui_helpers import browser, choose, fill, open_wizard, serve_app, tab

    kinds: dict[str, list[float]] = {"typing": [], "dropdown": [], "checkbox": []}
    server: dict[str, list[float]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory() as tmp, serve_app() as (demo, url), browser(Path(tmp)) as ctx:
        ui = demo.wizard_ui
        page = open_wizard(ctx, url)
        tab(page, "hardware")
        choose(page, "f-gpu-name", "H100-SXM")
        tab(page, "target")
        fill(page, "f-model", "meta-llama/Llama-3.1-8B-Instruct")
        tab(page, "speculation")
        choose(page, "f-speculative_config-method", "eagle3")
        page.wait_for_timeout(1000)
        # warm-up (first renders of each component, model lookups): not counted
        checkboxes(page, tab, [], [], ui, 4)
        spaced_before = spaced_clicks(page, tab)
        for _ in range(max(1, args.rounds)):
            typing(page, tab, kinds["typing"], server["typing"], ui)
            dropdowns(page, tab, kinds["dropdown"], server["dropdown"], ui)
            checkboxes(page, tab, kinds["checkbox"], server["checkbox"], ui, 32)
        spaced_after = spaced_clicks(page, tab)
        outputs = {
            "typing": len(ui.unique([ui.c["state"], ui.c["panel"]])),
            "dropdown": max(len(ui.unique([ui.c["state"], ui.c["panel"], *[o for r in ui.reactors_for([p]) for o in r.outputs]]))
                            for p in ("gpu.name", "vllm_version", "speculative_config.method", "kv_cache_dtype")),
            "checkbox": len(ui.unique([ui.c["state"], ui.c["panel"], *[o for r in ui.reactors_for(["kv_sharing_fast_prefill"])
                                                                      for o in r.outputs]])),
        }
        bare: dict[str, list[float]] = {k: [] for k in kinds}
        measure_bare(ctx, bare, max(1, args.rounds))
    print("UI latency: key press / click -> findings panel re-rendered (chromium headless, 127.0.0.1, in-page clock)")
    for kind, xs in kinds.items():
        print(line(kind, xs))
    for kind, xs in bare.items():
        print(f"  bare Gradio app, same machine and run: {line(kind, xs)}; wizard / bare p50 "
              f"{statistics.median(kinds[kind]) / statistics.median(xs):.1f}x, p95 {pct(kinds[kind], 95) / pct(xs, 95):.1f}x")
    for kind, xs in server.items():
        print(f"  server share ({kind}): check + render p50 {statistics.median(xs):.1f} ms, p95 {pct(xs, 95):.1f} ms; "
              f"components updated per event: at most {outputs[kind]}")
    print(f"  the same checkbox click, 1 s apart: p50 {statistics.median(spaced_before):.0f} ms before the other fields "
          f"were used, {statistics.median(spaced_after):.0f} ms after every field above was used once (n={len(spaced_after)}: "
          "a cost that grows with use shows here)")
    if args.per_field:
        for elem, xs in PER_FIELD.items():
            print(f"  dropdown {elem}: p50 {statistics.median(xs):.0f} ms, p95 {pct(xs, 95):.0f} ms (n={len(xs)})")
    met = {k: pct(xs, 95) < GOALS[k] for k, xs in kinds.items()}
    print("goal (p95): " + ", ".join(f"{k} < {GOALS[k]:.0f} ms {'met' if ok else 'NOT met'}" for k, ok in met.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
