"""The planner: will target + drafter fit, how much KV cache is left, how many requests run at
once, and what speculation buys at each k and concurrency. A sequence of small steps, each one
module's concern: inputs -> weights (memory) -> scheduler limits -> KV budget -> KV layouts
(kv) -> capacity per KV dtype choice (capacity) -> fit -> speed-up (estimate).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from wizard.context import CheckContext
from wizard.engine.options import truthy
from wizard.hardware.spec import Hardware
from wizard.mechanisms.apply import drafter_length, served_length_after_drafter
from wizard.config import Patch
from wizard.plan.acceptance import TASKS, AcceptanceProfile
from wizard.plan.capacity import KvVariant, capacity
from wizard.plan.inputs import PlanInputError, as_context, check_context_tokens, check_plannable
from wizard.plan.kv import GiB, KvLayout, kv_dtype_bytes, kv_layout
from wizard.plan.memory import (
    drafter_kv_layers, platform_of, reserve_bytes, weights_bytes,
)
from wizard.plan.speedup import SpeedupEstimate
from wizard.resolve import drafter_model_name, model_dtype, supported_dtypes
from wizard.vllm.methods import MTP

__all__ = ["SideMemory", "MemoryPlan", "Plan", "plan", "plan_memory", "schedule_patch"]


class SideMemory(BaseModel):
    """Weights and KV of one side (target or drafter) on one device."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # off the `check` path (issue 21)
    role: Literal["target", "drafter"]
    model: str | None = None
    method: str | None = None
    weights_bytes: int = Field(0, description="Weights on one device (bytes), after TP/PP split.")
    weights_source: str = ""
    kv: KvLayout


