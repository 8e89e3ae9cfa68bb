"""ServeConfig: the `vllm serve` options that matter to speculative decoding and the KV cache.

Field names, types and defaults follow vLLM's own (`vllm/engine/arg_utils.py` EngineArgs and
`vllm/config/speculative.py` SpeculativeConfig, 0.32 and 0.33). Everything flows one way:

    import (wizard.argv / YAML / dict)  ->  ServeConfig  ->  rules  ->  export

Nothing a user typed is lost:

* options the wizard does not model are kept verbatim in ``extra_args`` (and in the
  ``SpeculativeConfig`` model's pydantic extras) and passed through on export;
* values of the wrong type are moved aside into ``invalid_values`` (dotted path -> raw value)
  instead of raising, so a rule can name the field and the export still carries the raw text;
* what the importer noticed about the *spelling* of the input (deprecated flags, malformed
  JSON, mixed JSON and dotted keys...) is kept in ``import_notes`` for the rules to report.

A fix is a :class:`Patch` (set / unset of dotted paths) applied with :func:`apply_patch`; the
result re-enters the pipeline at the top.
"""

from __future__ import annotations

import copy
import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "SpeculativeConfig",
    "ServeConfig",
    "ImportNote",
    "Patch",
    "ConfigError",
    "get_path",
    "set_path",
    "unset_path",
    "apply_patch",
    "config_from_dict",
    "SERVE_FIELDS",
    "SPEC_FIELDS",
]


class ConfigError(ValueError):
    """Unusable input: the message names the field and the fix.

    Raised by the importers (wizard.io.argv, wizard.io.yaml_config) and by :func:`config_from_dict`
    only when nothing sensible can be built (e.g. no target model at all). Anything less severe
    becomes a finding instead.
    """

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class SpeculativeConfig(BaseModel):
    """vLLM's ``SpeculativeConfig`` init fields (``vllm/config/speculative.py``, 0.32/0.33).

    Unknown keys are *allowed* here (kept in ``model_extra`` and exported verbatim); the rule
    for vLLM's ``Unexpected keyword argument`` (R009) reports them per vLLM version.
    Defaults are vLLM's: ``None`` means "vLLM decides" (inherit from the target, infer
    from the drafter, or the documented default).
    """

    # NaN / inf are never a setting (vLLM's bounds reject them; NaN passes every comparison):
    # kept raw in invalid_values, where SD010/SD022 name them
    model_config = ConfigDict(extra="allow", validate_assignment=False, allow_inf_nan=False)

    method: str | None = Field(None, description="Speculative method, e.g. eagle3, mtp, ngram, draft_model, dflash, dspark, suffix.")
    model: str | None = Field(None, description="Drafter: HF id, local folder, or 'ngram' / a dotted import path.")
    num_speculative_tokens: int | None = Field(None, description="k: draft tokens per step (tokens). vLLM requires > 0.")
    draft_tensor_parallel_size: int | None = Field(None, description="Drafter TP; vLLM allows 1 or the target TP.")
    tensor_parallel_size: int | None = Field(None, description="Not a valid key in vLLM (R013); kept so the rule can say so.")
    quantization: str | None = Field(None, description="Drafter quantization; MTP inherits the target's.")
    moe_backend: str | None = None
    attention_backend: str | None = Field(None, description="Drafter attention backend; 'auto' means None.")
    kv_cache_dtype: str | None = Field(None, description="Drafter KV-cache dtype; None inherits --kv-cache-dtype.")
    max_model_len: int | None = Field(None, description="Drafter max length (tokens).")
    revision: str | None = None
    code_revision: str | None = None
    enforce_eager: bool | None = None
    index_share_for_mtp_iteration: bool | None = None
    disable_padded_drafter_batch: bool | None = None
    disable_eagle_block_drop: bool | None = None
    disable_lookahead_block_hashes: bool | None = Field(None, description="0.33 only.")
    draft_lm_head_quantization: str | None = Field(None, description="0.33 only: fp8 | nvfp4.")
    use_local_argmax_reduction: bool | None = None
    use_heterogeneous_vocab: bool | None = None
    prompt_lookup_max: int | None = Field(None, description="n-gram: longest lookup (tokens).")
    prompt_lookup_min: int | None = Field(None, description="n-gram: shortest lookup (tokens).")
    parallel_drafting: bool | None = None
    num_speculative_tokens_per_batch_size: list[Any] | None = None
    suffix_decoding_max_tree_depth: int | None = None
    suffix_decoding_max_cached_requests: int | None = None
    suffix_decoding_max_spec_factor: float | None = None
    suffix_decoding_min_token_prob: float | None = None
    rejection_sample_method: str | None = None
    synthetic_acceptance_rates: list[float] | None = None
    synthetic_acceptance_length: float | None = None
    enable_adaptive_verification: bool | None = None
    draft_sample_method: str | None = None
    dspark_draft_topk: int | None = None
    xpress_topc: int | None = Field(None, description="0.33 only.")
    fly_window_size: int | None = Field(None, description="0.33 only.")
    fly_entropy_threshold: float | None = Field(None, description="0.33 only.")
    fly_entropy_top_k: int | None = Field(None, description="0.33 only.")

    def set_keys(self) -> dict[str, Any]:
        """The keys the user actually gave (modelled and extra), in vLLM spelling."""
        out = self.model_dump(exclude_none=True, exclude_unset=False)
        out = {k: v for k, v in out.items() if k in self.model_fields_set or k in (self.model_extra or {})}
        return out


