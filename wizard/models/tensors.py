"""safetensors *headers* -> tensor facts (tensor data is never read).

* :func:`read_safetensors_header` -- one ``*.safetensors`` file -> ``{name: TensorInfo}``
  (8-byte little-endian header length + JSON header, as specified by the safetensors format,
  https://github.com/huggingface/safetensors#format).
* :func:`scan_header` -- the same, kept small for large checkpoints (only the tensors
  :func:`is_selected` names keep their shapes), within a byte budget.
* :func:`apply_tensor_facts` -- tensor names/shapes -> has_lm_head, has_embed_tokens, has_d2t,
  has_t2d, has_mtp_weights, param_count, weight_bytes (used for local folders and the Hub).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import struct
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from wizard.models.config_json import is_int
from wizard.models.info import ModelInfo, TensorInfo

__all__ = ["read_safetensors_header", "scan_header", "HeaderScan", "OverBudget", "apply_tensor_facts", "is_selected",
           "SafetensorsHeaderError", "DTYPE_BYTES"]

# bytes per element of safetensors dtypes (https://github.com/huggingface/safetensors, Dtype enum)
DTYPE_BYTES: dict[str, float] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1, "F8_E4M3FNUZ": 1,
    "F8_E5M2FNUZ": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8, "F4": 0.5, "F6_E2M3": 0.75, "F6_E3M2": 0.75, "C64": 8,
}

# largest header we accept (safetensors itself caps it at 100 MB)
_MAX_HEADER = 100 * 1024 * 1024

_LAYER_RE = re.compile(r"(?:^|\.)layers\.(\d+)\.")


class SafetensorsHeaderError(ValueError):
    """A safetensors file whose header cannot be read (too short, bad length, bad JSON)."""



class HeaderScan:
    """One safetensors header, kept small: tensor names, the shapes of the tensors the rules
    read (``keep``), parameter and byte sums. Built by :func:`scan_header`."""

    __slots__ = ("names", "param_counts", "shapes", "params", "nbytes", "weighted_bytes", "meta", "header_bytes")

    def __init__(self) -> None:
        self.header_bytes = 0
        self.param_counts: list[int] = []
        self.names: list[str] = []
        self.shapes: dict[str, TensorInfo] = {}
        self.params = 0
        self.nbytes = 0
        self.weighted_bytes = 0.0
        self.meta: dict[str, Any] = {}


def _open_header(p: Path, budget: int | None) -> tuple[bytes, int, int]:
    """(header JSON bytes, file size, header length n) of a safetensors file, reading 8 + n bytes
    only. Raises SafetensorsHeaderError, or OverBudget when n exceeds ``budget``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except OSError as err:
        raise SafetensorsHeaderError(f"{p.name}: cannot read: {err.strerror or err}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SafetensorsHeaderError(f"{p.name}: not a regular file (a FIFO or device); not read")
        size = st.st_size
        with os.fdopen(os.dup(fd), "rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise SafetensorsHeaderError(f"{p.name}: file has {len(head)} bytes, too short for a safetensors header")
            (n,) = struct.unpack("<Q", head)
            if n == 0 or n > _MAX_HEADER or n > size - 8:
                raise SafetensorsHeaderError(
                    f"{p.name}: header length {n} does not fit the file ({size} bytes): truncated or not safetensors"
                )
            if budget is not None and n > budget:
                raise OverBudget(n)
            blob = fh.read(n)
    except OSError as err:
        raise SafetensorsHeaderError(f"{p.name}: cannot read: {err.strerror or err}") from None
    finally:
        os.close(fd)
    if len(blob) < n:
        raise SafetensorsHeaderError(f"{p.name}: truncated header ({len(blob)} of {n} bytes)")
    return blob, size, n


class OverBudget(Exception):
    def __init__(self, n: int):
        self.n = n


def scan_header(path: Path, keep: Callable[[str], bool], budget: int | None = None) -> HeaderScan:
    """Parse one header into a :class:`HeaderScan`; tensor entries become small tuples while
    parsing (``object_pairs_hook``), so memory stays a few times the header size."""
    p = Path(path)
    blob, size, n = _open_header(p, budget)

    def hook(pairs: list[tuple[str, Any]]) -> Any:
        if len(pairs) == 3 or len(pairs) == 4:
            d = dict(pairs)
            if "dtype" in d and "shape" in d and "data_offsets" in d:
                return ("\0tensor", d["dtype"], d["shape"], d["data_offsets"])
        return dict(pairs)

    try:
        if blob.count(b",") + blob.count(b"{") + blob.count(b"[") > 4 * 1024 * 1024:
            raise SafetensorsHeaderError(f"{p.name}: header holds more than 4 million JSON values; not read")
        header = json.loads(blob.decode("utf-8"), object_pairs_hook=hook)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise SafetensorsHeaderError(f"{p.name}: header is not valid JSON ({type(err).__name__})") from None
    del blob
    if not isinstance(header, dict):
        raise SafetensorsHeaderError(f"{p.name}: header is not a JSON object")
    meta = header.pop("__metadata__", None)
    scan = HeaderScan()
    scan.header_bytes = 8 + n
    scan.meta = meta if isinstance(meta, dict) else {}
    data_end = 0
    for name, entry in header.items():
        if not (isinstance(entry, tuple) and len(entry) == 4 and entry[0] == "\0tensor"):
            raise SafetensorsHeaderError(f"{p.name}: entry {name!r:.80} is not an object with dtype, shape and data_offsets")
        _, dtype, shape, offs = entry
        if not isinstance(dtype, str) or not isinstance(shape, list) or not all(is_int(d) and d >= 0 for d in shape):
            raise SafetensorsHeaderError(f"{p.name}: tensor {name!r:.80} has no valid dtype/shape")
        if not (isinstance(offs, list) and len(offs) == 2 and all(is_int(o) for o in offs) and 0 <= offs[0] <= offs[1]):
            raise SafetensorsHeaderError(f"{p.name}: tensor {name!r:.80} has no valid data_offsets")
        if len(shape) > 64 or any(d > 2 ** 53 for d in shape):
            raise SafetensorsHeaderError(f"{p.name}: tensor {name!r:.80} has an impossible shape")
        scan.names.append(name)
        if keep(name):
            scan.shapes[name] = TensorInfo(shape=list(shape), dtype=dtype)
        count = math.prod(shape)
        scan.param_counts.append(count)
        scan.params += count
        scan.weighted_bytes += count * DTYPE_BYTES.get(dtype.upper(), 0)
        data_end = max(data_end, offs[1])
        scan.nbytes += offs[1] - offs[0]
    if 8 + n + data_end > size:
        raise SafetensorsHeaderError(f"{p.name}: truncated: header says {8 + n + data_end} bytes, file has {size}")
    return scan


def read_safetensors_header(path: str | os.PathLike) -> tuple[dict[str, TensorInfo], dict[str, Any], int]:
    """Read one safetensors header (never the tensor data).

    Returns ({name: TensorInfo(shape, dtype)}, __metadata__ dict, data bytes of the tensors).
    Raises SafetensorsHeaderError for a file that is not a regular file, too short, a header
    length beyond the file (or beyond safetensors' own 100 MB cap), a header that is not a JSON
    object, or entries without dtype/shape/data_offsets.
    """
    p = Path(path)
    scan = scan_header(p, lambda _name: True)
    return scan.shapes, scan.meta, scan.nbytes


def _is_lm_head(name: str) -> bool:
    return name == "lm_head.weight" or name.endswith(".lm_head.weight")


def _is_embed(name: str) -> bool:
    return name == "embed_tokens.weight" or name.endswith(".embed_tokens.weight")


def _is_map(name: str, key: str) -> bool:
    return name == key or name.endswith("." + key)


def is_selected(name: str) -> bool:
    return (
        _is_lm_head(name)
        or _is_embed(name)
        or _is_map(name, "d2t")
        or _is_map(name, "t2d")
        or name in ("fc.weight", "model.fc.weight", "mask_hidden", "model.mask_hidden")
    )


def _is_mtp_name(name: str, layers: int | None) -> bool:
    if "mtp" in name.split(".")[0] or ".mtp" in name or name.startswith("mtp"):
        return True
    if layers is not None:
        m = _LAYER_RE.search(name)
        if m and int(m.group(1)) >= layers and "vision" not in name and "visual" not in name:
            return True
    return False


def _shortest(names: Iterable[str]) -> str | None:
    names = sorted(names, key=lambda s: (len(s), s))
    return names[0] if names else None


def apply_tensor_facts(
    info: ModelInfo,
    names: Iterable[str],
    shapes: Mapping[str, TensorInfo] | None = None,
    *,
    total_size: int | None = None,
    param_count: int | None = None,
) -> ModelInfo:
    """Fill the tensor facts of ``info`` in place from the full list of tensor names.

    ``shapes`` (name -> TensorInfo) may cover all or part of the names; the lm_head,
    embed_tokens, d2t, t2d (any prefix), ``fc`` and ``mask_hidden`` entries are copied into
    ``info.tensors``. has_mtp_weights: names under ``*mtp*`` or ``layers.{i}.`` with
    i >= num_hidden_layers (DeepSeek ``model.layers.61.*``, MiMo ``model.mtp_layers.*``).
    ``total_size`` (bytes) and ``param_count`` override the sums over ``shapes``.
    Returns ``info``.
    """
    names = list(names)
    shapes = shapes or {}
    info.tensor_names_known = True
    main = [n for n in names if not _is_mtp_name(n, info.num_hidden_layers)]
    lm = [n for n in main if _is_lm_head(n) and "shared_head" not in n]
    emb = [n for n in main if _is_embed(n)]
    d2t = [n for n in names if _is_map(n, "d2t")]
    t2d = [n for n in names if _is_map(n, "t2d")]
    info.has_lm_head = bool(lm)
    info.has_embed_tokens = bool(emb)
    info.has_d2t = bool(d2t)
    info.has_t2d = bool(t2d)
    info.has_mtp_weights = any(_is_mtp_name(n, info.num_hidden_layers) for n in names)
    for key, group in (("lm_head.weight", lm), ("embed_tokens.weight", emb), ("d2t", d2t), ("t2d", t2d)):
        best = _shortest(group)
        if best and best in shapes:
            info.tensors[best] = shapes[best]
    for n in names:
        if n in shapes and is_selected(n) and n not in info.tensors and not _is_mtp_name(n, info.num_hidden_layers):
            info.tensors[n] = shapes[n]
    if shapes and len(shapes) == len(set(names)):
        info.param_count = param_count if param_count is not None else sum(math.prod(t.shape) for t in shapes.values())
        if total_size is None:
            total = 0.0
            for t in shapes.values():
                total += math.prod(t.shape) * DTYPE_BYTES.get(t.dtype.upper(), 0)
            info.weight_bytes = int(total)
    elif param_count is not None:
        info.param_count = param_count
    if total_size is not None:
        info.weight_bytes = total_size
    return info
