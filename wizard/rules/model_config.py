"""The checkpoint's own config.json is unusable (not JSON, not an object, absurd sizes)."""

from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register

_LLAMA = "vllm serve meta-llama/Llama-3.1-8B-Instruct"
_NGRAM = '--speculative-config \'{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}\''
_TINY = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 128, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 2048,
         "torch_dtype": "bfloat16"}


@register
class ModelConfigUnusable(Rule):
    """SD007 — the model's config.json cannot be loaded (broken file or impossible sizes).

    **What it does.** Reports every entry of ``ModelInfo.errors`` of the target and of the
    drafter, each naming the file and the problem: config.json (or Mistral params.json) that is
    not JSON, empty, ``null``, a list or another non-object, larger than 50 MiB, not UTF-8,
    unreadable (permissions, a FIFO or device in its place), or a size field
    (``num_hidden_layers``, ``hidden_size``, heads, ``head_dim``, ``vocab_size``,
    ``max_position_embeddings``, MTP layer counts ...) that is NaN, negative, not an integer or
    beyond any real model (``wizard.models.local.SIZE_LIMITS``).

    **Why it matters.** vLLM reads config.json through transformers before anything else: a
    file that does not parse stops the server at start-up; an absurd size (10^18 layers) makes it
    build an impossible model and die out of memory after the load. The model-dependent rules
    cannot check such a checkpoint either, so without this finding the check would look clean.

    **Anti-pattern.** A truncated download (empty or half-written config.json), a config.json
    edited by hand with a typo in a number, a path that points at a pipe or device.

    **Best practice.** Re-download the checkpoint (``huggingface-cli download ...``) or restore
    its config.json; keep sizes the integers the model was trained with.

    **Fix safety.** Only when the folder is named after a model of the offline catalog
    (``/models/Llama-3.1-8B-Instruct``): use that catalog id, which vLLM downloads with an
    intact config.json (unsafe if the folder held a fine-tune of it). Otherwise no automatic fix:
    only the checkpoint's author knows the right values.

    Source: vLLM 0.32/0.33 ``vllm/transformers_utils/config.py`` ``get_config`` (transformers
    ``PretrainedConfig.get_config_dict`` / ``json.loads`` of config.json), model construction in
    ``vllm/model_executor/models`` (one module per ``num_hidden_layers``); SpecWizard size bounds.
    """

    id = "SD007"
    title = "Model config.json unusable"
    severity = Severity.ERROR
    fields = ("model", "speculative_config.model")
    topic = "models"
    phase = "load"
    why = ("vLLM cannot load a checkpoint whose config.json does not parse, is not an object, or gives "
           "impossible sizes; the model-dependent checks cannot run on it either.")
    bad = "vllm serve ./sd007-broken/Llama-3.1-8B-Instruct " + _NGRAM
    good = "vllm serve ./sd007-good/Llama-3.1-8B-Instruct " + _NGRAM
    example_models = {
        "./sd007-broken/Llama-3.1-8B-Instruct": {"config": {**_TINY, "num_hidden_layers": 10 ** 18}, "tensors": {}},
        "./sd007-good/Llama-3.1-8B-Instruct": {"config": dict(_TINY), "tensors": {}},
    }
    source = "vllm/transformers_utils/config.py get_config (0.32, 0.33); wizard/models/local.py SIZE_LIMITS"
    fix_safety = "Unsafe (the catalog id may not be the folder's fine-tune); otherwise no automatic fix."

    def check(self, ctx):
        seen: set[int] = set()
        for field, info in (("model", ctx.target), ("speculative_config.model", ctx.drafter)):
            if info is None or id(info) in seen or not info.errors:
                continue
            seen.add(id(info))
            where = info.path or info.id
            entry = _catalog_id(info.id, field)
            fixes = [Patch(description=f"Use the catalog model {entry} (an intact copy vLLM downloads)",
                           set={field: entry})] if entry else []
            for problem in info.errors:
                yield self.finding(f"{field} {where!r}: {problem}" + (f"; or use the catalog id {entry}" if entry else ""),
                                   fields=[field], fixes=fixes)


def _catalog_id(name: str, field: str) -> str | None:
    """The one catalog id whose name equals the folder's last path component (case-insensitive)."""
    import os

    from wizard.models.catalog import entries

    base = os.path.basename(str(name).rstrip("/\\")).lower()
    if not base:
        return None
    hits = [e.id for e in entries("target" if field == "model" else "drafter") if e.id.rsplit("/", 1)[-1].lower() == base]
    return hits[0] if len(hits) == 1 else None
