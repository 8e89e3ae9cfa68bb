"""Per-position draft acceptance: the benefit side of speculative decoding.

Two ways to state acceptance per draft position i = 1..k, both accepted here:

* **cumulative** (unconditional) ``p_i``: the probability that the first i drafted tokens are all
  accepted. This is what vLLM reports (``vllm:spec_decode_num_accepted_tokens_per_pos_total
  {position=i-1} / vllm:spec_decode_num_drafts_total``, logged as "Per-position acceptance rate")
  and what ``speculative_config.synthetic_acceptance_rates`` means ("Per-position *unconditional*
  acceptance rates", vllm/config/speculative.py 0.32 L537-543). Non-increasing.
* **conditional** ``a_i = p_i / p_(i-1)`` (``p_0 = 1``): acceptance at position i given that every
  earlier one was accepted (vLLM ``unconditional_to_conditional_rates``,
  vllm/v1/spec_decode/utils.py 0.32 L848-851; EAGLE's "n-alpha").

Mean acceptance length (tokens per verification step, vLLM's "Mean acceptance length"):
``MAL(k) = 1 + sum_{i=1..k} p_i`` (Leviathan et al. 2023, eq. 1, generalised to per-position rates).
Positions past the measured ones repeat the last measured conditional rate (a geometric tail);
the profile says so in ``extrapolated_from``.

Defaults per method family come from published measurements (:data:`FAMILY_DEFAULTS`, each
with its source); a drafter's own figures live in its catalog entry
(``presets/models/drafters.yaml``, key ``acceptance``) and win over the family default.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from wizard.vllm.methods import (
    DFLASH, DRAFT_MODEL, DSPARK, EAGLE, EAGLE3, MEDUSA, MLP_SPECULATOR, MTP, NGRAM, NGRAM_GPU, SUFFIX,
)

__all__ = ["AcceptanceProfile", "FAMILY_DEFAULTS", "TASKS", "TASK_PRIORS", "family_default", "task_prior",
           "task_of_dataset", "from_catalog_entry", "parse_rates", "AcceptanceInputError", "expected_tokens_per_step"]

GivenAs = Literal["cumulative", "conditional", "mean_acceptance_length"]


class AcceptanceInputError(ValueError):
    """Acceptance figures that cannot be used (not numbers, outside [0, 1], empty); the message
    names the input and the fix."""


def _clamp(x: Any) -> float:
    v = float(x)
    return 0.0 if v != v else min(1.0, max(0.0, v))  # NaN counts as 0


class AcceptanceProfile(BaseModel):
    """Acceptance per draft position, stored as cumulative rates ``p_1..p_n`` (see the module
    docstring); ``source`` says where they come from and ``given_as`` in which form they were
    stated. Immutable by convention."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # off the `check` path (issue 21)
    cumulative_rates: list[float] = Field(default_factory=list, description="p_1..p_n, non-increasing, in [0, 1].")
    given_as: GivenAs = "cumulative"
    source: str = "none"
    setup: str | None = Field(None, description="The measured setup (model pair, dataset, k), when known.")
    notes: list[str] = Field(default_factory=list)

    # ---- constructors ---------------------------------------------------------------------------

    @classmethod
    def from_cumulative(cls, rates: Sequence[float], source: str, **kw: Any) -> "AcceptanceProfile":
        """From vLLM-style per-position (unconditional) rates. An increase between positions
        (measurement noise; impossible for true cumulative rates) is flattened, with a note."""
        p = [_clamp(r) for r in rates]
        notes = list(kw.pop("notes", []))
        for i in range(1, len(p)):
            if p[i] > p[i - 1]:
                notes.append(f"position {i + 1}: {p[i]:.3f} > position {i} {p[i - 1]:.3f}; cumulative rates "
                             "cannot rise, flattened")
                p[i] = p[i - 1]
        return cls(cumulative_rates=p, given_as="cumulative", source=source, notes=notes, **kw)

    @classmethod
    def from_conditional(cls, rates: Sequence[float], source: str, **kw: Any) -> "AcceptanceProfile":
        """From conditional rates ``a_i`` (EAGLE's n-alpha): ``p_i = a_1 x ... x a_i``."""
        p, prod = [], 1.0
        for a in rates:
            prod *= _clamp(a)
            p.append(prod)
        return cls(cumulative_rates=p, given_as="conditional", source=source, **kw)

    @classmethod
    def from_mean_length(cls, mean_length: float, k: int, source: str, **kw: Any) -> "AcceptanceProfile":
        """From a mean acceptance length measured at ``k``: the constant conditional rate ``a``
        with ``sum_{i=1..k} a^i = MAL - 1`` (a geometric profile; solved by bisection)."""
        k = max(1, int(k))
        target = min(float(k), max(0.0, float(mean_length) - 1.0))
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if sum(mid ** i for i in range(1, k + 1)) < target:
                lo = mid
            else:
                hi = mid
        a = (lo + hi) / 2
        prof = cls.from_conditional([a] * k, source, **kw)
        prof.given_as = "mean_acceptance_length"
        prof.notes.append(f"mean acceptance length {mean_length:g} at k={k} -> constant conditional rate {a:.3f}")
        return prof

    # ---- figures ----------------------------------------------------------------------------------

    @property
    def measured_positions(self) -> int:
        return len(self.cumulative_rates)

    def cumulative(self, k: int) -> list[float]:
        """p_1..p_k; positions past the given ones repeat the last conditional rate."""
        k = max(0, int(k))
        p = list(self.cumulative_rates[:k])
        if len(p) >= k or not self.cumulative_rates:
            return p + [0.0] * (k - len(p))
        last = self.cumulative_rates[-1]
        prev = self.cumulative_rates[-2] if len(self.cumulative_rates) > 1 else 1.0
        a = last / prev if prev > 0 else 0.0
        cur = last
        for _ in range(k - len(p)):
            cur *= a
            p.append(cur)
        return p

    def conditional(self, k: int) -> list[float]:
        """a_1..a_k (``p_i / p_(i-1)``; 0 after a position with p = 0)."""
        p = self.cumulative(k)
        return [pi / q if q > 0 else 0.0 for pi, q in zip(p, [1.0, *p[:-1]])]

    def mean_acceptance_length(self, k: int) -> float:
        """``1 + sum_{i=1..k} p_i`` tokens per verification step (k = 0: 1). The geometric tail
        is summed in closed form, so any k costs O(measured positions)."""
        k = max(0, int(k))
        if k == 0 or not self.cumulative_rates:
            return 1.0
        n = min(k, len(self.cumulative_rates))
        total = 1.0 + sum(self.cumulative_rates[:n])
        rest = k - n
        if rest > 0:
            last = self.cumulative_rates[-1]
            prev = self.cumulative_rates[-2] if len(self.cumulative_rates) > 1 else 1.0
            a = last / prev if prev > 0 else 0.0
            total += last * rest if a >= 1.0 else last * a * (1.0 - a ** min(rest, 1 << 20)) / (1.0 - a)
        return total

    def describe(self, k: int | None = None) -> str:
        """'0.70/0.48/0.31 cumulative (source)' for text output."""
        n = k if k is not None else self.measured_positions
        rates = "/".join(f"{x:.2f}" for x in self.cumulative(min(n, 8)))
        return f"{rates} per position, cumulative ({self.source})"


