from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import closest, given_keys
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm import legacy
from wizard.vllm.versions import spec_fields


ONLY_033_SPEC_FIELDS: tuple[str, ...] = (
    "disable_lookahead_block_hashes", "draft_lm_head_quantization", "xpress_topc", "fly_window_size",
    "fly_entropy_threshold", "fly_entropy_top_k",
)


@register
class UnknownSpecKey(Rule):
    r"""Unknown key in speculative_config

    ## What it does

    Flags keys that are not init fields of vLLM's ``SpeculativeConfig`` for the
    selected version: typos, legacy names (``num_lookahead_slots``, ``speculative_model``,
    ``ngram_prompt_lookup_max`` ...) and the six 0.33-only fields used on 0.32.

    ## Why it matters

    ``SpeculativeConfig`` forbids extra keys: vLLM fails with pydantic's
    ``Unexpected keyword argument`` before the engine starts.

    ## Example

    ``--speculative-config '{"method":"ngram","num_lookahead_slots":3}'``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_token":3}'
    ```

    ## Use instead

    Use the field names of the installed version (docs/vllm-rules.md §3).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Renaming a legacy key to its modern name is safe; removing an unknown key
    is safe (vLLM never used it).

    ## Source

    vllm/config/speculative.py ``SpeculativeConfig`` (pydantic dataclass, extra=forbid),
    0.32 and 0.33; docs/vllm-rules.md R009 (E10, F29, F30, F33). Legacy names: vLLM 0.8.2
    ``EngineArgs.create_speculative_config`` and ``SpeculativeConfig`` (wizard/vllm/legacy.py).
    """

    id = "SD020"
    severity = Severity.ERROR
    fields = ("speculative_config",)
    topic = "spec_fields"
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None:
            return
        allowed = set(spec_fields(ctx.version))
        keys = dict(ctx.spec.model_extra or {})
        if not ctx.version.at_least("0.33"):
            for k in ONLY_033_SPEC_FIELDS:
                if k in ctx.spec.model_fields_set and getattr(ctx.spec, k) is not None:
                    keys[k] = getattr(ctx.spec, k)
        given = given_keys(ctx)
        for key in sorted(keys):
            if key in allowed and key not in ONLY_033_SPEC_FIELDS:
                continue
            path = f"speculative_config.{key}"
            fixes = []
            modern = legacy.modern_spec_key(key, allowed)
            if key in ONLY_033_SPEC_FIELDS:
                why = f"'{key}' exists only from vLLM 0.33; {ctx.version} does not know it"
            elif legacy.is_legacy_spec_key(key):
                why = f"'{key}' is a legacy (pre-V1) option" + (f"; the modern name is '{modern}'" if modern else " with no equivalent")
            else:
                near = closest(key, allowed)
                why = f"'{key}' is not a SpeculativeConfig field" + (f" (did you mean '{near}'?)" if near else "")
                modern = near
            if modern and modern not in given:
                fixes.append(Patch(description=f"Rename {key} to {modern}", set={f"speculative_config.{modern}": keys[key]}, unset=[path]))
            fixes.append(Patch(description=f"Remove {key}", unset=[path]))
            yield self.finding(
                f"speculative_config.{key}: {why}. vLLM {ctx.version} fails with 'Unexpected keyword argument'.",
                fields=[path],
                fixes=fixes,
            )
