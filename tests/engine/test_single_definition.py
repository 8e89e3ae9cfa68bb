"""Each engine fact has one definition, in ``wizard/engine/`` (issue #21): this scans the
``wizard/`` source with ``ast`` and fails on a second one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "wizard"
KV_NAMES = {"fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16", "float16", "nvfp4", "float32", "half"}
FACT_FUNCS = re.compile(r"batch_defaults|default_scheduler_limits|default_batch|served_max_model_len|"
                        r"served_length_default|mtp_n_layers|kv_dtype_bytes|dtype_bytes|default_block_size")
MTP_KEYS = {"num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules"}

#: modules outside wizard/models and wizard/engine that still read ``raw_config`` (issue #21:
#: migrate each to a ModelInfo field or a view fact, then delete it here -- the list only shrinks)
RAW_CONFIG_ALLOWLIST = {
    # advisory conditions address config.json by path (``config.rope_scaling.factor``): the raw file first
    "advisories/matcher.py",
}
#: the text-config sub-configs (vLLM's hf_text_config): merged once, in wizard/models/text_config.py
TEXT_CONFIG_KEYS = {"text_config", "llm_config", "language_config", "transformer_layer_config"}
#: reads of the MTP keys that are not model configs (the generated proposers.json case rows)
MTP_KEY_ALLOWLIST = {"mechanisms/method_support.py"}


def _modules():
    for p in sorted(ROOT.rglob("*.py")):
        rel = p.relative_to(ROOT).as_posix()
        yield rel, ast.parse(p.read_text(encoding="utf-8"))


def _inside(rel: str, *dirs: str) -> bool:
    return any(rel.startswith(d + "/") for d in dirs)


def test_fact_functions_only_in_engine():
    bad = [f"{rel}:{n.lineno} {n.name}" for rel, tree in _modules() if not _inside(rel, "engine")
           for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and FACT_FUNCS.search(n.name)
           and not n.name.startswith("_dtype_bytes") and n.name != "drafter_max_len"]
    assert not bad, "engine facts defined outside wizard/engine: " + ", ".join(bad)


def test_no_dtype_byte_tables_outside_engine():
    bad = []
    for rel, tree in _modules():
        if _inside(rel, "engine"):
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Dict):
                keys = {k.value for k in n.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
                nums = [v for v in n.values if isinstance(v, ast.Constant) and isinstance(v.value, (int, float))
                        and not isinstance(v.value, bool)]
                if len(keys & KV_NAMES) >= 3 and len(nums) >= 3:
                    bad.append(f"{rel}:{n.lineno}")
    assert not bad, "dtype -> bytes tables outside wizard/engine/kv_bytes.py: " + ", ".join(bad)


def test_mtp_keys_read_only_in_models_and_engine():
    bad = []
    for rel, tree in _modules():
        if _inside(rel, "models", "engine") or rel in MTP_KEY_ALLOWLIST:
            continue
        for n in ast.walk(tree):
            key = None
            if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant):
                key = n.slice.value
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" and n.args
                  and isinstance(n.args[0], ast.Constant)):
                key = n.args[0].value
            if key in MTP_KEYS:
                bad.append(f"{rel}:{n.lineno} {key}")
    assert not bad, "MTP layer count read outside wizard/models and wizard/engine (use ctx.view.mtp_layers): " + ", ".join(bad)


def test_no_ctx_cache():
    bad = [f"{rel}:{n.lineno}" for rel, tree in _modules() for n in ast.walk(tree)
           if isinstance(n, ast.Attribute) and n.attr == "cache" and isinstance(n.value, ast.Name)
           and n.value.id in ("ctx", "self")]
    assert not bad, "ctx.cache is gone: use a typed CheckContext field or a view fact: " + ", ".join(bad)


def test_raw_config_readers_only_shrink():
    readers = {rel for rel, tree in _modules() if not _inside(rel, "models", "engine")
               and any((isinstance(n, ast.Attribute) and n.attr == "raw_config")
                       or (isinstance(n, ast.Constant) and n.value == "raw_config") for n in ast.walk(tree))}
    new = readers - RAW_CONFIG_ALLOWLIST
    assert not new, f"new raw_config readers outside wizard/models and wizard/engine: {sorted(new)}"
    gone = RAW_CONFIG_ALLOWLIST - readers
    assert not gone, f"migrated, delete from RAW_CONFIG_ALLOWLIST: {sorted(gone)}"


def test_text_config_merged_only_in_models():
    """``text_config`` (and the other text sub-configs) is merged once, in ``wizard/models/``
    (``ModelInfo.text_config``): no other module reads the key."""
    bad = []
    for rel, tree in _modules():
        if _inside(rel, "models"):
            continue
        attr_names = {id(n.args[1]) for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                      and n.func.id == "getattr" and len(n.args) >= 2}  # getattr(info, "text_config"): the view
        bad += [f"{rel}:{n.lineno} {n.value}" for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and n.value in TEXT_CONFIG_KEYS and id(n) not in attr_names]
    assert not bad, "text_config read outside wizard/models (use ModelInfo.text_config): " + ", ".join(bad)


def test_local_path_syntax_only_in_paths():
    """Which names vLLM reads as local paths is written once (wizard/paths.py); four copies with
    different edges (``~`` vs ``~/``, Windows drives, existing files) were merged in session 2026-12-04."""
    bad = []
    for rel, tree in _modules():
        if rel == "paths.py":
            continue
        for n in ast.walk(tree):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "startswith"
                    and n.args and isinstance(n.args[0], ast.Tuple)):
                consts = {e.value for e in n.args[0].elts if isinstance(e, ast.Constant)}
                if {"./", "../"} <= consts:
                    bad.append(f"{rel}:{n.lineno}")
    assert not bad, "local-path syntax outside wizard/paths.py: " + ", ".join(bad)


def test_served_length_after_the_drafter_read_once():
    """The length the server runs with after ``_limit_max_model_len_to_draft`` (0.33 V2, 0.34):
    ``wizard.mechanisms.apply.served_length_after_drafter``. The planner lowered it while SD026
    skipped the 0.33 V2 cap (its own copy of the condition); no second reader of the mechanism's
    ``effective_max_model_len`` outside the mechanism and its accessor."""
    allowed = {"mechanisms/drafter_context.py", "mechanisms/apply.py"}
    bad = [f"{rel}:{n.lineno}" for rel, tree in _modules() if rel not in allowed for n in ast.walk(tree)
           if isinstance(n, ast.Attribute) and n.attr == "effective_max_model_len"]
    assert not bad, "read served_length_after_drafter(ctx), not DrafterContext.effective_max_model_len: " + ", ".join(bad)
