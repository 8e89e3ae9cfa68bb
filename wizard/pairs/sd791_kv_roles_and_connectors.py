from __future__ import annotations

from wizard.config import Patch
from wizard.pairs import PairFix, PairRule, register
from wizard.pairs.connector import connectors, kv_transfer
from wizard.rules.registry import Severity


def _set_role(ctx, role: str) -> Patch:
    kt = dict(kv_transfer(ctx) or {})
    kt["kv_role"] = role
    extra = dict(ctx.config.extra_args)
    extra["kv_transfer_config"] = kt
    return Patch(description=f"Use kv_role {role}", set={"extra_args": extra})


@register
class KvRolesAndConnectors(PairRule):
    r"""Prefill/decode sides without a KV connector, with different connectors, or with roles the wrong way round

    ## What it does

    Checks the pair's ``--kv-transfer-config``: both sides must set one, name the same connector
    (a MultiConnector's children count), and have a ``kv_role`` that lets KV flow from prefill to
    decode -- prefill ``kv_producer`` or ``kv_both``, decode ``kv_consumer`` or ``kv_both``. Two
    sides on the same ``--port`` are a warning (they cannot share a host).

    ## Why it matters

    Without a connector on one side, or with different connectors, nothing is transferred and the
    decode server recomputes every prompt (disaggregation costs instead of saving); a prefill
    ``kv_consumer`` never sends, a decode ``kv_producer`` never receives.

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8100 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_consumer"}'
    ```

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8200 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'
    ```

    ## Use instead

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8100 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'
    ```

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8200 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'
    ```

    ## Fix safety

    Safe: ``kv_both`` is what vLLM's NIXL examples give both sides.

    ## Source

    vllm/config/kv_transfer.py ``KVTransferConfig`` (roles, ``has_connector``, ``is_kv_producer`` /
    ``is_kv_consumer``; 0.28-0.33); docs/features/nixl_connector_usage.md and
    examples/online_serving/disaggregated_serving (kv_both on both sides).
    """

    id = "SD791"
    severity = Severity.ERROR
    versions = ">=0.28"
    fields = {"prefill": ("extra_args.kv_transfer_config",), "decode": ("extra_args.kv_transfer_config",)}

    def check(self, prefill, decode):
        kp, kd = kv_transfer(prefill), kv_transfer(decode)
        cp, cd = connectors(kp), connectors(kd)
        if not cp or not cd:
            missing = [s for s, c in (("prefill", cp), ("decode", cd)) if not c]
            yield self.finding(f"No KV connector on the {' and '.join(missing)} side: set --kv-transfer-config with "
                               "the same kv_connector on both sides (e.g. NixlConnector, kv_role kv_both).")
            return
        if not set(cp) & set(cd):
            yield self.finding(f"Different KV connectors: prefill {cp[0]} vs decode {cd[0]}; both sides need the same "
                               "connector to exchange KV.")
            return
        rp, rd = kp.get("kv_role"), kd.get("kv_role")
        bad = []
        if rp == "kv_consumer":
            bad.append(PairFix(side="prefill", patch=_set_role(prefill, "kv_both")))
        if rd == "kv_producer":
            bad.append(PairFix(side="decode", patch=_set_role(decode, "kv_both")))
        if bad:
            yield self.finding(f"kv_role prefill {rp} / decode {rd}: KV flows from prefill (kv_producer or kv_both) to "
                               "decode (kv_consumer or kv_both).", fixes=bad)
        port_p = str(prefill.config.extra_args.get("port", 8000))
        port_d = str(decode.config.extra_args.get("port", 8000))
        if port_p == port_d:
            yield self.finding(f"Both sides serve on port {port_p}: on one host they need different --port values "
                               "(and different VLLM_NIXL_SIDE_CHANNEL_PORT for NIXL).",
                               fields={"prefill": ["extra_args.port"], "decode": ["extra_args.port"]},
                               severity=Severity.WARNING)
