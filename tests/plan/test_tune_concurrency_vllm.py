"""`wizard tune` over k x concurrency against REAL vLLM (CPU build) with the tiny generated Llama
(hidden 128, 4 heads, 2 KV heads, --enforce-eager): n-gram k=2 and the no-speculation server,
each measured at concurrency 1 and 2 by `vllm bench serve` (two server starts, four benchmarks).
Checks the per-concurrency table, the measured schedule (validated by vLLM's own schedule
parser), and that one real `vllm bench serve` result file of the same sweep, and the sweep's
tune.json, feed the planner (`plan --from-tune`).

No timing dependence: the assertions compare the measured figures with each other, never with
a fixed speed; CAP only stops a hung run on a loaded 2-core machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factory import make_tiny_llama
from wizard import api
from wizard.config import config_from_dict
from wizard.launch.tune import plan_inputs_from_results, tune
from wizard.vllm.methods import NGRAM
from wizard.vllm.versions import installed_vllm

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.slow,
    pytest.mark.skipif(installed_vllm() is None, reason="vLLM (CPU build) not installed"),
    pytest.mark.timeout(3600),
]

CAP = 1200.0


def test_tune_sweeps_k_by_concurrency_on_cpu_vllm(tmp_path):
    model = make_tiny_llama(tmp_path / "target")
    cfg = config_from_dict({"model": str(model), "enforce_eager": True, "max_model_len": 512, "max_num_seqs": 8,
                            "speculative_config": {"method": NGRAM, "num_speculative_tokens": 1,
                                                   "prompt_lookup_max": 4, "prompt_lookup_min": 1}})
    events: list[dict] = []
    res = tune(cfg, ks=(2,), concurrency=(2, 1), num_prompts=4, output_len=16, out_dir=tmp_path / "out",
               progress=events.append, kv_cache_space_gib=1, allow_hub=False, start_timeout=CAP, bench_timeout=CAP)
    assert res.concurrencies == [1, 2] and res.concurrency == 1
    assert [(b.k, b.concurrency) for b in res.baselines] == [(0, 1), (0, 2)]
    assert [(r.k, r.concurrency) for r in res.runs] == [(2, 1), (2, 2)]
    runs = [*res.baselines, *res.runs]
    assert all(r.ok for r in runs), [r.error for r in runs]
    for r in runs:
        assert r.output_tokens_per_s > 0 and r.mean_tpot_ms > 0 and r.completed == 4
        assert Path(r.bench_result).name == f"bench-k{r.k}-c{r.concurrency}.json"
    for r in res.runs:
        assert r.num_drafts > 0 and len(r.per_position) == 2 and all(0.0 <= p <= 1.0 for p in r.per_position)
        assert r.per_position[0] >= r.per_position[1]  # cumulative: non-increasing
    # the table per concurrency is the measured argmax, its speed-up best / baseline
    tps = {(r.k, r.concurrency): r.output_tokens_per_s for r in runs}
    for row in res.by_concurrency:
        c = row["concurrency"]
        best = 2 if tps[(2, c)] > tps[(0, c)] else 0
        assert row["best_k"] == best
        assert row["speedup"] == pytest.approx(tps[(best, c)] / tps[(0, c)], rel=1e-3)
    assert [row["concurrency"] for row in res.by_concurrency] == [1, 2]
    bests = [row["best_k"] for row in res.by_concurrency]
    if bests[0] != bests[1]:  # a schedule: k per range, switching at the second swept concurrency
        assert res.schedule == [[1, 1, bests[0]], [2, 8, bests[1]]] and res.schedule_max == 2
        from vllm.v1.spec_decode.dynamic.utils import build_dynamic_sd_schedule_lookup

        dense = build_dynamic_sd_schedule_lookup(res.schedule, vllm_max_batch_size=8, vllm_num_speculative_tokens=2)
        assert dense[1:] == [bests[0]] + [bests[1]] * 7
    else:
        assert res.schedule is None
        assert ("no schedule needed" in res.schedule_note) or ("no k beat" in res.schedule_note), res.schedule_note
    assert {"launching", "benchmarking", "measured", "done"} <= {e["stage"] for e in events}
    assert {e.get("concurrency") for e in events if e["stage"] == "measured"} == {1, 2}

    # tune.json feeds the planner: the acceptance at the k=2 run with most drafts, the baseline at concurrency 1
    data = json.loads(Path(res.json_path).read_text())
    inp = plan_inputs_from_results(res.json_path)
    assert inp["baseline_tpot_ms"] == res.baselines[0].mean_tpot_ms and inp["concurrency"] == 1
    assert inp["per_position"] in [r.per_position for r in res.runs]
    assert inp["by_concurrency"] == data["by_concurrency"] == res.by_concurrency
    assert inp["schedule"] == res.schedule

    # one real `vllm bench serve --save-result` file of the same sweep (vllm/benchmarks/serve.py's format)
    k2c2 = res.runs[1]
    raw = json.loads(Path(k2c2.bench_result).read_text())
    assert raw["max_concurrency"] == 2 and raw["completed"] == 4
    got = plan_inputs_from_results(k2c2.bench_result)
    assert got["per_position"] == raw["spec_decode_per_position_acceptance_rates"] and len(got["per_position"]) == 2
    assert got["measured"] == [{"k": 2, "concurrency": 2, "output_tokens_per_s": raw["output_throughput"],
                                "mean_tpot_ms": raw["mean_tpot_ms"]}]
    assert got["baseline_tpot_ms"] is None
    p = api.plan(cfg, gpu="cpu", kv_cache_space_gib=1, tune_result=k2c2.bench_result)
    assert "vllm bench serve" in p.speedup.acceptance_source
    assert p.speedup.acceptance_rates[:2] == [round(x, 4) for x in raw["spec_decode_per_position_acceptance_rates"]]
    base_raw = json.loads(Path(res.baselines[0].bench_result).read_text())
    assert not any(k.startswith("spec_decode") for k in base_raw)
    assert plan_inputs_from_results(res.baselines[0].bench_result)["baseline_tpot_ms"] == base_raw["mean_tpot_ms"]
