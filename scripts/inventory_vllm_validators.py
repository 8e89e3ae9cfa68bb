"""Inventory every config-time validator of vLLM (raise / assert sites) across releases.

    python scripts/inventory_vllm_validators.py            # docs/vllm-validators.json + the generated section of docs/vllm-rules.md
    python scripts/inventory_vllm_validators.py --list     # print the sites of 0.32 (no files written)

Reads the *source* of each release (no import): ``vllm/config/*.py`` and
``vllm/engine/arg_utils.py`` in the release environments found by ``wizard.vllm.venvs``
(``$SPECWIZARD_VENV_DIR``; 0.32 from this interpreter). For every ``raise X(...)`` and
``assert`` it records the enclosing function (``Class.method``), the exception type, the message
template (f-string fields shown as ``{expr}``), the condition (the enclosing ``if`` tests,
``not (...)`` for ``else`` branches; the assert's test) and the line per release. Sites are
matched across releases by (file, function, exception, message; ``where``: release -> line); a site keeps its inventory id
(``R###``) from one run to the next: ids come from ``docs/vllm-validators.json`` when it exists,
else from the message fragments of the hand-written tables in ``docs/vllm-rules.md``
(R001-R133), else the next free number.

Whether options + model facts + hardware can predict a site ("planned rule") or not (with the
reason) is decided by :data:`VERDICTS` below: ordered (file, function, message) patterns written
after reading each group of sites; the first match wins.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RELEASES = ("0.28", "0.29", "0.30", "0.31", "0.32", "0.33")
FILES = ("config/*.py", "engine/arg_utils.py")
OUT_JSON = ROOT / "docs" / "vllm-validators.json"
RULES_MD = ROOT / "docs" / "vllm-rules.md"
BEGIN = "<!-- BEGIN generated: scripts/inventory_vllm_validators.py -->"
END = "<!-- END generated: scripts/inventory_vllm_validators.py -->"
FIRST_NEW_ID = 134


def vllm_source(release: str) -> Path | None:
    """site-packages/vllm of the release's environment (without importing it)."""
    import importlib.util

    from wizard.vllm.venvs import VenvError, release_python

    try:
        py = Path(release_python(release, create=False))
    except VenvError:
        return None
    if str(py) == sys.executable:
        spec = importlib.util.find_spec("vllm")
        return Path(spec.origin).parent if spec and spec.origin else None
    for sp in sorted((py.parent.parent / "lib").glob("python3*/site-packages/vllm")):
        return sp
    return None


# ---- AST extraction -------------------------------------------------------------------------------

