"""Speed-up vs k and batch size: acceptance (:mod:`wizard.plan.acceptance`) over cost
(:mod:`wizard.plan.cost`).

For ``batch`` concurrent sequences and ``k`` drafted tokens per step::

    speed-up(batch, k) = [b_k x MAL(k) / t_spec(b_k, k)] / [b_0 / t_base(b_0)]
    t_base(b)    = target pass over b sequences x 1 token
    t_spec(b, k) = target pass over b x (1 + k) tokens + the speculative step's overhead
                   + the drafter's passes (EAGLE/MTP/draft model: k passes, the first over the
                   1 + k verified tokens; DFlash/DSpark: one pass of k tokens; n-gram/suffix: none)
    b_k          = min(batch, max_num_batched_tokens // (1 + k), KV capacity with the drafter / context)
                   (vLLM schedules 1 + k tokens per decoding sequence; the rest wait for the next
                   step; at saturation the drafter's weights and KV leave room for fewer requests)
    b_0          = min(batch, max_num_batched_tokens, KV capacity without the drafter / context)
    per drafted token and step: PER_DRAFT_TOKEN_S (rejection sampling, the drafter's sampling row)

Output: rows per k at batch 1 (``table``), a row per batch size 1, 2, 4 ... max_num_seqs with
the speed-up of every k and the best k, and the concurrency above which no k pays (> 1x).
k is capped by what the checkpoint can draft (MTP layers, Medusa/MLP-speculator heads): rows
past the cap are shown, marked, and never recommended.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from wizard.plan.acceptance import AcceptanceProfile
from wizard.plan.cost import PassShape, Roofline, pass_time

__all__ = ["SpeedupRow", "BatchRow", "KPoint", "SpeedupEstimate", "SpeedModel", "DraftStep", "batch_grid",
           "SPEEDUP_TABLE_MAX_K", "BATCH_TABLE_MAX_K"]

#: Rows of the batch-1 table: k = 1..SPEEDUP_TABLE_MAX_K, plus the configured k when larger
#: (vLLM bounds k only by ``gt=0``: a typo such as k=100000 must not make a 100000-row table).
SPEEDUP_TABLE_MAX_K = 64
#: k values evaluated per batch size.
BATCH_TABLE_MAX_K = 16


class SpeedupRow(BaseModel):
    """One k at batch 1: tokens per step (MAL), step cost relative to a plain decode step, speed-up."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # off the `check` path (issue 21)
    k: int
    expected_tokens_per_step: float
    relative_step_cost: float
    speedup: float
    beyond_checkpoint: bool = Field(False, description="k exceeds what the checkpoint drafts (never recommended).")


class KPoint(BaseModel):
    """Speed-up of one k at one batch size; ``bound``: what limits the target's verification pass."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # off the `check` path (issue 21)
    k: int
    speedup: float
    step_ms: float | None = None
    bound: Literal["memory", "compute", "overhead"] = "memory"


class BatchRow(BaseModel):
    """One concurrency level: plain decode step time, speed-up per k, the best k (None: no k
    pays, run without speculation)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # off the `check` path (issue 21)
    batch: int
    base_step_ms: float | None = None
    base_bound: Literal["memory", "compute", "overhead"] = "memory"
    fits_kv: bool = Field(True, description="The KV cache holds this many sequences at the assumed context.")
    points: list[KPoint] = Field(default_factory=list)
    best_k: int | None = None
    best_speedup: float = 1.0


