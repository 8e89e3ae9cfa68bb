from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP


@register
class MtpPipelineParallel(Rule):
    r"""MTP with pipeline parallelism (vLLM < 0.32)

    ## What it does

    Flags method mtp with ``pipeline_parallel_size`` > 1 on versions where
    the draft parallel config inherited the target's PP (0.32 builds it with PP 1, verified in
    ``SpeculativeConfig`` source).

    ## Why it matters

    Either create_engine_config fails ("Pipeline parallelism is not
    supported for this model" on the MTP draft) or non-last PP ranks never get accepted-token
    counts and outputs silently diverge from greedy.

    ## Example

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 4 --pipeline-parallel-size 2 \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Use instead

    Use TP instead of PP with MTP on those versions.

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8 \
      --speculative-config '{"method":"mtp","num_speculative_tokens":1}'
    ```

    ## Fix safety

    Moving PP into TP changes the parallel layout (needs the same GPU count).

    ## Source

    https://github.com/vllm-project/vllm/issues/52069, https://github.com/vllm-project/vllm/issues/44697;
    vllm/config/speculative.py (0.32: draft ParallelConfig(pipeline_parallel_size=1)).
    """

    id = "SD301"
    severity = Severity.ERROR
    versions = "<0.32"
    fields = ("pipeline_parallel_size", "speculative_config.method")
    topic = "combos"
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None or ctx.method != MTP or ctx.pp <= 1:
            return
        pp, tp = ctx.pp, ctx.tp
        yield self.finding(
            f"MTP with pipeline_parallel_size {pp} on vLLM {ctx.version}: the MTP draft inherits PP and fails "
            "('not supported for this model'), or non-last PP ranks miss accepted-token counts and outputs diverge "
            "(vllm#52069, vllm#44697). Use tensor parallelism instead.",
            fixes=[Patch(description=f"Use tensor_parallel_size {tp * pp} and no pipeline parallelism",
                         set={"tensor_parallel_size": tp * pp}, unset=["pipeline_parallel_size"])])
