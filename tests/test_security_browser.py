"""Issue 10, item 1 end to end: an uploaded sitecustomize.py never runs through Launch.

The real sequence of the report: upload ``sitecustomize.py`` through Gradio's upload endpoint
(real HTTP), import ``PYTHONPATH=<its upload folder> vllm serve <tiny local llama>`` through
the UI (Chromium + Playwright), press Launch. Before the fix the server ran the file (it writes
a marker). Now the Launch step refuses, naming PYTHONPATH, even with "launch even with error
findings" ticked; after the finding's fix (drop PYTHONPATH) the same configuration starts real
vLLM (CPU build) and the file still never ran.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import json

import pytest

from ui_helpers import browser, import_command, open_wizard, seq, serve_app, shot, tab, wait_seq_above

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not shutil.which("chromium") and not Path("/usr/bin/chromium").exists(),
                                 reason="Debian chromium not installed")]


@pytest.mark.vllm
@pytest.mark.slow
def test_uploaded_sitecustomize_never_runs(tmp_path):
    pytest.importorskip("vllm")
    from factory import make_tiny_llama

    from wizard.ui.steps.launch import HANDLES

    models = tmp_path / "models"
    model = make_tiny_llama(models / "tiny")
    marker = tmp_path / "SITECUSTOMIZE-RAN"
    payload = f"open({str(marker)!r}, 'w').write('ran')\n".encode()
    with serve_app(allow_model_dirs=[str(models)]) as (demo, url):
        # 1. real HTTP upload: Gradio stores any file, whatever the components accept
        r = httpx.post(url + "gradio_api/upload", files=[("files", ("sitecustomize.py", payload))], timeout=300,
                       trust_env=False)
        assert r.status_code == 200, r.text
        uploaded = Path(r.json()[0])
        assert uploaded.name == "sitecustomize.py" and uploaded.read_bytes() == payload
        folder = uploaded.parent
        with browser(tmp_path / "profile") as ctx:
            page = open_wizard(ctx, url)
            # 2. import the command through the UI
            import_command(page, f"PYTHONPATH={folder} vllm serve {model} --enforce-eager --max-model-len 256")
            card = page.locator(".sw-slot:visible:has([data-rule=SD600])")
            card.wait_for(timeout=120000)
            assert "PYTHONPATH" in card.inner_text()
            # 3. Launch, even with "launch even with error findings" ticked
            tab(page, "launch")
            page.locator("#sw-ln-force input[type=checkbox]").check()
            page.locator("#sw-ln-launch").click()
            page.wait_for_selector("#sw-ln-status [data-state=refused], #sw-ln-status [data-state=starting], "
                                   "#sw-ln-status [data-state=healthy]", timeout=60000)
            if not page.locator("#sw-ln-status [data-state=refused]").count():  # it started: let Python run
                page.wait_for_selector("#sw-ln-status [data-state=healthy], #sw-ln-status [data-state=failed], "
                                       "#sw-ln-status [data-state=exited]", timeout=300000)
            shot(page, "security-sitecustomize-refused")
            assert not marker.exists(), "the uploaded sitecustomize.py ran in the launched server"
            status = page.locator("#sw-ln-status").inner_text()
            assert "PYTHONPATH" in status and "Not launched" in status
            assert "PYTHONPATH" in page.locator("#sw-ln-review").inner_text()
            assert not HANDLES or all(h.plan.env.get("PYTHONPATH") != str(folder) for h in HANDLES.values())
            # 4. the finding's fix drops the variable; the same configuration now runs real vLLM
            n = seq(page)
            card.locator("button", has_text="Drop PYTHONPATH").click()
            wait_seq_above(page, n)
            page.wait_for_function("() => !document.querySelector('.sw-slot:not([style*=none]) [data-rule=SD600]')")
            page.locator("#sw-ln-launch").click()
            try:
                page.wait_for_selector("#sw-ln-status [data-state=healthy]", timeout=300000)
                assert not marker.exists(), "the uploaded sitecustomize.py ran in the launched server"
                (h,) = [h for h in HANDLES.values() if h.state == "healthy"]
                assert h.plan.env.get("PYTHONPATH") != str(folder) and str(folder) not in " ".join(h.plan.argv)
                shot(page, "security-launched-without-pythonpath")
            finally:
                page.locator("#sw-ln-stop").click()
                page.wait_for_selector("#sw-ln-status [data-state=stopped], #sw-ln-status [data-state=exited]",
                                       timeout=120000)
            for h in list(HANDLES.values()):
                h.wait(timeout=300)
                assert h.remaining_processes() == []
    assert not marker.exists()


SPELLINGS = ["--api-key {s}", "--api-k {s}", "--api_key={s}", "--api-key {s} --api-key {s}2", "--api-key {s} {s}3",
             "--hf-tok {s}", "--hf-token={s}"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_browser_storage_never_holds_a_typed_credential(tmp_path, spelling):
    """The wizard's browser copy holds credentials as ``$VAR`` references; Gradio 6's run history
    (every event's raw inputs and outputs in localStorage) would hold the token itself, so the
    wizard launches with ``run_history=False``. After an import, edits and the pause that saves
    the browser copy, no localStorage or sessionStorage value, no decrypted saved state (import
    notes included) and no text on the page holds the secret, in any spelling vLLM's parser
    accepts (abbreviations, ``=``, repeated, several keys)."""
    from ui_helpers import wait_saved

    secret = "sk-specwizard-test-9f3a7c"
    with serve_app() as (demo, url), browser(tmp_path / "profile") as ctx:
        page = open_wizard(ctx, url)
        import_command(page, "vllm serve meta-llama/Llama-3.1-8B-Instruct " + spelling.format(s=secret)
                       + " --max-model-len 4096")
        tab(page, "kv")
        n = seq(page)
        page.locator("#f-enforce_eager input[type=checkbox]").click()
        wait_seq_above(page, n)
        wait_saved(page, lambda st: st.get("config", {}).get("enforce_eager") is True)
        stored = page.evaluate("() => [localStorage, sessionStorage].flatMap(s => Object.keys(s).map(k => [k, s.getItem(k)]))")
        assert stored, "the wizard's browser copy was saved"
        assert not [k for k, _ in stored if k.startswith("gradio:run-history")]
        assert not [k for k, v in stored if secret in k or secret in (v or "")]
        saved = wait_saved(page, lambda st: True)
        assert secret not in json.dumps(saved), spelling
        tab(page, "review")
        # everything shown (exports, notes, the launch review, findings) but the user's own edit box
        shown = page.evaluate("() => { const c = document.body.cloneNode(true); "
                              "c.querySelectorAll('#f-extra_args').forEach(e => e.remove()); return c.innerHTML; }")
        i = shown.find(secret)
        import re as _re
        ids = _re.findall(r'id="([\w-]+)"', shown[:i]) if i >= 0 else []
        assert i < 0, (spelling, ids[-8:])
        tab(page, "launch")
        shown = page.evaluate("() => document.body.innerHTML")
        assert secret not in shown.replace(page.evaluate(
            "() => (document.querySelector('#f-extra_args') || {innerHTML: ''}).innerHTML"), ""), spelling
