from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import is_eagle_head


@register
class V0EagleTensorParallel(Rule):
    r"""V0 EAGLE with target TP > 1 needs draft_tensor_parallel_size 1 (vLLM < 0.8)

    ## What it does

    On vLLM before 0.8 (V0 spec-decode worker) flags method ``eagle``/``eagle3``
    with ``tensor_parallel_size`` > 1 when ``speculative_config.draft_tensor_parallel_size`` is
    not 1 (unset means the target's TP).

    ## Why it matters

    The V0 worker builds the EAGLE proposer with the draft TP and raises
    "NotImplementedError: EAGLE does not support TP > 1 yet" when the engine starts. vLLM 0.32
    accepts EAGLE with TP 4 (the drafter shares the target's TP, or runs at TP 1).

    ## Example

    VLLM 0.6:

    ```sh
    vllm serve meta-llama/Meta-Llama-3-70B-Instruct --tensor-parallel-size 4 \
      --speculative-config '{"method":"eagle","model":"yuhuili/EAGLE-LLaMA3-Instruct-70B","num_speculative_tokens":3}'
    ```

    ## Use instead

    ``"draft_tensor_parallel_size": 1`` with EAGLE on V0 (0.6/0.7), or upgrade.

    ```sh
    vllm serve meta-llama/Meta-Llama-3-70B-Instruct --tensor-parallel-size 4 \
      --speculative-config '{"method":"eagle","model":"yuhuili/EAGLE-LLaMA3-Instruct-70B","num_speculative_tokens":3,"draft_tensor_parallel_size":1}'
    ```

    ## Fix safety

    Safe: the EAGLE head is small and runs on one GPU.

    ## Source

    https://github.com/vllm-project/vllm/issues/11126 (V0 spec_decode worker, 0.6.x).
    """

    id = "SD401"
    severity = Severity.ERROR
    versions = "<0.8"
    fields = ("speculative_config.draft_tensor_parallel_size", "tensor_parallel_size")
    phase = "load"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or not is_eagle_head(ctx.method) or ctx.tp <= 1:
            return
        dtp = spec.draft_tensor_parallel_size
        if dtp == 1:
            return
        shown = "unset, so it follows the target's" if dtp is None else str(dtp)
        yield self.finding(
            f"EAGLE on vLLM {ctx.version} (V0 spec decode) with tensor_parallel_size {ctx.tp}: the drafter's TP is "
            f"{shown} ({dtp or ctx.tp}), and the V0 worker raises 'EAGLE does not support TP > 1 yet' at startup "
            "(vllm#11126). Set draft_tensor_parallel_size to 1.",
            fixes=[Patch(description="Run the EAGLE head on one GPU (draft_tensor_parallel_size 1)",
                         set={"speculative_config.draft_tensor_parallel_size": 1})])
