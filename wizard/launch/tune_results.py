"""Measured results fed back into the planner (``wizard plan --from-tune FILE``): what a sweep
measured, read from the files the maintained load generators write, and the k schedule it
implies.

Formats read (each taken from the generator's own source; detection by shape, first match wins):

* a ``wizard tune`` result (``tune.json``: ``runs`` / ``baselines`` / ``plan_inputs``);
* one ``vllm bench serve --save-result`` JSON (vllm/benchmarks/serve.py 0.32: ``model_id``,
  ``max_concurrency``, ``output_throughput``, ``mean_tpot_ms``,
  ``spec_decode_per_position_acceptance_rates`` = accepted at position i / drafts, cumulative);
* a ``vllm bench sweep serve`` experiment: its folder (every ``*/run=N.json``), its
  ``summary.json`` (a list of runs) or one ``run=N.json``: each a ``vllm bench serve`` result
  with the serve and bench overrides merged in (vllm/benchmarks/sweep/serve.py 0.32
  ``_update_run_data``: ``speculative_config`` of the serve override, ``max_concurrency`` of the
  bench one); no ``speculative_config`` = the no-speculation server of the grid
  (:mod:`wizard.launch.sweep_grid` writes such grids);
* a GuideLLM report (``guidellm benchmark --output-path X.json``; vllm-project/guidellm
  ``src/guidellm/benchmark/schemas/generative/report.py`` @03820eba: ``{"args", "benchmarks":
  [GenerativeBenchmark]}``; per benchmark ``config.strategy`` (``type_`` "concurrent" with
  ``streams``, or "synchronous" = 1; ``schemas/base.py`` @14ffe9c6) and ``metrics``
  (``output_tokens_per_second`` / ``time_per_output_token_ms``, each a StatusDistributionSummary
  ``{"successful": {"mean", "median", ...}}``; ``schemas/generative/metrics.py`` @06cef291).
  GuideLLM does not read vLLM's speculative-decoding counters and records no server settings:
  a report gives throughput and time per output token only, read as a no-speculation baseline;
* an AIPerf summary (``profile_export_aiperf.json``; ai-dynamo/aiperf
  ``src/aiperf/common/models/export_models.py`` ``JsonExportData`` @896729cf and later: each
  metric tag a ``JsonMetricResult`` ``{"unit", "avg", "p50", ...}`` (``output_token_throughput``
  tokens/s, ``inter_token_latency`` ms), ``input_config.loadgen.concurrency``, and, when the
  server ran speculative decoding, ``pooled_spec_decode_acceptance_histogram`` ``{j: steps that
  accepted exactly j drafts}`` (``spec_decode_models.py`` @0786f0ca). Cumulative per-position
  acceptance is ``p_i = steps with j >= i / all steps``, the same quantity as vLLM's
  ``accepted_per_pos / drafts``.

Every reader returns the same plan inputs (:func:`plan_inputs_from_results`): ``per_position``,
``acceptance_source``, ``baseline_tpot_ms`` and ``concurrency`` (the plain-decode calibration),
``measured`` (points ``{k, concurrency, output_tokens_per_s, mean_tpot_ms}``, k 0 = no
speculation, None = unknown) and ``schedule`` (:func:`measured_schedule`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable

from wizard.io.safeio import read_text_file

__all__ = ["TuneError", "plan_inputs_from_results", "measured_schedule", "MAX_RESULT_BYTES", "MAX_SWEEP_RUNS"]

#: Largest result file read (bytes); GuideLLM reports carry sampled requests and reach tens of MB.
MAX_RESULT_BYTES = 256 << 20
#: Most ``run=N.json`` files read from one ``vllm bench sweep serve`` experiment folder.
MAX_SWEEP_RUNS = 2000


class TuneError(ValueError):
    """Tuning cannot start (no speculative_config, bad k list, unreadable prompts), or a result
    file cannot feed the planner; the message names the input and the fix."""


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _pos_int(v: Any) -> int | None:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


# ---- the measured table and its schedule ---------------------------------------------------------

def _geo_mean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs and all(x > 0 for x in xs) else 0.0


def measured_schedule(points: Iterable[dict[str, Any]], *, max_num_seqs: int | None = None,
                      fixed_k: bool = False) -> dict[str, Any]:
    """The best measured k per concurrency and the ``num_speculative_tokens_per_batch_size``
    schedule it implies.

    ``points``: ``{k, concurrency, output_tokens_per_s}`` (k 0 = no speculation; points with k
    None or no throughput are ignored). Per swept concurrency c_i the best k is the one with the
    highest output tokens/s (0 when the no-speculation run is fastest). The schedule holds k_i for
    batch sizes c_i .. c_(i+1)-1 (from 1 for the first, up to ``max_num_seqs`` or the last c for
    the last), adjacent equal ks merged: vLLM's inclusive ``[start, end, k]`` ranges
    (vllm/v1/spec_decode/dynamic/utils.py 0.32 ``validate_and_normalize_dynamic_sd_schedule``:
    first range starts at 1, k >= 0; batch sizes past the last range keep its k). No schedule
    (None, with the reason in ``schedule_note``) when one k is best everywhere, no k beats the
    baseline anywhere, a concurrency has no baseline, or ``fixed_k`` (the method's proposer
    asserts a fixed draft length: advisory NGR-0002, vLLM PR #46399).

    Returns ``{"by_concurrency": [{concurrency, best_k, output_tokens_per_s, baseline_tokens_per_s,
    speedup}], "schedule", "schedule_max", "schedule_note"}``; speed-ups are best / baseline.
    """
    table: dict[int, dict[int, float]] = {}
    for p in points:
        k, c, tps = p.get("k"), _pos_int(p.get("concurrency")), _num(p.get("output_tokens_per_s"))
        if not isinstance(k, int) or isinstance(k, bool) or k < 0 or c is None or not tps or tps <= 0:
            continue
        row = table.setdefault(c, {})
        row[k] = max(tps, row.get(k, 0.0))
    by_c = []
    for c in sorted(table):
        row = table[c]
        best_k = max(row, key=lambda k: (row[k], -k))
        base = row.get(0)
        by_c.append({"concurrency": c, "best_k": best_k, "output_tokens_per_s": round(row[best_k], 3),
                     "baseline_tokens_per_s": base, "speedup": round(row[best_k] / base, 4) if base else None})
    out: dict[str, Any] = {"by_concurrency": by_c, "schedule": None, "schedule_max": None, "schedule_note": ""}
    if not by_c:
        out["schedule_note"] = "nothing measured"
        return out
    if any(r["baseline_tokens_per_s"] is None for r in by_c):
        out["schedule_note"] = ("no schedule: a swept concurrency has no no-speculation run to compare with "
                                "(sweep with the baseline)")
        return out
    if all(r["best_k"] == 0 for r in by_c):
        out["schedule_note"] = "no k beat the no-speculation run at any swept concurrency: run without speculation"
        return out
    sched: list[list[int]] = []
    for i, r in enumerate(by_c):
        start = 1 if i == 0 else r["concurrency"]
        end = (by_c[i + 1]["concurrency"] - 1) if i + 1 < len(by_c) else max(r["concurrency"], max_num_seqs or 0)
        if sched and sched[-1][2] == r["best_k"]:
            sched[-1][1] = end
        else:
            sched.append([start, end, r["best_k"]])
    if len(sched) == 1:
        out["schedule_note"] = f"k={sched[0][2]} was fastest at every swept concurrency: no schedule needed"
        return out
    if fixed_k:
        out["schedule_note"] = ("the method's proposer asserts a fixed draft length: a per-batch schedule crashes it "
                                f"(advisory NGR-0002); measured best k per concurrency: {[r['best_k'] for r in by_c]}")
        return out
    out["schedule"] = sched
    out["schedule_max"] = max(k for _, _, k in sched)
    off = [r for r in sched if r[2] == 0]
    out["schedule_note"] = (f"measured: speculative_config.num_speculative_tokens_per_batch_size = {sched} with "
                            f"num_speculative_tokens = {out['schedule_max']}"
                            + "".join(f"; speculation off (k=0) for batch sizes {a}-{b}" for a, b, _ in off)
                            + "; ranges switch at the swept concurrencies (sweep more points for finer cuts)")
    return out


def _inputs_from_points(points: list[dict[str, Any]], *, generator: str, model: Any = None,
                        fixed_k: bool = False) -> dict[str, Any]:
    """Plan inputs from measured points (see the module docstring); raises TuneError when
    nothing usable was measured."""
    spec = [p for p in points if p.get("per_position")]
    best = max(spec, key=lambda p: (len(p["per_position"]), p.get("num_drafts") or 0, -(p.get("concurrency") or 0)),
               default=None)
    bases = sorted((p for p in points if p.get("k") == 0 and _num(p.get("mean_tpot_ms"))),
                   key=lambda p: p.get("concurrency") or 0)
    if best is None and not bases:
        raise TuneError(f"--from-tune: the {generator} result has neither per-position acceptance nor a "
                        "no-speculation time per output token")
    src = None
    if best is not None:
        kk = f"k={best['k']}, " if isinstance(best.get("k"), int) and best.get("k") else ""
        src = (f"measured by {generator} ({kk}{model or best.get('model') or '?'}, concurrency "
               f"{best.get('concurrency')}, acceptance length {best.get('mean_acceptance_length')})")
    sched = measured_schedule(points, fixed_k=fixed_k)
    return {
        "per_position": [float(x) for x in best["per_position"]] if best else None,
        "acceptance_source": src,
        "baseline_tpot_ms": float(bases[0]["mean_tpot_ms"]) if bases else None,
        "concurrency": bases[0].get("concurrency") if bases else (best or {}).get("concurrency"),
        "measured": [{k: p.get(k) for k in ("k", "concurrency", "output_tokens_per_s", "mean_tpot_ms")} for p in points],
        **{k: sched[k] for k in ("schedule", "schedule_max", "schedule_note")},
        "by_concurrency": sched["by_concurrency"],
    }


# ---- vllm bench serve / vllm bench sweep serve ---------------------------------------------------

def _bench_serve_point(data: dict[str, Any]) -> dict[str, Any]:
    """One ``vllm bench serve`` result (optionally with sweep overrides) as a measured point."""
    per_pos = data.get("spec_decode_per_position_acceptance_rates")
    rates = None
    if isinstance(per_pos, list) and per_pos:
        if not all(_num(x) is not None and 0.0 <= float(x) <= 1.0 for x in per_pos):
            raise TuneError("--from-tune: spec_decode_per_position_acceptance_rates outside [0, 1]")
        rates = [float(x) for x in per_pos]
    elif "spec_decode_acceptance_length" in data or "spec_decode_num_drafts" in data:
        raise TuneError("--from-tune: the vllm bench serve result has no per-position acceptance (no drafts measured)")
    sc = data.get("speculative_config")
    if isinstance(sc, str):  # a sweep override given as JSON text
        try:
            sc = json.loads(sc)
        except ValueError:
            sc = None
    k: int | None
    if isinstance(sc, dict):
        k = _pos_int(sc.get("num_speculative_tokens"))
    elif rates is not None:
        k = len(rates)
    else:
        k = 0  # no spec_decode_* keys: the server ran without speculation
    tpot = _num(data.get("mean_tpot_ms"))
    return {"k": k, "concurrency": _pos_int(data.get("max_concurrency")), "model": data.get("model_id"),
            "output_tokens_per_s": _num(data.get("output_throughput")),
            "mean_tpot_ms": tpot if tpot and tpot > 0 else None, "per_position": rates,
            "mean_acceptance_length": data.get("spec_decode_acceptance_length"),
            "num_drafts": _num(data.get("spec_decode_num_drafts"))}


def _from_bench_serve(data: dict[str, Any]) -> dict[str, Any]:
    """Plan inputs from one ``vllm bench serve --save-result`` JSON: a run with speculation gives
    the measured acceptance, a run without it (no ``spec_decode_*`` keys) the plain-decode
    baseline (its mean TPOT at its ``max_concurrency``)."""
    p = _bench_serve_point(data)
    if p["per_position"] is None and p["mean_tpot_ms"] is None:
        raise TuneError("--from-tune: the vllm bench serve result has neither acceptance nor mean_tpot_ms")
    return _inputs_from_points([p], generator="vllm bench serve", model=data.get("model_id"))


def _from_sweep_runs(runs: list[Any], where: str) -> dict[str, Any]:
    points = [_bench_serve_point(r) for r in runs if isinstance(r, dict) and "model_id" in r
              and isinstance(r.get("run_number"), int) and r["run_number"] >= 0]
    if not points:
        raise TuneError(f"--from-tune: {where} holds no vllm bench sweep serve runs (run=N.json with model_id)")
    return _inputs_from_points(points, generator="vllm bench sweep serve")


def _sweep_dir(path: Path) -> dict[str, Any]:
    files = sorted(path.glob("*/run=*.json"))[:MAX_SWEEP_RUNS]
    if not files:
        raise TuneError(f"--from-tune: {path.name}/ is not a vllm bench sweep serve experiment folder (no */run=N.json); "
                        "give tune.json, a result JSON or the experiment folder")
    runs = []
    for f in files:
        if f.name.endswith(".failure.json"):
            continue
        try:
            runs.append(json.loads(read_text_file(f, limit=MAX_RESULT_BYTES, what="--from-tune")))
        except ValueError as err:
            raise TuneError(f"--from-tune: {f.parent.name}/{f.name} is not JSON ({str(err)[:120]})") from None
    return _from_sweep_runs(runs, f"{path.name}/")


# ---- GuideLLM ----------------------------------------------------------------------------------------

def _stat(metrics: dict[str, Any], name: str) -> float | None:
    d = metrics.get(name)
    if isinstance(d, dict) and isinstance(d.get("successful"), dict):
        return _num(d["successful"].get("mean"))
    return None


def _from_guidellm(data: dict[str, Any]) -> dict[str, Any]:
    points = []
    for b in data.get("benchmarks") or []:
        if not isinstance(b, dict) or not isinstance(b.get("metrics"), dict):
            continue
        strat = (b.get("config") or {}).get("strategy") if isinstance(b.get("config"), dict) else None
        if not isinstance(strat, dict):
            strat = (b.get("args") or {}).get("strategy") if isinstance(b.get("args"), dict) else None
        strat = strat if isinstance(strat, dict) else {}
        kind = strat.get("type_")
        conc = 1 if kind == "synchronous" else _pos_int(strat.get("streams")) if kind == "concurrent" else None
        if conc is None:
            continue  # rate-driven strategies (constant, poisson, throughput) have no fixed concurrency
        points.append({"k": 0, "concurrency": conc, "per_position": None,
                       "output_tokens_per_s": _stat(b["metrics"], "output_tokens_per_second"),
                       "mean_tpot_ms": _stat(b["metrics"], "time_per_output_token_ms")})
    if not points:
        raise TuneError("--from-tune: the GuideLLM report has no concurrent or synchronous benchmark with metrics "
                        "(run guidellm benchmark --rate-type concurrent)")
    inp = _inputs_from_points(points, generator="GuideLLM")
    inp["notes"] = ["GuideLLM measures no acceptance and records no server settings: its report is read as the "
                    "no-speculation baseline (run it against the server without --speculative-config)"]
    return inp


# ---- AIPerf ------------------------------------------------------------------------------------------

def _avg(data: dict[str, Any], tag: str) -> float | None:
    d = data.get(tag)
    return _num(d.get("avg")) if isinstance(d, dict) else None


def _from_aiperf(data: dict[str, Any]) -> dict[str, Any]:
    cfg = data.get("input_config") if isinstance(data.get("input_config"), dict) else {}
    loadgen = cfg.get("loadgen") if isinstance(cfg.get("loadgen"), dict) else {}
    conc = _pos_int(loadgen.get("concurrency"))
    hist_raw = data.get("pooled_spec_decode_acceptance_histogram")
    rates = None
    if isinstance(hist_raw, dict) and hist_raw:
        try:
            hist = {int(j): int(n) for j, n in hist_raw.items()}
        except (TypeError, ValueError):
            raise TuneError("--from-tune: pooled_spec_decode_acceptance_histogram keys and counts must be whole "
                            "numbers") from None
        total = sum(hist.values())
        if total <= 0 or any(j < 0 or n < 0 for j, n in hist.items()):
            raise TuneError("--from-tune: the AIPerf acceptance histogram counts no verify steps")
        top = max(hist)
        rates = [round(sum(n for j, n in hist.items() if j >= i) / total, 6) for i in range(1, top + 1)]
        if not rates:
            rates = [0.0]
    tpot = _avg(data, "inter_token_latency")
    point = {"k": len(rates) if rates else 0, "concurrency": conc, "per_position": rates,
             "output_tokens_per_s": _avg(data, "output_token_throughput"),
             "mean_tpot_ms": tpot if tpot and tpot > 0 else None,
             "mean_acceptance_length": _avg(data, "spec_decode_acceptance_length"),
             "num_drafts": None}
    if rates is None:
        point["k"] = 0  # no histogram: AIPerf saw no speculative decoding stats
    names = (cfg.get("endpoint") or {}).get("model_names") if isinstance(cfg.get("endpoint"), dict) else None
    model = names[0] if isinstance(names, list) and names else None
    inp = _inputs_from_points([point], generator="AIPerf", model=model)
    if rates is not None:
        inp["notes"] = [f"k unknown from an AIPerf summary: acceptance read for the {len(rates)} position(s) some "
                        "step reached"]
    return inp


# ---- wizard tune -------------------------------------------------------------------------------------

def _tune_points(data: dict[str, Any]) -> list[dict[str, Any]]:
    base = data.get("baselines")
    if not isinstance(base, list):
        base = [data["baseline"]] if isinstance(data.get("baseline"), dict) else []
    pts = []
    for r in [*base, *(data.get("runs") or [])]:
        if not isinstance(r, dict) or not r.get("ok"):
            continue
        pts.append({"k": r.get("k"), "concurrency": r.get("concurrency") or data.get("concurrency"),
                    "output_tokens_per_s": r.get("output_tokens_per_s"), "mean_tpot_ms": r.get("mean_tpot_ms"),
                    "per_position": r.get("per_position") or None, "num_drafts": r.get("num_drafts"),
                    "mean_acceptance_length": r.get("mean_acceptance_length")})
    return pts


def _from_tune(data: dict[str, Any]) -> dict[str, Any]:
    runs = data.get("runs")
    if not isinstance(runs, list):
        raise TuneError("--from-tune: not a wizard tune result (runs is not a list)")
    pts = _tune_points(data)
    if not any(p["per_position"] for p in pts):
        raise TuneError("--from-tune: the tune result has no run with measured per-position acceptance")
    inp = _inputs_from_points(pts, generator="wizard tune", model=data.get("model"))
    if isinstance(data.get("schedule"), list) or data.get("schedule_note"):
        inp.update(schedule=data.get("schedule"), schedule_max=data.get("schedule_max"),
                   schedule_note=data.get("schedule_note") or inp["schedule_note"])
    return inp


def _detect(data: Any, where: str) -> dict[str, Any]:
    if isinstance(data, list):
        return _from_sweep_runs(data, where)
    if not isinstance(data, dict):
        raise TuneError(f"--from-tune: {where} is not a JSON object")
    if "runs" in data:
        return _from_tune(data)
    if isinstance(data.get("benchmarks"), list):
        return _from_guidellm(data)
    if "aiperf_version" in data or "pooled_spec_decode_acceptance_histogram" in data or (
            isinstance(data.get("input_config"), dict) and ("output_token_throughput" in data
                                                             or "inter_token_latency" in data)):
        return _from_aiperf(data)
    if "model_id" in data or "spec_decode_per_position_acceptance_rates" in data:
        return _from_bench_serve(data)
    raise TuneError(f"--from-tune: {where} is none of the formats read (wizard tune.json, vllm bench serve / sweep "
                    "results, GuideLLM benchmarks.json, AIPerf profile_export_aiperf.json)")


#: what --from-tune reads, for the one-line reasons
_EXPECTED = ("a JSON result (wizard tune.json, vllm bench serve / sweep serve result, GuideLLM benchmarks.json, "
             "AIPerf profile_export_aiperf.json) or a vllm bench sweep serve experiment folder")


def _not_json(p: Path, err: json.JSONDecodeError) -> str:
    yaml_hint = " (YAML is not read)" if p.suffix.lower() in (".yaml", ".yml") else ""
    return (f"--from-tune: {p.name} is not JSON{yaml_hint}: {err.msg} at line {err.lineno} column {err.colno}; "
            f"expected {_EXPECTED}")


def plan_inputs_from_results(data: dict[str, Any] | list[Any] | str | Path, *,
                             raise_errors: bool = True) -> dict[str, Any] | None:
    """What a measured result tells the planner (module docstring: the formats, the keys).

    ``data``: a parsed result (dict or, for a sweep summary, list) or a path to a file or to a
    ``vllm bench sweep serve`` experiment folder. ``per_position`` is the cumulative acceptance
    of the speculative run with the most measured positions; ``baseline_tpot_ms`` /
    ``concurrency`` the no-speculation run at the lowest concurrency.

    Raises:
        TuneError: unreadable, none of the formats, or nothing usable measured (only when
            ``raise_errors``; else None).
    """
    try:
        if isinstance(data, (str, Path)):
            p = Path(data)
            if p.is_dir():
                return _sweep_dir(p)
            text = read_text_file(p, limit=MAX_RESULT_BYTES, what="--from-tune")
            try:
                data = json.loads(text)
            except json.JSONDecodeError as err:
                raise TuneError(_not_json(p, err)) from None
            return _detect(data, p.name)
        return _detect(data, "the result")
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as err:
        if raise_errors:
            if isinstance(err, TuneError):
                raise
            raise TuneError(f"--from-tune: not a readable result ({type(err).__name__}: {str(err)[:120]})") from None
        return None
