from __future__ import annotations

import math

from wizard.config import Patch
from wizard.plan.planner import plan_memory
from wizard.rules.helpers import gib, patched_ctx
from wizard.rules.registry import Rule, Severity, register


@register
class MemoryUtilizationTooHigh(Rule):
    r"""gpu_memory_utilization is higher than the free memory on the GPU

    ## What it does

    Needs discovered hardware (wizard.hardware.nvml NVML discovery fills
    ``Hardware.used_bytes``, memory held by other processes). Flags
    ``gpu_memory_utilization x total > total - used``. Quiet with catalog-only hardware.

    ## Why it matters

    vLLM checks at start-up that free memory covers the requested fraction
    and stops: "Free memory on device ... on startup is less than desired GPU memory
    utilization". Another vLLM, a notebook or a second drafter server on the same GPU is the
    usual cause. From vLLM 0.34 the extensible KV cache (on by default on CUDA and ROCm) makes
    the fraction only a cap and the start-up check is skipped; the rule is quiet there unless the
    cache is off (``--no-enable-extensible-kv-cache``, ``--kv-cache-memory-bytes`` ...).

    ## Example

    vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9   (with 40 GiB of an 80 GiB GPU in use)

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9 \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Use instead

    ``--gpu-memory-utilization`` below ``free / total``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.45 \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Lowering the fraction is safe but shrinks the KV cache; offered only
    when the plan still fits.

    ## Source

    vllm/v1/worker/gpu_worker.py ``init_device`` / ``request_memory`` (0.32); 0.34:
    vllm/v1/worker/utils.py L783 (``not cache_config.enable_extensible_kv_cache``).
    """

    id = "SD503"
    severity = Severity.ERROR
    versions = ""
    fields = ("gpu_memory_utilization",)
    phase = "load"

    @staticmethod
    def _over(ctx, util: float) -> bool:
        hw = ctx.hardware
        return util * hw.memory_bytes > hw.memory_bytes - (hw.used_bytes or 0)

    def check(self, ctx):
        hw = ctx.hardware
        if hw is None or hw.vendor == "cpu" or not hw.used_bytes:
            return
        mu = ctx.view.memory_utilization
        if mu.extensible is not False:  # 0.34+: the budget is only a cap (vllm/v1/worker/utils.py 0.34 L783)
            return
        util = mu.value
        if not isinstance(util, (int, float)) or not self._over(ctx, util):
            return
        free = hw.memory_bytes - hw.used_bytes
        new = math.floor((free / hw.memory_bytes - 0.01) * 100) / 100
        fixes = []
        if new >= 0.05:
            patch = Patch(description=f"Lower --gpu-memory-utilization to {new:.2f} (free {gib(free)} of {gib(hw.memory_bytes)})",
                          set={"gpu_memory_utilization": new})
            try:
                pctx = patched_ctx(ctx, patch)
                if not self._over(pctx, new) and (ctx.target is None or plan_memory(pctx).fits is not False):
                    fixes.append(patch)
            except Exception:
                pass
        yield self.finding(
            f"gpu_memory_utilization {util:g} asks for {gib(int(util * hw.memory_bytes))} per GPU but only "
            f"{gib(free)} of {gib(hw.memory_bytes)} is free ({gib(hw.used_bytes)} held by other processes). "
            "vLLM stops at start-up ('Free memory on device ... is less than desired GPU memory utilization')."
            + ("" if fixes else " Lowering the fraction would not leave room for the model: free the GPU first."),
            fixes=fixes,
        )
