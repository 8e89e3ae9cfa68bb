from __future__ import annotations

from wizard.config import Patch
from wizard.io.collector import POSITIONAL_KEY
from wizard.rules.registry import Rule, Severity, register


@register
class StrayPositional(Rule):
    """Stray positional argument

    ## What it does

    Reports ``extra_args['_positional']``: words the importer found where no
    option takes a value (a second model name, a value after a bare flag such as
    ``--enforce-eager yes``, a split quoted JSON).

    ## Why it matters

    `vllm serve` takes one positional (the model); argparse exits with code 2
    on any other.

    ## Example

    ``vllm serve M --trust-remote-code yes``; ``vllm serve M N``.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enforce-eager yes
    ```

    ## Use instead

    One model; boolean flags without a value (``--no-X`` to turn off).

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enforce-eager
    ```

    ## Fix safety

    Removing words vLLM rejects changes nothing that could run.

    ## Source

    vllm/entrypoints/cli/serve.py (``model_tag`` nargs='?'), Python argparse.
    """

    id = "SD014"
    severity = Severity.ERROR
    fields = ("extra_args._positional",)
    phase = "parse"

    def check(self, ctx):
        words = ctx.config.extra_args.get(POSITIONAL_KEY)
        if not words:
            return
        words = words if isinstance(words, list) else [words]
        yield self.finding(
            f"unexpected positional argument(s) {' '.join(map(str, words))!r} after the model: vLLM's parser exits "
            f"with 'unrecognized arguments: {' '.join(map(str, words))}' (code 2).",
            fields=[f"extra_args.{POSITIONAL_KEY}"],
            fixes=[Patch(description="Remove the stray argument(s)", unset=[f"extra_args.{POSITIONAL_KEY}"])],
        )