class ImportNote(BaseModel):
    """Something the importer saw about how the input was *written*.

    kind values (stable; rules match on them):
      ``deprecated_flag``      old spelling replaced (detail: old, new)
      ``json_malformed``       --speculative-config text was not strict JSON (detail: raw, error, position, corrected; file: the file it names)
      ``json_and_dotted``      JSON form and dotted keys both given; vLLM drops the JSON object (detail: dropped, raw, dotted)
      ``duplicate_key``        the same dotted key given twice (last wins); also the same option or
                               --speculative-config given twice, or a key repeated inside its JSON object
                               (detail: key, values; source "json" for a repeated JSON key; positional
                               True when a --model after the positional model is ignored)
      ``shorthand_conflict``   --spec-method/--spec-model/--spec-tokens together with the same key in --speculative-config
                               (detail: flag, key, shorthand_value, config_value; the shorthand stays in extra_args)
      ``unknown_flag``         an option vLLM of this version may not know (kept verbatim)
      ``not_an_object``        --speculative-config value is not a JSON object
      ``shell_syntax``         shell words around the vLLM command were left out: wrappers (nohup, env -u,
                               uv run --with X, docker run IMAGE...), redirections, a background ``&``, other
                               commands (detail: wrappers, redirections, background, other_commands)
      ``bool_as_number``       a JSON boolean given to a number field of the speculative config
                               (``"num_speculative_tokens": true``); vLLM's pydantic reads it as 1 / 0
                               (detail: key, value, read_as); rule SD022
      ``option_spelling``      a modelled option written other than by its full name: an alias (``-tp``, ``-sc``),
                               a ``--spec-*`` shorthand, a YAML key (``tp:`` -> ``--tp``); the config keeps only the
                               field (detail: option, the string argparse gets); rule SD008
      ``dotted_value_word``    a word vLLM's pre-parser reads as a dotted option: starts with ``-`` and holds a
                               ``.`` (a negative decimal as its own word, ``--x -0.5``), or a dotted option with
                               nothing after it (detail: word, option, last); rule SD018
    """

    model_config = ConfigDict(extra="forbid")

    kind: str
    field: str = Field(..., description="Dotted path the note concerns, e.g. 'speculative_config'.")
    message: str
    detail: dict[str, Any] = Field(default_factory=dict)


