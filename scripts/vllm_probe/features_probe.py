"""Inventory of one release's checks that involve speculative decoding (run by gen_mechanism_tables.py).

    python features_probe.py VLLM_ROOT

Parses (AST only, nothing imported) every module of the release except model definitions and
kernels, and records each ``if`` whose test mentions speculation (``speculative_config``,
``num_speculative_tokens``, ``use_eagle()``, ``draft``...) and whose body raises, logs a warning,
or lists an unsupported feature -- with file, line, function, the test's source and the message.
``wizard/mechanisms/method_support.py`` answers "does feature X combine with speculation in
release R" from this inventory. Also records a few release facts read from the source:
``draft_lm_head_quantization`` and ``moe_backend`` fields, the quantization methods a drafter's
``quantization`` accepts.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

SPEC = re.compile(r"speculative|spec_config|spec_decode|num_spec|use_eagle|draft|eagle|proposer", re.I)
SKIP = ("model_executor/models/", "third_party/", "vllm_flash_attn/", "kernels/", "benchmarks/", "tests/")


def message_of(st: ast.stmt) -> str:
    parts = []
    for c in ast.walk(st):
        if isinstance(c, ast.Constant) and isinstance(c.value, str):
            parts.append(c.value)
        elif isinstance(c, ast.FormattedValue):
            parts.append("{" + ast.unparse(c.value) + "}")
    return "".join(parts)


def kind_of(st: ast.stmt) -> str | None:
    if isinstance(st, ast.Raise):
        return "error"
    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        f = ast.unparse(st.value.func)
        if re.search(r"logger\.(warning|warn|warning_once|info_once|info)", f) or f.endswith("warnings.warn"):
            return "warning" if "warn" in f else "info"
        if f.endswith(".append") and "unsupported" in f:
            return "unsupported"
    if isinstance(st, ast.Assert):
        return "error"
    return None


def scan(root: Path):
    out = []
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root).as_posix()
        if any(rel.startswith(s) or f"/{s}" in rel for s in SKIP):
            continue
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for n in ast.walk(fn):
                if not isinstance(n, ast.If):
                    continue
                test = ast.unparse(n.test)
                for st in n.body:
                    k = kind_of(st)
                    if k is None:
                        continue
                    msg = message_of(st)
                    if not (SPEC.search(test) or SPEC.search(msg)):
                        break
                    out.append({"file": rel, "line": n.lineno, "function": fn.name, "kind": k,
                                "test": test[:400], "message": re.sub(r"\s+", " ", msg)[:400]})
                    break
    return out


def enclosing_if(tree: ast.AST, call_name: str) -> str | None:
    """Source of the innermost ``if`` test around the first call to ``call_name``."""
    best = None
    for n in ast.walk(tree):
        if isinstance(n, ast.If):
            for c in ast.walk(ast.Module(body=n.body, type_ignores=[])):
                if isinstance(c, ast.Call) and ast.unparse(c.func).endswith(call_name):
                    best = ast.unparse(n.test)  # walk is breadth first: the last hit is the innermost
    return best


def speculator_configs(root: Path) -> dict | None:
    """0.34+: the per-speculator ``SpeculatorConfig`` classes (AST of
    ``vllm/v1/worker/gpu/spec_decode/speculator_config.py`` and ``*/config.py``): for each method of
    ``_CONFIG_BY_METHOD``, its class, class attributes looked up through the bases and the source of
    its config file. None before 0.34 (no ``speculator_config.py``)."""
    pkg = root / "v1" / "worker" / "gpu" / "spec_decode"
    scf = pkg / "speculator_config.py"
    if not scf.is_file():
        return None
    classes: dict[str, tuple[ast.ClassDef, str]] = {}
    for f in [scf, pkg / "extract_hidden_states_config.py", *sorted(pkg.glob("*/config.py"))]:
        if f.is_file():
            src = f.read_text(encoding="utf-8")
            for n in ast.parse(src).body:
                if isinstance(n, ast.ClassDef):
                    classes[n.name] = (n, f.relative_to(root).as_posix())
    by_method: dict[str, str] = {}
    for n in ast.walk(ast.parse(scf.read_text(encoding="utf-8"))):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
        if any(ast.unparse(t) == "_CONFIG_BY_METHOD" for t in targets) and isinstance(n.value, ast.Dict):
            for k, v in zip(n.value.keys, n.value.values):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Call) and len(v.args) == 2:
                    by_method[k.value] = ast.literal_eval(v.args[1])

    def attr(cls: str, name: str, depth: int = 0):
        node = classes.get(cls, (None, None))[0]
        if node is None or depth > 8:
            return None
        for st in node.body:
            tgt = st.target if isinstance(st, ast.AnnAssign) else (st.targets[0] if isinstance(st, ast.Assign) else None)
            if isinstance(tgt, ast.Name) and tgt.id == name and st.value is not None:
                return ast.unparse(st.value)
        for b in node.bases:
            if isinstance(b, ast.Name):
                v = attr(b.id, name, depth + 1)
                if v is not None:
                    return v
        return None

    def options(cls: str, depth: int = 0) -> set[str]:
        """``supported_options`` of a config class, evaluated from its source (sets, ``|``, ``-``,
        ``frozenset(...)`` and ``Other.supported_options``)."""
        src = attr(cls, "supported_options")
        if src is None or depth > 8:
            return set()

        def ev(n) -> set[str]:
            if isinstance(n, ast.Call) and ast.unparse(n.func) == "frozenset":
                return ev(n.args[0]) if n.args else set()
            if isinstance(n, (ast.Set, ast.List, ast.Tuple)):
                return {e.value for e in n.elts if isinstance(e, ast.Constant)}
            if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.BitOr, ast.Sub)):
                a, b = ev(n.left), ev(n.right)
                return a | b if isinstance(n.op, ast.BitOr) else a - b
            if isinstance(n, ast.Attribute) and n.attr == "supported_options" and isinstance(n.value, ast.Name):
                return options(n.value.id, depth + 1)
            return set()

        return ev(ast.parse(src, mode="eval").body)

    return {"classes": classes, "by_method": by_method, "attr": attr, "options": options}


def drafter_context(root: Path) -> dict:
    """How the release sizes a drafter's positions (vllm/config/speculative.py, vllm/config/vllm.py)."""
    spec_file = next((p for p in (root / "config" / "speculative.py", root / "config" / "__init__.py",
                                  root / "config.py") if p.is_file()), None)  # config.py before 0.10.1
    spec_src = spec_file.read_text(encoding="utf-8") if spec_file else ""
    vllm_file = root / "config" / "vllm.py"
    vllm_src = vllm_file.read_text(encoding="utf-8") if vllm_file.is_file() else spec_src
    tree = ast.parse(spec_src)
    spec_rel = spec_file.relative_to(root).as_posix() if spec_file else ""
    readers = []
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root).as_posix()
        if rel in ("config/speculative.py", spec_rel) or any(rel.startswith(x) for x in SKIP):
            continue
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for i, line in enumerate(text.splitlines(), 1):
            if "draft_model_config.max_model_len" in line and not line.strip().startswith("#"):
                readers.append(f"{rel}:{i}")
    cache_only = None
    m = re.search(r"^_CACHE_ONLY_ROPE_TYPES\s*=\s*(.*?)\n\n", spec_src, re.S | re.M)
    if m:
        cache_only = sorted(set(re.findall(r"[\"']([a-z0-9_]+)[\"']", m.group(1))))
    raise_cond = enclosing_if(tree, "_maybe_override_draft_max_position_embeddings")
    sc = speculator_configs(root)
    if raise_cond is None and sc is not None:
        # 0.34+: DraftModelSpeculatorConfig.configure raises the draft's positions when its config
        # class has shares_target_positions; written as the 0.33-style method test
        keep = sorted(m for m, c in sc["by_method"].items() if sc["attr"](c, "shares_target_positions") == "False")
        if keep:
            raise_cond = (f"self.method != {keep[0]!r}" if len(keep) == 1 else f"self.method not in {tuple(keep)!r}")
    return {
        "v1_length_gate": v1_length_gate(root),
        "raise_positions_condition": raise_cond,
        "raise_positions_rope_only": "_rope_only_sizes_cache" in spec_src,
        "cache_only_rope_types": cache_only,
        "limit_max_model_len_to_draft": "def _limit_max_model_len_to_draft" in vllm_src,
        "limit_requires_v2": "not self.use_v2_model_runner" in vllm_src.split("def _limit_max_model_len_to_draft")[-1][:1500]
        if "def _limit_max_model_len_to_draft" in vllm_src else None,
        "draft_max_model_len_min_of_target": "_maybe_override_draft_max_model_len" in spec_src,
        "draft_max_model_len_readers": readers,
    }


