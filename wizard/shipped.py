"""Where the runtime finds the data files that live outside ``wizard/`` in the repository.

``presets/`` (the hardware catalog ``hardware.yaml``, the model catalog ``models/*.yaml`` and the
deployment presets ``deployments/*.yaml``) and the rule case files ``tests/rules/*.yml`` (the
examples ``wizard rules`` prints) each exist once, at those paths of the repository. In a checkout
or an editable install they are read there; a built wheel carries copies as package data under
``wizard/_shipped/<same path>`` (``setup.py``'s ``build_py`` copies them, ``MANIFEST.in`` puts them
in the sdist; ``tests/test_wheel.py`` installs the wheel and runs the CLI and the UI from another
folder). ``wizard/_shipped`` exists only in a build, never in the repository.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SHIPPED_DIR", "REPO_ROOT", "shipped_path"]

_PACKAGE = Path(__file__).resolve().parent

#: The copies a built wheel carries (absent in a checkout).
SHIPPED_DIR: Path = _PACKAGE / "_shipped"

#: The folder holding the ``wizard`` package: the repository root in a checkout.
REPO_ROOT: Path = _PACKAGE.parent


def shipped_path(*parts: str) -> Path:
    """``REPO_ROOT/<parts>`` in a checkout, ``wizard/_shipped/<parts>`` in an installed wheel,
    e.g. ``shipped_path("presets", "hardware.yaml")``. The choice is made once per install (the
    ``_shipped`` folder is there or not), never file by file, so the two are never mixed."""
    return (SHIPPED_DIR if SHIPPED_DIR.is_dir() else REPO_ROOT).joinpath(*parts)
