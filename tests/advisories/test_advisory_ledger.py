"""Advisories <-> the release ledger (issue 22, item 3): every class b ledger entry (a fix of a crash,
wrong output, disabled speculation or a slowdown reachable from a configuration) is turned into an
advisory, and an advisory that names ledger entries agrees with them.

The link is written once, on the advisory (``ledger: [hunk ids]``); scripts/build_release_ledger.py
reads it for docs/ledger.md. No network: the committed ledger and advisory files only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from wizard.advisories import advisories

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ROOT / "wizard" / "data" / "vllm" / "ledger" / "ledger.jsonl"
ENTRIES = {e["id"]: e for e in map(json.loads, LEDGER.read_text(encoding="utf-8").splitlines())}
LINKED = [(a, h) for a in advisories() for h in a.ledger]


def test_linked_hunks_exist_and_are_class_b():
    bad = [(a.id, h, ENTRIES[h]["class"] if h in ENTRIES else "absent") for a, h in LINKED
           if h not in ENTRIES or ENTRIES[h]["class"] != "b"]
    assert not bad, bad


@pytest.mark.parametrize("adv", [a for a in advisories() if a.ledger], ids=lambda a: a.id)
def test_the_ledger_dates_the_range(adv):
    """A listed hunk either fixes the bug (the release it first ships in is outside the affected
    range) or introduces it (it ships in ``introduced``); when the advisory names a fix release, one
    of its hunks ships there."""
    spec = SpecifierSet(adv.affected)
    intro = adv.introduced.version if adv.introduced else None
    missing = [h for h in adv.ledger if h not in ENTRIES]
    assert not missing, missing
    ships = {h: ENTRIES[h]["to"] for h in adv.ledger}
    for h, to in ships.items():
        assert to == intro or not spec.contains(Version(to), prereleases=True), \
            f"{adv.id}: hunk {h} ships in {to}, inside {adv.affected} and not the introducing release"
    if adv.fixed.version and any(to != intro for to in ships.values()):
        assert adv.fixed.version in ships.values(), \
            f"{adv.id}: fixed {adv.fixed.version} but its hunks ship in {sorted(set(ships.values()))}"


#: class b entries not yet turned into an advisory (the remaining work of issue 22 item 3), one id a
#: line; docs/ledger.md lists them with their reasons. The list may only shrink: a new class b entry
#: comes with its advisory.
PENDING_FILE = Path(__file__).resolve().parent / "ledger_b_pending.txt"
PENDING = frozenset(line.split("#")[0].strip() for line in PENDING_FILE.read_text(encoding="utf-8").splitlines()
                    if line.split("#")[0].strip())


def test_every_class_b_entry_has_an_advisory():
    linked = {h for _, h in LINKED}
    missing = sorted((e["to"], e["file"], e["id"]) for e in ENTRIES.values()
                     if e["class"] == "b" and e["id"] not in linked and e["id"] not in PENDING)
    assert not missing, f"{len(missing)} class b ledger entries have no advisory, e.g. {missing[:5]}"


def test_the_pending_list_only_shrinks():
    """An id on the pending list that has its advisory now (or is no longer class b) is taken off."""
    linked = {h for _, h in LINKED}
    stale = sorted(h for h in PENDING if h in linked or ENTRIES.get(h, {}).get("class") != "b")
    assert not stale, f"remove from {PENDING_FILE.name}: {stale}"
