from __future__ import annotations

from wizard.config import Patch
from wizard.rules.helpers import REMOVED_ENV
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm import releases

def _release_env(version) -> dict:
    """The ``vllm/envs.py`` variables of the release (its ``launch_policy.json``), {} when unknown."""
    try:
        return releases.load(version, "launch_policy.json").get("env") or {}
    except (ValueError, releases.ReleaseDataError):
        return {}


@register
class RemovedEnvVariable(Rule):
    r"""Environment variable this vLLM release removed

    ## What it does

    Flags a ``VAR=value`` of the server's environment that the release lists in
    ``vllm/envs.py`` ``removed_environment_variables`` (0.34: ``VLLM_MARLIN_INPUT_DTYPE``), with
    vLLM's migration hint. ``VLLM_USE_V2_MODEL_RUNNER`` is rule SD096.

    ## Why it matters

    From 0.34, ``Platform.validate_environ`` raises ``ValueError: VLLM_MARLIN_INPUT_DTYPE has been
    removed. Marlin no longer supports 8-bit activations. ...`` from
    ``EngineArgs.create_engine_config``, whatever ``--fail-on-environ-validation`` says (an
    unknown ``VLLM_*`` variable only warns): the server does not start. Up to 0.33 the variable
    selected Marlin's 8-bit activation path.

    ## Example

    A launcher that still exports the Marlin activation dtype:

    ```sh
    VLLM_MARLIN_INPUT_DTYPE=int8 vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Use instead

    Drop it (for 8-bit activations: ``--quantization humming`` with
    ``VLLM_HUMMING_INPUT_QUANT_CONFIG``):

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    Safe for starting the server; the 8-bit Marlin activations it asked for no longer exist.

    ## Source

    vllm/envs.py ``removed_environment_variables`` (0.34.0 L654); vllm/platforms/interface.py
    ``validate_environ`` (0.34.0 L1492-1493), called from vllm/engine/arg_utils.py
    ``create_engine_config`` (0.34.0 L2294); docs/release-0.34.md §1.1.
    """

    id = "SD098"
    severity = Severity.ERROR
    fields = ("env",)
    phase = "config"

    def check(self, ctx):
        env = ctx.config.env or {}
        known = None
        for name in env:
            since, hint = REMOVED_ENV.get(name, (None, None))
            if since is None or not ctx.version.at_least(since):
                continue
            if known is None:
                known = _release_env(ctx.version)
            if name in known:
                continue  # the release's envs.py has it again
            yield self.finding(f"{name} has been removed. {hint}", fields=[f"env.{name}"],
                               fixes=[Patch(description=f"Unset {name}", unset=[f"env.{name}"])])
