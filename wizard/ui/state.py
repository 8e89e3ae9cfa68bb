"""Wizard state: a plain JSON dict the UI keeps per browser tab (and in the browser's storage).

Shape (``STATE_VERSION`` 1)::

    {
      "v": 1,
      "config": {...},           # ServeConfig as a plain dict (vLLM names; extra_args,
                                  # invalid_values and import_notes included). "model" may be "".
      "gpu": {"name": "H100-SXM" | None, "count": 1},
      "vllm_version": "0.32.0",
      "allow_hub": false,         # look models up on the Hugging Face Hub
      "raw": {"extra_args": "..."},  # raw text of boxes whose content did not parse (kept verbatim)
      "stash": {"speculative_config": {...},  # what "no speculation" put aside, restored on return
                "by_method": {"ngram": {...}}},  # what a method switch removed, restored on switching back
      "acceptance": "0.7, 0.48, 0.31",  # measured acceptance per draft position (Plan step), as typed
      "history": [{"label": ..., "snapshot": {...}}],  # Undo: what Apply/Import/New replaced (newest
                                                       # last; never saved to files or the browser)
    }

Nothing the user typed is lost: ill-typed values stay in the config dict, where
:func:`wizard.config.config_from_dict` moves them to ``invalid_values`` (exported verbatim and
reported by the rules), and text that is not even a value (a broken JSON box) stays in ``raw``.
This module holds no rule logic; it only converts between form values and the config dict.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from wizard.config import ConfigError, ServeConfig, config_from_dict, get_path, set_path, unset_path
from wizard.hardware.catalog import MAX_GPU_COUNT, HardwareError, parse_gpu_spec
from wizard.io.argv import MAX_COMMAND_CHARS
from wizard.io.collector import MAX_OPTIONS
from wizard.io.safeio import json_loads_bounded
from wizard.privacy import redact_dict
from wizard.vllm.cli_parse import convert
from wizard.vllm.options import cli_vocabulary
from wizard.vllm.versions import default_version, is_known, known_versions, parse_version

__all__ = [
    "STATE_VERSION",
    "new_state",
    "dump_config",
    "config_of",
    "state_from_config",
    "set_field",
    "coerce",
    "field_value",
    "session_json",
    "load_session",
    "SessionError",
    "gpu_spec",
    "gpu_count_problem",
    "browser_safe",
    "redact_state",
    "JS_SAFE_INT",
    "push_history",
    "pop_history",
    "same_inputs",
    "HISTORY_MAX",
    "MAX_BOX_CHARS",
    "SESSION_MAX_BYTES",
    "MAX_CONFIG_VALUES",
    "box_problem",
    "config_problem",
    "restore_session",
    "known_settings",
]

#: largest integer a browser (JavaScript double) holds exactly; larger ones travel as text
JS_SAFE_INT = 2**53

STATE_VERSION = 1

INT_FIELDS = {
    "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "max_model_len", "max_num_seqs",
    "max_num_batched_tokens", "block_size",
    "speculative_config.num_speculative_tokens", "speculative_config.draft_tensor_parallel_size",
    "speculative_config.prompt_lookup_min", "speculative_config.prompt_lookup_max",
    "speculative_config.max_model_len", "speculative_config.suffix_decoding_max_tree_depth",
    "speculative_config.suffix_decoding_max_cached_requests",
}
FLOAT_FIELDS = {
    "gpu_memory_utilization", "speculative_config.suffix_decoding_max_spec_factor",
    "speculative_config.suffix_decoding_min_token_prob",
}
BOOL_FIELDS = {
    "kv_sharing_fast_prefill", "enable_prefix_caching", "enable_chunked_prefill", "enforce_eager",
    "async_scheduling", "enable_lora",
}
#: dropdown values that mean "not set" (vLLM's default applies)
UNSET_WORDS = {"", "(default)", "inherit", "(inherit)", "none", "(none)"}


class SessionError(ValueError):
    """A session file could not be read; the message says why (not JSON, wrong shape, beyond a
    budget)."""


# ---- budgets (issue 20 item 3: in bytes, not only counts) -------------------------------------
# What one event may be asked to carry. Without them a 200,000-key "Other options" box made every
# later event of the tab take 30-71 s (each deep-copies, checks and renders the configuration).

#: most characters one input box takes (typed, pasted or posted to its endpoint): the same budget
#: as a pasted `vllm serve` command (:data:`wizard.io.argv.MAX_COMMAND_CHARS`, 256 KiB)
MAX_BOX_CHARS = MAX_COMMAND_CHARS
#: largest session read: a "Load" file or the browser's copy of the tab (real ones: a few KiB)
SESSION_MAX_BYTES = 4 * 2 ** 20
#: most values (mapping entries and list items, at any depth) one configuration holds; a real one
#: has tens to a few hundred (a 512-entry cudagraph_capture_sizes list included)
MAX_CONFIG_VALUES = 20_000
#: the mappings of a configuration whose keys are options: at most MAX_OPTIONS keys each
_OPTION_MAPS = {"extra_args": "Other options (extra_args)", "env": "environment (env)",
                "invalid_values": "ill-typed values (invalid_values)", "speculative_config": "speculative_config"}


def new_state(vllm_version: str | None = None) -> dict[str, Any]:
    """An empty wizard: no model yet, unknown hardware, the default vLLM version."""
    return {
        "v": STATE_VERSION,
        "config": {"model": ""},
        "gpu": {"name": None, "count": 1},
        "vllm_version": vllm_version or str(default_version()),
        "allow_hub": False,
        "raw": {},
        "stash": {},
    }


def dump_config(cfg: ServeConfig) -> dict[str, Any]:
    """ServeConfig -> plain JSON dict (no None), speculative_config extras included."""
    d = cfg.model_dump(mode="json", exclude_none=True)
    if cfg.speculative_config is not None:
        d["speculative_config"] = cfg.speculative_config.model_dump(mode="json", exclude_none=True)
    for k in ("extra_args", "env", "invalid_values", "import_notes"):
        if not d.get(k):
            d.pop(k, None)
    return d


def config_of(state: dict[str, Any]) -> ServeConfig | None:
    """The ServeConfig of ``state``, or None while no target model is chosen."""
    d = copy.deepcopy(state.get("config") or {})
    if not str(d.get("model") or "").strip():
        return None
    try:
        return config_from_dict(d)
    except ConfigError:
        return None


def state_from_config(cfg: ServeConfig, base: dict[str, Any] | None = None, *, gpu: str | None = None) -> dict[str, Any]:
    """A state holding ``cfg`` (hardware/version/settings kept from ``base``)."""
    st = copy.deepcopy(base) if base else new_state()
    st["config"] = dump_config(cfg)
    st["raw"] = {}
    st["stash"] = {}
    if gpu:
        name, _, count = gpu.partition("x") if "x" in gpu[1:] else (gpu, "", "1")
        try:
            n = int(count or 1)
        except ValueError:
            name, n = gpu, 1
        st["gpu"] = {"name": name, "count": n}
    return st


def coerce(path: str, value: Any) -> Any:
    """Form value -> config value. Unparseable text is returned as is (kept, reported by rules).

    '' / '(default)' / 'inherit' -> None (unset). Numbers from text for int/float fields.
    """
    if value is None:
        return None
    if isinstance(value, str):
        v = value.strip()
        if v.lower() in UNSET_WORDS:
            return None
        if path in INT_FIELDS:
            try:
                return int(v)
            except ValueError:
                try:
                    f = float(v)  # '5.0' / '1e3' -> int only when exact, so the typed value is never changed
                    return int(f) if f.is_integer() and abs(f) <= JS_SAFE_INT else value
                except (ValueError, OverflowError):
                    return _cli_number(path, v, value)
        if path in FLOAT_FIELDS:
            try:
                return float(v)
            except ValueError:
                return value
        if path in BOOL_FIELDS:
            if v.lower() in ("true", "1", "yes", "on"):
                return True
            if v.lower() in ("false", "0", "no", "off"):
                return False
            return value
        return value
    if path in INT_FIELDS and isinstance(value, float) and value.is_integer() and abs(value) <= JS_SAFE_INT:
        return int(value)
    return value


def _cli_number(path: str, text: str, value: Any) -> Any:
    """``text`` of a top-level number option read by the option's own argparse ``type``, as the
    ``vllm serve`` importer reads it (:mod:`wizard.io.collector`): ``--max-model-len 32k`` is
    32000 (``human_readable_int``, vllm/utils/argparse_utils.py), so the box takes what vLLM
    takes; ``value`` unchanged when that type refuses it too (kept, reported by the rules)."""
    if "." in path:
        return value
    kind = cli_vocabulary().number_types.get(path)
    if kind is None:
        return value
    try:
        got = convert(kind, text)
    except ValueError:
        return value
    return got if isinstance(got, int) and not isinstance(got, bool) else value


def _gpu_count(value: Any) -> int | None:
    """A whole number 1..MAX_GPU_COUNT from a form value, else None (never rounded or clamped)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        n = value
    elif isinstance(value, float):
        if not value.is_integer():
            return None
        n = int(value)
    else:
        t = str(value).strip()
        try:
            n = int(t)
        except ValueError:
            try:
                f = float(t)
            except (ValueError, OverflowError):
                return None
            if not f.is_integer():
                return None
            n = int(f)
    return n if 1 <= n <= MAX_GPU_COUNT else None


