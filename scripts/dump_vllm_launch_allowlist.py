"""Regenerate wizard/data/vllm/<X.Y>/launch_allowlist.json: every `vllm serve` option and every
JSON sub-key of its config options, classified *safe* (may launch) or *opt_in* (imports code,
reads files or folders, opens listeners or outbound endpoints), with the source line that
decides it; plus the ledger of every code/file sink in the release's source and what feeds it.

    python scripts/dump_vllm_launch_allowlist.py --source .venv-test/lib/python3.11/site-packages/vllm --release 0.32
    python scripts/dump_vllm_launch_allowlist.py --source /tmp/src33/vllm --release 0.33   # an unpacked wheel

Nothing is imported: the release's source is read with ``ast`` (so an unpacked wheel of any
release works, CUDA build or not), and its option list and help-text verdicts come from the
generated ``serve_options.json`` / ``launch_policy.json`` of the same release.

How an option is classified (first rule that applies; :data:`RULES` in the output says the same):

1. ``secret``: its dest is a credential (``api_key``, ``hf_token``...): launched, but the value
   travels as an environment variable and is redacted everywhere (wizard.privacy).
2. ``opt_in`` / ``code`` or ``file``: the sink scan found the dest (``args.X``, ``self.X`` of
   ``EngineArgs``/``FrontendArgs``, ``X=`` keyword of an engine call) feeding
   ``resolve_obj_by_qualname``, ``import_module``, ``spec_from_file_location``, ``exec``/``eval``,
   ``load_plugins_by_group``, a ``trust_remote_code=`` argument, ``open()``, ``os.listdir``,
   ``yaml.safe_load``... (``source``: the file and line of that call).
3. ``opt_in``: the help text says so (``launch_policy.json``, from vLLM's own help texts:
   import paths, plugins, templates, files, "security risk").
4. ``opt_in`` / ``network``: the dest opens or reaches an address (host, address, endpoint, url,
   uri, socket, zmq) other than the launcher's own ``--host``/``--port``.
5. ``opt_in``: the name says the value is a path, module, class or plugin.
6. ``safe``: the value cannot carry text: a switch, an ``int``/``float``/human-readable number,
   or an option with argparse ``choices``.
7. ``safe``: JSON of a config class whose every sub-key is classified below (``nested``).
8. ``safe`` / plain text: on :data:`PLAIN_TEXT` (reviewed against the source: the text is a
   name looked up in a registry, a label, or a version string).
9. otherwise ``opt_in`` (unreviewed free text). An option the table does not know at all is
   ``opt_in`` at launch time (wizard.launch_policy).

Sub-keys (``nested``, ``DEST.FIELD``) get the same rules from the config dataclass's field
annotation (``int``/``float``/``bool``/``Literal`` -> safe) and its docstring; a key the class
does not have is ``opt_in`` at launch time.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "wizard" / "data" / "vllm"

#: calls that import or run code named by a value
CODE_SINKS = {"resolve_obj_by_qualname", "import_module", "spec_from_file_location", "exec", "eval", "__import__",
              "load_plugins_by_group", "import_from_path", "import_pynvml", "exec_module", "import_reasoning_parser",
              "import_tool_parser", "load_module_from_path", "dictConfig"}
#: calls that read or write files or folders named by a value
FILE_SINKS = {"open", "listdir", "scandir", "walk", "safe_load", "load_file", "read_text", "read_bytes", "glob",
              "load_config_file", "snapshot_download", "hf_hub_download", "load_chat_template", "makedirs",
              "maybe_convert_json_str_or_file", "isfile", "isdir", "exists", "load_lora_adapter"}
#: plain text reviewed against the source: a name looked up in a registry, a label, a version
PLAIN_TEXT = {
    "served_model_name": "names returned by /v1/models and matched against a request's `model` "
                         "(vllm/entrypoints/openai/models/serving.py)",
    "tool_call_parser": "looked up in ToolParserManager's registered names; code from a file needs --tool-parser-plugin "
                        "(vllm/tool_parsers/abstract_tool_parser.py get_tool_parser)",
    "reasoning_parser": "looked up in ReasoningParserManager's registered names; a file needs --reasoning-parser-plugin "
                        "(vllm/reasoning/abs_reasoning_parsers.py get_reasoning_parser)",
    "revision": "a Hub revision (branch, tag or commit) of the model",
    "tokenizer_revision": "a Hub revision of the tokenizer",
    "code_revision": "a Hub revision of remote code, used only with --trust-remote-code (itself opt-in)",
    "hf_overrides": "a dict merged into the Hugging Face config; remote code from it still needs --trust-remote-code "
                    "(vllm/config/model.py)",
    "override_generation_config": "sampling defaults merged into the generation config (vllm/config/model.py)",
    "root_path": "the URL prefix under a proxy (FastAPI root_path)",
    "response_role": "the role name returned in chat completions",
    "default_chat_template_kwargs": "keyword arguments passed to the chat template (no template text)",
    "seed": "a number", "tokenizer_mode": "a tokenizer registry name (vllm/tokenizers/registry.py)",
    "quantization": "a name in vLLM's quantization registry (vllm/model_executor/layers/quantization)",
    "load_format": "a name in vLLM's model-loader registry (vllm/model_executor/model_loader)",
    "dtype": "a dtype name", "kv_cache_dtype": "a dtype name", "model_impl": "an implementation name",
    "speculative_config": "JSON whose sub-keys are classified one by one (nested)",
    "limit_mm_per_prompt": "per-modality counts", "mm_processor_kwargs": "keyword arguments of the HF processor",
    "max_model_len": "a length", "max_num_batched_tokens": "a count", "enable_log_requests": "a switch",
    "uvicorn_log_level": "a log level name", "disable_uvicorn_access_log": "a switch",
    "attention_backend": "a backend name in vLLM's registry (vllm/v1/attention/backends/registry.py)",
    "block_size": "a size", "prefix_caching_hash_algo": "a hash name", "cpu_offload_gb": "a size",
    "long_prefill_token_threshold": "a count", "max_num_seqs": "a count", "gpu_memory_utilization": "a fraction",
    "generation_config": "'auto', 'vllm' or a folder: checked as a path by the folder policy",
    "tokenizer": "a Hub id or a folder: checked as a path by the folder policy",
    "model": "a Hub id or a folder: checked as a path by the folder policy",
    "model_tag": "a Hub id or a folder: checked as a path by the folder policy",
    "hf_config_path": "a Hub id or a folder: checked as a path by the folder policy",
    "tokenizer_pool_type": "a pool name",
    "structured_outputs_config": "JSON whose sub-keys are classified one by one (nested)",
    "logprobs_mode": "a mode name", "pooler_config": "JSON whose sub-keys are classified one by one (nested)",
    "compilation_config": "JSON whose sub-keys are classified one by one (nested)",
    "attention_config": "JSON whose sub-keys are classified one by one (nested)",
    "kernel_config": "JSON whose sub-keys are classified one by one (nested)",
    "kv_transfer_config": "JSON whose sub-keys are classified one by one (nested)",
    "kv_events_config": "JSON whose sub-keys are classified one by one (nested)",
    "ec_transfer_config": "JSON whose sub-keys are classified one by one (nested)",
    "eplb_config": "JSON whose sub-keys are classified one by one (nested)",
    "additional_config": "platform-specific settings read by the platform plugin (a dict of plain values)",
    "chat_template_content_format": "a format name",
    "optimization_level": "a level read by CompilationConfig (0-3 or a name)",
    "mamba_backend": "a backend name in vLLM's registry", "mm_encoder_attn_backend": "a backend name in vLLM's registry",
    "data_parallel_backend": "'mp' or 'ray' (vllm/config/parallel.py)", "config_format": "a config format name",
    "kv_cache_dtype_skip_layers": "layer names", "show_hidden_metrics_for_version": "a version string",
    "numa_bind_cpus": "a CPU list", "pt_load_map_location": "a torch device map", "device_ids": "device indices",
    "lora_target_modules": "names of the model's layers that LoRA adapts (no import)",
    "custom_histogram_buckets": "numbers", "sleep_preserve_parameter_names": "parameter names",
    "offload_params": "parameter names", "cpu_offload_params": "parameter names",
    "topic": "a message topic name", "kv_buffer_device": "a device name", "engine_id": "an identifier",
    "custom_ops": "names of vLLM's own custom ops (+name / -name)", "splitting_ops": "names of torch ops",
    "compile_sizes": "sizes", "disabled_custom_ops": "op names", "enabled_custom_ops": "op names",
    "static_all_moe_layers": "layer names", "synthetic_acceptance_rates": "numbers",
    "tool_parser_plugin": None, "reasoning_parser_plugin": None,  # code: never plain
}
#: dests that are the launcher's own (replaced by it) or secrets handled by wizard.privacy
LAUNCHER_OWN = {"host": "set by the launcher (127.0.0.1 unless the local user chose otherwise)",
                "port": "set by the launcher"}
SECRET_DESTS = re.compile(r"(?:^|_)(?:api_key|token|secret|password)s?$")
NETWORK = re.compile(r"(?:^|_)(?:address|addr|endpoint|url|uri|socket|zmq|ip|hostname|master_addr|host)s?(?:_|$)")
NAME_RISK = re.compile(r"(?:^|_)(?:path|paths|dir|dirs|file|files|folder|module|modules|cls|class|plugin|plugins|"
                       r"template|script|qualname|backend_cls|lib|library|so)(?:_|$)")
TYPED = re.compile(r"^(?:optional_type\()?(?:int|float|human_readable_int|human_readable_int_or_auto|bool)\)?$")
_TYPED_LEAF = re.compile(r"^(?:int|float|bool|None|PositiveInt|NonNegativeInt|PositiveFloat|NonNegativeFloat|"
                         r"[A-Z]\w*(?:Enum|Type|Mode|Level|Policy|Method|Kind|Dtype|DType|Format|Backend|Role))$")
_CONTAINERS = {"list", "tuple", "set", "frozenset", "Optional", "Union", "Sequence", "dict", "Annotated"}


def typed_annotation(ann: str) -> bool:
    """Whether a field annotation admits no free text: numbers, switches, Literal choices, enum-like
    names (``CUDAGraphMode``, ``AttentionBackendEnum``), and containers of those (``list[int]``,
    ``dict[str, AttentionBackendEnum]``: a dict's ``str`` keys select, they are not free values)."""
    try:
        tree = ast.parse(ann, mode="eval").body
    except SyntaxError:
        return False

    def ok(n: ast.AST) -> bool:
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
            return ok(n.left) and ok(n.right)
        if isinstance(n, ast.Constant):
            return n.value is None or isinstance(n.value, (int, float, bool)) or n.value is Ellipsis
        if isinstance(n, ast.Name):
            return bool(_TYPED_LEAF.match(n.id))
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
            if n.value.id == "Literal":
                return True
            if n.value.id in _CONTAINERS:
                elts = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
                if n.value.id == "dict" and len(elts) == 2:
                    return (isinstance(elts[0], ast.Name) and elts[0].id == "str" or ok(elts[0])) and ok(elts[1])
                if n.value.id == "Annotated":
                    return ok(elts[0])
                return all(ok(e) for e in elts)
        return False

    return ok(tree)


def _call(name: str) -> str:
    return name if "(" in name else name + "()"


def _camel(dest: str) -> str:
    return "".join(p.capitalize() for p in dest.split("_"))


# ---- the source: config classes and sinks ----------------------------------------------------

def _attr_names(node: ast.AST, local: dict[str, ast.AST], depth: int = 0) -> set[str]:
    """Attribute names (``x.NAME``) and keyword names reachable from ``node``, through local
    assignments of the same function (two levels)."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.Name) and n.id in local and depth < 2:
            out |= _attr_names(local[n.id], local, depth + 1)
            out.add(n.id)
        elif isinstance(n, ast.Name):
            out.add(n.id)
    return out


def _call_name(c: ast.Call) -> str:
    f = c.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def scan_source(src: Path) -> tuple[dict[str, dict], list[dict]]:
    """(config dataclasses {Name: {file, fields: {f: {ann, doc, line}}}}, sink calls)."""
    classes: dict[str, dict] = {}
    sinks: list[dict] = []
    for path in sorted(src.rglob("*.py")):
        rel = "vllm/" + str(path.relative_to(src))
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name.endswith(("Config", "Args", "ConfigArgs")):
                fields: dict[str, dict] = {}
                body = node.body
                for i, st in enumerate(body):
                    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                        doc = ""
                        if i + 1 < len(body) and isinstance(body[i + 1], ast.Expr) and isinstance(
                                getattr(body[i + 1], "value", None), ast.Constant) and isinstance(body[i + 1].value.value, str):
                            doc = " ".join(body[i + 1].value.value.split())
                        ann = ast.unparse(st.annotation)
                        if ann.startswith("ClassVar"):
                            continue
                        fields[st.target.id] = {"ann": ann, "doc": doc[:240], "line": st.lineno}
                if fields and node.name not in classes:
                    classes[node.name] = {"file": rel, "fields": fields}
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            local: dict[str, ast.AST] = {}
            for st in ast.walk(fn):
                if isinstance(st, ast.Assign):
                    for t in st.targets:
                        if isinstance(t, ast.Name):
                            local.setdefault(t.id, st.value)
                elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
                    local.setdefault(st.target.id, st.value)
            for c in ast.walk(fn):
                if not isinstance(c, ast.Call):
                    continue
                name = _call_name(c)
                kind = "code" if name in CODE_SINKS else "file" if name in FILE_SINKS else None
                tr = [k for k in c.keywords if k.arg == "trust_remote_code"]
                if kind is None and not tr:
                    continue
                names: set[str] = set()
                for a in list(c.args) + [k.value for k in c.keywords if k.arg != "trust_remote_code"]:
                    names |= _attr_names(a, local)
                if isinstance(c.func, ast.Attribute) and name in ("read_text", "read_bytes", "glob", "exec_module"):
                    names |= _attr_names(c.func.value, local)
                if kind is not None:
                    sinks.append({"at": f"{rel}:{c.lineno}", "call": name, "kind": kind, "function": fn.name,
                                  "names": sorted(names)})
                for k in tr:
                    sinks.append({"at": f"{rel}:{c.lineno}", "call": f"{name}(trust_remote_code=...)", "kind": "code",
                                  "function": fn.name, "names": sorted(_attr_names(k.value, local))})
    return classes, sinks


# ---- classification ------------------------------------------------------------------------------

#: sub-keys reviewed against the source where the generic rules would be wrong (``DEST.FIELD``)
REVIEWED_NESTED = {
    "speculative_config.method": "a method name: _validate_method admits only the built-in SpeculativeMethod values and "
                                 "names a plugin registered (register_speculative_method; a plugin is itself code the "
                                 "launch policy gates) (0.34 vllm/config/speculative.py:1625-1634)",
    "speculative_config.custom_method": "set by vLLM from method (field(init=False)): not settable, vLLM refuses it "
                                        "as a key (0.34 vllm/config/speculative.py:479)",
    "speculative_config.model": "a Hub id or a folder: checked as a path by the folder policy (0.34's isfile at "
                                "vllm/config/speculative.py:148 reads the *target's* dspark/ subfolder, not this value)",
}

def classify(release: str, src: Path) -> dict:
    so = json.loads((DATA / release / "serve_options.json").read_text())
    lp_path = DATA / release / "launch_policy.json"
    if not lp_path.exists():  # help texts need an importable vLLM; an unpacked wheel gets the nearest
        # release's help verdicts (a union with this release's own source scan: only ever stricter)
        have = sorted((p.parent.name for p in DATA.glob("*/launch_policy.json")),
                      key=lambda v: tuple(int(x) for x in v.split(".")))
        newer = [v for v in have if tuple(map(int, v.split("."))) >= tuple(map(int, release.split(".")))]
        lp_path = DATA / (newer[0] if newer else have[-1]) / "launch_policy.json" if have else lp_path
    lp = json.loads(lp_path.read_text()) if lp_path.exists() else {"options": {}, "nested": {}}
    help_risk = {e["dest"]: e for e in lp.get("options", {}).values()}
    classes, sinks = scan_source(src)
    # which dests/fields the sinks are fed by: only argument-handling code counts as "fed"
    arg_files = ("vllm/engine/arg_utils.py", "vllm/entrypoints/", "vllm/config/", "vllm/v1/executor/",
                 "vllm/v1/worker/worker_base.py", "vllm/plugins/", "vllm/logger.py", "vllm/transformers_utils/",
                 "vllm/tool_parsers/", "vllm/reasoning/", "vllm/distributed/kv_transfer/", "vllm/lora/",
                 "vllm/model_executor/model_loader/", "vllm/tokenizers/", "vllm/renderers/")
    dests: dict[str, dict] = {}
    for opt, e in so["options"].items():
        if e.get("kind") in ("_HelpAction",):
            continue
        dests.setdefault(e["dest"], {**e, "options": []})["options"].append(opt)
    fed: dict[str, dict] = {}
    for s in sinks:
        s["fed_by"] = []
        if not s["at"].startswith(arg_files):
            continue
        for n in s["names"]:
            if n in dests and n not in ("model", "tokenizer", "model_tag", "revision", "download_dir"):
                s["fed_by"].append(n)
                fed.setdefault(n, s)
    out_opts: dict[str, dict] = {}
    nested: dict[str, dict] = {}
    for dest, e in sorted(dests.items()):
        tname = str(e.get("type"))
        switch = not e.get("takes_value", True)
        cls = None
        m = re.search(r"parse_dataclass\((\w+)\)", tname)
        if m and m.group(1) in classes:
            cls = m.group(1)
        elif _camel(dest) in classes and dest.endswith("_config"):
            cls = _camel(dest)
        entry: dict = {"options": sorted(e["options"])}
        if dest in LAUNCHER_OWN:
            entry.update({"class": "safe", "why": LAUNCHER_OWN[dest], "source": "wizard/launch/argv.py"})
        elif SECRET_DESTS.search(dest) and not switch:
            entry.update({"class": "secret", "why": "a credential: passed by environment, redacted everywhere",
                          "source": "wizard/privacy.py"})
        elif dest in fed and dest not in PLAIN_TEXT:
            s = fed[dest]
            entry.update({"class": "opt_in", "risk": s["kind"], "why": f"feeds {_call(s['call'])} in {s['function']}()",
                          "source": s["at"]})
        elif dest in help_risk:
            h = help_risk[dest]
            entry.update({"class": "opt_in", "risk": h["risk"], "why": f"help text: \"{h['why']}\"",
                          "source": "vllm serve --help (launch_policy.json)"})
        elif switch or TYPED.match(tname) or e.get("choices"):
            entry.update({"class": "safe", "why": "a switch" if switch else (f"choices {e['choices'][:6]}" if e.get("choices")
                                                                             else f"argparse type {tname}"),
                          "source": "serve_options.json"})
        elif NETWORK.search(dest):
            entry.update({"class": "opt_in", "risk": "network", "why": "opens or reaches a network address",
                          "source": "option name"})
        elif NAME_RISK.search(dest) and dest not in PLAIN_TEXT:
            entry.update({"class": "opt_in", "risk": "code" if re.search(r"cls|class|module|plugin|qualname", dest) else "file",
                          "why": "its name says the value is a path, module, class or plugin", "source": "option name"})
        elif cls is not None:
            entry.update({"class": "safe", "why": f"JSON of {cls}: each sub-key classified (nested)",
                          "source": classes[cls]["file"], "config_class": cls})
        elif PLAIN_TEXT.get(dest):
            entry.update({"class": "safe", "why": PLAIN_TEXT[dest], "source": "reviewed (scripts/dump_vllm_launch_allowlist.py PLAIN_TEXT)"})
        else:
            entry.update({"class": "opt_in", "risk": "unreviewed", "why": f"free text ({tname}) not reviewed as plain data",
                          "source": "serve_options.json"})
        if cls is not None:
            entry["config_class"] = cls
            nested.update(_classify_fields(dest, cls, classes, sinks, lp.get("nested", {})))
        out_opts[dest] = entry
    n_fed = sum(1 for s in sinks if s["fed_by"])
    return {
        "_comment": (f"Launch allowlist of vLLM {so.get('vllm_version')} (generated by scripts/dump_vllm_launch_allowlist.py "
                     "from that release's source; do not edit by hand). class: safe | secret | opt_in."),
        "vllm_version": so.get("vllm_version"),
        "release": release,
        "options": out_opts,
        "nested": dict(sorted(nested.items())),
        "sinks": {"total": len(sinks), "fed_by_options": n_fed,
                  "calls": [{k: s[k] for k in ("at", "call", "kind", "fed_by")} for s in sinks]},
    }


def _classify_fields(dest: str, cls: str, classes: dict, sinks: list[dict], help_nested: dict) -> dict[str, dict]:
    info = classes[cls]
    out: dict[str, dict] = {}
    for fname, f in info["fields"].items():
        key = f"{dest}.{fname}"
        ann = f["ann"]
        src = f"{info['file']}:{f['line']}"
        fed = [s for s in sinks if s["at"].startswith(info["file"]) and fname in s["names"]]
        h = help_nested.get(key)
        if fed:
            out[key] = {"class": "opt_in", "risk": fed[0]["kind"], "why": f"feeds {_call(fed[0]['call'])}", "source": fed[0]["at"]}
        elif h:
            out[key] = {"class": "opt_in", "risk": h["risk"], "why": f"docstring: \"{h['why']}\"", "source": src}
        elif typed_annotation(ann):
            out[key] = {"class": "safe", "why": f"typed field ({ann})", "source": src}
        elif NAME_RISK.search(fname) or re.search(r"(?:^|_)(?:backend|connector)$", fname):
            out[key] = {"class": "opt_in", "risk": "code" if re.search(r"cls|class|module|plugin|backend|connector", fname) else "file",
                        "why": f"its name says the value is a path, module or class ({ann})", "source": src}
        elif NETWORK.search(fname):
            out[key] = {"class": "opt_in", "risk": "network", "why": "opens or reaches a network address", "source": src}
        elif fname in PLAIN_TEXT and PLAIN_TEXT[fname]:
            out[key] = {"class": "safe", "why": PLAIN_TEXT[fname], "source": src}
        else:
            out[key] = {"class": "opt_in", "risk": "unreviewed", "why": f"free value ({ann}) not reviewed as plain data",
                        "source": src}
        if key in REVIEWED_NESTED and out[key]["class"] != "safe":  # where the generic rules above are wrong
            out[key] = {"class": "safe", "why": REVIEWED_NESTED[key], "source": f"{src}, reviewed "
                        "(scripts/dump_vllm_launch_allowlist.py REVIEWED_NESTED)"}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True, help="the release's vllm package folder (installed or unpacked wheel)")
    ap.add_argument("--release", required=True, help="X.Y (its serve_options.json must exist)")
    ap.add_argument("--out", help="default wizard/data/vllm/<X.Y>/launch_allowlist.json")
    a = ap.parse_args(argv)
    data = classify(a.release, Path(a.source))
    out = Path(a.out) if a.out else DATA / a.release / "launch_allowlist.json"
    out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    opts = data["options"].values()
    print(f"wrote {out}: {len(data['options'])} options ({sum(o['class'] == 'safe' for o in opts)} safe, "
          f"{sum(o['class'] == 'opt_in' for o in opts)} opt-in, {sum(o['class'] == 'secret' for o in opts)} secret), "
          f"{len(data['nested'])} sub-keys ({sum(o['class'] == 'safe' for o in data['nested'].values())} safe), "
          f"{data['sinks']['total']} sinks ({data['sinks']['fed_by_options']} fed by options)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
