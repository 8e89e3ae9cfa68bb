"""Thin faces (issue 21 item 4): the CLI and the UI read one k bound and one default-drafter /
default-k policy from the core (:mod:`wizard.suggest`), and `wizard plan` goes through
:func:`wizard.api.plan` like the UI's Plan step."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from wizard import api, cli, cli_plan, suggest
from wizard.plan.inputs import K_HARD_MAX
from wizard.vllm.versions import parse_version

ROOT = Path(__file__).resolve().parent.parent
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3 = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
EAGLE1 = "yuhuili/EAGLE-LLaMA3.1-Instruct-8B"
V32 = parse_version("0.32.0")


# ---- one k bound ---------------------------------------------------------------------------------

def test_every_face_takes_k_up_to_the_core_bound_and_no_further():
    from wizard.ui import services

    assert services.parse_ks(f"1,{K_HARD_MAX}") == ([1, K_HARD_MAX], None)
    assert f"from 1 to {K_HARD_MAX}" in services.parse_ks(str(K_HARD_MAX + 1))[1]
    assert services.parse_acceptance(",".join(["0.5"] * K_HARD_MAX))[0] == [0.5] * K_HARD_MAX
    assert services.parse_acceptance(",".join(["0.5"] * (K_HARD_MAX + 1)))[1]
    assert cli_plan.ks_arg(f"1-{K_HARD_MAX}")[-1] == K_HARD_MAX
    assert cli_plan.k_max_arg(str(K_HARD_MAX)) == K_HARD_MAX
    for bad in (str(K_HARD_MAX + 1), f"1-{K_HARD_MAX + 1}"):
        with pytest.raises(argparse.ArgumentTypeError, match=str(K_HARD_MAX)):
            cli_plan.ks_arg(bad)
    for bad in ("0", str(K_HARD_MAX + 1), "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            cli_plan.k_max_arg(bad)
    # the parser wires them (`plan --k-max`, `tune --k`)
    ns = cli.build_parser().parse_args(["plan", "--k-max", str(K_HARD_MAX), "--", "vllm", "serve", LLAMA])
    assert ns.k_max == K_HARD_MAX
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["plan", "--k-max", str(K_HARD_MAX + 1), "--", "vllm", "serve", LLAMA])


def test_no_face_types_its_own_k_bound():
    """The literals that were the UI's 32 and the CLI's 64 are gone from the faces' k checks."""
    for rel in ("wizard/cli_plan.py", "wizard/ui/services.py"):
        text = (ROOT / rel).read_text(encoding="utf-8")
        assert "<= 32" not in text and "<= 64" not in text and "1 to 32" not in text and "1 and 64" not in text, rel


# ---- one default-drafter / default-k policy ------------------------------------------------------

def test_default_drafter_is_the_catalog_drafter_of_the_method():
    assert suggest.default_drafter(LLAMA, "eagle3") == EAGLE3
    assert suggest.default_drafter(LLAMA, "eagle") == EAGLE1
    # a catalog drafter of another method is replaced; one of this method, or the user's own, is kept
    assert suggest.default_drafter(LLAMA, "eagle3", current=EAGLE1) == EAGLE3
    assert suggest.default_drafter(LLAMA, "eagle3", current=EAGLE3) == EAGLE3
    assert suggest.default_drafter(LLAMA, "eagle3", current="./my-own-head") == "./my-own-head"
    # no drafter checkpoint (ngram, mtp) or no catalog drafter: the current value stays
    assert suggest.default_drafter(LLAMA, "ngram") is None
    assert suggest.default_drafter(LLAMA, "ngram", current="x") == "x"
    assert suggest.default_drafter("no/such-model", "eagle3") is None


def test_default_k_follows_the_method_unless_chosen_by_hand():
    ctx = api.resolve(api.load(command="vllm serve deepseek-ai/DeepSeek-V3"), vllm_version=V32, allow_hub=False)
    assert ctx.target.mtp_layers == 1
    assert suggest.default_k("mtp", ctx.target) == 1  # a 1-layer MTP checkpoint
    assert suggest.default_k("eagle3") == 3
    # still the previous method's default -> the new method's default; chosen by hand -> kept
    assert suggest.default_k("mtp", ctx.target, current=3, previous_method="eagle3") == 1
    assert suggest.default_k("mtp", ctx.target, current=5, previous_method="eagle3") == 5
    assert suggest.default_k("eagle3", current=7, previous_method="ngram") == 7


