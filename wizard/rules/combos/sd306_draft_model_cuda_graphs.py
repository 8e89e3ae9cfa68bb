from __future__ import annotations

from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL


@register
class DraftModelCudaGraphs(Rule):
    r"""draft_model drafter runs eagerly (vLLM < 0.32)

    ## What it does

    Warns for ``method: draft_model`` without ``enforce_eager`` on versions
    where the drafter's CUDA-graph keys were not initialised (fixed by PR #47460; the 0.32
    source initialises them for DraftModelProposer).

    ## Why it matters

    Every draft step runs eagerly; draft_model speculation can be slower
    than no speculation.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4 \
      --speculative-config '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":3}'
    ```

    ## Use instead

    Upgrade before judging draft_model speed-ups; compare against no-spec.

    ```sh
    vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4 \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.3-Instruct-70B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Upgrade: safe.

    ## Source

    https://github.com/vllm-project/vllm/pull/47460; vllm/v1/worker/gpu_model_runner.py (0.32).
    """

    id = "SD306"
    severity = Severity.WARNING
    versions = "<0.32"
    fields = ("speculative_config.method",)
    phase = "run"

    def check(self, ctx):
        if ctx.spec is None or ctx.method != DRAFT_MODEL or ctx.config.enforce_eager:
            return
        yield self.finding(
            f"draft_model on vLLM {ctx.version}: the drafter's CUDA graphs are captured but never replayed (PR #47460), "
            "so each draft step runs eagerly and speculation can be net-negative. Benchmark against no speculation.")
