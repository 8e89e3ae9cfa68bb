"""Leftovers of a new-user trial of the wizard UI (N6, N8, N9, N10), checked at the handlers:
the Plan step's k table against the core's figures, a fractional GPU count, a hybrid target's
layer kinds, and the drafter dropdown's ★ against what `wizard suggest` recommends. One browser
test (the GPU count, as typed) follows the hardware step's existing Playwright pattern."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from wizard.ui.state import new_state, set_field

ROOT = Path(__file__).resolve().parent.parent
DRAFTER = "speculative_config.model"
METHOD = "speculative_config.method"


@pytest.fixture(scope="module")
def demo():
    from wizard.ui import build_app

    return build_app()


def _state(*pairs, version: str | None = None) -> dict:
    st = new_state(version) if version else new_state()
    for path, value in pairs:
        st = set_field(st, path, value)
    return st


def handler(demo, comp, event: str):
    return next(bf.fn for bf in demo.fns.values() if bf.targets and bf.targets[0] == (comp._id, event))


# ---- N6: the Plan step's k table marks the core's best k and the configured k -------------------

def _plan(demo, st) -> tuple[str, dict]:
    from wizard.ui.steps import plan

    ui = demo.wizard_ui
    out = plan.compute_safe(ui, st)
    return out[ui.c["plan_md"]], out[ui.c["plan_json"]].value["speedup"]


def _rows(md: str) -> dict[int, str]:
    """k -> the note cell of the Plan step's k table."""
    return {int(m.group(1)): m.group(2).strip()
            for m in re.finditer(r"^\| ([\d,]+) \| [^|]+ \| [^|]+ \| [^|]+ \| ([^|]*) \|$", md, re.M)}


def test_mtp_k_table_marks_the_cores_best_k_and_the_configured_k_past_the_limit(demo):
    st = _state(("model", "deepseek-ai/DeepSeek-V3"), ("gpu.name", "H200"), ("gpu.count", 8),
                ("tensor_parallel_size", "8"), (METHOD, "mtp"), ("speculative_config.num_speculative_tokens", 3))
    md, sp = _plan(demo, st)
    rows = _rows(md)
    assert sp["best_k"] == 1 and sp["k"] == 3 and sp["k_cap"] == 1  # the core's figures
    best = [k for k, note in rows.items() if "★ best" in note]
    assert best == [sp["best_k"]]  # one row, the core's best k
    assert "◀ configured" in rows[3] and "past the checkpoint's limit" in rows[3] and "★" not in rows[3]
    assert "◀ configured" not in rows[1]
    # k=3's estimate is higher: the step says why it is still not the best k
    table = {r["k"]: r for r in sp["table"]}
    assert table[3]["speedup"] > table[1]["speedup"] and table[3]["beyond_checkpoint"]
    line = next(ln for ln in md.splitlines() if ln.startswith("best k by the estimate"))
    assert "**1**" in line and "configured k = 3 is past the checkpoint's limit (k ≤ 1)" in line
    assert "never recommended" in line and f"{table[3]['speedup']:.2f}×" in line
    assert "k limit 1" in md and "MTP layer" in md  # the limit's reason, from the core


def test_k_table_says_how_the_configured_k_compares_with_the_best(demo):
    base = (("model", "meta-llama/Llama-3.1-8B-Instruct"), ("gpu.name", "H100-SXM"), (METHOD, "eagle3"),
            (DRAFTER, "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"))
    md, sp = _plan(demo, _state(*base, ("speculative_config.num_speculative_tokens", 3)))
    rows, best = _rows(md), sp["best_k"]
    assert best and best != 3 and sorted(rows) == [r["k"] for r in sp["table"]]
    assert [k for k, n in rows.items() if "★ best" in n] == [best] and [k for k, n in rows.items() if "configured" in n] == [3]
    k3 = next(r for r in sp["table"] if r["k"] == 3)
    assert f"configured k = 3 gives {k3['speedup']:.2f}×" in md
    # the configured k is the best: one row carries both marks
    md, sp = _plan(demo, _state(*base, ("speculative_config.num_speculative_tokens", best)))
    assert "★ best" in _rows(md)[best] and "◀ configured" in _rows(md)[best]
    assert f"best k by the estimate: **{best}**" in md and "the configured k" in md


