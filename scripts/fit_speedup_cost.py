"""Fit the load-dependent constants of the speed-up cost model (issue 24) to published measurements.

    python scripts/fit_speedup_cost.py            # prints the objective grid and its best point (~20 s)

What is fitted (wizard/plan/cost.py ``FITTED``): ``GEMM_SERIAL_FRACTION`` (the share of the
shorter of weight streaming and math a pass does not hide under the longer: small-M GEMMs run
far below peak) and ``PER_DRAFT_TOKEN_S`` (per drafted token
per step: rejection sampling, the drafter's sampling row, bookkeeping). Everything else is either
physical (datasheet bandwidth / FLOP/s, model sizes) or was fitted before on the batch-1 rows
(overheads; docs/plan.md).

Data: the ``split: fit`` rows of tests/data/spec_decode_published.yaml (each predicted twice:
from the catalog alone and calibrated with the published plain TPOT), plus one under-load shape,
the EAGLE-3 paper's batch-64 / batch-1 gain for Llama-3.1-8B on an H100 (tests/plan/published.py
``EAGLE3_PAPER_SHAPE``; only the ratio, weighted as much as all fit rows together). The ``test`` rows
are never read here. ``python scripts/fit_speedup_cost.py W`` weights the shape by W (default 1). Objective: mean squared log error. The grid is printed so a reviewer can see
how flat the optimum is.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "plan")]

from wizard.plan import cost  # noqa: E402
from published import EAGLE3_PAPER_SHAPE, predicted_paper_shape, predicted_speedup, split_rows  # noqa: E402

SERIAL_GRID = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
PER_TOKEN_GRID_US = [0, 10, 20, 25, 30, 35, 40, 45, 50, 55, 60, 70]


SHAPE_WEIGHT = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0


def objective(rows) -> tuple[float, float, float]:
    errs = []
    for r in rows:
        for cal in (False, True):
            errs.append(math.log(predicted_speedup(r, calibrated=cal) / r["speedup"]) ** 2)
    rows_term = sum(errs) / len(errs)
    shape = predicted_paper_shape()
    shape_term = math.log(shape / EAGLE3_PAPER_SHAPE["ratio_64_over_1"]) ** 2
    return rows_term + SHAPE_WEIGHT * shape_term, rows_term, shape


def main() -> int:
    rows = split_rows("fit")
    saved = {n: getattr(cost, n) for n in cost.FITTED}
    best = None
    print(f"fit rows: {len(rows)} (x2: roofline and calibrated) + the EAGLE-3 paper shape "
          f"{EAGLE3_PAPER_SHAPE['ratio_64_over_1']:.3f} (batch 64 / batch 1)")
    print("objective (mean squared log error) by GEMM_SERIAL_FRACTION (rows) x PER_DRAFT_TOKEN_S us (columns)")
    print("frac  " + " ".join(f"{u:>7d}" for u in PER_TOKEN_GRID_US))
    try:
        for h in SERIAL_GRID:
            line = []
            for u in PER_TOKEN_GRID_US:
                cost.GEMM_SERIAL_FRACTION, cost.PER_DRAFT_TOKEN_S = float(h), u * 1e-6
                obj, rows_term, shape = objective(rows)
                line.append(obj)
                if best is None or obj < best[0]:
                    best = (obj, h, u, rows_term, shape)
            print(f"{h:5.2f} " + " ".join(f"{x:7.4f}" for x in line))
    finally:
        for n, v in saved.items():
            setattr(cost, n, v)
    obj, h, u, rows_term, shape = best
    print()
    print(f"best: GEMM_SERIAL_FRACTION = {h}, PER_DRAFT_TOKEN_S = {u}e-6 s; objective {obj:.4f} "
          f"(rows {rows_term:.4f}, rms log error {math.sqrt(rows_term):.3f}); predicted shape {shape:.3f} "
          f"vs published {EAGLE3_PAPER_SHAPE['ratio_64_over_1']:.3f}")
    print(f"in wizard/plan/cost.py now: GEMM_SERIAL_FRACTION = {saved['GEMM_SERIAL_FRACTION']}, "
          f"PER_DRAFT_TOKEN_S = {saved['PER_DRAFT_TOKEN_S']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
