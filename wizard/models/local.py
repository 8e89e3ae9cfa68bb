"""Inspect a local model folder: config.json (or Mistral ``params.json``), safetensors *headers*
and ``model.safetensors.index.json``. Tensor data is never read.

:func:`inspect_folder` reads the files within budgets and hands the config to
:func:`wizard.models.config_json.info_from_config` and the tensor names to
:func:`wizard.models.tensors.apply_tensor_facts`.

Error policy: a missing folder or a folder without config.json/params.json raises
:class:`wizard.models.info.ModelLookupError`. Anything else that is wrong (config.json that is not
JSON, a truncated or corrupt safetensors file, an index that does not parse, a field of the
wrong type) is written to ``ModelInfo.notes`` and the affected fields stay ``None``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

from wizard.io.safeio import InputRefused, json_loads_bounded, read_regular_file
from wizard.models.config_json import info_from_config, is_int, kv_cache_quant
from wizard.models.info import ModelInfo, ModelLookupError, TensorInfo
from wizard.models.tensors import OverBudget, SafetensorsHeaderError, apply_tensor_facts, is_selected, scan_header

__all__ = ["inspect_folder", "HEADER_BUDGET_BYTES", "MAX_WEIGHT_FILES"]

_MAX_CONFIG = 50 * 1024 * 1024

#: JSON values (rough count) read from one config.json / params.json / hf_quant_config.json
#: (real ones hold hundreds to a few thousand; a quantization "ignore" list can hold ~10k).
_CONFIG_VALUES = 200_000
#: ... and from one model.safetensors.index.json (one weight_map entry per tensor: ~92k for
#: DeepSeek-V3, ~200k for the largest MoE checkpoints).
_INDEX_VALUES = 1_000_000
#: Header bytes read per model folder over all safetensors files (after de-duplicating files
#: that resolve to the same path). Real folders: ~10 KB to ~20 MB. Beyond it the remaining
#: headers are skipped with a note and the tensor facts that needed them stay unknown.
HEADER_BUDGET_BYTES = 32 * 1024 * 1024
#: Most *.safetensors files looked at in one folder (Llama-3.1-405B has 191 shards).
MAX_WEIGHT_FILES = 4096


def _read_json_problem(path: Path, max_values: int = _CONFIG_VALUES) -> tuple[Any, str | None]:
    """(parsed JSON, None) or (None, one-line problem naming the file). Never raises; bounded
    in bytes (:data:`_MAX_CONFIG`), JSON values and nesting; refuses FIFOs and devices."""
    try:
        data = read_regular_file(path, limit=_MAX_CONFIG, what=path.name)
    except InputRefused as err:
        return None, str(err).replace(f"{path.name} {path}", path.name)
    except OSError as err:
        return None, f"{path.name}: cannot read ({err.strerror or err})"
    if not data.strip():
        return None, f"{path.name} is empty"
    try:
        return json_loads_bounded(data, what=path.name, max_values=max_values, max_depth=64), None
    except InputRefused as err:
        return None, str(err)


def _read_json(path: Path, notes: list[str], max_values: int = _CONFIG_VALUES) -> Any:
    """Parse a JSON file; a problem goes to ``notes`` and gives None."""
    value, problem = _read_json_problem(path, max_values)
    if problem:
        notes.append(problem + "; ignored")
    return value


def _present(p: Path) -> bool:
    """Something named ``p`` is there (a file, a FIFO, a broken symlink...): then it is read and
    its problem reported, rather than reported as missing."""
    return os.path.lexists(p)


def inspect_folder(path: str | os.PathLike, *, id: str | None = None) -> ModelInfo:
    """Inspect a local model folder (headers only; tensor data is never read).

    Reads ``config.json`` (else Mistral ``params.json``), ``hf_quant_config.json`` (ModelOpt,
    when config.json has no quantization_config), ``model.safetensors.index.json`` (weight_map
    names, metadata.total_size / total_parameters) and the ``*.safetensors`` headers, within
    budgets: 50 MiB and 200k values per JSON file, :data:`HEADER_BUDGET_BYTES` of headers per
    folder (files reached through links to the same file are read once), :data:`MAX_WEIGHT_FILES`.
    has_lm_head/has_embed_tokens/has_d2t/has_t2d/has_mtp_weights stay None when no tensor
    names could be read (no weights file, only ``*.bin``, corrupt headers).

    A config.json that vLLM could not load (not JSON, empty, ``null``, a list, over 50 MiB,
    unreadable, a FIFO, NaN or absurd sizes) is reported in ``ModelInfo.errors`` (rule SD007).

    Raises:
        ModelLookupError: the folder does not exist, or holds neither config.json nor params.json.
    """
    folder = Path(path)
    ident = id or str(path)
    try:
        is_dir = folder.is_dir()
    except (OSError, ValueError):
        is_dir = False
    if not is_dir:
        raise ModelLookupError(f"model folder '{path}' does not exist (or is not a directory)")
    cfg_path = folder / "config.json"
    params_path = folder / "params.json"
    notes: list[str] = []
    errors: list[str] = []
    native = False
    raw: Any = None
    if _present(cfg_path):
        raw, problem = _read_json_problem(cfg_path)
        if problem and _present(params_path):
            notes.append(f"{problem}; reading params.json instead")
            raw, problem = _read_json_problem(params_path)
            native = True
        if problem:
            errors.append(f"{problem}; vLLM cannot load the model from it. Fix or restore "
                          f"{'params.json' if native else 'config.json'} (re-download the checkpoint)")
    elif _present(params_path):
        raw, problem = _read_json_problem(params_path)
        native = True
        if problem:
            errors.append(f"{problem}; vLLM cannot load the model from it. Fix or restore params.json")
    else:
        raise ModelLookupError(
            f"model folder '{path}' has no config.json (nor a Mistral params.json): "
            "point --model at the checkpoint folder that contains config.json"
        )
    if errors:
        info = ModelInfo(id=ident, source="local", path=str(folder), notes=notes, errors=errors)
    else:
        info = info_from_config(raw, id=ident, source="local", path=str(folder), notes=notes, native_mistral=native)
    if isinstance(info.raw_config, dict) and info.quant_method is None and (folder / "hf_quant_config.json").is_file():
        hq = _read_json(folder / "hf_quant_config.json", info.notes)
        if isinstance(hq, dict):
            info.quant_method = "modelopt"
            info.kv_cache_quant = kv_cache_quant({"quant_method": "modelopt", **hq}, info.notes)
    try:  # the quantization config files get_quant_config looks for (vLLM globs *.json)
        info.json_files = sorted(p.name for p in folder.glob("*.json"))[:200]
    except OSError:
        info.json_files = None
    _inspect_weights(folder, info)
    return info


def _inspect_weights(folder: Path, info: ModelInfo) -> None:
    notes = info.notes
    index_names: list[str] | None = None
    weight_map: dict[str, Any] = {}
    total_size = total_params = None
    for idx_name in ("model.safetensors.index.json", "consolidated.safetensors.index.json"):
        idx_path = folder / idx_name
        if not idx_path.is_file():
            continue
        idx = _read_json(idx_path, notes, _INDEX_VALUES)
        if isinstance(idx, dict):
            wm = idx.get("weight_map")
            if isinstance(wm, dict):
                index_names = [str(k) for k in wm]
                weight_map = wm
            else:
                notes.append(f"{idx_name}: no 'weight_map' object; ignored")
            meta = idx.get("metadata") if isinstance(idx.get("metadata"), dict) else {}
            ts = meta.get("total_size")
            if is_int(ts) and 0 <= ts <= 2 ** 63:
                total_size = ts
            elif isinstance(ts, str) and ts.isascii() and ts.isdigit() and len(ts) <= 19:
                total_size = int(ts)
            elif isinstance(ts, float) and ts.is_integer() and 0 <= ts <= 2 ** 63:
                total_size = int(ts)
            tp = meta.get("total_parameters")
            if is_int(tp) and 0 <= tp <= 2 ** 63:
                total_params = tp
        elif idx is not None:
            notes.append(f"{idx_name}: not a JSON object; ignored")
        break

    files: list[Path] = []
    try:
        for p in folder.glob("*.safetensors"):
            if len(files) >= MAX_WEIGHT_FILES:
                notes.append(f"more than {MAX_WEIGHT_FILES} *.safetensors files; only the first {MAX_WEIGHT_FILES} are read")
                break
            if p.is_file():
                files.append(p)
    except OSError as err:
        notes.append(f"cannot list safetensors files: {err}")
    files.sort()
    # shards holding the tensors the rules read first (lm_head is usually in the last one)
    wanted = {str(v) for k, v in weight_map.items() if is_selected(str(k))}
    files.sort(key=lambda f: f.name not in wanted)
    counts: dict[str, int] = {}
    shapes: dict[str, TensorInfo] = {}
    file_names: list[str] = []
    ok = bool(files)
    data_bytes = 0
    budget = HEADER_BUDGET_BYTES
    seen: set[str] = set()
    for f in files:
        try:
            real = os.path.realpath(f)
        except (OSError, ValueError):
            real = str(f)
        if real in seen:
            notes.append(f"{f.name} is the same file as another shard (a link); read once")
            continue
        seen.add(real)
        try:
            scan = scan_header(f, is_selected, budget)
        except OverBudget as over:
            notes.append(f"{f.name}: header of {over.n:,} bytes is beyond the {HEADER_BUDGET_BYTES // 2**20} MiB of "
                         "safetensors headers SpecWizard reads per model; the remaining headers were not read")
            ok = False
            break
        except SafetensorsHeaderError as err:
            notes.append(f"safetensors header unreadable: {err}")
            ok = False
            continue
        budget -= scan.header_bytes
        shapes.update(scan.shapes)
        file_names.extend(scan.names)
        data_bytes += scan.nbytes
        counts.update(zip(scan.names, scan.param_counts))

    if index_names is not None:
        known = set(counts)
        missing = [n for n in index_names if n not in known]
        if files and missing:
            notes.append(f"{len(missing)} tensors of the index are not in a readable shard; shapes partly unknown")
        elif not files:
            notes.append("index found but no shard files: tensor names known, shapes unknown")
        names = list(dict.fromkeys(index_names + file_names))
        params = total_params
        if params is None and counts and all(n in known for n in names):
            params = sum(counts.values())
        apply_tensor_facts(
            info,
            names,
            {n: shapes[n] for n in names if n in shapes},
            total_size=total_size if total_size is not None else (data_bytes if ok and not missing else None),
            param_count=params,
        )
        if missing and not total_params:
            info.param_count = None
        return
    if files and ok:
        apply_tensor_facts(info, file_names, shapes, total_size=data_bytes, param_count=sum(counts.values()))
        return
    if files and file_names:
        notes.append("some safetensors files are unreadable: tensor facts unknown")
    try:
        bins = sorted(p.name for pat in ("*.bin", "*.pt", "*.pth") for p in _first(folder.glob(pat), 16))
    except OSError:
        bins = []
    if bins and not files:
        notes.append(
            f"weights are in {', '.join(sorted(bins)[:3])} (pickle): tensor names not read; has_lm_head etc. unknown"
        )


def _first(it: Iterable[Any], n: int) -> list[Any]:
    out = []
    for x in it:
        if len(out) >= n:
            break
        out.append(x)
    return out
