from __future__ import annotations

import json

from wizard.rules.optionvalues import option, option_path, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register


def _json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@register
class ServeFlagRequiresAnother(Rule):
    r"""A `vllm serve` frontend flag without the flag it needs

    ## What it does

    The checks ``validate_parsed_serve_args`` makes before anything loads:
    ``--enable-auto-tool-choice`` needs ``--tool-call-parser``; ``--enable-log-outputs``
    needs ``--enable-log-requests``; (0.32+) ``--grpc-port`` needs the Rust frontend
    (``VLLM_USE_RUST_FRONTEND=1`` in the server's environment); (0.33) ``--reasoning-effort-map``
    must be a JSON object whose values are strings; (0.34) ``--checkpoint-prepare-on-startup``
    needs ``--enable-sleep-mode`` (a ``ModelConfig`` check, vllm/config/model.py:681-682).

    ## Why it matters

    ``vllm serve`` exits at once: "Error: --enable-auto-tool-choice requires
    --tool-call-parser", "Error: --enable-log-outputs requires --enable-log-requests",
    "--grpc-port requires VLLM_USE_RUST_FRONTEND=1 vllm serve", "Error: --reasoning-effort-map
    must be a JSON object mapping reasoning efforts to strings.".

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-log-outputs
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-log-outputs --enable-log-requests
    ```

    ## Fix safety

    Adding ``--enable-log-requests`` is safe (it only logs). For the tool-choice and gRPC
    flags the fix removes the flag (the parser, or the switch to the Rust frontend, is the
    user's choice).

    ## Source

    vllm/entrypoints/openai/cli_args.py (0.28), vllm/entrypoints/launchers/cli_args.py
    (0.29-0.32), vllm/entrypoints/common/cli_args.py (0.33) ``validate_parsed_serve_args``;
    ``validate_grpc_port_arg`` (0.32, 0.33); ``validate_reasoning_effort_map``
    (vllm/entrypoints/common/cli_args.py:512-522, 0.33.0); vllm/config/model.py:681-682
    ``checkpoint_prepare_on_startup requires enable_sleep_mode`` (0.34.0); conformance
    ``benchmarks/conformance_schema.py`` on 0.32 and 0.33.
    """

    id = "SD173"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.enable_auto_tool_choice", "extra_args.enable_log_outputs", "extra_args.grpc_port",
              "extra_args.reasoning_effort_map", "extra_args.checkpoint_prepare_on_startup")
    phase = "parse"

    def check(self, ctx):
        if truthy(option(ctx, "enable_auto_tool_choice")) and not option(ctx, "tool_call_parser"):
            yield self.finding(
                "Error: --enable-auto-tool-choice requires --tool-call-parser.",
                fields=("extra_args.enable_auto_tool_choice",),
                fixes=[set_option_patch(ctx, "enable_auto_tool_choice", None, "Remove --enable-auto-tool-choice")])
        if truthy(option(ctx, "enable_log_outputs")) and not truthy(option(ctx, "enable_log_requests")):
            yield self.finding(
                "Error: --enable-log-outputs requires --enable-log-requests.",
                fields=("extra_args.enable_log_outputs",),
                fixes=[set_option_patch(ctx, "enable_log_requests", True, "Add --enable-log-requests"),
                       set_option_patch(ctx, "enable_log_outputs", None, "Remove --enable-log-outputs")])
        if (ctx.version.matches(">=0.32") and option(ctx, "grpc_port") is not None
                and not truthy(ctx.config.env.get("VLLM_USE_RUST_FRONTEND", ""))):
            yield self.finding(
                "--grpc-port requires VLLM_USE_RUST_FRONTEND=1 vllm serve.",
                fields=("extra_args.grpc_port",),
                fixes=[set_option_patch(ctx, "grpc_port", None, "Remove --grpc-port")])
        effort_map = option(ctx, "reasoning_effort_map") if ctx.version.matches(">=0.33") else None
        if isinstance(effort_map, str) and not _json(effort_map):
            effort_map = None  # text its json.loads type refuses: the parser stops first (SD017)
        if effort_map is not None and not (isinstance(effort_map, dict)
                                           and all(isinstance(v, str) for v in effort_map.values())):
            yield self.finding(
                "Error: --reasoning-effort-map must be a JSON object mapping reasoning efforts to strings.",
                fields=("extra_args.reasoning_effort_map",),
                fixes=[set_option_patch(ctx, "reasoning_effort_map", None, "Remove --reasoning-effort-map")])
        # 0.34 added the option (serve_options.json); an older release refuses the flag itself (SD013)
        if truthy(option(ctx, "checkpoint_prepare_on_startup")) and not truthy(option(ctx, "enable_sleep_mode")):
            yield self.finding(
                "checkpoint_prepare_on_startup requires enable_sleep_mode (--checkpoint-prepare-on-startup without "
                f"--enable-sleep-mode: vLLM {ctx.version} refuses the model config).",
                fields=(option_path(ctx, "checkpoint_prepare_on_startup"),),
                fixes=[set_option_patch(ctx, "checkpoint_prepare_on_startup", None,
                                        "Remove --checkpoint-prepare-on-startup")])
