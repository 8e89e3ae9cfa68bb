from __future__ import annotations

from typing import Any

from wizard.config import Patch, ServeConfig, SpeculativeConfig
from wizard.rules.optionvalues import fix_patch, option_problems, set_option_patch
from wizard.rules.registry import Rule, Severity, register


# invalid_values paths another rule already reports (don't say it twice)
_OTHER_RULES = {
    "kv_cache_dtype": "SD021", "attention_backend": "SD024",
    "speculative_config.kv_cache_dtype": "SD021", "speculative_config.attention_backend": "SD024",
    "speculative_config.rejection_sample_method": "SD025", "speculative_config.draft_sample_method": "SD025",
    "speculative_config.num_speculative_tokens": "SD022", "speculative_config.draft_tensor_parallel_size": "SD022",
    "speculative_config.max_model_len": "SD022", "speculative_config.prompt_lookup_min": "SD022",
    "speculative_config.prompt_lookup_max": "SD022", "speculative_config.dspark_draft_topk": "SD022",
}


_OTHER_RULES_033 = {
    "speculative_config.draft_lm_head_quantization": "SD025", "speculative_config.fly_window_size": "SD022",
    "speculative_config.xpress_topc": "SD022", "speculative_config.fly_entropy_threshold": "SD022",
    "speculative_config.fly_entropy_top_k": "SD022",
}


def _type_name(path: str) -> str:
    """Human name of the type a ServeConfig / SpeculativeConfig field expects."""
    model: Any = ServeConfig
    name = path
    if path.startswith("speculative_config."):
        model, name = SpeculativeConfig, path.split(".", 1)[1]
    elif path == "speculative_config":
        return "a JSON object"
    f = model.model_fields.get(name)
    if f is None:
        return "a valid value"
    ann = str(f.annotation)
    for token, word in (("bool", "a boolean (true/false)"), ("float", "a number"), ("int", "an integer"),
                        ("list", "a list"), ("str", "a string")):
        if token in ann:
            return word
    return "a valid value"


@register
class IllTypedValue(Rule):
    """Option value has the wrong type

    ## What it does

    Reports every raw value the importer had to set aside because it did not
    fit the field's type (``--max-num-seqs abc``, ``gpu_memory_utilization: lots``,
    ``--enforce-eager=maybe``, ``"enforce_eager": "sometimes"`` in the speculative config),
    naming the field, the raw value and the expected type. Values another rule already
    explains are left to it: the KV dtypes (SD021), attention backends (SD024), sampler
    literals (SD025) and the numeric speculative_config fields (SD022). Options the wizard does
    not model (kept in ``extra_args``) are checked against the type of the config-class field
    that receives them in the checked release (``constraints.json``): ``--max-logprobs lots``,
    ``--lora-dtype fp8`` (not a torch dtype nor one of vLLM's names).

    ## Why it matters

    On the command line (and with ``--config`` YAML, which vLLM turns into
    arguments) argparse stops with ``argument --max-num-seqs: invalid int value: 'abc'``
    (exit 2); through ``EngineArgs`` pydantic rejects it at config time.

    ## Example

    ``vllm serve M --max-num-seqs abc``; a shell variable that expanded to
    nothing and let the next word become the value.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs abc
    ```

    ## Use instead

    Give a number of the right kind, or leave the option out.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 64
    ```

    ## Fix safety

    Unsetting the field lets vLLM's default apply; that changes behaviour only
    relative to what was meant, not to what could ever run.

    ## Source

    vllm/engine/arg_utils.py ``EngineArgs.add_cli_args`` (argparse ``type=int/float``),
    vllm/config/*.py pydantic dataclasses, per release 0.28-0.33 from the generated
    ``wizard/data/vllm/<X.Y>/constraints.json`` (inventory R512-R553).
    """

    id = "SD010"
    severity = Severity.ERROR
    fields = ("invalid_values",)
    phase = "config"

    def check(self, ctx):
        skip = dict(_OTHER_RULES)
        if ctx.version.at_least("0.33"):
            skip.update(_OTHER_RULES_033)
        for path, raw in sorted(ctx.config.invalid_values.items()):
            if path in skip or path == "speculative_config" or path == "model":
                continue  # SD002 / not_an_object notes report the whole speculative config
            shown = "no value" if raw is True and _type_name(path) != "a boolean (true/false)" else repr(raw)
            opt = "--" + path.replace("_", "-") if "." not in path else path
            said = "expected one argument" if shown == "no value" else "invalid value"
            yield self.finding(
                f"{path}: {shown} is not {_type_name(path)}. vLLM rejects it: the command-line parser stops with "
                f"'argument {opt}: {said}' (exit 2), EngineArgs with a validation error at config time.",
                fields=[path],
                fixes=[Patch(description=f"Unset {path} (vLLM's default applies)", unset=[path])],
            )
        for p in option_problems(ctx):
            if p.kind == "missing":
                yield self.finding(
                    f"{p.path}: not given, and {p.owner} has no default in vLLM {ctx.version}; vLLM rejects "
                    f"{p.option} while building its config ({p.message}).",
                    fields=[p.path],
                    fixes=[set_option_patch(ctx, p.option, None, f"Remove {p.option} (vLLM's default applies)")],
                )
                continue
            if p.kind != "type":
                continue
            yield self.finding(
                f"{p.path}: {p.value!r} does not fit {p.owner} ({p.spec.type if p.spec else '?'}) in vLLM {ctx.version}; "
                f"vLLM rejects it while building its config ({p.message}).",
                fields=[p.path],
                fixes=[fix_patch(ctx, p, None, f"Unset {p.path} (vLLM's default applies)")],
            )
