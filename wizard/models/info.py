"""ModelInfo: what the rules and the planner need to know about a checkpoint.

Filled by :mod:`wizard.models.local` (a folder: config.json, safetensors *headers*,
model.safetensors.index.json; parsed by :mod:`wizard.models.config_json` and :mod:`wizard.models.tensors`), :mod:`wizard.models.hub` (Hugging Face Hub metadata, no weight
download) and :mod:`wizard.models.catalog` (offline entries under ``presets/models/``).
All three produce the same object, so a catalog id resolves exactly like a local folder.

Units: sizes in elements (hidden_size, head_dim), counts in layers/heads/tokens,
``weight_bytes`` in bytes, ``param_count`` in parameters.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from wizard.models.text_config import hf_text_config

__all__ = ["TensorInfo", "ConfigProblem", "ModelInfo", "ModelLookupError"]


class ModelLookupError(Exception):
    """A model could not be inspected; ``str(err)`` says why and what to do (offline, missing file...)."""


#: how a lookup error says the name is no Hugging Face repo id at all (huggingface_hub's
#: validate_repo_id refused it): no machine can load it, whatever is online (rule SD009: an error)
NOT_A_REPO_ID = "is neither a local folder, a catalog id, nor a valid Hub repo id"


class TensorInfo(BaseModel):
    """One tensor from a safetensors header: shape (elements per dim) and dtype ("BF16", "F8_E4M3"...)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    shape: list[int]
    dtype: str


