"""Step 5 · Plan: memory bars per GPU and the expected speed-up against k (wizard.plan), with the
measured acceptance per draft position as an input (typed, or filled from the Launch step)."""

from __future__ import annotations

import html
from typing import Any

import gradio as gr
import pandas as pd

from wizard.api import PLAN_TASKS as TASKS, speedup_chart_rows
from wizard.ui import services
from wizard.ui.core import QUIET, WizardUI, sess_of
from wizard.ui.state import browser_safe, redact_state

GIB = 1024**3

#: what the acceptance box takes: cumulative rates, as the planner reads them
#: (:func:`wizard.ui.services.plan_for` plans with ``acceptance_kind="cumulative"``)
ACCEPTANCE_INFO = ("Cumulative acceptance p1, p2, … (non-increasing): p_i is the share of drafts whose first i tokens "
                   "were all accepted — vLLM's \"Per-position acceptance rate\", as the Launch step measures it. "
                   "Empty: the planner's assumption for the method.")


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
    return pd.DataFrame({"part": pd.Series(dtype="str"), "GiB": pd.Series(dtype="float")})


#: bar order of the memory chart (parts of one GPU's memory, bottom-up as vLLM allocates it)
MEM_PARTS = ("target weights", "drafter weights", "reserve", "target KV", "drafter KV", "free")


def memory_frame(d: dict[str, Any]) -> pd.DataFrame:
    """Rows (part, GiB) of one GPU's memory in :data:`MEM_PARTS` order, from the plan's byte figures.

    * weights: ``weights_bytes`` {target, drafter}; reserve: the sum of ``reserve_bytes``
      (activations, CUDA graphs, non-torch);
    * KV: ``kv_cache_bytes`` split between target and drafter by ``kv_bytes_per_token`` (both
      caches get the same number of blocks, so bytes divide as bytes per token do);
    * free: device memory minus everything above (what gpu_memory_utilization leaves out).
    Totals (budget, device memory) are not bars: see :func:`memory_totals`.
    """
    parts: dict[str, float] = {}
    weights = d.get("weights_bytes") or {}
    if isinstance(weights, dict):
        for who in ("target", "drafter"):
            if _num(weights.get(who)):
                parts[f"{who} weights"] = _num(weights[who])
    reserve = d.get("reserve_bytes")
    if isinstance(reserve, dict):
        total = sum(_num(b) or 0.0 for b in reserve.values())
        if total:
            parts["reserve"] = total
    elif _num(reserve):
        parts["reserve"] = _num(reserve)
    kvb = d.get("kv_cache_bytes")
    per_tok = d.get("kv_bytes_per_token") if isinstance(d.get("kv_bytes_per_token"), dict) else {}
    if isinstance(kvb, dict):
        for who in ("target", "drafter"):
            if _num(kvb.get(who)):
                parts[f"{who} KV"] = max(0.0, _num(kvb[who]))
    elif _num(kvb) is not None:
        kv = max(0.0, _num(kvb))
        t, dr = _num(per_tok.get("target")) or 0.0, _num(per_tok.get("drafter")) or 0.0
        if t + dr > 0:
            parts["target KV"] = kv * t / (t + dr)
            if dr:
                parts["drafter KV"] = kv * dr / (t + dr)
        else:
            parts["target KV"] = kv
    dev = _num(d.get("memory_per_device_bytes"))
    if dev and parts:
        parts["free"] = max(0.0, dev - sum(parts.values()))
    if not parts:
        return _empty_mem()
    rows = [(p, parts[p] / GIB) for p in MEM_PARTS if p in parts]
    return pd.DataFrame(rows, columns=["part", "GiB"])


def memory_totals(d: dict[str, Any]) -> str:
    """One line of the totals beside the bars: budget and device memory per GPU (GiB, 1 decimal)."""
    dev, budget = _num(d.get("memory_per_device_bytes")), _num(d.get("budget_bytes"))
    util = d.get("gpu_memory_utilization")
    bits = []
    if budget:
        bits.append(f"budget **{budget / GIB:.1f} GiB**" + (f" (gpu_memory_utilization {util})" if util is not None else ""))
    if dev:
        bits.append(f"device memory **{dev / GIB:.1f} GiB**")
    return ("Per GPU: " + " of ".join(bits)) if bits else ""


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