def _template(node: ast.AST | None) -> str:
    """A message template: literal text with ``{expr}`` for formatted parts."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                out.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                out.append("{" + ast.unparse(v.value) + "}")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        left, right = _template(node.left), _template(node.right)
        return left + right if isinstance(node.op, ast.Add) else left + " % " + ast.unparse(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _template(node.func.value)
    return "{" + ast.unparse(node) + "}"


class _Visitor(ast.NodeVisitor):
    def __init__(self, rel_file: str):
        self.file = rel_file
        self.scope: list[str] = []
        self.conds: list[str] = []
        self.sites: list[dict] = []
        self.assigns: dict[str, ast.AST] = {}

    def _qual(self) -> str:
        return ".".join(self.scope) or "<module>"

    def visit_ClassDef(self, node):
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_FunctionDef(self, node):
        self.scope.append(node.name)
        saved_c, saved_a = self.conds, self.assigns
        self.conds, self.assigns = [], {}
        self.generic_visit(node)
        self.conds, self.assigns = saved_c, saved_a
        self.scope.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node):
        for t in node.targets:
            if isinstance(t, ast.Name):
                self.assigns[t.id] = node.value
        self.generic_visit(node)

    def visit_If(self, node):
        test = ast.unparse(node.test)
        self.conds.append(test)
        for n in node.body:
            self.visit(n)
        self.conds.pop()
        if node.orelse:
            self.conds.append(f"not ({test})")
            for n in node.orelse:
                self.visit(n)
            self.conds.pop()

    def _site(self, node, kind: str, exc: str, msg_node, cond: list[str]) -> None:
        if isinstance(msg_node, ast.Name) and msg_node.id in self.assigns:
            msg_node = self.assigns[msg_node.id]
        self.sites.append({
            "file": self.file, "line": node.lineno, "function": self._qual(), "kind": kind, "exc": exc,
            "message": " ".join(_template(msg_node).split()), "condition": " and ".join(f"({c})" for c in cond) or "always",
        })

    def visit_Raise(self, node):
        if node.exc is None:
            return
        exc = node.exc
        name = ast.unparse(exc.func if isinstance(exc, ast.Call) else exc)
        msg = exc.args[0] if isinstance(exc, ast.Call) and exc.args else None
        self._site(node, "raise", name, msg, self.conds)

    def visit_Assert(self, node):
        self._site(node, "assert", "AssertionError", node.msg, self.conds + [f"not ({ast.unparse(node.test)})"])


def sites_of(src: Path) -> list[dict]:
    out = []
    for pattern in FILES:
        for f in sorted(src.glob(pattern)):
            rel = f.relative_to(src).as_posix()
            tree = ast.parse(f.read_text(encoding="utf-8"), filename=str(f))
            v = _Visitor(rel)
            v.visit(tree)
            out.extend(v.sites)
    return out


def site_key(s: dict) -> str:
    msg = re.sub(r"\{[^{}]*\}", "{}", s["message"])
    return f"{s['file']}|{s['function']}|{s['exc']}|{msg}"


# ---- verdicts: can options + model facts + hardware predict the site? ------------------------------------
# Codes (docs/vllm-rules.md §0): O options, T target config.json, D draft config.json, HW GPU/platform,
# ENV environment variables of the launch, REG vLLM's model registry traits (SupportsPP, SupportsLoRA,
# pooling/generative, multimodal: a table to generate from vLLM per release), FS paths on the serving host.
PLANNED = "planned rule"
RARE = "planned rule (rare option)"
NOT = "not predictable"

#: (file regex, function regex, message regex, status, needs or reason). First match wins.
VERDICTS: list[tuple[str, str, str, str, str]] = [
    # internal invariants and helpers (vLLM calls them with its own values)
    (r".*", r".*", r"must be set by this point|should be checked during init|has not been resolved yet|should be resolved by ModelConfig|Current vLLM config is not set|must be set after applying optimization level",
     NOT, "internal invariant: vLLM sets the value itself before this point"),
    (r"config/utils\.py", r"get_attr_docs|get_field|normalize_value|get_hash_factors|set_from_deprecated_env_if_set", r".*",
     NOT, "internal helper, called by vLLM's own code with vLLM's own values"),
    (r"engine/arg_utils\.py", r"_compute_kwargs$|literal_to_kwargs|collection_to_kwargs", r".*",
     NOT, "builds the argument parser from the config classes; independent of user input"),
    (r"config/kernel\.py", r"IrOpPriorityConfig\._|IrOpPriorityConfig\.compute_hash", r".*", NOT, "internal helper of the IR-op priority table"),
    (r"config/compilation\.py", r"CUDAGraphMode\.has_mode|custom_op_log_check|init_backend|is_custom_op_enabled|post_init_cudagraph_sizes|set_splitting_ops_for_attn_fusion", r".*",
     NOT, "internal: called during compilation set-up with values vLLM computed"),
    (r"config/compilation\.py", r"resolve_cudagraph_mode_and_sizes", r".*",
     NOT, "load time: runs in the engine core after the attention backend and the KV-cache layout are chosen (needs the backend's CUDA-graph support; the backend tables of a later wave could predict it)"),
    (r"config/compilation\.py", r"adjust_cudagraph_sizes_for_spec_decode", r"^$", NOT, "internal invariant"),
    (r"config/compilation\.py", r"adjust_cudagraph_sizes_for_spec_decode", r".*", PLANNED, "O (load time: model-runner init; capture sizes vs k+1)"),
    (r"config/compilation\.py", r"__post_init__", r"use_inductor_graph_partition", NOT, "depends on the torch build installed with vLLM, not on options"),
    (r"config/parallel\.py", r"stateless_init_dp_group", r".*", NOT, "run time: data-parallel group initialisation"),
    (r"config/parallel\.py", r"_validate_parallel_config", r"_api_process_rank", NOT, "internal: set by the API-server launcher"),
    (r"config/pooler\.py", r"get_seq_pooling_type|get_tok_pooling_type", r".*", NOT, "internal invariant"),
    (r"config/model\.py", r"get_pooling_task|get_multimodal_config", r".*", NOT, "internal accessor, called later with vLLM's own values"),
    (r"config/quantization\.py", r"_coerce_spec", r"^$", NOT, "internal invariant"),
    (r"config/vllm\.py", r"_check_supports_watermarking", r"Unsupported watermarking config", NOT, "internal type check"),
    (r"config/vllm\.py", r"_set_compile_ranges", r".*", NOT, "internal: compile ranges vLLM derives itself"),
    (r"config/reasoning\.py", r".*", r".*", NOT, "needs the tokenizer's vocabulary (loaded after the config build)"),
    (r"config/observability\.py", r"_validate_otlp_traces_endpoint", r".*", NOT, "needs the OpenTelemetry packages of the serving environment"),
    (r"config/parallel\.py", r"__post_init__", r"NIXL package", NOT, "needs the NIXL package of the serving environment"),
    (r"config/device\.py", r".*", r".*", NOT, "host without a usable device (the cross-check says 'cannot validate on this host')"),
    (r"config/multimodal\.py", r"_validate_multimodal_config", r"not found", RARE, "O+FS (paths on the serving host, like SD009)"),
    (r"config/model_arch\.py", r".*", r".*", RARE, "T (malformed per-layer config.json)"),
    # CLI parsing
    (r"engine/arg_utils\.py", r"parse_type|parse_dataclass", r".*", PLANNED, "O (CLI parse, exit 2; constraints.json types)"),
    # hardware / platform
    (r".*", r".*", r"current platform|on CUDA|requires CUDA|CUDA platforms|NVIDIA CUDA|only available on|compute capability|not supported for the current GPU|requires Triton|ROCm|XPU devices|larger than the number of available GPUs",
     PLANNED, "O+HW"),
    # environment variables
    (r".*", r".*", r"VLLM_WORKER_MULTIPROC_METHOD|PYTORCH_CUDA_ALLOC_CONF|INKLING_MULTIMEM_AR|device_control_env_var|VLLM_USE_V2_MODEL_RUNNER=", RARE, "O+ENV"),
    # model registry traits
    (r"config/model\.py", r"verify_with_parallel_config", r"Pipeline parallelism is not supported", PLANNED, "T+REG (SupportsPP)"),
    (r"config/lora\.py", r"verify_with_model_config", r"LoRA is not supported for", PLANNED, "T+REG (SupportsLoRA)"),
    (r"config/model\.py", r"__post_init__", r"runner|does not support `--runner|Embedding models", PLANNED, "O+T+REG (generative/pooling)"),
    (r"config/vllm\.py", r"validate_mamba_cached_kernel", r"not supported for architecture", RARE, "O+T+REG"),
    (r"config/vllm\.py", r"_check_supports_watermarking", r"custom samplers", RARE, "O+T+REG"),
    # the main option families (the corpus covers them)
    (r"config/model\.py", r"verify_with_parallel_config|_verify_with_expert_parallelism", r".*", PLANNED, "O+T (heads / KV heads / experts vs TP, DCP, EP)"),
    (r"config/model\.py", r"_get_and_verify_max_len", r".*", PLANNED, "O+T+ENV (derived length incl. rope scaling; VLLM_ALLOW_LONG_MAX_MODEL_LEN)"),
    (r"config/model\.py", r"_verify_quantization|_get_and_verify_dtype|_check_valid_dtype|_get_head_dtype|validate_model_config_after", r".*", PLANNED, "O+T"),
    (r"config/scheduler\.py", r".*", r".*", PLANNED, "O+T (budgets vs max_model_len)"),
    (r"config/cache\.py", r".*", r".*", PLANNED, "O"),
    (r"config/lora\.py", r".*", r".*", PLANNED, "O"),
    (r"config/structured_outputs\.py", r".*", r".*", PLANNED, "O"),
    (r"config/compilation\.py", r".*", r".*", PLANNED, "O"),
    (r"config/vllm\.py", r"_get_quantization_config", r".*", PLANNED, "O+T+HW"),
    (r"config/vllm\.py", r"_set_cudagraph_sizes|validate_block_size|_set_max_num_scheduled_tokens|_reject_mismatched_float_kv_cache|validate_nvfp4_kv_cache_with_mla", r".*", PLANNED, "O+T"),
    (r"config/vllm\.py", r"_validate_v1_model_runner|_validate_v2_model_runner|_validate_adaptive_verification|_validate_batch_sharded_sampling|use_v2_model_runner", r".*", PLANNED, "O+HW (runner selection)"),
    (r"config/vllm\.py", r"__post_init__", r"[Aa]sync scheduling|Fast prefill|per-request-spec-decode|Hybrid KV cache manager", PLANNED, "O+T"),
    (r"config/speculative\.py", r".*", r".*", PLANNED, "O+T+D"),
    (r"engine/arg_utils\.py", r"create_speculative_config", r".*", PLANNED, "O"),
    (r"engine/arg_utils\.py", r"create_engine_config", r"mutually exclusive|num_speculative_tokens|LoRA", PLANNED, "O+T"),
    (r"engine/arg_utils\.py", r"create_engine_config", r"Non-MoE", PLANNED, "O+T"),
    (r"engine/arg_utils\.py", r"_raise_unsupported_error", r".*", PLANNED, "O"),
    (r"config/parallel\.py", r"_validate_parallel_config|_verify_args", r"EPLB|expert|dcp|DCP|PCP|distributed executor", PLANNED, "O+T"),
    # everything else: option families a spec-decode launch rarely sets (profiler, engram, transfer
    # connectors, elastic EP, NUMA, multi-node DP launch, mamba kernels, HiSparse, MoonEP, watermarking...)
    (r".*", r".*", r".*", RARE, "O (+T where the message names the model)"),
]


def verdict(site: dict) -> tuple[str, str]:
    for f, fn, msg, status, why in VERDICTS:
        if re.search(f, site["file"]) and re.search(fn, site["function"]) and re.search(msg, site["message"]):
            return status, why
    return RARE, "O"


# ---- ids -----------------------------------------------------------------------------------------------------

def _existing_fragments() -> list[tuple[str, str]]:
    """(R-id, message fragment) from the hand-written tables of docs/vllm-rules.md (ids < FIRST_NEW_ID)."""
    out = []
    text = RULES_MD.read_text(encoding="utf-8")
    if BEGIN in text:
        text = text.split(BEGIN, 1)[0]
    for line in text.splitlines():
        m = re.match(r"\|\s*(R\d{3})\s*\|", line)
        if not m or int(m.group(1)[1:]) >= FIRST_NEW_ID:
            continue
        cols = line.split(" | ")
        frag_col = cols[4] if len(cols) > 4 else ""
        for frag in re.findall(r"`([^`]{12,})`", frag_col):
            frag = " ".join(frag.split())
            if " " in frag.split("...")[0].strip():  # a phrase, not a bare field name
                out.append((m.group(1), frag))
    return out


def _chunks(template: str) -> list[str]:
    return [c.strip() for c in re.split(r"\{[^{}]*\}", template) if len(c.strip()) >= 15]


def _match_existing(site: dict, frags: list[tuple[str, str]]) -> str | None:
    for rid, frag in frags:
        f = frag.split("...")[0].strip()
        for c in _chunks(site["message"]):
            if (len(f) >= 18 and f in c) or (len(c) >= 20 and c in frag):
                return rid
    return None


def rule_coverage() -> dict[str, list[str]]:
    """Inventory id -> the wizard rules whose docstring Source names it ("R229", "R512-R553")."""
    from wizard.rules.registry import all_rules

    out: dict[str, set[str]] = {}
    for rule in all_rules():
        src = type(rule).doc().sections.get("Source", "")
        ids: set[int] = set()
        for a, b in re.findall(r"\bR(\d{3})(?:\s*[-–]\s*R(\d{3}))?\b", src):
            lo, hi = int(a), int(b or a)
            if hi - lo <= 60:
                ids.update(range(lo, hi + 1))
        for i in ids:
            out.setdefault(f"R{i:03d}", set()).add(rule.id)
    return {k: sorted(v) for k, v in out.items()}


def build(releases=RELEASES) -> dict:
    previous = json.loads(OUT_JSON.read_text()) if OUT_JSON.exists() else {}
    prev_ids = {v["key"]: v["id"] for v in previous.get("validators", [])}
    frags = _existing_fragments()
    merged: dict[str, dict] = {}
    sources = {}
    for rel in releases:
        src = vllm_source(rel)
        if src is None:
            print(f"{rel}: no environment, skipped", file=sys.stderr)
            continue
        sources[rel] = str(src)
        for s in sites_of(src):
            k = site_key(s)
            e = merged.setdefault(k, {"key": k, "file": s["file"], "function": s["function"], "kind": s["kind"],
                                      "exc": s["exc"], "message": s["message"], "condition": s["condition"], "where": {}})
            e["where"][rel] = s["line"]
            e["message"], e["condition"] = s["message"], s["condition"]  # newest text wins
    # pydantic's own field checks (types, Literal values, ge/gt/le/lt): one entry per config class
    from wizard.vllm import releases as data_releases

    for rel in releases:
        if rel not in data_releases.known_releases():
            continue
        for cls, entry in data_releases.load(rel, "constraints.json")["classes"].items():
            if not entry.get("pydantic") or not entry.get("fields"):
                continue
            k = f"fields|{cls}"
            e = merged.setdefault(k, {"key": k, "file": entry.get("file", ""), "function": f"{cls} fields", "kind": "field",
                                      "exc": "ValidationError", "condition": "", "where": {}})
            n_lit = sum(1 for f in entry["fields"].values() if f.get("literals") or f.get("enum"))
            n_bnd = sum(1 for f in entry["fields"].values() if f.get("bounds"))
            e["message"] = (f"pydantic field errors of {cls} ({len(entry['fields'])} fields: {n_lit} Literal/Enum, "
                            f"{n_bnd} bounded): 'Input should be ...', 'Unexpected keyword argument'")
            e["condition"] = f"a value outside a field's type, Literal values or ge/gt/le/lt (wizard/data/vllm/{rel}/constraints.json)"
            e["where"][rel] = entry.get("line", 0)
    used = {int(i[1:]) for i in prev_ids.values()} | {FIRST_NEW_ID - 1}
    nxt = max(used) + 1
    order = sorted(merged.values(), key=lambda e: (e["kind"] == "field", e["file"], min(e["where"].values())))
    for e in order:
        rid = prev_ids.get(e["key"]) or (_match_existing(e, frags) if e["kind"] != "field" else None)
        if rid is None:
            rid, nxt = f"R{nxt}", nxt + 1
        e["id"] = rid
        if e["kind"] == "field":
            e["status"], e["needs"] = PLANNED, "O (generated constraints.json; wizard.vllm.constraints.FieldSpec.violation)"
        else:
            e["status"], e["needs"] = verdict(e)
        e["releases"] = [r for r in releases if r in e["where"]]
    covered = rule_coverage()
    for e in order:
        e["rules"] = covered.get(e["id"], [])
    fields = {e["function"].split()[0]: e["id"] for e in order if e["kind"] == "field"}
    return {"_comment": "Generated by scripts/inventory_vllm_validators.py from the vLLM sources of each release; "
                        "ids are stable across runs. Do not edit by hand.",
            "generator": "scripts/inventory_vllm_validators.py", "sources": sources,
            "validators": sorted(order, key=lambda e: (int(e["id"][1:]), e["file"], e["function"])),
            "field_constraints": fields}


# ---- rendering -------------------------------------------------------------------------------------------------

def _cell(text: str, n: int) -> str:
    t = " ".join(str(text).split())
    t = t if len(t) <= n else t[: n - 1] + "…"
    return t.replace("|", "\\|").replace("`", "'")


def _span(rels: list[str]) -> str:
    idx = [RELEASES.index(r) for r in rels]
    if idx and idx == list(range(idx[0], idx[-1] + 1)):
        return rels[0] if len(rels) == 1 else f"{rels[0]}–{rels[-1]}"
    return ", ".join(rels)


def render_markdown(data: dict) -> str:
    v = data["validators"]
    recent = [e for e in v if {"0.32", "0.33"} & set(e["releases"])]
    by_status: dict[str, int] = {}
    for e in recent:
        by_status[e["status"]] = by_status.get(e["status"], 0) + 1
    with_rule = sum(1 for e in recent if e.get("rules"))
    planned_with_rule = sum(1 for e in recent if e.get("rules") and e["status"] == PLANNED)
    ids = sorted({e["id"] for e in recent}, key=lambda i: int(i[1:]))
    lines = [
        BEGIN,
        "",
        "## 10. Every config-time validator of `vllm/config/*.py` and `vllm/engine/arg_utils.py`, 0.28–0.33 (generated)",
        "",
        "Generated by `python scripts/inventory_vllm_validators.py` from the source of each release (the release "
        "environments of `wizard.vllm.venvs`); the machine-readable copy is `docs/vllm-validators.json` "
        "(`benchmarks/conformance.py` maps vLLM's raise site to these ids). One row per `raise`/`assert` site "
        "(sites with the same function, exception and message are one row across releases) plus one row per config "
        "class for pydantic's own field checks (types, `Literal` values, `ge`/`gt`/`le`/`lt`; the values are in "
        "`wizard/data/vllm/<X.Y>/constraints.json`). Ids below R134 are the hand-written entries of §1 whose message "
        "fragment matches the site. *Condition* is the enclosing `if` tests (`not (...)` for an `else` branch). "
        "*Lines* give the line in each release that has the site; a site missing from a release did not exist there "
        "(or its message changed: then it has a row of its own). *Status*: `planned rule` — options + model facts "
        "(T/D: config.json) + hardware (HW) can predict it; `planned rule (rare option)` — predictable, but for option "
        "families a speculative-decoding launch rarely sets (profiler, Engram, KV/EC transfer connectors, elastic EP, "
        "NUMA binding, multi-node DP launch, Mamba kernels, HiSparse, MoonEP, watermarking ...); `not predictable` — "
        "with the reason. REG = a trait of vLLM's model registry (SupportsPP, SupportsLoRA, pooling/generative), to be "
        "generated per release like the option tables; ENV = environment variables of the launch; FS = paths on the "
        "serving host.",
        "",
        f"In 0.32 or 0.33: **{len(recent)} validators** ({len(ids)} ids): " +
        ", ".join(f"{n} {s}" for s, n in sorted(by_status.items())) +
        f". All releases: {len(v)} rows. *Rule*: the wizard rules whose Source names the id ({with_rule} of the "
        f"{len(recent)} have one; {planned_with_rule} of the {by_status.get(PLANNED, 0)} main planned ones; the pydantic "
        "rows are the generic option rules SD010/SD011/SD015/SD016, SD020-SD026 for the speculative config).",
        "",
    ]
    files = sorted({e["file"] for e in v if e["kind"] != "field"}, key=lambda f: (f.startswith("engine"), f))
    for f in files + ["<fields>"]:
        rows = [e for e in v if (e["file"] == f and e["kind"] != "field") or (f == "<fields>" and e["kind"] == "field")]
        if not rows:
            continue
        title = f"`{f}`" if f != "<fields>" else "pydantic field constraints per config class"
        lines += [f"### 10.{files.index(f) + 1 if f in files else len(files) + 1} {title}", "",
                  "| ID | function | exception | message | condition | lines (release: line) | releases | status | needs / reason | rule |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for e in sorted(rows, key=lambda e: (e["function"], min(e["where"].values()))):
            where = ", ".join(f"{r}: {e['where'][r]}" for r in reversed(RELEASES) if r in e["where"])
            lines.append("| " + " | ".join([
                e["id"], _cell(e["function"], 60), _cell(e["exc"], 24), _cell(e["message"], 220),
                _cell(e["condition"], 200), where, _span(e["releases"]), e["status"], _cell(e["needs"], 160),
                ", ".join(e.get("rules") or [])]) + " |")
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def write(data: dict) -> None:
    # one validator per line: small, diffable
    head = {k: v for k, v in data.items() if k != "validators"}
    body = ",\n".join(json.dumps(e, separators=(",", ":")) for e in data["validators"])
    OUT_JSON.write_text(json.dumps(head, indent=1)[:-2] + ',\n "validators": [\n' + body + "\n]}\n")
    text = RULES_MD.read_text(encoding="utf-8")
    section = render_markdown(data)
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1] if END in rest else ""
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RULES_MD.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print the 0.32 sites and exit")
    a = ap.parse_args(argv)
    if a.list:
        for s in sites_of(vllm_source("0.32")):
            print(f"{s['file']}:{s['line']} {s['function']} {s['exc']}: {s['message'][:100]}")
        return 0
    data = build()
    write(data)
    recent = [e for e in data["validators"] if {"0.32", "0.33"} & set(e["releases"])]
    planned = sum(e["status"].startswith("planned") for e in recent)
    print(f"wrote {OUT_JSON} and {RULES_MD}: {len(data['validators'])} rows; 0.32/0.33: {len(recent)} validators, "
          f"{planned} planned ({sum(e['status'] == PLANNED for e in recent)} main + "
          f"{sum(e['status'] == RARE for e in recent)} rare options), {len(recent) - planned} not predictable", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
