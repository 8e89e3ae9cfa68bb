from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import closest, given_keys
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm import legacy
from wizard.vllm.releases import known_releases
from wizard.vllm.versions import parse_version, spec_fields


def releases_with_key(key: str) -> list[str]:
    """The known releases whose generated ``SpeculativeConfig`` fields include ``key``, oldest first."""
    return [rel for rel in known_releases() if key in spec_fields(parse_version(rel))]


def other_release_note(key: str, version) -> str | None:
    """Where ``key`` is a field when ``version`` lacks it: 'exists only from vLLM 0.29', or 'is a
    field of vLLM 0.28-0.31 only'; None when no known release has it."""
    rels = releases_with_key(key)
    if not rels:
        return None
    if parse_version(rels[0]).version > version.version:
        return f"exists only from vLLM {rels[0]}"
    span = rels[0] if len(rels) == 1 else f"{rels[0]}-{rels[-1]}"
    return f"is a field of vLLM {span} only"


@register
class UnknownSpecKey(Rule):
    r"""Unknown key in speculative_config

    ## What it does

    Flags keys that are not init fields of vLLM's ``SpeculativeConfig`` for the
    selected version: typos, legacy names (``num_lookahead_slots``, ``speculative_model``,
    ``ngram_prompt_lookup_max`` ...) and fields of newer releases used on an older one
    (``index_share_for_mtp_iteration`` on 0.28, ``disable_eagle_block_drop`` before 0.30,
    ``xpress_topc`` before 0.33 ...): every key the user set, modelled or not, is checked
    against the release's generated field list (``tables.json`` ``speculative_config_fields``,
    from ``scripts/dump_vllm_constraints.py``), so no list of per-release names is kept by hand.

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
    0.28-0.33 (init fields generated per release); docs/vllm-rules.md R009 (E10, F29, F30, F33),
    inventory R547. Legacy names: vLLM 0.8.2
    ``EngineArgs.create_speculative_config`` and ``SpeculativeConfig`` (wizard/vllm/legacy.py).
    """

    id = "SD020"
    severity = Severity.ERROR
    fields = ("speculative_config",)
    phase = "config"

    def check(self, ctx):
        if ctx.spec is None:
            return
        allowed = set(spec_fields(ctx.version))
        keys = dict(ctx.spec.model_extra or {})
        for k in ctx.spec.model_fields_set:  # modelled fields the user set (a newer release's, maybe)
            if k not in allowed and getattr(ctx.spec, k) is not None:
                keys[k] = getattr(ctx.spec, k)
        given = given_keys(ctx)
        for key in sorted(keys):
            if key in allowed:
                continue
            path = f"speculative_config.{key}"
            fixes = []
            modern = legacy.modern_spec_key(key, allowed)
            note = other_release_note(key, ctx.version)
            if note:
                why = f"'{key}' {note}; {ctx.version} does not know it"
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
