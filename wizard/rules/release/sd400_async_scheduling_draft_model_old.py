from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import DRAFT_MODEL


#: First release known to accept explicit ``--async-scheduling`` with ``method: draft_model``:
#: 0.17.1 rejects n-gram with "Currently, async scheduling is only supported with EAGLE/MTP/Draft
#: Model kind of speculative decoding" (a public benchmark log), i.e. draft_model was allowed. The
#: release that added it (after 0.14) is not verified; 0.15 and 0.16 get a warning.
DRAFT_MODEL_ASYNC_SINCE = "0.17"


#: Releases up to this one are verified to reject it: the 0.14 line (vllm-project/vllm PR #31998,
#: merged 2026-01-08, quoted from 0.14.0rc1 in vllm-project/vllm-ascend#6485) raises
#: "Currently, async scheduling is only supported with EAGLE/MTP kind of speculative decoding."
DRAFT_MODEL_ASYNC_REJECTED_UNTIL = "0.15"


@register
class AsyncSchedulingDraftModelOld(Rule):
    r"""--async-scheduling with draft_model on vLLM < 0.17

    ## What it does

    Flags ``async_scheduling: true`` with ``method: draft_model`` on vLLM before
    0.17. Error up to 0.14 (verified), warning on 0.15/0.16 (the release that added draft_model
    to the async allow-list is not verified). ngram/suffix/custom_class are rule SD090 on every
    version.

    ## Why it matters

    PR #31998 (0.14) turned async scheduling on by default for EAGLE/MTP and
    off, with a warning, for every other method; given explicitly with another method,
    ``VllmConfig.__post_init__`` raises "Currently, async scheduling is only supported with
    EAGLE/MTP kind of speculative decoding." Either way there is no CPU/GPU overlap for a
    draft model on those releases. 0.32 accepts draft_model with async (verified with the
    oracle), so the rule stops at 0.17.

    ## Example

    VLLM 0.14:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --async-scheduling \
      --speculative-config '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":5}'
    ```

    ## Use instead

    Drop the flag on those releases (vLLM decides), use an EAGLE/MTP drafter
    when async overlap matters, or upgrade.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":5}'
    ```

    ## Fix safety

    Dropping the flag is safe: vLLM would not overlap this method anyway.

    ## Source

    https://github.com/vllm-project/vllm/pull/31998 (vllm/config/vllm.py async block of
    that release); vllm-project/vllm-ascend#6485 (0.14.0rc1 code); vllm-project/vllm PR #39206
    (draft_model async asserted in e2e tests, 2026-04).
    """

    id = "SD400"
    severity = Severity.ERROR
    versions = "<0.17"
    fields = ("async_scheduling", "speculative_config.method")
    phase = "config"

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
