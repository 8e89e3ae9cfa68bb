"""Every export form by name: the single-node forms of :mod:`wizard.io.export` and the scale-out
manifests of :mod:`wizard.io.scaleout` (the one dispatcher the CLI and the UI call).

    from wizard.io.forms import FORMATS, export
    export(cfg, "dotted"); export(cfg, "k8s")
"""

from __future__ import annotations

from wizard.config import ServeConfig
from wizard.io.export import to_command, to_dotted_command, to_python, to_yaml
from wizard.io.scaleout import SCALEOUT_FORMATS, export_scaleout
from wizard.privacy import redact_config

__all__ = ["FORMATS", "SINGLE_NODE_FORMATS", "export"]

_SINGLE = {"command": to_command, "json": to_command, "dotted": to_dotted_command, "yaml": to_yaml, "python": to_python}
#: The single-node forms (``json`` is an alias of ``command``).
SINGLE_NODE_FORMATS: tuple[str, ...] = ("command", "dotted", "yaml", "python")
#: Every form, single-node first.
FORMATS: tuple[str, ...] = SINGLE_NODE_FORMATS + SCALEOUT_FORMATS


def export(cfg: ServeConfig, to: str = "command", vllm_version=None, **opts) -> str:
    """``cfg`` in the form ``to`` (one of :data:`FORMATS`). Credentials are written as ``$VAR``
    references in every form (:func:`wizard.privacy.redact_config`). ``vllm_version``: the release
    whose ``vllm.LLM`` the ``python`` form is written for (default: installed, else newest known).
    ``opts`` go to the scale-out forms (``hardware="H200x8"``, ``gpus_per_node``...:
    :mod:`wizard.io.scaleout`); None values are dropped.

    Raises:
        KeyError: unknown form (the message lists :data:`FORMATS`). ValueError: bad ``vllm_version``.
    """
    key = str(to).strip().lower()
    if key == "python":
        return to_python(cfg, vllm_version)
    if key in _SINGLE:
        return _SINGLE[key](cfg)
    if key in SCALEOUT_FORMATS:
        return export_scaleout(redact_config(cfg), key, **{k: v for k, v in opts.items() if v is not None})
    raise KeyError(f"--to: unknown export format {str(to)[:40]!r}; choose from {', '.join(FORMATS)}")