def v1_length_gate(root: Path) -> dict | None:
    """The V1 model runner's drafter length gate (``vllm/v1/worker/gpu_model_runner.py``): it keeps
    ``effective_drafter_max_model_len`` from ``draft_model_config.max_model_len`` (through a local
    alias, which is why a plain text search for readers misses it) and, when the longest sequence of
    the batch plus the draft tokens exceeds it, zeroes the draft tokens for the WHOLE batch instead
    of running the drafter. None when the release has no such gate."""
    f = root / "v1" / "worker" / "gpu_model_runner.py"
    if not f.is_file():
        return None
    src = f.read_text(encoding="utf-8")
    tree = ast.parse(src)
    if "effective_drafter_max_model_len" not in src:
        return None
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_input_fits_in_drafter"), None)
    if fn is not None:
        body = ast.unparse(fn)
        line = next((i for i, l in enumerate(src.splitlines(), 1) if "input_fits_in_drafter = self._input_fits_in_drafter" in l), None)
        return {
            "where": f"v1/worker/gpu_model_runner.py:{fn.lineno} (_input_fits_in_drafter)",
            "caller_line": line,
            "extra_dflash_token": "use_dflash()" in body,
            "batch_wide": "max_seq_len" in body,
        }
    # 0.11-0.23: the same gate written inline in the method that proposes draft tokens
    # (``input_fits_in_drafter = spec_decode_common_attn_metadata and (max_seq_len + num_spec_tokens
    # <= effective_drafter_max_model_len)``)
    for f in ast.walk(tree):
        if not isinstance(f, ast.FunctionDef):
            continue
        for n in ast.walk(f):
            if (isinstance(n, ast.Assign) and any(ast.unparse(t) == "input_fits_in_drafter" for t in n.targets)
                    and "effective_drafter_max_model_len" in ast.unparse(n.value)):
                body = ast.unparse(n.value)
                return {
                    "where": f"v1/worker/gpu_model_runner.py:{n.lineno} ({f.name}, inline input_fits_in_drafter)",
                    "caller_line": n.lineno,
                    "extra_dflash_token": "use_dflash()" in body,
                    "batch_wide": "max_seq_len" in body or "seq_lens.max()" in body,
                }
    return None


