"""A per-user cache of the objects built from the bundled YAML catalogs (advisories, the model
catalog, hardware), so a cold ``wizard check`` unpickles them (~2 ms) instead of parsing and
validating ~80 YAML documents (~100 ms).

    from wizard.datacache import cached
    value = cached("advisories", sources=sorted(DATA_DIR.glob("*.yaml")), code=[__file__], build=_build)

Correctness: the key is the stat (path, ``st_mtime_ns``, ``st_size``) of every source file and of
every ``code`` file that decides what ``build`` returns (the loader and the classes pickled), plus
the Python version and :data:`FORMAT`. Any change to a YAML file -- or a file added or removed
from ``sources`` -- or to that code gives another key, so ``build`` runs again; an entry is never
served for other inputs. ``build`` must be deterministic in those inputs. Entries are kept per
install (the Python and the files' paths): a write removes this install's older entries of the
same name and other installs' entries written over :data:`STALE_SECONDS` ago, so two checkouts or
virtualenvs sharing the folder do not rebuild on every run by deleting each other's entry.

Where: ``$SPECWIZARD_CACHE_DIR``, else ``$XDG_CACHE_HOME/specwizard``, else
``~/.cache/specwizard`` (a folder of mode 0700). ``SPECWIZARD_NO_CACHE=1`` turns it off. A cache
file is only read when it is a regular file in a real folder (no symbolic link), both owned by
this user and not writable by others (the pickle is as trusted as the ``__pycache__`` next to the
code); anything unreadable, corrupt or
unwritable falls back to ``build`` silently -- the cache never changes a result, only its cost.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

__all__ = ["cached", "cache_dir", "FORMAT"]

T = TypeVar("T")

#: bump to drop every existing entry
FORMAT = 1


def cache_dir() -> Path | None:
    """The cache folder, or None when caching is off."""
    if os.environ.get("SPECWIZARD_NO_CACHE", "").strip().lower() in ("1", "true", "yes"):
        return None
    base = os.environ.get("SPECWIZARD_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg) if xdg else Path.home() / ".cache"
    return root / "specwizard"


def _key(name: str, files: Iterable[Path]) -> tuple[str, str] | None:
    """(scope, state): the scope names the install (the Python and the paths of every file), the
    state their stat. Entries of one scope replace each other; two checkouts or virtualenvs of
    the wizard (different paths or Pythons) sharing the folder keep one entry each instead of
    deleting each other's on every run."""
    scope = hashlib.sha256(f"{FORMAT}\0{name}\0{sys.version}\0".encode())
    state = hashlib.sha256()
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            return None  # a file that cannot be stat'ed: do not cache
        scope.update(f"{os.path.abspath(f)}\0".encode())
        state.update(f"{st.st_mtime_ns}\0{st.st_size}\0".encode())
    return scope.hexdigest()[:16], state.hexdigest()[:16]


#: entries of another install (scope) written this long ago are removed by the next write
STALE_SECONDS = 30 * 24 * 3600


def _owned(st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else."""
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    return not hasattr(os, "getuid") or st.st_uid == os.getuid()


def _trusted(path: Path) -> bool:
    """A cache entry to unpickle: a regular file (not a link) in a real folder, both owned by this
    user and writable by no one else (another user who can write the folder could swap entries)."""
    try:
        st, dst = os.lstat(path), os.lstat(path.parent)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and stat.S_ISDIR(dst.st_mode) and _owned(st) and _owned(dst)


def _code_file(obj: Any) -> Path:
    """A path, or the source file of a module, class or function."""
    if isinstance(obj, (str, Path)):
        return Path(obj)
    mod = obj if hasattr(obj, "__file__") else sys.modules[obj.__module__]
    return Path(mod.__file__)


def cached(name: str, *, sources: Iterable[Path], code: Iterable[Any], build: Callable[[], T]) -> T:
    """``build()``, or the value it returned before for the same ``sources`` and ``code`` (paths,
    modules or classes: the files that decide what ``build`` returns)."""
    folder = cache_dir()
    key = _key(name, [*map(Path, sources), *map(_code_file, code)]) if folder is not None else None
    if folder is None or key is None:
        return build()
    scope, state = key
    path = folder / f"{name}-{scope}-{state}.pickle"
    if _trusted(path):
        try:
            with open(path, "rb") as fh:
                return pickle.load(fh)  # noqa: S301 - our own file, owner-only (see module docstring)
        except Exception:  # corrupt / from an incompatible build: rebuild below
            pass
    value = build()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        now = time.time()
        for old in folder.glob(f"{name}-*.pickle"):
            try:  # this install's entries for other inputs are never read again; others' when stale
                if old.name != path.name and (old.name.startswith(f"{name}-{scope}-")
                                              or now - old.stat().st_mtime > STALE_SECONDS):
                    old.unlink()
            except OSError:
                pass
        tmp = folder / f".{name}-{scope}-{state}-{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except Exception:  # read-only home, full disk, an unpicklable value: the cache is optional
        pass
    return value
