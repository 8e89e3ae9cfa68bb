from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import import_notes
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.cli_parse import option_dest


@register
class ShorthandConflict(Rule):
    r"""--spec-* shorthand and --speculative-config set the same key

    ## What it does

    Reports ``import_notes`` of kind ``shorthand_conflict``.

    ## Why it matters

    ``EngineArgs.create_speculative_config`` raises
    ``--spec-method and --speculative-config['method'] are mutually exclusive`` (a bare ValueError).

    ## Example

    ``--spec-method ngram --speculative-config '{"method":"ngram",...}'``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --spec-method ngram \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Use instead

    One spelling per key.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: keeps the value the wizard imported, written once.

    ## Source

    vllm/engine/arg_utils.py ``create_speculative_config`` (0.32 L2068, 0.33 L2108);
    docs/vllm-rules.md R005 (E13, C18).
    """

    id = "SD005"
    severity = Severity.ERROR
    fields = ("speculative_config",)
    phase = "config"

    _SHORTHANDS = {"spec_method": "method", "spec_model": "model", "spec_tokens": "num_speculative_tokens"}

    def _written_shorthands(self, ctx):
        """(key as written in extra_args, shorthand it is): the full spellings, and every abbreviation
        the release's parser resolves to one (``--spec-meth`` -> ``--spec-method``, 0.22+)."""
        for k in ctx.config.extra_args:
            if k in self._SHORTHANDS:
                yield k, k
            elif isinstance(k, str) and k.startswith("spec_") and "." not in k:
                dest = option_dest("--" + k.replace("_", "-"), ctx.version.version)
                if dest in self._SHORTHANDS:
                    yield k, dest

    def check(self, ctx):
        noted = {(n.detail or {}).get("key") or n.field.split(".")[-1] for n in import_notes(ctx, "shorthand_conflict")}
        spec = ctx.spec
        for written, name in self._written_shorthands(ctx):
            key = self._SHORTHANDS[name]
            # dict/YAML input, or an abbreviation (--spec-meth): it sits in extra_args next to the same key
            given = ctx.config.extra_args.get(written, None) not in (None, "", "None")  # '' / 'None': not given
            if given and spec is not None and key not in noted and key in spec.model_fields_set:
                flag = "--" + written.replace("_", "-")
                full = "--" + name.replace("_", "-")
                as_read = "" if written == name else f" (vLLM's parser reads it as {full})"
                yield self.finding(
                    f"{flag}{as_read} and --speculative-config['{key}'] are mutually exclusive: vLLM raises "
                    "ValueError. Give the key once.",
                    fields=[f"speculative_config.{key}"],
                    fixes=[Patch(description=f"Drop {flag}; keep speculative_config.{key}", unset=[f"extra_args.{written}"])],
                )
        for note in import_notes(ctx, "shorthand_conflict"):
            d = note.detail or {}
            flag = d.get("flag") or d.get("old") or "--spec-*"
            key = d.get("key") or note.field.split(".")[-1]
            name = str(flag).lstrip("-").replace("-", "_")
            yield self.finding(
                f"{flag} and --speculative-config['{key}'] are mutually exclusive: vLLM raises ValueError. "
                "Give the key once.",
                fields=[note.field],
                fixes=[Patch(description=f"Drop {flag}; keep speculative_config.{key}",
                             unset=["import_notes.shorthand_conflict", f"extra_args.{name}"])],
            )
