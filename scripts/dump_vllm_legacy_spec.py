"""Dump what vLLM 0.8.x read before the standalone spec-decode flags were removed, to JSON.

    python scripts/dump_vllm_legacy_spec.py --source /tmp/vllm-0.8.2     # wizard/data/vllm/0.8/legacy_spec.json

``--source``: a vLLM source tree of a release that still has the standalone flags next to
``--speculative-config`` (0.8.0-0.8.2; PR #15466 removed them): the PyPI sdist
``vllm-0.8.2.tar.gz`` unpacked, or a git checkout of tag ``v0.8.2``. Read with ``ast`` only
(nothing is imported, vLLM need not be installed):

* ``speculative_flags``: ``EngineArgs.create_speculative_config`` (vllm/engine/arg_utils.py)
  builds the speculative config from the old flags as ``{"model": self.speculative_model, ...}``:
  old flag dest -> SpeculativeConfig key, read from that dict literal;
* ``speculative_config_fields``: the init fields of that release's ``SpeculativeConfig``
  (vllm/config.py); keys later releases dropped (``acceptance_method``, ``disable_logprobs``...)
  are legacy keys with no modern equivalent;
* ``speculative_aliases``: read-only properties of ``SpeculativeConfig`` that return a field
  (``num_lookahead_slots`` -> ``num_speculative_tokens``);
* ``store_true`` / ``store_boolean``: dests of every ``add_argument(..., action='store_true')`` /
  ``action=StoreBoolean`` (``--X`` alone or ``--X true|false``) of the `vllm serve` parser
  (vllm/engine/arg_utils.py, vllm/entrypoints/openai/cli_args.py), so that a flag removed before
  the first generated release is still read the way vLLM read it.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

GENERATOR = "scripts/dump_vllm_legacy_spec.py"
OUT = Path(__file__).resolve().parents[1] / "wizard" / "data" / "vllm" / "0.8" / "legacy_spec.json"
PARSER_FILES = ("vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py")


def _tree(source: Path, rel: str) -> ast.Module:
    return ast.parse((source / rel).read_text(encoding="utf-8"))


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    return next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name)


def speculative_flags(tree: ast.Module) -> dict[str, str]:
    """{old flag dest: key} from the dict literal ``create_speculative_config`` assigns."""
    fn = next(n for n in ast.walk(_class(tree, "EngineArgs"))
              if isinstance(n, ast.FunctionDef) and n.name == "create_speculative_config")
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            pairs = zip(node.value.keys, node.value.values)
            out = {v.attr: k.value for k, v in pairs
                   if isinstance(k, ast.Constant) and isinstance(v, ast.Attribute)
                   and isinstance(v.value, ast.Name) and v.value.id == "self"}
            if out:
                return out
    raise SystemExit("no speculative config dict literal in EngineArgs.create_speculative_config")


def speculative_config(tree: ast.Module) -> tuple[list[str], dict[str, str]]:
    """(init fields, {property: field it returns}) of ``SpeculativeConfig``."""
    cls = _class(tree, "SpeculativeConfig")
    fields = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    aliases = {}
    for n in cls.body:
        if isinstance(n, ast.FunctionDef) and any(ast.unparse(d) == "property" for d in n.decorator_list):
            body = [s for s in n.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if (len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Attribute)
                    and ast.unparse(body[0].value.value) == "self" and body[0].value.attr in fields):
                aliases[n.name] = body[0].value.attr
    return fields, aliases


def dests_with_action(trees: list[ast.Module], action_name: str) -> list[str]:
    """Dests of ``add_argument(..., action=X)`` calls, X the string ``'store_true'`` or a name
    (``StoreBoolean``: nargs='?', ``--X`` alone or ``--X true|false``)."""
    out = set()
    for tree in trees:
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            action = kw.get("action")
            if action is None or (action.value if isinstance(action, ast.Constant) else ast.unparse(action)) != action_name:
                continue
            dest = kw.get("dest")
            if isinstance(dest, ast.Constant):
                out.add(dest.value)
                continue
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            long = [n for n in names if n.startswith("--")]
            if long:
                out.add(long[0][2:].replace("-", "_"))
    return sorted(out)


def version_of(source: Path) -> str:
    """The release from the sdist's PKG-INFO or the directory name (vllm-0.8.2)."""
    info = source / "PKG-INFO"
    if info.is_file():
        m = re.search(r"^Version: (\S+)", info.read_text(encoding="utf-8"), re.M)
        if m:
            return m.group(1)
    m = re.search(r"(\d+\.\d+\.\d+)", source.name)
    if m:
        return m.group(1)
    raise SystemExit(f"cannot tell the vLLM version of {source}; name the folder vllm-X.Y.Z")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, required=True, help="vLLM 0.8.x source tree (unpacked sdist or checkout)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    src = args.source
    version = version_of(src)
    fields, aliases = speculative_config(_tree(src, "vllm/config.py"))
    parser = [_tree(src, f) for f in PARSER_FILES]
    data = {
        "_comment": (f"What vLLM {version} read before the standalone spec-decode flags were removed (PR #15466). "
                     f"Generated by {GENERATOR} from that release's source; do not edit by hand."),
        "generator": GENERATOR,
        "vllm_version": version,
        "sources": ["vllm/engine/arg_utils.py EngineArgs.create_speculative_config",
                    "vllm/config.py SpeculativeConfig", *PARSER_FILES],
        "speculative_flags": speculative_flags(_tree(src, "vllm/engine/arg_utils.py")),
        "speculative_config_fields": fields,
        "speculative_aliases": aliases,
        "store_true": dests_with_action(parser, "store_true"),
        "store_boolean": dests_with_action(parser, "StoreBoolean"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(data['speculative_flags'])} flags, {len(fields)} fields, "
          f"{len(aliases)} aliases, {len(data['store_true'])} store_true and {len(data['store_boolean'])} StoreBoolean dests")


if __name__ == "__main__":
    main()