def expected_tokens_per_step(rates: Sequence[float], k: int, *, kind: str = "conditional") -> float:
    """Mean acceptance length ``1 + sum_{i<=k} p_i`` for ``rates`` given as ``kind``
    ('conditional': a_1..a_n, Leviathan et al. 2023 eq. 1 per position; 'cumulative': vLLM's
    per-position metric). Positions past the list repeat the last conditional rate, summed in
    closed form (any k costs O(len(rates)))."""
    if kind == "cumulative":
        return AcceptanceProfile.from_cumulative(rates, "given").mean_acceptance_length(k)
    return AcceptanceProfile.from_conditional(rates, "given").mean_acceptance_length(k)


def rising(rates: Sequence[float]) -> str | None:
    """Why ``rates`` typed as cumulative per-position acceptance cannot be that (a position above
    the one before: every accepted token needs the earlier ones accepted), else None. Measured rates
    that rise by noise are flattened instead (:meth:`AcceptanceProfile.from_cumulative`)."""
    for i in range(1, len(rates)):
        if rates[i] > rates[i - 1]:
            return (f"position {i + 1} ({rates[i]:g}) is above position {i} ({rates[i - 1]:g}), and cumulative "
                    "per-position rates cannot rise (each is at most the one before, as vLLM reports them)")
    return None


