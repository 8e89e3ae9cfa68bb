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


# Function-level `wizard` imports (issue 11: imports at module top; lazy only for heavy packages,
# to break a real cycle, or to keep what one command needs off every `check` cold start, issue 21:
# tests/test_cold_start.py, benchmarks/cold_start.py). An allowlist of (file, module imported) with
# the reason for each; a new one fails until it is listed here with its reason.
FUNCTION_LEVEL_WIZARD_IMPORTS: dict[tuple[str, str], str] = {
    ("wizard/advisories/schema.py", "wizard.advisories.matcher"): "cycle: the matcher imports the schema",
    ("wizard/api.py", "wizard.launch.tune"): "cycle: launch imports api; the launch stack stays out of check",
    ("wizard/api.py", "wizard.suggest"): "api.suggest only: the suggestion tables are no part of a check",
    ("wizard/api.py", "wizard.io.forms"): "api.export only: the writers and scale-out manifests",
    ("wizard/cli.py", "wizard.vllm.crosscheck"): "check --cross-check only: the oracle runs a real vLLM",
    ("wizard/cli.py", "wizard.rules.docs"): "the `rules` command only",
    ("wizard/cli.py", "wizard.io.presets"): "the `presets` command only",
    ("wizard/cli.py", "wizard.launch.cli"): "the `serve` command only: httpx, psutil, rich",
    ("wizard/cli.py", "wizard.launch.argv"): "the `export` command only: the CPU build's console-script note",
    ("wizard/cli.py", "wizard.vllm.versions"): "the `export` command only: which vLLM build is installed",
    ("wizard/cli.py", "wizard.ui.main"): "the `ui` command only: gradio",
    ("wizard/cli_pair.py", "wizard.io.pd"): "the `pair` command only: prefill/decode manifests",
    ("wizard/cli_pair.py", "wizard.pairs"): "the `pair` command only",
    ("wizard/cli_plan.py", "wizard.hardware.nvml"): "plan/tune GPU discovery only",
    ("wizard/models/resolve.py", "wizard.models.local"): "a model folder only: safetensors headers",
    ("wizard/models/resolve.py", "wizard.models.hub"): "a Hub id only: huggingface_hub",
    ("wizard/plan/planner.py", "wizard.plan.estimate"): "the speed model: plan only, not the memory plan check uses",
    ("wizard/privacy.py", "wizard.launch.watchdog"): "the launch stack stays out of check",
    ("wizard/ui/__init__.py", "wizard.ui.app"): "gradio is heavy",
}


def _is_wizard_import(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or (node.module or "").split(".")[0] == "wizard"
    return isinstance(node, ast.Import) and any(a.name.split(".")[0] == "wizard" for a in node.names)


def function_level_wizard_imports() -> dict[tuple[str, str], str]:
    """{(path, module imported): 'path:line: import'} for every `wizard` import inside a function
    body in wizard/ (a relative import is named by its text)."""
    found = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if _is_wizard_import(node):
                        mod = node.module if isinstance(node, ast.ImportFrom) and not node.level else ast.unparse(node)
                        if isinstance(node, ast.Import):
                            mod = node.names[0].name
                        rel = str(path.relative_to(WIZARD.parent))
                        found[(rel, mod)] = f"{rel}:{node.lineno}: {ast.unparse(node)}"
    return found


def test_function_level_import_counter_sees_them():
    tree = ast.parse("def f():\n    from wizard import api\n    import json\n    def g():\n        from . import x\n")
    fn = tree.body[0]
    assert sum(_is_wizard_import(n) for n in ast.walk(fn)) == 2


def test_function_level_wizard_imports_allowlisted():
    found = function_level_wizard_imports()
    new = sorted(v for k, v in found.items() if k not in FUNCTION_LEVEL_WIZARD_IMPORTS)
    assert not new, ("function-level wizard imports not in FUNCTION_LEVEL_WIZARD_IMPORTS; move them to the module "
                     "top, or list each with its reason (heavy package, cycle, one command's stack):\n" + "\n".join(new))
    gone = sorted(f"{k[0]} -> {k[1]}" for k in FUNCTION_LEVEL_WIZARD_IMPORTS if k not in found)
    assert not gone, f"allowlisted function-level imports that no longer exist (drop them): {gone}"


