from __future__ import annotations

from wizard.pairs import PairRule, register
from wizard.pairs.connector import kv_transfer, nixl_mode
from wizard.rules.registry import Severity
from wizard.vllm.methods import uses_draft_kv_cache


@register
class DrafterKvNotTransferred(PairRule):
    r"""The decode side's drafter gets no prompt KV from a NIXL transfer

    ## What it does

    Warns when the decode side of a NIXL pair runs a drafter with its own KV cache (vLLM's
    ``uses_draft_kv_cache``: MTP, EAGLE, draft models): the connector transfers the target's KV for the prompt, and vllm#54926 reports that
    the draft model's KV is not transferred, so the decode side drafts without the prompt's
    context and acceptance collapses. n-gram and suffix decoding (no drafter KV) are not
    affected.

    ## Why it matters

    Requests succeed and outputs stay correct, but speculation stops paying on the decode side:
    "Gemma 4 MTP + NIXL PD disaggregation -- draft model KV not transferred, MTP ineffective".
    Measure acceptance on the decode server (``wizard tune --url``) before relying on it.

    ## Example

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8100 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}' \
      --speculative-config '{"method":"eagle3","model":"AngelSlim/Qwen3-8B_eagle3","num_speculative_tokens":3}'
    ```

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8200 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}' \
      --speculative-config '{"method":"eagle3","model":"AngelSlim/Qwen3-8B_eagle3","num_speculative_tokens":3}'
    ```

    ## Use instead

    n-gram speculation on both sides keeps no drafter KV (or measure the pair's acceptance).

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8100 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}' \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ```sh
    vllm serve Qwen/Qwen3-8B --port 8200 --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}' \
      --speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'
    ```

    ## Fix safety

    No automatic fix: the choice between a model-based drafter with lower decode-side acceptance
    and a lookup method is a measurement.

    ## Source

    https://github.com/vllm-project/vllm/issues/54926 (open; reported on 0.32-era main with
    NixlConnector).
    """

    id = "SD792"
    severity = Severity.WARNING
    versions = ">=0.32"
    fields = {"decode": ("speculative_config",)}

    def check(self, prefill, decode):
        if nixl_mode(kv_transfer(decode)) is None or decode.spec is None or decode.method is None:
            return
        if not uses_draft_kv_cache(decode.method):  # lookup methods keep no drafter KV
            return
        yield self.finding(
            f"decode runs {decode.method} with {kv_transfer(decode).get('kv_connector')}: the drafter's KV for the "
            "transferred prompt is not sent (vllm#54926), so decode-side acceptance can collapse. Measure it "
            "(wizard tune --url on the decode server) or use a lookup method (ngram, suffix).")
