from __future__ import annotations

from wizard.rules.optionvalues import option, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import num_experts


@register
class ExpertParallelDenseModel(Rule):
    """Expert parallelism on a model without experts

    ## What it does

    Reports ``--enable-expert-parallel`` for a target whose config names no experts (none of
    the keys the release reads for the expert count: ``num_experts``, ``moe_num_experts``,
    ``n_routed_experts``, ``num_local_experts``).

    ## Why it matters

    vLLM refuses to build the config: "Number of experts in the model must be greater than 0
    when expert parallelism is enabled."

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2 --enable-expert-parallel
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2
    ```

    ## Fix safety

    Safe: a dense model has nothing to shard by experts.

    ## Source

    vllm/config/model.py ``ModelConfig._verify_with_expert_parallelism`` (0.32 L1487, 0.33
    L1500; inventory R212); expert keys probed per release from
    ``ModelArchConfigConvertor.get_num_experts`` (``checks.json``).
    """

    id = "SD121"
    severity = Severity.ERROR
    fields = ("enable_expert_parallel",)
    phase = "config"

    def check(self, ctx):
        if ctx.target is None or not ctx.target.has_config or not truthy(option(ctx, "enable_expert_parallel", False)):
            return
        if num_experts(ctx.target, ctx.version) > 0:
            return
        yield self.finding(
            f"--enable-expert-parallel on {ctx.target.short_name()}, which has no experts; vLLM rejects it "
            "('Number of experts in the model must be greater than 0 when expert parallelism is enabled').",
            fixes=[set_option_patch(ctx, "enable_expert_parallel", None, "Drop --enable-expert-parallel")])
