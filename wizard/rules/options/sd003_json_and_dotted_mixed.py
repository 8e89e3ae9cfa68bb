from __future__ import annotations

import json

from wizard.config import Patch
from wizard.rules.helpers import import_notes
from wizard.rules.registry import Rule, Severity, register


@register
class JsonAndDottedMixed(Rule):
    r"""JSON --speculative-config mixed with dotted keys: vLLM drops the JSON

    ## What it does

    Reports an ``import_notes`` entry of kind ``json_and_dotted``.

    ## Why it matters

    vLLM's parser turns the dotted keys into one extra
    ``--speculative-config`` JSON appended at the end; argparse keeps the last one, so the
    **whole JSON object is dropped silently** (method and model disappear), whatever the order.

    ## Example

    ``--speculative-config '{"method":"eagle3","model":"..."}' --speculative-config.num_speculative_tokens 5``

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","prompt_lookup_max":4}' \
      --speculative-config.num_speculative_tokens 3
    ```

    ## Use instead

    One spelling per command: all JSON or all dotted keys.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config.method ngram \
      --speculative-config.prompt_lookup_max 4 --speculative-config.num_speculative_tokens 3
    ```

    ## Fix safety

    The merge keeps what the user wrote (dotted keys win on a clash), which is
    not what vLLM would have run; review it.

    ## Source

    vllm/utils/argparse_utils.py ``FlexibleArgumentParser.parse_args`` (0.32, 0.33);
    docs/vllm-rules.md R002, §8.1 (C05, C06).
    """

    id = "SD003"
    severity = Severity.WARNING
    fields = ("speculative_config",)
    phase = "parse"

    def check(self, ctx):
        for note in import_notes(ctx, "json_and_dotted"):
            d = note.detail or {}
            dropped = d.get("json") if isinstance(d.get("json"), dict) else d.get("dropped")
            current = ctx.spec.model_dump(exclude_none=True) if ctx.spec is not None else {}
            fixes = []
            if isinstance(dropped, dict):
                merged = {**dropped, **current}
                fixes.append(Patch(description="Merge both into one JSON object",
                                   set={"speculative_config": merged}, unset=["import_notes.json_and_dotted"]))
            fixes.append(Patch(description="Keep only the dotted keys (what vLLM runs)", unset=["import_notes.json_and_dotted"]))
            extra = f" Dropped: {json.dumps(dropped)}." if isinstance(dropped, dict) else ""
            yield self.finding(
                "--speculative-config JSON and --speculative-config.KEY dotted keys are both given: vLLM keeps "
                f"only the dotted keys and silently drops the whole JSON object.{extra}",
                fields=[note.field or "speculative_config"],
                fixes=fixes,
            )
