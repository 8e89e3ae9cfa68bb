"""Acceptance priors per method and task (issue 24 item 3): `plan --task`, the UI's Plan step
dropdown, the source shown; no method's default borrowed from another method."""

from __future__ import annotations

import pytest

from wizard import api
from wizard.config import config_from_dict
from wizard.plan.acceptance import FAMILY_DEFAULTS, TASK_PRIORS, TASKS, family_default, task_of_dataset
from wizard.plan.inputs import PlanInputError


def _cfg(method="eagle3", drafter="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", target="meta-llama/Llama-3.1-8B-Instruct", k=3):
    spec = {"method": method, "num_speculative_tokens": k}
    if drafter:
        spec["model"] = drafter
    return config_from_dict({"model": target, "speculative_config": spec})


def test_no_default_is_borrowed_from_another_method():
    sources = {}
    for m, (rates, source, _setup) in FAMILY_DEFAULTS.items():
        if not source.startswith("assumed"):
            sources.setdefault(source, []).append(m)
    # only the two n-gram spellings (the same proposer family) share a published source
    assert all(len(ms) == 1 for s, ms in sources.items()), sources
    assert "DSpark" not in FAMILY_DEFAULTS["dflash"][1] and "32206" in FAMILY_DEFAULTS["dflash"][1]
    assert not any("from another" in s or "borrow" in s for _, s, _ in FAMILY_DEFAULTS.values())


def test_every_task_prior_is_sourced_and_non_increasing():
    for m, by_task in TASK_PRIORS.items():
        assert set(by_task) <= set(TASKS)
        for task, (rates, source, setup) in by_task.items():
            assert "https://" in source and setup
            assert all(0 <= b <= a <= 1 for a, b in zip(rates, rates[1:])), (m, task)


def test_task_changes_the_acceptance_and_shows_the_source():
    chat = api.plan(_cfg(), gpu="H100", task="chat").speedup
    code = api.plan(_cfg(), gpu="H100", task="code").speedup
    summ = api.plan(_cfg(), gpu="H100", task="summarization").speedup
    # the drafter's own catalog figure is MT-bench (chat): kept for chat, the method's task prior otherwise
    assert "20780" in chat.acceptance_source and chat.task == "chat"
    assert "Llama4-Maverick" in code.acceptance_source and "code" in code.acceptance_source
    assert code.acceptance.mean_acceptance_length(3) == pytest.approx(2.94, abs=0.01)  # the card's k=3 length
    assert summ.acceptance.mean_acceptance_length(3) == pytest.approx(2.37, abs=0.01)
    assert code.table[2].speedup > summ.table[2].speedup


def test_a_task_without_a_published_figure_keeps_the_methods_own_default_and_says_so():
    prof = family_default("dflash", "code")
    assert "32206" in prof.source and any("no published code acceptance for dflash" in n for n in prof.notes)
    assert "16818" in family_default("dflash", "math").source


def test_cli_task_flag_and_bad_task():
    from wizard.cli import main

    import io
    import contextlib

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["plan", "--gpu", "H100", "--task", "math", "--offline", "--", "vllm", "serve",
                   "meta-llama/Llama-3.1-8B-Instruct", "--speculative-config",
                   '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'])
    assert rc == 0 and "acceptance for the math task" in buf.getvalue() and "gsm8k" in buf.getvalue().lower()
    with pytest.raises(PlanInputError):
        api.plan(_cfg(), gpu="H100", task="poetry")


@pytest.mark.parametrize("text,task", [("philschmid/mt-bench", "chat"), ("HumanEval", "code"), ("gsm8k", "math"),
                                       ("CNN/Daily Mail", "summarization"), ("random", None)])
def test_task_of_dataset(text, task):
    assert task_of_dataset(text) == task


def test_ui_plan_step_task_dropdown_reaches_the_plan():
    from wizard.ui import build_app
    from wizard.ui.state import new_state, set_field
    from wizard.ui.steps import plan

    ui = build_app().wizard_ui
    st = set_field(new_state(), "model", "meta-llama/Llama-3.1-8B-Instruct")
    st = set_field(st, "speculative_config.method", "eagle3")
    # a complete configuration: with error findings the step recommends no k and shows no schedule
    st = set_field(st, "speculative_config.model", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    st = set_field(st, "speculative_config.num_speculative_tokens", 3)
    st = set_field(st, "gpu.name", "H100-SXM")
    md_any = plan.compute_safe(ui, st)[ui.c["plan_md"]]
    st = plan._set_task(st, "code")
    md_code = plan.compute_safe(ui, st)[ui.c["plan_md"]]
    assert "published code prior for eagle3" in md_code and "published code prior" not in md_any
    assert "k schedule" in md_code
    assert "plan_task" not in plan._set_task(st, "poetry")