def parse_rates(text: str, what: str = "--acceptance") -> list[float]:
    """'0.7,0.5,0.3' (commas or spaces) -> [0.7, 0.5, 0.3].

    Raises:
        AcceptanceInputError: empty, not a number, not finite, or outside [0, 1].
    """
    parts = [p for p in str(text).replace(",", " ").split() if p]
    if not parts:
        raise AcceptanceInputError(f"{what}: give per-position acceptance rates such as 0.7,0.5,0.3")
    if len(parts) > 64:
        raise AcceptanceInputError(f"{what}: at most 64 positions, got {len(parts)}")
    out = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            raise AcceptanceInputError(f"{what}: {p[:20]!r} is not a number; give rates such as 0.7,0.5,0.3") from None
        if not math.isfinite(v) or not 0.0 <= v <= 1.0:
            raise AcceptanceInputError(f"{what}: {p[:20]!r} is outside [0, 1]; acceptance rates are fractions")
        out.append(v)
    return out


# ---- published defaults per method family -------------------------------------------------------

#: method -> (cumulative per-position rates, source, setup). Each row is a published vLLM measurement
#: (cumulative "Per-position acceptance rate" / "acceptance at token i"), except those marked
#: "assumed" (no public per-position figure found): measure them with ``wizard tune``.
FAMILY_DEFAULTS: dict[str, tuple[tuple[float, ...], str, str]] = {
    EAGLE3: ((0.70, 0.48, 0.31), "vLLM PR #27732 (https://github.com/vllm-project/vllm/pull/27732)",
             "gpt-oss-20b + RedHatAI/gpt-oss-20b-speculator.eagle3, MT-bench, k=3, MAL 2.49"),
    EAGLE: ((0.73, 0.37, 0.19, 0.10, 0.04, 0.02, 0.02),
            "vLLM issue #20780 (https://github.com/vllm-project/vllm/issues/20780): MAL by k differences",
            "Llama-3.1-8B-Instruct + yuhuili/EAGLE-LLaMA3.1-Instruct-8B, MT-bench, MAL 2.10 (k=2) ... 2.47 (k=7); "
            "the position 1/2 split assumes equal conditional rates at positions 2 and 3"),
    MTP: ((0.798, 0.427), "vLLM issue #36872 (https://github.com/vllm-project/vllm/issues/36872)",
          "Qwen3.5-35B-A3B MTP (qwen3_next_mtp), k=2, MAL 2.23"),
    DSPARK: ((0.630, 0.389, 0.243, 0.158, 0.097, 0.064, 0.040, 0.025),
             "speculators issue #1135 (https://github.com/vllm-project/speculators/issues/1135)",
             "Llama-3.2-1B-Instruct + rasyosef/Llama-3.2-1B-Instruct-DSpark, 'question' subset, k=8, MAL 2.646"),
    DFLASH: (tuple(round(x, 4) for x in AcceptanceProfile.from_mean_length(2.93, 8, "").cumulative_rates),
             "vLLM PR #32206 (https://github.com/vllm-project/vllm/pull/32206)",
             "Qwen3-8B + z-lab/Qwen3-8B-DFlash-b16, MT-bench, k=8, reasoning off, MAL 2.93 (SGLang 2.95); the PR "
             "prints the mean length only: geometric per-position profile with that MAL"),
    DRAFT_MODEL: ((0.70, 0.45, 0.28), "assumed (no public per-position figure found); measure with wizard tune", ""),
    MEDUSA: ((0.60, 0.30, 0.15), "assumed (no public per-position figure found); measure with wizard tune", ""),
    MLP_SPECULATOR: ((0.60, 0.30, 0.15), "assumed (no public per-position figure found); measure with wizard tune", ""),
    NGRAM: ((0.40, 0.25, 0.15), "assumed: n-gram acceptance depends on repetition in the workload; measure with "
            "wizard tune", ""),
    NGRAM_GPU: ((0.40, 0.25, 0.15), "assumed: n-gram acceptance depends on repetition in the workload; measure "
                "with wizard tune", ""),
    SUFFIX: ((0.50, 0.33, 0.22), "assumed: suffix-tree acceptance depends on the workload; measure with wizard tune",
             ""),
}


