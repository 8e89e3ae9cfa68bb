"""Refresh the generated part of docs/advisories-sources.md from wizard/data/advisories/.

The file has two parts: the reports each advisory is built on (generated, between the
``<!-- used:begin -->`` / ``<!-- used:end -->`` markers) and the reports that were read while mining
but not turned into an advisory (kept by hand below), so that a held-out evaluation set can avoid
both. Run: ``python scripts/advisory_sources.py`` (idempotent).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DOC = ROOT / "docs" / "advisories-sources.md"
BEGIN, END = "<!-- used:begin -->", "<!-- used:end -->"


def used_block() -> str:
    from wizard.advisories import advisories

    lines = [BEGIN, "", "| advisory | sources |", "|---|---|"]
    for a in advisories():
        lines.append(f"| {a.id} | {' '.join(a.sources)} |")
    lines += ["", END]
    return "\n".join(lines)


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    new = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), used_block(), text, flags=re.S)
    if new != text:
        DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
