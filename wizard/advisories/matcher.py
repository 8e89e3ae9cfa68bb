"""The advisory condition language and its evaluation on a resolved CheckContext.

A condition is a YAML mapping. Composition nodes::

    all: [COND, ...]          every one holds
    any: [COND, ...]          at least one holds
    not: COND                 it does not hold

A leaf names a *field* and a *predicate*; a mapping with several fields is their ``all``::

    method: {in: [eagle, eagle3]}             # bare list = in, bare scalar = eq
    kv_cache_dtype: {startswith: fp8}
    target.model_type: {in: [qwen3_next]}
    spec.num_speculative_tokens: {gt: 1}
    options.enable_prefix_caching: {eq: true, default: true}   # default: vLLM's value when unset
    options.kv_transfer_config.kv_connector: SimpleCPUOffloadConnector
    hardware.platform: rocm

Predicate operators: ``eq ne in not_in gt ge lt le startswith endswith contains regex set``
(``set: true`` = the value is known/given), ``is`` / ``is_not`` (``method`` only: a named method
family of :mod:`wizard.vllm.methods`, e.g. ``method: {is: use_eagle}``, ``{is_not: is_lookup}``;
a list names several families that must all hold / none hold), and ``eq_field ne_field gt_field ge_field lt_field
le_field`` whose operand is another field (``drafter.hidden_size: {ne_field: target.hidden_size}``).
Several operators in one predicate must all hold.
``default`` (not an operator) is the value assumed when the field is unset; state it only where
vLLM's own default is known for the affected releases.

Fields (the RESOLVED configuration, as vLLM sees it):

==========================  ====================================================================
``method``                  ``ctx.method`` (aliases, inference and path detection applied)
``k``                       ``ctx.k`` (num_speculative_tokens as vLLM resolves it)
``speculating``             true when a speculative method resolves
``kv_cache_dtype``          ``ctx.target_kv_dtype()`` (checkpoint-forced fp8 under auto applied)
``draft_kv_cache_dtype``    ``ctx.drafter_kv_dtype()`` (inherits the target's)
``runner``                  ``v1``/``v2`` from VLLM_USE_V2_MODEL_RUNNER; ``v1`` before 0.22
                            (the V2 runner was opt-in); ``v2`` from 0.34 (V1 removed); unknown
                            otherwise
``model_runner``            ``v1``/``v2``: the runner the speculative method runs on as the
                            release itself picks it (``wizard.mechanisms.apply.route``: the
                            environment variable when set, else ``use_v2_model_runner`` of the
                            release -- V1 before 0.22, V2 for default-V2 targets without a V2
                            blocker, V1 on CPU; CUDA assumed when no hardware is given);
                            unknown without speculation, when the method is refused earlier,
                            or where the generated table left the default open (0.24-0.27)
``model_dtype``             the dtype the target (and every drafter: vLLM gives the draft ModelConfig
                            the target's) runs in: --dtype, else the checkpoint's / the GPU's
                            (``ctx.view.model_dtype``); unknown when neither is known
``prefix_caching``          whether vLLM caches prefixes: --enable-prefix-caching, else the
                            release's default for the target (hybrid targets: off before 0.28;
                            ``ctx.view.prefix_caching``)
``mamba_cache_mode``        the Mamba cache mode vLLM runs for a target with recurrent layers
                            ('none' / 'align' / 'all': 'align' whenever prefix caching is on and
                            the mode is 'none', 0.15+; ``ctx.view.mamba_cache_mode``); unknown
                            for other targets
``spec.NAME``               a speculative_config key as given (None when unset)
``options.NAME[.SUB]``      a `vllm serve` option as given (ServeConfig field or kept verbatim in
                            extra_args; JSON values such as --kv-transfer-config are looked into);
                            tensor/pipeline/data_parallel_size default to 1, enforce_eager to false
``env.NAME``                the server environment
``target.X`` / ``drafter.X``  a ModelInfo field (model_type, architectures, quant_method, use_mla,
                            num_mamba_layers, is_multimodal, ...); ``config.DOTTED`` reads
                            config.json (text_config as fallback); derived: ``architecture``
                            (the first), ``is_hybrid`` (recurrent layers), ``has_sliding_window``,
                            ``is_moe`` (an expert count in config.json)
``hardware.X``              ``platform`` (cuda/rocm/cpu), ``vendor``, ``sm`` (e.g. 90), ``name``,
                            ``count``, ``memory_gib``
``parallel.tp|pp|dp``       tensor / pipeline / data parallel sizes (default 1)
==========================  ====================================================================

Evaluation is three-valued: a field that is unknown (no model facts, no hardware) makes its leaf
*unknown*; ``all``/``any``/``not`` follow Kleene logic and an advisory fires only when its
condition is known to hold. So an advisory never fires on a guess.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Callable

from wizard.mechanisms import apply as MA
from wizard.vllm import methods as M

from wizard.models.info import ModelInfo
from wizard.models.config_json import layer_kind

if TYPE_CHECKING:  # pragma: no cover
    from wizard.context import CheckContext

__all__ = ["validate_condition", "evaluate", "resolve_field", "OPERATORS", "ROOTS", "METHOD_PREDICATES"]

OPERATORS = ("eq", "ne", "in", "not_in", "gt", "ge", "lt", "le", "startswith", "endswith", "contains", "regex", "set",
             "is", "is_not", "eq_field", "ne_field", "gt_field", "ge_field", "lt_field", "le_field")
#: the method families an advisory may name (``method: {is: NAME}``): vLLM's own predicates, as
#: mirrored in wizard/vllm/methods.py -- so an advisory follows a family when vLLM widens it
METHOD_PREDICATES: dict[str, Callable[[str | None], bool]] = {
    name: getattr(M, name) for name in (
        "use_eagle", "uses_draft_kv_cache", "uses_aux_hidden_states", "is_noncausal", "is_mtp", "use_ngram",
        "is_lookup", "needs_drafter_checkpoint", "drafts_from_target", "has_no_model", "keeps_method",
        "async_scheduling_ok", "v2_runner_ok", "lm_head_quantizable", "is_eagle_head")
}
_FIELD_OPS = {"eq_field": "eq", "ne_field": "ne", "gt_field": "gt", "ge_field": "ge", "lt_field": "lt", "le_field": "le"}
ROOTS = ("method", "k", "speculating", "kv_cache_dtype", "draft_kv_cache_dtype", "runner", "model_runner",
         "model_dtype", "prefix_caching", "mamba_cache_mode", "spec", "options", "env", "target", "drafter", "hardware", "parallel")
_LEAF_ROOTS = ("method", "k", "speculating", "kv_cache_dtype", "draft_kv_cache_dtype", "runner", "model_runner",
               "model_dtype", "prefix_caching", "mamba_cache_mode")
_PATH_ROOTS = ("spec", "options", "env", "target", "drafter", "hardware", "parallel")
_OPTION_DEFAULTS: dict[str, Any] = {  # vllm/engine/arg_utils.py EngineArgs defaults (every release)
    "tensor_parallel_size": 1,
    "pipeline_parallel_size": 1,
    "data_parallel_size": 1,
    "enforce_eager": False,
}
_HARDWARE = ("platform", "vendor", "sm", "name", "count", "memory_gib")
_PARALLEL = ("tp", "pp", "dp")


class ConditionError(ValueError):
    """A malformed condition; the message names the offending part."""


# ---- validation ---------------------------------------------------------------------------

def validate_condition(node: Any, where: str = "match") -> None:
    """Check the structure of a condition (fields, operators, operand types).

    Raises:
        ConditionError: the message names the path inside the condition.
    """
    if not isinstance(node, dict) or not node:
        raise ConditionError(f"{where}: a condition is a non-empty mapping")
    for key, value in node.items():
        if key in ("all", "any"):
            if not isinstance(value, list) or not value:
                raise ConditionError(f"{where}.{key}: needs a non-empty list of conditions")
            for i, sub in enumerate(value):
                validate_condition(sub, f"{where}.{key}[{i}]")
        elif key == "not":
            validate_condition(value, f"{where}.not")
        else:
            _validate_field(key, where)
            _validate_predicate(value, f"{where}.{key}")
            if isinstance(value, dict) and ("is" in value or "is_not" in value) and key != "method":
                raise ConditionError(f"{where}.{key}: 'is'/'is_not' name method families and apply to 'method' only")


def _validate_field(path: str, where: str) -> None:
    parts = path.split(".")
    root = parts[0]
    if root not in ROOTS:
        raise ConditionError(f"{where}: unknown field {path!r}; fields start with one of {', '.join(ROOTS)}")
    if root in _LEAF_ROOTS and len(parts) != 1:
        raise ConditionError(f"{where}: {root!r} has no sub-fields ({path!r})")
    if root in _PATH_ROOTS and (len(parts) < 2 or not all(parts[1:])):
        raise ConditionError(f"{where}: {path!r} needs a sub-field, e.g. {root}.NAME")
    if root == "hardware" and parts[1] not in _HARDWARE:
        raise ConditionError(f"{where}: hardware fields are {', '.join(_HARDWARE)} (got {path!r})")
    if root == "parallel" and parts[1] not in _PARALLEL:
        raise ConditionError(f"{where}: parallel fields are {', '.join(_PARALLEL)} (got {path!r})")
    if root in ("target", "drafter") and parts[1] != "config" and len(parts) != 2:
        raise ConditionError(f"{where}: {path!r}: only {root}.config.DOTTED may be nested")
    if root in ("target", "drafter") and parts[1] not in ("config", *_DERIVED_MODEL):
        if parts[1] not in ModelInfo.model_fields:
            raise ConditionError(f"{where}: {path!r}: ModelInfo has no field {parts[1]!r}")


def _validate_predicate(pred: Any, where: str) -> None:
    if isinstance(pred, list):
        return
    if not isinstance(pred, dict):
        if isinstance(pred, (str, int, float, bool)) or pred is None:
            return
        raise ConditionError(f"{where}: a predicate is a scalar, a list or a mapping of operators")
    ops = [k for k in pred if k != "default"]
    if not ops:
        raise ConditionError(f"{where}: no operator (one of {', '.join(OPERATORS)})")
    for op in ops:
        if op not in OPERATORS:
            raise ConditionError(f"{where}: unknown operator {op!r}; operators: {', '.join(OPERATORS)}")
        x = pred[op]
        if op in ("in", "not_in") and not isinstance(x, list):
            raise ConditionError(f"{where}.{op}: needs a list")
        if op in ("gt", "ge", "lt", "le") and (isinstance(x, bool) or not isinstance(x, (int, float))):
            raise ConditionError(f"{where}.{op}: needs a number")
        if op in ("startswith", "endswith") and not (isinstance(x, str) or (isinstance(x, list) and all(isinstance(s, str) for s in x))):
            raise ConditionError(f"{where}.{op}: needs a string or a list of strings")
        if op == "regex":
            try:
                re.compile(str(x))
            except re.error as err:
                raise ConditionError(f"{where}.regex: {err}") from None
        if op == "set" and not isinstance(x, bool):
            raise ConditionError(f"{where}.set: needs true or false")
        if op in ("is", "is_not"):
            names = x if isinstance(x, list) else [x]
            bad = [n for n in names if n not in METHOD_PREDICATES]
            if not names or bad:
                raise ConditionError(f"{where}.{op}: unknown method family {bad or names}; "
                                     f"one of {', '.join(METHOD_PREDICATES)}")
        if op in _FIELD_OPS:
            if not isinstance(x, str):
                raise ConditionError(f"{where}.{op}: needs a field name")
            _validate_field(x, f"{where}.{op}")


# ---- field resolution ---------------------------------------------------------------------

_DERIVED_MODEL = ("architecture", "is_hybrid", "has_sliding_window", "is_moe")


def _json_value(v: Any) -> Any:
    if isinstance(v, str) and v.strip()[:1] in "{[":
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def _dig(value: Any, parts: list[str]) -> Any:
    cur = value
    for p in parts:
        cur = _json_value(cur)
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        else:
            return None
    return cur


def _model_field(info, parts: list[str]) -> Any:
    if info is None:
        return None
    name = parts[0]
    if name == "config":
        v = _dig(info.raw_config or {}, parts[1:])
        return _dig(info.text_config, parts[1:]) if v is None else v  # text_config as fallback
    if name == "architecture":
        return info.architectures[0] if info.architectures else None
    if name == "is_hybrid":
        return bool(info.num_mamba_layers) or bool(info.layer_types and any(
            layer_kind(t) == "state" for t in info.layer_types))
    if name == "has_sliding_window":
        return bool(info.sliding_window) or bool(info.layer_types and "sliding_attention" in info.layer_types)
    if name == "is_moe":
        return bool(getattr(info, "num_experts", None))  # > 1 routed experts (wizard.models.config_json)
    return getattr(info, name, None)


def _runner(ctx: "CheckContext") -> str | None:
    if ctx.version.at_least("0.34"):  # Model Runner V1 removed (0.34 refuses VLLM_USE_V2_MODEL_RUNNER != 1)
        return "v2"
    env = (ctx.config.env or {}).get("VLLM_USE_V2_MODEL_RUNNER")
    if env is not None:
        e = str(env).strip().lower()
        if e in ("1", "true"):
            return "v2"
        if e in ("0", "false"):
            return "v1"
    if not ctx.version.at_least("0.22"):  # VLLM_USE_V2_MODEL_RUNNER defaulted to False (vllm/envs.py <= 0.21)
        return "v1"
    return None


def _hardware(ctx: "CheckContext", name: str) -> Any:
    hw = ctx.hardware
    if hw is None:
        return None
    if name == "platform":
        return MA.platform(ctx)
    if name == "memory_gib":
        return hw.memory_bytes / (1 << 30)
    return getattr(hw, name, None)


def resolve_field(ctx: "CheckContext", path: str) -> Any:
    """Value of a condition field on ``ctx`` (None = unknown / not given). See the module table."""
    parts = path.split(".")
    root, rest = parts[0], parts[1:]
    if root == "method":
        return ctx.method
    if root == "k":
        return ctx.k
    if root == "speculating":
        return ctx.spec is not None and ctx.method is not None
    if root == "kv_cache_dtype":
        return ctx.target_kv_dtype()
    if root == "draft_kv_cache_dtype":
        return ctx.drafter_kv_dtype() if ctx.spec is not None else None
    if root == "runner":
        return _runner(ctx)
    if root == "model_runner":
        r = MA.route(ctx)
        return r.runner if r is not None and r.runner_known else None
    if root == "model_dtype":
        return ctx.view.model_dtype
    if root == "prefix_caching":
        return ctx.view.prefix_caching
    if root == "mamba_cache_mode":
        return ctx.view.mamba_cache_mode
    if root == "spec":
        spec = ctx.spec
        if spec is None:
            return None
        v = getattr(spec, rest[0], None)
        if v is None:
            v = (spec.model_extra or {}).get(rest[0])
        return _dig(v, rest[1:]) if len(rest) > 1 else v
    if root == "options":
        cfg = ctx.config
        name = rest[0]
        if name in type(cfg).model_fields and name not in ("extra_args", "env", "invalid_values", "import_notes"):
            v = getattr(cfg, name)
        else:
            v = cfg.extra_args.get(name, cfg.extra_args.get(name.replace("_", "-")))
        if v is None:
            v = _OPTION_DEFAULTS.get(name)
        return _dig(v, rest[1:]) if len(rest) > 1 else _json_value(v)
    if root == "env":
        return (ctx.config.env or {}).get(rest[0])
    if root == "target":
        return _model_field(ctx.target, rest)
    if root == "drafter":
        return _model_field(ctx.drafter, rest) if ctx.spec is not None else None
    if root == "hardware":
        return _hardware(ctx, rest[0])
    if root == "parallel":
        if rest[0] == "tp":
            return ctx.tp
        if rest[0] == "pp":
            return ctx.pp
        return ctx.config.data_parallel_size or 1
    return None  # pragma: no cover - validate_condition rejects other roots


# ---- evaluation (Kleene three-valued logic: True / False / None = unknown) -----------------

def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v))
    except (TypeError, ValueError):
        return None


def _apply(op: str, v: Any, x: Any) -> bool | None:
    if op == "set":
        return (v is not None) == bool(x)
    if v is None:
        return None
    if op == "eq":
        return v == x
    if op == "ne":
        return v != x
    if op in ("in", "not_in"):
        hit = any(e in x for e in v) if isinstance(v, list) else v in x
        return hit if op == "in" else not hit
    if op in ("gt", "ge", "lt", "le"):
        a = _num(v)
        if a is None:
            return None
        return {"gt": a > x, "ge": a >= x, "lt": a < x, "le": a <= x}[op]
    if op in ("startswith", "endswith"):
        prefixes = tuple(x) if isinstance(x, list) else (x,)
        s = str(v)
        return s.startswith(prefixes) if op == "startswith" else s.endswith(prefixes)
    if op == "contains":
        return x in v if isinstance(v, (list, str, dict)) else None
    if op == "regex":
        return re.search(str(x), str(v)) is not None
    if op in ("is", "is_not"):
        held = [METHOD_PREDICATES[n](str(v)) for n in (x if isinstance(x, list) else [x])]
        return all(held) if op == "is" else not any(held)
    return None  # pragma: no cover


def _predicate(value: Any, pred: Any, ctx: "CheckContext | None" = None) -> bool | None:
    if isinstance(pred, list):
        pred = {"in": pred}
    elif not isinstance(pred, dict):
        pred = {"eq": pred}
    if value is None and "default" in pred:
        value = pred["default"]
    result: bool | None = True
    for op, x in pred.items():
        if op == "default":
            continue
        if op in _FIELD_OPS:
            other = resolve_field(ctx, x) if ctx is not None else None
            r = None if other is None else _apply(_FIELD_OPS[op], value, _num(other) if op != "eq_field" and op != "ne_field" else other)
        else:
            r = _apply(op, value, x)
        if r is False:
            return False
        if r is None:
            result = None
    return result


def _all(results) -> bool | None:
    out: bool | None = True
    for r in results:
        if r is False:
            return False
        if r is None:
            out = None
    return out


def _any(results) -> bool | None:
    out: bool | None = False
    for r in results:
        if r is True:
            return True
        if r is None:
            out = None
    return out


def evaluate(node: dict[str, Any], ctx: "CheckContext") -> bool | None:
    """Three-valued truth of a (validated) condition on ``ctx``: True, False or None (unknown)."""
    results = []
    for key, value in node.items():
        if key == "all":
            results.append(_all(evaluate(sub, ctx) for sub in value))
        elif key == "any":
            results.append(_any(evaluate(sub, ctx) for sub in value))
        elif key == "not":
            r = evaluate(value, ctx)
            results.append(None if r is None else not r)
        else:
            results.append(_predicate(resolve_field(ctx, key), value, ctx))
    return _all(results)