def gpu_count_problem(state: dict[str, Any]) -> str | None:
    """The hardware step's own validation: a message when the typed GPU count is not a whole
    number 1..MAX_GPU_COUNT (the state keeps the typed text in ``raw['gpu.count']`` and checks
    with the last valid count), else None."""
    raw = (state.get("raw") or {}).get("gpu.count")
    if raw is None:
        return None
    used = int((state.get("gpu") or {}).get("count") or 1)
    text = str(raw).strip()
    try:
        x = float(text)
    except (ValueError, OverflowError):
        x = None
    if x is None or x != x:
        why = "is not a number"
    elif x in (float("inf"), float("-inf")):
        why = "is less than 1" if x < 0 else f"is more than {MAX_GPU_COUNT:,} (the most GPUs the wizard models)"
    elif not x.is_integer():
        why = "is not a whole number"
    elif x < 1:
        why = "is less than 1"
    else:
        why = f"is more than {MAX_GPU_COUNT:,} (the most GPUs the wizard models)"
    return (f"GPU count must be a whole number ≥ 1: {text[:40]!r} {why}. The box (Hardware step) keeps what you "
            f"typed; the checks use the last valid count, {used} GPU" + ("" if used == 1 else "s") + ", until it is fixed.")


def browser_safe(obj: Any) -> Any:
    """A copy of ``obj`` (JSON-like) the browser can hold: integers beyond ±2**53 become their
    decimal text (orjson rejects ints beyond 64 bits and JavaScript rounds beyond 2**53); the
    text reads back to the same value through :func:`wizard.config.config_from_dict`."""
    if isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        return str(obj) if abs(obj) > JS_SAFE_INT else obj
    if isinstance(obj, dict):
        return {k: browser_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [browser_safe(v) for v in obj]
    return obj


def _int_literal(text: str) -> bool:
    """``text`` is what argparse's ``type=int`` reads as it is ('3', '+3', ' 007')."""
    try:
        int(text.strip())
    except ValueError:
        return False
    return True


#: state key where a field's ``after`` hook (or :func:`set_field`) leaves a note for the panel (what
#: it removed, replaced or rewrote, and why); moved out of the state before the state is kept
CHANGE_NOTE = "change_note"


def set_field(state: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """Return a copy of ``state`` with config ``path`` (dotted) set to the coerced ``value``.

    Special paths: ``gpu.name``, ``gpu.count``, ``vllm_version``, ``allow_hub`` (wizard settings),
    ``speculative_config.method`` = 'none' (puts the speculative config aside; choosing a method
    again brings it back).
    """
    st = copy.deepcopy(state)
    if path in ("gpu.name", "gpu.count"):
        gpu = st.setdefault("gpu", {"name": None, "count": 1})
        if path == "gpu.name":
            gpu["name"] = None if (value is None or str(value).strip().lower() in UNSET_WORDS | {"unknown"}) else value
        else:
            n = _gpu_count(value)
            raw = st.setdefault("raw", {})
            if n is None and not (value is None or str(value).strip() == ""):
                raw["gpu.count"] = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)  # kept as typed; the hardware step says why it is not used
            else:
                raw.pop("gpu.count", None)
                gpu["count"] = n or 1
        return st
    if path in ("vllm_version", "allow_hub"):
        st[path] = value
        return st
    cfg = st.setdefault("config", {"model": ""})
    if path == "speculative_config.method" and isinstance(value, str) and value.strip().lower() in ("none", "(none)", "no speculation"):
        if cfg.get("speculative_config"):
            st.setdefault("stash", {})["speculative_config"] = cfg.pop("speculative_config")
        return st
    v = coerce(path, value)
    if path in INT_FIELDS and isinstance(value, str) and isinstance(v, int) and not isinstance(v, bool) \
            and not _int_literal(value):
        # '1.0' / '1e3': vLLM's own parser refuses them on a command line (argparse type=int), the
        # form takes the number; say so, since the CLI's check of the same text reports SD010
        note = f"`{path}`: {value.strip()[:40]!r} is written as {v} (a whole number, as `vllm serve` needs it)."
        st[CHANGE_NOTE] = " ".join(x for x in (st.get(CHANGE_NOTE), note) if x)
    if path.startswith("speculative_config.") and not cfg.get("speculative_config") and st.get("stash", {}).get("speculative_config"):
        if v is None:  # clearing a field of the configuration put aside (a hidden box emptied): nothing to do
            return st
        cfg["speculative_config"] = st["stash"].pop("speculative_config")
    if path == "model":
        cfg["model"] = "" if v is None else str(v).strip()
        return st
    if v is None:
        unset_path(cfg, path)
    else:
        set_path(cfg, path, v)
    if cfg.get("speculative_config") == {}:
        cfg.pop("speculative_config")
    return st


def field_value(state: dict[str, Any], path: str, default: Any = None) -> Any:
    """The value to show for ``path`` (a raw invalid value wins, so typed text is not lost)."""
    cfg = state.get("config") or {}
    inv = cfg.get("invalid_values") if isinstance(cfg.get("invalid_values"), dict) else {}
    if path in inv:
        return inv[path]
    return get_path(cfg, path, default)


def gpu_spec(state: dict[str, Any]) -> str | None:
    """'NAMExN' for wizard.hardware.parse_gpu_spec, or None when unknown."""
    g = state.get("gpu") or {}
    if not g.get("name"):
        return None
    n = int(g.get("count") or 1)
    return f"{g['name']}x{n}" if n != 1 else str(g["name"])


#: keys of the state that describe the configuration (what Undo restores, what a change compares)
INPUT_KEYS = ("config", "raw", "stash", "gpu", "vllm_version", "allow_hub", "acceptance")
#: Undo steps kept per browser tab
HISTORY_MAX = 20


def push_history(state: dict[str, Any], label: str) -> dict[str, Any]:
    """A copy of ``state`` whose history ends with a snapshot of its inputs (what Undo brings
    back), labelled ``label`` ('Apply: Drop --kv-sharing-fast-prefill'). At most HISTORY_MAX."""
    st = dict(state)
    snap = copy.deepcopy({k: state[k] for k in INPUT_KEYS if k in state})
    hist = [h for h in (state.get("history") or []) if isinstance(h, dict)][-(HISTORY_MAX - 1):]
    st["history"] = hist + [{"label": str(label)[:200], "snapshot": snap}]
    return st


def pop_history(state: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """(state with the newest snapshot restored and removed from the history, its label); the
    state unchanged and None when there is nothing to undo."""
    hist = [h for h in (state.get("history") or []) if isinstance(h, dict) and isinstance(h.get("snapshot"), dict)]
    if not hist:
        return state, None
    last = hist[-1]
    st = dict(state)
    st.update(copy.deepcopy(last["snapshot"]))
    st["history"] = hist[:-1]
    return st, str(last.get("label") or "last change")


def same_inputs(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two states describe the same configuration (a field event that changes nothing)."""
    return all(a.get(k) == b.get(k) for k in INPUT_KEYS)


def redact_state(state: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``state`` whose config holds credentials as ``$VAR`` references
    (:func:`wizard.privacy.redact_dict`): what may be written to files or browser storage.
    The Undo history (whole earlier configurations) is left out."""
    st = {k: v for k, v in state.items() if k not in ("history", "rev")}
    if isinstance(st.get("config"), dict):
        st["config"] = redact_dict(st["config"])
    return st


def session_json(state: dict[str, Any]) -> str:
    """The whole wizard state as a JSON document (what "Save session" writes); credentials are
    written as references (``HF_TOKEN: "$HF_TOKEN"``), the launch takes their values from the
    wizard's environment."""
    return json.dumps({"specwizard_session": STATE_VERSION, **redact_state(state)}, indent=2, sort_keys=True)


def load_session(text: str | bytes, *, what: str = "session file") -> dict[str, Any]:
    """Parse a saved session. Unknown keys are kept; missing ones get defaults.

    Budgets: :data:`SESSION_MAX_BYTES` of text, :func:`config_problem` for the configuration,
    :data:`MAX_BOX_CHARS` per kept box text (``raw``).

    Raises:
        SessionError: not JSON, not a SpecWizard session, or beyond a budget (names what is
            wrong and where).
    """
    try:  # bounded: bytes, values, nesting (a deeply nested file must not hit Python's recursion limit)
        # (no count below the default: within 4 MiB the budgets below name what is too large)
        data = json_loads_bounded(text, what=what, max_depth=64, max_bytes=SESSION_MAX_BYTES)
    except (ValueError, UnicodeDecodeError) as err:
        raise SessionError(str(err).replace("is not valid JSON", "is not JSON")) from None
    if not isinstance(data, dict) or "config" not in data or not isinstance(data["config"], dict):
        raise SessionError(f"{what} has no 'config' object: save one with the wizard's Save session button")
    problems = _session_problems(data)
    if problems:
        raise SessionError(f"{what}: {problems[0][1]}")
    return _session_state(data)


def _session_state(data: dict[str, Any]) -> dict[str, Any]:
    """The wizard state of a parsed session ``data`` (within budget)."""
    data.pop("specwizard_session", None)
    st = new_state(data.get("vllm_version"))
    st.update({k: v for k, v in data.items() if k in st or k not in ("v",)})
    st["v"] = STATE_VERSION
    st["config"].setdefault("model", "")
    if not isinstance(st.get("gpu"), dict):
        st["gpu"] = {"name": None, "count": 1}
    count = st["gpu"].get("count", 1)
    if not (isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= MAX_GPU_COUNT):
        st["gpu"] = {**st["gpu"], "count": 1}  # the saved count is not a GPU count: the default
    for k in ("raw", "stash"):
        if not isinstance(st.get(k), dict):
            st[k] = {}
    st.pop("history", None)  # never read from a file: Undo steps are this tab's own
    if not isinstance(st.get("acceptance"), str):
        st.pop("acceptance", None)
    return st


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def known_settings(state: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(``state`` with its release and GPU limited to what the wizard knows, a note per value
    reset): what the Hardware step's dropdowns offer, from the core's own lists. A vLLM version
    that is not a release the rules have tables for (:func:`wizard.vllm.versions.is_known`; the
    default version always stands) becomes the default version; a GPU name the hardware catalog
    does not know (:func:`wizard.hardware.catalog.parse_gpu_spec`, aliases accepted) becomes
    unknown. Each note names the field and the value it held (as text: the face escapes it);
    nothing else of ``state`` changes. For a session read from a file (Load)."""
    st = dict(state)
    notes: list[str] = []
    default = str(default_version())
    v = st.get("vllm_version")
    if v is None or (isinstance(v, str) and not v.strip()):
        st["vllm_version"] = default
    else:
        try:
            ok = isinstance(v, str) and (v.strip() == default or is_known(parse_version(v)))
        except ValueError:
            ok = False
        if not ok:
            st["vllm_version"] = default
            notes.append(f"vLLM version (vllm_version): the session's {_short(v)} is not a release the wizard knows "
                         f"(known: {', '.join(known_versions())}); reset to {default}")
    gpu = st.get("gpu") if isinstance(st.get("gpu"), dict) else {"name": None, "count": 1}
    name = gpu.get("name")
    if name is not None and not (isinstance(name, str) and name.strip().lower() in UNSET_WORDS | {"unknown"}):
        try:
            ok = isinstance(name, str) and parse_gpu_spec(name).count == 1
        except (HardwareError, ValueError):
            ok = False
        if not ok:
            notes.append(f"GPU (gpu.name): the session's {_short(name)} is not a GPU the wizard's catalog knows; reset "
                         "to unknown (choose the GPU in step 1)")
            gpu = {**gpu, "name": None}
    elif name is not None:
        gpu = {**gpu, "name": None}
    st["gpu"] = gpu
    return st, notes


def box_problem(name: str, value: Any) -> str | None:
    """Why the text ``value`` of box ``name`` is not used (longer than :data:`MAX_BOX_CHARS`), or None."""
    if isinstance(value, str) and len(value) > MAX_BOX_CHARS:
        return (f"{name}: {len(value):,} characters, more than the {MAX_BOX_CHARS:,} one box takes; not used "
                "(your text stays in the box; the last value that fitted is checked)")
    return None


def _count_values(obj: Any, limit: int) -> int:
    """Mapping entries and list items in ``obj`` at any depth; stops counting past ``limit``."""
    n, stack = 0, [obj]
    while stack and n <= limit:
        cur = stack.pop()
        if isinstance(cur, dict):
            n += len(cur)
            stack.extend(v for v in cur.values() if isinstance(v, (dict, list)))
        elif isinstance(cur, list):
            n += len(cur)
            stack.extend(v for v in cur if isinstance(v, (dict, list)))
    return n


def _config_problems(cfg: dict[str, Any]) -> list[tuple[str | None, str]]:
    """(key of ``cfg`` to put aside or None for the whole, why) for each budget ``cfg`` is beyond."""
    out: list[tuple[str | None, str]] = []
    for key, name in _OPTION_MAPS.items():
        v = cfg.get(key)
        if isinstance(v, dict) and len(v) > MAX_OPTIONS:
            out.append((key, f"{name} holds {len(v):,} options, more than the {MAX_OPTIONS:,} a `vllm serve` command "
                             "can have (it has about 400)"))
        elif isinstance(v, (dict, list)) and _count_values(v, MAX_CONFIG_VALUES) > MAX_CONFIG_VALUES:
            out.append((key, f"{name} holds more than {MAX_CONFIG_VALUES:,} values; no real configuration has that many"))
    if len(cfg) > MAX_OPTIONS:
        out.append((None, f"the configuration has {len(cfg):,} options, more than the {MAX_OPTIONS:,} a `vllm serve` "
                          "command can have"))
    elif not out and _count_values(cfg, MAX_CONFIG_VALUES) > MAX_CONFIG_VALUES:
        out.append((None, f"the configuration holds more than {MAX_CONFIG_VALUES:,} values; no real one has that many"))
    return out


def config_problem(cfg: dict[str, Any]) -> str | None:
    """Why the configuration dict ``cfg`` (:func:`dump_config`) is beyond the UI's budgets -- more
    than :data:`MAX_OPTIONS` options in it or in one of its option mappings (extra_args, env,
    ...), more than :data:`MAX_CONFIG_VALUES` values, or more than :data:`SESSION_MAX_BYTES` as
    JSON (a session could not hold it) -- or None."""
    problems = _config_problems(cfg)
    if problems:
        return problems[0][1]
    size = len(json.dumps(cfg, default=str))
    if size > SESSION_MAX_BYTES:
        return (f"the configuration is {size / 2 ** 20:.1f} MiB as JSON, more than the "
                f"{SESSION_MAX_BYTES / 2 ** 20:.0f} MiB a wizard session holds")
    return None


def _session_problems(data: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """(path in ``data`` to put aside, why) for each budget a parsed session is beyond; the path
    ``("config",)`` means the configuration as a whole (nothing to restore without it)."""
    out: list[tuple[tuple[str, ...], str]] = []
    if len(data) > MAX_OPTIONS:
        return [(("config",), f"the session has {len(data):,} entries; a wizard session has about ten")]
    cfg = data.get("config")
    if isinstance(cfg, dict):
        out += [(("config",) + ((key,) if key else ()), why) for key, why in _config_problems(cfg)]
    raw = data.get("raw")
    if isinstance(raw, dict) and len(raw) <= MAX_OPTIONS:
        for k, v in raw.items():
            if isinstance(v, str) and len(v) > MAX_BOX_CHARS:
                out.append((("raw", str(k)), f"the text kept for box {str(k)[:60]!r} is {len(v):,} characters, more "
                                             f"than the {MAX_BOX_CHARS:,} one box takes"))
    for k, v in data.items():  # everything else: the wizard's settings, and unknown keys (kept)
        if k == "config":
            continue
        if isinstance(v, (dict, list)) and _count_values(v, MAX_CONFIG_VALUES) > MAX_CONFIG_VALUES:
            out.append(((str(k),), f"{str(k)[:60]!r} holds more than {MAX_CONFIG_VALUES:,} values"))
        elif isinstance(v, str) and len(v) > MAX_BOX_CHARS:
            out.append(((str(k),), f"{str(k)[:60]!r} is {len(v):,} characters, more than the {MAX_BOX_CHARS:,} "
                                   "one box takes"))
    return out


def restore_session(obj: Any, *, what: str = "the configuration kept in this browser") -> tuple[dict[str, Any], list[str]]:
    """(state, notes) of the browser's copy of a tab (a JSON-like ``obj``): what is beyond a
    budget is left out and said in ``notes`` (naming it); the rest is restored.

    Raises:
        SessionError: not a session, or too large as a whole (more than :data:`SESSION_MAX_BYTES`
            of JSON even without the parts beyond their budgets).
    """
    if not isinstance(obj, dict) or not isinstance(obj.get("config"), dict):
        raise SessionError(f"{what} has no 'config' object")
    data = dict(obj)
    data["config"] = dict(obj["config"])
    notes: list[str] = []
    for path, why in _session_problems(data):
        if path == ("config",):
            raise SessionError(f"{what}: {why}")
        if len(path) == 2:
            parent = path[0]
            if isinstance(data.get(parent), dict):
                data[parent] = {k: v for k, v in data[parent].items() if str(k) != path[1]}
        else:
            data = {k: v for k, v in data.items() if str(k) != path[0]}
        notes.append(f"{why}: left out")
    try:
        text = json.dumps(data, allow_nan=True)
    except (TypeError, ValueError) as err:
        raise SessionError(f"{what} is not JSON data ({err})") from None
    return load_session(text, what=what), notes

