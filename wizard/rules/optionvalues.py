"""Every `vllm serve` option the user set, as vLLM's config classes receive it, checked against the
release's generated field constraints (shared by SD010, SD011, SD015, SD016 and the cross-field
families SD100-SD199).

    from wizard.rules.optionvalues import option, option_problems
    option(ctx, "max_loras")                 # 4 (from --max-loras 4, a YAML 4 or extra_args '4')
    option_problems(ctx)                     # [OptionProblem(path='max_loras', kind='bound', ...)]

Values come from the modelled ServeConfig fields and ``extra_args`` (command-line text is read
the way vLLM's parser reads it: numbers and booleans from their text, JSON objects of the
config-class options such as ``--compilation-config '{"mode": 4}'`` parsed, dotted keys
``--structured-outputs-config.backend x`` merged into their object). Each value is checked with
:meth:`wizard.vllm.constraints.FieldSpec.problem` against the field of the config class that
receives it in the checked release (``wizard/data/vllm/<X.Y>/constraints.json``); keys of a
config-class object that the class does not have are pydantic's "Unexpected keyword argument".

A config class vLLM does not build for this configuration is not checked: ``LoRAConfig`` without
``--enable-lora`` (and ``max_cpu_loras`` <= 0, which EngineArgs passes as None), ``MultiModalConfig``
for a text-only target (vllm/engine/arg_utils.py ``create_engine_config``; config/model.py
``ModelConfig.__post_init__``). Values other rules explain are left to them: the KV-cache dtype
(SD021), the attention backend (SD024), the speculative config (SD020-SD026), the quantization
method (SD160), values the importer set aside as ill-typed (SD010).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from wizard.config import SERVE_FIELDS, Patch
from wizard.engine.options import parse_text as _parse_text
from wizard.engine.options import truthy
from wizard.vllm.constraints import FieldSpec, engine_arg, field_spec, forbids_extra_keys, required_fields

__all__ = ["OptionProblem", "user_options", "option", "option_problems", "option_path", "set_option_patch",
           "truthy"]

#: top-level options other rules check (value problems reported there, not by the generic rules)
OWNED = {"model": "SD009", "kv_cache_dtype": "SD021", "attention_backend": "SD024", "speculative_config": "SD020",
         "quantization": "SD160"}

def user_options(ctx) -> dict[str, Any]:
    """EngineArgs name -> value for every option the user set (``ctx.view.options``)."""
    return ctx.view.options


def option(ctx, name: str, default: Any = None) -> Any:
    """The value of option ``name`` as vLLM's config class receives it (``ctx.view.option``)."""
    return ctx.view.option(name, default)


def _spellings(ctx, name: str) -> list[str]:
    """The ``extra_args`` keys (heads of dotted keys) the release's parser reads as option
    ``name``: aliases and abbreviations (``gp`` for ``gpu_memory_utilization``)."""
    return [k for k, n in ctx.view.option_names.items() if n == name]


def option_path(ctx, name: str) -> str:
    """The ServeConfig dotted path of a top-level option: the field when modelled, else
    ``extra_args.<name>``; where the user spelled it otherwise (``--gp``), that key."""
    spelled = _spellings(ctx, name)
    if spelled:
        return f"extra_args.{spelled[0]}"
    return name if name in SERVE_FIELDS else f"extra_args.{name}"


def set_option_patch(ctx, name: str, value: Any, description: str) -> Patch:
    """A Patch setting option ``name`` to ``value`` (None: unset), wherever the user wrote it
    (also under an alias or abbreviation, which the patch removes: vLLM's parser would read
    both spellings into one option, the later one winning)."""
    heads = {name, *_spellings(ctx, name)}
    extra = dict(ctx.config.extra_args)
    for k in [k for k in extra if isinstance(k, str) and k.partition(".")[0] in heads]:
        extra.pop(k)
    changed_extra = len(extra) != len(ctx.config.extra_args)
    if name in SERVE_FIELDS:
        field_set = {name: value} if value is not None else {}
        unset = [] if value is not None else [name]
        if changed_extra:
            if extra:
                field_set["extra_args"] = extra
            else:
                unset.append("extra_args")
        return Patch(description=description, set=field_set, unset=unset)
    if value is not None:
        extra[name] = value
    return Patch(description=description, set={"extra_args": extra}) if extra else \
        Patch(description=description, unset=["extra_args"])


@dataclass(frozen=True)
class OptionProblem:
    """A value the release's field constraints reject. ``path``: 'max_loras' or
    'compilation_config.mode' (option, then keys inside its object); ``option``: the top-level
    option; ``kind``: 'type' | 'bound' | 'choice' | 'unknown_key'; ``fix``: the nearest accepted
    value (None: unset it); ``owner``: 'LoRAConfig.max_loras'."""

    path: str
    option: str
    value: Any
    kind: str
    message: str
    fix: Any
    owner: str
    spec: FieldSpec | None = None


