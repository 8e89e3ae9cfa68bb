from __future__ import annotations

from wizard.rules.optionvalues import option, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register
from wizard.vllm import releases


def _lists_imply_numa_bind(version) -> bool:
    """0.34 made ``ParallelConfig.numa_bind`` ``bool | None = None`` and lets the lists set it
    (vllm/config/parallel.py:347, 594-599); read from the release's constraints.json."""
    c = releases.load(version, "constraints.json").get("classes", {}).get("ParallelConfig", {})
    f = (c.get("fields") or c).get("numa_bind") or {}
    return "none" in (f.get("kinds") or ())


@register
class NumaBindListsWithoutNumaBind(Rule):
    r"""--numa-bind-nodes / --numa-bind-cpus without --numa-bind

    ## What it does

    Flags ``--numa-bind-nodes`` or ``--numa-bind-cpus`` when ``--numa-bind`` is not on. From
    0.34 (``numa_bind: bool | None = None``, read from the release's constraints.json) the lists
    imply ``numa_bind=True`` and only an explicit ``--no-numa-bind`` is refused ("NUMA binding
    lists cannot be combined with numa_bind=False.", vllm/config/parallel.py:594-599).

    ## Why it matters

    ``ParallelConfig`` raises "numa_bind_nodes and numa_bind_cpus require numa_bind=True."

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --numa-bind-nodes 0
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --numa-bind --numa-bind-nodes 0
    ```

    ## Fix safety

    Adding ``--numa-bind`` is safe: it turns on the binding the lists describe.

    ## Source

    vllm/config/parallel.py ``ParallelConfig.__post_init__`` (0.28-0.33; 0.34 L594-599); conformance
    ``benchmarks/conformance_schema.py`` on 0.32.
    """

    id = "SD124"
    severity = Severity.ERROR
    versions = ">=0.11"  # conformance-checked per release (benchmarks/conformance_schema.py)
    fields = ("extra_args.numa_bind", "extra_args.numa_bind_nodes", "extra_args.numa_bind_cpus")
    phase = "config"

    def check(self, ctx):
        if truthy(option(ctx, "numa_bind")):
            return
        if option(ctx, "numa_bind_nodes") is None and option(ctx, "numa_bind_cpus") is None:
            return
        if _lists_imply_numa_bind(ctx.version):
            if option(ctx, "numa_bind") is None:
                return  # 0.34: the lists turn numa_bind on
            yield self.finding("NUMA binding lists cannot be combined with numa_bind=False. (--no-numa-bind with "
                               f"--numa-bind-nodes / --numa-bind-cpus: vLLM {ctx.version} refuses the config.)",
                               fixes=[set_option_patch(ctx, "numa_bind", None, "Drop --no-numa-bind (the lists turn "
                                                                               "NUMA binding on)")])
            return
        yield self.finding("numa_bind_nodes and numa_bind_cpus require numa_bind=True (--numa-bind).",
                           fixes=[set_option_patch(ctx, "numa_bind", True, "Add --numa-bind")])
