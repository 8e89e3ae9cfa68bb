from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import as_int, builds_draft_config, given_keys
from wizard.rules.optionvalues import option
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DFLASH, DSPARK
from wizard.vllm.versions import spec_fields

_SLIDING = "sliding_attention"


def windowed_draft(info) -> bool | None:
    """vLLM's ``dflash_has_any_sliding`` (model_executor/models/qwen3_dflash.py:108-115, 0.34):
    ``dflash_config.use_swa`` or a ``sliding_attention`` entry in ``layer_types``; None when the
    drafter config is unknown."""
    if info is None:
        return None
    text = info.text_config
    dflash = text.get("dflash_config")
    if isinstance(dflash, dict) and dflash.get("use_swa"):
        return True
    layer_types = info.layer_types or text.get("layer_types") or ()
    return _SLIDING in layer_types


@register
class DraftDcpSlidingWindow(Rule):
    r"""An explicit draft_decode_context_parallel_size > 1 with a sliding-window DFlash/DSpark draft (0.34)

    ## What it does

    vLLM 0.34's DFlash and DSpark speculators run their draft at
    ``speculative_config.draft_decode_context_parallel_size``. Left unset, vLLM picks 1 for a draft
    with sliding-window layers (``default_draft_decode_context_parallel_size``); set explicitly
    to the target's ``--decode-context-parallel-size`` > 1 (the only value above 1 that SD234
    lets through), the windowed draft layers cannot run: vLLM refuses when it loads the draft.
    A draft is windowed when its ``dflash_config.use_swa`` is true or its ``layer_types`` has a
    ``sliding_attention`` entry (vLLM's ``dflash_has_any_sliding``).

    ## Why it matters

    Startup fails at load: "DFlash draft layers [...] use sliding-window attention, which cannot
    run at decode_context_parallel_size=N. Set draft_decode_context_parallel_size=1." (DSpark
    draft layers for method dspark).

    ## Example

    ```sh
    vllm serve ./tiny-llama-target --tensor-parallel-size 2 --decode-context-parallel-size 2 \
      --speculative-config '{"method":"dflash","model":"./sd130-dflash-swa","num_speculative_tokens":4,"draft_decode_context_parallel_size":2}'
    ```

    ## Use instead

    ```sh
    vllm serve ./tiny-llama-target --tensor-parallel-size 2 --decode-context-parallel-size 2 \
      --speculative-config '{"method":"dflash","model":"./sd130-dflash-swa","num_speculative_tokens":4,"draft_decode_context_parallel_size":1}'
    ```

    ## Fix safety

    1 replicates the drafter's (small) KV cache on each DCP rank; removing the key takes vLLM's
    default, which is 1 for such a draft.

    ## Source

    vllm/v1/worker/gpu/spec_decode/dflash/speculator.py:243-264 ``DFlashSpeculator.load_model``
    (``dcp_size`` is the draft DCP: spec_decode/speculator.py:159-164 and :208);
    spec_decode/dflash/config.py:33-47 (the default) and model_executor/models/qwen3_dflash.py:108-115
    ``dflash_has_any_sliding``; DSparkSpeculator subclasses DFlashSpeculator
    (spec_decode/dspark/speculator.py:53) (vLLM 0.34.0).
    """

    id = "SD130"
    severity = Severity.ERROR
    versions = ">=0.34"
    fields = ("speculative_config.draft_decode_context_parallel_size",)
    phase = "load"

    def check(self, ctx):
        key = "draft_decode_context_parallel_size"
        if ctx.spec is None or ctx.method not in (DFLASH, DSPARK) or key not in spec_fields(ctx.version):
            return
        if not builds_draft_config(ctx):
            return
        v = as_int(given_keys(ctx).get(key))
        target = as_int(option(ctx, "decode_context_parallel_size", 1)) or 1
        if v is None or v <= 1 or v != target:
            return  # unset: the default is 1 for a windowed draft; other values: SD022 / SD234
        if not windowed_draft(ctx.view.drafter or ctx.drafter):
            return
        name = "DSpark" if ctx.method == DSPARK else "DFlash"
        yield self.finding(
            f"{name} draft layers use sliding-window attention, which cannot run at decode_context_parallel_size={v}. "
            f"Set draft_decode_context_parallel_size=1. (vLLM {ctx.version} fails when it loads the draft.)",
            fixes=[Patch(description="Use draft_decode_context_parallel_size=1", set={f"speculative_config.{key}": 1}),
                   Patch(description="Remove it (vLLM's default is 1 for a windowed draft)",
                         unset=[f"speculative_config.{key}"])])
