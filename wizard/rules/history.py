"""Version-bounded rules for older vLLM releases (SD400-SD449).

Each rule here describes a behaviour of a vLLM release line that newer releases changed, with the
public report or pull request that shows it and the version range it applies to (``versions``).
Where the exact first release with the change could not be verified, the docstring says so and
the bound is the first release known to have it.
"""

from __future__ import annotations

from typing import Any

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL, MTP, is_eagle_head

__all__ = ["DRAFT_MODEL_ASYNC_SINCE", "DRAFT_MODEL_ASYNC_REJECTED_UNTIL", "GEMMA4_ASSISTANT_TYPES",
           "GEMMA4_AUTODETECT_SINCE", "V1_DEFAULT_SINCE"]

#: First release known to accept explicit ``--async-scheduling`` with ``method: draft_model``:
#: 0.17.1 rejects n-gram with "Currently, async scheduling is only supported with EAGLE/MTP/Draft
#: Model kind of speculative decoding" (a public benchmark log), i.e. draft_model was allowed. The
#: release that added it (after 0.14) is not verified; 0.15 and 0.16 get a warning.
DRAFT_MODEL_ASYNC_SINCE = "0.17"
#: Releases up to this one are verified to reject it: the 0.14 line (vllm-project/vllm PR #31998,
#: merged 2026-01-08, quoted from 0.14.0rc1 in vllm-project/vllm-ascend#6485) raises
#: "Currently, async scheduling is only supported with EAGLE/MTP kind of speculative decoding."
DRAFT_MODEL_ASYNC_REJECTED_UNTIL = "0.15"
#: Drafter model types vLLM 0.32 rewrites to ``gemma4_mtp`` in ``SpeculativeConfig.hf_config_override``
#: (vllm/config/speculative.py L1019-1028), which makes method detection pick mtp.
GEMMA4_ASSISTANT_TYPES = frozenset({"gemma4_assistant", "gemma4_unified_assistant"})
GEMMA4_ASSISTANT_ARCHS = frozenset({"Gemma4AssistantForCausalLM", "Gemma4UnifiedAssistantForCausalLM"})
#: First version verified to detect a Gemma 4 assistant drafter as MTP (0.32 source). Gemma 4 MTP
#: landed in vllm-project/vllm PR #41745 (2026-05-06); in June 2026 an omitted method still fell
#: back to draft_model (NVIDIA/Model-Optimizer PR #1677). The release in between that added the
#: detection is not verified.
GEMMA4_AUTODETECT_SINCE = "0.32"
#: The V1 engine became the default in 0.8; the V0 spec-decode worker (and its EAGLE TP limit)
#: is what older releases run.
V1_DEFAULT_SINCE = "0.8"

_L8 = "vllm serve meta-llama/Llama-3.1-8B-Instruct"
_L70 = "vllm serve meta-llama/Meta-Llama-3-70B-Instruct --tensor-parallel-size 4"


def _sc(**kw: Any) -> str:
    import json

    return "--speculative-config '" + json.dumps(kw, separators=(",", ":")) + "'"


