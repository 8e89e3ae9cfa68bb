"""Predicted vs measured speed-up for a `wizard tune` sweep (issue 15).

    python benchmarks/tune_cpu.py                      # sweep the tiny Llama on the CPU vLLM build
    python benchmarks/tune_cpu.py --from tune.json     # an existing sweep (any machine)
    python benchmarks/tune_cpu.py --model DIR --gpu H100 --k 1,2,4   # where a GPU machine is lent

Runs `wizard tune` (n-gram, k in {1, 2, 4}, baseline), then plans the same configuration with the
measured per-position acceptance and the measured baseline TPOT (what `wizard plan --from-tune`
does) and prints, per k: measured output tokens/s, measured speed-up over the baseline, the
planner's speed-up at the sweep's concurrency and the ratio predicted / measured.
CPU runs show the mechanism (acceptance per position, the k sweep, the baseline), not GPU figures.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import _common

from wizard.config import config_from_dict
from wizard.launch.tune import plan_inputs_from_results, tune
from wizard.plan.planner import plan
from wizard.vllm.methods import NGRAM


def _config(model: str, k: int):
    return config_from_dict({"model": model, "enforce_eager": True, "max_model_len": 512,
                             "speculative_config": {"method": NGRAM, "num_speculative_tokens": k,
                                                    "prompt_lookup_max": 4, "prompt_lookup_min": 1}})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="src", default=None, help="an existing tune.json")
    ap.add_argument("--model", default=None, help="model folder (default: a generated tiny Llama)")
    ap.add_argument("--gpu", default="cpu", help="hardware for the planner (catalog name)")
    ap.add_argument("--k", default="1,2,4")
    ap.add_argument("--concurrency", type=int, default=2)
    args = ap.parse_args()
    _common.test_env_defaults()
    work = Path(tempfile.mkdtemp(prefix="tune_cpu."))
    if args.src:
        data = json.loads(Path(args.src).read_text())
        model = data["model"]
    else:
        from factory import make_tiny_llama  # tests/factory.py (on sys.path via _common)

        model = args.model or str(make_tiny_llama(work / "target"))
        ks = [int(x) for x in args.k.split(",")]
        res = tune(_config(model, ks[0]), ks=ks, concurrency=args.concurrency, num_prompts=8, output_len=32,
                   out_dir=work / "out", kv_cache_space_gib=1, allow_hub=False, start_timeout=1800,
                   bench_timeout=1800, progress=lambda e: print(f"  [{e.get('stage')}] {e.get('message')}", flush=True))
        data = res.as_json()
        print(f"tune.json: {res.json_path}  chart: {res.chart_path}")
    base = data.get("baseline") or {}
    inp = plan_inputs_from_results(data)
    conc = int(data.get("concurrency") or 1)
    print(f"baseline (no speculation): {base.get('output_tokens_per_s') or 0:.1f} tokens/s, "
          f"TPOT {base.get('mean_tpot_ms') or 0:.2f} ms at concurrency {conc}")
    print(f"measured acceptance per position (cumulative): {inp['per_position']}")
    print(f"{'k':>3s} {'tok/s':>8s} {'TPOT ms':>8s} {'MAL':>6s} {'measured':>9s} {'predicted':>9s} {'ratio':>6s}")
    ratios = []
    for r in data["runs"]:
        if not r.get("ok") or not base.get("output_tokens_per_s"):
            print(f"{r['k']:3d} failed: {r.get('error')}")
            continue
        measured = r["output_tokens_per_s"] / base["output_tokens_per_s"]
        p = plan(_config(model, r["k"]), hardware=args.gpu, acceptance=inp["per_position"],
                 acceptance_source="measured", baseline_step_s=base["mean_tpot_ms"] / 1e3, baseline_batch=conc,
                 kv_cache_space_gib=1, k_max=max(8, r["k"]))
        rows = {b.batch: b for b in p.speedup.batches}
        row = rows.get(conc) or min(p.speedup.batches, key=lambda b: abs(b.batch - conc))
        predicted = next(pt.speedup for pt in row.points if pt.k == r["k"])
        ratios.append(predicted / measured)
        print(f"{r['k']:3d} {r['output_tokens_per_s']:8.1f} {r['mean_tpot_ms']:8.2f} {r.get('mean_acceptance_length') or 0:6.2f}"
              f" {measured:9.3f} {predicted:9.3f} {predicted / measured:6.2f}")
    print(f"recommended k (measured best): {data.get('recommended_k')}; speculation pays: {data.get('speculation_pays')}")
    if ratios:
        print(f"predicted/measured speed-up ratio: mean {sum(ratios) / len(ratios):.2f}, "
              f"range {min(ratios):.2f}-{max(ratios):.2f} (CPU: the mechanism, not GPU figures)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
