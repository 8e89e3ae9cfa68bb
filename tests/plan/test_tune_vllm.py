"""`wizard tune` end to end against REAL vLLM (CPU build) with the tiny generated Llama: n-gram,
k in {1, 2, 4} plus the no-speculation baseline (4 server starts), driven by `vllm bench serve`.
Checks the JSON and the PNG chart, the baseline, measured acceptance per position, and that the
recommended k is the measured best. CPU figures show the mechanism, not GPU figures
(benchmarks/tune_cpu.py prints predicted vs measured speed-up).

No timing dependence: each run waits on the server's health and the benchmark's end; CAP only
stops a hung run on a loaded 2-core machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard import api

from factory import make_tiny_llama
from wizard.cli import main
from wizard.config import config_from_dict
from wizard.launch.tune import tune
from wizard.vllm.methods import NGRAM
from wizard.vllm.versions import installed_vllm

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.slow,
    pytest.mark.skipif(installed_vllm() is None, reason="vLLM (CPU build) not installed"),
    pytest.mark.timeout(7200),
]

CAP = 1200.0


def tiny_ngram_config(model: Path):
    return config_from_dict({"model": str(model), "enforce_eager": True, "max_model_len": 512,
                             "speculative_config": {"method": NGRAM, "num_speculative_tokens": 1,
                                                    "prompt_lookup_max": 4, "prompt_lookup_min": 1}})


def test_tune_sweep_on_cpu_vllm(tmp_path):
    model = make_tiny_llama(tmp_path / "target")
    events: list[dict] = []
    res = tune(tiny_ngram_config(model), ks=(1, 2, 4), concurrency=2, num_prompts=8, output_len=32,
               out_dir=tmp_path / "out", progress=events.append, kv_cache_space_gib=1, allow_hub=False,
               start_timeout=CAP, bench_timeout=CAP)
    assert res.baseline is not None and res.baseline.ok, res.baseline
    assert [r.k for r in res.runs] == [1, 2, 4]
    assert all(r.ok for r in res.runs), [r.error for r in res.runs]
    best = max(res.runs, key=lambda r: r.output_tokens_per_s)
    assert res.recommended_k == best.k
    assert res.best_speedup == pytest.approx(best.output_tokens_per_s / res.baseline.output_tokens_per_s, rel=1e-3)
    for r in res.runs:
        assert r.output_tokens_per_s > 0 and r.mean_tpot_ms > 0
        assert r.num_drafts and r.num_drafts > 0
        assert len(r.per_position) == r.k and all(0.0 <= p <= 1.0 for p in r.per_position)
        assert r.mean_acceptance_length == pytest.approx(1 + sum(r.per_position), abs=1e-3)  # each rounded to 4 places
    data = json.loads(Path(res.json_path).read_text())
    assert data["recommended_k"] == res.recommended_k and data["plan_inputs"]["per_position"]
    assert Path(res.chart_path).read_bytes()[:4] == b"\x89PNG"
    stages = {e["stage"] for e in events}
    assert {"launching", "benchmarking", "measured", "done"} <= stages
    # the measured acceptance feeds back into the planner
    rc = main(["plan", "--format", "json", "--from-tune", res.json_path, "--kv-cache-space-gib", "1", "--",
               "vllm", "serve", str(model), "--max-model-len", "512", "--speculative-config",
               json.dumps({"method": NGRAM, "num_speculative_tokens": 2, "prompt_lookup_max": 4})])
    assert rc == 0
    # a raw `vllm bench serve --save-result` file of the same sweep (vllm/benchmarks/serve.py's own
    # format) feeds the planner too: the speculative run's acceptance, the baseline run's TPOT
    k4 = res.runs[-1]
    raw = json.loads(Path(k4.bench_result).read_text())
    assert raw.get("spec_decode_per_position_acceptance_rates"), sorted(raw)
    p = api.plan(tiny_ngram_config(model), gpu="cpu", kv_cache_space_gib=1, tune_result=k4.bench_result)
    assert "vllm bench serve" in p.speedup.acceptance_source
    assert p.speedup.acceptance_rates == [round(x, 4) for x in raw["spec_decode_per_position_acceptance_rates"]]
    pb = api.plan(tiny_ngram_config(model), gpu="cpu", kv_cache_space_gib=1, tune_result=res.baseline.bench_result)
    assert "calibrated on a measured plain step" in pb.speedup.cost_model