def _empty_speedup_chart() -> pd.DataFrame:
    return pd.DataFrame({"k": pd.Series(dtype="str"), "speedup": pd.Series(dtype="float64"),
                         "batch": pd.Series(dtype="str")})


def speedup_chart(sp: pd.DataFrame, plan: Any = None) -> pd.DataFrame:
    """Chart rows with k as text (ordinal axis: whole k ticks only), one line per batch size
    (:func:`wizard.api.speedup_chart_rows`); without per-batch rows, the batch-1 table."""
    try:
        rows = speedup_chart_rows(plan) if plan is not None else []
    except (AttributeError, TypeError):  # not a Plan (a stand-in without per-batch rows)
        rows = []
    if rows:
        return pd.DataFrame({"k": [str(int(r["k"])) for r in rows],
                             "speedup": [float(r["speedup"]) for r in rows],
                             "batch": [f"batch {r['batch']}" for r in rows]})
    if sp.empty:
        return _empty_speedup_chart()
    return pd.DataFrame({"k": [str(int(k)) for k in sp["k"]], "speedup": sp["speedup"].astype("float64"),
                         "batch": ["batch 1"] * len(sp)})


#: one colour per batch-size line, in the order the lines come (Vega's default palette has 10; the
#: plan draws a line per batch size 1, 2, 4 ... max_num_seqs, 11 by default): Tableau 20
LINE_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
               "#79706e", "#1f77b4", "#8cd17d", "#d4a6c8", "#86bcb6", "#f1ce63", "#a0cbe8", "#ffbe7d", "#d37295",
               "#b6992d", "#499894")


def _batch_labels(chart: Any) -> list[str]:
    """The batch labels of the chart's rows, first appearance order."""
    labels: list[str] = []
    if isinstance(chart, pd.DataFrame):
        labels = [str(b) for b in chart["batch"]] if "batch" in chart else []
    elif chart is not None:
        cols = chart.get("columns") if isinstance(chart, dict) else getattr(chart, "columns", None)
        rows = chart.get("data") if isinstance(chart, dict) else getattr(chart, "data", None)
        if isinstance(cols, list) and "batch" in cols and isinstance(rows, list):
            i = cols.index("batch")
            labels = [str(r[i]) for r in rows if isinstance(r, (list, tuple)) and len(r) > i]
    return list(dict.fromkeys(labels))


def speedup_caption(chart: Any) -> str:
    """The line under the speed-up chart: which batch sizes (concurrent requests) have a line.
    ``chart``: the chart's rows (:func:`speedup_chart`) or the chart's value as the browser holds
    it (Gradio's PlotData: ``columns`` and ``data``)."""
    labels = _batch_labels(chart)
    if not labels:
        return "No speed-up curve yet: it needs a target, a speculative method and the hardware."
    return f"One line per batch size (concurrent requests): {', '.join(b.removeprefix('batch ') for b in labels)}."


def speedup_caption_update(chart: Any):
    """The chart's second update, after its rows arrived: the caption naming the batch sizes.

    Gradio 6.31's LinePlot computes the colour scale's domain (the batch labels) only when it
    builds the chart spec, from the rows it holds then, and rebuilds the spec when a setting such
    as the caption changes, not when the rows do: with rows alone every line was drawn with
    ``stroke: none`` and a legend of 0 values; with rows and caption in one update the spec was
    rebuilt from the rows before them (an empty chart). So the rows come first and the caption,
    which names the batch sizes and so changes whenever the set of lines does, follows, with one
    colour per line (:data:`LINE_COLORS`)."""
    labels = _batch_labels(chart)
    colors = {b: LINE_COLORS[i % len(LINE_COLORS)] for i, b in enumerate(labels)}
    return gr.LinePlot(caption=speedup_caption(chart), color_map=colors or None)


