"""Measured tuning of ``num_speculative_tokens`` over concurrency: start the server once per k
(and once without speculation), drive it at each swept concurrency with a maintained load
generator (:mod:`wizard.launch.bench`: vLLM's own ``vllm bench serve``, else GuideLLM), and read
acceptance from the server's ``/metrics`` (:mod:`wizard.launch.metrics`, before/after deltas).

    from wizard.launch.tune import tune
    res = tune(cfg, ks=(1, 2, 4), concurrency=(1, 4, 16), out_dir="tune-out", progress=print)
    res.recommended_k, res.by_concurrency, res.schedule, res.baselines[0].output_tokens_per_s
    res.json_path, res.chart_path

Per run (one k at one concurrency): output tokens/s, mean / median TPOT (ms), TTFT, mean
acceptance length and cumulative per-position acceptance (vLLM's ``accepted_per_pos / drafts``).
Per concurrency: the fastest k (0 = the no-speculation run); from those the measured
``num_speculative_tokens_per_batch_size`` schedule (:func:`wizard.launch.tune_results.measured_schedule`).
``recommended_k``: the one k with the best throughput over the whole sweep (geometric mean of
its throughput relative to the fastest run at each concurrency; at one concurrency simply the
fastest); ``best_speedup``: its geometric-mean speed-up over the no-speculation runs;
``speculation_pays``: that speed-up is above 1. ``plan_inputs`` feed back into the planner:
``wizard plan --from-tune tune.json`` (:func:`plan_inputs_from_results`, which also reads
``vllm bench serve`` / ``vllm bench sweep serve`` / GuideLLM / AIPerf results). The same sweep as
a ``vllm bench sweep serve`` grid: :mod:`wizard.launch.sweep_grid`.

Attach mode (``url``): no server is started; the running server is measured at its own k, at
each concurrency.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from wizard.config import Patch, ServeConfig, apply_patch
from wizard.launch.errors import LaunchError
from wizard.launch.launcher import launch
from wizard.launch.metrics import scrape
from wizard.launch.bench import BenchError, BenchSpec, run_bench
from wizard.launch.sweep_grid import SweepGrid, sweep_grid
from wizard.launch.tune_inputs import (DEFAULT_PROMPTS, MAX_CONCURRENCY, MAX_K, _check_concurrencies, _check_ks,
                                       validate_prompts)
from wizard.launch.tune_results import TuneError, measured_schedule, plan_inputs_from_results
from wizard.plan.estimate import FIXED_K_PROPOSERS

__all__ = ["TuneRun", "TuneResult", "TuneError", "tune", "DEFAULT_PROMPTS", "plan_inputs_from_results", "sweep_grid",
           "SweepGrid", "MAX_K", "MAX_CONCURRENCY",
           "validate_prompts", "save_chart"]


Progress = Callable[[dict[str, Any]], None]


@dataclass
class TuneRun:
    """One measured configuration; ``k`` 0 = no speculation. Throughput in output tokens/s,
    times in ms, acceptance as vLLM counts it (per position: cumulative, accepted_i / drafts)."""

    k: int
    concurrency: int | None = None
    ok: bool = False
    error: str | None = None
    output_tokens_per_s: float | None = None
    mean_tpot_ms: float | None = None
    median_tpot_ms: float | None = None
    mean_ttft_ms: float | None = None
    completed: int | None = None
    failed: int | None = None
    duration_s: float | None = None
    mean_acceptance_length: float | None = None
    acceptance_rate: float | None = None
    per_position: list[float] = field(default_factory=list)
    num_drafts: float | None = None
    startup_s: float | None = None
    generator: str | None = None
    bench_result: str | None = None
    server_log: str | None = None

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class TuneResult:
    """The sweep: runs per (k, concurrency), the no-speculation runs per concurrency
    (``baselines``; ``baseline`` is the one at the lowest concurrency), the best k per
    concurrency, the measured schedule, the recommendation and where the files are.
    ``concurrency`` is the lowest swept concurrency, ``concurrencies`` all of them."""

    model: str
    method: str | None
    ks: list[int]
    concurrency: int
    num_prompts: int
    output_len: int
    prompts: str
    concurrencies: list[int] = field(default_factory=list)
    url: str | None = None
    baseline: TuneRun | None = None
    baselines: list[TuneRun] = field(default_factory=list)
    runs: list[TuneRun] = field(default_factory=list)
    recommended_k: int | None = None
    speculation_pays: bool | None = None
    best_speedup: float | None = None
    by_concurrency: list[dict[str, Any]] = field(default_factory=list)
    schedule: list[list[int]] | None = None
    schedule_max: int | None = None
    schedule_note: str = ""
    json_path: str | None = None
    chart_path: str | None = None
    started: float = 0.0
    ended: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in ("baseline", "baselines", "runs")}
        d["baseline"] = self.baseline.as_json() if self.baseline else None
        d["baselines"] = [r.as_json() for r in self.baselines]
        d["runs"] = [r.as_json() for r in self.runs]
        d["plan_inputs"] = plan_inputs_from_results(d, raise_errors=False)
        return d


def _emit(progress: Progress | None, **event: Any) -> None:
    if progress is not None:
        try:
            progress(event)
        except Exception:  # a face's progress display must never stop the sweep
            pass


def _fill_from_metrics(run: TuneRun, before: Any, after: Any) -> None:
    """Acceptance over the benchmark window: counter deltas of two /metrics snapshots."""
    rb, ra = before.raw, after.raw
    drafts = ra.get("num_drafts", 0.0) - rb.get("num_drafts", 0.0)
    proposed = ra.get("num_draft_tokens", 0.0) - rb.get("num_draft_tokens", 0.0)
    accepted = ra.get("num_accepted_tokens", 0.0) - rb.get("num_accepted_tokens", 0.0)
    if drafts <= 0:
        return
    run.num_drafts = drafts
    run.mean_acceptance_length = round(1.0 + accepted / drafts, 4)
    run.acceptance_rate = round(accepted / proposed, 4) if proposed > 0 else None
    pa, pb = ra.get("accepted_per_pos") or [], rb.get("accepted_per_pos") or []
    run.per_position = [round((a - (pb[i] if i < len(pb) else 0.0)) / drafts, 4) for i, a in enumerate(pa)]


def _measure(run: TuneRun, base_url: str, model: str, tokenizer: str, prompts: Path, out: Path, *,
             concurrency: int, num_prompts: int, output_len: int, temperature: float, chat: bool,
             bench_timeout: float) -> None:
    before = scrape(base_url)
    spec = BenchSpec(base_url=base_url, model=model, tokenizer=tokenizer, prompts=prompts, num_prompts=num_prompts,
                     concurrency=concurrency, output_len=output_len, temperature=temperature, chat=chat,
                     timeout_s=bench_timeout)
    res = run_bench(spec, out, f"bench-k{run.k}-c{concurrency}")
    after = scrape(base_url)
    run.generator, run.bench_result = res.generator, res.raw_path
    run.output_tokens_per_s, run.mean_tpot_ms, run.median_tpot_ms = res.output_tokens_per_s, res.mean_tpot_ms, \
        res.median_tpot_ms
    run.mean_ttft_ms, run.completed, run.failed, run.duration_s = res.mean_ttft_ms, res.completed, res.failed, \
        res.duration_s
    _fill_from_metrics(run, before, after)
    run.ok = bool(res.output_tokens_per_s) and not res.failed
    if res.failed:
        run.error = f"{res.failed} of {num_prompts} requests failed (see {res.log_path})"


def _label(k: int, c: int) -> str:
    return ("no speculation" if k == 0 else f"k={k}") + f" at concurrency {c}"


def _run_server(cfg_k: ServeConfig, k: int, concs: list[int], prompts: Path, out: Path, progress: Progress | None, *,
                index: int, total: int, launch_kwargs: dict[str, Any], start_timeout: float,
                **bench: Any) -> list[TuneRun]:
    """One server at k, measured at every concurrency in ``concs`` (ascending); one TuneRun each.
    A server that does not start fails every run at this k, with the reason."""
    runs = [TuneRun(k=k, concurrency=c) for c in concs]
    label = "no speculation" if k == 0 else f"k={k}"
    _emit(progress, stage="launching", k=k, index=index, total=total, message=f"{label}: starting the server")
    t0 = time.monotonic()
    try:
        h = launch(cfg_k, log_dir=out / "logs", metrics_interval=0, **launch_kwargs)
    except (LaunchError, ValueError, OSError) as err:
        for r in runs:
            r.error = f"{label}: the server was not started: {err}"
        return runs
    try:
        log = str(getattr(h, "log_path", "") or "") or None
        for r in runs:
            r.server_log = log
        if not h.wait_healthy(start_timeout):
            st = h.status() if hasattr(h, "status") else {}
            diag = getattr(h, "diagnosis", None)
            why = getattr(diag, "title", None) or st.get("state")
            for r in runs:
                r.error = f"{label}: the server did not become healthy ({why}); log: {log}"
            return runs
        startup = round(time.monotonic() - t0, 1)
        model = getattr(h, "served_model", None) or cfg_k.model
        for j, r in enumerate(runs):
            r.startup_s = startup
            _emit(progress, stage="benchmarking", k=k, concurrency=r.concurrency, index=index + j, total=total,
                  message=f"{_label(k, r.concurrency)}: benchmarking {bench['num_prompts']} prompts"
                          + (f" (healthy in {startup:.0f} s)" if j == 0 else ""))
            try:
                _measure(r, h.url, model, cfg_k.tokenizer or cfg_k.model, prompts, out, concurrency=r.concurrency,
                         **bench)
            except (BenchError, OSError, ValueError) as err:
                r.error = f"{_label(k, r.concurrency)}: {err}"
            _emit_measured(progress, r, index + j, total)
    finally:
        h.stop()
    return runs


def _emit_measured(progress: Progress | None, run: TuneRun, index: int, total: int) -> None:
    _emit(progress, stage="measured" if run.ok else "failed", k=run.k, concurrency=run.concurrency, index=index,
          total=total, run=run.as_json(),
          message=run.error or (f"{_label(run.k, run.concurrency or 0)}: {run.output_tokens_per_s or 0:.1f} tokens/s, "
                                f"TPOT {run.mean_tpot_ms or 0:.2f} ms"
                                + (f", MAL {run.mean_acceptance_length:.2f}" if run.mean_acceptance_length else "")))


def _points(res: TuneResult) -> list[dict[str, Any]]:
    return [{"k": r.k, "concurrency": r.concurrency, "output_tokens_per_s": r.output_tokens_per_s}
            for r in [*res.baselines, *res.runs] if r.ok and r.output_tokens_per_s]


def _recommend(res: TuneResult, *, max_num_seqs: int | None = None) -> None:
    """The one k over the sweep, its speed-up, and the measured best k per concurrency and schedule."""
    ok = [r for r in res.runs if r.ok and r.output_tokens_per_s]
    if res.baseline is not None and res.baseline not in res.baselines:
        res.baselines.insert(0, res.baseline)
    if not res.concurrencies:
        res.concurrencies = sorted({r.concurrency or res.concurrency for r in [*res.runs, *res.baselines]}) or \
            [res.concurrency]
    for r in [*res.runs, *res.baselines]:
        r.concurrency = r.concurrency or res.concurrency
    if res.baselines and res.baseline is None:
        res.baseline = res.baselines[0]
    sched = measured_schedule(_points(res), max_num_seqs=max_num_seqs, fixed_k=res.method in FIXED_K_PROPOSERS)
    res.by_concurrency = sched["by_concurrency"]
    res.schedule, res.schedule_max, res.schedule_note = sched["schedule"], sched["schedule_max"], sched["schedule_note"]
    if not ok:
        res.notes.append("no k produced a measurement")
        return
    fastest = {c: max(r.output_tokens_per_s for r in ok if r.concurrency == c)
               for c in {r.concurrency for r in ok}}
    base = {b.concurrency: b.output_tokens_per_s for b in res.baselines if b.ok and b.output_tokens_per_s}

    def score(k: int) -> tuple[float, int, int]:
        mine = {r.concurrency: r.output_tokens_per_s for r in ok if r.k == k}
        rel = [mine[c] / fastest[c] if c in mine else 0.0 for c in fastest]
        return (_geo_mean(rel), len(mine), -k)

    best_k = max({r.k for r in ok}, key=score)
    res.recommended_k = best_k
    pairs = [(r.output_tokens_per_s, base[r.concurrency]) for r in ok if r.k == best_k and r.concurrency in base]
    if pairs:
        res.best_speedup = round(_geo_mean([a / b for a, b in pairs]), 4)
        res.speculation_pays = res.best_speedup > 1.0
        if not res.speculation_pays:
            where = "at this concurrency" if len(res.concurrencies) == 1 else "over the swept concurrencies"
            res.notes.append(f"no k beat the baseline ({'/'.join(f'{base[c]:.1f}' for c in sorted(base))} tokens/s): "
                             f"run without speculation {where}")


def _geo_mean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs and all(x > 0 for x in xs) else 0.0


def tune(
    cfg: ServeConfig,
    *,
    ks: Sequence[int] = (1, 2, 4),
    concurrency: int | Sequence[int] = 4,
    num_prompts: int = 32,
    output_len: int = 128,
    prompts: str | Path | None = None,
    url: str | None = None,
    baseline: bool = True,
    out_dir: str | Path | None = None,
    progress: Progress | None = None,
    kv_cache_space_gib: float | None = None,
    allow_hub: bool = True,
    force: bool = False,
    start_timeout: float = 900.0,
    bench_timeout: float = 1800.0,
    temperature: float = 0.0,
    chat: bool = False,
    chart: bool = True,
) -> TuneResult:
    """Sweep k x concurrency (one server per k, restarted for each; each measured at every
    concurrency, lowest first), plus a no-speculation server measured the same way; save
    ``tune.json`` and ``tune.png`` in ``out_dir`` (default ``./wizard-tune-<time>``).

    ``concurrency``: one value or a list (e.g. ``(1, 4, 16)``). ``progress`` receives dicts
    ``{stage, k, concurrency?, index, total, message}`` (stage: launching | benchmarking |
    measured | failed | done; index counts measurements). Never raises for a failed run (its
    ``error`` says why); raises TuneError for unusable inputs before anything starts.
    """
    spec = cfg.speculative_config
    if spec is None and url is None:
        raise TuneError("tune needs a speculative_config (the method to tune), e.g. "
                        "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 2, \"prompt_lookup_max\": 4}'")
    ks_list = _check_ks(ks) if url is None else [int(spec.num_speculative_tokens or 0) if spec else 0]
    concs = _check_concurrencies(concurrency)
    for name, v, top in (("--num-prompts", num_prompts, 100_000), ("--output-len", output_len, 1 << 20)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= top:
            raise TuneError(f"{name}: {v!r} must be a whole number from 1 to {top}")
    pfile = validate_prompts(prompts)
    out = Path(out_dir) if out_dir else Path.cwd() / time.strftime("wizard-tune-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    res = TuneResult(model=cfg.model, method=spec.method if spec else None, ks=ks_list, concurrency=concs[0],
                     concurrencies=concs, num_prompts=num_prompts, output_len=output_len, prompts=str(pfile), url=url,
                     started=time.time())
    bench = dict(num_prompts=num_prompts, output_len=output_len, temperature=temperature, chat=chat,
                 bench_timeout=bench_timeout)
    if url is not None:
        for j, c in enumerate(concs, 1):
            run = TuneRun(k=ks_list[0], concurrency=c)
            _emit(progress, stage="benchmarking", k=run.k, concurrency=c, index=j, total=len(concs),
                  message=f"attached to {url}: benchmarking at concurrency {c}")
            try:
                _measure(run, url, cfg.model, cfg.tokenizer or cfg.model, pfile, out, concurrency=c, **bench)
            except (BenchError, OSError, ValueError) as err:
                run.error = str(err)
            res.runs.append(run)
            _emit_measured(progress, run, j, len(concs))
        res.notes.append("attached to a running server: measured at its own k, no baseline")
    else:
        plan_runs = ([0] if baseline else []) + ks_list
        total = len(plan_runs) * len(concs)
        launch_kwargs = dict(kv_cache_space_gib=kv_cache_space_gib, allow_hub=allow_hub, force=force)
        for i, k in enumerate(plan_runs):
            patch = (Patch(description="no speculation", unset=["speculative_config"]) if k == 0 else
                     Patch(description=f"k={k}", set={"speculative_config.num_speculative_tokens": k}))
            runs = _run_server(apply_patch(cfg, patch), k, concs, pfile, out, progress, index=i * len(concs) + 1,
                               total=total, launch_kwargs=launch_kwargs, start_timeout=start_timeout, **bench)
            if k == 0:
                res.baselines = runs
                res.baseline = runs[0]
            else:
                res.runs.extend(runs)
    _recommend(res, max_num_seqs=cfg.max_num_seqs)
    res.ended = time.time()
    res.json_path = str(out / "tune.json")
    if chart:
        try:
            res.chart_path = save_chart(res, out / "tune.png")
        except Exception as err:  # matplotlib missing or a backend problem: the JSON still counts
            res.notes.append(f"chart not drawn ({type(err).__name__}: {str(err)[:160]})")
    Path(res.json_path).write_text(json.dumps(res.as_json(), indent=2), encoding="utf-8")
    n = len(res.runs) + len(res.baselines)
    _emit(progress, stage="done", k=res.recommended_k, index=n, total=n,
          message=f"recommended k={res.recommended_k}"
                  + (f"; measured schedule {res.schedule}" if res.schedule else "") + f"; results in {res.json_path}")
    return res


def save_chart(res: TuneResult, path: str | Path) -> str:
    """PNG: output tokens/s vs k, one line per swept concurrency (k 0 = no speculation, the best
    k of each marked), and cumulative per-position acceptance per k at the lowest concurrency.
    Raises ImportError without matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax3) = plt.subplots(1, 2, figsize=(11, 4.2))
    concs = res.concurrencies or [res.concurrency]
    best = {r["concurrency"]: r["best_k"] for r in res.by_concurrency}
    for c in concs:
        pts = sorted((r.k, r.output_tokens_per_s) for r in [*res.baselines, *res.runs]
                     if r.ok and r.output_tokens_per_s and (r.concurrency or res.concurrency) == c)
        if not pts:
            continue
        line, = ax1.plot([k for k, _ in pts], [v for _, v in pts], "o-", label=f"concurrency {c}")
        bk = best.get(c)
        for k, v in pts:
            if k == bk:
                ax1.plot([k], [v], "*", ms=14, color=line.get_color())
    ax1.set_xlabel("num_speculative_tokens (k; 0 = no speculation)")
    ax1.set_ylabel("output tokens/s")
    ax1.set_title(f"{Path(res.model).name} · {res.method} · best k starred")
    ax1.legend(loc="best", fontsize=8)
    low = min(concs)
    shown = False
    for r in res.runs:
        if r.ok and r.per_position and (r.concurrency or res.concurrency) == low:
            ax3.plot(range(1, len(r.per_position) + 1), r.per_position, "o-",
                     label=f"k={r.k} (MAL {r.mean_acceptance_length or 0:.2f})")
            shown = True
    ax3.set_xlabel("draft position")
    ax3.set_ylabel("acceptance (cumulative, vLLM per-position)")
    ax3.set_ylim(0, 1)
    ax3.set_title(f"acceptance per position (concurrency {low})")
    if shown:
        ax3.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)