class ServeConfig(BaseModel):
    """The `vllm serve` options SpecWizard models (vLLM EngineArgs names and defaults).

    ``None`` means "not given, vLLM's default applies". Engine defaults from
    ``vllm/engine/arg_utils.py`` (0.32/0.33): tensor/pipeline/data parallel 1, dtype auto,
    kv_cache_dtype auto, kv_sharing_fast_prefill False, enforce_eager False; gpu_memory_utilization
    per release (0.9 / 0.92 / 0.34's extensible 1.0: ``ctx.view.memory_utilization``).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=False, allow_inf_nan=False)

    model: str = Field(..., description="Target model: HF id, local folder, or catalog id.")
    tokenizer: str | None = None
    revision: str | None = None
    dtype: str | None = Field(None, description="Model dtype: auto, bfloat16, float16, float32, half...")
    quantization: str | None = None
    tensor_parallel_size: int | None = Field(None, description="Target TP (GPUs per pipeline stage).")
    pipeline_parallel_size: int | None = None
    data_parallel_size: int | None = None
    max_model_len: int | None = Field(None, description="Context length (tokens).")
    max_num_seqs: int | None = Field(None, description="Max concurrent sequences.")
    max_num_batched_tokens: int | None = Field(None, description="Token budget per scheduler step (tokens).")
    gpu_memory_utilization: float | None = Field(None, description="Fraction of GPU memory vLLM may use (0-1].")
    kv_cache_dtype: str | None = Field(None, description="Target KV-cache dtype; None/auto = model dtype.")
    kv_sharing_fast_prefill: bool | None = None
    enable_prefix_caching: bool | None = None
    enable_chunked_prefill: bool | None = None
    enforce_eager: bool | None = None
    async_scheduling: bool | None = None
    enable_lora: bool | None = None
    attention_backend: str | None = None
    block_size: int | None = None
    speculative_config: SpeculativeConfig | None = None

    extra_args: dict[str, Any] = Field(
        default_factory=dict,
        description="Options not modelled here, snake_case name -> value verbatim "
        "(True for a bare flag, False for --no-flag). Exported unchanged.",
    )
    env: dict[str, str] = Field(default_factory=dict, description="Environment for the server (e.g. VLLM_USE_V2_MODEL_RUNNER).")
    invalid_values: dict[str, Any] = Field(
        default_factory=dict,
        description="Dotted path -> raw value that did not fit the field's type. Exported verbatim.",
    )
    import_notes: list[ImportNote] = Field(default_factory=list)

    # ---- convenience -------------------------------------------------------------------
    @property
    def spec(self) -> SpeculativeConfig | None:
        return self.speculative_config

    def effective(self, name: str, default: Any = None) -> Any:
        """Value of a top-level field, or ``default`` when unset."""
        v = getattr(self, name)
        return default if v is None else v

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of the options the user set (no None), speculative_config included."""
        d = self.model_dump(exclude_none=True)
        if self.speculative_config is not None:
            d["speculative_config"] = self.speculative_config.model_dump(exclude_none=True)
        for k in ("extra_args", "env", "invalid_values"):
            if not d.get(k):
                d.pop(k, None)
        if not d.get("import_notes"):
            d.pop("import_notes", None)
        return d


SERVE_FIELDS: tuple[str, ...] = tuple(
    n for n in ServeConfig.model_fields if n not in ("extra_args", "env", "invalid_values", "import_notes", "speculative_config")
)
SPEC_FIELDS: tuple[str, ...] = tuple(SpeculativeConfig.model_fields)


# ---- dotted paths ----------------------------------------------------------------------

def _as_dict(cfg: ServeConfig | dict) -> dict[str, Any]:
    if isinstance(cfg, ServeConfig):
        d = cfg.model_dump(exclude_none=True)
        if cfg.speculative_config is not None:
            d["speculative_config"] = cfg.speculative_config.model_dump(exclude_none=True)
        return d
    return copy.deepcopy(cfg)


def get_path(cfg: ServeConfig | dict, path: str, default: Any = None) -> Any:
    """Value at a dotted path ('speculative_config.kv_cache_dtype'), or ``default``.

    Looks in ``invalid_values`` first so a raw, ill-typed value is still visible.
    """
    d = _as_dict(cfg)
    inv = d.get("invalid_values") if isinstance(d.get("invalid_values"), dict) else {}
    if path in inv:
        return inv[path]
    cur: Any = d
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return default
    return cur


