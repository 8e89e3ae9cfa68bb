from __future__ import annotations

from wizard.rules.optionvalues import option, set_option_patch, truthy
from wizard.rules.registry import Rule, Severity, register


@register
class NumaBindListsWithoutNumaBind(Rule):
    r"""--numa-bind-nodes / --numa-bind-cpus without --numa-bind

    ## What it does

    Flags ``--numa-bind-nodes`` or ``--numa-bind-cpus`` when ``--numa-bind`` is not on.

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

    vllm/config/parallel.py ``ParallelConfig.__post_init__`` (0.28-0.33); conformance
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
        yield self.finding("numa_bind_nodes and numa_bind_cpus require numa_bind=True (--numa-bind).",
                           fixes=[set_option_patch(ctx, "numa_bind", True, "Add --numa-bind")])