def test_k_table_marks_no_best_when_the_core_withholds_it(demo):
    st = _state(("model", "meta-llama/Llama-3.1-8B-Instruct"), (METHOD, "eagle3"),
                (DRAFTER, "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"), ("speculative_config.num_speculative_tokens", 3),
                ("gpu.name", "L4"))
    md, sp = _plan(demo, st)
    assert sp["withheld"] and sp["best_k"] is None
    assert "★ best" not in md and "hypothetical" in md and "◀ configured" in _rows(md)[3]


# ---- N8: a fractional GPU count ------------------------------------------------------------------

def test_fractional_gpu_count_names_the_field_and_keeps_the_text(demo):
    ui = demo.wizard_ui
    comp = ui.fields["gpu.count"]
    fn = handler(demo, comp, "input")
    st = _state(("model", "meta-llama/Llama-3.1-8B-Instruct"), ("gpu.name", "H100-SXM"), ("gpu.count", 4))
    for typed in (2.5, "2.5"):
        out = fn(st, typed)  # never raises
        new = out[ui.c["state"]]
        assert new["raw"]["gpu.count"] == "2.5" and new["gpu"]["count"] == 4  # typed text kept, last valid used
        assert ui.form_value(new, "gpu.count") == "2.5"
        panel = out[ui.c["panel"]]
        assert "GPU count must be a whole number ≥ 1" in panel and "is not a whole number" in panel
        assert "last valid count, 4 GPUs" in panel
        facts = ui.render(None, new, ui.reactors_for(["gpu.count"]))[ui.c["hw_facts"]]
        assert "GPU count must be a whole number ≥ 1: '2.5' is not a whole number" in facts
    from wizard.ui.state import gpu_count_problem

    for typed, why in (("0", "less than 1"), ("abc", "not a number"), ("5000", "more than 4,096")):
        assert why in gpu_count_problem(set_field(st, "gpu.count", typed))
    assert gpu_count_problem(set_field(set_field(st, "gpu.count", 2.5), "gpu.count", 2)) is None


@pytest.mark.browser
@pytest.mark.skipif(not shutil.which("chromium") and not Path("/usr/bin/chromium").exists(),
                    reason="Debian chromium not installed")
def test_fractional_gpu_count_as_typed_in_the_browser(tmp_path, capfd):
    from ui_helpers import (assert_no_traceback, browser, choose, handler_log, open_wizard, seq, serve_app, shot, tab,
                            wait_seq_above)

    with handler_log() as records, serve_app() as (_, url), browser(tmp_path / "profile") as ctx:
        page = open_wizard(ctx, url)
        tab(page, "hardware")
        choose(page, "f-gpu-name", "H100-SXM")
        box = page.locator("#f-gpu-count input").first
        n = seq(page)
        box.click()
        box.press("Control+a")
        box.press_sequentially("2.5", delay=80)
        box.press("Tab")
        wait_seq_above(page, n)
        page.wait_for_function("() => document.querySelector('#sw-hw-facts').innerText.includes(\"'2.5' is not a whole number\")")
        assert box.input_value() == "2.5"  # what was typed stays
        assert "GPU count must be a whole number ≥ 1" in page.locator("#sw-summary").inner_text()
        assert page.locator(".toast-body").filter(has_text="Error").count() == 0
        shot(page, "gpu-count-fractional")
    assert_no_traceback(capfd, records)


# ---- N9: a hybrid target's layer kinds ----------------------------------------------------------

