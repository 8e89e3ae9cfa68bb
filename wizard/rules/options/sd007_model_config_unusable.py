from __future__ import annotations

import os

from wizard.config import Patch
from wizard.models.catalog import entries
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import arch_prefix


@register
class ModelConfigUnusable(Rule):
    r"""Model config.json unusable

    ## What it does

    Reports every entry of `ModelInfo.errors` of the target and of the drafter, each naming the
    file and the problem: config.json (or Mistral params.json) that is not JSON, empty, `null`, a
    list or another non-object, larger than 50 MiB, not UTF-8, unreadable (permissions, a FIFO or
    device in its place); and each of `ModelInfo.config_problems` (file, key, value, why), a value
    vLLM cannot build the model from, also inside `text_config`:

    * a size (`num_hidden_layers`, `hidden_size`, heads, `head_dim`, `vocab_size`,
      `intermediate_size`, `max_position_embeddings`, experts, MTP layer counts ...) that is NaN,
      inf, negative, not an integer or beyond any real model (`SIZE_LIMITS`); 0 where a model needs
      a positive one (`POSITIVE_SIZES`; `intermediate_size` of a dense model); `null` for
      `hidden_size`, `num_hidden_layers`, `vocab_size` or (with attention layers)
      `num_attention_heads`;
    * `num_key_value_heads` that does not divide `num_attention_heads`, or `num_attention_heads`
      that does not divide `hidden_size` when no `head_dim` is given (not for MLA models);
    * `architectures` missing, `null`, empty or not a list of class names (except where vLLM's
      config class supplies it: Mistral params.json, speculators format, Medusa ...; for an
      EAGLE/EAGLE3/DFlash drafter SD226 reports it);
    * a RoPE value (`rope_scaling` / `rope_parameters`, `rope_theta`) that is NaN or inf, or a
      factor or `rope_theta` that is not a positive number.

    ## Why it matters

    vLLM reads config.json through transformers before anything else: a file that does not parse
    stops the server at start-up; an absurd size (10^18 layers) makes it build an impossible model
    and die out of memory after the load; a size of 0 or `null`, heads that do not divide or a
    missing `architectures` stop it building the model (a division by zero, "No model
    architectures are specified", weights that do not fit); a NaN RoPE factor yields NaN logits.
    The model-dependent rules cannot check such a checkpoint either, so without this finding the
    check would look clean. Such a value usually means the wrong folder or file, or a hand edit.

    ## Example

    A truncated download (empty or half-written config.json), a config.json edited by hand with a
    typo in a number, a path that points at a pipe or device:

    ```sh
    vllm serve ./sd007-broken/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Use instead

    Re-download the checkpoint (`huggingface-cli download ...`) or restore its config.json; keep
    sizes the integers the model was trained with.

    ```sh
    vllm serve ./sd007-good/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Only when the folder is named after a model of the offline catalog
    (`/models/Llama-3.1-8B-Instruct`): use that catalog id, which vLLM downloads with an intact
    config.json (unsafe if the folder held a fine-tune of it). Otherwise no automatic fix: only the
    checkpoint's author knows the right values.

    ## Source

    vLLM 0.32/0.33 `vllm/transformers_utils/config.py` `get_config` (transformers
    `PretrainedConfig.get_config_dict` / `json.loads` of config.json), model construction in
    `vllm/model_executor/models`, `ModelRegistry.inspect_model_cls` ("No model architectures are
    specified"), `ModelConfig.get_head_size` / `get_total_num_kv_heads`, `get_rope`;
    wizard/models/config_json.py `SIZE_LIMITS`, `POSITIVE_SIZES`, `REQUIRED_SIZES`.
    """

    id = "SD007"
    severity = Severity.ERROR
    fields = ("model", "speculative_config.model")
    phase = "load"

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
            # an EAGLE/DFlash drafter without architectures: SD226 / SD046 say what vLLM makes of it
            wrapped = field == "speculative_config.model" and info is not ctx.target and arch_prefix(ctx.method) is not None
            problems = [p.message for p in info.config_problems]  # structured: file, key, value, why, fix
            values = [p.message for p in info.config_problems if not (wrapped and p.key == "architectures")]
            others = [e for e in info.errors if e not in problems]  # the file itself (not JSON, empty ...)
            for problem in [*others, *values]:
                yield self.finding(f"{field} {where!r}: {problem}" + (f"; or use the catalog id {entry}" if entry else ""),
                                   fields=[field], fixes=fixes)


def _catalog_id(name: str, field: str) -> str | None:
    """The one catalog id whose name equals the folder's last path component (case-insensitive)."""
    base = os.path.basename(str(name).rstrip("/\\")).lower()
    if not base:
        return None
    hits = [e.id for e in entries("target" if field == "model" else "drafter") if e.id.rsplit("/", 1)[-1].lower() == base]
    return hits[0] if len(hits) == 1 else None
