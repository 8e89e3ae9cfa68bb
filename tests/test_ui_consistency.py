"""Issue 23: the form is always one consistent configuration. Each defect driven through the real
UI over HTTP (``tests/hostile.py`` UiServer: the wizard served in this process, its named
endpoints called in one browser session), asserting the state, the panel and the export agree.
The core decisions (:mod:`wizard.suggest`) are tested beside them."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from wizard import suggest  # noqa: E402

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
LLAMA_EAGLE3 = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
QWEN = "Qwen/Qwen3-8B"


@pytest.fixture(scope="module")
def srv():
    from hostile import UiServer

    s = UiServer()
    try:
        yield s
    finally:
        s.close()


def call(srv, name: str, data: list, sess: str) -> str:
    event, body = srv.call(name, data, session=sess)
    assert event == "complete", (name, event, body[:400])
    return body


def state(srv, sess: str) -> dict:
    st = srv.demo.wizard_ui.newest(sess)
    assert st is not None
    return st


def spec_of(srv, sess: str) -> dict:
    return dict((state(srv, sess).get("config") or {}).get("speculative_config") or {})


def exported_spec(srv, sess: str) -> dict:
    """The speculative config of the Review step's command export (the sync after a pause)."""
    body = call(srv, "secondary", [None], sess)
    data = json.loads(body)
    cmds = [x for x in data if isinstance(x, str) and x.lstrip().startswith("vllm serve")]
    assert cmds, data[:3]
    m = re.search(r"--speculative-config '(\{.*?\})'", cmds[0], re.S)
    return json.loads(m.group(1)) if m else {}


def panel_text(body: str) -> str:
    return re.sub(r"<[^>]+>", " ", body)


# ---- 1. a target change never keeps a drafter trained for another target ----------------------------

def test_core_drafter_fit_decides_by_catalog_family_and_vocab():
    assert suggest.drafter_fit(LLAMA, "eagle3", LLAMA_EAGLE3).fits is True
    fit = suggest.drafter_fit(QWEN, "eagle3", LLAMA_EAGLE3)
    assert fit.fits is False and LLAMA in fit.why and QWEN in fit.why
    assert suggest.drafter_fit(QWEN, "ngram", "AngelSlim/Qwen3-8B_eagle3").fits is False  # ngram reads no model
    assert suggest.drafter_fit(LLAMA, "eagle3", "yuhuili/EAGLE-LLaMA3.1-Instruct-8B").fits is False  # EAGLE-1 head
    assert suggest.drafter_fit(QWEN, "eagle3", "/models/my-own-eagle3").fits is None  # the user's own: unknown, kept
    ch = suggest.spec_for_target({"method": "eagle3", "model": LLAMA_EAGLE3, "num_speculative_tokens": 3}, QWEN)
    assert ch.spec["model"] == suggest.default_drafter(QWEN, "eagle3") and ch.spec["model"] != LLAMA_EAGLE3
    assert LLAMA_EAGLE3 in ch.notes[0] and ch.spec["num_speculative_tokens"] == 3
    # no catalog drafter of the method for the new target: removed, and said
    ch = suggest.spec_for_target({"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B"}, QWEN)
    assert "model" not in ch.spec and "removed" in ch.notes[0]


def test_target_change_replaces_the_llama_drafter(srv):
    sess = "c23-target"
    call(srv, "do_preset", [None, "llama31-8b-eagle3-h100"], sess)
    assert spec_of(srv, sess)["model"] == LLAMA_EAGLE3
    body = call(srv, "field_model", [None, QWEN], sess)
    spec = spec_of(srv, sess)
    expected = suggest.default_drafter(QWEN, "eagle3")
    assert spec["model"] == expected != LLAMA_EAGLE3, spec
    assert spec["method"] == "eagle3"
    text = panel_text(body)
    assert LLAMA_EAGLE3 in text and "replaced" in text, text[:600]  # the note names what went and why
    assert exported_spec(srv, sess)["model"] == expected
    # the catalog list picks the target the same way
    call(srv, "pick_catalog", [None, LLAMA], sess)
    assert spec_of(srv, sess)["model"] == suggest.default_drafter(LLAMA, "eagle3")