def lm_head_quantization(root: Path) -> dict | None:
    spec_src = (root / "config" / "speculative.py").read_text(encoding="utf-8")
    m = re.search(r"draft_lm_head_quantization:\s*Literal\[([^\]]*)\]", spec_src)
    if not m:
        return None
    tree = ast.parse(spec_src)
    cond = None
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and "draft_lm_head_quantization is not None" in ast.unparse(n.test):
            inner = next((x for x in n.body if isinstance(x, ast.If)), None)
            if inner is not None:
                cond = ast.unparse(inner.test)
                break
    vllm_src = (root / "config" / "vllm.py").read_text(encoding="utf-8")
    extra = {}
    sc = speculator_configs(root)
    if cond is None and sc is not None:
        # 0.34+: the generic check of SpeculativeConfig.__post_init__ over _METHOD_SPECIFIC_OPTIONS
        cond = "'draft_lm_head_quantization' not in speculator_config.supported_options"
        opt = "draft_lm_head_quantization"
        extra["accepted_methods"] = sorted(m for m, c in sc["by_method"].items() if opt in sc["options"](c))
        # configs a draft model declares that drop it again (Gemma4MTPSpeculatorConfig: MTP minus the option)
        extra["refused_by_configs"] = sorted(c for c in sc["classes"] if opt not in sc["options"](c)
                                             and any(opt in sc["options"](b.id) for b in sc["classes"][c][0].bases
                                                     if isinstance(b, ast.Name)))
        ds = pkg_src(root, "dspark")
        mm = re.search(r"if not \{([^}]*)\} & set\(\s*draft\.architectures", ds)
        extra["dspark_architectures"] = sorted(re.findall(r"[\"'](\w+)[\"']", mm.group(1))) if mm else None
        extra["unsupported_message"] = "{option} is not supported with speculative method {method!r}."
    return {
        "values": re.findall(r"[\"']([a-z0-9_]+)[\"']", m.group(1)),
        "rejected_when": cond,
        **extra,
        "v1_unsupported": "draft lm_head quantization" in vllm_src,
        "needs_shared_lm_head": any("needs a drafter that shares the target lm_head" in f.read_text(encoding="utf-8")
                                    for f in (root / "v1" / "worker").rglob("*.py")),
        "needs_model_dtype_head": "needs the lm_head to run in the" in spec_src
        or "needs the lm_head to run in the" in pkg_src(root, "eagle"),  # 0.34+: eagle/config.py
    }