class SpeedupEstimate(BaseModel):
    """Expected speed-up vs k and batch size (see the module docstrings of wizard.plan.speedup,
    .cost and .acceptance for the formulas and their sources)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # off the `check` path (issue 21)
    method: str | None
    k: int | None = Field(None, description="The configured num_speculative_tokens.")
    k_cap: int | None = Field(None, description="Largest k the checkpoint drafts (None: no limit).")
    k_cap_reason: str | None = None
    acceptance: AcceptanceProfile | None = None
    acceptance_rates: list[float] = Field(default_factory=list,
                                          description="Cumulative per-position acceptance p_1..p_n used (vLLM's metric).")
    acceptance_source: str = "none"
    task: str | None = Field(None, description="The task the acceptance was chosen for (plan --task), None: not given.")
    drafter_cost: float = Field(0.0, description="Drafting one token at batch 1 / one plain decode step.")
    drafter_cost_source: str = ""
    context_tokens: int | None = Field(None, description="KV tokens per sequence assumed in the cost model.")
    cost_model: str = ""
    table: list[SpeedupRow] = Field(default_factory=list)
    best_k: int | None = Field(None, description="Best k at batch 1 (within the checkpoint's limit).")
    batches: list[BatchRow] = Field(default_factory=list)
    best_k_by_batch: dict[str, int | None] = Field(default_factory=dict)
    stops_paying_above: int | None = Field(
        None, description="Concurrency above which no k speeds up (None: pays up to max_num_seqs; 0: never pays).")
    k_schedule: list[list[int]] | None = Field(
        None, description="vLLM's speculative_config.num_speculative_tokens_per_batch_size from the best k per batch "
                          "size: inclusive [range_start, range_end, k] entries, k = 0 where no k pays (None: not "
                          "emitted, see k_schedule_note).")
    k_schedule_max: int | None = Field(None, description="num_speculative_tokens to run the schedule with (its largest k).")
    k_schedule_note: str = ""
    withheld: str | None = Field(
        None, description="Why no k is recommended although speed-ups are estimated (the configuration does not "
                          "fit, so it would not load): the tables are then hypothetical and best_k, the rows' best_k, "
                          "best_k_by_batch, stops_paying_above and k_schedule are left empty (None: not withheld).")
    notes: list[str] = Field(default_factory=list)
    measured: dict[str, float] | None = Field(None, description="Measured point from a running server (k, speedup...).")


@dataclass(frozen=True)
class DraftStep:
    """How the drafter runs in one step: ``kind`` 'none' (lookup), 'sequential' (k passes, the
    first over 1 + k tokens), 'parallel' (one pass of k tokens: DFlash/DSpark); ``shape`` and
    ``overhead`` of one pass; ``host`` the host-side time of one pass, which overlaps its GPU work
    (:data:`wizard.plan.cost.DRAFT_PASS_HOST_S`); ``roof`` its device's roofline."""

    kind: Literal["none", "sequential", "parallel"]
    shape: PassShape | None = None
    overhead: float = 0.0
    roof: Roofline | None = None
    host: float = 0.0


def batch_grid(max_num_seqs: int) -> list[int]:
    """1, 2, 4 ... up to ``max_num_seqs``, and ``max_num_seqs`` itself."""
    top = max(1, int(max_num_seqs))
    out, b = [], 1
    while b < top:
        out.append(b)
        b *= 2
    return out + [top]


