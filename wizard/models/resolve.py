"""Resolve a model name the way a user types it: local folder, then catalog id, then the Hub.

Order (same as vLLM, which treats an existing path as a local checkpoint before a Hub id):

1. an existing local folder -> :func:`wizard.models.local.inspect_folder`;
2. a catalog id or alias (``presets/models``) -> :func:`wizard.models.catalog.lookup`;
3. the Hugging Face Hub (config + safetensors headers) when ``allow_hub``;
4. else :class:`wizard.models.info.ModelLookupError` naming where it looked.
"""

from __future__ import annotations

from pathlib import Path

from wizard.models import catalog
from wizard.models.info import NOT_A_REPO_ID, ModelInfo, ModelLookupError
from wizard.paths import written_as_path

__all__ = ["resolve_model"]


def resolve_model(name: str, revision: str | None = None, *, allow_hub: bool = True) -> ModelInfo:
    """Inspect ``name``: local folder, catalog id (case-insensitive), then the Hub.

    ``revision`` only applies to the Hub (a catalog entry describes the main revision).

    Raises:
        ModelLookupError: empty name; a path that is not a folder; not found locally nor in the
            catalog and the Hub is off (``allow_hub=False``) or unreachable/offline.
    """
    if not isinstance(name, str) or not name.strip():
        raise ModelLookupError("model name is empty: give a local folder, a catalog id (python -m wizard models) or a Hub id")
    name = name.strip()
    try:
        p = Path(name).expanduser()
        is_dir = p.is_dir()
        exists = p.exists()
    except (OSError, ValueError):
        is_dir = exists = False
    if is_dir:
        from wizard.models.local import inspect_folder  # safetensors headers: only for a folder

        return inspect_folder(p, id=name)
    if exists:
        raise ModelLookupError(f"'{name}' is a file, not a model folder: point at the folder that holds config.json")

    info = catalog.lookup(name)
    if info is not None:
        return info
    if written_as_path(name):
        raise ModelLookupError(f"local model folder '{name}' does not exist (looked on disk; a path is not a catalog or Hub id)")
    if not allow_hub:
        from wizard.models.hub import repo_id_problem  # huggingface_hub: only for a name no catalog knows

        problem = repo_id_problem(name)
        if problem:
            raise ModelLookupError(f"'{name}' {NOT_A_REPO_ID}: {problem}")
        raise ModelLookupError(
            f"'{name}' is not a local folder nor a catalog id (python -m wizard models to list), "
            "and Hugging Face Hub lookups are disabled"
        )
    from wizard.models.hub import inspect_hub  # huggingface_hub: only for a Hub id

    return inspect_hub(name, revision)