def test_the_ui_applies_the_core_policy_when_the_method_changes():
    from wizard.ui.steps.speculation import on_method_chosen

    ui = SimpleNamespace(policy=SimpleNamespace(allows=lambda _p: True))
    before = {"vllm_version": "0.32.0", "config": {"model": LLAMA, "speculative_config": {"method": "eagle", "model": EAGLE1,
                                                                                           "num_speculative_tokens": 3}}}
    after = json.loads(json.dumps(before))
    after["config"]["speculative_config"]["method"] = "eagle3"
    out = on_method_chosen(ui, after, before)["config"]["speculative_config"]
    assert out["model"] == suggest.default_drafter(LLAMA, "eagle3", current=EAGLE1) == EAGLE3
    assert out["num_speculative_tokens"] == suggest.default_k("eagle3", current=3, previous_method="eagle") == 3


def test_cli_suggest_prints_the_default_drafter():
    r = subprocess.run([sys.executable, "-m", "wizard", "suggest", "--format", "json", "--offline", "--vllm-version", "0.32.0",
                        "--gpu", "H100-SXM", "--", "vllm", "serve", LLAMA, "--speculative-config", '{"method":"eagle3"}'],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["default_drafter"] == EAGLE3 and data["k"]["default"] == suggest.default_k("eagle3") == 3
    s = api.suggest(api.load(command=f"vllm serve {LLAMA} --speculative-config '{{\"method\":\"eagle3\"}}'"),
                    vllm_version=V32, gpu="H100-SXM")
    assert f"default drafter: {EAGLE3}" in s.render_text()


# ---- `wizard plan` calls wizard.api ------------------------------------------------------------------

def test_cli_plan_goes_through_api_plan(monkeypatch):
    seen = {}
    real = api.plan

    def spy(config, **kw):
        seen.update(kw)
        return real(config, **kw)

    monkeypatch.setattr(api, "plan", spy)
    args = cli.build_parser().parse_args(["plan", "--gpu", "H100", "--acceptance", "0.7,0.5", "--k-max", "4",
                                          "--", "vllm", "serve", LLAMA, "--speculative-config",
                                          '{"method":"eagle3","model":"%s","num_speculative_tokens":2}' % EAGLE3])
    buf = __import__("io").StringIO()
    rc = cli_plan.cmd_plan(args, cli.load_from_args(args), out=buf)
    assert rc == 0 and "Plan on 1 x H100-SXM" in buf.getvalue()
    assert seen["k_max"] == 4 and seen["acceptance"] == [0.7, 0.5] and seen["acceptance_source"] == "--acceptance"
    assert seen["gpu"].name == "H100-SXM"


def test_long_form_label_names_what_was_rewritten(tmp_path, monkeypatch):
    """Trial defect D: the long-form heading names the rewrite: an abbreviation alone is not called a
    speculators checkpoint, a speculators checkpoint alone is not called an abbreviation."""
    import shutil

    from wizard.context import clear_model_cache
    from wizard.textreport import long_form_label, render_text

    rep = api.check(api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-l 32k"),
                    vllm_version="0.32", allow_hub=False)
    label = long_form_label(rep)
    assert label == "long form (what vLLM builds from it: abbreviated option --max-model-l spelled out):"
    assert label in render_text(rep) and "speculators" not in render_text(rep).split("long form", 1)[1]
    rep = api.check(api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct --spec-me ngram --spec-tok 3"),
                    vllm_version="0.32", allow_hub=False)
    assert "abbreviated options --spec-me, --spec-tok spelled out" in long_form_label(rep)
    src = Path(__file__).parent / "data" / "hf" / "speculators" / "constructed--Qwen3-8B-speculator.peagle"
    shutil.copytree(src, tmp_path / src.name)
    monkeypatch.chdir(tmp_path)
    clear_model_cache()
    try:
        rep = api.check(api.load(command=["vllm", "serve", f"./{src.name}"]), vllm_version="0.32", allow_hub=False)
    finally:
        clear_model_cache()
    label = long_form_label(rep)
    assert f"the speculators checkpoint ./{src.name} served as verifier Qwen/Qwen3-8B + drafter" in label
    assert "abbreviat" not in label


def test_baseline_tpot_ms_type_speaks_milliseconds():
    """Trial defect G: the --baseline-tpot-ms type names milliseconds (wizard/cli.py wires it)."""
    assert cli_plan.positive_ms_arg("12.5") == 12.5
    for bad, said in (("0", "must be > 0 and at most 10000000 milliseconds"), ("-3", "milliseconds"),
                      ("nan", "milliseconds"), ("inf", "milliseconds"), ("abc", "is not a number (milliseconds)")):
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(said)):
            cli_plan.positive_ms_arg(bad)
        with pytest.raises(argparse.ArgumentTypeError) as err:
            cli_plan.positive_ms_arg(bad)
        assert "seconds" not in str(err.value).replace("milliseconds", "")