@dataclass
class SpeedModel:
    """The inputs of the speed-up model for one configuration (all times in seconds)."""

    acceptance: AcceptanceProfile
    target: PassShape
    roof: Roofline
    target_overhead: float
    draft: DraftStep
    context: int
    max_num_batched_tokens: int
    spec_overhead: float
    eager_from: dict[int, int | None] | None = None  # k (0 = no speculation) -> first request count without a graph
    eager_launch: float = 0.0
    per_draft_token: float = 0.0  # per drafted token per step (wizard.plan.cost.PER_DRAFT_TOKEN_S)
    cap_base: int | None = None  # requests whose KV fits without the drafter (None: unknown / unlimited)
    cap_spec: int | None = None  # ... with the drafter's weights and KV taking their share

    def _launch(self, batch: int, k: int) -> float:
        first = (self.eager_from or {}).get(k)
        return self.eager_launch if first is not None and batch >= first else 0.0

    def base(self, batch: int) -> tuple[float, str]:
        t, bound = pass_time(self.target, self.roof, batch=batch, tokens=1, context=self.context,
                             overhead=self.target_overhead, launch_overlap=self._launch(batch, 0))
        return t, bound

    def draft_time(self, batch: int, k: int) -> float:
        d = self.draft
        if d.kind == "none" or d.shape is None or d.roof is None:
            return 0.0
        if d.kind == "parallel":
            return pass_time(d.shape, d.roof, batch=batch, tokens=k + 1, context=self.context, overhead=d.overhead,
                             launch_overlap=d.host)[0]
        first = pass_time(d.shape, d.roof, batch=batch, tokens=k + 1, context=self.context, overhead=d.overhead,
                          launch_overlap=d.host)[0]
        rest = pass_time(d.shape, d.roof, batch=batch, tokens=1, context=self.context, overhead=d.overhead,
                         launch_overlap=d.host)[0]
        return first + (k - 1) * rest

    def spec(self, batch: int, k: int) -> tuple[float, str]:
        t, bound = pass_time(self.target, self.roof, batch=batch, tokens=1 + k, context=self.context,
                             overhead=self.target_overhead, launch_overlap=self._launch(batch, k))
        rows = self.per_draft_token * max(1, batch) * k
        return t + self.spec_overhead + rows + self.draft_time(batch, k), bound

    def speedup(self, batch: int, k: int) -> tuple[float, float, str]:
        """(speed-up, speculative step seconds, bound) at ``batch`` concurrent sequences."""
        b0 = max(1, min(batch, self.max_num_batched_tokens, self.cap_base or batch))
        bk = max(1, min(batch, self.max_num_batched_tokens // (1 + k), self.cap_spec or batch))
        t0 = self.base(b0)[0]
        tk, bound = self.spec(bk, k)
        mal = self.acceptance.mean_acceptance_length(k)
        return (bk * mal / tk) / (b0 / t0), tk, bound

    def best(self, batch: int, ks: list[int]) -> tuple[int | None, float]:
        """(best k, its speed-up) at ``batch``; (None, best) when no k beats plain decoding."""
        best_k, best_s = None, 0.0
        for k in ks:
            s = self.speedup(batch, k)[0]
            if s > best_s + 1e-12:
                best_k, best_s = k, s
        return (best_k, best_s) if best_s > 1.0 else (None, best_s)

    def schedule(self, ks: list[int], max_num_seqs: int) -> list[list[int]]:
        """The best k (0: none pays) for every batch size 1..max_num_seqs as inclusive
        ``[start, end, k]`` ranges (vLLM's ``num_speculative_tokens_per_batch_size`` form): the
        grid 1, 2, 4 ... is evaluated and each change of k is located by bisection between grid
        points (the best k falls with concurrency)."""
        top = max(1, int(max_num_seqs))
        memo: dict[int, int] = {}

        def k_at(b: int) -> int:
            if b not in memo:
                memo[b] = self.best(b, ks)[0] or 0
            return memo[b]

        grid = batch_grid(top)
        cuts: list[int] = []  # first batch size of each new k
        for lo, hi in zip(grid, grid[1:]):
            if k_at(lo) == k_at(hi):
                continue
            a, b = lo, hi  # k_at(a) != k_at(b): find the first b' in (a, b] with k_at(b') == k_at(b)
            while b - a > 1:
                mid = (a + b) // 2
                if k_at(mid) == k_at(hi):
                    b = mid
                else:
                    a = mid
            cuts.append(b)
        starts = [1] + cuts
        out: list[list[int]] = []
        for i, start in enumerate(starts):
            end = (starts[i + 1] - 1) if i + 1 < len(starts) else top
            k = k_at(start)
            if out and out[-1][2] == k:
                out[-1][1] = end
            else:
                out.append([start, end, k])
        return out

    def break_even(self, ks: list[int], max_num_seqs: int) -> int | None:
        """Largest concurrency <= max_num_seqs at which some k still pays (None: pays at every
        concurrency up to max_num_seqs; 0: not even at 1). Bisection over integers (the best
        speed-up falls with concurrency)."""
        top = max(1, int(max_num_seqs))
        if self.best(top, ks)[0] is not None:
            return None
        if self.best(1, ks)[0] is None:
            return 0
        lo, hi = 1, top  # pays at lo, not at hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.best(mid, ks)[0] is not None:
                lo = mid
            else:
                hi = mid
        return lo
