"""Shared set-up for the benchmark scripts (run as `python benchmarks/NAME.py`).

Importing this puts the repository root and tests/ (for tests/factory.py, ui_helpers...) on
sys.path. :func:`test_env_defaults` applies the environment the test suite uses.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _p in (str(ROOT), str(ROOT / "tests")):
    if _p not in sys.path:
        sys.path.insert(0, _p)


def test_env_defaults() -> None:
    """vLLM CPU KV cache 1 GiB, no Hub, quiet tokenizers (as tests/conftest.py)."""
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def pct(xs, p: float) -> float:
    """Nearest-rank percentile ``p`` (0-100) of ``xs``; NaN when empty. Same unit as ``xs``."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = min(len(xs) - 1, max(0, int(round(p / 100 * (len(xs) - 1)))))
    return xs[k]
