"""Measured tuning of ``num_speculative_tokens``: start the server once per k (and once without
speculation), drive it with a maintained load generator (:mod:`wizard.launch.bench`: vLLM's own
``vllm bench serve``, else GuideLLM) at the user's concurrency, and read acceptance from the
server's ``/metrics`` (:mod:`wizard.launch.metrics`, before/after deltas).

    from wizard.launch.tune import tune
    res = tune(cfg, ks=(1, 2, 4), concurrency=4, out_dir="tune-out", progress=print)
    res.recommended_k, res.baseline.output_tokens_per_s, res.runs[0].per_position
    res.json_path, res.chart_path

Per run: output tokens/s, mean / median TPOT (ms), TTFT, mean acceptance length and cumulative
per-position acceptance (vLLM's ``accepted_per_pos / drafts``). ``recommended_k``: the k with the
highest measured output tokens/s; ``speculation_pays``: it beats the no-speculation baseline.
``plan_inputs`` (measured per-position acceptance and the baseline time per output token) feed
back into the planner: ``wizard plan --from-tune tune.json``, :func:`plan_inputs_from_results`.

Attach mode (``url``): no server is started; the running server is measured once at its own k.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from wizard.config import Patch, ServeConfig, apply_patch
from wizard.launch.errors import LaunchError
from wizard.launch.launcher import launch
from wizard.launch.metrics import scrape
from wizard.launch.bench import BenchError, BenchSpec, run_bench

__all__ = ["TuneRun", "TuneResult", "TuneError", "tune", "DEFAULT_PROMPTS", "plan_inputs_from_results",
           "validate_prompts", "save_chart"]

DEFAULT_PROMPTS = Path(__file__).resolve().parents[1] / "data" / "tune_prompts.jsonl"
MAX_K = 64

Progress = Callable[[dict[str, Any]], None]


class TuneError(ValueError):
    """Tuning cannot start (no speculative_config, bad k list, unreadable prompts); the message
    names the input and the fix."""


@dataclass
class TuneRun:
    """One measured configuration; ``k`` 0 = no speculation. Throughput in output tokens/s,
    times in ms, acceptance as vLLM counts it (per position: cumulative, accepted_i / drafts)."""

    k: int
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
    """The sweep: runs per k, the baseline, the recommendation and where the files are."""

    model: str
    method: str | None
    ks: list[int]
    concurrency: int
    num_prompts: int
    output_len: int
    prompts: str
    url: str | None = None
    baseline: TuneRun | None = None
    runs: list[TuneRun] = field(default_factory=list)
    recommended_k: int | None = None
    speculation_pays: bool | None = None
    best_speedup: float | None = None
    json_path: str | None = None
    chart_path: str | None = None
    started: float = 0.0
    ended: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in ("baseline", "runs")}
        d["baseline"] = self.baseline.as_json() if self.baseline else None
        d["runs"] = [r.as_json() for r in self.runs]
        d["plan_inputs"] = plan_inputs_from_results(d, raise_errors=False)
        return d


def validate_prompts(path: str | Path | None) -> Path:
    """The prompt file to use: ``path`` (a JSONL of {"prompt": ...} lines) or the built-in set.

    Raises:
        TuneError: missing, unreadable, not JSONL, or a line without a string ``prompt``.
    """
    p = Path(path) if path else DEFAULT_PROMPTS
    if not p.is_file():
        raise TuneError(f"--prompts: {str(p)[:200]} is not a file; give a JSONL file with one {{\"prompt\": ...}} per line")
    if p.suffix != ".jsonl":
        raise TuneError(f"--prompts: {p.name} must end in .jsonl (vllm bench serve's custom dataset reads JSONL)")
    n = 0
    try:
        with open(p, encoding="utf-8") as fh:
            for i, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                row = json.loads(line)
                if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
                    raise TuneError(f"--prompts: {p.name} line {i} has no string \"prompt\"; each line must be "
                                    "{\"prompt\": \"...\"}")
                n += 1
                if i > 1_000_000:
                    break
    except (OSError, UnicodeDecodeError, ValueError) as err:
        if isinstance(err, TuneError):
            raise
        raise TuneError(f"--prompts: {p.name} is not JSONL text ({type(err).__name__}); one JSON object per line") from None
    if not n:
        raise TuneError(f"--prompts: {p.name} holds no prompts")
    return p


def _check_ks(ks: Sequence[Any]) -> list[int]:
    out = []
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise TuneError(f"--k: {k!r} is not a whole number from 1 to {MAX_K}")
        if k not in out:
            out.append(k)
    if not out:
        raise TuneError("--k: give at least one value, e.g. 1,2,4")
    return sorted(out)


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
    res = run_bench(spec, out, f"bench-k{run.k}")
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


def _run_one(cfg_k: ServeConfig, run: TuneRun, prompts: Path, out: Path, progress: Progress | None, *,
             index: int, total: int, launch_kwargs: dict[str, Any], start_timeout: float, **bench: Any) -> None:
    label = "no speculation" if run.k == 0 else f"k={run.k}"
    _emit(progress, stage="launching", k=run.k, index=index, total=total, message=f"{label}: starting the server")
    t0 = time.monotonic()
    try:
        h = launch(cfg_k, log_dir=out / "logs", metrics_interval=0, **launch_kwargs)
    except (LaunchError, ValueError, OSError) as err:
        run.error = f"{label}: the server was not started: {err}"
        return
    try:
        run.server_log = str(getattr(h, "log_path", "") or "") or None
        if not h.wait_healthy(start_timeout):
            st = h.status() if hasattr(h, "status") else {}
            diag = getattr(h, "diagnosis", None)
            why = getattr(diag, "title", None) or st.get("state")
            run.error = f"{label}: the server did not become healthy ({why}); log: {run.server_log}"
            return
        run.startup_s = round(time.monotonic() - t0, 1)
        _emit(progress, stage="benchmarking", k=run.k, index=index, total=total,
              message=f"{label}: healthy in {run.startup_s:.0f} s, benchmarking {bench['num_prompts']} prompts at "
                      f"concurrency {bench['concurrency']}")
        model = getattr(h, "served_model", None) or cfg_k.model
        _measure(run, h.url, model, cfg_k.tokenizer or cfg_k.model, prompts, out, **bench)
    except (BenchError, OSError, ValueError) as err:
        run.error = f"{label}: {err}"
    finally:
        h.stop()


def _recommend(res: TuneResult) -> None:
    ok = [r for r in res.runs if r.ok and r.output_tokens_per_s]
    if not ok:
        res.notes.append("no k produced a measurement")
        return
    best = max(ok, key=lambda r: (r.output_tokens_per_s, -r.k))
    res.recommended_k = best.k
    base = res.baseline.output_tokens_per_s if res.baseline and res.baseline.ok else None
    if base:
        res.best_speedup = round(best.output_tokens_per_s / base, 4)
        res.speculation_pays = best.output_tokens_per_s > base
        if not res.speculation_pays:
            res.notes.append(f"no k beat the baseline ({base:.1f} tokens/s): run without speculation at this "
                             "concurrency")


def tune(
    cfg: ServeConfig,
    *,
    ks: Sequence[int] = (1, 2, 4),
    concurrency: int = 4,
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
    """Sweep k (restarting the server for each), plus a no-speculation baseline; save
    ``tune.json`` and ``tune.png`` in ``out_dir`` (default ``./wizard-tune-<time>``).

    ``progress`` receives dicts ``{stage, k, index, total, message}`` (stage: launching |
    benchmarking | measured | failed | done). Never raises for a failed run (its ``error`` says
    why); raises TuneError for unusable inputs before anything starts.
    """
    spec = cfg.speculative_config
    if spec is None and url is None:
        raise TuneError("tune needs a speculative_config (the method to tune), e.g. "
                        "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 2, \"prompt_lookup_max\": 4}'")
    ks_list = _check_ks(ks) if url is None else [int(spec.num_speculative_tokens or 0) if spec else 0]
    for name, v, top in (("--concurrency", concurrency, 4096), ("--num-prompts", num_prompts, 100_000),
                         ("--output-len", output_len, 1 << 20)):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= top:
            raise TuneError(f"{name}: {v!r} must be a whole number from 1 to {top}")
    pfile = validate_prompts(prompts)
    out = Path(out_dir) if out_dir else Path.cwd() / time.strftime("wizard-tune-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    res = TuneResult(model=cfg.model, method=spec.method if spec else None, ks=ks_list, concurrency=concurrency,
                     num_prompts=num_prompts, output_len=output_len, prompts=str(pfile), url=url, started=time.time())
    bench = dict(concurrency=concurrency, num_prompts=num_prompts, output_len=output_len, temperature=temperature,
                 chat=chat, bench_timeout=bench_timeout)
    if url is not None:
        run = TuneRun(k=ks_list[0])
        _emit(progress, stage="benchmarking", k=run.k, index=1, total=1, message=f"attached to {url}: benchmarking")
        try:
            _measure(run, url, cfg.model, cfg.tokenizer or cfg.model, pfile, out, **bench)
        except (BenchError, OSError, ValueError) as err:
            run.error = str(err)
        res.runs.append(run)
        res.notes.append("attached to a running server: one measurement at its own k, no baseline")
    else:
        plan_runs = ([0] if baseline else []) + ks_list
        launch_kwargs = dict(kv_cache_space_gib=kv_cache_space_gib, allow_hub=allow_hub, force=force)
        for i, k in enumerate(plan_runs, 1):
            run = TuneRun(k=k)
            patch = (Patch(description="no speculation", unset=["speculative_config"]) if k == 0 else
                     Patch(description=f"k={k}", set={"speculative_config.num_speculative_tokens": k}))
            _run_one(apply_patch(cfg, patch), run, pfile, out, progress, index=i, total=len(plan_runs),
                     launch_kwargs=launch_kwargs, start_timeout=start_timeout, **bench)
            if k == 0:
                res.baseline = run
            else:
                res.runs.append(run)
            _emit(progress, stage="measured" if run.ok else "failed", k=k, index=i, total=len(plan_runs),
                  message=run.error or (f"{'baseline' if k == 0 else f'k={k}'}: {run.output_tokens_per_s or 0:.1f} "
                                        f"tokens/s, TPOT {run.mean_tpot_ms or 0:.2f} ms"
                                        + (f", MAL {run.mean_acceptance_length:.2f}" if run.mean_acceptance_length else "")),
                  run=run.as_json())
    _recommend(res)
    res.ended = time.time()
    res.json_path = str(out / "tune.json")
    if chart:
        try:
            res.chart_path = save_chart(res, out / "tune.png")
        except Exception as err:  # matplotlib missing or a backend problem: the JSON still counts
            res.notes.append(f"chart not drawn ({type(err).__name__}: {str(err)[:160]})")
    Path(res.json_path).write_text(json.dumps(res.as_json(), indent=2), encoding="utf-8")
    _emit(progress, stage="done", k=res.recommended_k, index=len(res.runs), total=len(res.runs),
          message=f"recommended k={res.recommended_k}; results in {res.json_path}")
    return res


def save_chart(res: TuneResult, path: str | Path) -> str:
    """PNG: output tokens/s and TPOT vs k (baseline dashed), cumulative per-position acceptance
    per k. Raises ImportError without matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in res.runs if r.ok]
    fig, (ax1, ax3) = plt.subplots(1, 2, figsize=(11, 4.2))
    ks = [r.k for r in ok]
    ax1.plot(ks, [r.output_tokens_per_s for r in ok], "o-", color="tab:blue", label="output tokens/s")
    if res.baseline and res.baseline.ok:
        ax1.axhline(res.baseline.output_tokens_per_s, color="tab:blue", ls="--", label="no speculation")
    ax1.set_xlabel("num_speculative_tokens (k)")
    ax1.set_ylabel("output tokens/s", color="tab:blue")
    ax2 = ax1.twinx()
    ax2.plot(ks, [r.mean_tpot_ms for r in ok], "s-", color="tab:orange", label="mean TPOT")
    if res.baseline and res.baseline.ok and res.baseline.mean_tpot_ms:
        ax2.axhline(res.baseline.mean_tpot_ms, color="tab:orange", ls=":")
    ax2.set_ylabel("mean TPOT (ms)", color="tab:orange")
    if res.recommended_k is not None:
        ax1.axvline(res.recommended_k, color="grey", alpha=0.3)
    ax1.set_title(f"{Path(res.model).name} · {res.method} · concurrency {res.concurrency}")
    ax1.legend(loc="lower left", fontsize=8)
    for r in ok:
        if r.per_position:
            ax3.plot(range(1, len(r.per_position) + 1), r.per_position, "o-", label=f"k={r.k} (MAL {r.mean_acceptance_length:.2f})")
    ax3.set_xlabel("draft position")
    ax3.set_ylabel("acceptance (cumulative, vLLM per-position)")
    ax3.set_ylim(0, 1)
    ax3.set_title("acceptance per position")
    if any(r.per_position for r in ok):
        ax3.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def _from_bench_serve(data: dict[str, Any]) -> dict[str, Any]:
    """Plan inputs from one ``vllm bench serve --save-result`` JSON (vllm/benchmarks/serve.py 0.32:
    ``spec_decode_per_position_acceptance_rates`` = accepted at position i / drafts, i.e. cumulative,
    ``spec_decode_acceptance_length``, ``max_concurrency``, ``mean_tpot_ms``, ``model_id``). A run
    with speculation gives the measured acceptance; a run without it (no ``spec_decode_*`` keys)
    gives the plain-decode baseline (its mean TPOT at its concurrency)."""
    conc = data.get("max_concurrency")
    conc = conc if isinstance(conc, int) and not isinstance(conc, bool) and conc > 0 else None
    per_pos = data.get("spec_decode_per_position_acceptance_rates")
    tpot = data.get("mean_tpot_ms")
    tpot = float(tpot) if isinstance(tpot, (int, float)) and not isinstance(tpot, bool) and tpot > 0 else None
    if isinstance(per_pos, list) and per_pos:
        rates = [float(x) for x in per_pos]
        if not all(0.0 <= x <= 1.0 for x in rates):
            raise TuneError("--from-tune: spec_decode_per_position_acceptance_rates outside [0, 1]")
        return {"per_position": rates,
                "acceptance_source": f"measured by vllm bench serve ({data.get('model_id')}, concurrency {conc}, "
                                     f"acceptance length {data.get('spec_decode_acceptance_length')})",
                "baseline_tpot_ms": None, "concurrency": conc}
    if "spec_decode_acceptance_length" in data or "spec_decode_num_drafts" in data:
        raise TuneError("--from-tune: the vllm bench serve result has no per-position acceptance (no drafts measured)")
    if tpot is None:
        raise TuneError("--from-tune: the vllm bench serve result has neither acceptance nor mean_tpot_ms")
    return {"per_position": None, "acceptance_source": None, "baseline_tpot_ms": tpot, "concurrency": conc}


