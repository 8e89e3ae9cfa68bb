from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register


@register
class ShellAroundCommand(Rule):
    r"""Shell wrapper or redirection left out of the import

    ## What it does

    Reports the `shell_syntax` import note: what the importer found around the vLLM command and
    did not treat as vLLM options -- wrapper programs with their own options (`nohup`,
    `env -u VAR`, `time -p`, `sudo -E`, `uv run --with vllm`, `conda run -n ENV`, `timeout`,
    `taskset`, `numactl`, `docker run ... vllm/vllm-openai`), redirections (`> log 2>&1`,
    `&> out`), a trailing `&` and other commands on the line (`cd dir &&`, `| tee log`). The
    exported command and the launcher run the vLLM command alone, with the environment
    assignments kept.

    ## Why it matters

    Read as arguments, `>`, `log` or `2>&1` would be stray positionals and `--with vllm` a bogus
    option; dropping them silently would hide that the launcher does not write the log file or run
    in the background the way the script did.

    ## Example

    Pasting a background command and expecting the wizard's launch to write `vllm.log` (it keeps
    its own log; see the Launch step):

    ```sh
    nohup vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}' > vllm.log 2>&1 &
    ```

    ## Use instead

    Paste the command; the wizard keeps the vLLM part, its environment variables, and says what it
    left out.

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Safe: the fix only acknowledges the note; nothing vLLM reads changes.

    ## Source

    POSIX shell command grammar (redirections, lists, `&`); vLLM's own argument parser
    (vllm/utils/argparse_utils.py, 0.32) never sees these words; vllm/vllm-openai image
    `ENTRYPOINT ["vllm", "serve"]`.
    """

    id = "SD019"
    severity = Severity.INFO
    fields = ("command",)
    phase = "parse"

    def check(self, ctx):
        for note in ctx.config.import_notes:
            if note.kind != "shell_syntax":
                continue
            yield self.finding(
                f"{note.message}. The export and the launcher run the vLLM command alone (environment kept); "
                "add wrappers or redirections back around the exported command if you need them.",
                fields=["command"],
                fixes=[Patch(description="Acknowledge (forget the shell words)", unset=["import_notes.shell_syntax"])],
            )
