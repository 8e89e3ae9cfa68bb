"""Quantized drafters: which quantization a drafter runs with, whether the device supports it,
and ``draft_lm_head_quantization`` (0.33+), per vLLM release.

Sources per release (generated into ``wizard/data/vllm/<X.Y>/``):

* ``SpeculativeConfig.quantization`` (``vllm/config/speculative.py``): the drafter's
  ``--quantization``; MTP and DSpark drafters live in the target checkpoint and *inherit the
  target's* ``--quantization`` when it is unset (``features.json`` fact
  ``mtp_inherits_target_quantization``); other drafters detect it from their own
  ``quantization_config`` (``ModelConfig._verify_quantization``), and an explicit value that
  differs from the checkpoint's raises "Quantization method specified in the model config (X)
  does not match ... (Y)" unless an override maps it (ModelOpt / GPTQ / AWQ families).
* ``get_min_capability()`` of each quantization config class (``proposers.json``
  ``quantization_min_capability``): ``ModelConfig`` refuses a method below the device's
  compute capability.
* ``features.json`` ``drafter_quantization``: a weight-quantized DFlash drafter fails in the
  fused context-KV precompute (0.28-0.30); a DeepSeek-V4 DSpark drafter always takes the target's
  quantization, whatever its checkpoint says (0.28-0.33).
* ``features.json`` ``drafter_layer_quant``: per drafter architecture, the quantization config its
  module builds the layers with ('draft' = ``get_draft_quant_config``, 'target' =
  ``vllm_config.quant_config``, 'none' = every linear layer ``quant_config=None``). A quantized
  drafter checkpoint of a 'none' architecture cannot load: its packed weights do not fit the
  unquantized parameters (0.24's Gemma 4 MTP / assistant drafters, vllm#46426).
* ``draft_lm_head_quantization`` (0.33, ``features.json`` fact): 'fp8' or 'nvfp4' copy of the
  *target's* lm_head for EAGLE / EAGLE3 / MTP drafters that share it (not Gemma-4 MTP); Model
  Runner V2 only; the drafter must share the target's lm_head and run it in the model dtype.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from packaging.version import Version

from wizard.vllm import releases
from wizard.vllm import methods as M

__all__ = ["QuantVerdict", "check_quantized_drafter", "drafter_quantization"]

# checkpoint quant_method -> the --quantization names vLLM's overrides accept for it
_FAMILIES = [
    {"modelopt", "modelopt_fp4", "modelopt_mxfp8", "modelopt_mixed"},
    {"gptq", "gptq_marlin", "auto_gptq"},
    {"awq", "awq_marlin", "auto_awq"},
    {"mxfp4", "gpt_oss_mxfp4"},
]


#: DSpark drafters that keep their own config (speculative.py): every other architecture is
#: rewritten to the DeepSeek-V4 DSpark model with the target's quantization
_OWN_CONFIG_DSPARK = frozenset({"Qwen3DSparkModel", "Qwen3OmniDSparkModel", "Gemma4DSparkModel", "K3DSparkModel"})


@dataclass(frozen=True)
class QuantVerdict:
    """errors: vLLM refuses (config time or load). warnings: runs but likely not as intended.
    quantization: what the drafter runs with (None = unquantized). certain: False when a
    mismatch might be mapped by one of vLLM's quantization overrides."""

    release: str
    quantization: str | None
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    certain: bool = True


def _family(q: str) -> set[str]:
    return next((f for f in _FAMILIES if q in f), {q})


def drafter_quantization(release: Any, method: str, *, drafter: Any = None, speculative_quantization: str | None = None,
                         target_quantization: str | None = None) -> str | None:
    """The quantization the drafter loads with (see module docstring)."""
    t = releases.load(release, "features.json")
    facts = t.get("facts") or {}
    if speculative_quantization:
        return speculative_quantization
    if M.drafts_from_target(method) and facts.get("mtp_inherits_target_quantization", True):
        return target_quantization or (getattr(drafter, "quant_method", None) if drafter is not None else None)
    return getattr(drafter, "quant_method", None) if drafter is not None else None


