"""Bounded readers for everything SpecWizard reads from outside: files, JSON and YAML.

Hostile or broken input must answer quickly, in little memory, with one line naming the file
and what to do. Every reader here has a budget and raises :class:`InputRefused` (a
``ValueError``) when the input is beyond it:

* :func:`read_regular_file` -- refuses anything but a regular file (a FIFO would block
  forever, ``/dev/zero`` never ends, a directory is not text), opened with ``O_NONBLOCK`` so
  that even opening a FIFO cannot hang, and reads at most ``limit`` bytes.
* :func:`decode_text` -- UTF-8 (a BOM is allowed); names the first bad byte and its offset.
* :func:`json_loads_bounded` -- ``json.loads`` after a cheap count of the values the text can
  hold (commas and brackets), with messages for Python's own limits (nesting depth, integers
  of more than 4300 digits) that name the file.
* :func:`yaml_load_bounded` -- YAML safe loading that composes the node graph first and
  measures it *with aliases expanded* before building any Python object: the "billion laughs"
  document (nested aliases, a few hundred bytes that expand to billions of nodes), recursive
  aliases (``&a [*a]``) and absurd nesting are refused, and so is a document whose scalars,
  counted once per use through aliases, exceed a byte budget (a 900 KB string repeated through
  10,000 aliases is 10,000 nodes but 9 GB). PyYAML itself shares aliased objects, but every
  later step (JSON export, deep copies, pydantic, the UI's state) walks the expanded tree.

Budgets (module constants) are far above anything real: a ``vllm serve --config`` YAML is a
few hundred bytes to a few KiB with ~5-100 keys; vLLM 0.32's ``vllm serve`` parser has about
400 options (``wizard/data/vllm/<X.Y>/serve_options.json``).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from typing import Any

import yaml

__all__ = [
    "InputRefused",
    "read_regular_file",
    "decode_text",
    "read_text_file",
    "json_loads_bounded",
    "yaml_load_bounded",
    "yaml_expanded_size",
    "MAX_YAML_CONFIG_BYTES",
    "MAX_YAML_NODES",
    "MAX_YAML_EXPANDED_BYTES",
    "MAX_NESTING",
    "MAX_JSON_VALUES",
]

#: Largest ``vllm serve --config`` YAML read (bytes). Real ones are < 10 KiB.
MAX_YAML_CONFIG_BYTES = 1 << 20
#: Largest YAML document, counted in nodes with every alias expanded.
MAX_YAML_NODES = 100_000
#: Largest YAML document in bytes with every alias expanded: the characters of its scalars, each
#: counted once per use. Four times the largest --config file read (:data:`MAX_YAML_CONFIG_BYTES`)
#: and the size of the largest UI session (``wizard.ui.state.SESSION_MAX_BYTES``), so whatever a
#: YAML import brings fits a session. Real files: a few KiB, and aliases there repeat small blocks.
MAX_YAML_EXPANDED_BYTES = 4 << 20
#: Deepest nesting of lists/mappings accepted in YAML and JSON documents read here.
MAX_NESTING = 64
#: Most JSON values (rough count: commas + brackets) one JSON text may hold before parsing.
MAX_JSON_VALUES = 1_000_000


class InputRefused(ValueError):
    """An input beyond a reading budget, or of a kind that cannot be read (a FIFO, a device).

    ``str()`` is one line naming the input and what to do. ``what`` is the caller's name for the
    input (``--config FILE``, ``config.json``...).
    """

    def __init__(self, message: str, what: str | None = None):
        super().__init__(message)
        self.what = what


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO), which could block forever"
    if stat.S_ISCHR(mode):
        return "a character device (such as /dev/zero), which may never end"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


def read_regular_file(path: str | os.PathLike, *, limit: int, what: str = "file") -> bytes:
    """The bytes of ``path`` if it is a regular file (symlinks followed) of at most ``limit`` bytes.

    Opens with ``O_NONBLOCK`` (opening a FIFO for reading does not wait for a writer), checks
    the *opened* file with ``fstat`` (no race between the check and the read) and reads at
    most ``limit + 1`` bytes, so a file that grows while read is still bounded.

    Raises:
        InputRefused: not a regular file (FIFO, device, directory, socket) or larger than
            ``limit``; the message names ``what`` and the path.
        OSError: the file cannot be opened or read (missing, permission denied...).
    """
    p = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except IsADirectoryError:
        raise InputRefused(f"{what} {p} is a directory, not a file; give the path of a file", what) from None
    except OSError as err:
        if err.errno == errno.ENXIO:  # a FIFO opened for writing only / a socket
            raise InputRefused(f"{what} {p} is not a regular file; give the path of a regular file", what) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputRefused(f"{what} {p} is {_kind(st.st_mode)}; give the path of a regular file", what)
        if st.st_size > limit:
            raise InputRefused(
                f"{what} {p} is {_size(st.st_size)}, more than the {_size(limit)} SpecWizard reads for it; "
                "is this the right file?", what)
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            try:
                b = os.read(fd, min(1 << 20, limit + 1 - got))
            except BlockingIOError:  # pragma: no cover - regular files never block
                break
            if not b:
                break
            chunks.append(b)
            got += len(b)
        if got > limit:
            raise InputRefused(f"{what} {p} grew beyond {_size(limit)} while being read; is this the right file?", what)
        return b"".join(chunks)
    finally:
        os.close(fd)


def decode_text(data: bytes, *, what: str = "file") -> str:
    """UTF-8 text of ``data`` (a leading BOM dropped). Raises InputRefused naming the first bad
    byte and its offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        bad = data[err.start:err.start + 1]
        raise InputRefused(
            f"{what} is not UTF-8 text (byte 0x{bad.hex() or '??'} at offset {err.start}); save it as UTF-8", what
        ) from None