def _built(ctx, cls: str, opts: dict[str, Any]) -> bool:
    """Whether vLLM builds config class ``cls`` for this configuration (see the module docstring)."""
    if cls == "LoRAConfig":
        return truthy(opts.get("enable_lora"))
    if cls == "MultiModalConfig":
        return ctx.target is None or bool(ctx.target.is_multimodal)
    if cls == "SpeculativeConfig":
        return False
    return True


#: field kinds for which an explicit JSON ``null`` is refused by pydantic unless ``none`` is also a
#: kind (``--kv-events-config.publisher null`` reads as None: "Input should be 'null' or 'zmq'")
_PLAIN_KINDS = frozenset({"literal", "int", "float", "bool", "str", "enum"})


def _check_object(cls: str, obj: dict, prefix: str, option_name: str, version, out: list, depth: int = 0) -> None:
    for key in required_fields(cls, version):
        if key not in obj:
            out.append(OptionProblem(f"{prefix}.{key}", option_name, None, "missing",
                                     f"{cls} needs '{key}' (pydantic: Field required)", None, f"{cls}.{key}"))
    for key, val in obj.items():
        path = f"{prefix}.{key}"
        spec = field_spec(cls, str(key), version)
        if spec is None:
            if not forbids_extra_keys(cls, version):
                continue  # 0.15's config classes ignore keys they do not declare
            out.append(OptionProblem(path, option_name, val, "unknown_key",
                                     f"{cls} has no field '{key}' (pydantic: Unexpected keyword argument)", None,
                                     f"{cls}.{key}"))
            continue
        nested = [k[6:] for k in spec.kinds if k.startswith("class:")]
        val = _parse_text(val)
        if nested and isinstance(val, dict) and depth < 3:
            _check_object(nested[0], val, path, option_name, version, out, depth + 1)
            continue
        if val is None and ("none" in spec.kinds or not spec.kinds or not set(spec.kinds) <= _PLAIN_KINDS):
            continue  # null where the field takes None (or where the schema cannot tell)
        p = spec.problem(val)
        if p is not None:
            out.append(OptionProblem(path, option_name, val, p.kind, p.message, p.fix, f"{cls}.{key}", spec))


def option_problems(ctx) -> list[OptionProblem]:
    """Every value of :func:`user_options` the release's generated constraints reject (cached)."""
    if ctx.option_problems_memo is not None:
        return ctx.option_problems_memo
    opts = user_options(ctx)
    out: list[OptionProblem] = []
    invalid = ctx.config.invalid_values
    for name, value in opts.items():
        if name in OWNED or name in invalid or value is None:
            continue
        spec = engine_arg(name, ctx.version)
        if spec is None:
            continue
        # a config class vLLM does not build checks nothing, except MultiModalConfig's options:
        # ModelConfig takes each as a typed InitVar (vllm/config/model.py, 0.28-0.33), which
        # pydantic validates for every model, multimodal or not; their bounds are MultiModalConfig's
        types_only = False
        if spec.config_class and not _built(ctx, spec.config_class, opts):
            if spec.config_class != "MultiModalConfig":
                continue
            types_only = True
        if name == "max_cpu_loras" and isinstance(spec._number(value, True), int) and spec._number(value, True) <= 0:
            continue  # EngineArgs passes max_cpu_loras <= 0 as None (arg_utils.py create_engine_config)
        nested = [k[6:] for k in spec.kinds if k.startswith("class:")]
        if nested and isinstance(value, dict) and not types_only:
            _check_object(nested[0], value, name, name, ctx.version, out)
            continue
        p = spec.problem(value)
        if p is not None and not (types_only and p.kind != "type"):
            out.append(OptionProblem(name, name, value, p.kind, p.message, p.fix,
                                     f"{spec.config_class or 'EngineArgs'}.{name}", spec))
    ctx.option_problems_memo = out
    return out


def fix_patch(ctx, prob: OptionProblem, value: Any, description: str) -> Patch:
    """A Patch giving ``prob.path`` the value ``value`` (None: remove that key / unset the option),
    rewriting the option's whole object when the problem is inside one."""
    if prob.path == prob.option:
        return set_option_patch(ctx, prob.option, value, description)
    obj = json.loads(json.dumps(user_options(ctx).get(prob.option) or {}, default=str))
    cur = obj
    keys = prob.path.split(".")[1:]
    for k in keys[:-1]:
        cur = cur.setdefault(k, {}) if isinstance(cur, dict) else {}
    if isinstance(cur, dict):
        if value is None:
            cur.pop(keys[-1], None)
        else:
            cur[keys[-1]] = value
    return set_option_patch(ctx, prob.option, obj, description)
