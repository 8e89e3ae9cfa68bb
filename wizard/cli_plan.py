"""CLI faces of the planner and the tuner (``python -m wizard plan`` / ``tune``): hardware
discovery (NVML, else ``--gpu``), argument conversion, text rendering. No planning knowledge
lives here: the figures come from :func:`wizard.api.plan` and :func:`wizard.api.tune`; the k bound
is :data:`wizard.plan.inputs.K_HARD_MAX` (the UI reads the same).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from wizard import api
from wizard.config import ServeConfig
from wizard.hardware.catalog import lookup, parse_gpu_spec
from wizard.hardware.spec import Hardware
from wizard.plan.kv import GiB
from wizard.plan.acceptance import AcceptanceInputError, parse_rates
from wizard.plan.inputs import MAX_CONTEXT_TOKENS
from wizard.plan.inputs import K_HARD_MAX, MAX_CONCURRENCY

if TYPE_CHECKING:  # the launch stack is imported by `tune` only (`check` and `plan` start without it)
    from wizard.launch.tune import TuneResult
    from wizard.plan.planner import Plan

__all__ = ["rates_arg", "ks_arg", "concurrency_arg", "k_max_arg", "context_tokens_arg", "MAX_CONTEXT_TOKENS", "cmd_plan", "cmd_tune", "render_plan_text", "render_tune_text"]


def rates_arg(text: str) -> list[float]:
    """argparse type for ``--acceptance 0.7,0.5,0.3``."""
    try:
        return parse_rates(text)
    except AcceptanceInputError as err:
        raise argparse.ArgumentTypeError(str(err).split(": ", 1)[-1]) from None


def ks_arg(text: str) -> list[int]:
    """argparse type for ``--k 1,2,4`` (or a range ``1-4``)."""
    out: list[int] = []
    for part in [p for p in text.replace(" ", "").split(",") if p]:
        lo, _, hi = part.partition("-")
        if not (lo.isascii() and lo.isdigit() and (not hi or (hi.isascii() and hi.isdigit()))) or len(part) > 9:
            raise argparse.ArgumentTypeError(f"{part[:20]!r}: give k values such as 1,2,4 or a range 1-4")
        a, b = int(lo), int(hi or lo)
        if a > b:
            raise argparse.ArgumentTypeError(f"{part[:20]!r}: the range is reversed; write it low to high, e.g. {b}-{a}")
        if not 1 <= a <= b <= K_HARD_MAX:
            raise argparse.ArgumentTypeError(f"{part[:20]!r}: k must be between 1 and {K_HARD_MAX}")
        out += [k for k in range(a, b + 1) if k not in out]
    if not out:
        raise argparse.ArgumentTypeError("give at least one k, e.g. 1,2,4")
    return out


def concurrency_arg(text: str) -> list[int]:
    """argparse type for ``tune --concurrency 1,4,16`` (one value or a list; whole numbers from 1
    to :data:`wizard.plan.inputs.MAX_CONCURRENCY`, the bound ``wizard.launch.tune`` checks again)."""
    out: list[int] = []
    for part in [p for p in text.replace(" ", "").split(",") if p]:
        if not (part.isascii() and part.isdigit()) or len(part) > 5 or not 1 <= int(part) <= MAX_CONCURRENCY:
            raise argparse.ArgumentTypeError(f"{part[:20]!r}: give concurrencies such as 1,4,16 (1 to {MAX_CONCURRENCY})")
        if int(part) not in out:
            out.append(int(part))
    if not out:
        raise argparse.ArgumentTypeError("give at least one concurrency, e.g. 4 or 1,4,16")
    return sorted(out)


def k_max_arg(text: str) -> int:
    """argparse type for ``plan --k-max K``: a whole number from 1 to :data:`K_HARD_MAX`."""
    t = text.strip()
    if not (t.isascii() and t.isdigit()) or len(t) > 5 or not 1 <= int(t) <= K_HARD_MAX:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be a whole number from 1 to {K_HARD_MAX}")
    return int(t)


def context_tokens_arg(text: str) -> int:
    """argparse type for ``plan --context-tokens N``: a whole number from 1 to
    :data:`wizard.plan.inputs.MAX_CONTEXT_TOKENS` (the bound the planner checks again)."""
    t = text.strip().replace("_", "")
    if not (t.isascii() and t.isdigit()) or len(t) > 9 or not 1 <= int(t) <= MAX_CONTEXT_TOKENS:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be a whole number of tokens from 1 to {MAX_CONTEXT_TOKENS}")
    return int(t)


def positive_ms_arg(text: str) -> float:
    """argparse type for ``plan --baseline-tpot-ms MS``: a finite number of milliseconds, > 0 and at
    most 10**7 (the bound the option had as seconds)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number (milliseconds)") from None
    if v != v or not 0 < v <= 10 ** 7:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be > 0 and at most 10000000 milliseconds")
    return v


