"""Model inspection: local folders, the Hugging Face Hub, and the offline catalog."""

from wizard.models.info import ModelInfo, TensorInfo

__all__ = ["ModelInfo", "TensorInfo", "resolve_model", "ModelLookupError"]


class ModelLookupError(Exception):
    """A model could not be inspected; ``str(err)`` says why and what to do (offline, missing file...)."""


def resolve_model(name: str, revision: str | None = None, *, allow_hub: bool = True) -> ModelInfo:
    """Inspect ``name``: a local folder, else a catalog id, else the Hub (metadata only).

    Raises:
        ModelLookupError: nothing found; the message says where it looked and the fix.
    """
    from wizard.models.resolve import resolve  # implemented in wizard/models/resolve.py

    return resolve(name, revision=revision, allow_hub=allow_hub)
