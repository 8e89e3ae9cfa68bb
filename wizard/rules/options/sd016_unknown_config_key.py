from __future__ import annotations

from wizard.rules.helpers import closest
from wizard.rules.optionvalues import fix_patch, option_problems
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.constraints import constraints


@register
class UnknownConfigKey(Rule):
    """Key not known to the config object it is given in

    ## What it does

    Checks the keys of every JSON object given to a config-class option
    (``--structured-outputs-config``, ``--compilation-config``, ``--kv-transfer-config``,
    ``--attention-config`` ...; or their dotted form ``--compilation-config.mode``) against the
    init fields of that class in the checked vLLM release (``constraints.json``). The
    speculative config has its own rule (SD020).

    ## Why it matters

    vLLM's config classes take no unknown keyword: ``StructuredOutputsConfig(disable_fallback=True)``
    raises "Unexpected keyword argument" at config time. Keys move between releases
    (``disable_fallback`` is no field of 0.28-0.33's ``StructuredOutputsConfig``), so a command
    copied from older documentation stops here.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --structured-outputs-config '{"backend": "xgrammar", "disable_fallback": true}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --structured-outputs-config '{"backend": "xgrammar"}'
    ```

    ## Fix safety

    Removing the key keeps everything else of the object; the message names a near spelling of
    a known key when there is one.

    ## Source

    Init fields of each config class per release 0.28-0.33 (``scripts/dump_vllm_constraints.py``;
    inventory R512-R553, "Unexpected keyword argument"), e.g. vllm/config/structured_outputs.py
    ``StructuredOutputsConfig``.
    """

    id = "SD016"
    severity = Severity.ERROR
    fields = ("structured_outputs_config", "compilation_config")
    phase = "config"

    def check(self, ctx):
        for p in option_problems(ctx):
            if p.kind != "unknown_key":
                continue
            cls, _, key = p.owner.partition(".")
            known = list(constraints(ctx.version)["classes"].get(cls, {}).get("fields", {}))
            fixes = [fix_patch(ctx, p, None, f"Remove {p.path}")]
            near = closest(key, known)
            hint = f" Did you mean '{near}'?" if near and near != key else ""
            yield self.finding(
                f"{p.path}: {cls} of vLLM {ctx.version} has no key '{key}'; vLLM rejects it at config time{hint} "
                f"('Unexpected keyword argument'). Known keys: {', '.join(known[:20])}{' ...' if len(known) > 20 else ''}.",
                fields=[p.path], fixes=fixes)