def plan_inputs_from_results(data: dict[str, Any] | str | Path, *, raise_errors: bool = True) -> dict[str, Any] | None:
    """What a tune result tells the planner: ``per_position`` (cumulative acceptance from the run
    with the most measured positions), ``acceptance_source``, ``baseline_tpot_ms`` and
    ``concurrency`` (the plain-decode calibration). ``data`` may also be one ``vllm bench serve``
    result JSON (:func:`_from_bench_serve`).

    Raises:
        TuneError: not a tune result / no measured acceptance (only when ``raise_errors``).
    """
    try:
        if not isinstance(data, dict):
            data = json.loads(Path(data).read_text(encoding="utf-8"))
        if "runs" not in data and ("model_id" in data or "spec_decode_per_position_acceptance_rates" in data):
            return _from_bench_serve(data)
        runs = [r for r in data.get("runs") or [] if isinstance(r, dict) and r.get("ok") and r.get("per_position")]
        if not runs:
            raise TuneError("--from-tune: the tune result has no run with measured per-position acceptance")
        best = max(runs, key=lambda r: (len(r["per_position"]), r.get("num_drafts") or 0))
        base = data.get("baseline") if isinstance(data.get("baseline"), dict) else None
        return {
            "per_position": [float(x) for x in best["per_position"]],
            "acceptance_source": f"measured by wizard tune at k={best['k']} ({data.get('model')}, concurrency "
                                 f"{data.get('concurrency')}, MAL {best.get('mean_acceptance_length')})",
            "baseline_tpot_ms": base.get("mean_tpot_ms") if base and base.get("ok") else None,
            "concurrency": data.get("concurrency"),
        }
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as err:
        if raise_errors:
            if isinstance(err, TuneError):
                raise
            raise TuneError(f"--from-tune: not a wizard tune result ({type(err).__name__}: {str(err)[:120]})") from None
        return None
