"""Predicted vs published speculative-decoding figures (issue 15 item 3).

    python benchmarks/speedup_published.py            # tables + summary, exit 0

Rows: tests/data/spec_decode_published.yaml (each with its source). Prints, per row, the
published mean acceptance length (MAL) or speed-up next to the planner's prediction and the
relative error; then the mean / max absolute error per table. Speed-up is predicted twice:
"roofline" from the hardware catalog alone (bandwidth, dense FLOPs, fitted per-pass overhead)
and "calibrated" with the published plain-decode TPOT as the measured baseline step (what
`wizard tune` gives a user). The test (tests/plan/test_plan_published.py) holds them to 5% / 20%.
"""

from __future__ import annotations

import time

import _common  # noqa: F401  (puts the repo root and tests/ on sys.path)

from plan.published import predicted_mal, predicted_speedup, table  # tests/plan/published.py


def _err(pred: float, pub: float) -> float:
    return 100.0 * (pred / pub - 1.0)


def main() -> int:
    t0 = time.perf_counter()
    rows = table()
    print("Mean acceptance length (tokens per verification step) from published per-position acceptance")
    print(f"{'row':44s} {'k':>2s} {'published':>9s} {'predicted':>9s} {'error':>7s}")
    mal_err = []
    for r in rows["mal"]:
        pred = predicted_mal(r)
        e = _err(pred, r["mean_acceptance_length"])
        mal_err.append(abs(e))
        print(f"{r['id']:44s} {r['k']:2d} {r['mean_acceptance_length']:9.3f} {pred:9.3f} {e:+6.1f}%")
    print()
    print("Speed-up (spec / no-spec output speed) at the published batch and k")
    print(f"{'row':26s} {'gpu':6s} {'batch':>5s} {'k':>2s} {'published':>9s} {'roofline':>8s} {'err':>7s}"
          f" {'calibrated':>10s} {'err':>7s}")
    roof_err, cal_err = [], []
    for r in rows["speedup"]:
        a, c = predicted_speedup(r, calibrated=False), predicted_speedup(r, calibrated=True)
        ea, ec = _err(a, r["speedup"]), _err(c, r["speedup"])
        roof_err.append(abs(ea))
        cal_err.append(abs(ec))
        print(f"{r['id']:26s} {r['gpu']:6s} {r['batch']:5d} {r['k']:2d} {r['speedup']:9.3f} {a:8.3f} {ea:+6.1f}%"
              f" {c:10.3f} {ec:+6.1f}%")
    print()
    print(f"MAL: {len(mal_err)} rows, mean |error| {sum(mal_err) / len(mal_err):.2f}%, max {max(mal_err):.2f}% (bound 5%)")
    print(f"speed-up roofline: {len(roof_err)} rows, mean |error| {sum(roof_err) / len(roof_err):.1f}%, "
          f"max {max(roof_err):.1f}% (bound 20%)")
    print(f"speed-up calibrated: {len(cal_err)} rows, mean |error| {sum(cal_err) / len(cal_err):.1f}%, "
          f"max {max(cal_err):.1f}% (bound 20%)")
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
