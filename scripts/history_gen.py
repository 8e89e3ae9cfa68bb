"""The loop every ``wizard/data/vllm/history/<name>.json`` generator shares.

    from history_gen import generate
    sys.exit(generate(__doc__, "drafter_context", MINORS, facts_of, by="...", wrap=lambda f: {...}))

For each release (X.Y.0 and any patch release asked for) it takes the wheel from the cache of
``scripts/build_release_ledger.py`` (downloading it when missing), runs ``facts_of(wheel)``, and
writes ``{"by": ..., "releases": {"X.Y" | "X.Y.Z": {"release", "generated_from", **facts}}}``
pretty-printed with sorted keys (read by :func:`wizard.vllm.releases.history`). A patch release
whose facts equal its X.Y.0's is left out. ``--merge`` keeps the file's other rows and generates only
the releases given (``--merge --releases 0.34.0`` adds a new release without fetching every wheel).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

import build_release_ledger as L


def generate(doc: str, name: str, releases: list[str], facts_of: Callable[[Path], dict[str, Any]], *, by: str,
             wrap: Callable[[dict[str, Any]], dict[str, Any]] = lambda f: f,
             argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=L.DEFAULT_CACHE)
    ap.add_argument("--releases", nargs="*", default=releases)
    ap.add_argument("--merge", action="store_true", help="keep the other releases' rows of the existing file")
    args = ap.parse_args(argv)
    path = L.ROOT / "wizard" / "data" / "vllm" / "history" / f"{name}.json"
    out: dict[str, dict[str, Any]] = {}
    if args.merge and path.is_file():
        out = dict(json.loads(path.read_text(encoding="utf-8"))["releases"])
    for v in args.releases:
        w = L.wheel_for(v, args.cache)
        f = wrap(facts_of(w))
        minor = v.rsplit(".", 1)[0]
        key = minor if v.endswith(".0") else v
        if key == v and out.get(minor) is not None and all(out[minor].get(k) == f[k] for k in f):
            continue  # a patch release with the X.Y.0 facts
        out[key] = {"release": v, "generated_from": w.name, **f}
        print(v, json.dumps(f, sort_keys=True)[:200], file=sys.stderr)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"by": by, "releases": out}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0