def compute_safe(ui, state: dict) -> dict:
    """:func:`compute` for the state, never raising: a failure becomes a message in the step
    (never Gradio "Error" badges), and nothing the browser cannot hold is sent (ints beyond 2**53
    as text)."""
    c = ui.c
    try:
        return compute(ui, ui.evaluate(state) if hasattr(ui, "evaluate") else services.evaluate(state), state)
    except Exception as err:  # the step must show why, not an Error badge
        return {c["plan_md"]: f"The plan could not be computed: {type(err).__name__}: {err}",
                c["plan_mem"]: _empty_mem(), c["plan_speedup"]: _empty_speedup_chart(),
                c["plan_json"]: gr.JSON(value=None, visible=False)}


def _fmt(x: Any) -> str:
    """A figure for the text: ints with thousands separators, floats with 2 decimals."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:,.2f}"
    return str(x)


def build(ui: WizardUI) -> None:
    # planned as cumulative rates (wizard.plan.acceptance: p_i = P(drafts 1..i all accepted), what
    # vLLM logs as "Per-position acceptance rate" and what the Launch step measures)
    ui.field("acceptance", gr.Textbox(label="Measured acceptance per draft position (optional)",
                                      placeholder="e.g. 0.7, 0.48, 0.31 — filled from the Launch step's measurement",
                                      info=ACCEPTANCE_INFO, elem_id="f-acceptance"),
             source="setting", to_form=lambda v: v or "", setter=_set_acceptance)
    # the task picks the method's published acceptance when none is measured (wizard.plan.acceptance.TASK_PRIORS)
    ui.field("plan_task", gr.Dropdown(choices=[("any (the drafter's own figure)", "")] + [(t, t) for t in TASKS],
                                      value="", label="Workload task (acceptance prior)", elem_id="f-plan-task",
                                      info="chat, code, math or summarization: the published acceptance of the method "
                                           "for that task is planned with when no measured acceptance is entered"),
             source="setting", to_form=lambda v: v or "", setter=_set_task)
    ui.c["plan_md"] = gr.Markdown("_Open this step to compute the plan._", elem_id="sw-plan-md")
    with gr.Row():
        ui.c["plan_mem"] = gr.BarPlot(_empty_mem(), x="part", y="GiB", title="Memory per GPU (GiB)",
                                      elem_id="sw-plan-mem", height=340, x_label_angle=-30, sort=list(MEM_PARTS))
        # k as text: an ordinal axis shows whole k only (a number axis ticks 1.5, 2.5, ... and
        # runs "7.5" into "8.0")
        ui.c["plan_speedup"] = gr.LinePlot(_empty_speedup_chart(), x="k", y="speedup", color="batch",
                                           title="Expected speed-up vs k", x_title="num_speculative_tokens (k)",
                                           y_title="speed-up (×)", color_title="batch size",
                                           caption=speedup_caption(_empty_speedup_chart()), elem_id="sw-plan-speedup",
                                           height=340, x_label_angle=0, sort=[str(k) for k in range(1, 65)])
    with gr.Accordion("Plan (raw figures)", open=False):
        ui.c["plan_json"] = gr.JSON(label="Plan (raw figures)", visible=False)


def _set_task(state: dict, value) -> dict:
    st = dict(state)
    if value in TASKS:
        st["plan_task"] = value
    else:
        st.pop("plan_task", None)
    return st


def _set_acceptance(state: dict, value) -> dict:
    st = dict(state)
    st["acceptance"] = str(value or "").strip()[:400]
    if not st["acceptance"]:
        st.pop("acceptance", None)
    st.pop("acceptance_source", None)  # typed by the user from now on
    return st


def _row(sp_d: dict, k: Any) -> dict | None:
    """The batch-1 table row (:attr:`wizard.plan.speedup.SpeedupEstimate.table`) of ``k``."""
    return next((r for r in sp_d.get("table") or [] if isinstance(r, dict) and r.get("k") == k), None)


def _x(v: Any) -> str:
    return f"{v:.2f}×" if _num(v) is not None else "?"


def best_k_line(sp_d: dict) -> str:
    """The core's best k at batch 1 beside the configured k, and why they differ when they do:
    the configured k is past the checkpoint's limit (``k_cap``: never recommended, whatever its
    estimated speed-up), or another k is faster by the estimate. No k at all when none beats plain
    decoding (``best_k`` None). The limit's reason is the table's head (:func:`k_table_md`)."""
    best, k = sp_d.get("best_k"), sp_d.get("k")
    cap = sp_d.get("k_cap")
    b_row, k_row = _row(sp_d, best), _row(sp_d, k)
    if best is None:
        top = max((r for r in sp_d.get("table") or [] if isinstance(r, dict) and not r.get("beyond_checkpoint")
                   and _num(r.get("speedup")) is not None), key=lambda r: r["speedup"], default=None)
        return ("No k recommended: by the estimate no k speeds up a single request over plain decoding"
                + (f" (at best {_x(top['speedup'])}, k = {top['k']})" if top else "")
                + "; run without speculation, or measure it (Launch step, Tune).")
    line = f"best k by the estimate: **{best}**" + (f" ({_x(b_row.get('speedup'))} at batch 1)" if b_row else "")
    if k is None:
        return line + "; num_speculative_tokens is not set (Speculation step)"
    if k == best:
        return line + " — the configured k"
    if k_row is not None and k_row.get("beyond_checkpoint"):
        faster = _num(k_row.get("speedup")) is not None and b_row is not None and \
            k_row["speedup"] > (_num(b_row.get("speedup")) or 0)
        return (line + f"; the configured k = {_fmt(k)} is past the checkpoint's limit (k ≤ {cap}), so it is never "
                "recommended" + (f", although its estimate is higher ({_x(k_row.get('speedup'))})" if faster else ""))
    if k_row is not None:
        return line + f"; the configured k = {_fmt(k)} gives {_x(k_row.get('speedup'))}"
    return line + f" (configured k = {_fmt(k)})"


def k_table_md(sp_d: dict, recommend: bool = True) -> str:
    """The core's batch-1 speed-up table (one row per k) as Markdown: the best k (``best_k``) and
    the configured k (``k``) marked, each in its own words, and the rows past the checkpoint's
    limit (``beyond_checkpoint``) flagged. ``recommend`` False (the configuration would not load,
    or the core withheld its recommendation): no row is marked best and the table is
    hypothetical. "" without a table."""
    rows = [r for r in sp_d.get("table") or [] if isinstance(r, dict) and _num(r.get("k")) is not None]
    if not rows:
        return ""
    best = sp_d.get("best_k") if recommend else None
    out = ["| k | tokens per step | step cost | speed-up (batch 1) | note |", "|---|---|---|---|---|"]
    for r in rows:
        marks = []
        if best is not None and r["k"] == best:
            marks.append("**★ best**")
        if r["k"] == sp_d.get("k"):
            marks.append("◀ configured")
        if r.get("beyond_checkpoint"):
            marks.append("past the checkpoint's limit (never recommended)")
        out.append(f"| {_fmt(r['k'])} | {_x(r.get('expected_tokens_per_step')).rstrip('×')} | "
                   f"{_x(r.get('relative_step_cost'))} | {_x(r.get('speedup'))} | {' · '.join(marks)} |")
    head = "**Speed-up by k at batch 1** (estimate" + ("" if recommend else "; hypothetical") + ")"
    if sp_d.get("k_cap"):
        head += f" — k limit {sp_d['k_cap']}" + (f": {html.escape(str(sp_d['k_cap_reason']))}" if sp_d.get("k_cap_reason") else "")
    return f"\n{head}\n\n" + "\n".join(out) + "\n"


def compute(ui, ev, state: dict | None = None) -> dict:
    """Updates for the Plan step (called when the step is opened and when the acceptance changes).
    ``state['acceptance']``: per-position acceptance to plan with (typed or measured)."""
    c = ui.c
    if ev is None or ev.ctx is None:
        return {c["plan_md"]: "The plan needs a **target model** (step 2)."}
    rates, problem = services.parse_acceptance((state or {}).get("acceptance"))
    source = (state or {}).get("acceptance_source") or "entered in the Plan step"
    try:
        task = (state or {}).get("plan_task")
        p = services.plan_for(ev.ctx, rates, source, task=task if task in TASKS else None, report=ev.report)
    except Exception as err:
        return {c["plan_md"]: f"The plan could not be computed: {type(err).__name__}: {err}. "
                              "It needs the model's facts (step 2) and the hardware (step 1)."}
    d = plan_dict(p)
    mem, sp = memory_frame(d), speedup_frame(d)
    lines = []
    cap = d.get("kv_capacity_tokens")
    if cap is not None:
        lines.append(f"KV capacity: **{_fmt(cap)} tokens**")
    if d.get("max_concurrency") is not None:
        lines.append(f"max concurrency at max_model_len: **{_fmt(d['max_concurrency'])}**")
    kvb = d.get("kv_bytes_per_token")
    if isinstance(kvb, dict):
        lines.append("KV bytes/token: " + ", ".join(f"{k} {_fmt(v)}" for k, v in kvb.items()))
    totals = memory_totals(d)
    if totals:
        lines.append(totals)
    sp_d = d.get("speedup") if isinstance(d.get("speedup"), dict) else {}
    blocked = d.get("fits") is False or (ev.report is not None and ev.report.verdict == "error")
    if problem:
        lines.append(f"**⚠ Measured acceptance not used:** {html.escape(problem)}")
    if sp_d.get("withheld") and d.get("fits") is None:
        pass  # the plan is incomplete: said below, with the reason
    elif sp_d.get("withheld"):  # the core withholds every k recommendation for a config that does not fit
        lines.append(f"No k recommended: {html.escape(str(sp_d['withheld']))}; fix that first (see the Live check). "
                     "The speed-up chart is hypothetical (if it fitted).")
    elif blocked and sp_d.get("best_k"):
        lines.append("No k recommended: this configuration has error findings and would not load; fix that first "
                     "(see the Live check). The speed-up chart is hypothetical (if it loaded).")
    elif sp_d.get("table"):
        lines.append(best_k_line(sp_d))
    by_batch = sp_d.get("best_k_by_batch")
    if not blocked and isinstance(by_batch, dict) and len(by_batch) > 1:
        lines.append("best k per batch size: " + ", ".join(f"{b} → {k if k is not None else 'none'}"
                                                          for b, k in by_batch.items()))
    if not blocked and sp_d.get("stops_paying_above") is not None:
        lines.append(f"speculation stops paying above **{_fmt(sp_d['stops_paying_above'])}** concurrent requests")
    sched = sp_d.get("k_schedule")
    if blocked and not sp_d.get("withheld"):
        pass  # error findings: no schedule for a configuration that would not load
    elif isinstance(sched, list) and sched:
        lines.append("k schedule (`num_speculative_tokens_per_batch_size`, num_speculative_tokens "
                     f"{_fmt(sp_d.get('k_schedule_max'))}): " + ", ".join(
                         f"{a}–{b} → {'off' if k == 0 else k}" for a, b, k in sched
                         if isinstance(a, int) and isinstance(b, int) and isinstance(k, int)))
    elif sp_d.get("k_schedule_note"):
        lines.append(f"k schedule: {html.escape(str(sp_d['k_schedule_note']))}")
    if sp_d.get("acceptance_source"):
        rates_txt = ", ".join(f"{x:.2f}" for x in (sp_d.get("acceptance_rates") or [])[:8])
        lines.append(f"acceptance: {sp_d['acceptance_source']}" + (f" ({rates_txt})" if rates_txt else ""))
        acc_d = sp_d.get("acceptance") if isinstance(sp_d.get("acceptance"), dict) else {}
        if acc_d.get("setup"):
            lines.append(f"acceptance measured on: {html.escape(str(acc_d['setup']))}")
    table = k_table_md(sp_d, recommend=not blocked and not sp_d.get("withheld"))
    if table:
        lines.append(table)
    if sp_d.get("measured"):
        lines.append(f"measured on the running server: {sp_d['measured']}")
    if d.get("fits") is False:
        lines.append(f"**Does not fit:** {d.get('fit_problem')}")
    elif d.get("fits") is None and d.get("fit_problem"):  # the core could not tell: no verdict, no speed-ups
        lines.append(f"**Fit unknown (plan incomplete):** {html.escape(str(d['fit_problem']))}")
    for v in d.get("variants", []) or []:
        if isinstance(v, dict) and v.get("label"):
            lines.append(f"- variant *{v['label']}*: target KV {v.get('target_kv_dtype')}, drafter KV "
                         f"{v.get('drafter_kv_dtype')} → {_fmt(v.get('kv_capacity_tokens'))} tokens" if isinstance(v.get('kv_capacity_tokens'), int)
                         else f"- variant *{v['label']}*: target KV {v.get('target_kv_dtype')}, drafter KV {v.get('drafter_kv_dtype')}")
    for n in d.get("notes", []) or []:
        lines.append(f"- {n}")
    if mem.empty:
        lines.append("_The plan has no memory figures (it needs the hardware, step 1)._")
    if sp.empty and d.get("fits") is None and d.get("fit_problem"):
        lines.append("_No speed-up curve: it needs the target model's size (step 2)._")
    elif sp.empty:
        lines.append("_No speed-up curve (it needs a speculative method, step 3)._")
    return {c["plan_md"]: "  \n".join(lines) or "Plan computed.", c["plan_mem"]: mem, c["plan_speedup"]: speedup_chart(sp, p),
            c["plan_json"]: gr.JSON(value=browser_safe(d), visible=True)}


def wire(ui: WizardUI) -> None:
    c = ui.c
    outs = [c["plan_md"], c["plan_mem"], c["plan_speedup"], c["plan_json"]]
    acc = ui.fields["acceptance"]

    def open_plan(state, request: gr.Request = None):
        st = ui.base(sess_of(request), state)
        out = compute_safe(ui, st)
        out[acc] = st.get("acceptance") or ""
        return out

    # the charts are laid out while the tab is still appearing; a resize makes Vega measure the
    # axis labels again (without it they were cut off on the first showing)
    chart = c["plan_speedup"]

    def caption_step(dep):  # the caption follows the rows (see speedup_caption_update)
        return dep.then(speedup_caption_update, [chart], [chart], **QUIET)

    caption_step(ui.on(c["tab_plan"].select, open_plan, [c["state"]], outs + [acc])).then(
        None, None, None, js="() => { for (const t of [150, 600]) setTimeout(() => window.dispatchEvent(new Event('resize')), t); }")

    def acceptance_changed(state, value, request: gr.Request = None):
        sess = sess_of(request)
        base = ui.base(sess, state)
        if str(value or "").strip() == str(base.get("acceptance") or ""):
            return {c["plan_md"]: gr.skip()}
        st = ui.update_field(sess, state, lambda b: _set_acceptance(b, value))
        out = compute_safe(ui, st)
        out[c["state"]] = st
        # the acceptance is part of the session: the Save file and the browser's copy follow at once
        # (the panel does not change here, so the sync that follows a panel change never ran)
        out[c["bstate"]] = browser_safe(redact_state(st))
        out[c["session_dl"]] = ui.session_file(st)
        return out

    caption_step(ui.on(acc.change, acceptance_changed, [c["state"], acc], [c["state"], c["bstate"], c["session_dl"], *outs],
                       trigger_mode="always_last"))

    task = ui.fields["plan_task"]

    def task_changed(state, value, request: gr.Request = None):
        sess = sess_of(request)
        base = ui.base(sess, state)
        if (value or "") == (base.get("plan_task") or ""):
            return {c["plan_md"]: gr.skip()}
        st = ui.update_field(sess, state, lambda b: _set_task(b, value))
        out = compute_safe(ui, st)
        out[c["state"]] = st
        out[c["bstate"]] = browser_safe(redact_state(st))
        out[c["session_dl"]] = ui.session_file(st)
        return out

    caption_step(ui.on(task.change, task_changed, [c["state"], task], [c["state"], c["bstate"], c["session_dl"], *outs],
                       trigger_mode="always_last"))