@pytest.mark.parametrize("model, full, state, kind", [
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", 12, 36, "Gated DeltaNet (linear attention)"),
    (str(ROOT / "tests/data/hf/Qwen--Qwen3.5-4B"), 8, 24, "Gated DeltaNet (linear attention)"),
])
def test_target_step_describes_a_hybrids_layer_kinds(demo, model, full, state, kind):
    from wizard.plan.kv import kv_layout
    from wizard.ui import services

    ui = demo.wizard_ui
    st = _state(("model", model))
    md = ui.render(None, st, ui.reactors_for(["model"]))[ui.c["target_facts"]]
    row = next(ln for ln in md.splitlines() if ln.startswith("| attention |"))
    assert "full |" not in row
    assert f"hybrid: {full} full-attention layers + {state} {kind} layers" in row
    info = services.evaluate(st).ctx.target  # the counts are the core's (the KV plan's layer kinds)
    lay = kv_layout(info, "auto", dtype=info.torch_dtype or "bfloat16")
    assert (lay.full_layers, lay.mamba_layers) == (full, state) and info.num_mamba_layers == state


def test_target_step_attention_of_plain_interleaved_and_mla_models():
    from wizard.ui import services
    from wizard.plan.kv import describe_layers

    def att(model):
        return describe_layers(services.evaluate(_state(("model", model))).ctx.target)

    assert att("meta-llama/Llama-3.1-8B-Instruct") == "full"
    assert att("deepseek-ai/DeepSeek-V3") == "MLA"
    assert att("openai/gpt-oss-20b") == "12 full-attention layers + 12 sliding-window layers (window 128)"


# ---- N10: the drafter dropdown's ★ is `wizard suggest`'s recommendation ------------------------------

L3 = "meta-llama/Meta-Llama-3-8B-Instruct"
MLP = "ibm-ai-platform/llama3-8b-accelerator"


def _drafter_choices(demo, st) -> list[tuple[str, str]]:
    ui = demo.wizard_ui
    return ui.render(None, st, ui.reactors_for([METHOD]))[ui.fields[DRAFTER]].choices


@pytest.mark.parametrize("version", ["0.32.0", "0.33.0"])
def test_no_star_on_a_drafter_whose_method_suggest_does_not_recommend(demo, version):
    from wizard import api

    st = _state(("model", L3), (METHOD, "mlp_speculator"), (DRAFTER, MLP), version=version)
    choices = _drafter_choices(demo, st)
    assert MLP in [v for _, v in choices]  # the configured drafter stays selectable ...
    assert not any(str(lbl).startswith("★") for lbl, _ in choices)  # ... but is not recommended
    # the same decision as `wizard suggest` (methods_for): mlp_speculator is not recommended there
    s = api.suggest(api.load(command=f"vllm serve {L3} --speculative-config "
                                     f"'{{\"method\":\"mlp_speculator\",\"model\":\"{MLP}\"}}'"),
                    vllm_version=version, allow_hub=False)
    assert not any(m.recommended for m in s.methods if m.method == "mlp_speculator")
    if version == "0.33.0":  # the release refuses the method: suggest lists no such drafter, nor does the UI
        assert MLP not in [d.id for d in s.drafters]
        assert (MLP, MLP) in choices  # only as the value given, unlabelled


def test_star_stays_on_a_recommended_drafter(demo):
    from wizard import api

    for version in ("0.32.0", "0.33.0"):
        st = _state(("model", L3), (METHOD, "eagle"), version=version)
        choices = _drafter_choices(demo, st)
        starred = [v for lbl, v in choices if str(lbl).startswith("★")]
        s = api.suggest(api.load(command=f"vllm serve {L3}"), vllm_version=version, allow_hub=False)
        assert any(m.method == "eagle" and m.recommended for m in s.methods)
        assert starred == ["yuhuili/EAGLE-LLaMA3-Instruct-8B"]
    # method none: no drafter list shown; mlp_speculator drafters are left out at 0.33
    from wizard.ui.steps.speculation import drafter_choices
    from wizard.vllm.versions import parse_version

    assert MLP not in [v for _, v in drafter_choices(L3, None, None, parse_version("0.33.0"))]
    assert MLP in [v for _, v in drafter_choices(L3, None, None, parse_version("0.32.0"))]


