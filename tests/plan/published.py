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
