"""The planner's speed-up step: which acceptance applies, how far k may go, what the drafter
costs, then the speed-up table per batch size (:mod:`wizard.plan.speedup`).

Acceptance, first found wins: an explicit ``acceptance`` (``plan --acceptance`` / ``--from-tune``),
``speculative_config.synthetic_acceptance_rates`` / ``synthetic_acceptance_length`` (what vLLM's
synthetic sampler will accept), the drafter's catalog entry (the target's for MTP), the family
default (:data:`wizard.plan.acceptance.FAMILY_DEFAULTS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from wizard.hardware.spec import Hardware
from wizard.models import catalog
from wizard.models.info import ModelInfo
from wizard.plan.acceptance import AcceptanceProfile, family_default, from_catalog_entry, task_of_dataset, task_prior
from wizard.mechanisms.cudagraph import capture_plan
from wizard.plan import cost as _cost
from wizard.plan.cost import (
    PassShape, Roofline, draft_pass_costs, eager_launch_s, model_shape, overhead_s, pass_time,
)
from wizard.plan.kv import KvLayout
from wizard.plan.speedup import (
    BATCH_TABLE_MAX_K, SPEEDUP_TABLE_MAX_K, BatchRow, DraftStep, KPoint, SpeedModel, SpeedupEstimate, SpeedupRow,
    batch_grid,
)
from wizard.resolve import mtp_rewrite
from wizard.vllm.versions import is_known, spec_fields
from wizard.vllm.methods import (
    EXTRACT_HIDDEN_STATES, MEDUSA, MLP_SPECULATOR, MTP, NGRAM_GPU, SUFFIX, is_eagle_head, is_lookup, is_noncausal,
    repeats_mtp_layer,
)

__all__ = ["SpeedInputs", "estimate_speedup", "choose_acceptance", "k_limit", "Calibration", "DEFAULT_CONTEXT_TOKENS"]

#: KV tokens per sequence the cost model assumes unless told (prompt + half the answer of a chat
#: turn). Long contexts make KV reads dominate: speculation then keeps paying at high concurrency
#: (verification reads each sequence's KV once for 1 + k tokens; MagicDec, Sadhukhan et al. 2024,
#: arXiv:2408.11049). Set ``context_tokens`` (``plan --context-tokens``) for such workloads.
DEFAULT_CONTEXT_TOKENS = 1024


@dataclass(frozen=True)
class Calibration:
    """A measured plain-decode step: ``step_s`` seconds per output token per sequence at
    ``batch`` concurrent sequences (vllm bench serve's mean TPOT without speculation)."""

    step_s: float
    batch: int = 1
    source: str = "measured"


@dataclass
class SpeedInputs:
    """Everything the speed-up step reads from the plan (per-device figures)."""

    method: str | None
    k: int | None
    spec: Any  # SpeculativeConfig | None
    target: ModelInfo | None
    drafter: ModelInfo | None
    target_model: str
    hardware: Hardware | None
    dtype: str
    weight_dtype: str
    tp: int
    draft_tp: int
    target_weights: int
    drafter_weights: int
    target_kv: KvLayout
    drafter_kv: KvLayout | None
    n_draft_layers: int | None
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    eager: bool
    version: Any = None  # VllmVersion: the CUDA-graph capture sizes of that release
    kv_capacity_tokens: int = 0  # 0 = unknown


def k_limit(method: str | None, target: ModelInfo | None, drafter: ModelInfo | None,
            n_draft_layers: int | None) -> tuple[int | None, str | None]:
    """(largest k the checkpoint drafts, why), or (None, None) without a limit.

    MTP: the checkpoint's MTP layers (``num_nextn_predict_layers``...), unless its MTP type trains
    one layer per step: with k > layers vLLM reruns the same layer ("Enabling
    num_speculative_tokens > 1 will run multiple times of forward on same MTP layer, which may
    result in lower acceptance rate", vllm/config/speculative.py 0.32 L1375-1386; rule SD064).
    Medusa / MLP speculator: the checkpoint's heads (``n_predict``)."""
    if method == MTP:
        rw = mtp_rewrite(drafter or target)
        if rw is not None and not repeats_mtp_layer(rw[0]):
            return None, None
        n = n_draft_layers or 1
        return n, (f"the checkpoint has {n} MTP layer(s); k > {n} reruns the same layer "
                   "(vllm/config/speculative.py warning, rule SD064)")
    if method in (MEDUSA, MLP_SPECULATOR) and drafter is not None and drafter.n_predict:
        return drafter.n_predict, f"the {method} checkpoint has {drafter.n_predict} prediction head(s) (n_predict)"
    return None, None


def choose_acceptance(spec: Any, method: str | None, drafter_name: str | None, target_name: str,
                      acceptance: AcceptanceProfile | Sequence[float] | float | None,
                      acceptance_source: str | None, acceptance_kind: str = "cumulative",
                      task: str | None = None) -> AcceptanceProfile | None:
    """The acceptance profile to plan with (see the module docstring for the order). ``task``
    ('chat', 'code', 'math', 'summarization'): a drafter's catalog figure measured on another
    task gives way to the method's published figure for ``task`` when there is one."""
    if acceptance is not None:
        if isinstance(acceptance, AcceptanceProfile):
            return acceptance
        rates = [float(acceptance)] if isinstance(acceptance, (int, float)) else [float(a) for a in acceptance]
        src = acceptance_source or "entered"
        if acceptance_kind == "conditional":
            return AcceptanceProfile.from_conditional(rates, src)
        return AcceptanceProfile.from_cumulative(rates, src)
    if spec is not None and spec.synthetic_acceptance_rates:
        try:
            return AcceptanceProfile.from_cumulative([float(a) for a in spec.synthetic_acceptance_rates],
                                                     "speculative_config.synthetic_acceptance_rates (unconditional, "
                                                     "vllm/config/speculative.py 0.32 L537-543)")
        except (TypeError, ValueError):
            pass
    if spec is not None and isinstance(spec.synthetic_acceptance_length, (int, float)) and spec.num_speculative_tokens:
        # vLLM's own resolution (SpeculativeConfig._acceptance_length_to_rates, 0.32 L556-564)
        n = int(spec.num_speculative_tokens)
        drafts = max(0.0, float(spec.synthetic_acceptance_length) - 1)
        full = min(n, int(drafts))
        rates = ([1.0] * full + [drafts - full] + [0.0] * n)[:n]
        return AcceptanceProfile.from_cumulative(rates, "speculative_config.synthetic_acceptance_length "
                                                        "(vLLM's minimum-variance schedule)")
    for name in ([drafter_name] if drafter_name else []) + ([target_name] if method == MTP else []):
        entry = catalog.get_entry(name)
        prof = from_catalog_entry(entry.acceptance, entry.id) if entry is not None else None
        if prof is not None:
            measured_on = task_of_dataset(prof.setup or "") if prof.setup else None
            if task and measured_on and measured_on != task:
                other = task_prior(method, task)
                if other is not None:
                    other.notes.append(f"the drafter's catalog figure is for {measured_on} ({prof.source}); "
                                       f"the method's published {task} figure is used")
                    return other
            return prof
    return family_default(method, task)


def _draft_step(inp: SpeedInputs, target_shape: PassShape | None, roof: Roofline, scale: float) -> tuple[DraftStep, str]:
    """How the drafter runs and what a pass costs."""
    m = inp.method
    if is_lookup(m):
        return DraftStep("none"), "n-gram/suffix lookup: no drafter forward"
    if m == MTP:
        if target_shape is None:
            return DraftStep("none"), "MTP: target facts unknown, drafter cost not counted"
        layers = max(1, inp.target.num_hidden_layers or 1) if inp.target else 1
        head = _lm_head_bytes(inp.target, inp.dtype) / max(1, inp.draft_tp)
        one = target_shape.scaled(1.0 / layers, 1)
        shape = PassShape(**{**one.__dict__, "dense_bytes": one.dense_bytes + head})
        over, host = draft_pass_costs(1, eager=inp.eager)
        return (DraftStep("sequential", shape, over * scale, roof, host * scale),
                "MTP: one target layer + the shared lm_head per drafted token")
    if inp.drafter is None:
        return DraftStep("none"), "drafter facts unknown: drafter cost not counted"
    shape = model_shape(inp.drafter, inp.drafter_weights, inp.dtype, inp.drafter_kv, inp.draft_tp)
    if shape is None:
        return DraftStep("none"), "drafter size unknown: drafter cost not counted"
    note = f"{m}: drafter {inp.drafter.short_name()} ({inp.drafter_weights / 2**30:.2f} GiB per device)"
    if is_eagle_head(m) and inp.drafter.has_lm_head is False:
        shape = PassShape(**{**shape.__dict__,
                             "dense_bytes": shape.dense_bytes + _lm_head_bytes(inp.target, inp.dtype) / max(1, inp.draft_tp)})
        note += " + the target's lm_head (shared)"
    layers = max(1, inp.drafter.num_hidden_layers or 1)
    # Medusa: every head drafts from the same target hidden state in one pass (vllm/v1/spec_decode/medusa.py
    # MedusaProposer.propose: one model forward, the heads' argmax), like the block drafters
    kind = "parallel" if is_noncausal(m) or m == MEDUSA else "sequential"
    over, host = draft_pass_costs(layers, eager=inp.eager)
    return DraftStep(kind, shape, over * scale, roof, host * scale), note


def _graph_coverage(inp: SpeedInputs, k_top: int) -> dict[int, int | None] | None:
    """k -> the first decode request count that runs without a CUDA graph (vLLM's capture
    sizes for that k, :func:`wizard.mechanisms.cudagraph.capture_plan`); None off CUDA/ROCm or
    with --enforce-eager (every pass eager, counted in the overhead)."""
    hw = inp.hardware
    if hw is None or hw.vendor not in ("nvidia", "amd") or inp.eager or inp.version is None:
        return None
    blackwell = hw.sm is not None and 100 <= hw.sm < 110
    out: dict[int, int | None] = {}
    for k in range(0, min(k_top, SPEEDUP_TABLE_MAX_K) + 1):
        cp = capture_plan(inp.version, max_num_seqs=max(1, inp.max_num_seqs), num_speculative_tokens=k,
                          max_num_batched_tokens=max(1, inp.max_num_batched_tokens), blackwell=blackwell)
        out[k] = None if cp.error else cp.eager_from
    return out


def _kv_caps(inp: SpeedInputs, context: int) -> tuple[int | None, int | None]:
    """(requests whose KV fits at ``context`` tokens without speculation, with it), None when the
    capacity is unknown. vLLM sizes one KV pool for target and drafter together ("KV cache size: N
    tokens" counts tokens of both), so the plain server holds ``N x (t + d) / t`` tokens plus what
    the drafter's weights would have left (``drafter bytes / t``), t and d the KV bytes per token."""
    tokens = int(inp.kv_capacity_tokens or 0)
    if tokens <= 0 or context <= 0:
        return None, None
    t = inp.target_kv.bytes_per_token if inp.target_kv is not None else 0
    d = inp.drafter_kv.bytes_per_token if inp.drafter_kv is not None else 0
    spec = max(1, tokens // context)
    if t <= 0:
        return spec, spec
    base_tokens = tokens * (t + d) / t + max(0, inp.drafter_weights) / t
    return max(spec, int(base_tokens // context)), spec


def _lm_head_bytes(info: ModelInfo | None, dtype: str) -> float:
    if info is None or not info.vocab_size or not info.hidden_size:
        return 0.0
    from_bytes = 2.0 if dtype in ("bfloat16", "float16") else (4.0 if dtype == "float32" else 2.0)
    return float(info.vocab_size * info.hidden_size) * from_bytes


def estimate_speedup(
    inp: SpeedInputs,
    *,
    acceptance: AcceptanceProfile | Sequence[float] | float | None = None,
    acceptance_source: str | None = None,
    acceptance_kind: str = "cumulative",
    k_max: int = 8,
    context_tokens: int | None = None,
    calibration: Calibration | None = None,
    measured: dict[str, float] | None = None,
    drafter_name: str | None = None,
    task: str | None = None,
) -> SpeedupEstimate:
    """The speed-up estimate of a plan (empty table without speculation or acceptance)."""
    notes: list[str] = []
    prof = choose_acceptance(inp.spec, inp.method, drafter_name, inp.target_model, acceptance, acceptance_source,
                             acceptance_kind, task)
    k_cap, cap_reason = k_limit(inp.method, inp.target, inp.drafter, inp.n_draft_layers)
    context = int(context_tokens) if context_tokens else min(inp.max_model_len, DEFAULT_CONTEXT_TOKENS)
    est = SpeedupEstimate(method=inp.method, k=inp.k, k_cap=k_cap, k_cap_reason=cap_reason, context_tokens=context,
                          measured=measured)
    if inp.spec is None or prof is None:
        return est
    est.acceptance, est.acceptance_source = prof, prof.source
    est.task = task
    est.acceptance_rates = [round(x, 4) for x in prof.cumulative_rates]

    roof = Roofline.of(inp.hardware, inp.weight_dtype)
    target_shape = model_shape(inp.target, inp.target_weights, inp.dtype, inp.target_kv, inp.tp)
    layers = max(1, (inp.target.num_hidden_layers or 32) if inp.target else 32)
    t_over = overhead_s(layers, eager=inp.eager)
    scale = 1.0
    shape = target_shape or PassShape(dense_bytes=0.0, layers=layers)
    if target_shape is None:
        notes.append("target size unknown: the speed-up counts fixed per-pass overheads only")
    if calibration is not None and calibration.step_s > 0:
        body = pass_time_body(shape, roof, calibration.batch, context)
        measured_over = max(calibration.step_s - body, 0.05 * calibration.step_s)
        if roof.bandwidth is None:  # no roofline: the measurement is the only time scale
            scale = measured_over / t_over
        t_over = measured_over
        est.cost_model = (f"roofline + overhead calibrated on a measured plain step of {calibration.step_s * 1e3:.2f} ms "
                          f"at {calibration.batch} sequence(s) ({calibration.source})")
    elif roof.bandwidth is None:
        est.cost_model = "fixed per-pass overheads only (no bandwidth/FLOP/s for this hardware; calibrate with a " \
                         "measured baseline: wizard tune, or plan --baseline-tpot-ms)"
        notes.append(est.cost_model)
    else:
        est.cost_model = f"roofline ({roof.source}) + per-pass overhead (wizard/plan/cost.py)"
    draft, draft_note = _draft_step(inp, target_shape, roof, scale)
    eager_from = _graph_coverage(inp, max(k_max, min(inp.k or 0, BATCH_TABLE_MAX_K), SPEEDUP_TABLE_MAX_K))
    est.drafter_cost_source = draft_note
    cap_base, cap_spec = _kv_caps(inp, context)
    model = SpeedModel(acceptance=prof, target=shape, roof=roof, target_overhead=t_over, draft=draft, context=context,
                       max_num_batched_tokens=max(1, inp.max_num_batched_tokens), spec_overhead=_cost.SPEC_STEP_S * scale,
                       eager_from=eager_from, eager_launch=eager_launch_s(layers) * scale,
                       per_draft_token=_cost.PER_DRAFT_TOKEN_S * scale,
                       cap_base=cap_base, cap_spec=cap_spec)
    if eager_from:
        notes.append("CUDA graphs (vLLM " + str(inp.version) + "): plain decode runs eagerly from "
                     f"{eager_from.get(0) or 'no'} requests, k=1 from {eager_from.get(1) or 'no'} requests "
                     "(capture-size ceiling, wizard.mechanisms.cudagraph)")

    # ---- batch-1 table -------------------------------------------------------------------------
    top = max(1, int(k_max), int(inp.k or 0) if (inp.k or 0) <= SPEEDUP_TABLE_MAX_K else 1)
    ks = list(range(1, min(top, k_cap or top, SPEEDUP_TABLE_MAX_K) + 1))
    if inp.k and inp.k > ks[-1] and (inp.k > SPEEDUP_TABLE_MAX_K or k_cap):
        ks.append(int(inp.k))  # the configured k, shown (flagged when past the checkpoint's limit)
    t0 = model.base(1)[0]
    est.drafter_cost = round(model.draft_time(1, 1) / t0, 4) if t0 else 0.0
    for k in ks:
        s, tk, _ = model.speedup(1, k)
        est.table.append(SpeedupRow(k=k, expected_tokens_per_step=round(prof.mean_acceptance_length(k), 4),
                                    relative_step_cost=round(tk / t0, 4) if t0 else 0.0, speedup=round(s, 4),
                                    beyond_checkpoint=bool(k_cap and k > k_cap)))
    allowed = [k for k in ks if not (k_cap and k > k_cap)] or [1]
    best_row = max((r for r in est.table if r.k in allowed), key=lambda r: (r.speedup, -r.k))
    est.best_k = best_row.k if best_row.speedup > 1.0 else None

    # ---- per batch size -------------------------------------------------------------------------
    kb = [k for k in range(1, BATCH_TABLE_MAX_K + 1) if k <= max(k_max, min(inp.k or 0, BATCH_TABLE_MAX_K))]
    kb = [k for k in kb if not (k_cap and k > k_cap)] or [1]
    for b in batch_grid(inp.max_num_seqs):
        t_base, base_bound = model.base(max(1, min(b, inp.max_num_batched_tokens)))
        row = BatchRow(batch=b, base_step_ms=round(t_base * 1e3, 4), base_bound=base_bound,
                       fits_kv=not inp.kv_capacity_tokens or b * context <= inp.kv_capacity_tokens)
        for k in kb:
            s, tk, bound = model.speedup(b, k)
            row.points.append(KPoint(k=k, speedup=round(s, 4), step_ms=round(tk * 1e3, 4), bound=bound))
        row.best_k, best_s = model.best(b, kb)
        row.best_speedup = round(best_s, 4)
        est.batches.append(row)
        est.best_k_by_batch[str(b)] = row.best_k
    est.stops_paying_above = model.break_even(kb, inp.max_num_seqs)
    _k_schedule(est, model, kb, inp)
    if k_cap:
        notes.append(f"k capped at {k_cap}: {cap_reason}")
    unfit = [r.batch for r in est.batches if not r.fits_kv]
    if unfit:
        notes.append(f"from {unfit[0]} concurrent requests the KV cache ({inp.kv_capacity_tokens:,} tokens) cannot hold "
                     f"{context:,} tokens each: vLLM queues or preempts; those rows are marked fits_kv=false")
    if prof.measured_positions and max(kb) > prof.measured_positions:
        notes.append(f"acceptance measured for {prof.measured_positions} position(s); later positions repeat the "
                     "last conditional rate")
    if inp.eager:
        notes.append("--enforce-eager: per-layer launch overhead x3 (no CUDA graphs)")
    est.notes = notes
    return est


def withhold_recommendation(est: SpeedupEstimate, why: str) -> None:
    """Keep the estimated speed-ups but recommend no k: a configuration that does not fit, or that
    the check refuses, would not run, so a best k (at batch 1 or per batch size), a stop-paying
    concurrency or a k schedule for it would contradict that verdict. Sets ``est.withheld`` to
    ``why``; the faces (CLI, UI) read it and mark the tables hypothetical."""
    est.withheld = why
    est.best_k = None
    est.best_k_by_batch = {}
    est.stops_paying_above = None
    est.k_schedule = None
    est.k_schedule_max = None
    est.k_schedule_note = ""  # est.withheld says why there is none
    for row in est.batches:
        row.best_k = None


#: Proposers that assert the runtime draft length equals the configured k, so a schedule that
#: lowers it crashes them (advisory NGR-0002, vLLM PR #46399; 0.32.0 still asserts).
_FIXED_K_PROPOSERS = (NGRAM_GPU, SUFFIX, MEDUSA, EXTRACT_HIDDEN_STATES)
FIXED_K_PROPOSERS = _FIXED_K_PROPOSERS  # public: the measured schedule (wizard.launch.tune) applies the same rule
_SCHEDULE_KEY = "num_speculative_tokens_per_batch_size"


def _k_schedule(est: SpeedupEstimate, model: SpeedModel, ks: list[int], inp: SpeedInputs) -> None:
    """Fill ``est.k_schedule`` (vLLM's ``num_speculative_tokens_per_batch_size``) from the best
    k per batch size, or say in ``k_schedule_note`` why none is emitted: the release's
    ``SpeculativeConfig`` lacks the field (it exists in 0.28-0.33, vllm/config/speculative.py), the
    method's proposer needs a fixed k, no k pays anywhere, or one k is best everywhere."""
    if inp.version is not None:
        try:
            known = is_known(inp.version) and _SCHEDULE_KEY in spec_fields(inp.version)
        except (KeyError, ValueError, TypeError, AttributeError):
            known = False
        if not known:
            est.k_schedule_note = (f"no schedule for vLLM {inp.version}: speculative_config.{_SCHEDULE_KEY} is verified "
                                   "in 0.28-0.33 (the list of [start, end, k] form; the dynamic-schedule code appears in "
                                   "0.24, advisory NGR-0002, its field form there is not in the wizard's tables): run the "
                                   "best k for the expected concurrency")
            return
    if inp.method in _FIXED_K_PROPOSERS:
        est.k_schedule_note = (f"{inp.method}'s proposer asserts a fixed draft length: a per-batch schedule crashes it "
                               "(advisory NGR-0002); run the best k for the expected concurrency")
        return
    sched = model.schedule(ks, inp.max_num_seqs)
    if all(k == 0 for _, _, k in sched):
        est.k_schedule_note = "no k pays at any concurrency: run without speculation"
        return
    if len(sched) == 1:
        est.k_schedule_note = f"k={sched[0][2]} is best at every concurrency up to {inp.max_num_seqs}: no schedule needed"
        return
    est.k_schedule = sched
    est.k_schedule_max = max(k for _, _, k in sched)
    off = [r for r in sched if r[2] == 0]
    est.k_schedule_note = (
        f"speculative_config.{_SCHEDULE_KEY} = {sched} with num_speculative_tokens = {est.k_schedule_max}"
        + (f"; speculation off (k=0) from {off[0][0]} concurrent requests" if off else "")
        + ". vLLM runs the V1 model runner's full CUDA graphs as PIECEWISE when a schedule is set "
          "(vllm/config/vllm.py 0.32 _maybe_override_dynamic_sd_cudagraph_mode) and ignores the schedule with "
          "data parallelism; measure it with wizard tune")


def pass_time_body(shape: PassShape, roof: Roofline, batch: int, context: int) -> float:
    """The roofline part (no overhead) of a plain decode pass, seconds."""
    return pass_time(shape, roof, batch=batch, tokens=1, context=context, overhead=0.0)[0]