class MemoryPlan(BaseModel):
    """The memory plan for one configuration on one kind of device (what decides whether it fits).

    Per-device figures (``*_bytes``) are for ONE device (rank). ``kv_capacity_tokens`` and
    ``max_concurrency`` are what vLLM logs as "KV cache size: N tokens" and "Maximum
    concurrency for L tokens per request: Cx".
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)  # off the `check` path (issue 21)
    hardware: str | None
    platform: Literal["cuda", "rocm", "cpu", "unknown"]
    device_count: int = 1
    memory_per_device_bytes: int | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    draft_tensor_parallel_size: int | None = None
    model_dtype: str
    gpu_memory_utilization: float | None = None
    budget_bytes: int | None = Field(None, description="memory x gpu_memory_utilization (GPU) (bytes).")
    target: SideMemory
    drafter: SideMemory | None = None
    weights_bytes: dict[str, int]
    reserve_bytes: dict[str, int] = Field(default_factory=dict, description="activations / cuda_graphs / non_torch / extensible_kv_margin (0.34 extensible KV cache) (bytes).")
    kv_cache_bytes: int = Field(0, description="Memory left for the KV cache on one device (bytes).")
    kv_cache_source: str = ""
    kv_bytes_per_token: dict[str, int]
    block_size: int
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    num_blocks: int = 0
    blocks_per_request: int = 1
    kv_needed_bytes: int = Field(0, description="KV cache one request at max_model_len needs on one device, with the "
                                                "block vLLM's check keeps spare (bytes); 0 when unknown.")
    kv_capacity_tokens: int = 0
    max_concurrency: float = 0.0
    fits: bool | None = Field(True, description="Whether it fits; None (unknown) when the target model could not be "
                                                  "read or its weights or KV size are unknown: fit_problem says why.")
    fit_problem: str | None = None
    variants: list[KvVariant] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class Plan(MemoryPlan):
    """The memory plan and the speed-up estimate (:mod:`wizard.plan.estimate`)."""

    speedup: SpeedupEstimate
    refused_by: list[str] = Field(default_factory=list, description="The check's error findings ('SD120: title'): "
                                  "vLLM refuses this configuration or it fails at load, whatever the memory says.")

    def refuse(self, errors: list[str]) -> None:
        """The check refuses this configuration (its error findings, 'SD120: title'): recorded in
        ``refused_by``, and no k is recommended (:func:`wizard.plan.estimate.withhold_recommendation`)."""
        from wizard.plan.estimate import withhold_recommendation  # the speed model (see plan())

        self.refused_by = list(errors)
        if not self.speedup.withheld:  # an incomplete plan or a configuration that does not fit says so first
            withhold_recommendation(self.speedup, f"the check reports {len(errors)} error(s) ({errors[0]}): vLLM "
                                                  "would not run this configuration")

    def as_json(self) -> dict[str, Any]:
        """The CLI's JSON shape (stable keys: kv_bytes_per_token, weights_bytes,
        kv_capacity_tokens, max_concurrency, speedup.table, speedup.batches ...)."""
        return self.model_dump(mode="json")


# ---- steps ----------------------------------------------------------------------------------------

@dataclass
class _State:
    """What the steps have worked out so far."""

    ctx: CheckContext
    notes: list[str] = field(default_factory=list)
    dtype: str = "bfloat16"
    tp: int = 1
    pp: int = 1
    draft_tp: int | None = None
    method: str | None = None
    tw: int = 0
    tw_src: str = ""
    dw: int = 0
    dw_src: str = ""
    base: Any = None
    n_draft_layers: int | None = None
    draft_note: str = ""
    mnbt: int = 2048
    seqs: int = 256
    max_len: int = 2048
    bs: int = 16
    in_flight: int = 2048
    reserve: dict[str, int] = field(default_factory=dict)
    util: float | None = None  # set by _budget_step (view.memory_utilization)
    budget: int | None = None
    kv_bytes: int = 0
    kv_src: str = ""


def _weights_step(s: _State) -> None:
    ctx, cfg = s.ctx, s.ctx.config
    hw = ctx.hardware
    s.dtype = model_dtype(cfg.dtype, ctx.target, hw) or supported_dtypes(hw)[0]
    s.tp = cfg.tensor_parallel_size or 1
    s.pp = cfg.pipeline_parallel_size or 1
    spec = cfg.speculative_config
    s.method = ctx.method
    s.draft_tp = (spec.draft_tensor_parallel_size or s.tp) if spec is not None else None
    s.tw, s.tw_src = weights_bytes(ctx.target, s.dtype, s.tp * s.pp)
    s.base, s.n_draft_layers, s.draft_note = drafter_kv_layers(ctx, s.method, ctx.drafter)
    if s.method == MTP:
        s.dw, s.dw_src = 0, "MTP layers are part of the target checkpoint (counted in the target weights)"
    elif s.base is not None and s.method is not None:
        s.dw, s.dw_src = weights_bytes(ctx.drafter, s.dtype, s.draft_tp or 1)  # runs in the target's dtype
    else:
        s.dw, s.dw_src = 0, s.draft_note
    if ctx.target is None:
        s.notes.append(f"target model facts unknown ({ctx.lookup_errors.get('model', 'not inspected')}): plan incomplete")


def _scheduler_step(s: _State) -> None:
    ctx, cfg = s.ctx, s.ctx.config
    hw = ctx.hardware
    view = ctx.view
    b = view.budget  # vLLM's resolved budget (wizard.engine.batch); None when a given value is invalid
    s.mnbt = b.tokens if b is not None else view.batch_defaults.tokens
    s.seqs = b.seqs if b is not None else view.batch_defaults.seqs
    s.max_len = served_length_after_drafter(ctx) or 2048  # 0.33 V2 / 0.34: lowered to a shorter drafter's
    if s.max_len != (view.served_max_model_len or 2048) and (dc := drafter_length(ctx)) is not None:
        s.notes.append(f"max_model_len {s.max_len}: vLLM {dc.release} lowers it to the drafter's ({dc.source})")
    s.bs = view.block_size
    async_on = cfg.async_scheduling if cfg.async_scheduling is not None else (platform_of(hw) == "cuda")
    s.in_flight = (s.pp + 1 if async_on and s.pp > 1 else (2 if async_on else s.pp)) * s.mnbt


def _budget_step(s: _State, kv_cache_space_gib: float | None) -> None:
    """KV bytes per device: CPU = VLLM_CPU_KVCACHE_SPACE (or --kv-cache-memory-bytes); GPU =
    memory x gpu_memory_utilization - weights - reserve."""
    ctx, cfg = s.ctx, s.ctx.config
    hw = ctx.hardware
    s.reserve = reserve_bytes(cfg, ctx.target, hw, s.mnbt, s.seqs)
    mu = ctx.view.memory_utilization
    if mu.extensible and hw is not None and hw.vendor != "cpu":
        # 0.34 measure_kv_cache_bytes keeps max(floor, 0.75 x transient peak) free beyond the budget
        # (v1/worker/extensible_kv_cache.py L64-65, L612-617: floor 1 GiB, 3 GiB on ROCm)
        floor = (3 if hw.vendor == "amd" else 1) * GiB
        s.reserve["extensible_kv_margin"] = max(floor, int(0.75 * s.reserve.get("activations", 0)))
    s.util = mu.value
    if not mu.known:
        s.notes.append(f"gpu_memory_utilization {mu.value:g} assumed: {mu.source}")
    explicit = cfg.extra_args.get("kv_cache_memory_bytes")
    if isinstance(explicit, str) and explicit.isascii() and explicit.isdigit():
        explicit = int(explicit)
    if hw is not None and hw.vendor == "cpu":
        if kv_cache_space_gib is None:
            env = cfg.env.get("VLLM_CPU_KVCACHE_SPACE") or os.environ.get("VLLM_CPU_KVCACHE_SPACE")
            if env:
                try:
                    kv_cache_space_gib = float(int(env))
                except ValueError:
                    s.notes.append(f"VLLM_CPU_KVCACHE_SPACE={env!r} is not an integer (vLLM reads int GiB)")
        if kv_cache_space_gib is not None:
            s.kv_bytes = int(kv_cache_space_gib * GiB)
            s.kv_src = f"VLLM_CPU_KVCACHE_SPACE = {kv_cache_space_gib:g} GiB (platforms/cpu.py: int GiB x 2**30)"
        elif isinstance(explicit, int):
            s.kv_bytes, s.kv_src = explicit, "--kv-cache-memory-bytes"
        else:
            s.kv_bytes = 4 * GiB
            s.kv_src = "assumed 4 GiB (set VLLM_CPU_KVCACHE_SPACE; unset, vLLM sizes it from free RAM)"
        s.util = None
    elif hw is not None:
        s.budget = int(hw.memory_bytes * s.util)
        if isinstance(explicit, int):
            s.kv_bytes, s.kv_src = explicit, "--kv-cache-memory-bytes"
        else:
            s.kv_bytes = s.budget - s.tw - s.dw - sum(s.reserve.values())
            s.kv_src = "memory x gpu_memory_utilization - weights - reserve"
    else:
        s.kv_bytes, s.kv_src = 0, "no hardware given (--gpu): capacity not planned"
        s.notes.append("no hardware: per-token figures only; pass --gpu NAME[xN] for capacity")


def _known_kv(s: _State, d: str | None, field_name: str) -> str | None:
    if d is None:
        return None
    try:
        kv_dtype_bytes(d, s.dtype)
        return d
    except ValueError:
        s.notes.append(f"{field_name} {d!r} is not a KV dtype the planner knows: planned as 'auto'")
        return "auto"


def _layouts(s: _State, t_dtype: str, d_dtype: str | None) -> tuple[KvLayout, KvLayout | None]:
    ctx = s.ctx
    tl = kv_layout(ctx.target, t_dtype, dtype=s.dtype, tp=s.tp, pp=s.pp, release=ctx.version,
                   num_speculative_tokens=ctx.k or 0,
                   speculative_state_blocks=not truthy(ctx.view.option("use_replayssm")),
                   mamba_align=ctx.view.mamba_cache_mode == "align")
    dl = None
    if ctx.config.speculative_config is not None and s.n_draft_layers:
        dl = kv_layout(s.base, d_dtype or t_dtype, dtype=s.dtype, tp=s.draft_tp or s.tp, layers=s.n_draft_layers)
        dl.notes.insert(0, s.draft_note)
    return tl, dl


def _variant(s: _State, label: str, tkv: str, dkv: str | None, note: str = "") -> KvVariant:
    a, b = _layouts(s, tkv, dkv)
    lays = [a] + ([b] if b is not None else [])
    row, nb, per_req, conc, toks = capacity(lays, max(0, s.kv_bytes), s.bs, s.max_len, s.in_flight)
    dev = s.ctx.view.device_kv
    supported = not (dev is not None and any(dt and dt.startswith("fp8") and not dev.fp8 for dt in (tkv, dkv)))
    return KvVariant(
        label=label, target_kv_dtype=tkv, drafter_kv_dtype=dkv,
        kv_bytes_per_token={"target": a.bytes_per_token, "drafter": b.bytes_per_token if b else 0},
        bytes_per_block=row, num_blocks=nb, blocks_per_request=per_req, kv_capacity_tokens=toks,
        max_concurrency=round(conc, 4), supported=supported, note=note,
    )


def _variants_step(s: _State) -> tuple[str, str | None, list[KvVariant]]:
    """The configured KV dtypes, and the fp8-target / model-dtype-drafter alternative."""
    spec = s.ctx.config.speculative_config
    t_kv = _known_kv(s, str(s.ctx.target_kv_dtype()), "kv_cache_dtype") or "auto"
    d_kv = _known_kv(s, str(s.ctx.drafter_kv_dtype()), "speculative_config.kv_cache_dtype") if spec is not None else None
    variants = [_variant(s, "configured", t_kv, d_kv)]
    if not (t_kv.startswith("fp8") and (d_kv in (None, "auto", "bfloat16", "float16"))):
        alt_d = None if spec is None else ("bfloat16" if s.dtype == "bfloat16" else s.dtype)
        variants.append(_variant(
            s, "fp8 target KV + bf16 drafter KV" if spec is not None else "fp8 KV", "fp8", alt_d,
            "target KV in fp8 (--kv-cache-dtype fp8), drafter KV kept in the model dtype "
            "(speculative_config.kv_cache_dtype) so non-causal drafters keep a backend",
        ))
    return t_kv, d_kv, variants


def _fit_step(s: _State, main: KvVariant) -> tuple[bool, str | None]:
    hw = s.ctx.hardware
    if hw is None:
        return True, None
    if hw.vendor != "cpu" and s.budget is not None and s.tw + s.dw + sum(s.reserve.values()) > s.budget:
        return False, (f"weights ({(s.tw + s.dw) / GiB:.2f} GiB) + reserve ({sum(s.reserve.values()) / GiB:.2f} GiB) exceed "
                       f"{s.util:g} x {hw.memory_bytes / GiB:.1f} GiB = {s.budget / GiB:.2f} GiB per GPU")
    if main.num_blocks < main.blocks_per_request + 1 and main.bytes_per_block > 0:
        need = _kv_needed(main)
        have = max(0, s.kv_bytes)
        close = f"{need / GiB:.2f}" == f"{have / GiB:.2f}"  # the same at 2 decimals (CLI trial: "4.00 ... 4.00")
        short = (f" -- {main.num_blocks} blocks fit, a request needs {main.blocks_per_request} plus the null block "
                 "vLLM keeps" if close else "")
        if hw.vendor == "cpu":  # the CPU build's KV cache is VLLM_CPU_KVCACHE_SPACE of RAM, not a GPU's memory
            return False, (f"one request at max_model_len {s.max_len} needs {need / GiB:.2f} GiB of KV cache, "
                           f"{have / GiB:.2f} GiB available ({s.kv_src}){short}")
        return False, (f"one request at max_model_len {s.max_len} needs {need / GiB:.2f} GiB of KV cache per device, "
                       f"{have / GiB:.2f} GiB available{short}")
    return True, None


def _kv_needed(v: KvVariant) -> int:
    """Bytes of KV cache one request at max_model_len needs on one device: its blocks and one more
    (vLLM's _check_enough_kv_cache_memory keeps the null block)."""
    return (v.blocks_per_request + 1) * v.bytes_per_block


def _unknown_fit(s: _State, tl: KvLayout) -> str | None:
    """Why the plan cannot tell whether the target fits (None: it can): the target model could not
    be read (unknown id offline, a broken config.json), or, with hardware, its weight size or KV
    size is unknown (a plan of 0 bytes and 0 KV blocks would read as "fits")."""
    problem = s.ctx.target_problem
    if problem:
        return (f"the target model could not be read ({problem})" if s.ctx.target is None
                else f"the target model could not be read: {problem}")
    if s.ctx.hardware is None:
        return None  # no capacity planned: the sizes below decide nothing
    if not s.tw:
        return f"the target's weight size is unknown ({s.tw_src})"
    if not tl.bytes_per_token and not tl.state_bytes_per_request:
        why = "; ".join(tl.notes) or "no attention or state layers known"
        return f"the target's KV cache size per token is unknown ({why})"
    return None


def _weight_dtype(s: _State) -> str:
    """Operand type of the target's GEMMs for the FLOP/s figure: fp8 for fp8 checkpoints."""
    qm = ((s.ctx.target.quant_method if s.ctx.target else None) or "").lower()
    return "fp8" if qm in ("fp8", "fbgemm_fp8") else s.dtype


# ---- the planner -----------------------------------------------------------------------------------

def plan(
    ctx_or_cfg,
    *,
    hardware: Hardware | str | None = None,
    kv_cache_space_gib: float | None = None,
    acceptance: AcceptanceProfile | Sequence[float] | float | None = None,
    acceptance_source: str | None = None,
    acceptance_kind: str = "cumulative",
    k_max: int = 8,
    context_tokens: int | None = None,
    baseline_step_s: float | None = None,
    baseline_batch: int = 1,
    measured: dict[str, float] | None = None,
    task: str | None = None,
) -> Plan:
    """Plan memory and speed-up for a configuration.

    Args:
        ctx_or_cfg: a resolved CheckContext, or a ServeConfig (resolved here, offline).
        hardware: overrides ctx.hardware ('H100x2', a Hardware); None = ctx.hardware. With no
            hardware at all the plan gives per-token figures only (capacity 0) and says so in
            ``notes``.
        kv_cache_space_gib: CPU KV budget (VLLM_CPU_KVCACHE_SPACE, GiB); default the
            environment variable, else --kv-cache-memory-bytes, else 4 GiB (noted).
        acceptance: per-position acceptance (an AcceptanceProfile, a list, or one rate);
            ``acceptance_kind`` says whether a list is 'cumulative' (vLLM's per-position metric,
            the default) or 'conditional'. Default: see :mod:`wizard.plan.estimate`.
        acceptance_source: label for where ``acceptance`` came from ('entered', 'measured' ...).
        k_max: largest k in the tables (at least the configured k).
        context_tokens: KV tokens per sequence in the cost model (default min(max_model_len, 2048)).
        baseline_step_s / baseline_batch: a measured plain-decode time per output token (s) at
            ``baseline_batch`` concurrent sequences; calibrates the per-pass overhead.
        measured: a measured point from a running server, e.g. {"k": 3, "mean_acceptance_length": 2.4}.
        task: 'chat' | 'code' | 'math' | 'summarization': the published acceptance for that task
            (:data:`wizard.plan.acceptance.TASK_PRIORS`) when no measured or configured one is given.

    Raises:
        HardwareError: unknown hardware name. TypeError: wrong input type. PlanInputError: a
            size beyond 10**100 (see :func:`wizard.plan.inputs.check_plannable`).
    """
    if task is not None and task not in TASKS:
        raise PlanInputError(f"task {str(task)[:40]!r}: choose one of {', '.join(TASKS)}")
    check_context_tokens(context_tokens)
    if isinstance(baseline_batch, bool) or not isinstance(baseline_batch, int) or baseline_batch < 1:
        raise PlanInputError(f"baseline_batch: {str(baseline_batch)[:40]!r} is not a concurrency; give the number of "
                             "requests in flight when the baseline was measured (at least 1)")
    ctx = as_context(ctx_or_cfg, hardware)
    s, mp, tl, dl, main = _memory(ctx, kv_cache_space_gib)
    cfg = ctx.config
    spec = cfg.speculative_config
    hw = ctx.hardware
    if mp.fits is None:  # no speed-ups from a model of 0 bytes: they would be the per-pass overheads alone
        return Plan(**dict(mp), speedup=SpeedupEstimate(
            method=s.method, k=ctx.k, withheld=f"the plan is incomplete: {mp.fit_problem}",
            notes=["no speed-up estimate: the target's size is needed for it"]))
    from wizard.plan.estimate import Calibration, SpeedInputs, estimate_speedup, withhold_recommendation  # the speed model: plan only, not check's memory

    speed = estimate_speedup(
        SpeedInputs(
            method=s.method, k=ctx.k, spec=spec, target=ctx.target, drafter=ctx.drafter, target_model=cfg.model,
            hardware=hw, dtype=s.dtype, weight_dtype=_weight_dtype(s), tp=s.tp, draft_tp=s.draft_tp or s.tp,
            target_weights=s.tw, drafter_weights=s.dw, target_kv=tl, drafter_kv=dl, n_draft_layers=s.n_draft_layers,
            max_model_len=s.max_len, max_num_seqs=s.seqs, max_num_batched_tokens=s.mnbt,
            eager=bool(cfg.enforce_eager), version=ctx.version, kv_capacity_tokens=main.kv_capacity_tokens,
        ),
        acceptance=acceptance, acceptance_source=acceptance_source, acceptance_kind=acceptance_kind, k_max=k_max,
        context_tokens=context_tokens, measured=measured, drafter_name=drafter_model_name(ctx), task=task,
        calibration=Calibration(baseline_step_s, baseline_batch) if baseline_step_s else None,
    )
    if context_tokens and context_tokens > s.max_len:
        speed.notes.append(f"context {context_tokens:,} tokens per sequence is longer than max_model_len {s.max_len:,}: "
                           "vLLM refuses such requests; raise --max-model-len to plan for them")
    if not mp.fits:  # the speed-ups stay (what it would give), but no k is recommended for a config that does not load
        withhold_recommendation(speed, f"the configuration does not fit ({mp.fit_problem or 'not enough memory'}) "
                                       "and would not load")
    return Plan(**dict(mp), speedup=speed)


def _memory(ctx: CheckContext, kv_cache_space_gib: float | None):
    """The memory steps: (state, MemoryPlan, target layout, drafter layout, main KV variant)."""
    cfg = ctx.config
    check_plannable(cfg)
    s = _State(ctx=ctx)
    _weights_step(s)
    _scheduler_step(s)
    _budget_step(s, kv_cache_space_gib)
    t_kv, d_kv, variants = _variants_step(s)
    main = variants[0]
    tl, dl = _layouts(s, t_kv, d_kv)
    spec = cfg.speculative_config
    target_side = SideMemory(role="target", model=cfg.model, weights_bytes=s.tw, weights_source=s.tw_src, kv=tl)
    drafter_side = None
    if spec is not None:
        if dl is None:
            dl = KvLayout(attention="none", kv_dtype=d_kv or t_kv, element_bytes=0, notes=[s.draft_note])
        drafter_side = SideMemory(role="drafter", model=spec.model, method=s.method, weights_bytes=s.dw,
                                  weights_source=s.dw_src, kv=dl)
    fits, problem = _fit_step(s, main)
    unknown = _unknown_fit(s, tl)
    if unknown is not None and fits:
        fits, problem = None, unknown
    hw = ctx.hardware
    mp = MemoryPlan(
        hardware=hw.name if hw else None, platform=platform_of(hw), device_count=hw.count if hw else 1,
        memory_per_device_bytes=hw.memory_bytes if hw else None, tensor_parallel_size=s.tp,
        pipeline_parallel_size=s.pp, draft_tensor_parallel_size=s.draft_tp, model_dtype=s.dtype,
        gpu_memory_utilization=s.util, budget_bytes=s.budget, target=target_side, drafter=drafter_side,
        weights_bytes={"target": s.tw, "drafter": s.dw}, reserve_bytes=s.reserve, kv_cache_bytes=max(0, s.kv_bytes),
        kv_cache_source=s.kv_src, kv_bytes_per_token=main.kv_bytes_per_token, block_size=s.bs, max_model_len=s.max_len,
        max_num_seqs=s.seqs, max_num_batched_tokens=s.mnbt, num_blocks=main.num_blocks,
        blocks_per_request=main.blocks_per_request, kv_needed_bytes=_kv_needed(main),
        kv_capacity_tokens=main.kv_capacity_tokens,
        max_concurrency=main.max_concurrency, fits=fits, fit_problem=problem, variants=variants,
        notes=s.notes + tl.notes + (dl.notes if dl else []),
    )
    return s, mp, tl, dl, main


def plan_memory(ctx_or_cfg, *, hardware: Hardware | str | None = None,
                kv_cache_space_gib: float | None = None) -> MemoryPlan:
    """The memory part of :func:`plan` alone (no speed-up estimate): what the fit rules read.
    Same arguments and errors as :func:`plan`."""
    return _memory(as_context(ctx_or_cfg, hardware), kv_cache_space_gib)[1]


def schedule_patch(p: Plan):
    """The Patch that puts the plan's k schedule into the configuration
    (``speculative_config.num_speculative_tokens_per_batch_size`` and ``num_speculative_tokens`` =
    its largest k, the maximum vLLM sizes the drafter for), None when the plan emitted none. Apply
    it with :func:`wizard.config.apply_patch`; every export form then carries it."""
    s = p.speedup
    if not s.k_schedule or not s.k_schedule_max:
        return None
    return Patch(description="Run the planned k schedule (best k per batch size)",
                 set={"speculative_config.num_speculative_tokens_per_batch_size": [list(r) for r in s.k_schedule],
                      "speculative_config.num_speculative_tokens": int(s.k_schedule_max)})
