"""KV-connector facts the pair rules share, from vLLM's source (0.28-0.32 checked in the wheels).

* ``--kv-transfer-config`` is ``KVTransferConfig`` (vllm/config/kv_transfer.py): ``kv_connector``,
  ``kv_role`` (``kv_producer`` | ``kv_consumer`` | ``kv_both``), ``kv_connector_extra_config``;
  ``has_connector`` also looks inside a ``MultiConnector``'s ``connectors`` list.
* The NIXL connectors (``NixlConnector``, ``NixlPullConnector``: transfer mode ``pull``;
  ``NixlPushConnector``: ``push``; registered in kv_connector/factory.py) share one worker
  (kv_connector/v1/nixl/base_worker.py) that compares a compatibility hash at the handshake
  unless ``kv_connector_extra_config.enforce_handshake_compat`` is false. The hash
  (nixl/metadata.py ``compute_nixl_compatibility_hash``) covers the vLLM and connector versions,
  the target (model, dtype, KV heads, head size, layers), the attention backend, the KV-cache
  dtype, the hybrid KV-cache manager, the transfer mode and -- for ``use_eagle()`` methods
  (eagle, eagle3, mtp, dflash, dspark) -- the drafter: method, draft model, revision,
  code_revision, parallel_drafting, the effective drafter KV dtype and the EAGLE auxiliary
  layer ids (``_get_speculative_compatibility_factors``). ``num_speculative_tokens`` is not in it.
"""

from __future__ import annotations

from typing import Any

from wizard.context import CheckContext
from wizard.vllm.methods import use_eagle

__all__ = ["NIXL_CONNECTORS", "kv_transfer", "connectors", "nixl_mode", "enforces_hash",
           "hash_factors", "ROLES"]

#: the NIXL connectors and their transfer mode (vllm/distributed/kv_transfer/kv_connector/factory.py, 0.28-0.32)
NIXL_CONNECTORS = {"NixlConnector": "pull", "NixlPullConnector": "pull", "NixlPushConnector": "push"}
#: KVTransferConfig's roles (vllm/config/kv_transfer.py KVProducer / KVConsumer)
ROLES = ("kv_producer", "kv_consumer", "kv_both")


def kv_transfer(ctx: CheckContext) -> dict[str, Any] | None:
    """The side's ``--kv-transfer-config`` as a dict (None when unset or unreadable)."""
    v = ctx.view.option("kv_transfer_config")
    return v if isinstance(v, dict) else None


def connectors(kt: dict[str, Any] | None) -> list[str]:
    """The connector names of a KV-transfer config (a MultiConnector's children included)."""
    if not kt or not isinstance(kt.get("kv_connector"), str):
        return []
    names = [kt["kv_connector"]]
    if kt["kv_connector"] == "MultiConnector":
        extra = kt.get("kv_connector_extra_config") or {}
        for child in extra.get("connectors", []) if isinstance(extra, dict) else []:
            if isinstance(child, dict) and isinstance(child.get("kv_connector"), str):
                names.append(child["kv_connector"])
    return names


def nixl_mode(kt: dict[str, Any] | None) -> str | None:
    """'pull' | 'push' for a NIXL connector (first found), else None."""
    for name in connectors(kt):
        if name in NIXL_CONNECTORS:
            return NIXL_CONNECTORS[name]
    return None


def enforces_hash(kt: dict[str, Any] | None) -> bool:
    extra = (kt or {}).get("kv_connector_extra_config") or {}
    v = extra.get("enforce_handshake_compat", True) if isinstance(extra, dict) else True
    return not (v is False or (isinstance(v, str) and v.strip().lower() in ("false", "0", "no")))


def hash_factors(ctx: CheckContext) -> dict[str, Any]:
    """The user-visible inputs of the NIXL compatibility hash this side would send (see the
    module docstring); each value as vLLM resolves it where the wizard can (method, KV dtypes)."""
    cfg = ctx.config
    kv = ctx.target_kv_dtype()
    out: dict[str, Any] = {
        "model": cfg.model, "dtype": ctx.model_dtype() or (cfg.dtype or "auto"), "kv_cache_dtype": kv,
        "attention_backend": cfg.attention_backend or "auto", "transfer_mode": nixl_mode(kv_transfer(ctx)),
        "disable_hybrid_kv_cache_manager": bool(ctx.view.option("disable_hybrid_kv_cache_manager", False)),
    }
    spec = cfg.speculative_config
    if spec is not None and use_eagle(ctx.method):  # SpeculativeConfig.use_eagle(), wizard/vllm/methods.py
        out["speculative_config"] = {
            "method": ctx.method,
            "model": spec.model or cfg.model,  # MTP: the draft model config is the target's
            "revision": spec.revision, "code_revision": spec.code_revision,
            "parallel_drafting": bool(spec.parallel_drafting),
            "kv_cache_dtype": ctx.drafter_kv_dtype(),
        }
    else:
        out["speculative_config"] = None
    return out
