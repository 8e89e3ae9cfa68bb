"""What ``wizard tune`` and its ``vllm bench sweep serve`` grid accept: the k list, the
concurrency list, the prompt file (JSONL of ``{"prompt": ...}``, read by vllm bench serve's
``--dataset-name custom``: vllm/benchmarks/datasets/datasets.py ``CustomDataset``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from wizard.launch.tune_results import TuneError
from wizard.plan.inputs import K_HARD_MAX, MAX_CONCURRENCY

__all__ = ["DEFAULT_PROMPTS", "MAX_K", "MAX_CONCURRENCY", "validate_prompts"]

DEFAULT_PROMPTS = Path(__file__).resolve().parents[1] / "data" / "tune_prompts.jsonl"
MAX_K = K_HARD_MAX  # the faces' bound (wizard.suggest), checked again here


def validate_prompts(path: str | Path | None) -> Path:
    """The prompt file to use: ``path`` (a JSONL of {"prompt": ...} lines) or the built-in set.

    Raises:
        TuneError: missing, unreadable, not JSONL, or a line without a string ``prompt``.
    """
    p = Path(path) if path else DEFAULT_PROMPTS
    if not p.is_file():
        raise TuneError(f"--prompts: {str(p)[:200]} is not a file; give a JSONL file with one {{\"prompt\": ...}} per line")
    if p.suffix != ".jsonl":
        raise TuneError(f"--prompts: {p.name} must end in .jsonl (vllm bench serve's custom dataset reads JSONL)")
    n = 0
    try:
        with open(p, encoding="utf-8") as fh:
            for i, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                row = json.loads(line)
                if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
                    raise TuneError(f"--prompts: {p.name} line {i} has no string \"prompt\"; each line must be "
                                    "{\"prompt\": \"...\"}")
                n += 1
                if i > 1_000_000:
                    break
    except (OSError, UnicodeDecodeError, ValueError) as err:
        if isinstance(err, TuneError):
            raise
        raise TuneError(f"--prompts: {p.name} is not JSONL text ({type(err).__name__}); one JSON object per line") from None
    if not n:
        raise TuneError(f"--prompts: {p.name} holds no prompts")
    return p


def _check_ks(ks: Sequence[Any]) -> list[int]:
    out = []
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise TuneError(f"--k: {k!r} is not a whole number from 1 to {MAX_K}")
        if k not in out:
            out.append(k)
    if not out:
        raise TuneError("--k: give at least one value, e.g. 1,2,4")
    return sorted(out)


def _check_concurrencies(concurrency: int | Sequence[Any]) -> list[int]:
    vals = [concurrency] if isinstance(concurrency, int) or not isinstance(concurrency, (list, tuple)) else concurrency
    out: list[int] = []
    for c in vals:
        if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= MAX_CONCURRENCY:
            raise TuneError(f"--concurrency: {c!r} must be a whole number from 1 to {MAX_CONCURRENCY}")
        if c not in out:
            out.append(c)
    if not out:
        raise TuneError("--concurrency: give at least one value, e.g. 1,4,16")
    return sorted(out)