# ---- 2. a method change drops the fields the new method does not read ------------------------------

def test_core_method_reads():
    assert not suggest.method_reads("ngram", "model") and not suggest.method_reads("suffix", "model")
    assert suggest.method_reads("eagle3", "model") and suggest.method_reads("ngram", "prompt_lookup_min")
    assert not suggest.method_reads("eagle3", "prompt_lookup_max")
    assert not suggest.method_reads("ngram", "suffix_decoding_max_tree_depth")
    assert suggest.method_reads("ngram", "num_speculative_tokens")


def test_method_change_drops_the_hidden_drafter(srv):
    sess = "c23-method"
    call(srv, "do_preset", [None, "qwen3-8b-eagle3-h100"], sess)
    drafter = spec_of(srv, sess).get("model")
    assert drafter
    body = call(srv, "field_speculative_config_method", [None, "ngram"], sess)
    spec = spec_of(srv, sess)
    assert spec["method"] == "ngram" and "model" not in spec, spec
    assert drafter in panel_text(body) and "removed" in panel_text(body)
    exp = exported_spec(srv, sess)
    assert exp["method"] == "ngram" and "model" not in exp, exp
    # back to eagle3: the drafter eagle3 had comes back, with a note (the catalog default replaced
    # it silently before: fresh-user trial 2026-12-07)
    body = call(srv, "field_speculative_config_method", [None, "eagle3"], sess)
    assert spec_of(srv, sess)["model"] == drafter
    assert "Restored what eagle3 had" in panel_text(body)
    # a method never used in this tab gets the catalog's drafter for the target
    call(srv, "field_speculative_config_method", [None, "ngram"], sess)
    call(srv, "field_speculative_config_method", [None, "eagle"], sess)
    assert spec_of(srv, sess).get("model") == suggest.default_drafter(state(srv, sess)["config"]["model"], "eagle")


def test_dflash_to_dspark_drops_the_dflash_folder(srv):
    sess = "c23-dspark"
    call(srv, "do_import_cmd", [None, f"vllm serve {QWEN} --speculative-config "
                                      "'{\"method\":\"dflash\",\"model\":\"/models/Qwen3-8B-DFlash-b16\","
                                      "\"num_speculative_tokens\":8}'"], sess)
    assert spec_of(srv, sess)["model"] == "/models/Qwen3-8B-DFlash-b16"
    body = call(srv, "field_speculative_config_method", [None, "dspark"], sess)
    spec = spec_of(srv, sess)
    assert spec["method"] == "dspark" and "model" not in spec, spec
    assert "dflash" in panel_text(body).lower() and "removed" in panel_text(body)
    assert "model" not in exported_spec(srv, sess)


def test_ngram_fields_go_when_leaving_ngram(srv):
    sess = "c23-ngram"
    call(srv, "do_import_cmd", [None, f"vllm serve {LLAMA} --speculative-config "
                                      "'{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'"],
         sess)
    call(srv, "field_speculative_config_method", [None, "eagle3"], sess)
    spec = spec_of(srv, sess)
    assert "prompt_lookup_max" not in spec and spec["model"] == suggest.default_drafter(LLAMA, "eagle3")


# ---- 3. k beyond the suggested range goes in (state, panel, export agree) -------------------------

