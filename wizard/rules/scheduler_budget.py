"""The scheduler budget vLLM will use (shared by the scheduler rules SD140-SD149).

    from wizard.rules.scheduler_budget import budget
    b = budget(ctx)     # Budget(tokens=512, seqs=1024, max_model_len=131072, chunked=True, ...)

Mirrors vllm/engine/arg_utils.py (0.28-0.33): ``_set_default_chunked_prefill_and_prefix_caching_args``
(chunked prefill on unless ``--no-enable-chunked-prefill``), ``get_batch_defaults`` (per hardware,
:func:`wizard.plan.memory.default_scheduler_limits`) and ``_set_default_max_num_seqs_and_batched_tokens_args``
(the default budget is raised to ``max_model_len`` without chunked prefill, doubled by
``--performance-mode throughput``, capped at ``max_num_seqs x max_model_len``; a defaulted ``max_num_seqs`` capped at the token budget). ``max_model_len``
is the one ModelConfig settles on: the given one, else the derived length (:mod:`wizard.vllm.checks`).
"""

from __future__ import annotations

from dataclasses import dataclass

from wizard.plan.memory import default_scheduler_limits
from wizard.rules.helpers import as_int
from wizard.rules.optionvalues import option, truthy
from wizard.vllm.checks import derived_max_len

__all__ = ["Budget", "budget", "served_max_model_len"]


@dataclass(frozen=True)
class Budget:
    """Scheduler numbers as vLLM resolves them (tokens per step, sequences, served length)."""

    tokens: int | None
    seqs: int | None
    max_model_len: int | None
    chunked: bool
    tokens_given: bool
    seqs_given: bool


def served_max_model_len(ctx) -> int | None:
    """``max_model_len`` as ModelConfig settles on it: the given value (>= 1), else the length
    vLLM derives from the target (None when the target is unknown)."""
    mml = as_int(ctx.config.max_model_len)
    if mml is not None and mml >= 1:
        return mml
    if ctx.target is None or not ctx.target.raw_config:
        return None
    d = derived_max_len(ctx.target, ctx.version, option(ctx, "hf_overrides"),
                        truthy(option(ctx, "disable_sliding_window", False)))
    return d.default


def budget(ctx) -> Budget | None:
    """The :class:`Budget` vLLM will use, None when a given value is not a positive integer
    (the bound rules report those)."""
    if "scheduler_budget" in ctx.cache:
        return ctx.cache["scheduler_budget"]
    cfg = ctx.config
    tokens, seqs = as_int(cfg.max_num_batched_tokens), as_int(cfg.max_num_seqs)
    result = None
    if not ((cfg.max_num_batched_tokens is not None and (tokens is None or tokens < 1))
            or (cfg.max_num_seqs is not None and (seqs is None or seqs < 1))):
        chunked = cfg.enable_chunked_prefill is not False
        mml = served_max_model_len(ctx)
        world = max(1, ctx.tp) * max(1, ctx.pp)
        d_tokens, d_seqs = default_scheduler_limits(ctx.hardware, world)
        throughput = str(option(ctx, "performance_mode", "") or "") == "throughput"
        eff_seqs = seqs if seqs is not None else d_seqs * (2 if throughput else 1)
        eff_tokens = tokens
        if tokens is None:
            eff_tokens = d_tokens * (2 if throughput else 1)
            if mml is not None:
                if not chunked:
                    eff_tokens = max(mml, eff_tokens)
                eff_tokens = min(eff_seqs * mml, eff_tokens)
        if seqs is None and eff_tokens is not None:  # a defaulted max_num_seqs never exceeds the token budget
            eff_seqs = min(eff_seqs, eff_tokens)
        result = Budget(eff_tokens, eff_seqs, mml, chunked, tokens is not None, seqs is not None)
    ctx.cache["scheduler_budget"] = result
    return result
