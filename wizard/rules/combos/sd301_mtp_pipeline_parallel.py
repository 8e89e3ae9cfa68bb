from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import draft_inherits_pp
from wizard.vllm.methods import MTP


@register
class MtpPipelineParallel(Rule):
    r"""MTP with pipeline parallelism (vLLM < 0.32)

    ## What it does

    Flags method mtp with ``pipeline_parallel_size`` > 1 before vLLM 0.32. An error where the
    drafter's parallel config inherits the target's PP (0.28-0.29: generated per release from
    ``SpeculativeConfig.create_draft_parallel_config``, ``checks.json``), since the MTP module
    does not implement ``SupportsPP``; a warning on 0.30-0.31, which build the drafter with PP 1
    (the config is accepted) but still lose accepted-token counts on non-last PP ranks.

    ## Why it matters

    On 0.28-0.29 create_engine_config fails ("Pipeline parallelism is not supported for this
    model" on the MTP draft); on 0.30-0.31 non-last PP ranks never get accepted-token counts and
    outputs silently diverge from greedy.

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
    vllm/config/speculative.py ``create_draft_parallel_config`` (0.28 L1324 and 0.29 L1690:
    the target's PP; 0.30 L1755 on: PP 1) and ``SpeculativeConfig.__post_init__``'s
    ``draft_model_config.verify_with_parallel_config`` (inventory R213).
    """

    id = "SD301"
    severity = Severity.ERROR
    versions = "<0.32"
    fields = ("pipeline_parallel_size", "speculative_config.method")
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None or ctx.method != MTP or ctx.pp <= 1:
            return
        pp, tp = ctx.pp, ctx.tp
        fixes = [Patch(description=f"Use tensor_parallel_size {tp * pp} and no pipeline parallelism",
                       set={"tensor_parallel_size": tp * pp}, unset=["pipeline_parallel_size"])]
        if draft_inherits_pp(ctx.version):
            yield self.finding(
                f"MTP with pipeline_parallel_size {pp} on vLLM {ctx.version}: the MTP drafter inherits the pipeline "
                "size and vLLM rejects it ('Pipeline parallelism is not supported for this model'; vllm#52069). "
                "Use tensor parallelism instead.", fixes=fixes)
            return
        yield self.finding(
            f"MTP with pipeline_parallel_size {pp} on vLLM {ctx.version}: non-last PP ranks miss accepted-token "
            "counts and outputs diverge from the target's (vllm#44697). Use tensor parallelism instead.",
            fixes=fixes, severity=Severity.WARNING)