def set_path(d: dict[str, Any], path: str, value: Any) -> None:
    """Set a dotted path in a plain dict, creating intermediate dicts. ``None`` unsets."""
    if value is None:
        unset_path(d, path)
        return
    parts = path.split(".")
    cur = d
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[part] = nxt
        cur = nxt
    cur[parts[-1]] = value
    inv = d.get("invalid_values")
    if isinstance(inv, dict):
        inv.pop(path, None)


def unset_path(d: dict[str, Any], path: str) -> None:
    """Remove a dotted path from a plain dict (and any raw invalid value stored for it)."""
    inv = d.get("invalid_values")
    if isinstance(inv, dict):
        inv.pop(path, None)
    if path.startswith("import_notes"):
        # 'import_notes' removes all; 'import_notes.KIND' removes the notes of that kind.
        parts = path.split(".", 1)
        if len(parts) == 1:
            d.pop("import_notes", None)
        else:
            d["import_notes"] = [n for n in d.get("import_notes", []) if (n.get("kind") if isinstance(n, dict) else n.kind) != parts[1]]
        return
    parts = path.split(".")
    cur = d
    for part in parts[:-1]:
        cur = cur.get(part) if isinstance(cur, dict) else None
        if cur is None:
            return
    if isinstance(cur, dict):
        cur.pop(parts[-1], None)


class Patch(BaseModel):
    """A machine-applicable fix: dotted paths to set and to unset.

    ``set`` values are plain JSON values. Setting a path to ``None`` unsets it.
    Applied with :func:`apply_patch`; the result is a new ServeConfig.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    description: str
    set: dict[str, Any] = Field(default_factory=dict)
    unset: list[str] = Field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"description": self.description, "set": dict(self.set), "unset": list(self.unset)}


def apply_patch(cfg: ServeConfig, patch: Patch) -> ServeConfig:
    """Return a new ServeConfig with ``patch`` applied (the input is not modified)."""
    d = cfg.model_dump(exclude_none=True)
    if cfg.speculative_config is not None:
        d["speculative_config"] = cfg.speculative_config.model_dump(exclude_none=True)
    for path in patch.unset:
        unset_path(d, path)
    for path, value in patch.set.items():
        set_path(d, path, value)
    # an emptied speculative_config means no speculation
    if d.get("speculative_config") == {}:
        d.pop("speculative_config")
    return config_from_dict(d)


# ---- lenient construction --------------------------------------------------------------

def _split_invalid(d: dict[str, Any], err: ValidationError, invalid: dict[str, Any]) -> bool:
    """Move every value named by ``err`` into ``invalid``. Returns False if nothing moved."""
    moved = False
    for e in err.errors():
        loc = [str(x) for x in e.get("loc", ())]
        if not loc:
            continue
        # pydantic reports list members etc.; the field is the first one or two parts
        if loc[0] == "speculative_config" and len(loc) >= 2:
            path = f"speculative_config.{loc[1]}"
            sc = d.get("speculative_config")
            if isinstance(sc, dict) and loc[1] in sc:
                invalid[path] = sc.pop(loc[1])
                moved = True
            elif not isinstance(sc, dict) and "speculative_config" in d:
                invalid["speculative_config"] = d.pop("speculative_config")
                moved = True
        elif loc[0] in d:
            if loc[0] == "model":
                continue
            invalid[loc[0]] = d.pop(loc[0])
            moved = True
    return moved


def _number_field(name: str) -> bool:
    """Whether SpeculativeConfig.``name`` is a number field (``int`` / ``float``, optional) that does
    not take a bool: the members of its annotation's union, read as types."""
    f = SpeculativeConfig.model_fields.get(name)
    if f is None:
        return False
    members = typing.get_args(f.annotation) if typing.get_origin(f.annotation) in (typing.Union, types.UnionType) \
        else (f.annotation,)
    return bool({int, float} & set(members)) and bool not in members


