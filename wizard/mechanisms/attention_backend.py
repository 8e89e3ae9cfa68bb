"""Which attention backend vLLM picks for the target and for the drafter -- or why none fits.

Mirrors, per release, ``vllm/v1/attention/selector.py:get_attn_backend`` and the platform's
``get_attn_backend_cls``:

* CUDA / ROCm (``vllm/platforms/cuda.py``, ``rocm.py``): a pinned backend
  (``--attention-backend`` for the target, ``speculative_config.attention_backend`` for the
  drafter) is validated alone and raises ``ValueError("Selected backend X is not valid for this
  configuration. Reason: [...]")``; otherwise the first backend of the priority list whose
  ``validate_configuration`` passes is used, or ``ValueError("No valid attention backend
  found ...")``.
* CPU (``vllm/platforms/cpu.py``): sparse MLA raises; MLA gets AMX_MLA (AMX hosts) or CPU_MLA;
  everything else gets CPU_ATTN without validation (its kernels reject bad head sizes later).
* XPU (``vllm/platforms/xpu.py``): TurboQuant KV -> TURBOQUANT; sparse -> XPU_MLA_SPARSE;
  MLA -> FlashAttn MLA or Triton MLA; otherwise FLASH_ATTN, falling back to TRITON_ATTN for
  fp32, multimodal prefix-LM and batch invariance.

How target and drafter share a choice is a per-release fact (``features.json``
``backend_selection``, read from the source by ``scripts/vllm_probe/features_probe.py``; the
newest generated release at or below the one asked stands for it):

* ``drafter_inherits_target_backend``: 0.20's ``llm_base_proposer.py _create_draft_vllm_config``
  hands the drafter the target's ``attention_config``, so the drafter's layers select with the
  target's pinned or locked backend; from 0.24 the drafter is auto-selected unless
  ``speculative_config.attention_backend`` is set, and uses ``speculative_config.kv_cache_dtype``
  when given, else the target's;
* ``non_causal_every_layer``: 0.20's ``get_attn_backend`` selects EVERY layer (target included)
  with ``use_non_causal`` when the method is DFlash; later releases only the drafter's non-causal
  layers (``dflash_has_any_non_causal``);
* ``target_backend_locks``: ``VerifyAndUpdateConfig`` classes that set ``attention_config.backend``
  when the user set none (Gemma 4 with heterogeneous head dims: TRITON_ATTN; 0.24+ only when
  FlashAttention 4 is unavailable). :func:`target_lock` applies them; the resulting pin carries
  ``Selection.pin_source``.

Tables: :mod:`wizard.vllm.backends` (generated from each release). Selection is certain only
when every deciding fact was computed; otherwise ``Selection.certain`` is False and
``unknown`` says which facts were missing.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from wizard.vllm import methods as M
from wizard.vllm import releases
from wizard.mechanisms.backend_locks import first_release_where, selection_rules, target_lock
from wizard.vllm.backends import BackendTable, load

__all__ = ["AttentionLayout", "BackendCheck", "Selection", "select_backend", "layout_for", "select_for_pair",
           "kernel_checks", "kv_support", "selection_rules", "target_lock", "first_release_where"]


@dataclass(frozen=True)
class AttentionLayout:
    """What vLLM's selector sees for one model's attention layers (``AttentionSelectorConfig``).

    head_size: per-head size in elements (MLA: kv_lora_rank + qk_rope_head_dim, e.g. 576).
    dtype: activation dtype as a torch name ('bfloat16', 'float16', 'float32').
    kv_cache_dtype: ``--kv-cache-dtype`` value ('auto', 'fp8', 'fp8_e5m2', 'nvfp4'...).
    block_size: tokens per KV block when the user set ``--block-size`` (None = not pinned).
    num_heads: query heads per GPU (CUDA MLA priorities depend on it).
    """

    head_size: int
    dtype: str = "bfloat16"
    kv_cache_dtype: str = "auto"
    block_size: int | None = None
    use_mla: bool = False
    use_sparse: bool = False
    has_sink: bool = False
    has_sliding_window: bool = False
    use_non_causal: bool = False
    use_mm_prefix: bool = False
    attn_type: str = "decoder"
    num_heads: int | None = None
    use_per_head_quant_scales: bool = False
    use_batch_invariant: bool = False
    use_kv_connector: bool = False
    use_pcp: bool = False
    use_dcp: bool = False
    use_adaptive_verification: bool = False
    use_rswa: bool = False

    def selector_config(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("num_heads")
        return d


@dataclass(frozen=True)
class BackendCheck:
    """One candidate: its priority position, vLLM's reasons (empty = valid) and the checks that
    could not be decided from the tables."""

    backend: str
    reasons: tuple[str, ...]
    unknown: tuple[str, ...] = ()
    priority: int | None = None

    @property
    def valid(self) -> bool:
        return not self.reasons

    @property
    def first_failure(self) -> str | None:
        return self.reasons[0] if self.reasons else None


@dataclass(frozen=True)
class Selection:
    """Outcome of backend selection for one model.

    backend: the backend vLLM uses (None when it raises). error: vLLM's error text (shortened)
    when selection raises. candidates: every backend considered, in priority order (the pinned
    one alone when pinned). certain: False when a deciding fact was unknown.
    """

    release: str
    profile: str | None
    backend: str | None
    pinned: str | None = None
    error: str | None = None
    candidates: tuple[BackendCheck, ...] = ()
    certain: bool = True
    unknown: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    #: why vLLM pinned ``pinned`` although the user did not (a model's lock, or the target's backend
    #: inherited by the drafter); None for a pin the user set
    pin_source: str | None = None

    @property
    def ok(self) -> bool:
        return self.backend is not None

    def check(self, backend: str) -> BackendCheck | None:
        return next((c for c in self.candidates if c.backend == backend), None)

    def why_not(self) -> dict[str, str]:
        """Per rejected candidate, its first failing condition (vLLM's wording)."""
        return {c.backend: c.reasons[0] for c in self.candidates if c.reasons}

    @property
    def auto_failed(self) -> bool:
        """Auto-selection certainly found no backend (vLLM: 'No valid attention backend found')."""
        return not self.ok and not self.pinned and self.certain and bool(self.candidates)

    @property
    def pin_rejected(self) -> bool:
        """A pinned backend vLLM knows certainly refuses the model (an unknown name is SD024's)."""
        return (not self.ok and bool(self.pinned) and self.certain
                and not (self.error or "").startswith("Unknown attention backend"))

    @property
    def kv_dtype_only(self) -> bool:
        """Every candidate's first refusal is the KV-cache dtype."""
        return all("kv_cache_dtype" in (c.first_failure or "") for c in self.candidates)

    def rejection(self) -> str:
        """Why the (pinned) first candidate is refused, in vLLM's words."""
        return "; ".join(self.candidates[0].reasons) if self.candidates else (self.error or "")


def select_backend(
    release: Any,
    hardware: Any = None,
    layout: AttentionLayout | None = None,
    pinned: str | None = None,
    *,
    platform: str | None = None,
) -> Selection:
    """The backend vLLM ``release`` picks for ``layout`` on ``hardware`` (a
    :class:`wizard.hardware.Hardware`) or ``platform`` ('cuda-9.0', 'xpu', 'cpu-amx'...).

    ``pinned``: the backend the user forced (``--attention-backend`` /
    ``speculative_config.attention_backend``), an ``AttentionBackendEnum`` name.
    Never raises for bad input: an unknown device, backend name or missing layout comes back as
    ``error`` (ValueError only for a ``release`` that is not a version).
    """
    table = load(release)
    if layout is None:
        return Selection(table.release, None, None, pinned, certain=False,
                         error="attention layout unknown (head size missing from the model config)")
    profile = table.profile_for(hardware, platform)
    if profile is None:
        what = platform or getattr(hardware, "name", None) or "this device"
        return Selection(table.release, None, None, pinned, error=f"no attention-backend table for {what}", certain=False)
    if pinned is not None:
        name = str(pinned).strip().upper()
        if name not in table.backend_names:
            return Selection(table.release, profile, None, pinned, certain=True, error=(
                f"Unknown attention backend: '{pinned}'. Valid options are: {', '.join(table.backend_names)}"))
        pinned = name
    kind = table.kind(profile)
    if kind in ("cuda", "rocm"):
        return _select_priority(table, profile, layout, pinned)
    if kind == "cpu":
        return _select_cpu(table, profile, layout, pinned)
    return _select_xpu(table, profile, layout, pinned)


def _check(table: BackendTable, profile: str, backend: str, layout: AttentionLayout, prio: int | None) -> BackendCheck:
    return _check_cached(table.key, profile, backend, layout, prio)


@functools.lru_cache(maxsize=4096)
def _check_cached(key: str, profile: str, backend: str, layout: AttentionLayout, prio: int | None) -> BackendCheck:
    """One backend's verdict; pure in its arguments (frozen layout, one table per release), so
    a re-check of the same configuration (every UI edit) costs a dictionary look-up."""
    r = load(key).validate(profile, backend, layout.selector_config())
    return BackendCheck(backend, tuple(r.reasons), tuple(r.unknown), prio)


def _select_priority(table: BackendTable, profile: str, layout: AttentionLayout, pinned: str | None) -> Selection:
    device = "rocm" if table.kind(profile) == "rocm" else "cuda"
    if pinned:
        c = _check(table, profile, pinned, layout, None)
        if c.reasons:
            return Selection(table.release, profile, None, pinned, candidates=(c,), certain=True,
                             error=f"Selected backend AttentionBackendEnum.{pinned} is not valid for this "
                                   f"configuration. Reason: {list(c.reasons)}")
        return Selection(table.release, profile, pinned, pinned, candidates=(c,), certain=not c.unknown,
                         unknown=c.unknown)
    prio = table.priorities(
        profile, use_mla=layout.use_mla, use_sparse=layout.use_sparse, use_kv_connector=layout.use_kv_connector,
        num_heads=layout.num_heads, kv_cache_dtype=layout.kv_cache_dtype, use_non_causal=layout.use_non_causal,
        head_size=layout.head_size, use_mm_prefix=layout.use_mm_prefix,
    )
    if prio is None:
        return Selection(table.release, profile, None, None, certain=False, error="priority list unknown for this device")
    checks = []
    unknown: list[str] = []
    chosen = None
    for i, b in enumerate(prio):
        c = _check(table, profile, b, layout, i)
        checks.append(c)
        if c.reasons:
            continue
        if c.unknown:
            unknown.extend(f"{b}: {u}" for u in c.unknown)
        chosen = b
        break
    if chosen is None:
        reasons = "{" + ", ".join(f"{c.backend}: [{', '.join(c.reasons)}]" for c in checks) + "}"
        return Selection(table.release, profile, None, None, candidates=tuple(checks), certain=True,
                         error=f"No valid attention backend found for {device}. Reasons: {reasons}.")
    return Selection(table.release, profile, chosen, None, candidates=tuple(checks), certain=not unknown,
                     unknown=tuple(unknown))


def _platform_facts(table: BackendTable, name: str) -> dict:
    """The release's ``features.json`` platform facts ``name`` ('cpu_selection', 'xpu_selection');
    {} without a features table (the 0.28-0.33 reading: no extra checks)."""
    try:
        return (releases.load(table.key, "features.json").get("facts") or {}).get(name) or {}
    except Exception:
        return {}


def _select_cpu(table: BackendTable, profile: str, layout: AttentionLayout, pinned: str | None) -> Selection:
    # vllm/platforms/cpu.py:get_attn_backend_cls; 0.33 adds the two KV-dtype checks (features.json)
    notes = []
    cpu = _platform_facts(table, "cpu_selection")
    kv = layout.kv_cache_dtype
    if layout.use_sparse:
        return Selection(table.release, profile, None, pinned, error="Sparse Attention is not supported on CPU.")
    if layout.use_mla and table.facts(profile, "CPU_MLA") is None and table.facts(profile, "AMX_MLA") is None:
        # releases without a CPU MLA backend (0.20-0.26): cpu.py raises for every MLA layer
        return Selection(table.release, profile, None, pinned, error="MLA is not supported on CPU.")
    if layout.use_mla and cpu.get("mla_kv_cache_dtypes") is not None and kv not in (None, *cpu["mla_kv_cache_dtypes"]):
        return Selection(table.release, profile, None, pinned,
                         error=f"--kv-cache-dtype {kv} is not supported by MLA attention on CPU.")
    if not layout.use_mla and cpu.get("cpu_attn_checks_kv_cache_dtype"):
        facts = table.facts(profile, "CPU_ATTN") or {}
        if kv is not None and facts.get("kv_cache_dtypes", {}).get(kv) is False:
            return Selection(table.release, profile, None, pinned, error=(
                f"--kv-cache-dtype {kv} is not supported by the CPU attention backend on this host."))
    if layout.use_mla:
        if profile == "cpu-amx" and pinned != "CPU_MLA" and table.facts(profile, "AMX_MLA") is not None:
            chosen = "AMX_MLA"
        else:
            chosen = "CPU_MLA"
    else:
        chosen = "CPU_ATTN"
    if pinned and pinned != chosen:
        notes.append(f"Cannot use {pinned} backend on CPU; vLLM uses {chosen} instead (logged, not an error).")
    c = _check(table, profile, chosen, layout, 0)
    if c.reasons:
        notes.append(f"{chosen} does not declare support for this layout ({'; '.join(c.reasons)}); "
                     "vLLM selects it anyway and its kernels fail at load.")
    return Selection(table.release, profile, chosen, pinned, candidates=(c,), certain=True, notes=tuple(notes))


def _select_xpu(table: BackendTable, profile: str, layout: AttentionLayout, pinned: str | None) -> Selection:
    # vllm/platforms/xpu.py:get_attn_backend_cls (0.32 reading; checked against every release's samples)
    def sel(b: str) -> Selection:
        return Selection(table.release, profile, b, pinned, candidates=(_check(table, profile, b, layout, 0),))

    if str(layout.kv_cache_dtype).startswith("turboquant_"):
        return sel("TURBOQUANT")
    if layout.use_sparse:
        return sel("XPU_MLA_SPARSE")
    if layout.use_mla:
        if not table.data["profiles"][profile].get("features", {}).get("xpu_flashattn_mla"):
            return sel("TRITON_MLA")  # 0.28-0.31: every MLA layer gets Triton MLA
        if pinned == "TRITON_MLA":
            return sel("TRITON_MLA")
        if pinned not in (None, "FLASH_ATTN_MLA"):
            return Selection(table.release, profile, None, pinned, error="Invalid attention backend for xpu, with use_mla: True")
        c = _check(table, profile, "XPU_FLASH_ATTN_MLA", layout, 0)
        if c.reasons:
            if pinned == "FLASH_ATTN_MLA":
                return Selection(table.release, profile, None, pinned, candidates=(c,),
                                 error=f"FlashAttnMLA on XPU is not valid for this configuration: {list(c.reasons)}")
            return Selection(table.release, profile, "TRITON_MLA", pinned, candidates=(c,))
        return Selection(table.release, profile, "FLASH_ATTN_MLA", pinned, candidates=(c,), certain=not c.unknown,
                         unknown=c.unknown)
    if pinned == "TRITON_ATTN":
        return sel("TRITON_ATTN")
    # 0.25+: prefix-LM / batch invariance go to Triton before the pin is checked (features.json xpu_selection)
    if (layout.use_batch_invariant or layout.use_mm_prefix) and \
            _platform_facts(table, "xpu_selection").get("mm_prefix_to_triton", True):
        return sel("FLASH_ATTN" if pinned == "FLASH_ATTN" else "TRITON_ATTN")
    if layout.dtype == "float32":
        return sel("TRITON_ATTN")
    if pinned and pinned != "FLASH_ATTN":
        return Selection(table.release, profile, None, pinned, error="Invalid attention backend for xpu, with use_mla: False")
    return sel("FLASH_ATTN")


# ------------------------------------------------------------------------------------------
# layouts from model facts


def _dtype_name(model_dtype: str | None, user_dtype: str | None) -> str:
    d = (user_dtype or "auto").lower()
    if d in ("half", "float16", "fp16"):
        return "float16"
    if d in ("bfloat16", "bf16"):
        return "bfloat16"
    if d in ("float", "float32", "fp32"):
        return "float32"
    m = (model_dtype or "bfloat16").lower().replace("torch.", "")
    # vLLM's "auto": the checkpoint dtype, fp32 checkpoints served as bf16/fp16 (config/model.py)
    if m in ("float32", "float"):
        return "bfloat16"
    return m if m in ("float16", "bfloat16") else "bfloat16"


def layout_for(
    model: Any,
    *,
    kv_cache_dtype: str | None = "auto",
    dtype: str | None = None,
    block_size: int | None = None,
    tensor_parallel_size: int = 1,
    method: str | None = None,
    role: str = "target",
    **flags: Any,
) -> AttentionLayout | None:
    """The selector inputs for a :class:`wizard.models.info.ModelInfo`.

    ``role``: 'target' or 'drafter'; ``method``: the speculative method (a DFlash drafter with
    any non-causal layer selects with ``use_non_causal``). ``flags`` set any other
    :class:`AttentionLayout` field (e.g. ``use_dcp=True``). None when the model's head size is
    unknown. Facts used: head_dim (the largest: Gemma 4 global_head_dim; MLA: kv_lora_rank + qk_rope_head_dim), sliding_window /
    layer_types, attention sinks (gpt-oss), DeepSeek sparse attention (index_topk).
    """
    cfg = getattr(model, "text_config", None) or {}
    use_mla = bool(getattr(model, "use_mla", False))
    if use_mla:
        r, p = getattr(model, "kv_lora_rank", None), getattr(model, "qk_rope_head_dim", None)
        head = (r or 0) + (p or 0) if r else None
    else:
        head = getattr(model, "head_dim", None)
        # Gemma 4: global (full-attention) layers have their own, larger head size; every layer is
        # checked against the backend, so the largest one decides (vllm/model_executor/models/config.py
        # Gemma4Config, 0.28-0.33)
        glob = cfg.get("global_head_dim")
        if head and isinstance(glob, int) and glob > head:
            head = glob
    if not head:
        return None
    heads = getattr(model, "num_attention_heads", None)
    layer_types = getattr(model, "layer_types", None) or []
    sliding = bool(getattr(model, "sliding_window", None)) or any("sliding" in str(t) for t in layer_types)
    has_sink = getattr(model, "model_type", None) in ("gpt_oss",) or bool(cfg.get("attention_sink") or cfg.get("use_sink"))
    sparse = use_mla and cfg.get("index_topk") is not None
    non_causal = bool(getattr(model, "non_causal", False))
    if role == "drafter" and method == M.DFLASH:
        non_causal = non_causal or _dflash_non_causal(cfg)
    lay = AttentionLayout(
        head_size=int(head),
        dtype=_dtype_name(getattr(model, "torch_dtype", None), dtype),
        kv_cache_dtype=kv_cache_dtype or "auto",
        block_size=block_size,
        use_mla=use_mla,
        use_sparse=sparse,
        has_sink=has_sink,
        has_sliding_window=sliding,
        use_non_causal=non_causal,
        num_heads=(max(1, heads // max(1, tensor_parallel_size)) if heads else None),
    )
    return replace(lay, **flags) if flags else lay


def _dflash_non_causal(cfg: dict[str, Any]) -> bool:
    """vllm/model_executor/models/qwen3_dflash.py:_dflash_layer_causal (0.32/0.33): explicit
    ``is_causal`` / ``dflash_config.causal`` win; else a layer is causal only when it is a
    sliding-attention layer; no ``layer_types`` -> non-causal."""
    if cfg.get("is_causal") is not None:
        return not bool(cfg["is_causal"])
    dc = cfg.get("dflash_config") if isinstance(cfg.get("dflash_config"), dict) else {}
    if dc.get("causal") is not None:
        return not bool(dc["causal"])
    lt = cfg.get("layer_types")
    if not lt:
        return True
    return any(t != "sliding_attention" for t in lt)


def select_for_pair(
    release: Any,
    hardware: Any,
    target: AttentionLayout | None,
    drafter: AttentionLayout | None,
    *,
    target_pinned: str | None = None,
    drafter_pinned: str | None = None,
    platform: str | None = None,
    target_model: Any = None,
) -> tuple[Selection | None, Selection | None]:
    """Target and drafter selections as vLLM ``release`` makes them. ``target_pinned`` /
    ``drafter_pinned``: what the user set. ``target_model`` (a ModelInfo): applies the release's
    :func:`target_lock` when the user pinned nothing. A drafter without its own pin inherits the
    target's (pinned or locked) backend on releases with ``drafter_inherits_target_backend``;
    otherwise it is selected on its own. Pass the drafter's layout with its KV dtype
    (``speculative_config.kv_cache_dtype`` or the target's)."""
    rules = selection_rules(release)
    t_src = d_src = None
    if target_pinned is None and target_model is not None:
        lock = target_lock(release, target_model, hardware, platform=platform)
        if lock is not None:
            target_pinned, t_src = lock["backend"], lock["why"]
    if drafter_pinned is None and target_pinned and rules.get("drafter_inherits_target_backend"):
        drafter_pinned = target_pinned
        d_src = (f"the drafter inherits the target's {target_pinned} ({t_src or '--attention-backend'}): vLLM "
                 f"{rules.get('release', release)}'s _create_draft_vllm_config hands it the target's attention_config "
                 "(vllm/v1/spec_decode/llm_base_proposer.py)")
    t = select_backend(release, hardware, target, target_pinned, platform=platform) if target else None
    d = select_backend(release, hardware, drafter, drafter_pinned, platform=platform) if drafter else None
    if t is not None and t_src:
        t = replace(t, pin_source=t_src)
    if d is not None and d_src:
        d = replace(d, pin_source=d_src)
    return t, d


# ------------------------------------------------------------------------------------------
# after selection: what the chosen backend's kernels refuse at load / first request

#: KV dtypes that name the model dtype (no quantization); CPU kernels store the model dtype for them
_FLOAT_KV = ("auto", "bfloat16", "float16", "half", "float")


def kernel_checks(selection: Selection | None, layout: AttentionLayout | None, hardware: Any = None) -> list[str]:
    """Failures of the SELECTED backend that ``validate_configuration`` does not see: vLLM
    selects it, then its kernels refuse the layout at load or at the first request. Each entry
    is the failure in vLLM's (or the kernel library's) words. Sources:

    * CPU_ATTN (``vllm/v1/attention/backends/cpu_attn.py``, 0.28-0.33): head sizes outside the
      backend's ``get_supported_head_sizes`` ('Unsupported CPU attention configuration'); fp8 KV
      needs an x86 host with AVX-512 or AMX (``_get_attn_isa``) and a head size divisible by 32;
      KV dtypes the class does not list (0.28-0.32 select it without checking);
    * Triton backends (TRITON_ATTN, TRITON_MLA) on CUDA below SM 8.9 with an e4m3 fp8 KV cache
      (fp8, fp8_e4m3, fp8_per_token_head): Triton has no ``fp8e4nv`` type
      there ('type fp8e4nv not supported in this architecture'), the kernel fails to compile at
      warm-up.
    """
    if selection is None or layout is None or selection.backend is None:
        return []
    out: list[str] = []
    kv = str(layout.kv_cache_dtype or "auto")
    b = selection.backend
    if b == "CPU_ATTN":
        c = selection.check(b)
        for r in (c.reasons if c is not None else ()):
            if "head" in r.lower():
                out.append(f"Unsupported CPU attention configuration: head_dim={layout.head_size} ({r})")
            elif "kv_cache_dtype" in r.lower() and kv not in _FLOAT_KV:
                out.append(f"CPU attention does not support --kv-cache-dtype {kv} ({r})")
            elif "sink" in r.lower():
                out.append(f"CPU attention: {r}")
        if kv.startswith("fp8"):
            isa = getattr(hardware, "isa", None)
            if isa is not None and isa not in ("avx512", "amx"):
                out.append(f"FP8 KV cache on CPU requires x86 with AVX-512 or AMX (this host: {isa})")
            if layout.head_size % 32:
                out.append(f"FP8 KV cache on CPU needs a head size divisible by 32 (head_dim={layout.head_size})")
    elif b in ("CPU_MLA", "AMX_MLA") and kv not in _FLOAT_KV:
        out.append(f"MLA attention on CPU supports only the model dtype KV cache, not {kv}")
    elif b.startswith("TRITON") and kv.startswith("fp8") and "e5m2" not in kv:
        cc = getattr(hardware, "compute_capability", None)
        if getattr(hardware, "vendor", "nvidia") == "nvidia" and cc is not None and tuple(cc) < (8, 9):
            out.append(f"{b} stores an e4m3 fp8 KV cache as Triton's fp8e4nv, which SM {cc[0]}.{cc[1]} lacks "
                       "('type fp8e4nv not supported in this architecture'): the kernel fails to compile at warm-up")
    return out


def kv_support(release: Any, hardware: Any) -> dict[str, Any]:
    """See :func:`_kv_support` (cached per release and device profile)."""
    table = load(release)
    profile = table.profile_for(hardware)
    cc = getattr(hardware, "compute_capability", None)
    return dict(_kv_support(table.key, profile, tuple(cc) if cc else None, getattr(hardware, "isa", None),
                            getattr(hardware, "vendor", None)))


def fp8_kv_support(release: Any, hardware: Any, non_causal: bool = False) -> bool:
    """``kv_support(release, hardware)["fp8_kv"]`` (or ``["fp8_noncausal_kv"]``) alone: one backend
    selection instead of one per KV dtype (a plain check asks only this, benchmarks/cold_start.py)."""
    table = load(release)
    profile = table.profile_for(hardware)
    cc = getattr(hardware, "compute_capability", None)
    return _fp8_ok(table.key, profile, tuple(cc) if cc else None, getattr(hardware, "isa", None),
                   getattr(hardware, "vendor", None), non_causal)


def _ok(key: str, profile: str, hw: "_Device", layout: AttentionLayout) -> bool:
    sel = select_backend(key, None, layout, platform=profile)
    return sel.ok and not kernel_checks(sel, layout, hw)


@functools.lru_cache(maxsize=256)
def _fp8_ok(key: str, profile: str | None, cc: tuple[int, int] | None, isa: str | None, vendor: str | None,
            non_causal: bool) -> bool:
    if profile is None:
        return False
    return _ok(key, profile, _Device(vendor or "nvidia", cc, isa),
               AttentionLayout(head_size=128, kv_cache_dtype="fp8", use_non_causal=non_causal))


@functools.lru_cache(maxsize=256)
def _kv_support(key: str, profile: str | None, cc: tuple[int, int] | None, isa: str | None, vendor: str | None) -> tuple:
    """Which KV-cache dtypes vLLM ``release`` can serve on ``hardware`` for an ordinary dense model
    (head size 128, bf16) or an MLA model (head size 576): a dtype counts when selection succeeds
    and :func:`kernel_checks` finds nothing. ``fp8_noncausal_kv``: fp8 with non-causal attention
    (DFlash/DSpark drafters). Derived for the hardware catalog and the UI; rules ask
    :func:`select_backend` with the real layouts. Returns {kv_cache_dtypes, fp8_kv,
    fp8_noncausal_kv, release}; empty lists when the device has no table."""
    table = load(key)
    out: dict[str, Any] = {"release": table.release, "kv_cache_dtypes": [], "fp8_kv": False, "fp8_noncausal_kv": False}
    if profile is None:
        return tuple(out.items())
    hw = _Device(vendor or "nvidia", cc, isa)

    def ok(layout: AttentionLayout) -> bool:
        return _ok(key, profile, hw, layout)

    dense = AttentionLayout(head_size=128)
    mla = AttentionLayout(head_size=576, use_mla=True, num_heads=128)
    sparse = replace(mla, use_sparse=True)
    kinds = [d for d in table.cache_dtypes if d != "auto"]
    out["kv_cache_dtypes"] = ["auto"] + [d for d in kinds if any(ok(replace(x, kv_cache_dtype=d)) for x in (dense, mla, sparse))]
    out["fp8_kv"] = _fp8_ok(key, profile, cc, isa, vendor, False)
    out["fp8_noncausal_kv"] = _fp8_ok(key, profile, cc, isa, vendor, True)
    return tuple(out.items())


@dataclass(frozen=True)
class _Device:
    vendor: str
    compute_capability: tuple[int, int] | None
    isa: str | None

