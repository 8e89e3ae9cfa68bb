from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import raw_method
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.methods import MTP, PATH_MARKERS, has_no_model, is_allowed


@register
class MethodAutoDetected(Rule):
    r"""vLLM will run a different method than written

    ## What it does

    When ``method`` is unset, ``draft_model`` or ``mtp`` (0.32 also medusa /
    mlp_speculator; from 0.34 only when it is unset), vLLM looks at the drafter path and config: ``eagle-`` -> eagle, ``eagle3`` ->
    eagle3, ``dflash`` -> dflash, ``dspark`` -> dspark, an MTP-capable checkpoint -> mtp. This
    rule says when the method that will run differs from the one written.

    ## Why it matters

    An explicit ``draft_model`` whose folder is called ``my_eagle3_ckpt``
    silently becomes eagle3 (different weights layout, different failures); a DeepSeek-V3
    checkpoint given as a draft model becomes an MTP draft.

    ## Example

    ``{"method":"draft_model","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"}``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"draft_model","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Use instead

    Write the method vLLM will run; rename drafter folders that contain these
    substrings by accident.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: writing the detected method changes nothing vLLM does.

    ## Source

    vllm/config/speculative.py ``__post_init__`` "Automatically detect the method"
    (0.32 L1326-1392, 0.33 L1432-1502); docs/vllm-rules.md R026, §4 (E25-E27, F15). From 0.34
    detection runs only when ``method`` is unset (order eagle, eagle3, dflash, dspark, mtp:
    v1/worker/gpu/spec_decode/speculator_config.py:401-438): an explicit ``draft_model`` stays
    ``draft_model``; a drafter that declares another speculator is then an error (SD059).
    """

    id = "SD045"
    severity = Severity.WARNING
    fields = ("speculative_config.method", "speculative_config.model")
    phase = "config"

    def check(self, ctx):
        spec = ctx.spec
        if spec is None or spec.model is None:
            return
        written = raw_method(ctx)
        actual = ctx.method  # 0.34: an explicit method is kept as written
        if not is_allowed(written, ctx.version) and written != MTP:
            return
        if actual is None or actual == written or has_no_model(written):
            return
        if not is_allowed(actual, ctx.version):
            return
        p = spec.model.lower()
        reason = next((f"the path contains '{s}'" for s, _ in PATH_MARKERS if s in p), None)
        if reason is None:
            reason = "the drafter's config is an MTP checkpoint" if actual == MTP else "the drafter's config says so"
        fix = Patch(description=f"Write method {actual}", set={"speculative_config.method": actual})
        if spec.method is None:  # nothing written that vLLM overrides: advice (docs/severity.md)
            yield self.finding(
                f"No method is written: vLLM will run {actual} because {reason} (it infers draft_model "
                f"first, then detects the method from the drafter). Write method {actual} to make it explicit.",
                severity=Severity.INFO, fixes=[fix])
            return
        yield self.finding(
            f"vLLM will run {actual} because {reason}, although the config says method {spec.method!r}.",
            fixes=[fix],
        )
