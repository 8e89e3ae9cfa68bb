from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import as_int, builds_draft_config, given_keys
from wizard.rules.optionvalues import option
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.versions import spec_fields


@register
class DraftDcpValue(Rule):
    r"""draft_decode_context_parallel_size must be 1 or the target's DCP (0.34)

    ## What it does

    vLLM 0.34 added ``speculative_config.draft_decode_context_parallel_size`` (the drafter's
    decode-context-parallel size, ``int >= 1``; bounds: SD022). Where vLLM builds a draft model
    config, a value other than 1 or the target's ``--decode-context-parallel-size`` is an error.
    Unset, it defaults to the target's DCP, except for DFlash/DSpark drafters, which default to 1
    unless the drafter is full-attention MLA without sliding windows.

    ## Why it matters

    vLLM raises ``draft_dcp=N must be 1 or {target_dcp}.`` at config time.

    ## Example

    ```sh
    vllm serve ./tiny-llama-target --decode-context-parallel-size 1 \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3,"draft_decode_context_parallel_size":2}'
    ```

    ## Use instead

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3,"draft_decode_context_parallel_size":1}'
    ```

    ## Fix safety

    1 replicates the drafter's KV cache on each DCP rank (more memory, no sharding); removing the
    key takes vLLM's default.

    ## Source

    vllm/config/speculative.py:484 (the field) and :1554-1564 ``_verify_and_get_draft_dcp``,
    called from v1/worker/gpu/spec_decode/speculator_config.py:232-239; DFlash/DSpark default
    ``dflash/config.py:33-47`` (vLLM 0.34).
    """

    id = "SD234"
    severity = Severity.ERROR
    versions = ">=0.34"
    fields = ("speculative_config.draft_decode_context_parallel_size",)
    phase = "config"

    def check(self, ctx):
        key = "draft_decode_context_parallel_size"
        if ctx.spec is None or key not in spec_fields(ctx.version) or not builds_draft_config(ctx):
            return
        v = as_int(given_keys(ctx).get(key))
        if v is None or v < 1:
            return  # not an int / below 1: SD010 / SD022
        target = as_int(option(ctx, "decode_context_parallel_size", 1)) or 1
        if v in (1, target):
            return
        yield self.finding(
            f"draft_dcp={v} must be 1 or {target}. (speculative_config.draft_decode_context_parallel_size={v} with "
            f"--decode-context-parallel-size {target}: vLLM {ctx.version} refuses it at config time.)",
            fixes=[Patch(description="Use draft_decode_context_parallel_size=1", set={f"speculative_config.{key}": 1}),
                   Patch(description="Remove it (vLLM's default for the drafter)", unset=[f"speculative_config.{key}"])])
