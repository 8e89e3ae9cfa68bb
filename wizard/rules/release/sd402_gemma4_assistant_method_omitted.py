from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL, MTP


#: Drafter model types vLLM 0.32 rewrites to ``gemma4_mtp`` in ``SpeculativeConfig.hf_config_override``
#: (vllm/config/speculative.py L1019-1028), which makes method detection pick mtp.
GEMMA4_ASSISTANT_TYPES = frozenset({"gemma4_assistant", "gemma4_unified_assistant"})


GEMMA4_ASSISTANT_ARCHS = frozenset({"Gemma4AssistantForCausalLM", "Gemma4UnifiedAssistantForCausalLM"})


@register
class Gemma4AssistantMethodOmitted(Rule):
    r"""Gemma 4 assistant drafter without method mtp (vLLM < 0.32)

    ## What it does

    Flags a ``speculative_config.model`` whose config is a Gemma 4 assistant
    (``model_type`` gemma4_assistant / gemma4_unified_assistant, or architecture
    ``Gemma4AssistantForCausalLM``) when ``method`` is omitted or ``draft_model``, on versions
    before 0.32.

    ## Why it matters

    The assistant is an MTP-style head that runs on the target's KV cache.
    Without ``method: mtp`` those releases fell back to ``draft_model`` and failed at load:
    the draft-model proposer asserts all attention layers share num_heads (got {8, 4}). 0.32
    rewrites the assistant config to ``gemma4_mtp`` in ``hf_config_override`` and detects MTP
    by itself (verified in the 0.32 source); the release that added this is not verified.

    ## Example

    vllm serve google/gemma-4-31B-it --speculative-config '{"model":"google/gemma-4-31B-it-assistant","num_speculative_tokens":4}'

    ```sh
    vllm serve ./tiny-gemma4 \
      --speculative-config '{"model":"./tiny-gemma4-assistant","num_speculative_tokens":4}'
    ```

    ## Use instead

    Always pass ``"method": "mtp"`` with a Gemma 4 assistant checkpoint.

    ```sh
    vllm serve ./tiny-gemma4 \
      --speculative-config '{"method":"mtp","model":"./tiny-gemma4-assistant","num_speculative_tokens":4}'
    ```

    ## Fix safety

    Safe: it is the method the checkpoint is made for.

    ## Source

    https://github.com/NVIDIA/Model-Optimizer/pull/1677; vllm/config/speculative.py
    ``hf_config_override`` (0.32, gemma4_assistant -> gemma4_mtp); vllm-project/vllm PR #41745.
    """

    id = "SD402"
    severity = Severity.ERROR
    versions = "<0.32"
    fields = ("speculative_config.method",)
    phase = "load"

    @staticmethod
    def _is_assistant(d) -> bool:
        return d.model_type in GEMMA4_ASSISTANT_TYPES or bool(set(d.architectures) & GEMMA4_ASSISTANT_ARCHS)

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.method not in (None, DRAFT_MODEL) or not spec.model:
            return
        d = ctx.drafter
        if d is None or d is ctx.target or not self._is_assistant(d):
            return
        how = "omitted" if spec.method is None else "'draft_model'"
        yield self.finding(
            f"Drafter {d.short_name()} is a Gemma 4 assistant (MTP head) but method is {how}: vLLM {ctx.version} runs "
            "it as a generic draft model, which fails at load (draft-model attention layers must share num_heads; "
            "Model-Optimizer#1677). Set method mtp (0.32 detects it by itself).",
            fixes=[Patch(description="Use method mtp for the Gemma 4 assistant", set={"speculative_config.method": MTP})])
