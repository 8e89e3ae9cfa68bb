"""Dump the field constraints and release tables of the vLLM installed in THIS interpreter.

    <venv>/bin/python scripts/dump_vllm_constraints.py          # wizard/data/vllm/<X.Y>/{constraints,tables}.json
    <venv>/bin/python scripts/dump_vllm_constraints.py --out-dir /tmp/x
    python scripts/gen_vllm_data.py                             # every release (all dumps)

Runs INSIDE the release's own venv (imports vLLM, never ``wizard``).

``constraints.json`` — every config class behind `vllm serve`: the classes reachable from
``VllmConfig``'s fields (recursively through their dataclass-typed fields) plus the classes
``EngineArgs.add_cli_args`` names as argument groups. For each init field of each class:

* ``type``     the annotation as text (``int | None``, ``Literal['auto', 'fp8'] | str`` ...);
* ``kinds``    the plain kinds the annotation accepts (``int``, ``float``, ``bool``, ``str``,
  ``none``, ``dict``, ``list``, ``literal``, ``enum``, ``class:<Name>``, ``any`` ...);
* ``literals`` every ``Literal`` value inside the annotation (in order), ``enum`` the members
  of an ``Enum`` type (name -> value); ``open`` True when a plain ``str`` is accepted beside
  the literals (e.g. 0.33's ``CacheDType | str``, checked by a validator instead);
* ``bounds``   pydantic/annotated-types constraints ``ge``/``gt``/``le``/``lt``/``multiple_of``
  /``min_length``/``max_length`` (from ``Field(...)`` and from ``Annotated`` inside unions);
* ``default``  the default value (JSON), ``{"factory": name}`` or ``"<required>"``;
* ``validators`` the pydantic field validators that run on the field (function names).

Plus ``engine_args``: every ``EngineArgs`` field with its type text, default and the config
class it belongs to (the parser group). ``source`` gives each class's module file (relative to
``site-packages/vllm``) and line.

``tables.json`` — the release tables the rules need (what ``wizard/vllm/versions.py`` used to copy
by hand): every module-level ``Literal`` alias in ``vllm/config/*.py`` (``SpeculativeMethod``,
``MTPModelTypes``, ``CacheDType``, ``ModelDType`` ...) by name, ``speculative_methods``,
``mtp_model_types``, ``cache_dtypes``, ``speculative_config_fields`` (init fields of
``SpeculativeConfig``), ``use_eagle_methods`` (the methods for which vLLM's own
``SpeculativeConfig.use_eagle`` answers True, evaluated per method), ``quantization_methods``
(``QUANTIZATION_METHODS``) and the deprecated ones.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import importlib
import inspect
import json
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dump_vllm_serve_options import (  # noqa: E402
    build_serve_parser,
    default_out,
    installed_version,
    jsonable,
    patch_cpu_platform,
    release_key,
)

GENERATOR = "scripts/dump_vllm_constraints.py"
_BOUND_ATTRS = ("ge", "gt", "le", "lt", "multiple_of", "min_length", "max_length")


def _type_text(t: Any) -> str:
    if isinstance(t, str):
        return t
    if isinstance(t, type) and not typing.get_args(t):
        return t.__name__
    s = repr(t).replace("typing.", "")
    return re.sub(r" at 0x[0-9a-fA-F]+", "", s)  # no memory addresses: the file must be reproducible


def _walk(t: Any, out: dict, depth: int = 0) -> None:
    """Collect kinds / literals / enum members / Annotated metadata of annotation ``t``."""
    if depth > 12:
        return
    origin = typing.get_origin(t)
    if origin is typing.Annotated:
        args = typing.get_args(t)
        _walk(args[0], out, depth + 1)
        for meta in args[1:]:
            _bounds_from(meta, out["bounds"])
        return
    if origin is typing.Literal:
        out["kinds"].add("literal")
        for v in typing.get_args(t):
            if isinstance(v, enum.Enum):
                v = v.value
            if v not in out["literals"]:
                out["literals"].append(v)
        return
    if origin in (typing.Union, types.UnionType):
        for a in typing.get_args(t):
            _walk(a, out, depth + 1)
        return
    if t is type(None) or t is None:
        out["kinds"].add("none")
        return
    if t is typing.Any:
        out["kinds"].add("any")
        return
    if origin is not None:  # list[int], dict[str, Any], Callable[...]
        name = getattr(origin, "__name__", str(origin))
        out["kinds"].add({"list": "list", "dict": "dict", "tuple": "list", "set": "list"}.get(name, name))
        return
    if isinstance(t, type):
        if issubclass(t, enum.Enum):
            out["kinds"].add("enum")
            out["enum"].update({m.name: jsonable(m.value) for m in t})
            return
        if t is bool:
            out["kinds"].add("bool")
        elif t is int:
            out["kinds"].add("int")
        elif t is float:
            out["kinds"].add("float")
        elif t is str:
            out["kinds"].add("str")
        elif t in (dict,):
            out["kinds"].add("dict")
        elif t in (list, tuple, set):
            out["kinds"].add("list")
        elif dataclasses.is_dataclass(t):
            out["kinds"].add("class:" + t.__name__)
            out["classes"].append(t)
        else:
            out["kinds"].add("type:" + t.__name__)
        return
    if isinstance(t, typing.TypeVar):
        out["kinds"].add("any")
        return
    if isinstance(t, str):
        out["kinds"].add("unresolved:" + t)
        return
    out["kinds"].add("other:" + type(t).__name__)


def _bounds_from(meta: Any, bounds: dict) -> None:
    for attr in _BOUND_ATTRS:
        v = getattr(meta, attr, None)
        if v is not None and not callable(v):
            bounds[attr] = jsonable(v)
    for sub in getattr(meta, "metadata", None) or ():  # FieldInfo inside Annotated
        _bounds_from(sub, bounds)


def _default(f: Any, finfo: Any) -> Any:
    if finfo is not None:
        from pydantic_core import PydanticUndefined

        if finfo.default_factory is not None:
            fac = finfo.default_factory
            return {"factory": getattr(fac, "__qualname__", None) or repr(fac)}
        if finfo.default is not PydanticUndefined:
            return jsonable(finfo.default)
    if f is not None:
        if f.default is not dataclasses.MISSING:
            return jsonable(f.default)
        if f.default_factory is not dataclasses.MISSING:
            fac = f.default_factory
            return {"factory": getattr(fac, "__qualname__", None) or repr(fac)}
    return "<required>"


def _field_validators(cls: type) -> dict[str, list[str]]:
    """field name -> pydantic field-validator function names."""
    out: dict[str, list[str]] = {}
    dec = getattr(cls, "__pydantic_decorators__", None)
    if dec is None:
        return out
    for name, d in getattr(dec, "field_validators", {}).items():
        for fld in getattr(d.info, "fields", ()):
            out.setdefault(fld, []).append(name)
    return out


def _source(obj: Any) -> dict[str, Any]:
    try:
        f = inspect.getsourcefile(obj) or ""
        line = inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return {}
    if "/vllm/" in f:
        f = f.split("/vllm/", 1)[1]
    return {"file": f, "line": line}


def describe_class(cls: type, hints_ns: dict | None = None) -> tuple[dict, list[type]]:
    """(class entry, dataclass types found in its fields)."""
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:  # noqa: BLE001 - forward references vLLM itself never resolves
        hints = {}
    pfields = getattr(cls, "__pydantic_fields__", None) or {}
    dfields = {f.name: f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {}
    validators = _field_validators(cls)
    fields: dict[str, dict] = {}
    found: list[type] = []
    for name, f in dfields.items():
        if not f.init:
            continue
        finfo = pfields.get(name)
        ann = hints.get(name, finfo.annotation if finfo is not None else f.type)
        out = {"kinds": set(), "literals": [], "enum": {}, "bounds": {}, "classes": []}
        _walk(ann, out)
        if finfo is not None:
            for meta in finfo.metadata:
                _bounds_from(meta, out["bounds"])
        found.extend(out["classes"])
        entry: dict[str, Any] = {"type": _type_text(ann), "kinds": sorted(out["kinds"])}
        if out["literals"]:
            entry["literals"] = [jsonable(v) for v in out["literals"]]
            entry["open"] = "str" in out["kinds"]
        if out["enum"]:
            entry["enum"] = out["enum"]
        if out["bounds"]:
            entry["bounds"] = out["bounds"]
        entry["default"] = _default(f, finfo)
        if name in validators:
            entry["validators"] = validators[name]
        fields[name] = entry
    # what an undeclared key does: vLLM's @config gives extra="forbid" from 0.16; 0.15's ignore it
    extra = (getattr(cls, "__pydantic_config__", None) or {}).get("extra") if pfields else None
    entry_out = {"module": cls.__module__, **_source(cls), "pydantic": bool(pfields), "extra": extra,
                 "fields": fields}
    # ClassVar defaults a field's None resolves to (0.34 CacheConfig.DEFAULT_GPU_MEMORY_UTILIZATION
    # = 0.92, read by resolved_gpu_memory_utilization); only written where a class has one, so
    # the tables of releases without them are unchanged
    class_defaults = {k: v for k, v in vars(cls).items() if k.startswith("DEFAULT_") and k.isupper()
                      and isinstance(v, (int, float, str, bool)) and not k.startswith("__")}
    if class_defaults:
        entry_out["class_defaults"] = dict(sorted(class_defaults.items()))
    return entry_out, found


def config_classes() -> dict[str, type]:
    """Every config class behind `vllm serve`: reachable from VllmConfig + the parser groups."""
    from vllm.config import VllmConfig

    import vllm.config as vc

    seen: dict[str, type] = {}
    todo: list[type] = [VllmConfig]
    for name in dir(vc):
        obj = getattr(vc, name, None)
        if isinstance(obj, type) and name.endswith("Config") and dataclasses.is_dataclass(obj):
            todo.append(obj)
    while todo:
        cls = todo.pop()
        if cls.__name__ in seen:
            continue
        seen[cls.__name__] = cls
        _, found = describe_class(cls)
        todo.extend(found)
    return seen


def dump_constraints() -> dict:
    dist, version = installed_version()
    platform = patch_cpu_platform()
    from vllm.engine.arg_utils import EngineArgs

    classes = config_classes()
    out_classes = {}
    for name in sorted(classes):
        out_classes[name], _ = describe_class(classes[name])
    serve = build_serve_parser()
    group_of = {}
    for g in serve._action_groups:
        for a in g._group_actions:
            group_of[a.dest] = g.title or ""
    ea, _ = describe_class(EngineArgs)
    engine_args = {}
    for name, entry in ea["fields"].items():
        group = group_of.get(name, "")
        cls = group if group in out_classes else None
        if cls is None:  # not on the command line under a class group: find the unique owner
            owners = [c for c, e in out_classes.items() if name in e["fields"] and c != "VllmConfig"]
            cls = owners[0] if len(owners) == 1 else None
        engine_args[name] = {**entry, "config_class": cls, "cli": name in group_of}
    return {
        "_comment": (f"Field constraints of the config classes behind `vllm serve`, {dist} {version}. Generated by "
                     f"{GENERATOR} inside that release's venv; do not edit (python scripts/gen_vllm_data.py)."),
        "generator": GENERATOR,
        "distribution": dist,
        "vllm_version": version,
        "release": release_key(version),
        "platform": platform,
        "classes": out_classes,
        "engine_args": engine_args,
    }


def _literal_aliases() -> dict[str, list]:
    """Every module-level Literal alias in vllm/config/*.py, by name (first definition wins)."""
    import pkgutil

    import vllm.config as vc

    out: dict[str, list] = {}
    for m in sorted(pkgutil.iter_modules(vc.__path__), key=lambda m: m.name):
        try:
            mod = importlib.import_module(f"vllm.config.{m.name}")
        except Exception:  # noqa: BLE001
            continue
        for name, obj in vars(mod).items():
            if name.startswith("_") or name in out:
                continue
            acc = {"kinds": set(), "literals": [], "enum": {}, "bounds": {}, "classes": []}
            origin = typing.get_origin(obj)
            if origin is typing.Literal or (origin in (typing.Union, types.UnionType)
                                            and all(typing.get_origin(a) is typing.Literal for a in typing.get_args(obj))):
                _walk(obj, acc)
                out[name] = [jsonable(v) for v in acc["literals"]]
    return out


def dump_tables() -> dict:
    dist, version = installed_version()
    patch_cpu_platform()
    from vllm.config import CacheConfig, SpeculativeConfig

    aliases = _literal_aliases()
    spec, _ = describe_class(SpeculativeConfig)
    cache, _ = describe_class(CacheConfig)
    methods = spec["fields"]["method"].get("literals", [])
    use_eagle = []
    for m in methods:
        stub = types.SimpleNamespace(method=m)
        try:
            if SpeculativeConfig.use_eagle(stub):
                use_eagle.append(m)
        except Exception:  # noqa: BLE001 - a predicate reading more than the method
            pass
    cache_dtypes = cache["fields"]["cache_dtype"].get("literals", [])
    try:
        from vllm.config import cache as cache_mod

        kv_list = list(getattr(cache_mod, "KV_CACHE_DTYPES", []) or [])
    except Exception:  # noqa: BLE001
        kv_list = []
    try:
        from vllm.model_executor.layers import quantization as q

        quant = list(getattr(q, "QUANTIZATION_METHODS", []))
        deprecated_quant = list(getattr(q, "DEPRECATED_QUANTIZATION_METHODS", []))
    except Exception:  # noqa: BLE001
        quant, deprecated_quant = [], []
    return {
        "_comment": (f"Release tables of {dist} {version} (what wizard/vllm/versions.py serves). Generated by {GENERATOR} "
                     "inside that release's venv; do not edit (python scripts/gen_vllm_data.py)."),
        "generator": GENERATOR,
        "distribution": dist,
        "vllm_version": version,
        "release": release_key(version),
        "speculative_methods": methods,
        "mtp_model_types": aliases.get("MTPModelTypes", []),
        "cache_dtypes": cache_dtypes or kv_list,
        "cache_dtypes_open": bool(cache["fields"]["cache_dtype"].get("open")),
        "kv_cache_dtypes_list": kv_list,
        "speculative_config_fields": list(spec["fields"]),
        "use_eagle_methods": use_eagle,
        "quantization_methods": quant,
        "deprecated_quantization_methods": deprecated_quant,
        "literal_aliases": aliases,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", help="output folder (default: wizard/data/vllm/<X.Y>/)")
    args = ap.parse_args(argv)
    for name, fn in (("constraints.json", dump_constraints), ("tables.json", dump_tables)):
        data = fn()
        out = Path(args.out_dir) / name if args.out_dir else default_out(name, data["vllm_version"])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {out} ({data['distribution']} {data['vllm_version']})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
