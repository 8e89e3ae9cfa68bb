from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import as_int, builds_draft_config, given_keys
from wizard.rules.registry import Rule, Severity, register


@register
class SpecMaxLenTooLong(Rule):
    r"""speculative_config.max_model_len is too long

    ## What it does

    With a drafter model, the speculative ``max_model_len`` must not exceed the
    drafter's derived maximum (its ``max_position_embeddings``, RoPE scaling applied) nor the
    target's ``max_model_len`` (``--max-model-len`` or its derived maximum). The drafter check comes first, as in vLLM.

    ## Why it matters

    vLLM raises ``User-specified max_model_len (4096) is greater than the derived
    max_model_len`` or ``speculative_max_model_len=... cannot be larger than target_max_model_len=...``.

    ## Example

    Copying ``--max-model-len`` into the speculative config after lowering the
    target's.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"max_model_len":16384}'
    ```

    ## Use instead

    Leave it unset: vLLM uses min(drafter, target).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: unset means the largest length both support.

    ## Source

    vllm/config/model.py ``_get_and_verify_max_len``; vllm/config/speculative.py
    ``_maybe_override_draft_max_model_len`` (0.32 L1633, 0.33 L1763); R058, R059 (E21, E22).
    """

    id = "SD082"
    severity = Severity.ERROR
    fields = ("speculative_config.max_model_len",)
    phase = "config"

    def check(self, ctx):
        if not builds_draft_config(ctx):
            return
        v = as_int(given_keys(ctx).get("max_model_len"))
        if v is None or v < 1:
            return
        unset = Patch(description="Remove it (vLLM uses min(drafter, target))", unset=["speculative_config.max_model_len"])
        dlen = ctx.view.drafter_max_len
        if dlen is not None and v > dlen:
            yield self.finding(
                f"User-specified speculative max_model_len ({v}) is greater than the drafter's derived max_model_len "
                f"({dlen}; max_position_embeddings={ctx.view.drafter.max_position_embeddings}).",
                fixes=[unset, Patch(description=f"Use {dlen}", set={"speculative_config.max_model_len": dlen})],
            )
            return
        tlen = ctx.view.served_max_model_len
        if tlen is not None and v > tlen:
            yield self.finding(
                f"speculative_max_model_len={v} cannot be larger than target_max_model_len={tlen}.",
                fixes=[unset, Patch(description=f"Use {tlen}", set={"speculative_config.max_model_len": tlen})],
            )
