from __future__ import annotations

from wizard.config import SERVE_FIELDS, Patch
from wizard.io.export import to_argv
from wizard.rules.helpers import remove_extra_patch
from wizard.rules.optionvalues import OWNED, option_problems
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.cli_parse import parse_serve_argv, value_problems


def _path(ctx, typed: str, dest: str) -> str:
    """The ServeConfig path the value came from: the ``extra_args`` key as the user spelled it
    (``-tp``, ``max_num_se``), else the dest."""
    extra = ctx.config.extra_args
    first = typed.split(",")[0].strip()
    for key in (first, first.lstrip("-").replace("-", "_"), dest):
        if key in extra:
            return f"extra_args.{key}"
    return dest if dest in SERVE_FIELDS else f"extra_args.{dest}"


@register
class ParserRefusesValue(Rule):
    """Value vLLM's argument parser refuses

    ## What it does

    Reads the exact argv the wizard would launch (``wizard.io.export.to_argv``) the way the
    checked release's own parser reads it (``wizard.vllm.cli_parse``: abbreviations, aliases,
    ``=`` and dotted forms resolved), then converts every value with that option's argparse
    ``type`` — vLLM's own ``int``, ``float``, ``optional_type``, ``parse_type``,
    ``human_readable_int``, ``human_readable_int_or_auto``, ``union_dict_and_str``,
    ``parse_dataclass`` as named in ``serve_options.json`` — and checks ``choices``. A value the
    parser refuses is an error with argparse's own message. This covers every option of the
    release, modelled or not (``--port abc``, ``--max-loras 1.5``, ``-tp x``, ``--max-logprobs
    1e3``, ``--max-model-len 512.0``, ``-cc '[]'``), including options whose config class vLLM
    would not even build (argparse converts first).

    Values another rule explains are left to it: the importer's ill-typed values (SD010), the
    field constraints of the config classes (SD011, SD015, SD016) and the options in
    ``optionvalues.OWNED`` (SD009, SD020, SD021, SD024, SD160) -- except where the option is an
    abbreviation the importer keeps raw (``--kv-cache-d X``), which those rules never see.

    ## Why it matters

    argparse exits with code 2 before anything is loaded; the message names only the first bad
    value, so several bad values cost several launches.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --port 80a0
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000
    ```

    ## Fix safety

    Removing the option leaves vLLM's default, which is what an accepted command without it
    runs; the value the user meant is not guessed.

    ## Source

    vllm/engine/arg_utils.py ``parse_type``/``optional_type``/``union_dict_and_str``/
    ``parse_dataclass`` and vllm/utils/argparse_utils.py ``human_readable_int(_or_auto)``
    (0.28-0.33; the same type names from 0.15); the per-release types in ``wizard/data/vllm/<X.Y>/serve_options.json``
    (scripts/dump_vllm_serve_options.py); Python argparse ``_get_values``/``_check_value``.
    Found by the schema-driven conformance corpus (``benchmarks/conformance_schema.py``).
    """

    id = "SD017"
    severity = Severity.ERROR
    tables = ("serve_options.json",)  # every release with its own parser table (0.15, 0.17 ... 0.33)
    fields = ("extra_args",)
    phase = "parse"

    def check(self, ctx):
        try:
            argv = to_argv(ctx.config, ("vllm", "serve"))
        except Exception:  # noqa: BLE001 - an unexportable config is reported by other rules
            return
        parsed = parse_serve_argv(argv[1:], ctx.version)
        problems = value_problems(parsed)
        if not problems:
            return
        covered = {p.option for p in option_problems(ctx)} | set(OWNED) | {"speculative_config"}
        covered |= {k.split(".", 1)[0] for k in ctx.config.invalid_values}
        seen = set()
        for p in problems:
            dest = p.option.dest
            path = _path(ctx, p.option.typed, dest)
            # an abbreviation the importer kept raw (``--kv-cache-d X`` -> extra_args.kv_cache_d):
            # the rule owning the field never sees the value, so it is judged here
            raw_abbrev = path.startswith("extra_args.") and path != f"extra_args.{dest}" and dest in OWNED
            if (dest in covered and not raw_abbrev) or dest in seen:
                continue
            seen.add(dest)
            desc = f"Remove {p.option.typed} (vLLM's default applies)"
            yield self.finding(
                f"vLLM's parser refuses {p.option.typed} {str(p.option.value)[:80]!r}: {p.message} "
                "(`vllm serve` exits with code 2 before loading anything).",
                fields=[path],
                fixes=[remove_extra_patch(ctx, path[len("extra_args."):], desc) if path.startswith("extra_args.")
                       else Patch(description=desc, unset=[path])],
            )