def test_k_beyond_the_range_goes_in(srv):
    sess = "c23-k"
    call(srv, "do_preset", [None, "mimo-7b-mtp-h100"], sess)
    spec = spec_of(srv, sess)
    assert spec.get("method") == "mtp", spec
    ui = srv.demo.wizard_ui
    kr = suggest.k_range("mtp", ui.evaluate(state(srv, sess)).ctx.target)
    assert kr.maximum < 8  # the suggested range ends below the k typed next
    event, body = srv.call("field_speculative_config_num_speculative_tokens", [8], session=sess)
    assert event == "complete", body[:300]  # Gradio's range check no longer refuses it
    assert spec_of(srv, sess)["num_speculative_tokens"] == 8
    assert exported_spec(srv, sess)["num_speculative_tokens"] == 8
    assert ui.form_value(state(srv, sess), "speculative_config.num_speculative_tokens") == 8  # the box shows 8
    ev = ui.evaluate(state(srv, sess))
    assert ev.ctx.k == 8  # what the panel checked
    from wizard.ui.steps import speculation

    notes = speculation._notes(ui, state(srv, sess), ev)[ui.c["method_md"]]
    assert "k = 8 is outside the suggested" in notes


def test_drafter_lookup_error_points_into_the_ui_not_the_cli(srv):
    """A drafter the wizard cannot find: the Speculation step says so in web terms (the model
    lookup's text names `python -m wizard models`, a CLI command; the web face points at the
    Catalog list instead, like the target step)."""
    sess = "c23-drafter-missing"
    call(srv, "do_preset", [None, "llama31-8b-eagle3-h100"], sess)
    event, body = srv.call("field_speculative_config_model", ["no-such-org-x/no-such-drafter"], session=sess)
    assert event == "complete", body[:300]
    ui = srv.demo.wizard_ui
    ev = ui.evaluate(state(srv, sess))
    assert "python -m wizard" in ev.ctx.lookup_errors["speculative_config.model"]  # the core's text
    from wizard.ui.steps import speculation

    notes = speculation._notes(ui, state(srv, sess), ev)[ui.c["method_md"]]
    assert "Drafter could not be inspected" in notes
    assert "python -m wizard" not in notes and "Catalog list" in notes, notes


# ---- 4. acceptance: labelled as planned, and part of the saved session -------------------------------

def test_acceptance_label_is_cumulative_and_session_keeps_it(srv):
    from wizard.ui.state import load_session
    from wizard.ui.steps import plan

    ui = srv.demo.wizard_ui
    info = ui.fields["acceptance"].info
    assert "Cumulative" in info and "Conditional" not in info
    sess = "c23-acc"
    call(srv, "do_preset", [None, "llama31-8b-eagle3-h100"], sess)
    body = call(srv, "acceptance_changed", ["0.8, 0.64, 0.51"], sess)
    d = json.loads(body)
    files = [x for x in d if isinstance(x, dict) and str(x.get("path", "")).endswith("specwizard-session.json")]
    assert files, "the Save session file follows the acceptance at once"
    saved = load_session(Path(files[0]["path"]).read_text())
    assert saved["acceptance"] == "0.8, 0.64, 0.51"
    bcopy = [x for x in d if isinstance(x, dict) and isinstance(x.get("config"), dict)]
    assert bcopy and bcopy[0]["acceptance"] == "0.8, 0.64, 0.51"  # the browser's copy (reload) too
    # planned as typed: cumulative rates p_i (mean acceptance length 1 + sum p_i)
    out = plan.compute_safe(ui, state(srv, sess))
    assert "(0.80, 0.64, 0.51" in out[ui.c["plan_md"]]
    # loading the file restores it into the box
    f = srv.upload("s.json", Path(files[0]["path"]).read_bytes())
    body = call(srv, "do_load_session", [None, f], "c23-acc2")
    assert state(srv, "c23-acc2")["acceptance"] == "0.8, 0.64, 0.51"
    assert "0.8, 0.64, 0.51" in body


def test_speedup_caption_names_the_batches():
    import pandas as pd

    from wizard.ui.steps.plan import speedup_caption

    df = pd.DataFrame({"k": ["1", "2", "1"], "speedup": [1.2, 1.4, 1.1], "batch": ["batch 1", "batch 1", "batch 8"]})
    assert speedup_caption(df).endswith(": 1, 8.")
    assert speedup_caption({"columns": ["k", "speedup", "batch"], "data": [["1", 1.0, "batch 4"]]}).endswith(": 4.")
    assert "No speed-up curve" in speedup_caption(None)
