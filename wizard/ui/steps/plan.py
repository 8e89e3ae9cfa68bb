"""Step 5 · Plan: memory bars per GPU and the expected speed-up against k (wizard.plan)."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from wizard.ui import services

GIB = 1024**3


def plan_dict(plan: Any) -> dict[str, Any]:
    """The plan as a plain dict (as_json(), model_dump() or attributes)."""
    for attr in ("as_json", "model_dump", "to_dict"):
        fn = getattr(plan, attr, None)
        if callable(fn):
            d = fn()
            if isinstance(d, dict):
                return d
    if isinstance(plan, dict):
        return plan
    return dict(getattr(plan, "__dict__", {}))


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _empty_mem() -> pd.DataFrame:
    return pd.DataFrame({"bar": pd.Series(dtype="str"), "part": pd.Series(dtype="str"), "GiB": pd.Series(dtype="float")})


def memory_frame(d: dict[str, Any]) -> pd.DataFrame:
    """Rows (bar, part, GiB) for the stacked memory bars per GPU, from the plan's byte figures:
    one bar of what is used (weights, reserve, KV cache) and one of the budget."""
    rows = []
    used = "used per GPU"
    weights = d.get("weights_bytes") or {}
    if isinstance(weights, dict):
        for who, b in weights.items():
            if _num(b):
                rows.append((used, f"{who} weights", _num(b) / GIB))
    reserve = d.get("reserve_bytes")
    if isinstance(reserve, dict):
        for who, b in reserve.items():
            if _num(b):
                rows.append((used, f"reserve: {who.replace('_', ' ')}", _num(b) / GIB))
    elif _num(reserve):
        rows.append((used, "reserve", _num(reserve) / GIB))
    kvb = d.get("kv_cache_bytes")
    if isinstance(kvb, dict):
        for who, b in kvb.items():
            if _num(b):
                rows.append((used, f"{who} KV cache", _num(b) / GIB))
    elif _num(kvb):
        rows.append((used, "KV cache", max(0.0, _num(kvb)) / GIB))
    for key, label in (("budget_bytes", "budget (× gpu_mem_util)"), ("memory_per_device_bytes", "device memory")):
        if _num(d.get(key)):
            rows.append((label, label, _num(d[key]) / GIB))
    if not rows:
        return _empty_mem()
    return pd.DataFrame(rows, columns=["bar", "part", "GiB"])


def speedup_frame(d: dict[str, Any]) -> pd.DataFrame:
    """Rows (k, speedup) from the plan's speed-up table (list of dicts or {k: x})."""
    tab = None
    for key in ("speedup", "speedup_table", "speed_up", "speedup_curve"):
        if key in d:
            tab = d[key]
            break
    rows = []
    if isinstance(tab, dict) and "table" in tab:
        tab = tab["table"]
    if isinstance(tab, dict):
        for k, v in tab.items():
            try:
                rows.append((int(k), float(v if not isinstance(v, dict) else v.get("speedup"))))
            except (TypeError, ValueError):
                continue
    elif isinstance(tab, list):
        for r in tab:
            if isinstance(r, dict):
                k = r.get("k", r.get("num_speculative_tokens"))
                v = r.get("speedup", r.get("expected_speedup", r.get("speed_up")))
                if _num(k) is not None and _num(v) is not None:
                    rows.append((int(k), float(v)))
    if not rows:
        return _empty_speedup()
    return pd.DataFrame(sorted(rows), columns=["k", "speedup"]).astype({"k": "int64", "speedup": "float64"})


def _empty_speedup() -> pd.DataFrame:
    return pd.DataFrame({"k": pd.Series(dtype="int64"), "speedup": pd.Series(dtype="float64")})


def build(ui) -> None:
    ui.c["plan_md"] = gr.Markdown("_Open this step to compute the plan._", elem_id="sw-plan-md")
    with gr.Row():
        ui.c["plan_mem"] = gr.BarPlot(_empty_mem(), x="part", y="GiB", title="Memory per GPU (GiB)",
                                      elem_id="sw-plan-mem", height=340, x_label_angle=-30, sort=None)
        ui.c["plan_speedup"] = gr.LinePlot(_empty_speedup(), x="k", y="speedup",
                                           title="Expected speed-up vs num_speculative_tokens", elem_id="sw-plan-speedup",
                                           height=320)
    with gr.Accordion("Plan (raw figures)", open=False):
        ui.c["plan_json"] = gr.JSON(label="Plan (raw figures)", visible=False)


def compute(ui, ev) -> dict:
    """Updates for the Plan step (called when the step is opened and after changes while open)."""
    c = ui.c
    if ev is None or ev.ctx is None:
        return {c["plan_md"]: "The plan needs a **target model** (step 2)."}
    try:
        p = services.plan_for(ev.ctx)
    except services.Unavailable as err:
        return {c["plan_md"]: f"The planner is not available: it {err}. The memory bars and the speed-up curve "
                              "appear here once `wizard.plan` is installed."}
    except Exception as err:
        return {c["plan_md"]: f"The plan could not be computed: {type(err).__name__}: {err}. "
                              "It needs the model's facts (step 2) and the hardware (step 1)."}
    d = plan_dict(p)
    mem, sp = memory_frame(d), speedup_frame(d)
    lines = []
    cap = d.get("kv_capacity_tokens")
    if cap is not None:
        lines.append(f"KV capacity: **{cap:,} tokens**" if isinstance(cap, int) else f"KV capacity: **{cap}**")
    if d.get("max_concurrency") is not None:
        lines.append(f"max concurrency at max_model_len: **{d['max_concurrency']}**")
    kvb = d.get("kv_bytes_per_token")
    if isinstance(kvb, dict):
        lines.append("KV bytes/token: " + ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in kvb.items()))
    sp_d = d.get("speedup") if isinstance(d.get("speedup"), dict) else {}
    if sp_d.get("best_k"):
        lines.append(f"best k by the estimate: **{sp_d['best_k']}** (configured k = {sp_d.get('k')})")
    if sp_d.get("acceptance_source"):
        lines.append(f"acceptance: {sp_d['acceptance_source']}")
    if sp_d.get("measured"):
        lines.append(f"measured on the running server: {sp_d['measured']}")
    if d.get("fits") is False:
        lines.append(f"**Does not fit:** {d.get('fit_problem')}")
    for v in d.get("variants", []) or []:
        if isinstance(v, dict) and v.get("label"):
            lines.append(f"- variant *{v['label']}*: target KV {v.get('target_kv_dtype')}, drafter KV "
                         f"{v.get('drafter_kv_dtype')} → {v.get('kv_capacity_tokens', '?'):,} tokens" if isinstance(v.get('kv_capacity_tokens'), int)
                         else f"- variant *{v['label']}*: target KV {v.get('target_kv_dtype')}, drafter KV {v.get('drafter_kv_dtype')}")
    for n in d.get("notes", []) or []:
        lines.append(f"- {n}")
    if mem.empty:
        lines.append("_The plan has no memory figures (it needs the hardware, step 1)._")
    if sp.empty:
        lines.append("_No speed-up curve (it needs a speculative method, step 3)._")
    return {c["plan_md"]: "  \n".join(lines) or "Plan computed.", c["plan_mem"]: mem, c["plan_speedup"]: sp,
            c["plan_json"]: gr.JSON(value=d, visible=True)}
