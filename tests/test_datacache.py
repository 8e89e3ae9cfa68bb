"""wizard.datacache: a cached value is served only for unchanged sources and code (issue 21)."""

from __future__ import annotations

import os

from wizard import datacache


def test_rebuilds_when_a_source_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECWIZARD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SPECWIZARD_NO_CACHE", raising=False)
    src = tmp_path / "a.yaml"
    src.write_text("x: 1\n")
    calls = []

    def build():
        calls.append(1)
        return src.read_text()

    get = lambda: datacache.cached("t", sources=[src], code=[__file__], build=build)  # noqa: E731
    assert get() == "x: 1\n" and get() == "x: 1\n" and len(calls) == 1  # second read from the cache
    src.write_text("x: 22\n")  # another size and mtime
    assert get() == "x: 22\n" and len(calls) == 2
    st = os.stat(src)
    src.write_text("x: 33\n")  # same size, mtime kept: only a same-ns rewrite could go unseen
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert get() == "x: 33\n" and len(calls) == 3
    assert len(list((tmp_path / "cache").glob("t-*.pickle"))) == 1  # stale entries are removed


def test_added_file_corrupt_entry_and_off_switch(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECWIZARD_CACHE_DIR", str(tmp_path / "cache"))
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("1")
    b.write_text("2")
    build = lambda files: (lambda: [f.read_text() for f in files])  # noqa: E731
    assert datacache.cached("t", sources=[a], code=[], build=build([a])) == ["1"]
    assert datacache.cached("t", sources=[a, b], code=[], build=build([a, b])) == ["1", "2"]
    for entry in (tmp_path / "cache").glob("t-*.pickle"):  # one per file list
        entry.write_bytes(b"not a pickle")
    assert datacache.cached("t", sources=[a, b], code=[], build=build([a, b])) == ["1", "2"]
    monkeypatch.setenv("SPECWIZARD_NO_CACHE", "1")
    assert datacache.cache_dir() is None
    assert datacache.cached("t", sources=[a], code=[], build=lambda: "fresh") == "fresh"


def test_catalogs_load_the_same_from_the_cache(tmp_path, monkeypatch):
    from wizard import advisories
    from wizard.models import catalog

    monkeypatch.setenv("SPECWIZARD_CACHE_DIR", str(tmp_path / "cache"))
    fresh = (advisories._build(), catalog._build())
    for _ in range(2):  # the first call writes the entry, the second reads it
        advisories.reload()
        catalog._load.cache_clear()
        assert advisories._load() == fresh[0]
        assert catalog._load() == fresh[1]
    advisories.reload()
    catalog.reload()


def test_entries_in_a_folder_others_can_write_are_never_read(tmp_path, monkeypatch):
    """A folder another user can write (or a symbolic link to one) could have its entries swapped:
    nothing in it is unpickled, the value is built instead."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("SPECWIZARD_CACHE_DIR", str(folder))
    monkeypatch.delenv("SPECWIZARD_NO_CACHE", raising=False)
    src = tmp_path / "a.yaml"
    src.write_text("x: 1\n")
    calls = []

    def build():
        calls.append(1)
        return "built"

    get = lambda: datacache.cached("t", sources=[src], code=[__file__], build=build)  # noqa: E731
    assert get() == "built" and get() == "built" and len(calls) == 1  # cached in a private folder
    os.chmod(folder, 0o777)
    assert get() == "built" and len(calls) == 2  # the same entry is no longer trusted
    os.chmod(folder, 0o700)
    link = tmp_path / "link"
    link.symlink_to(folder)
    monkeypatch.setenv("SPECWIZARD_CACHE_DIR", str(link / "."))
    assert get() == "built" and len(calls) == 3  # not through a symbolic link either


def test_two_installs_sharing_the_folder_keep_their_entries(tmp_path, monkeypatch):
    """Two checkouts or virtualenvs (the same name, other code paths) used in turn: each keeps its
    own entry, neither rebuilds on every run (they used to delete each other's entry: a cold
    `wizard check` then rebuilt the CLI vocabulary, ~28 ms, whenever another install had run)."""
    monkeypatch.setenv("SPECWIZARD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SPECWIZARD_NO_CACHE", raising=False)
    code_a, code_b = tmp_path / "a" / "loader.py", tmp_path / "b" / "loader.py"
    for c in (code_a, code_b):
        c.parent.mkdir()
        c.write_text("# loader\n")
    calls = []

    def get(code):
        return datacache.cached("t", sources=[], code=[code], build=lambda: calls.append(code) or str(code))

    for _ in range(3):
        assert get(code_a) == str(code_a) and get(code_b) == str(code_b)
    assert calls == [code_a, code_b]
    assert len(list((tmp_path / "cache").glob("t-*.pickle"))) == 2
    old = next(p for p in (tmp_path / "cache").glob("t-*.pickle"))
    os.utime(old, (0, 0))  # another install's entry, written long ago: removed by the next write
    code_a.write_text("# loader, changed\n")
    get(code_a)
    get(code_b)
    assert len(list((tmp_path / "cache").glob("t-*.pickle"))) == 2
