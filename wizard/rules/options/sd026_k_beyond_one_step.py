from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register


def _cudagraph_cap(ctx) -> int | None:
    """vLLM's largest CUDA-graph capture size on a known NVIDIA GPU with CUDA graphs on, else None
    (``VllmConfig._set_cudagraph_sizes``, 0.32: 512, 1024 on data-centre Blackwell (SM 10.x),
    or ``compilation_config.max_cudagraph_capture_size``)."""
    hw = ctx.hardware
    cfg = ctx.config
    if hw is None or hw.vendor != "nvidia" or cfg.enforce_eager:
        return None
    extra = cfg.extra_args
    explicit = extra.get("max_cudagraph_capture_size", extra.get("compilation_config.max_cudagraph_capture_size"))
    cc = extra.get("compilation_config")
    if isinstance(cc, dict):
        explicit = cc.get("max_cudagraph_capture_size", explicit)
        mode = str(cc.get("cudagraph_mode", "")).upper()
        if mode in ("NONE", "PIECEWISE", "0", "1"):
            return None
    if isinstance(explicit, str) and explicit.isascii() and explicit.isdigit() and len(explicit) < 12:
        explicit = int(explicit)
    if isinstance(explicit, int) and not isinstance(explicit, bool) and explicit > 0:
        return explicit
    cap = hw.compute_capability
    return 1024 if cap is not None and cap[0] == 10 else 512


@register
class KBeyondOneStep(Rule):
    r"""num_speculative_tokens beyond one step

    ## What it does

    Compares `1 + k` (the tokens one decode step verifies per request) with the limits vLLM puts
    on a step: the token budget `max_num_batched_tokens` (its default depends on the GPU: 2048,
    8192 or 16384), `max_model_len` (no request ever holds more), and, on NVIDIA GPUs with CUDA
    graphs (no `--enforce-eager`), the largest CUDA-graph capture size: 512 (1024 on Blackwell
    SM 10.x) or `compilation_config.max_cudagraph_capture_size`.

    ## Why it matters

    `SpeculativeConfig` only asks `k > 0`, so a typo such as `num_speculative_tokens: 100000`
    passes config validation. Then: with full decode CUDA graphs vLLM raises `No valid cudagraph
    sizes after rounding to multiple of (k + 1)` while capturing graphs, after the model has
    loaded; otherwise the scheduler cuts every step to its token budget and to
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

    Lowering k to the largest value one step can verify keeps the method and removes the failure;
    the best k is usually far lower (see the plan's speed-up table).

    ## Source

    vllm/config/speculative.py `num_speculative_tokens: int = Field(gt=0)`; vllm/config/vllm.py
    `_set_cudagraph_sizes` and vllm/config/compilation.py `adjust_cudagraph_sizes_for_spec_decode`
    (0.32); vllm/v1/core/sched/scheduler.py (token budget, "Make sure the input position does not
    exceed the max model len").
    """

    id = "SD026"
    severity = Severity.WARNING
    fields = ("speculative_config.num_speculative_tokens",)
    phase = "load"

    def check(self, ctx):
        k = ctx.k
        if ctx.spec is None or not isinstance(k, int) or isinstance(k, bool) or k < 1:
            return
        cfg = ctx.config
        limits: list[tuple[int, str]] = []
        b = ctx.view.budget  # the resolved token budget (wizard.engine.batch)
        mnbt = b.tokens if b is not None and b.tokens is not None else ctx.view.batch_defaults.tokens
        limits.append((mnbt, f"the step token budget max_num_batched_tokens={mnbt}"
                             + ("" if cfg.max_num_batched_tokens else " (vLLM's default here)")))
        mml = ctx.view.served_max_model_len
        if isinstance(mml, int) and mml > 0:
            limits.append((mml, f"max_model_len={mml}"))
        cap = _cudagraph_cap(ctx)
        if cap is not None:
            limits.append((cap, f"the largest CUDA-graph capture size ({cap}; vLLM raises 'No valid cudagraph sizes "
                                f"after rounding to multiple of {k + 1 if k < 10 ** 12 else 'k+1'}' at load)"))
        over = [(n, why) for n, why in limits if k + 1 > n]
        if not over:
            return
        bound = min(n for n, _ in over) - 1
        fixes = [Patch(description=f"Set num_speculative_tokens to {bound}",
                       set={"speculative_config.num_speculative_tokens": bound})] if bound >= 1 else []
        shown = k if k < 10 ** 12 else f"a {len(str(k))}-digit number"
        yield self.finding(
            f"num_speculative_tokens={shown}: one decode step verifies 1 + k tokens per request, more than "
            + "; and ".join(why for _, why in over)
            + ". vLLM accepts any k > 0 but cannot use this one: lower k (usually 1-8; `wizard plan` shows the "
            "speed-up at each k).",
            fixes=fixes,
        )
