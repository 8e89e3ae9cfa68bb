"""Run pieces of an installed vLLM release's source without importing vLLM.

Used by the table generators under ``scripts/`` (never by the product at run time). It lets a
generator call the release's *own* functions -- backend support class methods, the CUDA/ROCm
backend priority lists, ``get_kv_cache_groups``, ``_set_cudagraph_sizes`` -- on a CPU-only
machine while pretending to be a given GPU:

* Every ``vllm.*`` module is replaced by a lazy namespace built from the release's source file.
  A top-level name (function, class, constant, import) is executed only when first looked up,
  so module-level side effects (loading CUDA kernels, probing ``amdsmi``...) never run.
* Annotations are stripped before compiling (they often name CUDA-only types).
* A small table of *stubs* replaces the names that describe the machine: ``current_platform``
  (a subclass of the release's own ``Platform`` reporting the chosen compute capability),
  ``get_current_vllm_config`` (the release's default config objects are not built), the FA
  version probe, FlashInfer availability. Anything else that is missing (a CUDA-only package,
  a compiled extension) becomes a :class:`Poison` that raises :class:`Unknown` when used, so a
  fact that depends on it is reported as unknown rather than guessed.

Non-vLLM modules (torch, typing, functools...) are imported for real; uninstalled ones
(flashinfer, aiter, amdsmi) are poisoned.
"""

from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
import typing
import importlib
import logging
import os
import sys
import types
from pathlib import Path
from typing import Any

__all__ = ["Unknown", "Poison", "Engine"]


class Unknown(Exception):
    """A value the generator cannot know on this machine (named in the message)."""


class Poison:
    """Stands for something unavailable; any use raises :class:`Unknown`."""

    def __init__(self, what: str):
        object.__setattr__(self, "_what", what)

    def _boom(self, *a, **k):
        raise Unknown(object.__getattribute__(self, "_what"))

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Poison(f"{object.__getattribute__(self, '_what')}.{name}")

    __call__ = __bool__ = __iter__ = __len__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _boom
    __contains__ = __getitem__ = __or__ = __ror__ = __add__ = __radd__ = __int__ = __index__ = _boom
    __mro_entries__ = _boom

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return f"<poison {object.__getattribute__(self, '_what')}>"


class _QuietLogger:
    def __getattr__(self, name):
        return lambda *a, **k: None


def _strip_annotations(node: ast.AST, class_annotations: str = "keep") -> ast.AST:
    """Drop function-signature annotations; class-body annotations are kept as written
    (``class_annotations="keep"``) or turned into strings (``"str"``) -- NamedTuple and
    dataclass fields need them."""

    class T(ast.NodeTransformer):
        depth = 0

        def visit_ClassDef(self, n):
            self.depth += 1
            self.generic_visit(n)
            self.depth -= 1
            return n

        def visit_FunctionDef(self, n):
            self.generic_visit(n)
            n.returns = None
            for a in [*n.args.args, *n.args.posonlyargs, *n.args.kwonlyargs, n.args.vararg, n.args.kwarg]:
                if a is not None:
                    a.annotation = None
            return n

        def visit_AsyncFunctionDef(self, n):
            return self.visit_FunctionDef(n)

        def visit_AnnAssign(self, n):
            if self.depth:
                if class_annotations == "str":
                    n.annotation = ast.Constant(ast.unparse(n.annotation))
                return n
            if n.value is None:
                return ast.copy_location(ast.Pass(), n) if isinstance(n.target, ast.Name) else None
            return ast.copy_location(ast.Assign(targets=[n.target], value=n.value), n)

    out = T().visit(node)
    ast.fix_missing_locations(out)
    return out


class ModuleProxy(types.ModuleType):
    """Attribute access on a lazily executed vLLM module."""

    def __init__(self, ns: "ModuleNS"):
        super().__init__(ns.modname)
        object.__setattr__(self, "_ns", ns)

    def __getattr__(self, name):
        ns = object.__getattribute__(self, "_ns")
        try:
            return ns[name]
        except KeyError:
            pass
        if "__getattr__" in ns.defs and name != "__getattr__":
            return ns["__getattr__"](name)
        raise AttributeError(f"{ns.modname}.{name}")


