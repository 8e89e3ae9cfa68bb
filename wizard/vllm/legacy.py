"""What vLLM read before the standalone spec-decode flags were removed: the one list of legacy
speculative-decoding spellings, generated from vLLM 0.8.2's own source
(``scripts/dump_vllm_legacy_spec.py`` -> ``wizard/data/vllm/0.8/legacy_spec.json``).

    from wizard.vllm import legacy
    legacy.SPEC_FLAGS["ngram_prompt_lookup_max"]        # 'prompt_lookup_max'
    legacy.SPEC_KEY_RENAMES["num_lookahead_slots"]      # 'num_speculative_tokens'
    legacy.modern_spec_key("speculative_model", fields) # 'model' when 'model' is in fields
    legacy.is_legacy_spec_key("acceptance_method")      # True (a 0.8 field later releases dropped)

Facts (vLLM 0.8.2):

* ``SPEC_FLAGS``: ``EngineArgs.create_speculative_config`` (vllm/engine/arg_utils.py) built the
  speculative config from the old flags, ``{"model": self.speculative_model, ...}``: old flag
  dest -> SpeculativeConfig key. PR #15466 removed the flags (vLLM rejects them since).
* ``SPEC_KEY_RENAMES``: a key written inside the speculative-config JSON under an old spelling:
  the old flag names (above, where the name changed) and the read-only ``SpeculativeConfig``
  properties that return a field (``num_lookahead_slots`` -> ``num_speculative_tokens``).
  vLLM 0.32/0.33 reject all of them ("Unexpected keyword argument").
* ``SPEC_FIELDS_0_8``: 0.8.2's SpeculativeConfig init fields; those no longer fields of a later
  release (``acceptance_method``, ``disable_logprobs``, ``disable_by_batch_size``...) are legacy
  keys with no modern equivalent.
"""

from __future__ import annotations

from typing import Collection

from wizard.vllm.releases import load

__all__ = ["SPEC_FLAGS", "SPEC_KEY_RENAMES", "SPEC_FIELDS_0_8", "LEGACY_VLLM_VERSION", "legacy_parser",
           "is_legacy_spec_key", "modern_spec_key"]

_DATA = load("0.8", "legacy_spec.json")

#: the vLLM release the legacy facts were read from ('0.8.2')
LEGACY_VLLM_VERSION: str = _DATA["vllm_version"]

#: old standalone flag dest -> SpeculativeConfig key (``speculative_model`` -> ``model``)
SPEC_FLAGS: dict[str, str] = dict(_DATA["speculative_flags"])

#: old spelling of a speculative-config key -> the key it stood for
SPEC_KEY_RENAMES: dict[str, str] = {**{old: new for old, new in SPEC_FLAGS.items() if old != new},
                                    **_DATA["speculative_aliases"]}

#: SpeculativeConfig init fields of vLLM 0.8.2
SPEC_FIELDS_0_8: frozenset[str] = frozenset(_DATA["speculative_config_fields"])


def legacy_parser() -> dict[str, frozenset[str]]:
    """Dests of the 0.8.2 `vllm serve` parser by how they read a value: ``store_true`` (no value)
    and ``store_boolean`` (vLLM's StoreBoolean: ``--X`` alone or ``--X true|false``)."""
    return {"store_true": frozenset(_DATA["store_true"]), "store_boolean": frozenset(_DATA["store_boolean"])}


def is_legacy_spec_key(key: str) -> bool:
    """``key`` is an old spelling (:data:`SPEC_KEY_RENAMES`) or a 0.8.2 SpeculativeConfig field."""
    return key in SPEC_KEY_RENAMES or key in SPEC_FIELDS_0_8


def modern_spec_key(key: str, fields: Collection[str]) -> str | None:
    """The key ``key`` stands for when that is one of ``fields`` (the SpeculativeConfig fields of
    the release checked against), else None (no equivalent there)."""
    new = SPEC_KEY_RENAMES.get(key, key)
    return new if new in fields else None