def _diffs(mals: Sequence[float]) -> tuple[float, ...]:
    """Cumulative p_1..p_n from the mean acceptance lengths measured at k = 1..n
    (p_k = MAL(k) - MAL(k-1), MAL(0) = 1)."""
    out, prev = [], 1.0
    for m in mals:
        out.append(round(max(0.0, m - prev), 4))
        prev = m
    return tuple(out)


#: The tasks a plan can be made for (``plan --task``, the UI's Plan step).
TASKS: tuple[str, ...] = ("chat", "code", "math", "summarization")

#: method -> task -> (cumulative per-position rates, source, setup): published acceptance by task.
#: A method/task without a row uses the method's own default (:data:`FAMILY_DEFAULTS`), said so in
#: the source; never another method's figures.
TASK_PRIORS: dict[str, dict[str, tuple[tuple[float, ...], str, str]]] = {
    EAGLE3: {
        "chat": FAMILY_DEFAULTS[EAGLE3],
        "code": (_diffs([1.83, 2.45, 2.94, 3.26, 3.47, 3.57, 3.62]),
                 "RedHatAI/Llama4-Maverick-17B-128E-Instruct-speculator.eagle3 model card "
                 "(https://huggingface.co/RedHatAI/Llama4-Maverick-17B-128E-Instruct-speculator.eagle3)",
                 "Llama-4-Maverick + EAGLE-3, HumanEval, vLLM 0.11.0, temperature 0.6; acceptance lengths at k=1..7 "
                 "1.83-3.62 (positions = successive differences)"),
        "math": (_diffs([1.86, 2.56, 3.08, 3.53, 3.73, 3.91, 4.02]),
                 "RedHatAI/Llama4-Maverick-17B-128E-Instruct-speculator.eagle3 model card "
                 "(https://huggingface.co/RedHatAI/Llama4-Maverick-17B-128E-Instruct-speculator.eagle3)",
                 "Llama-4-Maverick + EAGLE-3, GSM8K, vLLM 0.11.0, temperature 0.6; acceptance lengths at k=1..7 "
                 "1.86-4.02"),
        "summarization": (_diffs([1.69, 2.12, 2.37, 2.52, 2.60, 2.63, 2.63]),
                          "RedHatAI/Llama4-Maverick-17B-128E-Instruct-speculator.eagle3 model card "
                          "(https://huggingface.co/RedHatAI/Llama4-Maverick-17B-128E-Instruct-speculator.eagle3)",
                          "Llama-4-Maverick + EAGLE-3, CNN/Daily Mail, vLLM 0.11.0, temperature 0.6; acceptance "
                          "lengths at k=1..7 1.69-2.63"),
    },
    DSPARK: {
        "chat": FAMILY_DEFAULTS[DSPARK],
        "code": ((0.837, 0.685, 0.562, 0.460, 0.368, 0.283, 0.217, 0.161),
                 "speculators issue #1135 (https://github.com/vllm-project/speculators/issues/1135)",
                 "Llama-3.2-1B-Instruct + rasyosef/Llama-3.2-1B-Instruct-DSpark, HumanEval, k=8, MAL 4.573"),
    },
    DFLASH: {
        "chat": FAMILY_DEFAULTS[DFLASH],
        "math": (tuple(round(x, 4) for x in AcceptanceProfile.from_mean_length(6.36, 15, "").cumulative_rates),
                 "sglang PR #16818 (https://github.com/sgl-project/sglang/pull/16818)",
                 "Qwen3-8B + z-lab/Qwen3-8B-DFlash-b16 (block 16, k=15), the PR's GSM8K sweep (its accuracy tables "
                 "and benchmark/dflash/bench_dflash_gsm8k_sweep.py), TP1 concurrency 1, average accept length 6.36; "
                 "geometric profile with that MAL"),
    },
    MTP: {
        "chat": FAMILY_DEFAULTS[MTP],
        "math": ((0.7568, 0.6011, 0.4976, 0.4113, 0.3538, 0.2980, 0.2608, 0.2229),
                 "vLLM PR #48892 (https://github.com/vllm-project/vllm/pull/48892)",
                 "multi-layer MTP (8 layers), GSM8K, concurrency 64, temperature 0, model runner V2; acceptance "
                 "length 4.40"),
    },
}


