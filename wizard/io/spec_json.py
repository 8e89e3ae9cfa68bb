"""JSON option values read the way vLLM reads them, and ``--speculative-config`` text repaired.

* :func:`parse_spec_json` -- a ``--speculative-config`` text -> dict, like vLLM's ``json.loads``,
  repairing what a human or a wrapper script typically breaks (single quotes, Python
  ``True``/``None``, trailing commas, literal outer quotes, backslash-escaped quotes, a
  double-encoded string, bare ``method:dspark``); the problem is reported, never raised.
* :func:`parse_dotted_value` -- the value of a dotted ``--json-arg.key VALUE`` option
  (``FlexibleArgumentParser.parse_args``, vllm/utils/argparse_utils.py 0.32).
* :func:`duplicate_keys` -- the keys a ``--speculative-config`` JSON object gives more than once
  (vLLM's ``json.loads`` keeps the last value of each, silently).
* :func:`human_readable_int` -- vLLM's ``1k`` / ``1K`` / ``25.6k`` integers (same file).
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from pathlib import Path
from typing import Any, Iterable

from wizard.io.safeio import yaml_load_bounded

__all__ = ["parse_spec_json", "parse_dotted_value", "human_readable_int", "json_text", "duplicate_keys"]


def human_readable_int(value: str) -> int:
    """vLLM's ``human_readable_int`` (``vllm/utils/argparse_utils.py``, 0.32): '1k' -> 1000,
    '1K' -> 1024, '25.6k' -> 25600, plain ints. Raises ValueError otherwise."""
    value = value.strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgGtT])", value)
    if m:
        number, suffix = m.groups()
        dec = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
        if suffix in dec:
            try:
                return int(float(number) * dec[suffix])
            except (OverflowError, ValueError) as err:
                raise ValueError(str(err)) from None
        return int(number) * {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[suffix]
    return int(value)


def parse_dotted_value(value_str: str) -> Any:
    """A dotted ``--json-arg.key VALUE`` value as vLLM reads it: ``json.loads``, else a
    human-readable int (``1k``), else the string itself (``FlexibleArgumentParser.parse_args``)."""
    try:
        return json.loads(value_str)
    except (ValueError, RecursionError):
        pass
    try:
        return human_readable_int(value_str)
    except (ValueError, TypeError):
        return value_str


def json_text(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=str)


def _jsonable(obj: Any) -> Any:
    """obj as plain JSON types (tuples -> lists), or raise ValueError/TypeError."""
    return json.loads(json.dumps(obj, allow_nan=True))


# ---- --speculative-config JSON with repair ----------------------------------------------

_STR_OR_LITERAL = re.compile(r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')|\b(true|false|null)\b")
_PY_LITERAL = {"true": "True", "false": "False", "null": "None"}


def _try_json_obj(text: str) -> dict | None:
    try:
        v = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return v if isinstance(v, dict) else None


def _try_python_obj(text: str) -> dict | None:
    if len(text) > 20000:
        return None
    src = _STR_OR_LITERAL.sub(lambda m: m.group(1) or _PY_LITERAL[m.group(2)], text)
    try:
        v = ast.literal_eval(src)
        if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
            return None
        return _jsonable(v)
    except Exception:  # literal_eval raises many types (SyntaxError, ValueError, MemoryError...)
        return None


def _try_yaml_obj(text: str) -> dict | None:
    if len(text) > 20000:
        return None
    try:
        v = yaml_load_bounded(text, what="--speculative-config", max_nodes=_SPEC_YAML_NODES, max_depth=16)
        if not isinstance(v, dict) or not v or not all(isinstance(k, str) and _BARE_KEY.match(k) for k in v):
            return None
        return _jsonable(v)
    except Exception:
        return None


_BARE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
#: node budget when a malformed --speculative-config is read as YAML (SpeculativeConfig has ~40 keys)
_SPEC_YAML_NODES = 2000


def _try_bare_pairs(text: str) -> dict | None:
    """``method:dspark,num_speculative_tokens=3`` (no braces/quotes) -> dict."""
    s = text.strip()
    if s.startswith("{") and s.endswith("}"):
        s = s[1:-1]
    if any(c in s for c in "{}[]\"'\\"):
        return None
    out: dict[str, Any] = {}
    parts = [p for p in s.split(",") if p.strip()]
    if not parts:
        return None
    for part in parts:
        m = re.match(r"^\s*([^:=]+?)\s*[:=]\s*(.*?)\s*$", part, re.S)
        if not m:
            return None
        key, val = m.group(1).strip(), m.group(2)
        if not _BARE_KEY.match(key):
            return None
        out[key] = parse_dotted_value(val)
    return out


def _try_json_prefix(text: str) -> dict | None:
    """``{"method":"ngram",...}x``: a complete JSON object followed by stray text (a typo, a
    paste that ran on). The object alone; json.loads calls the rest 'Extra data'."""
    try:
        v, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return None
    return v if isinstance(v, dict) and text[end:].strip() else None


#: a --speculative-config value that names a file is read (to inline it) only up to this size
_SPEC_FILE_MAX = 64 * 1024


def _spec_file(raw: str) -> tuple[str, dict] | None:
    """``spec.json`` / ``@spec.json`` naming a readable file that holds a JSON or YAML object:
    (path, object). vLLM reads the value itself as JSON (``optional_type(json.loads)``,
    vllm/engine/arg_utils.py 0.32; its parser has no ``@file`` expansion), never a file."""
    name = raw.strip()
    name = name[1:] if name.startswith("@") else name
    if not name or "\n" in name or name.startswith(("{", "[")) or len(name) > 4096:
        return None
    try:
        p = Path(name).expanduser()
        if not p.is_file() or p.stat().st_size > _SPEC_FILE_MAX:
            return None
        text = p.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    obj = _try_json_obj(text) or _try_yaml_obj(text)
    return (str(p), obj) if obj is not None else None


#: typographic quotes an editor or a web page puts in place of ASCII ones (copy-paste damage)
_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
                               "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'"})


def _ascii_punctuation(text: str) -> str:
    """Full-width digits, braces and colons (NFKC) and typographic quotes as their ASCII forms:
    ``{“method”:“ngram”,“num_speculative_tokens”:３}`` -> strict JSON (vLLM's json.loads takes
    neither, and pydantic refuses the digit ``３`` as an integer)."""
    return unicodedata.normalize("NFKC", text).translate(_SMART_QUOTES)


def _variants(raw: str) -> Iterable[str]:
    """Texts to try: as given, with ASCII punctuation (copy-paste damage), stripped of literal
    outer quotes, unescaped (wrapper-script damage)."""
    seen: set[str] = set()
    plain = _ascii_punctuation(raw.strip())
    frontier = [raw.strip()] + ([plain] if plain != raw.strip() else [])
    for _ in range(4):
        nxt = []
        for s in frontier:
            if s in seen:
                continue
            seen.add(s)
            yield s
            if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"`":
                nxt.append(s[1:-1].strip())
            if "\\" in s:
                nxt.append(s.replace('\\"', '"').replace("\\'", "'").replace("\\\\", "\\"))
        frontier = nxt


def duplicate_keys(raw: str) -> dict[str, list[Any]]:
    """The top-level keys the JSON object ``raw`` gives more than once -> every value in order.
    vLLM reads ``--speculative-config`` with ``json.loads`` (``optional_type(json.loads)``,
    vllm/engine/arg_utils.py 0.32), which keeps the last value of a repeated key without a word.
    {} when ``raw`` is not a strict JSON object or repeats nothing. Never raises."""
    seen: dict[str, list[Any]] = {}
    try:
        top = json.loads(raw, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError, TypeError):
        return {}
    if not isinstance(top, _Pairs):
        return {}
    for k, v in top.pairs:
        seen.setdefault(str(k), []).append(_plain(v))
    return {k: vs for k, vs in seen.items() if len(vs) > 1}


class _Pairs:
    """A JSON object as read, key/value pairs in order (duplicates kept)."""

    __slots__ = ("pairs",)

    def __init__(self, pairs):
        self.pairs = pairs


def _plain(v: Any) -> Any:
    """A value read with :class:`_Pairs` objects back as dicts (the last value of a key wins)."""
    if isinstance(v, _Pairs):
        return {str(k): _plain(x) for k, x in v.pairs}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def parse_spec_json(raw: str, *, read_files: bool = False) -> tuple[dict | None, dict | None]:
    """Read a ``--speculative-config`` text like vLLM (``json.loads``), repairing what a human or
    a wrapper script typically breaks.

    Returns ``(obj, problem)``: ``obj`` the dict (None if unusable); ``problem`` None for strict
    JSON, else ``{"kind": "json_malformed"|"not_an_object", "raw", "error", "position",
    "corrected"}`` (``corrected``: strict compact JSON text of ``obj``, or None). Never raises.

    ``read_files``: a value naming a local file (``spec.json``, ``@spec.json``) is read to offer its
    object inline (``problem["file"]``); only for the faces that may read files named in the text
    they import (the CLI, as for ``--config FILE``), never for pasted text in the UI.
    """
    try:
        v = json.loads(raw)
        if isinstance(v, dict):
            return v, None
        if isinstance(v, str):
            obj, _ = parse_spec_json(v, read_files=read_files) if v != raw else (None, None)
            if obj is not None:
                return obj, {"kind": "json_malformed", "raw": raw, "error": "a JSON string holding JSON (double-encoded)",
                             "position": 0, "corrected": json_text(obj)}
        return None, {"kind": "not_an_object", "raw": raw, "error": f"JSON {type(v).__name__}, not an object",
                      "position": 0, "corrected": None}
    except json.JSONDecodeError as err:
        error, position = err.msg, err.pos
    except (ValueError, RecursionError) as err:
        error, position = str(err) or type(err).__name__, 0
    found = _spec_file(raw) if read_files else None
    if found is not None:
        path, obj = found
        return obj, {"kind": "json_malformed", "raw": raw, "position": 0, "corrected": json_text(obj), "file": path,
                     "error": f"it names the file {path}, but vLLM reads the value itself as JSON, never a file"}
    name = raw.strip()
    if read_files and re.fullmatch(r"@?[^\s{}\[\]\"']+\.(json|ya?ml)", name):
        return None, {"kind": "json_malformed", "raw": raw, "position": 0, "corrected": None,
                      "error": f"it looks like a file name ({name.lstrip('@')}), which does not exist or holds no "
                               "JSON/YAML object here; vLLM reads the value itself as JSON, never a file"}
    texts = list(_variants(raw))
    for attempt in (_try_json_obj, _try_python_obj, _try_yaml_obj, _try_bare_pairs, _try_json_prefix):
        for text in texts:
            obj = attempt(text)
            if obj is not None:
                return obj, {"kind": "json_malformed", "raw": raw, "error": error, "position": position,
                             "corrected": json_text(obj)}
    return None, {"kind": "json_malformed", "raw": raw, "error": error, "position": position, "corrected": None}