def test_target_facts_mtp_layers_as_vllm_counts_them():
    """Qwen3-Next's catalog config has no num_nextn_predict_layers: the Target step said 'none',
    though vLLM runs MTP on it (qwen3_next_mtp); DeepSeek-V3 counts its one layer."""
    from wizard.models import catalog
    from wizard.ui.steps.target import facts_md
    from wizard.vllm.versions import parse_version

    md = facts_md(catalog.lookup("Qwen/Qwen3-Next-80B-A3B-Instruct"), None, parse_version("0.32.0"))
    assert "| MTP layers | unknown (config.json does not say; vLLM runs MTP as qwen3_next_mtp) |" in md, md
    md = facts_md(catalog.lookup("deepseek-ai/DeepSeek-V3"), None, parse_version("0.32.0"))
    assert "| MTP layers | 1 |" in md, md
    md = facts_md(catalog.lookup("meta-llama/Llama-3.1-8B-Instruct"), None, parse_version("0.32.0"))
    assert "| MTP layers | none |" in md, md


def test_switching_methods_back_and_forth_restores_what_each_had():
    """ngram (prompt_lookup_min 2, max 6) -> eagle3 (a chosen lmsys drafter) -> ngram -> eagle3:
    the n-gram bounds and the chosen drafter came back empty / as the catalog default, with no
    notice (fresh-user trial 2026-12-07). Each method's removed values now return with a note."""
    from wizard.ui import build_app
    from wizard.ui.state import new_state, set_field

    demo = build_app()
    ui = demo.wizard_ui
    fn = handler(demo, ui.fields["speculative_config.method"], "input")
    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    st = fn(st, "ngram")[ui.c["state"]]
    st = set_field(set_field(st, "speculative_config.prompt_lookup_min", 2), "speculative_config.prompt_lookup_max", 6)
    st = fn(st, "eagle3")[ui.c["state"]]
    assert "prompt_lookup_min" not in st["config"]["speculative_config"]
    st = set_field(st, "speculative_config.model", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B")
    out = fn(st, "ngram")
    spec = out[ui.c["state"]]["config"]["speculative_config"]
    assert (spec["prompt_lookup_min"], spec["prompt_lookup_max"]) == (2, 6) and "model" not in spec
    out = fn(out[ui.c["state"]], "eagle3")
    spec = out[ui.c["state"]]["config"]["speculative_config"]
    assert spec["model"] == "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B" and "prompt_lookup_max" not in spec


def test_import_status_says_what_the_shell_line_lost():
    """`rm -rf / && vllm serve x` imported x and said nothing of the rest (the launcher never uses a
    shell, but the user should see the line was cut)."""
    from wizard import api
    from wizard.ui.header import import_status

    line = import_status(api.load(command="rm -rf / && vllm serve meta-llama/Llama-3.1-8B-Instruct"), "command")
    assert "left out" in line and "rm -rf /" in line
    assert "left out" not in import_status(api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct"), "command")


def test_a_whole_number_typed_as_a_decimal_is_written_with_a_note():
    """`-tp 1.0` is an argparse error on the command line (SD010 in the CLI); the UI's box takes 1.0
    as 1, and now says it wrote it as 1 (it rewrote it silently, so CLI and UI seemed to disagree)."""
    from wizard.ui import build_app
    from wizard.ui.state import CHANGE_NOTE

    st = set_field(new_state(), "tensor_parallel_size", "1.0")
    assert st["config"]["tensor_parallel_size"] == 1 and "written as 1" in st[CHANGE_NOTE]
    assert CHANGE_NOTE not in set_field(new_state(), "tensor_parallel_size", "2")
    demo = build_app()
    ui = demo.wizard_ui
    out = handler(demo, ui.fields["tensor_parallel_size"], "change")(
        set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct"), "1.0")
    assert "written as 1" in str(out[ui.c["panel"]])
    assert CHANGE_NOTE not in out[ui.c["state"]]