def pkg_src(root: Path, speculator: str) -> str:
    """Source of ``vllm/v1/worker/gpu/spec_decode/<speculator>/config.py`` ('' when absent)."""
    f = root / "v1" / "worker" / "gpu" / "spec_decode" / speculator / "config.py"
    return f.read_text(encoding="utf-8") if f.is_file() else ""


def cpu_selection(root: Path) -> dict:
    """Checks inside ``CpuPlatform.get_attn_backend_cls`` (vllm/platforms/cpu.py)."""
    tree = ast.parse((root / "platforms" / "cpu.py").read_text(encoding="utf-8"))
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "get_attn_backend_cls"), None)
    src = ast.unparse(fn) if fn else ""
    allowed = None
    for n in ast.walk(fn) if fn else []:
        if isinstance(n, ast.Compare) and ast.unparse(n.left) == "kv_cache_dtype" and isinstance(n.ops[0], ast.NotIn):
            try:
                allowed = [x for x in ast.literal_eval(n.comparators[0]) if x is not None]
            except ValueError:
                pass
    return {"mla_kv_cache_dtypes": allowed, "cpu_attn_checks_kv_cache_dtype": "supports_kv_cache_dtype" in src}


def xpu_selection(root: Path) -> dict:
    """Branches of ``XPUPlatform.get_attn_backend_cls`` (vllm/platforms/xpu.py) that differ by release:
    ``mm_prefix_to_triton`` -- multimodal prefix-LM / batch-invariant layouts go to TRITON_ATTN
    before a pinned backend is checked (absent in 0.20-0.24)."""
    f = root / "platforms" / "xpu.py"
    fn = _func(ast.parse(f.read_text(encoding="utf-8")), "get_attn_backend_cls") if f.exists() else None
    src = ast.unparse(fn) if fn else ""
    return {"mm_prefix_to_triton": "use_mm_prefix" in src}


