from __future__ import annotations

from wizard.config import Patch
from wizard.mechanisms import apply as A
from wizard.rules.registry import Rule, Severity, register


@register
class PinnedDrafterBackendInvalid(Rule):
    r"""speculative_config.attention_backend does not accept the drafter

    ## What it does

    Validates the drafter's pinned backend (``speculative_config.attention_backend``) against the
    drafter's own layout on this device: its head size, its KV dtype (``speculative_config.kv_cache_dtype``
    or the target's), non-causal attention for DFlash/DSpark drafters. Names what auto-selection
    would give the drafter.

    ## Why it matters

    The target loads, then the drafter's backend raises ``Selected backend ... is not valid for
    this configuration`` and the engine stops.

    ## Example

    FlashAttention pinned for the EAGLE-3 drafter on a V100 (FlashAttention needs SM 8.0; the
    target auto-selects TRITON_ATTN, the pin applies to the drafter only):

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --dtype float16 \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"attention_backend":"FLASH_ATTN"}'
    ```

    ## Use instead

    Let the drafter select its own backend:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --dtype float16 \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: auto-selection picks a backend that accepts the drafter.

    ## Source

    vllm/v1/spec_decode/llm_base_proposer.py ``_create_draft_vllm_config`` (the speculative
    config's backend, validated alone); vllm/v1/attention/backend.py ``validate_configuration``
    (0.28-0.33, wizard/data/vllm/<X.Y>/backends.json).
    """

    id = "SD703"
    severity = Severity.ERROR
    fields = ("speculative_config.attention_backend",)
    phase = "load"

    def check(self, ctx):
        _, d_sel = A.backends(ctx)
        if d_sel is None or not d_sel.pin_rejected or d_sel.pin_source:  # imposed by vLLM: SD700/SD701
            return
        _, d_lay = A.layouts(ctx)
        auto = A.AB.select_backend(ctx.version, ctx.hardware, d_lay) if d_lay is not None else None
        yield self.finding(
            f"speculative_config.attention_backend {d_sel.pinned} does not accept the {ctx.method} drafter on vLLM "
            f"{ctx.version} / {ctx.hardware.name}: {d_sel.rejection()}."
            f" Auto-selection would give it {A.selection_text(auto)}.",
            fixes=[Patch(description="Drop speculative_config.attention_backend (the drafter auto-selects)",
                         unset=["speculative_config.attention_backend"])])
