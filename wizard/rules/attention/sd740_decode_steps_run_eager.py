from __future__ import annotations

import json

from wizard.config import Patch
from wizard.mechanisms import apply as A
from wizard.mechanisms import cudagraph as CG
from wizard.rules.registry import Rule, Severity, register

_SIZE_KEYS = ("max_cudagraph_capture_size", "cudagraph_capture_sizes", "compilation_config.max_cudagraph_capture_size",
              "compilation_config.cudagraph_capture_sizes")


#: the widest decode step a capture list is offered for (tokens); beyond it the inputs are absurd
_MAX_LISTED_TOKENS = 1 << 16


def capture_sizes_for(max_num_seqs: int, q: int, max_num_batched_tokens: int) -> list[int]:
    """vLLM's default token grid (1, 2, 4, 8..248 by 8, 256.. by 16) up to max_num_seqs*(1+k),
    plus every uniform decode width n*(1+k) on vLLM's request-count grid: a capture list under
    which every decode batch up to ``max_num_seqs`` has a graph."""
    top = min(max_num_seqs * q, max_num_batched_tokens)
    if top > _MAX_LISTED_TOKENS:  # absurd sizes (SD012's to report): no list to offer
        return []
    seqs = min(max_num_seqs, max_num_batched_tokens // q)
    grid = [s for s in (1, 2, 4) if s <= top] + list(range(8, min(top + 1, 256), 8)) + list(range(256, top + 1, 16))
    counts = sorted({n for n in (1, 2, 4) if n <= seqs} | set(range(8, seqs + 1, 8)) | ({seqs} if seqs >= 1 else set()))
    return sorted(set(grid) | {n * q for n in counts})


@register
class DecodeStepsRunEager(Rule):
    r"""Decode steps with speculation run without CUDA graphs

    ## What it does

    Computes vLLM's CUDA-graph capture sizes for this configuration (``wizard.mechanisms.cudagraph``:
    ``_set_cudagraph_sizes``, the V1 rounding to multiples of 1+k under FULL decode graphs, the
    dispatcher) and finds the first decode batch that runs eagerly: a step of n requests verifies
    n*(1+k) tokens, and above the largest captured size vLLM runs the step without a graph.
    A **warning** when that happens for a step of at most vLLM's default graph ceiling (512 tokens,
    1024 on SM 10.x) -- sizes the user's settings (or an older release's sizing) left out, where
    graphs matter most, or for steps at or below a ``--max-num-seqs`` the user set when that
    full-concurrency step is at most twice the ceiling (the steady state under load runs eagerly
    while launch overhead is still a sizeable share, vLLM PR #50488); **info** when only steps
    above the ceiling run eagerly, the user set capture sizes but not the batch (vLLM never
    captures those by default).

    ## Why it matters

    Without graphs every decode step pays kernel-launch overhead; small steps are launch-bound, so
    speculation can end up slower than no speculation. vLLM logs nothing per step.

    ## Example

    Six sequences and six draft tokens verify 42 tokens a step; an explicit 42-token maximum is
    truncated to vLLM's 40-token grid step, so every full-concurrency step runs eagerly (vLLM #54933
    measured 25 vs 133 tok/s):

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 6 --max-cudagraph-capture-size 42 \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":6}'
    ```

    ## Use instead

    Let vLLM size the graphs (it appends the decode widths n*(1+k)), or give explicit capture
    sizes that include them:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 6 \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":6}'
    ```

    ## Fix safety

    More graph sizes take more start-up time and a little GPU memory.

    ## Source

    vllm/config/vllm.py ``_set_cudagraph_sizes``; vllm/config/compilation.py
    ``adjust_cudagraph_sizes_for_spec_decode``; vllm/v1/cudagraph_dispatcher.py (0.28-0.33,
    wizard/data/vllm/<X.Y>/cudagraph.json); vLLM #54933, PR #50488, issue #27325.
    """

    id = "SD740"
    severity = Severity.WARNING
    fields = ("speculative_config.num_speculative_tokens", "max_num_seqs", "max_cudagraph_capture_size",
              "cudagraph_capture_sizes")
    phase = "run"

    def check(self, ctx):
        plan = A.capture(ctx)
        if plan is None or plan.error or plan.mode == "NONE" or plan.eager_from is None:
            return
        inputs = A.capture_inputs(ctx)
        q = plan.decode_query_len
        n, seqs = plan.eager_from, inputs["max_num_seqs"]
        ceiling = A.DEFAULT_CEILING[inputs["blackwell"]]
        small = n * q <= ceiling
        # the user's own concurrency cap: steps at --max-num-seqs are the steady state under load
        capped = "max_num_seqs" in inputs["given"] and seqs * q <= 2 * ceiling
        if not small and not inputs["given"]:
            return  # vLLM's own defaults: explain() shows the coverage
        sizes = capture_sizes_for(seqs, q, inputs["max_num_batched_tokens"])
        fixes = []
        args = {k: v for k, v in inputs.items() if k not in ("given", "cudagraph_capture_sizes", "max_cudagraph_capture_size")}
        if sizes and CG.capture_plan(ctx.version, cudagraph_capture_sizes=sizes, **args).eager_from is None:
            cc = A.compilation_option(ctx, "cudagraph_mode")
            kept = {k: v for k, v in A.compilation_object(ctx).items() if k not in _SIZE_KEYS}  # the user's other fields
            comp = kept | {"cudagraph_capture_sizes": sizes} | ({"cudagraph_mode": cc} if cc is not None else {})
            fixes.append(Patch(
                description=f"Capture graphs for every decode width up to {seqs}x{q} = {seqs * q} tokens "
                            f"(--compilation-config cudagraph_capture_sizes, {len(sizes)} sizes)",
                set={"extra_args.compilation_config": json.dumps(comp, separators=(",", ":"))},
                unset=[f"extra_args.{k}" for k in _SIZE_KEYS + ("compilation_config.cudagraph_mode",)]))
        why = (f"{n}x{q} = {n * q} tokens is within vLLM's default {ceiling}-token graph range, so these are sizes "
               "your settings (or this release's sizing) left out" if small else
               f"{n * q} tokens is above vLLM's default {ceiling}-token graph ceiling"
               + (f", yet at or below the --max-num-seqs {seqs} you set, so every fully loaded step runs eagerly"
                  if capped else ""))
        yield self.finding(
            f"With {q - 1} draft tokens a decode step of n requests verifies n x {q} tokens; on vLLM {ctx.version} the "
            f"largest CUDA graph is {plan.runner_max_size} tokens, so decode steps with {n} to {seqs} running requests run "
            f"eagerly ({why}). Eager steps pay kernel-launch overhead on every layer; speculation can be slower than none.",
            severity=Severity.WARNING if small or capped else Severity.INFO, fixes=fixes)
