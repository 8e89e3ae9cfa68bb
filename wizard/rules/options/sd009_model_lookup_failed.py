from __future__ import annotations

import os

from wizard.config import Patch
from wizard.models.catalog import entries
from wizard.resolve import drafter_model_name
from wizard.rules.registry import Rule, Severity, register
from wizard.paths import written_as_path
from wizard.models.catalog import closest_catalog_ids
from wizard.models.info import NOT_A_REPO_ID


def _catalog_match(name: str, field: str) -> str | None:
    """The catalog id whose name part equals the path's last component (case-insensitive), or None."""

    base = os.path.basename(name.rstrip("/\\")).lower()
    if not base:
        return None
    role = "target" if field == "model" else "drafter"
    hits = [e.id for e in entries(role) if e.id.rsplit("/", 1)[-1].lower() == base]
    return hits[0] if len(hits) == 1 else None


def _unloadable(name: str) -> str | None:
    """Why an existing local path holds no model vLLM can load (None when it may): a folder with
    neither config.json nor params.json (Mistral's native format), or a file that is not a GGUF."""
    p = os.path.expanduser(name)
    if os.path.isdir(p):
        if os.path.exists(os.path.join(p, "config.json")) or os.path.exists(os.path.join(p, "params.json")):
            return None
        return "is a folder with no config.json"
    if os.path.isfile(p) and not p.lower().endswith(".gguf"):
        return "is a file, not a model folder (nor a .gguf file)"
    return None


@register
class ModelLookupFailed(Rule):
    r"""Model lookup failed: model-dependent checks did not run

    ## What it does

    Reports each entry of ``ctx.lookup_errors`` (the target ``model`` or the
    drafter ``speculative_config.model``) with the reason the lookup gave.

    A *path-like* name (``/models/x``, ``./x``, ``../x``, ``~/x``) that does not exist is an
    **error** (title "Model path does not exist"): vLLM reads such names only as local folders and
    fails for sure. So is an existing local path that holds no model: a folder with neither
    ``config.json`` nor ``params.json``, or a file that is not a ``.gguf`` (title "Model path holds
    no model"). Hub ids that cannot be reached (offline) stay a warning; when the id is close to
    ids of the offline catalog (a typo such as ``Llama-3.1-8B-Instrcut``), the message names them
    ("did you mean ...?").

    ## Why it matters

    Vocabulary, MTP-layer, architecture, max-length and KV-dtype rules need
    the checkpoint's config.json. Without it a green check only covers the options, not the model.

    ## Example

    A typo in a Hub id, or an offline machine with an id that is not in the
    built-in catalog.

    ```sh
    vllm serve no-such-org/no-such-model-xyz \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Use instead

    Point the field at a local folder with config.json, use a catalog id, or
    allow Hub access (drop ``--offline``).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    No automatic fix in general: only the user knows which checkpoint was meant.
    For a missing path whose last component names exactly one catalog model
    (``/models/Llama-3.1-8B-Instruct``), the fix offers that catalog id. A missing path with no
    catalog match has no fix (the error says to point it at the real folder). For a Hub id that
    could not be looked up and is close to catalog ids, the fix offers the closest one (the
    message lists up to three); unsafe if another checkpoint was meant, so review it.

    ## Source

    SpecWizard itself (wizard/context.py resolve_context); vLLM's model loading
    (vllm/transformers_utils/config.py: a non-existent path is not a valid model identifier).
    """

    id = "SD009"
    severity = Severity.WARNING
    fields = ("model", "speculative_config.model")
    phase = "config"

    def check(self, ctx):
        for field, reason in sorted(ctx.lookup_errors.items()):
            name = ctx.config.model if field == "model" else drafter_model_name(ctx)
            if (isinstance(name, str) and written_as_path(name) and field not in ctx.refused_paths
                    and not os.path.exists(os.path.expanduser(name))):
                fixes = []
                entry = _catalog_match(name, field)
                if entry is not None:
                    fixes.append(Patch(description=f"Use the catalog model {entry}", set={field: entry}))
                yield self.finding(
                    f"{field}: {name!r} is a local path that does not exist; vLLM fails to load it ('not a local "
                    "folder and is not a valid model identifier'). Point it at the folder holding config.json and "
                    "the weights" + (f", or use the catalog id {entry}." if entry else "."),
                    fields=[field], fixes=fixes, severity=Severity.ERROR, title="Model path does not exist",
                )
                continue
            unloadable = _unloadable(name) if isinstance(name, str) and field not in ctx.refused_paths else None
            if unloadable:
                yield self.finding(
                    f"{field}: {name!r} {unloadable}; vLLM cannot load a model from it (transformers: 'does not "
                    "appear to have a file named config.json'). Point it at the folder holding the checkpoint's "
                    "config.json and weights.",
                    fields=[field], severity=Severity.ERROR, title="Model path holds no model")
                continue
            close = [] if not isinstance(name, str) or field in ctx.refused_paths else \
                closest_catalog_ids(name, "target" if field == "model" else "drafter")
            close = [c for c in close if c != name]
            hint = (f" Did you mean {close[0]}" + (f" (or {', '.join(close[1:])})" if close[1:] else "") + "?"
                    if close else "")
            fixes = [Patch(description=f"Use the catalog model {close[0]}", set={field: close[0]})] if close else []
            if NOT_A_REPO_ID in reason:  # no Hub can serve such a name: vLLM's own lookup refuses it too
                yield self.finding(
                    f"{field}: {reason.rstrip('.')}. vLLM fails the same way before loading anything (huggingface_hub: "
                    f"'Repo id must be in the form ...'). Give a local folder or an org/name repo id.{hint}",
                    fields=[field], fixes=fixes, severity=Severity.ERROR, title="Model name is not a repo id")
                continue
            yield self.finding(
                f"{field}: could not inspect the model ({reason}). Rules that need its config.json "
                "did not run. Give a local folder with config.json, a catalog id, or allow online "
                f"Hub lookups.{hint}",
                fields=[field],
                fixes=fixes,
            )