class ModuleNS(dict):
    """Globals of one vLLM module, filled on demand from its source."""

    def __init__(self, engine: "Engine", modname: str, path: Path | None):
        super().__init__()
        self.engine, self.modname, self.path = engine, modname, path
        dict.__setitem__(self, "__name__", modname)
        dict.__setitem__(self, "__builtins__", engine.builtins)
        dict.__setitem__(self, "__file__", str(path) if path else None)
        self.defs: dict[str, ast.stmt] = {}
        self.assigns: dict[str, ast.stmt] = {}
        self.imports: dict[str, tuple[str, str | None, int]] = {}
        self._busy: set[str] = set()
        if path is not None:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            self._index(tree.body, conditional=False)

    def _index(self, body, conditional):
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defs.setdefault(st.name, st)
            elif isinstance(st, (ast.Assign, ast.AnnAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    for n in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                        if isinstance(n, ast.Name):
                            self.assigns.setdefault(n.id, st)
            elif isinstance(st, ast.Import):
                for a in st.names:
                    if a.asname:
                        self.imports.setdefault(a.asname, (a.name, None, 0))
                    else:
                        top = a.name.split(".")[0]
                        self.imports.setdefault(top, (top, None, 0))
            elif isinstance(st, ast.ImportFrom):
                if st.module == "__future__":
                    continue
                for a in st.names:
                    self.imports.setdefault(a.asname or a.name, (st.module or "", a.name, st.level))
            elif isinstance(st, ast.If):
                # `if TYPE_CHECKING:` imports are never executed by Python either
                if isinstance(st.test, ast.Name) and st.test.id == "TYPE_CHECKING":
                    continue
                self._index(st.body, True)
                self._index(st.orelse, True)
            elif isinstance(st, ast.Try):
                self._index(st.body, True)
                for h in st.handlers:
                    self._index(h.body, True)

    def _preresolve(self, st: ast.stmt) -> None:
        """Class bodies and module-level statements look globals up with LOAD_NAME, which
        ignores ``__missing__``: resolve the names they use (outside function bodies) first."""
        names: set[str] = set()

        def walk(n):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in n.decorator_list:
                    walk(d)
                for d in [*n.args.defaults, *[x for x in n.args.kw_defaults if x is not None]]:
                    walk(d)
                return
            if isinstance(n, ast.Lambda):
                return
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                names.add(n.id)
            for c in ast.iter_child_nodes(n):
                walk(c)

        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            walk(st)
        elif isinstance(st, ast.ClassDef):
            for x in [*st.bases, *[k.value for k in st.keywords], *st.decorator_list, *st.body]:
                walk(x)
        else:
            walk(st)
        for n in names:
            if not dict.__contains__(self, n):
                try:
                    self[n]
                except KeyError:
                    pass

    def _exec(self, st: ast.stmt) -> None:
        plain = _strip_annotations(copy.deepcopy(st))
        self._preresolve(plain)
        try:
            exec(compile(ast.Module(body=[plain], type_ignores=[]), str(self.path), "exec"), self)
        except Exception:
            if not isinstance(st, ast.ClassDef):
                raise
            # an annotation that names something unavailable: retry with string annotations
            strs = _strip_annotations(copy.deepcopy(st), "str")
            exec(compile(ast.Module(body=[strs], type_ignores=[]), str(self.path), "exec"), self)

    def __missing__(self, name: str):
        eng = self.engine
        stub = eng.stub_for(self.modname, name)
        if stub is not _NOTHING:
            dict.__setitem__(self, name, stub)
            return stub
        if name in self._busy:
            raise KeyError(name)
        self._busy.add(name)
        try:
            if name in self.defs:
                self._exec(self.defs[name])
                return dict.__getitem__(self, name)
            if name in self.assigns:
                try:
                    self._exec(self.assigns[name])
                except Unknown:
                    raise
                except Exception as e:  # a constant computed from the machine
                    v = Poison(f"{self.modname}.{name} ({type(e).__name__})")
                    dict.__setitem__(self, name, v)
                    return v
                return dict.__getitem__(self, name)
            if name in self.imports:
                mod, attr, level = self.imports[name]
                v = eng.import_from(mod, attr, level, self.modname)
                dict.__setitem__(self, name, v)
                return v
            # a submodule of this package
            sub = f"{self.modname}.{name}"
            if eng.module_path(sub) is not None:
                v = eng.module(sub)
                dict.__setitem__(self, name, v)
                return v
        finally:
            self._busy.discard(name)
        raise KeyError(name)


_NOTHING = object()


class Engine:
    """Lazy executor for one release's ``vllm`` package (see module docstring).

    Args:
        vllm_root: the ``site-packages/vllm`` folder of the release.
        stubs: ``{(module, name): value}`` replacing machine-dependent names; a module of
            ``"*"`` matches any module.
        real_modules: vLLM modules imported for real (pure ones such as ``vllm.envs``).
    """

    def __init__(self, vllm_root: Path, stubs: dict[tuple[str, str], Any] | None = None,
                 real_modules: tuple[str, ...] = ()):
        self.root = Path(vllm_root)
        self.stubs = dict(stubs or {})
        self.real_modules = set(real_modules)
        self._mods: dict[str, ModuleProxy] = {}
        self.builtins = dict(vars(builtins))
        self.builtins["__import__"] = self._import
        self.stubs.setdefault(("*", "logger"), _QuietLogger())
        self.stubs.setdefault(("vllm.logger", "init_logger"), lambda *a, **k: _QuietLogger())
        self.stubs.setdefault(("vllm.utils.import_utils", "resolve_obj_by_qualname"), self.get)

    # -- module lookup ------------------------------------------------------------------
    def stub_for(self, modname: str, name: str):
        for key in ((modname, name), ("*", name)):
            if key in self.stubs:
                return self.stubs[key]
        return _NOTHING

    def module_path(self, modname: str) -> Path | None:
        if modname != "vllm" and not modname.startswith("vllm."):
            return None
        rel = modname.split(".")[1:]
        p = self.root.joinpath(*rel)
        if p.with_suffix(".py").is_file() and rel:
            return p.with_suffix(".py")
        if (p / "__init__.py").is_file():
            return p / "__init__.py"
        return None

    def module(self, modname: str):
        if modname in self._mods:
            return self._mods[modname]
        if modname in self.real_modules:
            m = importlib.import_module(modname)
            self._mods[modname] = m
            return m
        path = self.module_path(modname)
        if path is None:
            return Poison(modname)
        proxy = ModuleProxy(ModuleNS(self, modname, path))
        # dataclasses look string annotations up in sys.modules[cls.__module__]; code that
        # calls importlib.import_module("vllm.x") gets the lazy module too
        proxy.__dict__["ClassVar"], proxy.__dict__["InitVar"] = typing.ClassVar, dataclasses.InitVar
        sys.modules[modname] = proxy
        self._mods[modname] = proxy
        return proxy

    def ns(self, modname: str) -> ModuleNS:
        m = self.module(modname)
        return object.__getattribute__(m, "_ns")

    def get(self, dotted: str):
        """``get("vllm.platforms.cuda._get_backend_priorities")``."""
        mod, _, name = dotted.rpartition(".")
        return self.ns(mod)[name]

    def method(self, modname: str, clsname: str, name: str):
        """A method of a class, compiled on its own in the module's namespace (the class itself
        is never built). Decorators are dropped; a property returns its getter. None when the
        class or method does not exist in this release."""
        ns = self.ns(modname)
        cls = ns.defs.get(clsname)
        if cls is None:
            return None
        fn = next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)
        if fn is None:
            return None
        fn = copy.deepcopy(fn)
        fn.decorator_list = []
        fn.name = f"__probe_{clsname}_{name}"
        ns._exec(fn)
        return dict.__getitem__(ns, fn.name)

    def plain_class(self, modname: str, clsname: str):
        """The class with its class decorators removed and its bases replaced by ``object``
        (no pydantic / dataclass machinery): build instances with ``object.__new__`` and set the
        attributes the methods read. Methods, properties and staticmethods behave as written."""
        ns = self.ns(modname)
        node = ns.defs.get(clsname)
        if node is None:
            return None
        node = copy.deepcopy(node)
        node.decorator_list = []
        node.bases, node.keywords = [], []
        keep = []
        for st in node.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                st.decorator_list = [d for d in st.decorator_list if ast.unparse(d).split("(")[0].split(".")[-1]
                                     in ("property", "staticmethod", "classmethod", "cached_property")]
                keep.append(st)
        node.body = keep or [ast.Pass()]
        node.name = f"__plain_{clsname}"
        ns._exec(node)
        return dict.__getitem__(ns, node.name)

    def source_of(self, modname: str, clsname: str | None, name: str) -> str | None:
        """Source text of a top-level function/class or of a class's method (None if absent)."""
        ns = self.ns(modname)
        node = ns.defs.get(clsname or name)
        if node is None:
            return None
        if clsname:
            node = next((n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)
            if node is None:
                return None
        return ast.unparse(node)

    def import_from(self, mod: str, attr: str | None, level: int, importer: str):
        if level:
            pkg = importer.split(".")
            # a module's package is itself minus its last component unless it is a package
            base = pkg[: len(pkg) - level] if not self._is_pkg(importer) else pkg[: len(pkg) - level + 1]
            mod = ".".join(base + ([mod] if mod else []))
        if attr is None:
            return self._real_or_lazy(mod, full=True)
        stub = self.stub_for(mod, attr)
        if stub is not _NOTHING:
            return stub
        if mod == "vllm" or mod.startswith("vllm."):
            m = self.module(mod)
            if isinstance(m, Poison):
                return Poison(f"{mod}.{attr}")
            if isinstance(m, ModuleProxy):
                try:
                    return object.__getattribute__(m, "_ns")[attr]
                except KeyError:
                    sub = f"{mod}.{attr}"
                    if self.module_path(sub) is not None:
                        return self.module(sub)
                    return Poison(f"{mod}.{attr}")
            return getattr(m, attr, Poison(f"{mod}.{attr}"))
        m = self._real_or_lazy(mod, full=True)
        if isinstance(m, Poison):
            return Poison(f"{mod}.{attr}")
        try:
            return getattr(m, attr)
        except AttributeError:
            try:
                return importlib.import_module(f"{mod}.{attr}")
            except Exception:
                return Poison(f"{mod}.{attr}")

    def _is_pkg(self, modname: str) -> bool:
        p = self.module_path(modname)
        return p is not None and p.name == "__init__.py"

    def _real_or_lazy(self, mod: str, full: bool = False):
        if mod == "vllm" or mod.startswith("vllm."):
            return self.module(mod) if full else self.module(mod.split(".")[0])
        try:
            m = importlib.import_module(mod)
        except Exception:
            return Poison(mod)
        if full:
            return m
        return importlib.import_module(mod.split(".")[0])

    def _import(self, name, globals=None, locals=None, fromlist=(), level=0):
        importer = (globals or {}).get("__name__", "")
        if level:
            return self.import_from(name, None, level, importer) if not fromlist else self.module(
                ".".join(importer.split(".")[: -level] + ([name] if name else []))
            )
        if name == "vllm" or name.startswith("vllm."):
            if fromlist:
                return self.module(name)
            return self.module("vllm")
        try:
            return builtins.__import__(name, globals, locals, fromlist, level)
        except Exception:
            return Poison(name)


def quiet() -> None:
    """Silence warnings that importing torch & co prints on a CPU machine."""
    logging.disable(logging.CRITICAL)
    os.environ.setdefault("TRITON_PRINT_AUTOTUNING", "0")
    for k in [k for k in os.environ if k.startswith("VLLM_")]:
        del os.environ[k]