@register
class AsyncSchedulingDraftModelOld(Rule):
    """SD400 — explicit ``--async-scheduling`` with ``draft_model`` before vLLM supported it.

    **What it does.** Flags ``async_scheduling: true`` with ``method: draft_model`` on vLLM before
    0.17. Error up to 0.14 (verified), warning on 0.15/0.16 (the release that added draft_model
    to the async allow-list is not verified). ngram/suffix/custom_class are rule SD090 on every
    version.

    **Why it matters.** PR #31998 (0.14) turned async scheduling on by default for EAGLE/MTP and
    off, with a warning, for every other method; given explicitly with another method,
    ``VllmConfig.__post_init__`` raises "Currently, async scheduling is only supported with
    EAGLE/MTP kind of speculative decoding." Either way there is no CPU/GPU overlap for a
    draft model on those releases. 0.32 accepts draft_model with async (verified with the
    oracle), so the rule stops at 0.17.

    **Anti-pattern.**
        vllm serve meta-llama/Llama-3.1-8B-Instruct --async-scheduling \\
          --speculative-config '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":5}'
        (vLLM 0.14)

    **Best practice.** Drop the flag on those releases (vLLM decides), use an EAGLE/MTP drafter
    when async overlap matters, or upgrade.

    **Fix safety.** Dropping the flag is safe: vLLM would not overlap this method anyway.

    Source: https://github.com/vllm-project/vllm/pull/31998 (vllm/config/vllm.py async block of
    that release); vllm-project/vllm-ascend#6485 (0.14.0rc1 code); vllm-project/vllm PR #39206
    (draft_model async asserted in e2e tests, 2026-04).
    """

    id = "SD400"
    title = "--async-scheduling with draft_model on vLLM < 0.17"
    severity = Severity.ERROR
    versions = "<0.17"
    fields = ("async_scheduling", "speculative_config.method")
    topic = "scheduling"
    phase = "config"
    why = ("Before draft_model joined the async allow-list, explicit async scheduling with it was refused at config "
           "time (0.14) and never overlapped CPU and GPU work.")
    bad = _L8 + " --async-scheduling " + _sc(method="draft_model", model="meta-llama/Llama-3.2-1B-Instruct",
                                              num_speculative_tokens=5)
    good = _L8 + " " + _sc(method="draft_model", model="meta-llama/Llama-3.2-1B-Instruct", num_speculative_tokens=5)
    example_version = "0.14.0"
    source = ("https://github.com/vllm-project/vllm/pull/31998; https://github.com/vllm-project/vllm-ascend/issues/6485; "
              "https://github.com/vllm-project/vllm/pull/39206")
    fix_safety = "Dropping the flag is safe."

    def check(self, ctx):
        if ctx.config.async_scheduling is not True or ctx.spec is None or ctx.method != DRAFT_MODEL:
            return
        v = ctx.version
        fixes = [Patch(description="Drop --async-scheduling", unset=["async_scheduling"])]
        if not v.at_least(DRAFT_MODEL_ASYNC_REJECTED_UNTIL):
            yield self.finding(
                f"--async-scheduling with draft_model on vLLM {v}: only EAGLE/MTP methods run asynchronously there, "
                "and an explicit flag fails at config time ('Currently, async scheduling is only supported with "
                "EAGLE/MTP kind of speculative decoding', PR #31998). Drop the flag or use an EAGLE/MTP drafter.",
                fixes=fixes)
        else:
            yield self.finding(
                f"--async-scheduling with draft_model on vLLM {v}: draft_model joined the async allow-list between "
                f"0.14 (rejected) and {DRAFT_MODEL_ASYNC_SINCE} (accepted); this release may refuse the flag or run "
                "without async overlap. Drop the flag or check the startup log ('Asynchronous scheduling is enabled').",
                severity=Severity.WARNING, fixes=fixes)


@register
class V0EagleTensorParallel(Rule):
    """SD401 — V0 EAGLE drafter with a tensor-parallel target needs ``draft_tensor_parallel_size`` 1.

    **What it does.** On vLLM before 0.8 (V0 spec-decode worker) flags method ``eagle``/``eagle3``
    with ``tensor_parallel_size`` > 1 when ``speculative_config.draft_tensor_parallel_size`` is
    not 1 (unset means the target's TP).

    **Why it matters.** The V0 worker builds the EAGLE proposer with the draft TP and raises
    "NotImplementedError: EAGLE does not support TP > 1 yet" when the engine starts. vLLM 0.32
    accepts EAGLE with TP 4 (the drafter shares the target's TP, or runs at TP 1).

    **Anti-pattern.**
        vllm serve meta-llama/Meta-Llama-3-70B-Instruct --tensor-parallel-size 4 \\
          --speculative-config '{"method":"eagle","model":"yuhuili/EAGLE-LLaMA3-Instruct-70B","num_speculative_tokens":3}'
        (vLLM 0.6)

    **Best practice.** ``"draft_tensor_parallel_size": 1`` with EAGLE on V0 (0.6/0.7), or upgrade.

    **Fix safety.** Safe: the EAGLE head is small and runs on one GPU.

    Source: https://github.com/vllm-project/vllm/issues/11126 (V0 spec_decode worker, 0.6.x).
    """

    id = "SD401"
    title = "V0 EAGLE with target TP > 1 needs draft_tensor_parallel_size 1 (vLLM < 0.8)"
    severity = Severity.ERROR
    versions = "<0.8"
    fields = ("speculative_config.draft_tensor_parallel_size", "tensor_parallel_size")
    topic = "parallel"
    phase = "load"
    why = "The V0 spec-decode worker could not shard EAGLE heads: 'EAGLE does not support TP > 1 yet'."
    bad = _L70 + " " + _sc(method="eagle", model="yuhuili/EAGLE-LLaMA3-Instruct-70B", num_speculative_tokens=3)
    good = _L70 + " " + _sc(method="eagle", model="yuhuili/EAGLE-LLaMA3-Instruct-70B", num_speculative_tokens=3,
                            draft_tensor_parallel_size=1)
    example_version = "0.6.4"
    source = "https://github.com/vllm-project/vllm/issues/11126"
    fix_safety = "Safe."

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or not is_eagle_head(ctx.method) or ctx.tp <= 1:
            return
        dtp = spec.draft_tensor_parallel_size
        if dtp == 1:
            return
        shown = "unset, so it follows the target's" if dtp is None else str(dtp)
        yield self.finding(
            f"EAGLE on vLLM {ctx.version} (V0 spec decode) with tensor_parallel_size {ctx.tp}: the drafter's TP is "
            f"{shown} ({dtp or ctx.tp}), and the V0 worker raises 'EAGLE does not support TP > 1 yet' at startup "
            "(vllm#11126). Set draft_tensor_parallel_size to 1.",
            fixes=[Patch(description="Run the EAGLE head on one GPU (draft_tensor_parallel_size 1)",
                         set={"speculative_config.draft_tensor_parallel_size": 1})])


