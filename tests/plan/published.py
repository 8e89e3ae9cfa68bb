"""The published-measurements table (tests/data/spec_decode_published.yaml) and how the planner's
prediction is made for each row; shared by tests/plan/test_plan_published.py and
benchmarks/speedup_published.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from wizard.config import config_from_dict
from wizard.plan.acceptance import AcceptanceProfile
from wizard.plan.planner import plan

DATA = Path(__file__).resolve().parents[1] / "data" / "spec_decode_published.yaml"


def table() -> dict[str, list[dict[str, Any]]]:
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


def profile(row: dict[str, Any]) -> AcceptanceProfile:
    """The published acceptance of a row: per-position rates when given (cumulative unless
    ``per_position_kind: conditional``), else the geometric profile matching the published MAL at k."""
    src = row["source"]
    if "per_position" in row:
        if row.get("per_position_kind") == "conditional":
            return AcceptanceProfile.from_conditional(row["per_position"], src)
        return AcceptanceProfile.from_cumulative(row["per_position"], src)
    return AcceptanceProfile.from_mean_length(row["mean_acceptance_length"], row["k"], src)


def predicted_mal(row: dict[str, Any]) -> float:
    return profile(row).mean_acceptance_length(row["k"])


def predicted_speedup(row: dict[str, Any], *, calibrated: bool) -> float:
    """The planner's speed-up at the row's batch and k; ``calibrated`` uses the published
    baseline TPOT as the measured plain step (what ``wizard tune`` gives a user)."""
    spec: dict[str, Any] = {"method": row["method"], "num_speculative_tokens": row["k"]}
    if row.get("drafter"):
        spec["model"] = row["drafter"]
    cfg = config_from_dict({"model": row["target"], "tensor_parallel_size": row.get("tp", 1),
                            "max_num_seqs": max(1, row["batch"]), "speculative_config": spec})
    base = row.get("baseline_tpot_ms") if calibrated else None
    p = plan(cfg, hardware=row["gpu"], acceptance=profile(row), acceptance_source=row["source"],
             context_tokens=row.get("context_tokens"), k_max=max(8, row["k"]),
             baseline_step_s=base / 1e3 if base else None, baseline_batch=row["batch"])
    [b] = [b for b in p.speedup.batches if b.batch == max(1, row["batch"])]
    [pt] = [x for x in b.points if x.k == row["k"]]
    return pt.speedup


def split_rows(split: str) -> list[dict[str, Any]]:
    """The speed-up rows of one split ('fit' or 'test'; see the file's header)."""
    return [r for r in table()["speedup"] if r.get("split") == split]


def reference_row(row_id: str) -> dict[str, Any]:
    [row] = [r for r in table().get("reference", []) if r["id"] == row_id]
    return row


def predicted_curve(target: str, method: str, drafter: str | None, gpu: str, k: int, batches: list[int], *,
                    tp: int = 1, context_tokens: int | None = None, max_num_seqs: int = 1024) -> dict[int, float]:
    """The planner's speed-up at ``k`` for each batch size (acceptance: the configuration's
    default chain, i.e. the drafter's catalog entry or the family default)."""
    spec: dict[str, Any] = {"method": method, "num_speculative_tokens": k}
    if drafter:
        spec["model"] = drafter
    cfg = config_from_dict({"model": target, "tensor_parallel_size": tp, "max_num_seqs": max_num_seqs,
                            "speculative_config": spec})
    p = plan(cfg, hardware=gpu, context_tokens=context_tokens, k_max=max(8, k))
    out = {}
    for b in batches:
        rows = [r for r in p.speedup.batches if r.batch == b]
        if rows:
            out[b] = [x for x in rows[0].points if x.k == k][0].speedup
        else:  # between grid points: the model itself (the table's grid is 1, 2, 4 ...)
            out[b] = _speedup_at(cfg, gpu, k, b, context_tokens)
    return out


def _speedup_at(cfg, gpu: str, k: int, batch: int, context_tokens: int | None) -> float:
    cfg2 = cfg.model_copy(update={"max_num_seqs": batch})
    p = plan(cfg2, hardware=gpu, context_tokens=context_tokens, k_max=max(8, k))
    [b] = [r for r in p.speedup.batches if r.batch == batch]
    return [x for x in b.points if x.k == k][0].speedup


#: The one under-load shape of a catalog pair used by the fit (scripts/fit_speedup_cost.py): the
#: EAGLE-3 paper's batch-64 / batch-1 throughput gain for Llama-3.1-8B-Instruct on one H100
#: (SGLang: 1.38x at 64, 373.25 / 158.34 = 2.357x at 1). Only the ratio is used: it does not
#: depend on acceptance (the same drafter and data at both batch sizes), only on how the step
#: cost grows with batch. SGLang drafts a tree; with its documented defaults (speculative_num_steps
#: 5, speculative_eagle_topk 4, speculative_num_draft_tokens 8; the paper does not print its
#: settings, so these are assumed) a step verifies 8 tokens per sequence, as the planner's chain
#: with k = 7 does, which stands in for it here.
EAGLE3_PAPER_SHAPE = {"target": "meta-llama/Llama-3.1-8B-Instruct", "method": "eagle3",
                      "drafter": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "gpu": "H100", "k": 7,
                      "ratio_64_over_1": 1.38 / 2.3573,
                      "rows": ("l31-8b-eagle3-sglang-b64", "l31-8b-eagle3-sglang-b1")}


def predicted_paper_shape() -> float:
    s = EAGLE3_PAPER_SHAPE
    c = predicted_curve(s["target"], s["method"], s["drafter"], s["gpu"], s["k"], [1, 64])
    return c[64] / c[1]
