from __future__ import annotations

from packaging.version import Version

from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.releases import known_releases, load


@register
class ReleaseUnknown(Rule):
    r"""vLLM version without its own tables

    ## What it does

    Compares the version being checked (`--vllm-version`, or the installed vLLM) with the
    releases whose option tables, field constraints and method/KV-dtype tables were generated
    from vLLM itself (`wizard/data/vllm/<X.Y>/`: every minor release 0.10 ... 0.33, each from its
    newest patch). For any other X.Y release it says
    which known release stands in: the oldest for older versions, the newest for newer ones, the
    nearest older one in a gap (`wizard.vllm.releases.nearest_release`).

    ## Why it matters

    Options, allowed values and checks change between releases (0.33 dropped `medusa`, added
    `--disable-prefix-caching` and octave KV dtypes; 0.17 has no `ngram_gpu`...). A verdict for
    0.9.2 computed from 0.10's tables can miss an option the old release rejects or flag one it
    accepts; the user should know the answer is approximate.

    ## Example

    Checked with `--vllm-version 0.9.2`:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct
    ```

    ## Use instead

    Check against the vLLM release you will launch, if the wizard knows it (`--vllm-version 0.32`),
    or upgrade vLLM to a known release:

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct
    ```

    ## Fix safety

    No automatic fix: the version is not part of the configuration.

    ## Source

    The generated release data (`scripts/gen_vllm_data.py`; `tables.json` of each release
    records its exact vLLM version).
    """

    id = "SD403"
    severity = Severity.WARNING
    fields = ()
    phase = ""

    def check(self, ctx):
        if ctx.version.known:
            return
        known = known_releases()
        exact = load(ctx.version.key, "tables.json")["vllm_version"]
        v = ctx.version.version
        where = ("older than" if v < Version(known[0]) else "newer than" if v > Version(known[-1])
                 else "between the releases of")
        yield self.finding(
            f"vLLM {ctx.version} is {where} the releases the wizard has tables for ({known[0]}-{known[-1]}), so its "
            f"rules use the option tables, constraints and checks of vLLM {exact}, the nearest known release. "
            f"Options or checks that changed since may be missed or misjudged: check against the release you will "
            f"launch if it is one of {', '.join(known)} (--vllm-version).",
            fields=[],
        )