@register
class Gemma4AssistantMethodOmitted(Rule):
    """SD402 — Gemma 4 assistant (MTP) drafter without ``method: mtp`` on vLLM < 0.32.

    **What it does.** Flags a ``speculative_config.model`` whose config is a Gemma 4 assistant
    (``model_type`` gemma4_assistant / gemma4_unified_assistant, or architecture
    ``Gemma4AssistantForCausalLM``) when ``method`` is omitted or ``draft_model``, on versions
    before 0.32.

    **Why it matters.** The assistant is an MTP-style head that runs on the target's KV cache.
    Without ``method: mtp`` those releases fell back to ``draft_model`` and failed at load:
    the draft-model proposer asserts all attention layers share num_heads (got {8, 4}). 0.32
    rewrites the assistant config to ``gemma4_mtp`` in ``hf_config_override`` and detects MTP
    by itself (verified in the 0.32 source); the release that added this is not verified.

    **Anti-pattern.**
        vllm serve google/gemma-4-31B-it --speculative-config '{"model":"google/gemma-4-31B-it-assistant","num_speculative_tokens":4}'

    **Best practice.** Always pass ``"method": "mtp"`` with a Gemma 4 assistant checkpoint.

    **Fix safety.** Safe: it is the method the checkpoint is made for.

    Source: https://github.com/NVIDIA/Model-Optimizer/pull/1677; vllm/config/speculative.py
    ``hf_config_override`` (0.32, gemma4_assistant -> gemma4_mtp); vllm-project/vllm PR #41745.
    """

    id = "SD402"
    title = "Gemma 4 assistant drafter without method mtp (vLLM < 0.32)"
    severity = Severity.ERROR
    versions = "<0.32"
    fields = ("speculative_config.method",)
    topic = "mtp"
    phase = "load"
    why = "Older releases treat a Gemma 4 assistant without method mtp as a generic draft model, which fails to load."
    bad = "vllm serve ./tiny-gemma4 " + _sc(model="./tiny-gemma4-assistant", num_speculative_tokens=4)
    good = "vllm serve ./tiny-gemma4 " + _sc(method="mtp", model="./tiny-gemma4-assistant", num_speculative_tokens=4)
    example_version = "0.23.0"
    # config-only scaled-down Gemma 4 31B target and its assistant (field names from the public configs)
    example_models = {
        "./tiny-gemma4": {"config": {
            "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "torch_dtype": "bfloat16",
            "text_config": {"model_type": "gemma4_text", "hidden_size": 256, "num_hidden_layers": 6,
                            "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 32, "vocab_size": 512,
                            "sliding_window": 1024,
                            "layer_types": ["sliding_attention"] * 5 + ["full_attention"]}}, "tensors": {}},
        "./tiny-gemma4-assistant": {"config": {
            "architectures": ["Gemma4AssistantForCausalLM"], "model_type": "gemma4_assistant", "hidden_size": 128,
            "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 16,
            "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
            "vocab_size": 512, "torch_dtype": "bfloat16"}, "tensors": {}},
    }
    source = ("https://github.com/NVIDIA/Model-Optimizer/pull/1677; vllm/config/speculative.py hf_config_override "
              "(0.32); https://github.com/vllm-project/vllm/pull/41745")
    fix_safety = "Safe."

    @staticmethod
    def _is_assistant(d) -> bool:
        raw = d.raw_config or {}
        mt = d.model_type or raw.get("model_type")
        archs = set(d.architectures or raw.get("architectures") or [])
        return mt in GEMMA4_ASSISTANT_TYPES or bool(archs & GEMMA4_ASSISTANT_ARCHS)

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.method not in (None, DRAFT_MODEL) or not spec.model:
            return
        d = ctx.drafter
        if d is None or d is ctx.target or not self._is_assistant(d):
            return
        how = "omitted" if spec.method is None else "'draft_model'"
        yield self.finding(
            f"Drafter {d.short_name()} is a Gemma 4 assistant (MTP head) but method is {how}: vLLM {ctx.version} runs "
            "it as a generic draft model, which fails at load (draft-model attention layers must share num_heads; "
            "Model-Optimizer#1677). Set method mtp (0.32 detects it by itself).",
            fixes=[Patch(description="Use method mtp for the Gemma 4 assistant", set={"speculative_config.method": MTP})])
