"""The release-diff ledger (scripts/build_release_ledger.py): well-formed, reviews merged, docs in sync.
No network: only the committed ledger and inline sources are read."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("build_release_ledger", ROOT / "scripts" / "build_release_ledger.py")
L = importlib.util.module_from_spec(spec)
spec.loader.exec_module(L)

FIELDS = {"id", "from", "to", "file", "symbol", "added", "removed", "excerpt", "class", "reason", "classified_by"}


@pytest.fixture(scope="module")
def ledger():
    return L.read_ledger()


@pytest.fixture(scope="module")
def meta():
    return json.loads(L.RELEASES.read_text(encoding="utf-8"))


def test_ledger_is_well_formed(ledger, meta):
    rel = meta["releases"]
    assert [Version(r) for r in rel] == sorted(Version(r) for r in rel) and len(set(rel)) == len(rel)
    assert rel[0] == "0.10.0" and rel[-1] == "0.33.0"
    order = {r: i for i, r in enumerate(rel)}
    ids = set()
    for e in ledger:
        assert FIELDS <= set(e), e.get("id")
        assert e["class"] in L.CLASSES
        assert e["from"] in order and e["to"] in order and order[e["to"]] == order[e["from"]] + 1
        assert e["classified_by"] == "review" or e["classified_by"].startswith("rule:") or e["class"] == "unclassified"
        assert e["class"] == "unclassified" or e["reason"]
        assert isinstance(e["added"], int) and isinstance(e["removed"], int) and e["added"] + e["removed"] > 0
        assert e["id"] not in ids
        ids.add(e["id"])
    keys = [L.sort_key(e, order) for e in ledger]
    assert keys == sorted(keys), "ledger.jsonl is not sorted"
    assert L.LEDGER.stat().st_size < 6_000_000


def test_every_review_exists_and_is_merged(ledger):
    by_id = {e["id"]: e for e in ledger}
    reviewed = L.load_reviewed()
    for k, r in reviewed.items():
        assert k in by_id, f"reviewed.yaml names {k}, not in the ledger"
        assert r["class"] in ("a", "b", "c") and r.get("reason")
        e = by_id[k]
        assert e["classified_by"] == "review" and e["class"] == r["class"], k


def test_docs_are_in_sync_with_the_ledger(ledger, meta):
    assert L.DOCS.read_text(encoding="utf-8") == L.render_docs(ledger, meta), \
        "docs/ledger.md is stale: python scripts/build_release_ledger.py --docs-only"


OLD = '''
import logging
logger = logging.getLogger(__name__)


class SpeculativeConfig:
    num_speculative_tokens: int = 1
    method: str | None = None

    def verify(self, n):
        """Check n."""
        # the limit
        if n > 8:
            return False
        logger.info("ok %s", n)
        return True

    def route(self):
        return "v1"
'''

NEW = '''
import logging
logger = logging.getLogger(__name__)


class SpeculativeConfig:
    num_speculative_tokens: int = 2
    method: str | None = None

    def verify(self, n: int) -> bool:
        """Check that n is small enough."""
        # the limit, see below
        if n > 8:
            return False
        logger.warning("fine %s", n)
        return True

    def route(self):
        if self.method == "mtp":
            raise ValueError("mtp needs a target with MTP layers")
        return "v2"
'''


def test_units_and_heuristics_on_inline_sources():
    uo, un = L.units(OLD), L.units(NEW)
    assert {"SpeculativeConfig", "SpeculativeConfig.verify", "SpeculativeConfig.route", "<module>"} <= set(un)
    assert "def verify" not in un["SpeculativeConfig"]  # the class unit holds fields only
    es = {e["symbol"]: e for e in L.diff_pair("0.1.0", "0.2.0", {"vllm/config/speculative.py": OLD},
                                             {"vllm/config/speculative.py": NEW})}
    assert set(es) == {"SpeculativeConfig", "SpeculativeConfig.verify", "SpeculativeConfig.route"}
    assert (es["SpeculativeConfig"]["class"], es["SpeculativeConfig"]["classified_by"]) == ("a", "rule:dataclass-default")
    assert (es["SpeculativeConfig.verify"]["class"], es["SpeculativeConfig.verify"]["classified_by"]) == \
        ("c", "rule:ast-equivalent")
    assert (es["SpeculativeConfig.route"]["class"], es["SpeculativeConfig.route"]["classified_by"]) == \
        ("a", "rule:validation")
    # outside a config path the same raise stays for review; a comment-only hunk is cosmetic
    es2 = L.diff_pair("0.1.0", "0.2.0", {"vllm/v1/spec_decode/eagle.py": OLD}, {"vllm/v1/spec_decode/eagle.py": NEW})
    route = next(e for e in es2 if e["symbol"] == "SpeculativeConfig.route")
    assert route["class"] == "unclassified" and route["classified_by"] == ""
    h = ["-    # old comment", "+    # new comment", "+", ' "a string"']
    assert L.classify("vllm/v1/spec_decode/x.py", "f", h, False, False)[:2] == ("c", "cosmetic-lines")
    assert L.classify("tests/v1/test_x.py", "f", ["+x = 1"], False, False)[:2] == ("c", "test-file")
    # ids are stable
    again = L.diff_pair("0.1.0", "0.2.0", {"vllm/config/speculative.py": OLD}, {"vllm/config/speculative.py": NEW})
    assert sorted(e["id"] for e in again) == sorted(e["id"] for e in es.values())


def test_monolithic_config_class_is_extracted():
    src = "X = 1\n\nclass ModelConfig:\n    a = 1\n\n\n@dataclass\nclass SpeculativeConfig:\n    k: int = 1\n"
    assert L.class_source(src, "SpeculativeConfig") == "@dataclass\nclass SpeculativeConfig:\n    k: int = 1\n"
    assert L.class_source(src, "Missing") is None
