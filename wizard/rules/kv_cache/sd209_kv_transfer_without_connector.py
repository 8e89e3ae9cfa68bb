from __future__ import annotations

from wizard.rules.optionvalues import option, set_option_patch
from wizard.rules.registry import Rule, Severity, register


@register
class KVTransferWithoutConnector(Rule):
    r"""--kv-transfer-config without kv_connector (or --kv-offloading-backend without a size)

    ## What it does

    Flags a ``--kv-transfer-config`` (JSON or dotted keys) that does not name a
    ``kv_connector``, unless ``--kv-offloading-size`` fills the connector in or
    ``--disable-hybrid-kv-cache-manager`` / ``--no-disable-hybrid-kv-cache-manager`` is given
    (then vLLM does not look the connector up at config time) (0.22+). On 0.11-0.13 also
    ``--kv-offloading-backend`` without ``--kv-offloading-size``: there the backend defaults
    to None and naming one builds the offloading connector, which needs the size (0.14 made
    ``native`` the default and offloads only when the size is given).

    ## Why it matters

    With the hybrid KV-cache manager left to vLLM's choice, ``VllmConfig.__post_init__`` asks
    ``KVConnectorFactory.supports_hma_config`` about the connector, which raises "Connector
    name is not set in KVTransferConfig": the server does not start. 0.11-0.13:
    "You must set kv_offloading_size when kv_offloading_backend is set."

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
    ``benchmarks/conformance_schema.py`` on 0.32. The offloading size: vllm/config/vllm.py
    ``VllmConfig._post_init_kv_transfer_config`` (0.11.2 L313, 0.12.0 L472, 0.13.0 L484;
    0.14.1 L502 returns when the size is unset).
    """

    id = "SD209"
    severity = Severity.ERROR
    versions = ">=0.11"  # the connector check from 0.22 (0.15-0.21 accept it), the offloading size 0.11-0.13
    fields = ("extra_args.kv_transfer_config", "extra_args.kv_offloading_backend")
    phase = "config"

    def check(self, ctx):
        if (not ctx.version.at_least("0.14") and option(ctx, "kv_offloading_backend") is not None
                and option(ctx, "kv_offloading_size") is None):
            yield self.finding(
                "You must set kv_offloading_size when kv_offloading_backend is set (vLLM "
                f"{ctx.version} builds the offloading connector from both).",
                fields=["extra_args.kv_offloading_backend"],
                fixes=[set_option_patch(ctx, "kv_offloading_backend", None, "Remove --kv-offloading-backend")])
        if not ctx.version.at_least("0.22"):
            return
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
