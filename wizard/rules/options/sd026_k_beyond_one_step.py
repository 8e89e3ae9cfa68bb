from __future__ import annotations

from wizard.config import Patch
from wizard.mechanisms import apply as A
from wizard.plan.k_policy import k_range
from wizard.rules.helpers import ABSURD
from wizard.rules.registry import Rule, Severity, register


@register
class KBeyondOneStep(Rule):
    r"""num_speculative_tokens beyond one step

    ## What it does

    Compares `1 + k` (the tokens one decode step verifies per request) with the limits vLLM puts
    on a step: the token budget `max_num_batched_tokens` (its default depends on the GPU: 2048,
    8192 or 16384), `max_model_len` (no request ever holds more), and, on NVIDIA GPUs with CUDA
    graphs (no `--enforce-eager`), the largest CUDA-graph capture size the release computes
    (:mod:`wizard.mechanisms.cudagraph`: 512, 1024 on Blackwell SM 10.x, or
    `compilation_config.max_cudagraph_capture_size`).

    ## Why it matters

    `SpeculativeConfig` only asks `k > 0`, so a typo such as `num_speculative_tokens: 100000`
    passes config validation. Then: on the V1 model runner with full decode CUDA graphs vLLM
    raises `No valid cudagraph sizes after rounding to multiple of (k + 1)` (SD741 reports that
    error); on the V2 runner no decode step of that size is captured, so every decode step runs
    without a CUDA graph; and the scheduler cuts every step to its token budget and to
    `max_model_len - 1` (vllm/v1/core/sched/scheduler.py), so the drafts beyond it are computed
    and thrown away, and the drafter's per-request buffers (n-gram proposer: `max_num_seqs x k`)
    grow with k.

    ## Example

    An extra zero or two, or k copied from a tree-search setting:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":100000,"prompt_lookup_max":4}'
    ```

    ## Use instead

    k between 1 and ~8 for EAGLE/MTP/draft models, up to ~16-24 for n-gram and suffix decoding
    (see `wizard plan` for the speed-up at each k).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":5,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    The fix sets the method's usual k (:mod:`wizard.plan.k_policy`; 3 for n-gram and EAGLE), capped
    at the largest value one step can verify: it keeps the method and removes the failure; the best
    k for the workload is in the plan's speed-up table.

    ## Source

    vllm/config/speculative.py `num_speculative_tokens: int = Field(gt=0)`; vllm/config/vllm.py
    `_set_cudagraph_sizes` and vllm/config/compilation.py `adjust_cudagraph_sizes_for_spec_decode`
    (0.32); vllm/v1/core/sched/scheduler.py (token budget, "Make sure the input position does not
    exceed the max model len"); the served length after vllm/config/vllm.py
    ``_limit_max_model_len_to_draft`` (0.34 L3102, always).
    """

    id = "SD026"
    severity = Severity.WARNING
    fields = ("speculative_config.num_speculative_tokens",)
    phase = "load"

    def check(self, ctx):
        k = ctx.k
        if ctx.spec is None or not isinstance(k, int) or isinstance(k, bool) or k < 1 or k > ABSURD:
            return  # above ABSURD: SD012 (a typo or an overflow, with its own fix)
        cfg = ctx.config
        limits: list[tuple[int, str]] = []
        b = ctx.view.budget  # the resolved token budget (wizard.engine.batch)
        mnbt = b.tokens if b is not None and b.tokens is not None else ctx.view.batch_defaults.tokens
        limits.append((mnbt, f"the step token budget max_num_batched_tokens={mnbt}"
                             + ("" if cfg.max_num_batched_tokens else " (vLLM's default here)")))
        mml = A.served_length_after_drafter(ctx)  # lowered to a shorter drafter's (0.33 V2; 0.34 vllm.py:3102)
        if isinstance(mml, int) and mml > 0:
            limits.append((mml, f"max_model_len={mml}"))
        hw = ctx.hardware
        plan = A.capture(ctx) if hw is not None and hw.vendor == "nvidia" else None
        if plan is not None and not plan.error and plan.mode != "NONE" and plan.max_size > 0:
            # with plan.error vLLM refuses the sizes at load: SD741 reports it
            limits.append((plan.max_size, f"the largest CUDA-graph capture size ({plan.max_size}): no decode step "
                                          "with this k is captured, so every decode step runs without a CUDA graph"))
        over = [(n, why) for n, why in limits if k + 1 > n]
        if not over:
            return
        bound = min(n for n, _ in over) - 1
        usual = min(bound, k_range(ctx.method, ctx.target, ctx.drafter).default)  # the method's usual k, when it fits
        fixes = [Patch(description=f"Set num_speculative_tokens to {usual} (the usual k for {ctx.method}; at most "
                                   f"{bound} fits one step)",
                       set={"speculative_config.num_speculative_tokens": usual})] if usual >= 1 else []
        shown = k if k < 10 ** 12 else f"a {len(str(k))}-digit number"
        yield self.finding(
            f"num_speculative_tokens={shown}: one decode step verifies 1 + k tokens per request, more than "
            + "; and ".join(why for _, why in over)
            + ". vLLM accepts any k > 0 but cannot use this one: lower k (usually 1-8; `wizard plan` shows the "
            "speed-up at each k).",
            fixes=fixes,
        )