def read_text_file(path: str | os.PathLike, *, limit: int, what: str = "file") -> str:
    """:func:`read_regular_file` then :func:`decode_text`. Raises InputRefused or OSError."""
    return decode_text(read_regular_file(path, limit=limit, what=what), what=f"{what} {os.fspath(path)}")


# ---- JSON ------------------------------------------------------------------------------------

def _json_depth_ok(text: str, limit: int) -> bool:
    """Cheap over-estimate of the bracket nesting (brackets inside strings count too)."""
    depth = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > limit:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def json_loads_bounded(data: str | bytes, *, what: str = "JSON", max_values: int = MAX_JSON_VALUES,
                       max_depth: int | None = None, max_bytes: int | None = None) -> Any:
    """``json.loads`` with a budget. NaN/Infinity are accepted (Python's and transformers' JSON
    readers accept them; callers judge the values). JSON has no aliases: the parsed document is
    about as large as the text, so the byte budget is the text's length (``max_bytes``; None:
    whatever the caller read, e.g. a file capped by :func:`read_regular_file`).

    Raises:
        InputRefused: not UTF-8, longer than ``max_bytes``, more than ``max_values`` values
            (counted before parsing), nested deeper than ``max_depth`` (default: whatever Python
            can parse), an integer of more than 4300 digits (Python's int-string limit), or not
            valid JSON (line, column and reason). Every message starts with ``what``.
    """
    if max_bytes is not None and len(data) > max_bytes:
        raise InputRefused(f"{what} is {_size(len(data))}, more than the {_size(max_bytes)} SpecWizard reads for it; "
                           "is this the right file?", what)
    if isinstance(data, (bytes, bytearray)):
        text = decode_text(bytes(data), what=what)
    else:
        text = data
    n = text.count(",") + text.count("[") + text.count("{")
    if n + 1 > max_values:
        raise InputRefused(f"{what} holds about {n:,} JSON values, more than the {max_values:,} SpecWizard reads; "
                           "is this the right file?", what)
    if max_depth is not None and len(text) > max_depth and not _json_depth_ok(text, max_depth):
        raise InputRefused(f"{what} is nested deeper than {max_depth} levels; no real configuration is", what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputRefused(f"{what} is not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})", what) from None
    except RecursionError:
        raise InputRefused(f"{what} is nested too deeply to read; no real configuration is", what) from None
    except ValueError as err:  # "Exceeds the limit (4300 digits) for integer string conversion"
        msg = str(err)
        if "digits" in msg:
            raise InputRefused(f"{what} holds an integer with more than 4300 digits; no real setting is that large", what) from None
        raise InputRefused(f"{what} cannot be read as JSON ({msg.splitlines()[0] if msg else type(err).__name__})", what) from None


# ---- YAML ------------------------------------------------------------------------------------

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def yaml_expanded_size(node: yaml.Node, *, max_nodes: int = MAX_YAML_NODES, max_depth: int = MAX_NESTING,
                       what: str = "YAML", max_bytes: int | None = MAX_YAML_EXPANDED_BYTES) -> int:
    """Nodes of the document with every alias expanded (each use of an anchor counts its whole
    subtree again). Iterative, memoised per node: linear in the size of the *text*.

    The same walk sums the characters of the scalars, each counted once per use (the bytes a JSON
    export or a deep copy of the built document holds, give or take punctuation): beyond
    ``max_bytes`` (None: no byte budget) the document is refused after the walk, with the total.

    Raises:
        InputRefused: a recursive alias (a node that contains itself), nesting deeper than
            ``max_depth``, more than ``max_nodes`` expanded nodes, or more than ``max_bytes``
            expanded bytes (the message names ``what``, the total and the top-level key holding
            most of it).
    """
    sizes: dict[int, int] = {}
    nbytes: dict[int, int] = {}
    on_path: set[int] = set()
    # (node, depth, children-pushed?)
    stack: list[tuple[yaml.Node, int, bool]] = [(node, 1, False)]
    while stack:
        cur, depth, expanded = stack.pop()
        key = id(cur)
        if expanded:
            on_path.discard(key)
            kids = _children(cur)
            total = 1 + sum(sizes[id(ch)] for ch in kids)
            if total > max_nodes:
                raise InputRefused(
                    f"{what} expands to more than {max_nodes:,} values (YAML aliases such as *a repeat whole "
                    "blocks; a few hundred bytes can expand to billions); write the values out or remove the aliases",
                    what)
            sizes[key] = total
            nbytes[key] = sum(nbytes[id(ch)] for ch in kids)
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise InputRefused(f"{what} has a recursive alias (a YAML anchor used inside itself, e.g. &a [*a]); "
                               "vLLM cannot read it: remove the alias", what)
        if depth > max_depth:
            raise InputRefused(f"{what} is nested deeper than {max_depth} levels; vLLM options are at most a few "
                               "levels deep", what)
        kids = _children(cur)
        if not kids:
            sizes[key] = 1
            nbytes[key] = len(cur.value) if isinstance(cur, yaml.ScalarNode) and isinstance(cur.value, str) else 0
            continue
        on_path.add(key)
        stack.append((cur, depth, True))
        for ch in kids:
            if id(ch) in on_path:
                raise InputRefused(f"{what} has a recursive alias (a YAML anchor used inside itself, e.g. &a [*a]); "
                                   "vLLM cannot read it: remove the alias", what)
            if id(ch) not in sizes:
                stack.append((ch, depth + 1, False))
    total_bytes = nbytes[id(node)]
    if max_bytes is not None and total_bytes > max_bytes:
        where = ""
        if isinstance(node, yaml.MappingNode) and node.value:
            k, v = max(node.value, key=lambda kv: nbytes[id(kv[0])] + nbytes[id(kv[1])])
            name = k.value if isinstance(k, yaml.ScalarNode) and isinstance(k.value, str) else "?"
            where = f" (most of it under `{name[:60]}`)"
        raise InputRefused(
            f"{what}: YAML aliases expand to {_size(total_bytes)}{where}, more than the {_size(max_bytes)} "
            "SpecWizard reads (each *alias repeats the whole anchored value); is this the right file?", what)
    return sizes[id(node)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        out: list[yaml.Node] = []
        for k, v in node.value:
            out.append(k)
            out.append(v)
        return out
    return []


def yaml_load_bounded(text: str, *, what: str = "YAML", max_nodes: int = MAX_YAML_NODES,
                      max_depth: int = MAX_NESTING, max_bytes: int | None = MAX_YAML_EXPANDED_BYTES) -> Any:
    """``yaml.safe_load(text)`` that measures the composed node graph before constructing it
    (see :func:`yaml_expanded_size`). Uses libyaml's C loader when present.

    Raises:
        yaml.YAMLError: the text is not YAML (callers report line and column).
        InputRefused: beyond the node/byte/depth budget, a recursive alias, or a scalar Python
            cannot hold (an integer of more than 4300 digits).
    """
    loader = _LOADER(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise InputRefused(f"{what} is nested too deeply to read; vLLM options are at most a few levels deep", what) from None
        if node is None:
            return None
        yaml_expanded_size(node, max_nodes=max_nodes, max_depth=max_depth, what=what, max_bytes=max_bytes)
        try:
            return loader.construct_document(node)
        except RecursionError:
            raise InputRefused(f"{what} is nested too deeply to read", what) from None
        except yaml.YAMLError:
            raise
        except (ValueError, OverflowError) as err:  # int('1' * 5000): Python's 4300-digit limit
            msg = str(err)
            if "digits" in msg:
                raise InputRefused(f"{what} holds an integer with more than 4300 digits; no real setting is that large",
                                   what) from None
            raise InputRefused(f"{what} holds a value YAML cannot convert ({msg.splitlines()[0] if msg else type(err).__name__})",
                               what) from None
    finally:
        loader.dispose()
