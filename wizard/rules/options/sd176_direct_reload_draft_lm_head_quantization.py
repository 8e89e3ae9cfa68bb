from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import given_keys, speculator_options
from wizard.rules.registry import Rule, Severity, register


@register
class DirectReloadDraftLmHeadQuantization(Rule):
    r"""VLLM_RELOAD_MODE=direct with a quantized draft lm_head (0.34)

    ## What it does

    vLLM 0.34 added ``VLLM_RELOAD_MODE`` (``layerwise``, the default, or ``direct``) and
    ``VllmConfig._verify_direct_reload_compat``, which refuses what direct weight reload cannot
    support. One of its checks is about speculation: with ``VLLM_RELOAD_MODE=direct`` in the
    server's environment, a ``speculative_config.draft_lm_head_quantization`` is refused (after
    ``begin`` the draft's quantized lm_head is a view of the target lm_head's storage). The rule
    fires only where the speculator takes the option (otherwise SD058 reports the option first).

    ## Why it matters

    vLLM stops while building the config: "Direct reload does not support
    draft_lm_head_quantization.".

    ## Example

    ```sh
    VLLM_RELOAD_MODE=direct vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"draft_lm_head_quantization":"fp8"}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3,"draft_lm_head_quantization":"fp8"}'
    ```

    ## Fix safety

    Unsetting ``VLLM_RELOAD_MODE`` returns to layerwise reload (slower weight updates, same
    serving); removing ``draft_lm_head_quantization`` keeps direct reload and runs the draft
    lm_head unquantized (more memory, drafts may differ slightly).

    ## Source

    vllm/config/vllm.py:1155-1196 ``_verify_direct_reload_compat`` (the check at :1190-1195),
    called from ``VllmConfig.__post_init__`` (:1558); vllm/envs.py:331 / :2303
    ``VLLM_RELOAD_MODE`` (vLLM 0.34.0; 0.33.0 has neither the variable nor the check).
    """

    id = "SD176"
    severity = Severity.ERROR
    versions = ">=0.34"
    fields = ("env.VLLM_RELOAD_MODE", "speculative_config.draft_lm_head_quantization")
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or str((ctx.config.env or {}).get("VLLM_RELOAD_MODE", "")).strip().lower() != "direct":
            return
        option = "draft_lm_head_quantization"
        if given_keys(ctx).get(option) is None:
            return
        ok = speculator_options(ctx)
        if ok is None or option not in ok:
            return  # vLLM stops earlier (SD040 / SD042 / SD044), or the speculator refuses the option first: SD058
        yield self.finding(
            "Direct reload does not support draft_lm_head_quantization. (VLLM_RELOAD_MODE=direct with "
            f"speculative_config.draft_lm_head_quantization: vLLM {ctx.version} refuses the config at startup.)",
            fixes=[Patch(description="Unset VLLM_RELOAD_MODE (layerwise reload)", unset=["env.VLLM_RELOAD_MODE"]),
                   Patch(description="Remove draft_lm_head_quantization",
                         unset=[f"speculative_config.{option}"])])
