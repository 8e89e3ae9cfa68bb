from __future__ import annotations

from typing import Any

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register

#: the facts compared, config.json name -> label
_FACTS = (("architectures", "architectures"), ("hidden_size", "hidden size"), ("vocab_size", "vocabulary"),
          ("bos_token_id", "bos token"), ("eos_token_id", "eos token"))


def _key(name: str) -> str:
    return name.strip().rstrip("/").lower()


def _model_facts(info) -> dict[str, Any]:
    """The compared facts of a ModelInfo (text config: bos/eos of a multimodal model's LM)."""
    if info is None or not info.has_config:
        return {}
    text = info.text_config
    out: dict[str, Any] = {"architectures": list(info.architectures or []), "hidden_size": info.hidden_size,
                           "vocab_size": info.vocab_size,
                           "bos_token_id": text.get("bos_token_id"),  # text_config: the top level merged under it
                           "eos_token_id": text.get("eos_token_id")}
    return {k: v for k, v in out.items() if v not in (None, [])}


def _norm(key: str, v: Any) -> Any:
    if key == "eos_token_id":
        return frozenset(v if isinstance(v, list) else [v])
    if key == "architectures":
        return frozenset(v) if isinstance(v, list) else frozenset()
    return v


def verifier_facts(spec_verifier: dict[str, Any], verifier_info) -> dict[str, Any]:
    """What is known of the verifier a speculator was trained for: ``speculators_config.verifier``'s
    own fields (speculators' VerifierConfig: architectures, hidden_size, vocab_size, bos/eos ...),
    completed from the verifier's config when it could be looked up."""
    out = _model_facts(verifier_info)
    for key, _ in _FACTS:
        v = spec_verifier.get(key)
        if v not in (None, []):
            out[key] = v
    return out


def mismatches(verifier: dict[str, Any], target: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(label, verifier value, target value) for each fact both sides give and that differ; an
    eos list matches when one contains the other, architectures when they share a class."""
    out = []
    for key, label in _FACTS:
        if key not in verifier or key not in target:
            continue
        a, b = _norm(key, verifier[key]), _norm(key, target[key])
        if key in ("architectures", "eos_token_id"):
            if a and b and not (a & b):
                out.append((label, verifier[key], target[key]))
        elif a != b:
            out.append((label, verifier[key], target[key]))
    return out


@register
class SpeculatorVerifierMismatch(Rule):
    r"""Speculator trained for another verifier than the target

    ## What it does

    A speculators-format drafter names the model it was trained against
    (``speculators_config.verifier``: ``name_or_path``, ``architectures``, and in some releases of
    the speculators library hidden size, vocabulary and bos/eos ids). When the drafter is given
    with an explicit ``--model``, compares those facts (completed from the verifier's own config
    when it can be looked up) with the target: another checkpoint of the same model (a quantized
    or re-uploaded copy: same architecture, hidden size, vocabulary and special tokens) passes;
    any fact that differs is an error.

    ## Why it matters

    vLLM loads the pair without comparing them. A drafter trained on another model's hidden states
    or vocabulary proposes tokens the target rejects: acceptance collapses and speculation runs
    slower than none, or the draft's token ids are wrong for the target's tokenizer.

    ## Example

    ```sh
    vllm serve ./tiny-qwen-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-speculator-for-llama","num_speculative_tokens":3}'
    ```

    ## Use instead

    The target the speculator was trained for (or a quantized copy of it).

    ```sh
    vllm serve ./tiny-llama-target \
      --speculative-config '{"method":"eagle3","model":"./tiny-speculator-for-llama","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Changing the target changes the served model; the alternative is a drafter trained for this target.

    ## Source

    vllm-project/speculators ``VerifierConfig`` (the ``speculators_config.verifier`` block);
    vLLM does not check the pair (vllm/transformers_utils/configs/speculators/base.py reads only
    ``verifier.name_or_path``, 0.28-0.33).
    """

    id = "SD232"
    severity = Severity.ERROR
    fields = ("model", "speculative_config.model")
    phase = "run"

    def check(self, ctx):
        if ctx.speculators is not None or ctx.spec is None:
            return
        d, t = ctx.drafter, ctx.target
        if d is None or t is None or d is t or not isinstance(d.speculators_config, dict):
            return
        v = d.speculators_config.get("verifier")
        if not isinstance(v, dict) or not isinstance(v.get("name_or_path"), str):
            return
        vname = v["name_or_path"]
        if _key(vname) == _key(ctx.config.model) or _key(vname) == _key(t.id):
            return
        diffs = mismatches(verifier_facts(v, ctx.verifier), _model_facts(t))
        if not diffs:
            return
        shown = "; ".join(f"{label} {a!r} vs {b!r}" for label, a, b in diffs)
        yield self.finding(
            f"Drafter {d.short_name()} was trained for {vname}, not for the target {t.short_name()}: {shown} "
            "(verifier vs target). vLLM loads the pair anyway and acceptance collapses. Use the verifier (or a "
            "quantized copy of it) as the target, or a drafter trained for this one.",
            fixes=[Patch(description=f"Use the speculator's verifier {vname} as --model", set={"model": vname})])
