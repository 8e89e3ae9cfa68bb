from __future__ import annotations

from wizard.config import Patch
from wizard.mechanisms import apply as A
from wizard.rules.helpers import has_v1
from wizard.rules.registry import Rule, Severity, register


#: vllm/config/compilation.py ``adjust_cudagraph_sizes_for_spec_decode`` (V1 runner, 0.28-0.33)
_ROUNDING = "No valid cudagraph sizes after rounding"


@register
class CaptureSizesRefused(Rule):
    r"""vLLM refuses the CUDA-graph sizes with speculation

    ## What it does

    Runs vLLM's capture sizing for this configuration (``wizard.mechanisms.cudagraph``) and
    reports its refusals: an explicit ``max_cudagraph_capture_size`` that differs from the largest
    of explicit ``cudagraph_capture_sizes``; no capture size left after rounding to multiples of
    1+k (FULL decode graphs on the V1 runner; not on a release without V1, 0.34, which removed
    that rounding); FULL graphs with a backend that supports none.

    ## Why it matters

    vLLM raises ``ValueError`` while building the configuration (or at compile time), so the
    server never starts.

    ## Example

    Explicit sizes whose largest (8) is not the explicit maximum (16):

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-cudagraph-capture-size 16 --cudagraph-capture-sizes 1 2 4 8 \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: vLLM's default sizing.

    ## Source

    vllm/config/vllm.py ``_set_cudagraph_sizes``; vllm/config/compilation.py
    ``adjust_cudagraph_sizes_for_spec_decode`` (0.28-0.33; removed in 0.34 with the V1 runner) and
    ``resolve_cudagraph_mode_and_sizes`` (0.28-0.33).
    """

    id = "SD741"
    severity = Severity.ERROR
    fields = ("max_cudagraph_capture_size", "cudagraph_capture_sizes", "speculative_config.num_speculative_tokens")
    phase = "config"

    def check(self, ctx):
        plan = A.capture(ctx)
        if plan is None or not plan.error or plan.error.startswith("unknown cudagraph_mode"):
            return
        if plan.error.startswith(_ROUNDING) and not has_v1(ctx):
            return  # adjust_cudagraph_sizes_for_spec_decode went with the V1 runner
        keys = ("max_cudagraph_capture_size", "cudagraph_capture_sizes", "compilation_config.max_cudagraph_capture_size",
                "compilation_config.cudagraph_capture_sizes", "compilation_config.cudagraph_mode")
        yield self.finding(
            f"vLLM {ctx.version} refuses the CUDA-graph settings with {plan.decode_query_len - 1} draft tokens: {plan.error}",
            fixes=[Patch(description="Drop the explicit CUDA-graph sizes (vLLM's default sizing)",
                         unset=[f"extra_args.{k}" for k in keys])])
