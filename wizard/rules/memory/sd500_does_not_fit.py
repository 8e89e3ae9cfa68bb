from __future__ import annotations

import math

from wizard.config import Patch
from wizard.fixes import ngram_fallback
from wizard.plan.inputs import PlanInputError
from wizard.plan.kv import GiB as GIB
from wizard.plan.planner import plan_memory
from wizard.rules.helpers import gib, patched_ctx
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import is_lookup


def plan_of(ctx):
    """The memory plan of ``ctx`` (cached in ``ctx.memory_plan_memo``; the speed-up estimate
    is not needed to decide a fit)."""
    if ctx.memory_plan_memo is None:
        ctx.memory_plan_memo = plan_memory(ctx)
    return ctx.memory_plan_memo


@register
class DoesNotFit(Rule):
    r"""Does not fit in memory

    ## What it does

    Plans memory per device (wizard.plan): weights of the target and of the
    drafter (each split by its TP), the activation/CUDA-graph reserve, then the KV cache of
    target AND drafter layers, each with its own KV dtype. Flags the configuration when the
    weights exceed ``memory x gpu_memory_utilization`` or when fewer KV blocks remain than one
    request at ``max_model_len`` needs. Quiet without hardware (``--gpu``) and when the target
    model could not be read (the plan then has no fit verdict). The title names the drafter
    when there is one ("Target + drafter do not fit in memory").

    On the CPU build the KV cache is ``VLLM_CPU_KVCACHE_SPACE`` GiB of RAM (``wizard serve`` /
    ``plan --kv-cache-space-gib``), not a share of a GPU's memory: the message names it, and the
    fix raises it to the GiB one request needs when the host's RAM holds that and the weights.

    ## Why it matters

    vLLM loads every weight before it finds out: it fails after minutes
    with CUDA OOM or "To serve at least one request with the models's max seq len (L), (X GiB
    KV cache is needed, which is larger than the available KV cache memory (Y GiB)". Tools that
    ignore the drafter under-estimate both the weights and the KV per token.

    ## Example

    on one L4: 15 GiB of weights leave ~4 GiB of KV; 131072 tokens x 128 KiB need 16 GiB

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072 \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Use instead

    Split the model (`--tensor-parallel-size`; over more GPUs than chosen when the chosen
    ones cannot hold it: the message states the TP it planned with), store the KV cache in fp8,
    shorten `--max-model-len`, or switch to a drafter-free method. On the CPU build, raise
    `VLLM_CPU_KVCACHE_SPACE`.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16384 \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    fp8 KV and TP are safe for output quality in practice (fp8 KV can shift
    logits slightly); a smaller `max_model_len` rejects longer prompts; n-gram changes
    acceptance; a larger `VLLM_CPU_KVCACHE_SPACE` takes that much more RAM. Each fix is offered
    only when re-planning shows it removes the finding.

    ## Source

    vllm/v1/core/kv_cache_utils.py ``_check_enough_kv_cache_memory`` and
    ``get_kv_cache_configs`` (vllm-cpu 0.32.0); vllm/v1/worker/gpu_worker.py
    ``determine_available_memory``.
    """

    id = "SD500"
    severity = Severity.ERROR
    versions = ""
    fields = ("max_model_len", "kv_cache_dtype", "tensor_parallel_size", "gpu_memory_utilization")
    phase = "load"

    def check(self, ctx):
        if ctx.hardware is None or ctx.target is None:
            return
        try:
            p = plan_of(ctx)
        except PlanInputError:
            return  # a size beyond 10**100: SD012 reports it (as any beyond 2**53)
        if p.fits is not False:  # True, or None: the plan could not tell (the target could not be read)
            return
        fixes: list[Patch] = []
        for f in self._candidates(ctx, p):
            if "tensor_parallel_size" in f.set and any("tensor_parallel_size" in g.set for g in fixes):
                continue  # the smallest TP that works is enough
            if self._fixes(ctx, f):
                fixes.append(f)
        if not any("tensor_parallel_size" in g.set for g in fixes):
            more = self._more_gpus(ctx)  # the chosen GPUs cannot hold it: the smallest split over more that can
            if more is not None:
                fixes.append(more)
        drafter = ""
        if p.drafter is not None and (p.weights_bytes.get("drafter") or p.kv_bytes_per_token.get("drafter")):
            drafter = (f" (drafter: {gib(p.weights_bytes['drafter'])} weights, "
                       f"{p.kv_bytes_per_token['drafter']:,} KV bytes/token)")
        tp, pp = p.tensor_parallel_size, max(1, ctx.config.pipeline_parallel_size or 1) \
            if isinstance(ctx.config.pipeline_parallel_size, int) else 1
        cpu = ctx.hardware.vendor == "cpu"
        unit = "CPU rank" if cpu else "GPU"
        split = (f"tensor_parallel_size {tp}" + (f", pipeline_parallel_size {pp}" if pp > 1 else "")
                 + ((": one GPU holds the whole model" if not cpu else "") if tp * pp == 1
                    else f": each {unit} holds 1/{tp * pp} of the weights"))
        where = "the CPU" if cpu else f"{p.device_count} x {p.hardware}"
        space = ""
        if cpu:
            g, patch = self._cpu_kv_space(ctx, p)
            # on the CPU a larger VLLM_CPU_KVCACHE_SPACE or a shorter context costs no accuracy, while fp8 KV
            # meets SD206 there, whose fix undoes it (CLI trial: a fix ping-pong); fp8 comes last
            fixes.sort(key=lambda f: f.set.get("kv_cache_dtype") is not None and str(f.set["kv_cache_dtype"]).startswith("fp8"))
            ram = "" if patch is not None or not g else (
                f", which with the weights is more than this host's {gib(ctx.hardware.memory_bytes)} of RAM")
            space = (" On the CPU build the KV cache is VLLM_CPU_KVCACHE_SPACE GiB of RAM: "
                     + (f"one request needs VLLM_CPU_KVCACHE_SPACE={g} (wizard serve / plan --kv-cache-space-gib {g}){ram}; "
                        if g else "raise it (wizard serve / plan --kv-cache-space-gib G) or ")
                     + ("or " if g else "") + "shorten --max-model-len.")
        yield self.finding(
            f"Does not fit on {where} with {split}: {p.fit_problem}{drafter}. "
            f"Target KV {p.kv_bytes_per_token['target']:,} bytes/token ({p.target.kv.kv_dtype}).{space}",
            fixes=fixes,
            fields=[*(f for f in self.fields if f != "gpu_memory_utilization"), "env.VLLM_CPU_KVCACHE_SPACE"]
            if cpu else None,
            title="Target + drafter do not fit in memory" if drafter else None,
        )

    @staticmethod
    def _cpu_kv_space(ctx, p) -> tuple[int | None, Patch | None]:
        """CPU build: (the whole GiB of VLLM_CPU_KVCACHE_SPACE one request at max_model_len needs --
        vLLM reads an int, platforms/cpu.py --, the Patch that sets it when the host's RAM holds it
        and the weights); (None, None) elsewhere."""
        hw = ctx.hardware
        if hw.vendor != "cpu" or not p.kv_needed_bytes or (p.fit_problem and "exceed" in p.fit_problem):
            return None, None
        g = max(1, math.ceil(p.kv_needed_bytes / GIB))
        if hw.memory_bytes and g * GIB + sum(p.weights_bytes.values()) > hw.memory_bytes:
            return g, None
        return g, Patch(description=f"Raise VLLM_CPU_KVCACHE_SPACE to {g} GiB (the CPU build's KV cache in RAM; "
                                 f"wizard serve --kv-cache-space-gib {g})",
                     set={"env.VLLM_CPU_KVCACHE_SPACE": str(g)})

    @staticmethod
    def _fixes(ctx, patch: Patch) -> bool:
        try:
            return plan_memory(patched_ctx(ctx, patch)).fits is True
        except Exception:
            return False

    #: most GPUs a tensor-parallel split is proposed over (one node of the common 8-GPU servers)
    MAX_TP = 8

    @classmethod
    def _more_gpus(cls, ctx) -> Patch | None:
        """The smallest --tensor-parallel-size beyond the chosen GPU count (a divisor of the
        attention heads, at most :data:`MAX_TP`) with which the plan fits on that many GPUs of the
        same kind; the UI's Apply raises the GPU count with it (wizard/ui/panel.py _hardware_for)."""
        hw = ctx.hardware
        if hw is None or hw.vendor == "cpu" or ctx.target is None:
            return None
        cfg = ctx.config
        tp = cfg.tensor_parallel_size if isinstance(cfg.tensor_parallel_size, int) and cfg.tensor_parallel_size > 0 else 1
        pp = cfg.pipeline_parallel_size if isinstance(cfg.pipeline_parallel_size, int) and cfg.pipeline_parallel_size > 0 else 1
        heads = ctx.target.num_attention_heads or 0
        t = tp * 2
        while t <= cls.MAX_TP:
            if heads and heads % t == 0 and t * pp > hw.count:
                patch = Patch(description=f"Split the model over {t} GPUs (--tensor-parallel-size {t}; needs {t * pp} x "
                                          f"{hw.name}, {hw.count} chosen)", set={"tensor_parallel_size": t})
                try:
                    more = patched_ctx(ctx, patch)
                    more.hardware = hw.model_copy(update={"count": t * pp})
                    if plan_memory(more).fits:
                        return patch
                except Exception:
                    return None
            t *= 2
        return None

    @staticmethod
    def _candidates(ctx, p):
        cfg = ctx.config
        hw = ctx.hardware
        out: list[Patch] = []
        tkv = ctx.target_kv_dtype()
        if ctx.view.device_kv.fp8 and not tkv.startswith("fp8") and not tkv.startswith("nvfp4"):
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
        space = DoesNotFit._cpu_kv_space(ctx, p)[1]
        if space is not None:
            out.append(space)
        util = ctx.view.memory_utilization.value
        if hw.vendor != "cpu" and util < 0.95 and hw.used_bytes in (None, 0):
            out.append(Patch(description="Give vLLM 95% of the GPU (--gpu-memory-utilization 0.95)",
                             set={"gpu_memory_utilization": 0.95}))
        if p.drafter is not None and not is_lookup(ctx.method):
            out.append(ngram_fallback(k or 3, "Drop the drafter model: use n-gram speculation (no drafter weights or KV)"))
        return out
