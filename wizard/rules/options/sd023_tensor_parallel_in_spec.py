from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import given_keys
from wizard.rules.registry import Rule, Severity, register


@register
class TensorParallelInSpec(Rule):
    r"""tensor_parallel_size is not a speculative_config key

    ## What it does

    Flags the key ``speculative_config.tensor_parallel_size``.

    ## Why it matters

    vLLM refuses it explicitly: the drafter's TP is
    ``draft_tensor_parallel_size`` (1 or the target's TP).

    ## Example

    Copying ``--tensor-parallel-size 2`` into the speculative config.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"tensor_parallel_size":1}'
    ```

    ## Use instead

    Omit it (the drafter inherits the target TP) or use ``draft_tensor_parallel_size``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: the rename keeps the value when vLLM allows it (1 or the target TP).

    ## Source

    vllm/config/speculative.py ``_verify_args`` (0.32 L1812, 0.33 L1939):
    "'tensor_parallel_size' is not a valid argument in the speculative_config"; R013 (E09).
    """

    id = "SD023"
    severity = Severity.ERROR
    fields = ("speculative_config.tensor_parallel_size",)
    phase = "config"

    def check(self, ctx):
        given = given_keys(ctx)
        if "tensor_parallel_size" not in given:
            return
        v = given["tensor_parallel_size"]
        fixes = []
        if isinstance(v, int) and not isinstance(v, bool) and v in (1, ctx.tp) and "draft_tensor_parallel_size" not in given:
            fixes.append(Patch(description=f"Rename to draft_tensor_parallel_size={v}",
                               set={"speculative_config.draft_tensor_parallel_size": v},
                               unset=["speculative_config.tensor_parallel_size"]))
        fixes.append(Patch(description="Remove it (the drafter inherits the target's TP)",
                           unset=["speculative_config.tensor_parallel_size"]))
        yield self.finding(
            "speculative_config.tensor_parallel_size is not accepted by vLLM ('Please pass "
            "'draft_tensor_parallel_size' instead').",
            fixes=fixes,
        )
