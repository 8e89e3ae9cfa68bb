"""Which targets can feed the drafters that read auxiliary hidden states, per release.

EAGLE-3 (and DFlash / DSpark / extract_hidden_states) drafters read hidden states of a few
target layers. vLLM has gated the target twice (facts generated from each X.Y.0 wheel by
``scripts/gen_eagle3_targets_history.py`` into ``wizard/data/vllm/history/eagle3_targets.json``):

* **config time, up to 0.21** (``vllm/config/speculative.py`` ``SpeculativeConfig._verify_args``):
  a list of model-type *substrings* (``eagle3_target_supported``, from 0.17 named
  ``aux_hidden_states_supported``) tested against ``hf_text_config.model_type`` for the methods
  the ``if`` names (0.10-0.16 eagle3; 0.17-0.19 + extract_hidden_states; 0.20-0.21 + dflash):
  ``ValueError: eagle3 is only supported for ['llama', 'qwen', ...] models``. 0.22 removed the
  list. A model type is admitted when *any* entry is a substring of it (``qwen`` admits every
  ``qwen*``; ``llama`` admits ``llama4``), exactly as vLLM tests it. Example: MiniMax-M2 was
  added in 0.19.1 (vllm-project/vllm PR #37512, issue #37868), so ``minimax_m2`` fails on <= 0.19.0.
* **load time, 0.11 on** (``vllm/v1/worker/gpu_model_runner.py``): ``RuntimeError: Model
  does not support EAGLE3 interface but aux_hidden_state_outputs was requested`` unless the
  registered class of the target architecture implements ``SupportsEagle3``
  (``vllm/model_executor/models/interfaces.py``): ``architectures`` lists, per release, every
  registry architecture whose class inherits it (through base classes and re-exports; for
  platform-split packages the CUDA branch), and ``platform_split`` the architectures whose package
  imports another class per platform (``if current_platform.is_rocm(): from .amd...``): the result
  per platform, e.g. Kimi-K3's text-only ``KimiLinearForCausalLM`` lacks the interface on ROCm
  (0.28-0.33: PR #52171 added it to the NVIDIA class only).

A patch release whose facts differ from its X.Y.0 has its own entry ("0.19.1": minimax_m2 and
gemma4 joined the list in 0.19.1); a version whose own minor release is not in the history (0.33) is judged by the newest release
there, flagged ``own=False`` (the caller softens its verdict: a later release may add classes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from packaging.version import Version

from wizard.vllm import releases

__all__ = ["Eagle3Support", "eagle3_support", "blocked_by_allowlist"]


@dataclass(frozen=True)
class Eagle3Support:
    """One release's gates. ``release``: the X.Y.Z the facts come from; ``own``: it is the
    checked version's own minor release; ``allowlist``: the config-time model-type substrings
    (None: no such check); ``allowlist_methods``: the methods that check covers;
    ``architectures``: registry architectures whose class implements SupportsEagle3."""

    release: str
    own: bool
    allowlist: tuple[str, ...] | None
    allowlist_methods: tuple[str, ...]
    architectures: frozenset[str]
    platform_split: tuple[tuple[str, tuple[tuple[str, bool], ...]], ...] = ()

    def supports_architecture(self, arch: str, platform: str | None = None) -> bool:
        """True when the load-time check passes on ``platform`` ('cuda', 'rocm', 'cpu', 'xpu';
        None: CUDA); every architecture passes on a release without the SupportsEagle3 interface
        (0.10: the runner does not check, the table is empty)."""
        if not self.architectures:
            return True
        split = dict(dict(self.platform_split).get(arch, ()))
        if platform and platform != "cuda" and split:
            return bool(split.get(platform, split.get("default", arch in self.architectures)))
        return arch in self.architectures


def eagle3_support(version: Any) -> Eagle3Support | None:
    """The gates of ``version`` (a VllmVersion, text or Version); None when the history has no
    release at or below it (or the data file is missing)."""
    hist = releases.history("eagle3_targets")
    if not hist:
        return None
    try:
        key = releases.release_of(version)
    except ValueError:
        return None
    v = getattr(version, "version", version)
    try:
        exact = Version(str(v)).base_version
    except Exception:  # noqa: BLE001 - text the caller did not validate: judge by X.Y
        exact = key
    own = hist.get(exact) or hist.get(key)
    if own is None:
        keys = sorted((k for k in hist if k.count(".") == 1), key=Version)
        older = [k for k in keys if Version(k) < Version(key)]
        if not older:
            return None
        own, is_own = hist[older[-1]], False
    else:
        is_own = True
    lst = own.get("allowlist")
    return Eagle3Support(release=str(own.get("release") or key), own=is_own,
                         allowlist=tuple(lst) if isinstance(lst, list) else None,
                         allowlist_methods=tuple(own.get("allowlist_methods") or ()),
                         architectures=frozenset(own.get("architectures") or ()),
                         platform_split=tuple((a, tuple(sorted(by.items()))) for a, by in
                                              sorted((own.get("platform_split") or {}).items()) if isinstance(by, dict)))


def blocked_by_allowlist(support: Eagle3Support, method: str | None, text_model_type: str | None) -> bool:
    """True when the config-time substring check rejects ``method`` for a target whose
    ``hf_text_config.model_type`` is ``text_model_type`` (vLLM: ``not any(s in model_type ...)``)."""
    if support.allowlist is None or method not in support.allowlist_methods or not text_model_type:
        return False
    return not any(s in text_model_type for s in support.allowlist)
