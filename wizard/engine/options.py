"""Fact: the options the user set, as vLLM's config classes receive them (``view.options``).

EngineArgs name -> value for every option the user set (modelled ServeConfig fields and
``extra_args``; not ``speculative_config``, ``env``, import bookkeeping), JSON text parsed the
way vLLM's parser reads config-class options, dotted keys (``--compilation-config.mode 3``)
merged into their object; with the release, command-line text converted by that release's
argparse ``type`` (:func:`wizard.vllm.cli_parse.convert`). :func:`coerced` reads one value with the release's field type
(``wizard/data/vllm/<X.Y>/constraints.json``).
"""

from __future__ import annotations

import json
from typing import Any

from wizard.config import SERVE_FIELDS, ServeConfig
from wizard.vllm.cli_parse import convert, dotted_value, option_dest, option_negates
from wizard.vllm.constraints import engine_arg
from wizard.vllm.options import serve_options
from wizard.vllm.releases import nearest_release

__all__ = ["user_options", "option_names", "coerced", "truthy"]

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


_UNSET = object()


def _cli_value(release: str | None, name: str, v: Any) -> Any:
    """Command-line text of option ``name`` as that release's parser converts it (its argparse
    ``type``: ``optional_type`` reads ``None`` as unset -> :data:`_UNSET`, human-readable ints,
    ``nargs='+'`` lists); JSON text as before; the text itself when the parser would refuse it
    (SD017 reports that) or the option is unknown."""
    if not isinstance(v, str) or release is None:
        return parse_text(v)
    e = serve_options(release)["options"].get("--" + name.replace("_", "-"))
    if e is None or not e.get("takes_value", True):
        return parse_text(v)
    try:
        got = convert(e.get("type"), v)
    except ValueError:
        return parse_text(v)
    if e.get("nargs") in ("+", "*"):
        return [got]  # each word converted: ``None`` stays an element (vLLM then refuses it)
    if got is None:
        return _UNSET
    if str(e.get("type")) in ("None", "str"):
        return parse_text(got)  # no converter: JSON text read as before (config-class options)
    return got  # the converter's result is what vLLM receives (union_dict_and_str keeps '[]' text)


def user_options(cfg: ServeConfig, version: Any = None) -> dict[str, Any]:
    """EngineArgs name -> value for every option set in ``cfg`` (see the module docstring).
    With ``version``, command-line text is converted the way that release's parser converts it."""
    release = nearest_release(version) if version is not None else None
    out: dict[str, Any] = {}
    for name in SERVE_FIELDS:
        v = getattr(cfg, name)
        if v is not None:
            out[name] = v
    dotted: list[tuple[str, Any]] = []
    names = option_names(cfg, release)
    for k, v in cfg.extra_args.items():
        if not isinstance(k, str) or k.startswith("_") or k.startswith("-"):
            continue
        if "." in k:
            head, _, rest = k.partition(".")
            dotted.append((f"{names.get(head, head)}.{rest}",
                           dotted_value(v) if isinstance(v, str) and release is not None else v))
            continue
        name = names.get(k, k)
        if isinstance(v, bool) and name != k and option_negates("--" + k, release):
            v = not v  # --disable-X (0.33) kept under its own key: the switch stores False in X's dest
        if name not in out:
            got = _cli_value(release, name, v)
            if got is not _UNSET:
                out[name] = got
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


def option_names(cfg: ServeConfig, release: str | None) -> dict[str, str]:
    """``extra_args`` key (the head of a dotted key) -> the option it reaches in ``release``'s
    parser when it is spelled otherwise: an alias (``device_memory_utilization``) or an
    abbreviation argparse resolves (``gp`` -> ``gpu_memory_utilization``, vLLM 0.32 parses
    ``--gp 0.9`` as ``--gpu-memory-utilization 0.9``). Keys that are the option's own name, that
    the parser does not know or that are ambiguous are left out; no release, no renaming."""
    if release is None:
        return {}
    opts = serve_options(release)["options"]
    out: dict[str, str] = {}
    for k in cfg.extra_args:
        if not isinstance(k, str) or k.startswith(("_", "-")):
            continue
        head = k.partition(".")[0]
        if head in out or head in SERVE_FIELDS or "--" + head.replace("_", "-") in opts and \
                opts["--" + head.replace("_", "-")]["dest"] == head:
            continue
        dest = option_dest("--" + head, release)
        if dest is not None and dest != head:
            out[head] = dest
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
