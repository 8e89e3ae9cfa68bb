"""Fact: which model names vLLM reads as local paths (a leaf module: the security policy, the
model resolver, the speculators rewrite and SD009 all ask it, so the syntax is written once)."""

from __future__ import annotations

import os
import re
from typing import Any

__all__ = ["written_as_path", "is_local_path"]

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def written_as_path(name: Any) -> bool:
    """Whether ``name`` is spelled as a local path -- absolute (``/models/x``, ``C:/models``),
    ``./`` / ``../`` / ``~``, ``.`` / ``..``, ``file://`` -- which no Hub id (``org/name``) can be;
    the wizard's one syntax test (an existing relative path is local too: :func:`is_local_path`)."""
    if not isinstance(name, str) or not name.strip():
        return False
    n = name.strip()
    return (n.startswith(("/", "./", "../", "~", ".\\", "..\\", "file://")) or n in (".", "..")
            or bool(_DRIVE.match(n)))


def is_local_path(name: Any) -> bool:
    """Whether vLLM would read ``name`` as a local path: :func:`written_as_path`, or an existing
    relative path (vLLM checks ``os.path.exists`` before the Hub)."""
    if not isinstance(name, str) or not name.strip():
        return False
    n = name.strip()
    if written_as_path(n):
        return True
    try:
        return os.path.lexists(n)
    except (OSError, ValueError):
        return False
