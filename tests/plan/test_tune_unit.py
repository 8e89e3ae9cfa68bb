"""wizard.launch.tune without a server: input checks, the recommendation, the JSON that feeds
back into the planner (``wizard plan --from-tune``), the chart. The end-to-end sweep on the CPU
vLLM build is tests/plan/test_tune_vllm.py (slow)."""

from __future__ import annotations

import json

import pytest

from wizard import api
from wizard.config import config_from_dict
from wizard.launch.tune import (
    DEFAULT_PROMPTS, TuneError, TuneResult, TuneRun, _check_ks, _recommend, plan_inputs_from_results, save_chart, tune,
    validate_prompts,
)
from wizard.vllm.methods import EAGLE3, NGRAM


def _result() -> TuneResult:
    res = TuneResult(model="m", method=NGRAM, ks=[1, 2, 4], concurrency=4, num_prompts=8, output_len=32,
                     prompts=str(DEFAULT_PROMPTS))
    res.baseline = TuneRun(k=0, ok=True, output_tokens_per_s=100.0, mean_tpot_ms=40.0)
    res.runs = [TuneRun(k=1, ok=True, output_tokens_per_s=120.0, mean_tpot_ms=33.0, mean_acceptance_length=1.6,
                        per_position=[0.6], num_drafts=50),
                TuneRun(k=2, ok=True, output_tokens_per_s=130.0, mean_tpot_ms=31.0, mean_acceptance_length=1.9,
                        per_position=[0.6, 0.3], num_drafts=40),
                TuneRun(k=4, ok=False, error="server exited")]
    return res


def test_builtin_prompts_are_valid_and_bad_files_name_the_fix(tmp_path):
    assert validate_prompts(None) == DEFAULT_PROMPTS
    bad = tmp_path / "p.jsonl"
    bad.write_text('{"prompt": "hi"}\n{"text": 1}\n')
    with pytest.raises(TuneError, match="line 2"):
        validate_prompts(bad)
    (tmp_path / "p.txt").write_text("x")
    with pytest.raises(TuneError, match=r"\.jsonl"):
        validate_prompts(tmp_path / "p.txt")
    with pytest.raises(TuneError, match="not a file"):
        validate_prompts(tmp_path / "missing.jsonl")


@pytest.mark.parametrize("ks", [[], [0], [65], [True], ["2"]])
def test_bad_k_lists(ks):
    with pytest.raises(TuneError, match="--k"):
        _check_ks(ks)


def test_check_ks_sorts_and_dedups():
    assert _check_ks([4, 1, 2, 2]) == [1, 2, 4]


def test_tune_without_speculative_config_raises_before_starting(tmp_path):
    with pytest.raises(TuneError, match="speculative_config"):
        tune(config_from_dict({"model": "x"}), out_dir=tmp_path)


def test_recommendation_is_the_measured_best_and_compares_with_the_baseline():
    res = _result()
    _recommend(res)
    assert res.recommended_k == 2 and res.speculation_pays is True and res.best_speedup == pytest.approx(1.3)
    res.baseline.output_tokens_per_s = 200.0
    res.notes.clear()
    _recommend(res)
    assert res.speculation_pays is False and "without speculation" in res.notes[0]


def test_tune_json_feeds_the_planner(tmp_path):
    res = _result()
    _recommend(res)
    path = tmp_path / "tune.json"
    path.write_text(json.dumps(res.as_json()))
    inp = plan_inputs_from_results(path)
    assert inp["per_position"] == [0.6, 0.3] and inp["baseline_tpot_ms"] == 40.0 and inp["concurrency"] == 4
    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "max_num_seqs": 8,
                            "speculative_config": {"method": EAGLE3, "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                                                   "num_speculative_tokens": 2}})
    p = api.plan(cfg, gpu="H100", tune_result=path)
    assert p.speedup.acceptance_rates[:2] == pytest.approx([0.6, 0.3])
    assert "wizard tune" in p.speedup.acceptance_source


@pytest.mark.parametrize("data", [{"runs": []}, {"runs": "x"}, "not json at all"])
def test_unusable_tune_results(tmp_path, data):
    path = tmp_path / "t.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(TuneError, match="--from-tune"):
        plan_inputs_from_results(path)
    assert plan_inputs_from_results(path, raise_errors=False) is None


def test_chart_png(tmp_path):
    pytest.importorskip("matplotlib")
    res = _result()
    _recommend(res)
    out = save_chart(res, tmp_path / "tune.png")
    assert (tmp_path / "tune.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.endswith("tune.png")


def test_from_tune_reads_a_vllm_bench_serve_result():
    """One `vllm bench serve --save-result` JSON (the keys vllm/benchmarks/serve.py 0.32 writes:
    spec_decode_per_position_acceptance_rates = accepted at position i / drafts, max_concurrency,
    mean_tpot_ms); the slow test feeds a real one (tests/plan/test_tune_vllm.py)."""
    from wizard.launch.tune import TuneError, plan_inputs_from_results

    spec_run = {"date": "20261202-120000", "backend": "vllm", "model_id": "m", "num_prompts": 8, "max_concurrency": 4,
                "mean_tpot_ms": 5.1, "output_throughput": 700.0, "spec_decode_acceptance_rate": 61.0,
                "spec_decode_acceptance_length": 2.22, "spec_decode_num_drafts": 100, "spec_decode_draft_tokens": 200,
                "spec_decode_accepted_tokens": 122, "spec_decode_per_position_acceptance_rates": [0.75, 0.47]}
    got = plan_inputs_from_results(spec_run)
    assert got["per_position"] == [0.75, 0.47] and got["concurrency"] == 4 and got["baseline_tpot_ms"] is None
    assert "vllm bench serve" in got["acceptance_source"]
    base_run = {k: v for k, v in spec_run.items() if not k.startswith("spec_decode")}
    got = plan_inputs_from_results(base_run)
    assert got["per_position"] is None and got["baseline_tpot_ms"] == 5.1 and got["concurrency"] == 4
    import pytest as _pytest

    with _pytest.raises(TuneError):
        plan_inputs_from_results({**spec_run, "spec_decode_per_position_acceptance_rates": []})
