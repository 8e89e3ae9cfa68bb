"""Fact: the options the user set, as vLLM's config classes receive them (``view.options``).

EngineArgs name -> value for every option the user set (modelled ServeConfig fields and
``extra_args``; not ``speculative_config``, ``env``, import bookkeeping), JSON text parsed the
way vLLM's parser reads config-class options, dotted keys (``--compilation-config.mode 3``)
merged into their object. :func:`coerced` reads one value with the release's field type
(``wizard/data/vllm/<X.Y>/constraints.json``).
"""

from __future__ import annotations

import json
from typing import Any

from wizard.config import SERVE_FIELDS, ServeConfig
from wizard.vllm.constraints import engine_arg

__all__ = ["user_options", "coerced", "truthy"]

_TRUE = frozenset({"true", "1", "yes", "on", "t", "y"})


def truthy(v: Any) -> bool:
    """An option value read as a boolean the way vLLM's parser and pydantic do ('true', 1, True)."""
    if isinstance(v, str):
        return v.strip().lower() in _TRUE
    return bool(v) and v is not None


def parse_text(v: Any) -> Any:
    """A JSON object / list given as text becomes the object (what vLLM's parser does for
    config-class options and dict options); anything else is returned unchanged."""
    if isinstance(v, str) and v.strip()[:1] in ("{", "["):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def user_options(cfg: ServeConfig) -> dict[str, Any]:
    """EngineArgs name -> value for every option set in ``cfg`` (see the module docstring)."""
    out: dict[str, Any] = {}
    for name in SERVE_FIELDS:
        v = getattr(cfg, name)
        if v is not None:
            out[name] = v
    dotted: list[tuple[str, Any]] = []
    for k, v in cfg.extra_args.items():
        if not isinstance(k, str) or k.startswith("_") or k.startswith("-"):
            continue
        if "." in k:
            dotted.append((k, v))
        else:
            out.setdefault(k, parse_text(v))
    for k, v in dotted:
        head, _, rest = k.partition(".")
        obj = out.get(head)
        if obj is None:
            obj = out[head] = {}
        if isinstance(obj, dict):
            cur = obj
            parts = rest.split(".")
            for p in parts[:-1]:
                nxt = cur.get(p)
                if not isinstance(nxt, dict):
                    nxt = cur[p] = {}
                cur = nxt
            cur[parts[-1]] = parse_text(v)
    return out


def coerced(options: dict[str, Any], version: Any, name: str, default: Any = None) -> Any:
    """The value of option ``name`` as vLLM's config class receives it (numbers and booleans
    coerced from command-line text per the release's field type), ``default`` when unset or not
    coercible."""
    v = options.get(name)
    if v is None:
        return default
    spec = engine_arg(name, version)
    if spec is None:
        return v
    ok, value = spec._type_ok(v)
    if not ok:
        return default
    if "bool" in spec.kinds and isinstance(value, str):
        return truthy(value)
    return value
