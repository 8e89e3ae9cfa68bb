from __future__ import annotations

from wizard.config import Patch
from wizard.rules.registry import Rule, Severity, register
from wizard.security import review_env


@register
class LaunchEnvLoadsCode(Rule):
    r"""Environment variable loads code or files: the launcher refuses it

    ## What it does

    Checks every `VAR=value` of the configuration (a pasted command's prefix, a YAML file's
    `# env:` comment, a saved session) against `wizard.security.classify_env`: variables that
    make the dynamic linker, a shell or Python load code (`PYTHONPATH`, `PYTHONSTARTUP`,
    `PYTHONHOME`, `LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT`, `BASH_ENV`...), vLLM variables
    whose value names a file, library or plugin that vLLM loads (`VLLM_LOGGING_CONFIG_PATH`:
    `logging.dictConfig` can instantiate any class; `VLLM_PLUGINS`; `VLLM_NCCL_SO_PATH`...;
    classified from the code of their getters in `vllm/envs.py`), and vLLM switches that let
    API clients or files run code (`VLLM_ALLOW_INSECURE_SERIALIZATION`...).

    ## Why it matters

    Text is not the user: a command copied from a web page or a session file someone sent can
    carry `PYTHONPATH=/somewhere vllm serve ...`; launched as is, the server imports whatever
    `sitecustomize.py` lies there, as the user. The wizard's launcher never passes these
    variables (the launch is refused); the server still inherits the environment of the shell
    that started the wizard.

    ## Example

    ```sh
    PYTHONPATH=/tmp/uploads vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Use instead

    Drop the variable; if you trust it, export it in the shell that starts the wizard (or run
    the exported command yourself).

    ```sh
    VLLM_CPU_KVCACHE_SPACE=4 vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Safe for the configuration: dropping the variable changes only what the server process
    loads at start-up.

    ## Source

    vllm/envs.py `environment_variables` (vllm-cpu 0.32.0, vllm 0.33.0) via
    scripts/dump_vllm_launch_policy.py; ld.so(8), bash(1), python(1); docs/security.md.
    """

    id = "SD600"
    severity = Severity.ERROR
    fields = ("env",)
    phase = "parse"

    def check(self, ctx):
        for v in review_env(ctx.config.env, str(ctx.version))["refuse"]:
            if v.address:  # vLLM runs it; only the wizard's loopback launcher declines (multi-node ranks need it)
                yield self.finding(
                    f"env {v.reason}. vLLM accepts it (multi-node ranks need it); the wizard's own launcher does not "
                    "start a server with it. Run the command yourself on the node it names.",
                    fields=[f"env.{v.name}"], severity=Severity.INFO, title="Address variable: not launched by the wizard",
                    fixes=[Patch(description=f"Drop {v.name} (serve on this machine's loopback)", unset=[f"env.{v.name}"])])
                continue
            yield self.finding(
                f"env {v.reason}. The wizard's launcher never passes it from a command, YAML or session "
                f"file, and refuses to launch while it is set. Drop it; if you trust it, set it in the shell that "
                f"starts the wizard.",
                fields=[f"env.{v.name}"],
                fixes=[Patch(description=f"Drop {v.name} from the environment", unset=[f"env.{v.name}"])],
            )
