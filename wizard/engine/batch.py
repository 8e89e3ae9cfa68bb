"""Facts: vLLM's batch defaults (``view.batch_defaults``) and the scheduler token budget
(``view.budget``).

Mirrors vllm/engine/arg_utils.py ``EngineArgs.get_batch_defaults`` (0.32 L2894-2985; 0.33
L2940-3035, which keeps GB10 -- compute capability 12.1 -- on the small tier) for the
OPENAI_API_SERVER usage context of ``vllm serve``:

* device memory >= 160 GiB: 16384 tokens / 1024 sequences;
* >= 70 GiB and not an A100 (and, from 0.33, not GB10): 8192 / 1024;
* other GPUs, and a device vLLM cannot query (``device_memory = 0``): 2048 / 256;
* CPU (``current_platform.is_cpu()``): 2048 x world / 128 x world, world = TP x PP.

and ``_set_default_max_num_seqs_and_batched_tokens_args`` (0.32 L3097-3180, 0.33 the same):
a defaulted budget is doubled by ``--performance-mode throughput``, raised to ``max_model_len``
without chunked prefill, capped at ``max_num_seqs x max_model_len``; a defaulted ``max_num_seqs``
is doubled by throughput mode and capped at the token budget. Chunked prefill is on unless
``--no-enable-chunked-prefill`` (``_set_default_chunked_prefill_and_prefix_caching_args``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wizard.hardware.spec import Hardware

__all__ = ["BatchDefaults", "Budget", "batch_defaults", "token_budget", "world_size"]

_GiB = 1 << 30


@dataclass(frozen=True)
class BatchDefaults:
    """``max_num_batched_tokens`` / ``max_num_seqs`` vLLM fills in when unset. ``hardware_known``
    is False when no hardware was given (the numbers are then vLLM's fallback for a device it
    cannot query, which the real server may not hit)."""

    tokens: int
    seqs: int
    hardware_known: bool


@dataclass(frozen=True)
class Budget:
    """Scheduler numbers as vLLM resolves them (tokens per step, sequences, served length)."""

    tokens: int | None
    seqs: int | None
    max_model_len: int | None
    chunked: bool
    tokens_given: bool
    seqs_given: bool


def world_size(tp: Any, pp: Any) -> int:
    """TP x PP as EngineArgs multiplies them (each at least 1, capped so a typo stays finite)."""
    def one(v: Any) -> int:
        return min(v, 1 << 20) if isinstance(v, int) and not isinstance(v, bool) and v >= 1 else 1
    return one(tp) * one(pp)


def batch_defaults(hardware: Hardware | None, world: int, version: Any) -> BatchDefaults:
    """The OPENAI_API_SERVER defaults of ``get_batch_defaults`` (see the module docstring)."""
    if hardware is not None and hardware.vendor == "cpu":
        return BatchDefaults(2048 * world, 128 * world, True)
    if hardware is None:
        return BatchDefaults(2048, 256, False)
    mem = hardware.memory_bytes or 0
    gb10 = (getattr(hardware, "compute_capability", None) == (12, 1)
            and version is not None and version.at_least("0.33"))
    if mem >= 160 * _GiB:
        return BatchDefaults(16384, 1024, True)
    if mem >= 70 * _GiB and "a100" not in (hardware.name or "").lower() and not gb10:
        return BatchDefaults(8192, 1024, True)
    return BatchDefaults(2048, 256, True)


def _as_int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def token_budget(cfg: Any, defaults: BatchDefaults, served_len: int | None, throughput: bool) -> Budget | None:
    """The :class:`Budget` vLLM will use, None when a given value is not a positive integer
    (the bound rules report those)."""
    tokens, seqs = _as_int(cfg.max_num_batched_tokens), _as_int(cfg.max_num_seqs)
    if ((cfg.max_num_batched_tokens is not None and (tokens is None or tokens < 1))
            or (cfg.max_num_seqs is not None and (seqs is None or seqs < 1))):
        return None
    chunked = cfg.enable_chunked_prefill is not False
    eff_seqs = seqs if seqs is not None else defaults.seqs * (2 if throughput else 1)
    eff_tokens = tokens
    if tokens is None:
        eff_tokens = defaults.tokens * (2 if throughput else 1)
        if served_len is not None:
            if not chunked:
                eff_tokens = max(served_len, eff_tokens)
            eff_tokens = min(eff_seqs * served_len, eff_tokens)
    if seqs is None and eff_tokens is not None:  # a defaulted max_num_seqs never exceeds the token budget
        eff_seqs = min(eff_seqs, eff_tokens)
    return Budget(eff_tokens, eff_seqs, served_len, chunked, tokens is not None, seqs is not None)
