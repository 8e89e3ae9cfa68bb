from __future__ import annotations

from wizard.config import Patch
from wizard.mechanisms import apply as A
from wizard.rules.registry import Rule, Severity, register

_SEVERITY = {"error": Severity.ERROR, "warning": Severity.WARNING}


@register
class DrafterContextShorter(Rule):
    r"""The drafter's context is shorter than the served length

    ## What it does

    Compares the drafter's context (its ``max_position_embeddings``, scaled by a YaRN/dynamic
    RoPE factor, or ``speculative_config.max_model_len``) with the served length
    (``--max-model-len``, else the target's derived maximum) and asks
    ``wizard.mechanisms.drafter_context`` what *this* release and model runner do about it:

    * EAGLE-style heads that share the target's positions: vLLM raises the drafter's limit (quiet);
    * 0.33's V2 runner lowers ``max_model_len`` to the drafter's (**warning**: longer prompts are refused);
    * 0.34 (one model runner, V1 removed) always does: every drafter whose positions are not raised
      -- ``draft_model`` always -- caps ``max_model_len`` at the draft's, ``speculative_config.max_model_len``
      included ("reducing max_model_len to N", **warning**);
    * the V1 runner's batch-wide gate ``_input_fits_in_drafter`` switches drafting off for the whole
      batch once any sequence nears the drafter's limit (**warning**: slower, output unchanged);
    * otherwise the drafter's rotary cache is indexed past its end: the first long prompt crashes
      the engine (**error**).

    ## Why it matters

    A short drafter next to a long-context target either crashes on the first long prompt or
    silently turns speculation off for every request batched with a long one -- nothing in the
    logs says so.

    ## Example

    A 4k-context draft model under Llama 3.1's 128k on the V2 runner (0.32):

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"draft_model","model":"./sd750-draft-4k","num_speculative_tokens":3}'
    ```

    ## Use instead

    Serve no longer than the drafter can see:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 4096 \
      --speculative-config '{"method":"draft_model","model":"./sd750-draft-4k","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Lowers the longest prompt + output served; longer requests are refused with HTTP 400.

    ## Source

    vllm/config/speculative.py ``_maybe_override_draft_max_position_embeddings``;
    vllm/config/vllm.py ``_limit_max_model_len_to_draft`` (0.33; 0.34 L3102, always, before
    ``try_verify_and_update_config`` L1482), v1/worker/gpu/spec_decode/speculator_config.py:160
    (``max_model_len``: None when raised) (0.34); vllm/v1/worker/gpu_model_runner.py
    ``_input_fits_in_drafter`` (V1, 0.28-0.33); wizard/data/vllm/<X.Y>/features.json
    (``drafter_context``).
    """

    id = "SD750"
    severity = Severity.ERROR
    fields = ("max_model_len", "speculative_config.model", "speculative_config.max_model_len")
    phase = "run"

    def check(self, ctx):
        dc = A.drafter_length(ctx)
        if dc is None or dc.outcome not in ("crash_on_long_prompts", "speculation_skipped", "served_length_reduced"):
            return  # 'config_error' is SD082's; 'raised' / 'ok' / 'unknown' are shown by explain()
        limit = A.served_length_after_drafter(ctx) if dc.outcome == "served_length_reduced" else (dc.drafter_len or None)
        if dc.outcome == "speculation_skipped" and ctx.spec is not None and ctx.spec.max_model_len:
            limit = min(limit or ctx.spec.max_model_len, ctx.spec.max_model_len)
        fixes = [Patch(description=f"Serve at most the drafter's context: --max-model-len {limit}",
                       set={"max_model_len": limit})] if limit else []
        yield self.finding(f"{dc.message[0].upper()}{dc.message[1:]} ({dc.source}).",
                           severity=_SEVERITY.get(dc.severity or "", Severity.WARNING), fixes=fixes)