def _hardware(args: argparse.Namespace) -> Hardware | None:
    """--gpu, else NVML discovery, else the CPU when a CPU KV budget is given."""
    if getattr(args, "gpu", None):
        return parse_gpu_spec(args.gpu)
    from wizard.hardware.nvml import discover, to_hardware  # NVML: plan and tune only

    hw = to_hardware(discover())
    if hw is None and (getattr(args, "kv_cache_space_gib", None) is not None or os.environ.get("VLLM_CPU_KVCACHE_SPACE")):
        hw = lookup("cpu")
    return hw


def cmd_plan(args: argparse.Namespace, cfg: ServeConfig, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``plan``: 0, 1 when the configuration does not fit or the check refuses it (its error
    findings, ``Plan.refused_by``), 2 (unusable input, as in wizard.cli)
    when the plan cannot tell (the target model could not be read: the plan is printed, marked
    incomplete, and the reason goes to stderr). Raises HardwareError / TuneError / ValueError for
    unusable input (exit 2 in wizard.cli)."""
    out, err = out or sys.stdout, err or sys.stderr
    acceptance = getattr(args, "acceptance", None)
    base_ms = getattr(args, "baseline_tpot_ms", None)
    p = api.plan(cfg, vllm_version=getattr(args, "vllm_version", None), gpu=_hardware(args),
                 allow_hub=not getattr(args, "offline", False), kv_cache_space_gib=getattr(args, "kv_cache_space_gib", None),
                 acceptance=acceptance, acceptance_kind=getattr(args, "acceptance_kind", "cumulative") or "cumulative",
                 acceptance_source="--acceptance" if acceptance is not None else None,
                 tune_result=getattr(args, "from_tune", None), context_tokens=getattr(args, "context_tokens", None),
                 baseline_tpot_ms=base_ms, baseline_batch=getattr(args, "baseline_batch", None),
                 k_max=getattr(args, "k_max", None) or 8, task=getattr(args, "task", None))
    if getattr(args, "format", "text") == "json":
        json.dump(p.as_json(), out, indent=2)
        out.write("\n")
    else:
        out.write(render_plan_text(p))
    if p.fits is None:
        err.write(f"wizard: model: plan incomplete, no fit verdict: {p.fit_problem}\n")
        return 2
    return 0 if p.fits and not p.refused_by else 1


def _gib(b: int | None) -> str:
    return "?" if b is None else f"{b / GiB:.2f} GiB"


def render_plan_text(p: "Plan") -> str:
    """Human-readable plan (GiB for display only)."""
    out = []
    hw = f"{p.device_count} x {p.hardware}" if p.hardware else "no hardware given"
    out.append(f"Plan on {hw} ({p.platform}), TP {p.tensor_parallel_size} PP {p.pipeline_parallel_size}, dtype {p.model_dtype}")
    if p.memory_per_device_bytes and p.platform != "cpu":
        out.append(f"  memory per device      {_gib(p.memory_per_device_bytes)} x utilization {p.gpu_memory_utilization} = {_gib(p.budget_bytes)}")
    out.append(f"  target weights         {_gib(p.weights_bytes['target'])}   ({p.target.weights_source})")
    if p.drafter is not None:
        out.append(f"  drafter weights        {_gib(p.weights_bytes['drafter'])}   ({p.drafter.weights_source})")
    if any(p.reserve_bytes.values()):
        r = p.reserve_bytes
        names = {"activations": "activations", "cuda_graphs": "CUDA graphs", "non_torch": "non-torch",
                 "extensible_kv_margin": "extensible KV margin"}
        parts = ", ".join(f"{names.get(k, k)} {_gib(v)}" for k, v in r.items() if v or k in ("activations", "cuda_graphs", "non_torch"))
        out.append(f"  reserve                {_gib(sum(r.values()))}   ({parts})")
    out.append(f"  KV cache               {_gib(p.kv_cache_bytes)}   ({p.kv_cache_source})")
    out.append(f"  KV bytes per token     target {p.kv_bytes_per_token['target']:,} B ({p.target.kv.kv_dtype}), "
               f"drafter {p.kv_bytes_per_token.get('drafter', 0):,} B ({p.drafter.kv.kv_dtype if p.drafter else '-'})")
    out.append(f"  KV capacity            {p.kv_capacity_tokens:,} tokens (block {p.block_size}, {p.num_blocks:,} blocks)")
    out.append(f"  max concurrency        {p.max_concurrency:.2f} requests at max_model_len {p.max_model_len:,}")
    out.append("  verdict                " + ("fits" if p.fits else f"unknown (plan incomplete): {p.fit_problem}"
                                                if p.fits is None else f"DOES NOT FIT: {p.fit_problem}")
               + (f"; but the check refuses it: {', '.join(p.refused_by)} (python -m wizard check)" if p.refused_by else ""))
    if len(p.variants) > 1:
        out.append("  KV dtype variants:")
        for v in p.variants:
            flag = "" if v.supported else "  (not supported on this hardware)"
            out.append(f"    {v.label:34s} {v.target_kv_dtype}/{v.drafter_kv_dtype or '-'}: {v.kv_capacity_tokens:,} tokens, "
                       f"{v.max_concurrency:.2f}x{flag}")
    out += _speedup_lines(p)
    for n in p.notes:
        out.append(f"  note: {n}")
    return "\n".join(out) + "\n"


def _speedup_lines(p: Plan) -> list[str]:
    s = p.speedup
    if not s.table:
        return [f"Speed-up: not estimated ({s.withheld})"] if s.withheld else []
    acc = s.acceptance.describe() if s.acceptance else s.acceptance_source
    task = f" for the {s.task} task" if s.task else ""
    out = [f"Speed-up ({s.method}; acceptance{task} {acc})",
           *([f"  acceptance measured on: {s.acceptance.setup}"] if s.acceptance and s.acceptance.setup else []),
           *[f"  acceptance note: {n}" for n in (s.acceptance.notes if s.acceptance else [])],
           f"  cost model: {s.cost_model}; context {s.context_tokens:,} tokens per sequence",
           f"  drafter: {s.drafter_cost_source} ({s.drafter_cost:g} of a plain step per drafted token at batch 1)"]
    if s.k_cap:
        out.append(f"  k limit: {s.k_cap} ({s.k_cap_reason})")
    if s.withheld:
        out.append(f"  no k recommended: {s.withheld}; the speed-ups below are hypothetical (if it ran)")
    out.append("    k   tokens/step   step cost   speed-up (batch 1)" + (" (hypothetical)" if s.withheld else ""))
    for r in s.table:
        mark = " <- configured" if r.k == s.k else ""
        mark += " <- best" if r.k == s.best_k else ""
        mark += " (past the checkpoint's limit)" if r.beyond_checkpoint else ""
        out.append(f"  {r.k:3d}   {r.expected_tokens_per_step:10.3f}   {r.relative_step_cost:9.3f}   {r.speedup:7.3f}x{mark}")
    if s.batches:
        ks = [pt.k for pt in s.batches[0].points]
        out.append("  batch   plain step   best k   speed-up   " + "  ".join(f"k={k:<3d}" for k in ks)
                   + ("  (hypothetical)" if s.withheld else ""))
        for b in s.batches:
            best = "-" if s.withheld else "none" if b.best_k is None else str(b.best_k)
            kv = "" if b.fits_kv else "  (KV cache too small)"
            out.append(f"  {b.batch:5d}   {b.base_step_ms or 0:7.2f} ms   {best:>6s}   {b.best_speedup:7.3f}x   "
                       + "  ".join(f"{pt.speedup:5.2f}" for pt in b.points) + kv)
        if s.withheld:
            pass  # no concurrency verdict for a configuration that would not load
        elif s.stops_paying_above is None:
            out.append(f"  speculation pays at every concurrency up to max_num_seqs {p.max_num_seqs}")
        elif s.stops_paying_above == 0:
            out.append("  speculation does not pay at any concurrency")
        else:
            out.append(f"  speculation stops paying above {s.stops_paying_above} concurrent requests")
    if s.k_schedule:
        out.append("  k schedule (speculative_config.num_speculative_tokens_per_batch_size, num_speculative_tokens "
                   f"{s.k_schedule_max}):")
        for a, b, k in s.k_schedule:
            out.append(f"    {a:5d}-{b:<5d} requests: " + ("no speculation (k=0)" if k == 0 else f"k={k}"))
    if s.k_schedule_note:
        out.append(f"  note: {s.k_schedule_note}")
    for n in s.notes:
        out.append(f"  note: {n}")
    return out


# ---- tune -------------------------------------------------------------------------------------------

def _progress_printer(err: TextIO):
    def show(ev: dict[str, Any]) -> None:
        total, idx = max(1, ev.get("total") or 1), ev.get("index") or 0
        done = idx if ev.get("stage") in ("measured", "failed", "done") else idx - 1
        bar = "#" * done + "-" * (total - done)
        err.write(f"[{bar}] {min(idx, total)}/{total} {ev.get('message', '')}\n")
        err.flush()
    return show


def cmd_tune(args: argparse.Namespace, cfg: ServeConfig, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``tune``: 0 when at least one k was measured, else 1. Raises TuneError for unusable input."""
    out, err = out or sys.stdout, err or sys.stderr
    if getattr(args, "sweep_grid", None):
        g = api.tune(cfg, grid_dir=args.sweep_grid, ks=args.k, concurrency=args.concurrency, num_prompts=args.num_prompts,
                     output_len=args.output_len, prompts=args.prompts, baseline=not args.no_baseline,
                     temperature=args.temperature, chat=args.chat)
        if args.format == "json":
            json.dump(g.as_json(), out, indent=2)
            out.write("\n")
        else:
            out.write(f"vllm bench sweep serve grid: {g.entries} runs ({g.serve_params}, {g.bench_params})\n"
                      f"{g.command}\n"
                      f"then: python -m wizard plan --from-tune results/wizard-tune -- vllm serve ...\n")
        return 0
    res = api.tune(cfg, ks=args.k, concurrency=args.concurrency, num_prompts=args.num_prompts, output_len=args.output_len,
               prompts=args.prompts, url=args.url, baseline=not args.no_baseline, out_dir=args.out,
               progress=_progress_printer(err), kv_cache_space_gib=args.kv_cache_space_gib,
               allow_hub=not args.offline, force=args.force, start_timeout=args.start_timeout,
               temperature=args.temperature, chat=args.chat)
    if args.format == "json":
        json.dump(res.as_json(), out, indent=2)
        out.write("\n")
    else:
        out.write(render_tune_text(res))
    return 0 if any(r.ok for r in res.runs) else 1


def render_tune_text(res: "TuneResult") -> str:
    """The sweep as a table, the recommendation, and where the files are."""
    concs = res.concurrencies or [res.concurrency]
    lines = [f"Tune {res.model} ({res.method}), concurrency {','.join(map(str, concs))}, {res.num_prompts} prompts x "
             f"{res.output_len} output tokens ({res.prompts})",
             "     k   conc   tokens/s   mean TPOT   median TPOT    MAL   acceptance per position (cumulative)"]
    runs = sorted([*(res.baselines or ([res.baseline] if res.baseline else [])), *res.runs],
                  key=lambda r: (r.concurrency or res.concurrency, r.k))
    for r in runs:
        name = "none" if r.k == 0 else str(r.k)
        c = r.concurrency or res.concurrency
        if not r.ok:
            lines.append(f"  {name:>4s}   {c:4d}   failed: {r.error}")
            continue
        mal = f"{r.mean_acceptance_length:5.2f}" if r.mean_acceptance_length else "    -"
        pos = "/".join(f"{x:.2f}" for x in r.per_position) or "-"
        lines.append(f"  {name:>4s}   {c:4d}   {r.output_tokens_per_s or 0:8.1f}   {r.mean_tpot_ms or 0:7.2f} ms   "
                     f"{r.median_tpot_ms or 0:8.2f} ms   {mal}   {pos}")
    for b in res.by_concurrency:
        sp = f", {b['speedup']:.2f}x the baseline" if b.get("speedup") else ""
        lines.append(f"concurrency {b['concurrency']}: fastest "
                     + ("no speculation" if b["best_k"] == 0 else f"k={b['best_k']}") + sp)
    if res.schedule:
        lines.append(f"measured schedule: speculative_config.num_speculative_tokens_per_batch_size = {res.schedule}, "
                     f"num_speculative_tokens = {res.schedule_max}")
    elif res.schedule_note and len(concs) > 1:
        lines.append(f"schedule: {res.schedule_note}")
    if res.recommended_k is not None:
        many = len(concs) > 1
        where = "over the swept concurrencies" if many else "at this concurrency"
        gm = "geometric mean " if many else ""
        verdict = "" if res.speculation_pays is None else (
            f", {gm}{res.best_speedup:.2f}x the baseline" if res.speculation_pays else
            f", slower than no speculation ({gm}{res.best_speedup:.2f}x): run without it {where}")
        what = "best single k over the swept concurrencies" if many else "highest measured output tokens/s"
        lines.append(f"recommended k: {res.recommended_k} ({what}{verdict})")
    for n in res.notes:
        lines.append(f"note: {n}")
    lines.append(f"results: {res.json_path}" + (f"; chart: {res.chart_path}" if res.chart_path else ""))
    lines.append(f"plan with these measurements: python -m wizard plan --from-tune {res.json_path} -- vllm serve ...")
    return "\n".join(lines) + "\n"
