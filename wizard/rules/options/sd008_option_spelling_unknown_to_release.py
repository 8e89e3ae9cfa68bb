from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import import_notes
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm import releases
from wizard.vllm.cli_parse import option_dest


@register
class OptionSpellingUnknownToRelease(Rule):
    r"""Option spelling this release's parser does not have

    ## What it does

    The import keeps a modelled option as its field, whatever it was written as: ``-sc`` and
    ``-tp`` (short aliases), ``--spec-method`` / ``--spec-model`` / ``--spec-tokens`` (the
    speculative-config shorthands), a YAML key such as ``sc:`` (vLLM's config loader turns it into
    ``--sc``). Each such spelling is looked up in the checked release's own parser (its generated
    ``serve_options.json``: option strings, aliases and the abbreviations argparse resolves);
    reported when that release does not know it. The shorthands first ship in 0.22, ``-sc`` in
    0.19.

    ## Why it matters

    ``vllm serve`` exits at once with ``unrecognized arguments`` (code 2): the command that the
    newest documentation shows fails on the release that is installed, although the
    configuration it means is valid there.

    ## Example

    ```sh
    vllm serve ./tiny-llama-target --spec-method ngram --spec-tokens 3
    ```

    ## Use instead

    The full spelling every release reads (the wizard's normalised command writes it):

    ```sh
    vllm serve ./tiny-llama-target --speculative-config '{"method":"ngram","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Safe: the configuration is unchanged; only the spelling the exported command uses (always the
    full one) is acknowledged.

    ## Source

    vllm/engine/arg_utils.py ``EngineArgs.add_cli_args`` (``-sc``, the ``--spec-*`` shorthands of
    ``create_speculative_config``) and vllm/utils/argparse_utils.py ``FlexibleArgumentParser``
    (``load_config_file``: ``--KEY`` per YAML key), per release in
    ``wizard/data/vllm/<X.Y>/serve_options.json`` (scripts/dump_vllm_serve_options.py); found by
    the fresh-user trial of 2026-12-07 (``--spec-method`` at 0.20, ``-sc`` at 0.12 were accepted).
    """

    id = "SD008"
    severity = Severity.ERROR
    tables = ("serve_options.json",)  # every release with its own parser table
    fields = ("speculative_config", "tensor_parallel_size")
    phase = "parse"

    def check(self, ctx):
        unknown = [n for n in import_notes(ctx, "option_spelling") if option_dest(n.detail.get("option", ""), ctx.version) is None]
        for n in unknown:
            opt = n.detail.get("option", "")
            since = _first_release(opt)
            yield self.finding(
                f"{opt} is not an option of vLLM {ctx.version}'s parser"
                + (f" (it first ships in vLLM {since})" if since else "")
                + f": `vllm serve` exits with 'unrecognized arguments: {opt}' (code 2). The configuration it sets "
                f"({n.field}) is valid on this release in its full spelling, which the normalised command writes.",
                fields=[n.field],
                fixes=[Patch(description="Write the options in full (the normalised command)",
                             unset=["import_notes.option_spelling"])],
            )


def _first_release(opt: str) -> str | None:
    """The oldest release with its own parser table that knows ``opt`` (None when none does)."""
    for rel in releases.releases_with("serve_options.json"):
        try:
            if option_dest(opt, rel) is not None:
                return rel
        except ValueError:
            continue
    return None