_TASK_WORDS = (("code", ("humaneval", "mbpp", "code", "swe")), ("math", ("gsm8k", "math", "aime")),
               ("summarization", ("cnn", "dailymail", "daily mail", "summar", "xsum")),
               ("chat", ("mt-bench", "mt_bench", "mtbench", "question", "sharegpt", "chat", "alpaca")))


def task_of_dataset(text: str | None) -> str | None:
    """The task a dataset name stands for ('philschmid/mt-bench' -> 'chat', 'HumanEval' -> 'code' ...)."""
    t = (text or "").lower()
    for task, words in _TASK_WORDS:
        if any(w in t for w in words):
            return task
    return None


def task_prior(method: str | None, task: str | None) -> AcceptanceProfile | None:
    """The published acceptance of ``method`` on ``task`` (:data:`TASK_PRIORS`), None without one."""
    row = TASK_PRIORS.get(method or "", {}).get(task or "")
    if row is None:
        return None
    rates, source, setup = row
    return AcceptanceProfile.from_cumulative(rates, f"published {task} prior for {method}: {source}", setup=setup)


def family_default(method: str | None, task: str | None = None) -> AcceptanceProfile | None:
    """The published (or assumed, labelled) default profile for ``method``, None when unknown;
    with ``task`` the method's published figure for that task when there is one, else the method's
    own default with a note that says so."""
    if task:
        prof = task_prior(method, task)
        if prof is not None:
            return prof
    row = FAMILY_DEFAULTS.get(method or "")
    if row is None:
        return None
    rates, source, setup = row
    label = source if source.startswith("assumed") else f"published default for {method}: {source}"
    prof = AcceptanceProfile.from_cumulative(rates, label, setup=setup or None)
    if task:
        prof.notes.append(f"no published {task} acceptance for {method} found: its default ({setup or source}) is used")
    return prof


def from_catalog_entry(acc: Any, model_id: str) -> AcceptanceProfile | None:
    """The profile stored in a catalog entry's ``acceptance`` mapping, None when it holds none.

    Keys: ``per_position`` (list) with ``per_position_kind`` ``cumulative`` (default, vLLM's
    metric) or ``conditional``; else ``mean_acceptance_length`` with ``k``; plus ``source``,
    ``dataset``. Ill-typed values give None (the loader never raises)."""
    if not isinstance(acc, dict):
        return None
    src = f"catalog {model_id}: {acc.get('source') or 'no source given'}"
    setup = ", ".join(str(acc[k]) for k in ("dataset", "setup") if acc.get(k)) or None
    rates = acc.get("per_position")
    try:
        if isinstance(rates, list) and rates:
            vals = [float(r) for r in rates]
            if acc.get("per_position_kind") == "conditional":
                return AcceptanceProfile.from_conditional(vals, src, setup=setup)
            return AcceptanceProfile.from_cumulative(vals, src, setup=setup)
        mal, k = acc.get("mean_acceptance_length"), acc.get("k")
        if isinstance(mal, (int, float)) and isinstance(k, int) and not isinstance(k, bool) and k > 0:
            return AcceptanceProfile.from_mean_length(float(mal), k, src, setup=setup)
    except (TypeError, ValueError):
        return None
    return None