def _bool_number_notes(spec: dict[str, Any], existing: Any) -> list[ImportNote]:
    """``bool_as_number`` notes for JSON booleans given to number fields of the speculative
    config (``"num_speculative_tokens": true``). vLLM validates SpeculativeConfig with pydantic in
    lax mode, which reads true as 1 and false as 0 (vllm/config/speculative.py 0.32, checked with
    ``SpeculativeConfig(method="ngram", num_speculative_tokens=True)`` -> 1); the wizard's own
    model does the same, so the note is all that keeps what was written. [] when ``existing``
    (the import notes already there, or anything else) already says it, or is not a list."""
    if existing is not None and not isinstance(existing, list):
        return []
    said = {(n.kind, n.field) if isinstance(n, ImportNote) else (n.get("kind"), n.get("field"))
            for n in existing or [] if isinstance(n, (ImportNote, dict))}
    out = []
    for key, value in spec.items():
        path = f"speculative_config.{key}"
        if isinstance(value, bool) and _number_field(key) and ("bool_as_number", path) not in said:
            out.append(ImportNote(
                kind="bool_as_number", field=path,
                message=f"{path}: {str(value).lower()} is a JSON boolean where vLLM expects a number; vLLM's "
                        f"validation (pydantic, lax mode) reads it as {int(value)}",
                detail={"key": key, "value": value, "read_as": int(value)}))
    return out


def config_from_dict(data: dict[str, Any]) -> ServeConfig:
    """Build a ServeConfig from a plain dict, never losing a value.

    * Keys are vLLM option names; ``-`` is read as ``_`` (``max-model-len``).
    * Unknown top-level keys go to ``extra_args`` verbatim.
    * Values of the wrong type go to ``invalid_values`` (dotted path -> raw value).
    * ``speculative_config`` may be a dict or a JSON string.

    Raises:
        ConfigError: ``data`` is not a mapping, or has no usable ``model`` (names the field).
    """
    import json

    if not isinstance(data, dict):
        raise ConfigError(f"configuration must be a mapping of vLLM options, got {type(data).__name__}", field=None)
    d: dict[str, Any] = {}
    pre_invalid: dict[str, Any] = {}
    raw_extra = data.get("extra_args")
    extra: dict[str, Any] = dict(raw_extra) if isinstance(raw_extra, dict) else {}
    if raw_extra is not None and not isinstance(raw_extra, dict):
        pre_invalid["extra_args"] = raw_extra  # e.g. a session file with "extra_args": NaN: kept, reported (SD010)
    for key, value in data.items():
        k = str(key).replace("-", "_") if key not in ("extra_args", "env", "invalid_values", "import_notes") else key
        if k in ("extra_args",):
            continue
        if k in ServeConfig.model_fields:
            d[k] = value
        else:
            extra[k] = value
    if extra:
        d["extra_args"] = extra
    sc = d.get("speculative_config")
    if isinstance(sc, str):
        try:
            parsed = json.loads(sc)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            d["speculative_config"] = parsed
    if isinstance(d.get("speculative_config"), dict):
        d["speculative_config"] = {str(k).replace("-", "_"): v for k, v in d["speculative_config"].items()}
        notes = _bool_number_notes(d["speculative_config"], d.get("import_notes"))
        if notes:
            d["import_notes"] = [*(d.get("import_notes") or []), *notes]
    model = d.get("model")
    if model is None or (isinstance(model, str) and not model.strip()):
        raise ConfigError("no target model: give the model (vllm serve MODEL, or 'model:' in the YAML)", field="model")
    if not isinstance(model, str):
        d["model"] = str(model)
    raw_invalid = d.pop("invalid_values", None)
    invalid: dict[str, Any] = dict(raw_invalid) if isinstance(raw_invalid, dict) else (
        {"invalid_values": raw_invalid} if raw_invalid is not None else {})
    invalid.update(pre_invalid)
    for _ in range(64):
        try:
            cfg = ServeConfig.model_validate({**d, "invalid_values": invalid})
            return cfg
        except ValidationError as err:
            if not _split_invalid(d, err, invalid):
                # something structural (e.g. import_notes/env malformed): keep raw in extra
                for e in err.errors():
                    loc = e.get("loc", ())
                    if loc and loc[0] in d and loc[0] != "model":
                        extra = d.setdefault("extra_args", {})
                        extra[str(loc[0])] = d.pop(loc[0])
                        break
                else:
                    raise ConfigError(f"configuration is not usable: {err.errors()[0].get('msg')}") from None
    raise ConfigError("configuration is not usable")  # pragma: no cover