def check_quantized_drafter(
    release: Any,
    method: str,
    *,
    drafter: Any = None,
    speculative_quantization: str | None = None,
    target_quantization: str | None = None,
    draft_lm_head_quantization: str | None = None,
    hardware: Any = None,
    runner: str = "v2",
    target: Any = None,
) -> QuantVerdict:
    """Checks for a (possibly) quantized drafter. ``hardware``: :class:`wizard.hardware.Hardware`
    (compute capability for the minimum-capability check); ``runner``: 'v1' / 'v2'; ``target``: the
    target's ModelInfo (a drafter that is not the target checkpoint is checked against
    ``drafter_layer_quant``). Never raises."""
    fkey = releases.nearest_release(release, "features.json")
    ft = releases.load(fkey, "features.json")
    pt = releases.load(release, "proposers.json")
    rel = ft.get("release", fkey)
    facts = ft.get("facts") or {}
    errors: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []
    certain = True
    ckpt = getattr(drafter, "quant_method", None) if drafter is not None else None
    q = drafter_quantization(release, method, drafter=drafter, speculative_quantization=speculative_quantization,
                             target_quantization=target_quantization)
    if M.drafts_from_target(method) and not speculative_quantization and target_quantization:
        notes.append(f"the {method} drafter inherits the target's --quantization {target_quantization}")
    if speculative_quantization and ckpt and speculative_quantization != ckpt:
        if speculative_quantization in _family(ckpt) or ckpt in _family(speculative_quantization):
            certain = False
            notes.append(f"speculative_config.quantization={speculative_quantization} vs checkpoint {ckpt}: "
                         "vLLM's override may map them")
        else:
            errors.append(
                f"Quantization method specified in the model config ({ckpt}) does not match the quantization "
                f"method specified in the `quantization` argument ({speculative_quantization}) "
                "(vllm/config/model.py _verify_quantization, drafter ModelConfig)")
    caps = pt.get("quantization_min_capability") or {}
    sm = getattr(hardware, "sm", None) if hardware is not None else None
    if q and sm is not None and isinstance(caps.get(q), int) and getattr(hardware, "vendor", "nvidia") == "nvidia":
        if sm < caps[q]:
            errors.append(f"the drafter's quantization {q} needs compute capability {caps[q] / 10:.1f}; "
                          f"{getattr(hardware, 'name', 'this GPU')} has {sm / 10:.1f}")
    dq = facts.get("drafter_quantization") or {}
    if method == M.DFLASH and q and dq.get("dflash_fused_kv_ignores_quant"):
        errors.append(
            f"the DFlash drafter loads {q}-quantized weights, but vLLM {rel}'s fused context-KV precompute slices "
            "qkv_proj.weight and calls F.linear without the layer's quant_method: start-up profiling fails "
            "('expected mat1 and mat2 to have the same dtype'; packed 4-bit weights: AttributeError) "
            "(vllm/model_executor/models/qwen3_dflash.py, fixed in 0.31)")
    archs = set(getattr(drafter, "architectures", None) or ()) if drafter is not None else set()
    if method == M.DSPARK and dq.get("dspark_takes_target_quantization") and not archs & _OWN_CONFIG_DSPARK \
            and ckpt and target_quantization and ckpt not in _family(target_quantization):
        warnings.append(
            f"vLLM {rel} builds this DeepSeek-V4-style DSpark drafter with the target's quantization "
            f"({target_quantization}) although its checkpoint is quantized with {ckpt}: its weights are read under the "
            "wrong scheme (load failure, or acceptance collapsing towards 1 token per step) "
            "(vllm/config/speculative.py, draft_model_config.quantization = target_model_config.quantization)")
    layer_err, layer_warn = _layer_quant_findings(fkey, rel, facts, drafter, target, ckpt, target_quantization, method)
    if layer_err:
        errors.append(layer_err)
    if layer_warn and not warnings:  # the DSpark warning above already says it
        warnings.append(layer_warn)
    lm = facts.get("draft_lm_head_quantization")
    if draft_lm_head_quantization is not None:
        if lm is None:
            errors.append(f"speculative_config.draft_lm_head_quantization does not exist in vLLM {rel} (added in 0.33)")
        else:
            if draft_lm_head_quantization not in lm.get("values", []):
                errors.append(f"draft_lm_head_quantization must be one of {lm.get('values')}")
            is_gemma4 = method == M.MTP and getattr(drafter, "model_type", None) == M.GEMMA4_MTP
            accepted = lm.get("accepted_methods")
            if accepted is not None:
                # 0.34+: the speculator config's supported_options (SpeculativeConfig.__post_init__)
                gemma4_refused = is_gemma4 and "Gemma4MTPSpeculatorConfig" in (lm.get("refused_by_configs") or ())
                if method not in accepted or gemma4_refused:
                    errors.append(f"draft_lm_head_quantization is not supported with speculative method {method!r}.")
                elif method == M.DSPARK and lm.get("dspark_architectures") and archs & _OWN_CONFIG_DSPARK:
                    # a self-contained DSpark draft keeps its own architecture (dspark/config.py apply_options)
                    errors.append("draft_lm_head_quantization is only supported by the DeepSeek-V4/V4.1 DSpark "
                                  "drafters")
            elif not M.lm_head_quantizable(method) or is_gemma4:
                errors.append(f"draft_lm_head_quantization is not supported for method {method!r}.")
            if lm.get("v1_unsupported") and runner == "v1":
                errors.append("Model Runner V1 does not support: draft lm_head quantization")
            if lm.get("needs_shared_lm_head") and drafter is not None and getattr(drafter, "has_lm_head", None) is True \
                    and M.is_eagle_head(method):
                warnings.append("the drafter ships its own lm_head; vLLM shares the target's only when the drafter "
                                "has none (or an identical one) -- otherwise draft_lm_head_quantization raises "
                                "'needs a drafter that shares the target lm_head'")
                certain = False
            if draft_lm_head_quantization == "nvfp4" and sm is not None and sm < 75:
                warnings.append("nvfp4 lm_head copy uses the W4A16 kernel; check support on this GPU")
    return QuantVerdict(rel, q, tuple(errors), tuple(warnings), tuple(notes), certain)


