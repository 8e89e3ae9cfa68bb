"""What the planner accepts: a CheckContext or a ServeConfig (resolved here, offline), and sizes
it can compute with."""

from __future__ import annotations

from wizard.config import ServeConfig
from wizard.context import CheckContext, resolve_context
from wizard.hardware.catalog import parse_gpu_spec
from wizard.hardware.spec import Hardware

__all__ = ["PlanInputError", "check_plannable", "check_context_tokens", "as_context", "MAX_CONTEXT_TOKENS"]


class PlanInputError(ValueError):
    """A configuration value no plan can be made for (a number beyond 10**100: products of such
    numbers overflow the floats the plan reports); the message names the field. The check reports
    the same value as an error (SD012, anything beyond 2**53), so the memory rules skip it."""


#: numbers the planner multiplies and divides (ServeConfig / SpeculativeConfig field names)
_PLANNED_SIZES = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "max_model_len",
                  "max_num_seqs", "max_num_batched_tokens", "block_size", "gpu_memory_utilization")
_PLANNED_SPEC = ("num_speculative_tokens", "draft_tensor_parallel_size", "max_model_len")
_PLAN_LIMIT = 10 ** 100


def check_plannable(cfg: ServeConfig) -> None:
    """Raise PlanInputError for a size the plan cannot compute with: beyond 10**100 (any two such
    numbers multiplied overflow a float) or not finite. Everything below is planned as given
    (values above 2**53 are already errors of rule SD012)."""
    spec = cfg.speculative_config
    vals = [(n, getattr(cfg, n)) for n in _PLANNED_SIZES]
    if spec is not None:
        vals += [(f"speculative_config.{n}", getattr(spec, n)) for n in _PLANNED_SPEC]
    mem = cfg.extra_args.get("kv_cache_memory_bytes")
    if isinstance(mem, str) and mem.strip().isascii() and mem.strip().isdigit():
        mem = int(mem) if len(mem.strip()) <= 120 else _PLAN_LIMIT + 1
    vals.append(("extra_args.kv_cache_memory_bytes", mem))
    for name, v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if isinstance(v, float) and v != v or abs(v) > _PLAN_LIMIT:
            shown = f"a {len(str(abs(int(v))))}-digit number" if isinstance(v, int) and abs(v) > 10 ** 30 else repr(v)
            raise PlanInputError(f"{name}: {shown} is not a size vLLM can run with (more than 10**100); "
                                 f"set a realistic value or unset it")


#: the largest k any face accepts or offers (the UI's slider and k lists, the CLI's ``plan --k-max``
#: and ``tune --k``); vLLM accepts any k > 0 within the step budget (SD026)
K_HARD_MAX = 64

#: the largest concurrency a tune sweep accepts (the CLI's and the UI's ``--concurrency`` lists,
#: wizard.launch.tune)
MAX_CONCURRENCY = 4096

#: the longest context per sequence the speed model is asked about (``plan --context-tokens``): 10
#: million tokens, above every max_model_len a released model declares (Llama 4 Scout: 10M)
MAX_CONTEXT_TOKENS = 10_000_000


def check_context_tokens(n: object) -> None:
    """Raise PlanInputError unless ``n`` (KV tokens per sequence in the speed model) is None or a
    whole number from 1 to :data:`MAX_CONTEXT_TOKENS`."""
    if n is None:
        return
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_CONTEXT_TOKENS:
        shown = f"a {len(str(abs(n)))}-digit number" if isinstance(n, int) and abs(n) > 10 ** 30 else repr(n)[:40]
        raise PlanInputError(f"context_tokens: {shown} is not a context length; give a whole number of tokens "
                             f"from 1 to {MAX_CONTEXT_TOKENS:,}")


def as_context(ctx_or_cfg: CheckContext | ServeConfig, hardware: Hardware | str | None) -> CheckContext:
    """``ctx_or_cfg`` as a CheckContext, with ``hardware`` (a name such as 'H100x2' or a Hardware)
    replacing its hardware when given. A ServeConfig is resolved offline (local folders and the
    catalog; never the Hub).

    Raises:
        TypeError: neither a CheckContext nor a ServeConfig. HardwareError: unknown hardware name.
    """
    if isinstance(hardware, str):
        hardware = parse_gpu_spec(hardware)
    if isinstance(ctx_or_cfg, CheckContext):
        ctx = ctx_or_cfg
        if hardware is not None and ctx.hardware is not hardware:
            ctx = CheckContext(config=ctx.config, version=ctx.version, target=ctx.target, drafter=ctx.drafter,
                               hardware=hardware, lookup_errors=dict(ctx.lookup_errors))
        return ctx
    if isinstance(ctx_or_cfg, ServeConfig):
        return resolve_context(ctx_or_cfg, hardware=hardware, allow_hub=False)
    raise TypeError(f"plan() takes a CheckContext or ServeConfig, not {type(ctx_or_cfg).__name__}")
