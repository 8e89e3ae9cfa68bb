"""A k x concurrency `wizard tune` sweep and the schedule it measures (issue 24).

    python benchmarks/tune_concurrency.py                          # tiny Llama, CPU vLLM build
    python benchmarks/tune_concurrency.py --from tune.json         # or a vllm bench sweep serve folder,
                                                                   # a GuideLLM / AIPerf result
    python benchmarks/tune_concurrency.py --model DIR --k 1,2,4 --concurrency 1,4,16,64   # on a GPU machine

Prints output tokens/s per (k, concurrency) with the no-speculation run, the fastest k per
concurrency and its speed-up, the measured `num_speculative_tokens_per_batch_size` schedule, and
the same sweep as a `vllm bench sweep serve` command (wizard.launch.sweep_grid).
CPU runs show the mechanism, not GPU figures.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import _common

from wizard.config import config_from_dict
from wizard.launch.tune import plan_inputs_from_results, sweep_grid, tune
from wizard.vllm.methods import NGRAM


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="src", default=None, help="tune.json, a result file or a sweep folder")
    ap.add_argument("--model", default=None, help="model folder (default: a generated tiny Llama)")
    ap.add_argument("--k", default="2,4")
    ap.add_argument("--concurrency", default="1,2,4")
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--output-len", type=int, default=32)
    args = ap.parse_args()
    _common.test_env_defaults()
    work = Path(tempfile.mkdtemp(prefix="tune_conc."))
    ks = [int(x) for x in args.k.split(",")]
    concs = [int(x) for x in args.concurrency.split(",")]
    if args.src:
        src = args.src
    else:
        from factory import make_tiny_llama  # tests/factory.py (on sys.path via _common)

        model = args.model or str(make_tiny_llama(work / "target"))
        cfg = config_from_dict({"model": model, "enforce_eager": True, "max_model_len": 512, "max_num_seqs": 8,
                                "speculative_config": {"method": NGRAM, "num_speculative_tokens": ks[0],
                                                       "prompt_lookup_max": 4, "prompt_lookup_min": 1}})
        res = tune(cfg, ks=ks, concurrency=concs, num_prompts=args.prompts, output_len=args.output_len,
                   out_dir=work / "out", kv_cache_space_gib=1, allow_hub=False, start_timeout=1800, bench_timeout=1800,
                   progress=lambda e: print(f"  [{e.get('stage')}] {e.get('message')}", flush=True))
        src = res.json_path
        print(f"tune.json: {res.json_path}  chart: {res.chart_path}")
        g = sweep_grid(cfg, work / "grid", ks=ks, concurrency=concs, num_prompts=args.prompts,
                       output_len=args.output_len)
        print(f"the same sweep for vllm bench sweep serve ({g.entries} runs):\n  {g.command}")
    inp = plan_inputs_from_results(src)
    pts = {(p["k"], p["concurrency"]): p for p in inp["measured"]}
    ks_seen = sorted({k for k, _ in pts if k is not None})
    cs_seen = sorted({c for _, c in pts if c is not None})
    print("output tokens/s (k 0 = no speculation)")
    print("  conc " + "".join(f"{'k=' + str(k):>10s}" for k in ks_seen) + "   fastest   speed-up")
    by_c = {r["concurrency"]: r for r in inp["by_concurrency"]}
    for c in cs_seen:
        cells = "".join(f"{(pts.get((k, c)) or {}).get('output_tokens_per_s') or 0:10.1f}" for k in ks_seen)
        r = by_c.get(c) or {}
        sp = f"{r['speedup']:.3f}x" if r.get("speedup") else "-"
        print(f"  {c:4d} {cells}   {'k=' + str(r.get('best_k')) if r else '-':>7s}   {sp:>8s}")
    print(f"acceptance per position (cumulative): {inp['per_position']}  ({inp['acceptance_source']})")
    print(f"schedule: {inp['schedule']} (num_speculative_tokens {inp['schedule_max']}); {inp['schedule_note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
