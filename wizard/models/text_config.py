"""The text (language-model) view of a checkpoint's config.json, merged once: vLLM's
``ModelConfig.hf_text_config`` (``vllm/transformers_utils/config.py:get_hf_text_config``, which
calls transformers' ``PretrainedConfig.get_text_config``: the ``text_config`` of a multimodal
wrapper, else the config itself).

SpecWizard keeps one plain dict: the top level with the text sub-config merged over it, so a key
the wrapper keeps at the top (``quantization_config``, ``architectures``) is still found. The
sub-configs merged (the first present): ``text_config`` (Gemma 3/4, Qwen-VL, Llama 4 ...),
``llm_config`` (InternVL), ``language_config`` (DeepSeek-VL2), ``transformer_layer_config``
(speculators-format drafters, ``vllm/transformers_utils/configs/speculators``). The wrapper's own
``architectures``, ``model_type`` (the sub-config's is kept as ``text_model_type``) and
``quantization_config`` win; transformers' text-config defaults a sparse config relies on
(:data:`TEXT_DEFAULTS`, Gemma 3) are filled in, as transformers does when vLLM loads it.

Read it as ``ModelInfo.text_config``; :func:`wizard.models.config_json.info_from_config` parses
every typed field from the same dict. Nothing outside ``wizard/models/`` merges ``text_config``
(``tests/engine/test_single_definition.py``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SUB_CONFIG_KEYS", "TEXT_DEFAULTS", "merge_text", "apply_text_defaults", "hf_text_config", "speculators_layer_config"]

#: sub-configs that hold the language model, in the order they are looked for
SUB_CONFIG_KEYS = ("text_config", "llm_config", "language_config", "transformer_layer_config")

# Sparse multimodal configs rely on transformers defaults; these are the defaults of the
# transformers 5.x config classes (Gemma3TextConfig), which vLLM gets when it loads the config.
TEXT_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {
        "vocab_size": 262208,
        "hidden_size": 2304,
        "num_hidden_layers": 26,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 131072,
        "sliding_window": 4096,
        "sliding_window_pattern": 6,
    },
}
_TEXT_DEFAULT_FOR_PARENT = {"gemma3": "gemma3_text"}


def merge_text(raw: dict[str, Any], notes: list[str]) -> tuple[dict[str, Any], bool, str]:
    """Top level with the text sub-config merged over it. Returns (merged, is_multimodal, prefix
    of the merged sub-config, e.g. ``"text_config."``; ``""`` when there is none)."""
    merged = dict(raw)
    is_mm = False
    prefix = ""
    for key in SUB_CONFIG_KEYS:
        sub = raw.get(key)
        if sub is None:
            continue
        if not isinstance(sub, dict):
            notes.append(f"config.json: '{key}' is not an object; ignored")
            continue
        for k, v in sub.items():
            if k in ("architectures",) and key != "transformer_layer_config":
                continue
            if k == "model_type" and key != "transformer_layer_config":
                merged["text_model_type"] = v
                continue
            if k in ("quantization_config",) and k in raw:
                continue
            merged[k] = v
        prefix = key + "."
        if key != "transformer_layer_config":
            archs = raw.get("architectures") if isinstance(raw.get("architectures"), list) else []
            is_mm = bool(
                any(k in raw for k in ("vision_config", "audio_config", "vision_tower", "image_token_index", "image_token_id"))
                or any(isinstance(a, str) and "ConditionalGeneration" in a for a in archs)
            )
        break
    return merged, is_mm, prefix


def apply_text_defaults(merged: dict[str, Any], raw: dict[str, Any], notes: list[str]) -> None:
    """Fill the transformers defaults of the text config class (:data:`TEXT_DEFAULTS`) that
    ``merged`` omits (an explicit null stays null, as in transformers)."""
    tmt = merged.get("text_model_type")
    if not isinstance(tmt, str):
        tmt = _TEXT_DEFAULT_FOR_PARENT.get(raw.get("model_type")) if isinstance(raw.get("model_type"), str) else None
    if not isinstance(tmt, str):
        mt = raw.get("model_type")
        tmt = mt if isinstance(mt, str) else None
    defaults = TEXT_DEFAULTS.get(tmt or "")
    if not defaults:
        return
    filled = []
    for k, v in defaults.items():
        if k not in merged:  # an explicit null stays null, as in transformers (rule SD007 reports it)
            merged[k] = v
            filled.append(k)
    if filled:
        notes.append(
            f"filled {', '.join(filled)} from transformers' {tmt} config defaults (config.json omits them; "
            "vLLM loads the same defaults)"
        )


def hf_text_config(raw: Any) -> dict[str, Any]:
    """The merged text view of a config.json mapping (a new dict; ``{}`` for a non-mapping)."""
    if not isinstance(raw, dict):
        return {}
    notes: list[str] = []
    merged, _, _ = merge_text(raw, notes)
    apply_text_defaults(merged, raw, notes)
    return merged


def speculators_layer_config(raw: Any) -> Any:
    """A speculators checkpoint's ``transformer_layer_config`` as written (any type: its updater
    refuses a missing or non-object one, :mod:`wizard.engine.speculators`); None when absent."""
    return raw.get("transformer_layer_config") if isinstance(raw, dict) else None
