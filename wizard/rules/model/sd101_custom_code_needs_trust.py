from __future__ import annotations

from wizard.rules.optionvalues import option, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.checks import needs_remote_code


@register
class CustomCodeNeedsTrust(Rule):
    """Custom-code model without --trust-remote-code

    ## What it does

    Reports a target whose config.json names a ``model_type`` that neither the checked
    release's transformers nor vLLM's own config registry knows, and that ships its own code
    (``auto_map``), when ``--trust-remote-code`` is not given. The known model types per release
    are generated from that release's environment (``checks.json`` ``hf_model_types``).

    ## Why it matters

    vLLM cannot even read the config: transformers stops with "The repository ... contains
    custom code which must be executed to correctly load the model ... pass the argument
    trust_remote_code=True" before anything else is checked.

    ## Example

    ```sh
    vllm serve ./MiMo-7B
    ```

    ## Use instead

    ```sh
    vllm serve ./MiMo-7B --trust-remote-code
    ```

    ## Fix safety

    Unsafe by nature: ``--trust-remote-code`` runs the repository's Python code in the server
    process. Read the code (``configuration_*.py``, ``modeling_*.py``) or pin ``--revision``
    first; prefer a release whose transformers knows the model type.

    ## Source

    vllm/transformers_utils/config.py ``get_config`` / ``HFConfigParser.parse`` (0.28-0.33:
    ``AutoConfig.from_pretrained(..., trust_remote_code=...)``); known model types from
    transformers ``CONFIG_MAPPING_NAMES`` and vLLM ``_CONFIG_REGISTRY`` of each release
    (``scripts/dump_vllm_checks.py``). Verified with ``benchmarks/conformance.py`` (MiMo-7B).
    """

    id = "SD101"
    severity = Severity.ERROR
    fields = ("trust_remote_code",)
    phase = "config"

    def check(self, ctx):
        target = ctx.target
        if target is None or truthy(option(ctx, "trust_remote_code", False)):
            return
        if not needs_remote_code(target, ctx.version):
            return
        mt = target.model_type
        yield self.finding(
            f"{target.short_name()} has model_type '{mt}', which the transformers of vLLM {ctx.version} does not "
            "know, and ships its own code (auto_map); vLLM cannot read its config without --trust-remote-code.",
            fixes=[set_option_patch(ctx, "trust_remote_code", True,
                                    "Add --trust-remote-code (runs the repository's code: review it first)")])
