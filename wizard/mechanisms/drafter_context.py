"""A drafter whose context (``max_position_embeddings``) is shorter than the served length.

The proposers feed the drafter positions up to the *target's* ``max_model_len``
(``vllm/v1/spec_decode/llm_base_proposer.py``, V2 speculators alike), while the drafter's
rotary cache is sized by its own ``max_position_embeddings``. Per release (facts generated from
the source into ``wizard/data/vllm/<X.Y>/features.json`` -> ``facts.drafter_context``):

* ``SpeculativeConfig._maybe_override_draft_max_position_embeddings`` raises the drafter's
  ``max_position_embeddings`` to the target's ``max_model_len`` -- for EAGLE/EAGLE3 only in
  0.28-0.32 (``if self.method in ("eagle", "eagle3")``, vLLM #48894), for every method except
  ``draft_model`` in 0.33, and there only when every RoPE of the drafter is a type whose
  length only sizes the cache (``_CACHE_ONLY_ROPE_TYPES``);
* 0.33 ``VllmConfig._limit_max_model_len_to_draft``: with the V2 model runner a shorter drafter
  that is not raised *lowers the served* ``max_model_len`` to the drafter's (logged warning),
  ``speculative_config.max_model_len`` included (it lowers the draft ModelConfig's first);
* 0.34 ``_limit_max_model_len_to_draft`` (config/vllm.py:3102) applies always (V1 is gone; facts
  ``limit_requires_v2`` False): every drafter not raised caps the served ``max_model_len`` at its
  own, ``speculative_config.max_model_len`` included -- ``draft_model`` always (:func:`_limited_always`);
* the **V1 model runner** (0.11-0.33; facts ``v1_length_gate``) keeps
  ``effective_drafter_max_model_len = draft_model_config.max_model_len`` and, in
  ``_input_fits_in_drafter``, skips drafting for the WHOLE batch (draft tokens zeroed) as soon as
  its longest sequence plus the k draft tokens (+1 for DFlash) would pass it: the server keeps
  serving correctly, without speculation, while any long request is running (vLLM #58080);
* otherwise (the V2 runner, 0.28-0.32) positions past the drafter's cache index out of range on
  the first prompt that long: the engine crashes (device-side assert) after loading.

``speculative_config.max_model_len`` sets ``draft_model_config.max_model_len``
(``_maybe_override_draft_max_model_len``: min(draft, target), ValueError when larger than either),
so it moves the V1 gate; the V2 speculators size positions by the target's length only.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from wizard.engine.max_len import model_max_len

from wizard.vllm import releases
from wizard.vllm import methods as M
from wizard.vllm.versions import default_version

__all__ = ["DrafterContext", "drafter_context", "drafter_max_len", "release_for"]


def release_for(version: Any) -> str:
    return releases.nearest_release(version, "features.json")


def _facts(version: Any) -> tuple[str, dict[str, Any]]:
    """(release label, drafter-context facts) of ``version``'s own minor release when the history
    has it (labelled with ``version`` itself), else of the release whose tables stand for ``version``
    (:func:`wizard.vllm.releases.nearest_release`, as SD403 says: 0.9.2 -> 0.10), else of the nearest
    release with a features.json (a release without its own facts used to be judged by a newer
    one's: 0.12 by 0.20's, 0.9 by 0.11's)."""
    try:
        key = releases.release_of(version)
    except ValueError:
        key = None
    own = releases.history("drafter_context").get(key) if key else None
    if own is not None:  # the facts of the X.Y.0 wheel, named by the version asked for (0.10.2, not 0.10.0)
        return str(getattr(version, "version", version) or own.get("release") or key), own.get("drafter_context") or {}
    try:  # outside the history: the release whose tables stand for it everywhere else (SD403)
        stand_in = releases.history("drafter_context").get(releases.nearest_release(version))
    except (ValueError, releases.ReleaseDataError):
        stand_in = None
    if stand_in is not None:
        return str(stand_in.get("release")), stand_in.get("drafter_context") or {}
    near = release_for(version)
    t = releases.load(near, "features.json")
    return t.get("release", near), (t.get("facts") or {}).get("drafter_context") or {}


@dataclass(frozen=True)
class DrafterContext:
    """outcome: 'ok' (drafter covers the served length or has no model), 'raised' (vLLM raises the
    drafter's positions to the served length), 'served_length_reduced' (vLLM lowers
    max_model_len to the drafter's), 'speculation_skipped' (V1 runner: no drafting for any batch
    holding a sequence past ``skip_from`` tokens), 'crash_on_long_prompts', 'config_error' (vLLM
    refuses ``speculative_config.max_model_len``), 'unknown' (drafter length unknown).
    severity follows docs/severity policy: error / warning / info / None.
    """

    release: str
    method: str
    outcome: str
    drafter_len: int | None
    served_len: int | None
    effective_max_model_len: int | None = None
    severity: str | None = None
    message: str = ""
    fixes: tuple[str, ...] = ()
    source: str = ""
    notes: tuple[str, ...] = field(default=())
    skip_from: int | None = None


def _rope_params(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key in ("rope_parameters", "rope_scaling"):
        v = cfg.get(key)
        if isinstance(v, dict):
            if all(isinstance(x, dict) for x in v.values()) and v:
                out.extend(v.values())  # per-layer-type parameters
            else:
                out.append(v)
    return out


def _rope_type(p: dict[str, Any]) -> str:
    return str(p.get("rope_type") or p.get("type") or "default")


def drafter_max_len(drafter: Any, version: Any = None) -> int | None:
    """The drafter's derived max length as vLLM computes it for ``version`` (default: the
    default release) -- the engine fact :func:`wizard.engine.max_len.model_max_len`."""
    return model_max_len(drafter, version if version is not None else default_version())


def _method_matches(condition: str | None, method: str) -> bool:
    """Evaluate ``self.method in (...)`` / ``self.method != 'x'`` / ``==`` conditions."""
    if not condition:
        return False
    try:
        node = ast.parse(condition, mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and ast.unparse(node.left) == "self.method":
        op, right = node.ops[0], node.comparators[0]
        try:
            val = ast.literal_eval(right)
        except ValueError:
            return False
        if isinstance(op, ast.In):
            return method in val
        if isinstance(op, ast.NotIn):
            return method not in val
        if isinstance(op, ast.Eq):
            return method == val
        if isinstance(op, ast.NotEq):
            return method != val
    return False


def drafter_context(
    release: Any,
    method: str,
    *,
    drafter: Any = None,
    drafter_len: int | None = None,
    served_len: int | None,
    runner: str = "v2",
    speculative_max_model_len: int | None = None,
    num_speculative_tokens: int = 1,
) -> DrafterContext:
    """What happens when prompts approach ``served_len`` (the target's ``max_model_len``).

    ``drafter``: the drafter's ModelInfo (``drafter_len`` overrides its derived length);
    ``runner``: 'v1' or 'v2' (:func:`wizard.mechanisms.method_support.route`);
    ``num_speculative_tokens``: k (the V1 gate counts the k draft positions). Never raises.
    """
    rel, facts = _facts(release)
    src = "vllm/config/speculative.py (_maybe_override_draft_max_position_embeddings)"
    if M.has_no_model(method):
        return DrafterContext(rel, method, "ok", None, served_len, served_len, None,
                              f"{method} has no draft model; no drafter context applies", source=src)
    dlen = drafter_len if drafter_len is not None else (drafter_max_len(drafter, release) if drafter is not None else None)
    if speculative_max_model_len is not None:
        bad = [f"draft_max_model_len={dlen}" for _ in [0] if dlen is not None and speculative_max_model_len > dlen]
        bad += [f"target_max_model_len={served_len}" for _ in [0] if served_len and speculative_max_model_len > served_len]
        if bad:
            return DrafterContext(rel, method, "config_error", dlen, served_len, None, "error",
                                  f"speculative_max_model_len={speculative_max_model_len} cannot be larger than {bad[0]}",
                                  (f"speculative_config.max_model_len <= {min(x for x in (dlen, served_len) if x)}",),
                                  "vllm/config/speculative.py (_maybe_override_draft_max_model_len)")
    if dlen is None or served_len is None:
        return DrafterContext(rel, method, "unknown", dlen, served_len, served_len, None,
                              "drafter or served length unknown", source=src)
    gate = facts.get("v1_length_gate")
    if facts.get("limit_max_model_len_to_draft") and (not facts.get("limit_requires_v2") or runner == "v2"):
        # 0.34 always; 0.33 on the V2 runner (speculative_config.max_model_len lowers the draft
        # ModelConfig's length first, _maybe_override_draft_max_model_len, so it caps the served one too)
        return _limited_always(rel, method, drafter, dlen, served_len, speculative_max_model_len, facts)
    if runner == "v1" and gate and speculative_max_model_len is not None and speculative_max_model_len < served_len:
        return _skipped(rel, method, dlen, served_len, speculative_max_model_len, num_speculative_tokens, gate, [])
    if dlen >= served_len:
        return DrafterContext(rel, method, "ok", dlen, served_len, served_len, None,
                              f"drafter context {dlen} covers the served length {served_len}", source=src)
    notes: list[str] = []
    if _raised(facts, method, drafter, notes):
        return DrafterContext(rel, method, "raised", dlen, served_len, served_len, "info",
                              f"vLLM {rel} raises the {method} drafter's max_position_embeddings from {dlen} to "
                              f"{served_len} (it shares the target's positions)", source=src, notes=tuple(notes))
    if facts.get("limit_max_model_len_to_draft") and (runner == "v2" or not facts.get("limit_requires_v2")):
        return DrafterContext(
            rel, method, "served_length_reduced", dlen, served_len, dlen, "warning",
            f"the drafter's context ({dlen}) is shorter than --max-model-len {served_len}; vLLM {rel} lowers "
            f"max_model_len to {dlen}, so longer prompts are rejected",
            (f"--max-model-len {dlen} (say so explicitly)", "a drafter trained for the full context"),
            "vllm/config/vllm.py (_limit_max_model_len_to_draft)", tuple(notes))
    if runner == "v1" and gate:
        return _skipped(rel, method, dlen, served_len, min(dlen, speculative_max_model_len or dlen),
                        num_speculative_tokens, gate, notes)
    readers = facts.get("draft_max_model_len_readers") or []
    notes.append("the V2 speculators size positions by the target's max_model_len only"
                 if not readers else f"draft_model_config.max_model_len read at {', '.join(readers)}")
    return DrafterContext(
        rel, method, "crash_on_long_prompts", dlen, served_len, served_len, "error",
        f"the {method} drafter's rotary cache covers {dlen} positions but vLLM {rel} feeds it positions up to "
        f"{served_len}: the first prompt longer than {dlen} tokens crashes the engine",
        (f"--max-model-len {dlen}", "a drafter trained for the full context"),
        f"vllm/v1/spec_decode/{_proposer_file(rel)} (positions up to the target's max_model_len)", tuple(notes))


def _raised(facts: dict[str, Any], method: str, drafter: Any, notes: list[str]) -> bool:
    """Whether ``_maybe_override_draft_max_position_embeddings`` raises the drafter's positions to
    the target's length (the method condition, and with ``raise_positions_rope_only`` a drafter
    whose every RoPE only sizes the cache)."""
    raised = _method_matches(facts.get("raise_positions_condition"), method)
    if raised and facts.get("raise_positions_rope_only"):
        types = set(facts.get("cache_only_rope_types") or ())
        rope_types = {_rope_type(p) for p in _rope_params(getattr(drafter, "text_config", None) or {})} or {"default"}
        if types and not rope_types <= types:
            notes.append(f"drafter RoPE {sorted(rope_types)} is not a cache-only type {sorted(types)}: not raised")
            return False
    return raised


def _limited_always(rel: str, method: str, drafter: Any, dlen: int, served_len: int,
                    speculative_max_model_len: int | None, facts: dict[str, Any]) -> DrafterContext:
    """0.34 (facts ``limit_max_model_len_to_draft`` without ``limit_requires_v2``; there is one
    model runner): ``VllmConfig._limit_max_model_len_to_draft`` (config/vllm.py:3102, run before
    ``try_verify_and_update_config``, vllm.py:1482) always caps the target's ``max_model_len`` at
    the speculator's ``max_model_len`` (``DraftModelSpeculatorConfig.max_model_len``,
    v1/worker/gpu/spec_decode/speculator_config.py:160): None (no limit) when the drafter shares
    the target's positions and its RoPE only sizes the cache (positions raised), else the draft
    ModelConfig's ``max_model_len`` -- ``min(drafter, target)``, or ``speculative_config.max_model_len``
    when given (``_maybe_override_draft_max_model_len``). ``draft_model`` drafts
    (``shares_target_positions=False``, standalone_ar/config.py) are always capped. Logged:
    "... reducing max_model_len to N"."""
    notes: list[str] = []
    src = ("vllm/config/vllm.py (_limit_max_model_len_to_draft, V2 model runner)" if facts.get("limit_requires_v2")
           else "vllm/config/vllm.py:3102 (_limit_max_model_len_to_draft)")
    if _raised(facts, method, drafter, notes):
        if dlen >= served_len:
            return DrafterContext(rel, method, "ok", dlen, served_len, served_len, None,
                                  f"drafter context {dlen} covers the served length {served_len}", source=src)
        return DrafterContext(rel, method, "raised", dlen, served_len, served_len, "info",
                              f"vLLM {rel} raises the {method} drafter's max_position_embeddings from {dlen} to "
                              f"{served_len} (it shares the target's positions)",
                              source="vllm/config/speculative.py (_maybe_override_draft_max_position_embeddings)")
    draft_len = min(dlen, speculative_max_model_len) if speculative_max_model_len else dlen
    if draft_len >= served_len:
        return DrafterContext(rel, method, "ok", dlen, served_len, served_len, None,
                              f"drafter context {draft_len} covers the served length {served_len}", source=src,
                              notes=tuple(notes))
    what = (f"the drafter's max_model_len ({draft_len}, speculative_config.max_model_len)" if draft_len < dlen
            else f"the drafter's context ({dlen})")
    return DrafterContext(
        rel, method, "served_length_reduced", dlen, served_len, draft_len, "warning",
        f"{what} is shorter than --max-model-len {served_len}; vLLM {rel} lowers max_model_len to {draft_len} "
        f"('reducing max_model_len to {draft_len}'), so longer prompts are rejected",
        (f"--max-model-len {draft_len} (say so explicitly)", "a drafter trained for the full context"),
        src, tuple(notes))


def _proposer_file(rel: str) -> str:
    """Where the proposers clamp positions to the target's max_model_len: eagle.py before 0.20."""
    try:
        return "llm_base_proposer.py" if releases.Version(rel) >= releases.Version("0.20") else "eagle.py"
    except Exception:  # noqa: BLE001 -- a label that is not a version: the newest layout
        return "llm_base_proposer.py"


def _skipped(rel: str, method: str, dlen: int | None, served_len: int, draft_len: int, k: int, gate: dict[str, Any],
             notes: list[str]) -> DrafterContext:
    """The V1 runner's batch-wide drafter length gate (``_input_fits_in_drafter``)."""
    extra = 1 if (method == M.DFLASH and gate.get("extra_dflash_token")) else 0
    skip_from = max(1, draft_len - max(1, k) - extra + 1)
    return DrafterContext(
        rel, method, "speculation_skipped", dlen, served_len, served_len, "warning",
        f"the {method} drafter's context is {draft_len} tokens but --max-model-len is {served_len}: on vLLM {rel}'s "
        f"V1 model runner, whenever any running sequence reaches {skip_from} tokens the drafter is skipped for the "
        f"whole batch (no draft tokens, verification overhead kept), so long requests switch speculation off "
        f"for every request served with them",
        (f"--max-model-len {draft_len}", "a drafter trained for the full context"),
        f"vllm/{gate.get('where', 'v1/worker/gpu_model_runner.py (_input_fits_in_drafter)')}", tuple(notes), skip_from)