def drafter_quantization(root: Path) -> dict:
    """Where a drafter's own ``quantization_config`` is honoured or replaced (source text):

    * ``dflash_fused_kv_ignores_quant``: ``qwen3_dflash.py`` fuses the context-KV projection by
      slicing ``qkv_proj.weight`` and calling ``F.linear`` without checking the layer's
      ``quant_method`` (a weight-quantized DFlash drafter fails at profiling);
    * ``dspark_takes_target_quantization``: ``SpeculativeConfig`` sets a DeepSeek-V4 DSpark
      drafter's ``quantization`` to the target's whatever its checkpoint says;
    * ``draft_quant_config_helper``: ``get_draft_quant_config`` exists (drafter layers are built
      with the drafter's own quantization config).
    """
    spec_src = (root / "config" / "speculative.py").read_text(encoding="utf-8")
    dflash = root / "model_executor" / "models" / "qwen3_dflash.py"
    dsrc = dflash.read_text(encoding="utf-8") if dflash.exists() else ""
    models = root / "model_executor" / "models"
    return {
        "dflash_fused_kv_ignores_quant": bool(dsrc) and "qkv_proj.weight[" in dsrc and "UnquantizedLinearMethod" not in dsrc,
        "dspark_takes_target_quantization": bool(re.search(
            r"draft_model_config\.quantization\s*=\s*\(?\s*self\.target_model_config\.quantization", spec_src))
        # 0.34+: DSparkSpeculatorConfig.adapt_draft_model_config (drafts without their own config)
        or bool(re.search(r"draft\.quantization\s*=\s*target\.quantization", pkg_src(root, "dspark"))),
        "draft_quant_config_helper": any("def get_draft_quant_config" in f.read_text(encoding="utf-8")
                                         for f in models.glob("*.py")),
    }


def _func(tree: ast.AST, name: str):
    return next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), None)