def _drafter_arch(drafter: Any, table: dict[str, Any], method: str | None = None) -> str | None:
    """The architecture vLLM builds the drafter as: its own when the registry lists it, else the
    one ``SpeculativeConfig.hf_config_override`` rewrites its model type to (the module named after
    the rewritten model type, e.g. gemma4_assistant -> gemma4_mtp -> Gemma4MTPModel)."""
    archs = list(getattr(drafter, "architectures", None) or ())
    if method == M.DSPARK and not set(archs) & _OWN_CONFIG_DSPARK and "DSparkDraftModel" in table:
        return "DSparkDraftModel"  # speculative.py rewrites every other DSpark drafter to DeepSeek-V4's
    own = next((a for a in archs if a in table), None)
    if own:
        return own
    mt = getattr(drafter, "model_type", None)
    rewritten = (M.MTP_REWRITE_BY_MODEL_TYPE.get(mt) or (mt,))[0] if mt else None
    if not rewritten:
        return None
    return next((a for a, e in sorted(table.items()) if str(e.get("module", "")).endswith(f"/{rewritten}.py")), None)


def _layer_quant_findings(fkey: str, rel: str, facts: dict, drafter: Any, target: Any, ckpt: str | None,
                          target_q: str | None, method: str | None = None) -> tuple[str | None, str | None]:
    """(error, warning) for a quantized drafter checkpoint (not the target's own MTP layers) whose
    architecture the release builds without any quantization config (error: the packed weights
    cannot load) or with the target's (warning when the families differ: its weights are read
    under the wrong scheme)."""
    table = facts.get("drafter_layer_quant") or {}
    if drafter is None or drafter is target or not ckpt or not table:
        return None, None
    arch = _drafter_arch(drafter, table, method)
    entry = table.get(arch) if arch else None
    kind = (entry or {}).get("layer_quant")
    if kind not in ("none", "target"):
        return None, None
    fixed = next((k for k in releases.releases_with("features.json") if Version(k) > Version(fkey)
                  and ((releases.load(k, "features.json").get("facts") or {}).get("drafter_layer_quant") or {})
                  .get(arch, {}).get("layer_quant") == "draft"), None)
    upgrade = f", or upgrade to vLLM >= {fixed} (it builds this drafter with get_draft_quant_config)" if fixed else ""
    if kind == "none":
        return (f"vLLM {rel} builds the {arch} drafter's layers without a quantization config ({entry['module']}: "
                f"quant_config=None, no get_draft_quant_config), but its checkpoint is quantized ({ckpt}): the packed "
                "quantized weights do not fit the unquantized parameters and weight loading fails ('start (N) + length (N) "
                "exceeds dimension size (N)' on tensor-parallel ranks > 0, a shape mismatch at TP 1). Fix: use the "
                "unquantized (BF16) drafter checkpoint" + upgrade), None
    if target_q and ckpt in _family(target_q):
        return None, None
    return None, (f"vLLM {rel} builds the {arch} drafter's layers with the target's quantization config "
                  f"({target_q or 'none'}; {entry['module']} reads vllm_config.quant_config, not get_draft_quant_config), "
                  f"but its checkpoint is quantized with {ckpt}: its weights are read under the wrong scheme (load failure, "
                  "or acceptance collapsing towards 1 token per step). Fix: a drafter checkpoint quantized like the target"
                  + upgrade)
