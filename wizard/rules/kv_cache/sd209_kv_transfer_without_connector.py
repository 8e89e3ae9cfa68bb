from __future__ import annotations

from wizard.rules.optionvalues import option, set_option_patch
from wizard.rules.registry import Rule, Severity, register


@register
class KVTransferWithoutConnector(Rule):
    r"""--kv-transfer-config without kv_connector

    ## What it does

    Flags a ``--kv-transfer-config`` (JSON or dotted keys) that does not name a
    ``kv_connector``, unless ``--kv-offloading-size`` fills the connector in or
    ``--disable-hybrid-kv-cache-manager`` / ``--no-disable-hybrid-kv-cache-manager`` is given
    (then vLLM does not look the connector up at config time).

    ## Why it matters

    With the hybrid KV-cache manager left to vLLM's choice, ``VllmConfig.__post_init__`` asks
    ``KVConnectorFactory.supports_hma_config`` about the connector, which raises "Connector
    name is not set in KVTransferConfig": the server does not start.

    ## Example

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-transfer-config '{"kv_role": "kv_both"}'
    ```

    ## Use instead

    ```sh
    vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-transfer-config '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}'
    ```

    ## Fix safety

    Removing ``--kv-transfer-config`` is safe: without a connector no KV transfer can be set up
    anyway. Naming the connector is left to the user.

    ## Source

    vllm/distributed/kv_transfer/kv_connector/factory.py ``get_connector_class`` (via
    ``supports_hma_config``), called from vllm/config/vllm.py ``VllmConfig.__post_init__``
    when ``disable_hybrid_kv_cache_manager is None`` (0.28-0.33); conformance
    ``benchmarks/conformance_schema.py`` on 0.32.
    """

    id = "SD209"
    severity = Severity.ERROR
    versions = ">=0.22"  # vLLM 0.15-0.21 accept it (benchmarks/conformance_schema.py per release)
    fields = ("extra_args.kv_transfer_config",)
    phase = "config"

    def check(self, ctx):
        ktc = option(ctx, "kv_transfer_config")
        if not isinstance(ktc, dict) or ktc.get("kv_connector") is not None:
            return
        if option(ctx, "kv_offloading_size") is not None or option(ctx, "disable_hybrid_kv_cache_manager") is not None:
            return
        yield self.finding(
            "--kv-transfer-config does not set kv_connector: vLLM raises \"Connector name is not set in "
            "KVTransferConfig\" when it checks the connector for the hybrid KV-cache manager.",
            fixes=[set_option_patch(ctx, "kv_transfer_config", None, "Remove --kv-transfer-config")],
        )
