"""No module-level import cycles in wizard/ (read from the source with ``ast``, nothing imported).

An edge A -> B means A's module body (not a function body, not an ``if TYPE_CHECKING:`` block)
imports B, or a package on B's path (its ``__init__`` runs first). A strongly connected group of
two or more modules is a cycle: importing one of them half-initialises another.
"""

from __future__ import annotations

import ast
from pathlib import Path

WIZARD = Path(__file__).resolve().parents[1] / "wizard"


def _module_name(path: Path) -> str:
    parts = path.relative_to(WIZARD.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in WIZARD.rglob("*.py")}


def _targets(module: str, node: ast.stmt) -> list[str]:
    pkg = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    out = []
    if isinstance(node, ast.Import):
        out = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            base = ".".join(pkg.split(".")[: len(pkg.split(".")) - node.level + 1] + ([base] if base else []))
        out = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
    found = []
    for t in out:
        parts = t.split(".")
        found += [".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in MODULES]
    return found


def _module_level(body: list[ast.stmt]):
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            yield from _module_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _module_level(node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body])


def import_graph() -> dict[str, set[str]]:
    graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[name] = {t for node in _module_level(tree.body) for t in _targets(name, node) if t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_graph_sees_the_imports():
    g = import_graph()
    assert "wizard.rules.registry" in g["wizard.api"] and "wizard.vllm.methods" in g["wizard.resolve"]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_no_module_level_import_cycles():
    found = cycles(import_graph())
    assert not found, f"module-level import cycles in wizard/: {found}"


# Function-level `wizard` imports (issue 11: imports at module top; lazy only for heavy third-party
# packages or to break a real cycle), each with a one-line reason. The cap is today's count; it
# only goes down: advisories/schema (matcher imports the schema), api x2 (launch imports api),
# ui/__init__ (gradio is heavy), cli `serve` and privacy's watchdog (the launch stack -- httpx,
# psutil, rich -- stays out of `check`, issue 21; tests/test_cold_start.py), cli `--cross-check`
# (wizard.vllm.crosscheck and its oracle run a real vLLM; ~5 ms off every plain `check`, issue 21),
# cli `rules`, `presets` and `ui` x3 (wizard.rules.docs + its cases models, wizard.io.presets and
# wizard.ui.main serve only their own subcommand; importing them in their handlers keeps them off
# every `check` cold start, issue 21; benchmarks/cold_start.py).
FUNCTION_LEVEL_WIZARD_IMPORTS_CAP = 10


def _is_wizard_import(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or (node.module or "").split(".")[0] == "wizard"
    return isinstance(node, ast.Import) and any(a.name.split(".")[0] == "wizard" for a in node.names)


def function_level_wizard_imports() -> list[str]:
    """'path:line: import' for every `wizard` import inside a function body in wizard/."""
    found = set()
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if _is_wizard_import(node):
                        found.add(f"{path.relative_to(WIZARD.parent)}:{node.lineno}: {ast.unparse(node)}")
    return sorted(found)


def test_function_level_import_counter_sees_them():
    tree = ast.parse("def f():\n    from wizard import api\n    import json\n    def g():\n        from . import x\n")
    fn = tree.body[0]
    assert sum(_is_wizard_import(n) for n in ast.walk(fn)) == 2


def test_function_level_wizard_imports_capped():
    found = function_level_wizard_imports()
    assert len(found) <= FUNCTION_LEVEL_WIZARD_IMPORTS_CAP, (
        f"{len(found)} function-level wizard imports (cap {FUNCTION_LEVEL_WIZARD_IMPORTS_CAP}); move them to the "
        "module top (lazy only for heavy third-party imports):\n" + "\n".join(found))
