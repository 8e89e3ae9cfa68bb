from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import as_int
from wizard.rules.optionvalues import option, truthy
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import allow_long_max_model_len, derived_max_len


@register
class MaxModelLenAboveDerived(Rule):
    """max_model_len above the model's maximum length

    ## What it does

    Derives the target's maximum length the way the checked vLLM release does
    (``_get_and_verify_max_len``): the smallest length key of config.json
    (``max_position_embeddings``, ``n_positions``, ``max_seq_len`` ... per release;
    ``model_max_length`` when present), capped by ``sliding_window`` under
    ``--disable-sliding-window``, times the RoPE scaling factor for rope types whose length is
    not already scaled (per release: 0.28/0.29 apply YaRN's factor to
    ``original_max_position_embeddings``, 0.30+ treat YaRN as pre-scaled), with
    ``--hf-overrides`` applied. A ``--max-model-len`` above it is an error unless config.json's
    ``model_max_length`` allows it or ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`` is in the launch
    environment.

    ## Why it matters

    vLLM refuses to build the config: "User-specified max_model_len (300000) is greater than
    the derived max_model_len (max_position_embeddings=131072 ...)". Forcing it with
    ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`` serves positions the model never saw (NaNs with RoPE,
    out-of-bounds reads with absolute positions).

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 300000
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072
    ```

    ## Fix safety

    Setting the model's own limit is safe (prompts beyond it were never servable). Longer
    contexts need a RoPE-scaled checkpoint or ``--hf-overrides`` with a rope scaling the model
    was trained for, not the environment switch.

    ## Source

    vllm/config/model.py ``_get_and_verify_max_len`` (0.28 L2328, 0.29 L2384, 0.30 L2393, 0.31
    L2471, 0.32 L2527, 0.33 L2545; inventory R229), rope facts probed per release by
    ``scripts/dump_vllm_checks.py`` (``checks.json`` ``max_len``); vllm/envs.py
    ``VLLM_ALLOW_LONG_MAX_MODEL_LEN``. Verified with ``benchmarks/conformance.py`` on 0.28-0.33.
    """

    id = "SD100"
    severity = Severity.ERROR
    fields = ("max_model_len",)
    phase = "config"

    def check(self, ctx):
        mml = as_int(ctx.config.max_model_len)
        target = ctx.target
        if mml is None or mml < 1 or target is None or not target.has_config:
            return
        d = derived_max_len(target, ctx.version, option(ctx, "hf_overrides"),
                            truthy(option(ctx, "disable_sliding_window", False)))
        if d.value is None or mml <= d.value:
            return
        if d.model_max_length is not None and mml <= d.model_max_length:
            return
        if allow_long_max_model_len(ctx.config.env, ctx.version):
            return
        yield self.finding(
            f"max_model_len={mml} is greater than the length vLLM {ctx.version} derives for {target.short_name()} "
            f"({d.key}={d.value}); vLLM refuses to build the config unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set, "
            "which serves positions the model was never trained for.",
            fixes=[Patch(description=f"Use the model's limit: --max-model-len {d.value}", set={"max_model_len": d.value}),
                   Patch(description="Unset max_model_len (vLLM uses the model's limit)", unset=["max_model_len"])])