class ConfigProblem(BaseModel):
    """One value of a checkpoint's config.json (or params.json) that vLLM cannot build the model
    from: a size that is zero, null, negative, NaN/inf, not an integer or beyond any real model,
    sizes that do not fit together (heads that do not divide), a missing ``architectures``, a
    non-finite RoPE factor. Collected by :func:`wizard.models.config_json.info_from_config`;
    rule SD007 reports each one as an error."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    file: str = Field(..., description="The file holding the value: 'config.json' or 'params.json'.")
    key: str = Field(..., description="Dotted path of the value in that file, e.g. 'hidden_size', "
                                      "'text_config.vocab_size', 'rope_scaling.factor', 'architectures'.")
    value: str = Field(..., description="The value as shown to the user ('0', 'null', 'NaN', 'missing', "
                                        "'a 19-digit number' ...).")
    why: str = Field(..., description="Why vLLM cannot use it (one clause).")
    fix: str = Field(..., description="What to do (one sentence).")

    @property
    def message(self) -> str:
        """The one-line problem, naming the file and the key (what ``ModelInfo.errors`` holds)."""
        return f"{self.file}: '{self.key}' is {self.value}; {self.why}. {self.fix}"


class ModelInfo(BaseModel):
    """Facts about one model (target or drafter). ``None`` = unknown, never guessed."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(..., description="What the user gave: HF id, folder path or catalog id.")
    source: Literal["local", "hub", "catalog"] = "local"
    path: str | None = Field(None, description="Local folder, when source == 'local'.")
    raw_config: dict[str, Any] = Field(default_factory=dict, description="config.json as read (text_config not merged; "
                                       "read ModelInfo.text_config or a typed field instead).")

    architectures: list[str] = Field(default_factory=list)
    model_type: str | None = None
    hidden_size: int | None = None
    num_hidden_layers: int | None = None
    num_attention_heads: int | None = None
    num_key_value_heads: int | None = None
    head_dim: int | None = Field(None, description="Per-head size; hidden_size // heads when config.json omits it.")
    vocab_size: int | None = None
    max_position_embeddings: int | None = None
    torch_dtype: str | None = Field(None, description="config.json torch_dtype/dtype, e.g. 'bfloat16'.")
    is_multimodal: bool = False
    tie_word_embeddings: bool = Field(False, description="config.json tie_word_embeddings: the lm_head is the input embedding table.")
    intermediate_size: int | None = Field(None, description="config.json intermediate_size: the dense FFN width (Mixtral/gpt-oss/Llama 4: the expert FFN width).")

    # mixture of experts (None = dense model or unknown; see wizard.models.config_json._moe_fields)
    num_experts: int | None = Field(None, description="Routed experts per MoE layer (n_routed_experts / num_local_experts / num_experts).")
    num_experts_per_tok: int | None = Field(None, description="Routed experts each token uses (num_experts_per_tok / experts_per_token / moe_topk).")
    moe_intermediate_size: int | None = Field(
        None, description="FFN width of one routed expert: moe_intermediate_size, else intermediate_size (Mixtral, gpt-oss, Llama 4).")
    num_shared_experts: int | None = Field(None, description="Always-active shared experts per MoE layer (DeepSeek/GLM n_shared_experts; Qwen-MoE: 1 when shared_expert_intermediate_size).")
    shared_expert_intermediate_size: int | None = Field(None, description="Total FFN width of the shared experts of one MoE layer.")
    num_moe_layers: int | None = Field(
        None, description="Decoder layers with routed experts (the rest are dense: first_k_dense_replace, mlp_only_layers, decoder_sparse_step...).")

    # quantization
    quant_method: str | None = Field(None, description="quantization_config.quant_method, e.g. fp8, modelopt, compressed-tensors, mxfp4.")
    kv_cache_quant: str | None = Field(
        None,
        description="KV dtype the checkpoint forces when --kv-cache-dtype is auto: 'fp8' (kv_cache_scheme / "
        "kv_cache_quant_algo FP8), 'nvfp4', or None.",
    )

    # attention layout
    use_mla: bool = False
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    sliding_window: int | None = None
    layer_types: list[str] | None = Field(None, description="Per-layer attention type, e.g. ['sliding_attention', 'full_attention', ...].")
    full_attention_head_dim: int | None = Field(
        None, description="Head size of the full-attention layers where it differs from head_dim (Gemma 4: "
        "global_head_dim; transformers' Gemma4TextConfig per_layer_config, read by vLLM's gemma4.py).")
    full_attention_kv_heads: int | None = Field(
        None, description="KV heads of the full-attention layers where they differ (Gemma 4: "
        "num_global_key_value_heads when attention_k_eq_v is true or absent).")
    attention_chunk_size: int | None = None
    num_kv_shared_layers: int = Field(0, description="Layers that reuse another layer's KV (cross-layer KV sharing).")
    num_mamba_layers: int = Field(0, description="Layers with recurrent state instead of KV (hybrid/mamba/GDN).")
    recurrent_state: dict[str, Any] = Field(
        default_factory=dict,
        description="config.json fields that size a recurrent layer's state (linear_num_key_heads, mamba_d_state, "
                    "conv_L_cache ...; text_config merged), read by wizard.mechanisms.mamba_state.")

    # speculation-related
    mtp_layers: int | None = Field(None, description="num_nextn_predict_layers (or the model's other spelling); None = not an MTP checkpoint.")
    mtp_field: str | None = Field(None, description="Which config key gave mtp_layers.")
    speculators_config: dict[str, Any] | None = None
    draft_vocab_size: int | None = None
    target_hidden_size: int | None = None
    eagle_aux_hidden_state_layer_ids: list[int] | None = None
    n_predict: int | None = None

    # tensors (header facts; never the weights)
    tensors: dict[str, TensorInfo] = Field(
        default_factory=dict,
        description="Selected tensors by name (lm_head, embed_tokens, d2t, t2d, MTP layers...), with shapes.",
    )
    tensor_names_known: bool = Field(False, description="True when the full list of tensor names was read.")
    has_lm_head: bool | None = None
    has_embed_tokens: bool | None = None
    has_d2t: bool | None = None
    has_t2d: bool | None = None
    has_mtp_weights: bool | None = Field(None, description="Tensors of the MTP layers are present (None = unknown).")
    param_count: int | None = Field(None, description="Parameters (elements), from headers or catalog.")
    weight_bytes: int | None = Field(None, description="Bytes of all weights (safetensors total_size).")

    json_files: list[str] | None = Field(
        None, description="Names of the *.json files of a local folder (quantization config files vLLM looks for); "
        "None when not a local folder.")
    notes: list[str] = Field(default_factory=list, description="Problems reading the model (corrupt file, missing field).")
    errors: list[str] = Field(
        default_factory=list,
        description="Problems that stop vLLM from loading this checkpoint's config, each naming the file and the "
        "problem: config.json not JSON / empty / not an object / too large / unreadable, or a size that is NaN, "
        "negative or absurd. Rule SD007 reports them as errors.",
    )
    config_problems: list[ConfigProblem] = Field(
        default_factory=list,
        description="The value-level entries of ``errors`` as structured facts (file, key, value, why, fix): "
        "sizes that are zero, null, negative, non-finite, absurd or inconsistent, a missing architectures, "
        "a non-finite RoPE factor. Each one's message is also in ``errors``.",
    )
    provenance: str | None = Field(
        None,
        description="Where the facts come from when not read from the checkpoint itself (catalog entry source and "
        "what it approximates); None for local folders and the Hub.",
    )

    #: the merged text view (set by info_from_config, else built from raw_config on construction)
    _text: dict[str, Any] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        if self.raw_config:
            self._text = hf_text_config(self.raw_config)

    # ---- views of config.json (the one place outside the parser that looks into raw_config)
    @property
    def text_config(self) -> dict[str, Any]:
        """config.json as vLLM's ``hf_text_config`` sees it: the top level with ``text_config``
        (``llm_config``, ``language_config``, ``transformer_layer_config``) merged over it and
        transformers' text defaults filled (:mod:`wizard.models.text_config`). Read-only."""
        return self._text

    @property
    def has_config(self) -> bool:
        """A config.json (or params.json, or a catalog entry's config) was read."""
        return bool(self.raw_config)

    @property
    def auto_map(self) -> dict[str, Any] | None:
        """config.json ``auto_map``: the checkpoint ships its own Python classes (None = none)."""
        v = self.raw_config.get("auto_map")
        return v if isinstance(v, dict) else None

    @property
    def has_mm_tower(self) -> bool:
        """config.json has a vision/audio tower (``vision_config``, ``audio_config``, Mistral ``vision_encoder``)."""
        return any(isinstance(self.raw_config.get(k), dict) for k in ("vision_config", "audio_config", "vision_encoder"))

    # ---- drafter configs (EAGLE / EAGLE3 / DFlash / DSpark / speculators)
    @property
    def eagle_config(self) -> dict[str, Any]:
        """config.json ``eagle_config`` (EAGLE3 drafters; ``{}`` when absent)."""
        v = self.raw_config.get("eagle_config")
        return v if isinstance(v, dict) else {}

    @property
    def use_aux_hidden_state(self) -> bool:
        """False only when ``eagle_config.use_aux_hidden_state`` is false: vLLM's EAGLE3 then
        drafts from the last hidden state alone."""
        return self.eagle_config.get("use_aux_hidden_state") is not False

    @property
    def num_aux_hidden_states(self) -> Any:
        """config.json ``num_aux_hidden_states`` as written (None = absent): the fc width of an EAGLE3 drafter."""
        return self.raw_config.get("num_aux_hidden_states")

    @property
    def aux_layers(self) -> tuple[list[int] | None, str | None]:
        """The EAGLE3 aux layer ids vLLM picks from this drafter's config and the key they came
        from (R121 lookup order: ``eagle_config`` list, top-level list, ``dflash_config`` /
        ``target_layer_ids`` + 1). (None, None) when the config gives none (vLLM then uses the
        target default (2, L//2, L-3))."""
        raw = self.raw_config
        ec = self.eagle_config
        if isinstance(ec.get("eagle_aux_hidden_state_layer_ids"), list):
            return list(ec["eagle_aux_hidden_state_layer_ids"]), "eagle_config.eagle_aux_hidden_state_layer_ids"
        top = self.eagle_aux_hidden_state_layer_ids or raw.get("eagle_aux_hidden_state_layer_ids")
        if isinstance(top, list) and top:
            return list(top), "eagle_aux_hidden_state_layer_ids"
        dc = raw.get("dflash_config")
        if isinstance(dc, dict) and isinstance(dc.get("target_layer_ids"), list):
            return [int(i) + 1 for i in dc["target_layer_ids"]], "dflash_config.target_layer_ids"
        if isinstance(raw.get("target_layer_ids"), list):
            return [int(i) + 1 for i in raw["target_layer_ids"]], "target_layer_ids"
        return None, None

    @property
    def speculators_model_type(self) -> str:
        """``speculators_model_type`` (top level, else ``speculators_config``'s; '' when absent)."""
        sc = self.speculators_config or {}
        return str(self.raw_config.get("speculators_model_type") or sc.get("speculators_model_type") or "")

    @property
    def draft_n_predict(self) -> int | None:
        """``n_predict`` as vLLM's *draft* ``hf_config`` carries it when this checkpoint is given as
        ``speculative_config.model``: None when :attr:`n_predict` only comes from
        ``speculators_config.proposal_methods[0].speculative_tokens``, which vLLM 0.10-0.32 reads
        only when the speculator is the top-level ``--model`` (``maybe_override_with_speculators``);
        the draft path raises "num_speculative_tokens was not provided" (vllm-project/vllm PR
        #44566, open; ``vllm/config/speculative.py`` 0.22.0 ``SpeculativeConfig.__post_init__``)."""
        if self.speculators_config and self.raw_config.get("n_predict") is None:
            return None
        return self.n_predict

    #: config keys of the token a parallel drafter (DFlash, DSpark, PARD, P-EAGLE) fills masked slots with
    MASK_TOKEN_KEYS: ClassVar[tuple[str, ...]] = ("mask_token_id", "dspark_noise_token_id", "pard_token", "ptd_token_id")

    @property
    def mask_token_id(self) -> Any:
        """The first of :attr:`MASK_TOKEN_KEYS` set at the top level or in ``dflash_config`` /
        ``speculators_config`` / ``transformer_layer_config`` (None = none)."""
        raw = self.raw_config
        scopes = [raw] + [raw[k] for k in ("dflash_config", "speculators_config", "transformer_layer_config")
                          if isinstance(raw.get(k), dict)]
        return next((s[k] for s in scopes for k in self.MASK_TOKEN_KEYS if s.get(k) is not None), None)

    @property
    def draft_block_size(self) -> Any:
        """A DSpark drafter's ``block_size`` (or ``dspark_block_size``): the tokens it proposes
        per step, vLLM's num_speculative_tokens default (None = absent)."""
        return self.raw_config.get("block_size") or self.raw_config.get("dspark_block_size")

    def short_name(self) -> str:
        return self.id.rstrip("/").split("/")[-1]