def backend_selection(root: Path) -> dict:
    """How the release hands attention-backend choices between target and drafter (AST):

    * ``drafter_inherits_target_backend``: ``_create_draft_vllm_config``
      (``vllm/v1/spec_decode/llm_base_proposer.py``) passes the target's ``attention_config``
      unchanged (no ``attention_config=`` replacement), so the drafter's layers select with the
      target's pinned/locked backend (0.20);
    * ``non_causal_every_layer``: ``get_attn_backend`` (``vllm/v1/attention/selector.py``)
      derives ``use_non_causal`` from the speculative method for EVERY layer, target included;
      the methods named in that test (0.20: ``['dflash']``), else None;
    * ``target_backend_locks``: ``VerifyAndUpdateConfig`` classes of
      ``vllm/model_executor/models/config.py`` that set ``attention_config.backend`` to a fixed
      backend when the user set none, keyed by the architectures ``MODELS_CONFIG_MAP`` maps to
      them, with what the condition reads: ``head_dim_over`` (the constant ``max_head_dim`` must
      exceed), ``fa4_gate`` (the lock applies only when FlashAttention 4 is unavailable),
      ``heterogeneous_head_dims`` and the condition's source.
    """
    out: dict = {"drafter_inherits_target_backend": None, "non_causal_every_layer": None, "target_backend_locks": []}
    # 0.20+: llm_base_proposer.py; 0.19: the same method in eagle.py; 0.18 and older: eagle.py's
    # _get_model/load_model builds the drafter with get_model(vllm_config=self.vllm_config), the
    # target's config itself (its attention_config included)
    for name in ("llm_base_proposer.py", "eagle.py"):
        prop = root / "v1" / "spec_decode" / name
        if not prop.exists():
            continue
        tree = ast.parse(prop.read_text(encoding="utf-8"))
        fn = _func(tree, "_create_draft_vllm_config")
        if fn is not None:
            kws = {k.arg for n in ast.walk(fn) if isinstance(n, ast.Call) for k in n.keywords}
            out["drafter_inherits_target_backend"] = "attention_config" not in kws
            break
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("get_model")]
        if any(ast.unparse(k.value) == "self.vllm_config" for c in calls for k in c.keywords if k.arg == "vllm_config"):
            out["drafter_inherits_target_backend"] = True
            break
    if out["drafter_inherits_target_backend"] is None and not (root / "v1" / "worker" / "gpu_model_runner.py").exists():
        # 0.34+ (V2 only): SpeculativeConfig.apply_draft_overrides / BaseSpeculator.attn_vllm_config
        # replace attention_config.backend only when speculative_config.attention_backend is set
        spec_tree = ast.parse((root / "config" / "speculative.py").read_text(encoding="utf-8"))
        ov = next((n for n in ast.walk(spec_tree) if isinstance(n, ast.Assign)
                   and any(ast.unparse(t) == "_DRAFT_VLLM_CONFIG_OVERRIDES" for t in n.targets)), None)
        if ov is not None:
            rows = [ast.literal_eval(e) for e in getattr(ov.value, "elts", []) if isinstance(e, ast.Tuple)]
            out["drafter_inherits_target_backend"] = any(r[1] == "attention_config" for r in rows)
    sel = root / "v1" / "attention" / "selector.py"
    if sel.exists():
        fn = _func(ast.parse(sel.read_text(encoding="utf-8")), "get_attn_backend")
        for n in ast.walk(fn) if fn else []:
            if isinstance(n, ast.Assign) and any(ast.unparse(t) == "use_non_causal" for t in n.targets) \
                    and "speculative_config" in ast.unparse(n.value):
                out["non_causal_every_layer"] = sorted({c.value for c in ast.walk(n.value)
                                                        if isinstance(c, ast.Constant) and isinstance(c.value, str)})
    cfg = root / "model_executor" / "models" / "config.py"
    if cfg.exists():
        tree = ast.parse(cfg.read_text(encoding="utf-8"))
        archs: dict[str, list[str]] = {}
        for n in ast.walk(tree):
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(n.value, ast.Dict) \
                    and "MODELS_CONFIG_MAP" in ast.unparse(n.targets[0] if isinstance(n, ast.Assign) else n.target):
                for k, v in zip(n.value.keys, n.value.values):
                    if isinstance(k, ast.Constant):
                        archs.setdefault(ast.unparse(v), []).append(k.value)
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            fn = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "verify_and_update_config"), None)
            if fn is None:
                continue
            fsrc = ast.unparse(fn)
            parents = {c: p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
            for n in ast.walk(fn):
                if not (isinstance(n, ast.Assign) and ast.unparse(n.targets[0]).endswith("attention_config.backend")
                        and isinstance(n.value, ast.Attribute) and ast.unparse(n.value).startswith("AttentionBackendEnum.")):
                    continue
                tests, child, p = [], n, parents.get(n)
                while p is not None and p is not fn:
                    if isinstance(p, ast.If):  # an elif/else branch holds when the test is false
                        t = ast.unparse(p.test)
                        tests.append(t if child in p.body else f"not ({t})")
                    child, p = p, parents.get(p)
                cond = " and ".join(reversed(tests))
                over = re.search(r"max_head_dim\s*>\s*(\d+)", cond)
                out["target_backend_locks"].append({
                    "config_class": cls.name, "architectures": sorted(archs.get(cls.name, [])),
                    "backend": n.value.attr, "condition": cond,
                    "heterogeneous_head_dims": "global_head_dim" in fsrc or "head_dims" in fsrc,
                    "head_dim_over": int(over.group(1)) if over else None,
                    "fa4_gate": "is_fa_version_supported(4)" in fsrc,
                    "only_when_unset": "backend is None" in fsrc or "backend in (None" in fsrc,
                })
    return out


def drafter_layer_quant(root: Path) -> dict:
    """Per drafter architecture of ``_SPECULATIVE_DECODING_MODELS``
    (``vllm/model_executor/models/registry.py``): which quantization config its module builds the
    drafter's linear layers with -- 'draft' (``get_draft_quant_config``: the drafter checkpoint's
    own), 'none' (every linear layer / MLP gets ``quant_config=None`` or no quant_config: a
    quantized drafter checkpoint cannot load), 'target' (the module reads
    ``vllm_config.quant_config``: the target's) or 'unknown' (built by another module's class).
    Returns {arch: {module, layer_quant}}."""
    reg = (root / "model_executor" / "models" / "registry.py").read_text(encoding="utf-8")
    tree = ast.parse(reg)
    entries: dict[str, str] = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(n.value, ast.Dict) \
                and "_SPECULATIVE_DECODING_MODELS" in ast.unparse(n.targets[0] if isinstance(n, ast.Assign) else n.target):
            for k, v in zip(n.value.keys, n.value.values):
                if isinstance(k, ast.Constant) and isinstance(v, ast.Tuple) and len(v.elts) > 1 \
                        and all(isinstance(e, ast.Constant) for e in v.elts[:2]):
                    entries[k.value] = (v.elts[0].value, v.elts[1].value)
    cache: dict[tuple, tuple[str | None, str | None]] = {}

    def locate(module: str, cls: str) -> Path | None:
        """model_executor/models/<module>.py, or for a package path ('vllm.models.deepseek_v4')
        the file under that package that defines ``cls``."""
        if not module.startswith("vllm."):
            f = root / "model_executor" / "models" / f"{module}.py"
            return f if f.exists() else None
        base = root.joinpath(*module.split(".")[1:])
        files = [base.with_suffix(".py")] if base.with_suffix(".py").exists() else sorted(base.rglob("*.py"))
        return next((f for f in files if f"class {cls}(" in f.read_text(encoding="utf-8")), None)

    def classify(module: str, cls: str) -> tuple[str | None, str | None]:
        f = locate(module, cls)
        if f is None:
            return None, None
        return _layer_quant(f.read_text(encoding="utf-8")), str(f.relative_to(root.parent))

    def _layer_quant(src: str) -> str:
        if "get_draft_quant_config(" in src:
            return "draft"
        tree = ast.parse(src)
        local = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        # layers built from other modules (the leaves of this module's tree); Attention takes the
        # quant config for its KV-cache scales only
        leaves = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) not in local
                  and ast.unparse(n.func) != "Attention"]
        values = [ast.unparse(k.value) for n in leaves for k in n.keywords if k.arg == "quant_config"]
        # a leaf handed the whole vllm_config reads vllm_config.quant_config (the target's) itself
        gets_cfg = any(ast.unparse(a) == "vllm_config" for n in leaves for a in [*n.args, *(k.value for k in n.keywords)])
        layers = [n for n in leaves if re.search(r"(Linear|MLP|MoE)$", ast.unparse(n.func))]
        if layers and not gets_cfg and all(v == "None" for v in values):
            return "none"
        if re.search(r"\bvllm_config\.quant_config\b", src):
            return "target"
        return "unknown"  # built by a base class or helper of another module

    out = {}
    for arch, key in sorted(entries.items()):
        if key not in cache:
            cache[key] = classify(*key)
        kind, path = cache[key]
        if kind is not None:
            out[arch] = {"module": path, "layer_quant": kind}
    return out


def main():
    root = Path(sys.argv[1])
    checks = scan(root)
    spec_src = (root / "config" / "speculative.py").read_text(encoding="utf-8")
    q = re.search(r"^    quantization: .*?\n\s+\"\"\"(.*?)\"\"\"", spec_src, re.M | re.S)
    facts = {
        "speculative_quantization_doc": re.sub(r"\s+", " ", q.group(1)).strip() if q else None,
        "moe_backend_field": "moe_backend:" in spec_src,
        "drafter_context": drafter_context(root),
        "draft_lm_head_quantization": lm_head_quantization(root),
        "cpu_selection": cpu_selection(root),
        "xpu_selection": xpu_selection(root),
        "mtp_inherits_target_quantization": "self.quantization = self.target_model_config.quantization" in spec_src
        # 0.34+: MTPSpeculatorConfig.default_model
        or "spec.quantization = target.quantization" in pkg_src(root, "mtp"),
        "drafter_quantization": drafter_quantization(root),
        "backend_selection": backend_selection(root),
        "drafter_layer_quant": drafter_layer_quant(root),
    }
    json.dump({"facts": facts, "checks": checks}, sys.stdout)


if __name__ == "__main__":
    main()
