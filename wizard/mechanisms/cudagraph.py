"""CUDA-graph capture sizes when every request verifies 1+k tokens, per vLLM release.

Mirrors, per release (features read from the source into ``wizard/data/vllm/<X.Y>/cudagraph.json``):

* ``VllmConfig._set_cudagraph_sizes`` (``vllm/config/vllm.py``): the default ceiling is
  ``min(max_num_seqs * (1+k) * 2, 512)`` (1024 on Blackwell data-center GPUs, SM 10.x), capped
  by ``max_num_batched_tokens``; sizes 1, 2, 4, then multiples of 8 to 248 and of 16 above.
  From 0.29 the uniform decode sizes n*(1+k) (n on the same 1/2/4/8.../16 grid of request
  counts) are appended when they fit; 0.31+ also appends ``max_num_seqs`` without speculation.
  Not modelled: the sequence-parallel rounding of 0.28-0.31 (``-O.pass_config.enable_sp`` with TP > 1).
* ``CompilationConfig.resolve_cudagraph_mode_and_sizes`` / ``adjust_cudagraph_sizes_for_spec_decode``
  (``vllm/config/compilation.py``): with FULL decode graphs and k > 0 the V1 model runner
  rounds every size up to a multiple of 1+k and drops those above the ceiling (0.32+: V1 only,
  the V2 runner sizes its own graphs); a backend whose CUDA-graph support is below
  UNIFORM_BATCH downgrades FULL decode graphs to PIECEWISE when speculating.
* ``CudagraphDispatcher.dispatch`` (``vllm/v1/cudagraph_dispatcher.py``): a decode batch of n
  requests is n*(1+k) tokens, padded to the next capture size; above the largest size it runs
  **eagerly** (no graph) -- the silent slowdown this module exists to predict.

* 0.34+ (no Model Runner V1; features ``split_capture_sizes``): ``_set_cudagraph_sizes`` ends in
  ``VllmConfig._split_cudagraph_capture_sizes``: prefill graphs keep the token sizes above, decode
  graphs get request counts (every size rounded up to a whole number of 1+k requests within the
  ceiling; on SM 10.x the wider ``prefill_cudagraph_capture_grid`` / ``decode_cudagraph_capture_grid``
  up to 8192 tokens / ``max_num_seqs``), and the recorded sizes become the tokens of every graph
  (plus the one-token draft decodes of eagle/eagle3/mtp/draft_model with k >= 2). Nothing rounds to
  multiples of 1+k any more. The V2 ``CudaGraphManager`` (``vllm/v1/worker/gpu/cudagraph_utils.py``)
  runs a decode batch of n requests in its FULL decode graph when n is within the decode request
  sizes, else in the smallest token-keyed (mixed-mode) graph that holds n*(1+k) tokens, else eagerly.

Units: sizes are tokens per forward step; request counts are sequences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from wizard.vllm import releases

__all__ = ["CudaGraphPlan", "capture_plan", "CG_SUPPORT_ORDER", "release_for"]

CG_SUPPORT_ORDER = ("NEVER", "UNIFORM_SINGLE_TOKEN_DECODE", "UNIFORM_BATCH", "ALWAYS")
_MODES = ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")


def release_for(version: Any) -> str:
    return releases.nearest_release(version, "cudagraph.json")


def _decode_mode(mode: str) -> str:
    return {"FULL_DECODE_ONLY": "FULL", "FULL_AND_PIECEWISE": "FULL"}.get(mode, mode)


def _mixed_mode(mode: str) -> str:
    return {"FULL_DECODE_ONLY": "NONE", "FULL_AND_PIECEWISE": "PIECEWISE"}.get(mode, mode)


def _separate(mode: str) -> bool:
    return mode in ("FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")


def _round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


@dataclass(frozen=True)
class CudaGraphPlan:
    """What vLLM captures and how decode steps run.

    sizes: capture sizes (tokens) after the config step; runner_sizes: the sizes the model runner
    actually captures (V1 rounds to multiples of 1+k under FULL decode graphs).
    decode: runs of request counts ``(n_from, n_to, mode)`` for uniform decode batches, mode
    'FULL' / 'PIECEWISE' / 'NONE' (eager). eager_from: the smallest request count that runs
    eagerly (None = every count up to max_num_seqs has a graph).
    error: vLLM's error text when it refuses the configuration.
    """

    release: str
    mode: str
    decode_query_len: int
    sizes: tuple[int, ...] = ()
    max_size: int = 0
    runner: str = "v1"
    runner_sizes: tuple[int, ...] = ()
    runner_max_size: int = 0
    decode: tuple[tuple[int, int, str], ...] = ()
    eager_from: int | None = None
    error: str | None = None
    notes: tuple[str, ...] = field(default=())
    #: the mode before the attention backend's CUDA-graph support lowered it ('FULL_AND_PIECEWISE'
    #: -> 'PIECEWISE' with speculation), None when the backend did not change it
    lowered_from: str | None = None

    @property
    def max_graph_requests(self) -> int:
        """Largest number of decode requests that still runs with a CUDA graph (0 = none)."""
        best = 0
        for a, b, m in self.decode:
            if m != "NONE":
                best = max(best, b)
        return best


def capture_sizes(
    table: dict[str, Any], *, max_num_seqs: int, k: int, max_num_batched_tokens: int,
    mode: str = "FULL_AND_PIECEWISE", max_cudagraph_capture_size: int | None = None,
    cudagraph_capture_sizes: Sequence[int] | None = None, enforce_eager: bool = False,
    blackwell: bool = False, performance_mode: str = "balanced",
) -> tuple[list[int], int]:
    """Mirror of ``_set_cudagraph_sizes`` -> (sizes, max size). Raises ValueError like vLLM."""
    f = table["features"]
    if enforce_eager or mode == "NONE":
        return [], 0
    q = 1 + k
    user_max = max_cudagraph_capture_size
    mx = user_max
    uniform: list[int] = []
    if mx is None:
        default_max = 1024 if (blackwell and f.get("blackwell_default_1024", True)) else 512
        mx = min(max_num_seqs * q * 2, default_max)
        if f.get("uniform_decode_sizes"):
            if q > 1:
                def counts(max_reqs: int) -> list[int]:
                    max_reqs = min(max_reqs, default_max)
                    c = [n for n in (1, 2, 4) if n <= max_reqs]
                    c += list(range(8, min(max_reqs + 1, 256), 8))
                    c += list(range(256, max_reqs + 1, 16))
                    return sorted(set(c + [max_reqs]))

                uniform = sorted({n * q for n in counts(max_num_seqs) if n * q <= mx})
            elif f.get("no_spec_appends_max_num_seqs") and max_num_seqs <= mx:
                uniform = [max_num_seqs]
    mnt = max_num_batched_tokens
    mx = min(mnt, mx)
    if mx < 1:
        raise ValueError("Maximum cudagraph size should be greater than or equal to 1 when using cuda graph.")
    if cudagraph_capture_sizes is not None:
        if not cudagraph_capture_sizes:
            raise ValueError("cudagraph_capture_sizes should contain at least one element when using cuda graph.")
        sizes = sorted(i for i in set(cudagraph_capture_sizes) if i <= mnt)
    else:
        if performance_mode == "interactivity" and f.get("interactivity_mode"):
            sizes = list(range(1, min(mx, 32) + 1))
        else:
            sizes = [i for i in (1, 2, 4) if i <= mx]
        if mx >= 8:
            sizes += list(range(8, min(mx + 1, 256), 8))
        if mx >= 256:
            sizes += list(range(256, mx + 1, 16))
        if mnt <= mx and mnt not in sizes:
            sizes.append(mnt)
        sizes += [s for s in uniform if s <= mnt]
        sizes = sorted(set(sizes))
    valid_max = sizes[-1] if sizes else 0
    if user_max is not None and user_max != valid_max and cudagraph_capture_sizes is not None:
        raise ValueError(
            f"customized max_cudagraph_capture_size(={user_max}) should be consistent with the max value "
            f"of cudagraph_capture_sizes(={valid_max})")
    return sizes, valid_max


def _adjust(sizes: list[int], mx: int, q: int) -> tuple[list[int], int]:
    """Mirror of ``adjust_cudagraph_sizes_for_spec_decode`` (V1 runner)."""
    if not sizes or q <= 1:
        return sizes, mx
    rounded = sorted({_round_up(s, q) for s in sizes if _round_up(s, q) <= mx})
    if not rounded and q <= mx:
        rounded = [q]
    if not rounded:
        raise ValueError(
            f"No valid cudagraph sizes after rounding to multiple of {q} (num_speculative_tokens + 1) please "
            f"adjust num_speculative_tokens ({q - 1}) or max_cudagraph_capture_size ({mx}) or "
            f"cudagraph_capture_sizes ({sizes})")
    return rounded, rounded[-1]


def _decode_runs(sizes: list[int], mx: int, mode: str, q: int, max_num_seqs: int) -> list[list[Any]]:
    """Mirror of CudagraphDispatcher (V1): the mode of a uniform decode batch of n requests."""
    if mode == "NONE" or not sizes:
        return [[1, max_num_seqs, "NONE"]]
    sep = _separate(mode)
    decode_full = sep and _decode_mode(mode) == "FULL"
    mixed = _mixed_mode(mode)
    decode_sizes = {x for x in sizes if q <= x <= q * max_num_seqs} if decode_full else set()
    size_set = set(sizes)
    runs: list[list[Any]] = []
    j = 0
    for n in range(1, max_num_seqs + 1):
        t = n * q
        if t > mx:  # every larger batch is past the capture sizes too: one run to max_num_seqs
            if runs and runs[-1][2] == "NONE":
                runs[-1][1] = max_num_seqs
            else:
                runs.append([n, max_num_seqs, "NONE"])
            break
        else:
            while sizes[j] < t:
                j += 1
            padded = sizes[j]
            if decode_full and padded in decode_sizes:
                m = "FULL"
            elif not sep and mode == "FULL":
                m = "FULL"
            elif (mixed in ("PIECEWISE",) or mode == "PIECEWISE") and padded in size_set:
                m = "PIECEWISE"
            else:
                m = "NONE"
        _extend_runs(runs, n, m)
    return runs


def _walk_grid(limit: int, step: Callable[[int], float]) -> list[int]:
    """Mirror of ``vllm/config/compilation.py _walk_grid`` (0.34)."""
    grid, size = [], 1
    while size < limit:
        grid.append(size)
        stride = 1 << max(0, math.floor(math.log2(max(1.0, step(size)))))
        size = (size // stride + 1) * stride
    return [*grid, limit] if limit else []


def _prefill_grid(max_tokens: int, dense_head: bool = False) -> list[int]:
    grid = _walk_grid(max_tokens, lambda t: min(t, max(8, t / 4), 0.07 * max(t, 4096)))
    if dense_head:
        grid = sorted({*grid, *(t for t in range(1, 33) if t < max_tokens)})
    return grid


def _decode_grid(max_requests: int) -> list[int]:
    return _walk_grid(max_requests, lambda n: 0.65 * n ** (2 / 3))


def _decode_shapes(sizes: Sequence[int], q: int, max_reqs: int, max_tokens: int) -> list[int]:
    """Request counts of the uniform decode graphs of query length q
    (``decode_cudagraph_capture_shapes``, one static query length)."""
    import bisect
    sizes = sorted(set(sizes))
    limit = min(max_reqs, max_tokens // q)
    if limit < 1:
        return []
    return sorted({min(n, limit) for n in sizes[: bisect.bisect_left(sizes, limit) + 1]})


def split_sizes(
    shared: list[int], shared_max: int, *, max_num_seqs: int, k: int, max_num_batched_tokens: int, mode: str,
    legacy: bool, blackwell: bool = False, draft_decode_steps: bool = False, performance_mode: str = "balanced",
) -> tuple[list[int], list[int], list[int], int]:
    """Mirror of ``_split_cudagraph_capture_sizes`` (0.34+, no user split sizes, no dynamic tiers or
    adaptive verification) -> (prefill token sizes, decode request sizes, recorded token sizes,
    decode token cap)."""
    q = 1 + k
    mns, mnt = max_num_seqs, max_num_batched_tokens
    wide = not legacy and blackwell
    decode_tokens_cap = 8192 if wide else None
    if wide:
        prefill = _prefill_grid(min(8192, mnt), performance_mode == "interactivity")
        decode = _decode_grid(mns)
    else:
        prefill = list(shared)
        decode = sorted({min(-(-s // q), mns) for s in shared if -(-s // q) * q <= shared_max})
    decode_max_tokens = min(mnt, decode_tokens_cap or mnt)
    tokens = {n * q for n in _decode_shapes(decode, q, mns, decode_max_tokens)}
    if draft_decode_steps and k >= 2 and decode:
        tokens |= set(_decode_shapes(_decode_grid(mns), 1, mns, decode_max_tokens))
    decode_tokens = set(tokens)
    tokens |= set(prefill)
    if not legacy and _mixed_mode(mode) == "NONE":
        tokens = decode_tokens
    return prefill, decode, sorted(tokens), decode_tokens_cap or 0


def _split_plan(rel: str, table: dict[str, Any], mode: str, q: int, sizes: list[int], mx: int, *, max_num_seqs: int,
                max_num_batched_tokens: int, legacy: bool, blackwell: bool, draft_decode_steps: bool,
                performance_mode: str, notes: list[str], lowered_from: str | None) -> CudaGraphPlan:
    """0.34+: the V2 runner's graphs from the split prefill/decode sizes (see module docstring)."""
    if mode == "NONE" or not sizes:
        return CudaGraphPlan(rel, mode, q, tuple(sizes), mx, "v2", (), 0, ((1, max_num_seqs, "NONE"),), 1,
                             None, tuple(notes), lowered_from)
    prefill, decode, tokens, cap = split_sizes(
        sizes, mx, max_num_seqs=max_num_seqs, k=q - 1, max_num_batched_tokens=max_num_batched_tokens, mode=mode,
        legacy=legacy, blackwell=blackwell, draft_decode_steps=draft_decode_steps, performance_mode=performance_mode)
    if not tokens:
        notes.append("No CUDA graph capture sizes are left; setting cudagraph_mode to NONE.")
        return CudaGraphPlan(rel, "NONE", q, (), 0, "v2", (), 0, ((1, max_num_seqs, "NONE"),), 1, None,
                             tuple(notes), lowered_from)
    rmax = max(tokens)
    decode_n: list[int] = []
    if _separate(mode) and _decode_mode(mode) != "NONE":
        held = min(rmax, cap or rmax)  # decode_cudagraph_capture_max_tokens
        decode_n = [n for n in _decode_shapes(decode, q, max_num_seqs, held)]
    mixed = _mixed_mode(mode)
    token_max = max(prefill) if (prefill and mixed != "NONE") else 0
    runs: list[list[Any]] = []
    for n in range(1, max_num_seqs + 1):
        if decode_n and n <= decode_n[-1]:
            m = _decode_mode(mode)
        elif token_max and n * q <= token_max:
            m = mixed
        else:
            m = "NONE"
        _extend_runs(runs, n, m)
    eager = next((a for a, b, m in runs if m == "NONE"), None)
    if eager is not None:
        notes.append(f"decode steps with {eager} or more requests ({eager}x{q} = {eager * q} tokens) run without "
                     f"CUDA graphs (decode graphs hold up to {decode_n[-1] if decode_n else 0} requests, "
                     f"token-keyed graphs up to {token_max} tokens)")
    return CudaGraphPlan(rel, mode, q, tuple(tokens), rmax, "v2", tuple(tokens), rmax,
                         tuple(tuple(r) for r in runs), eager, None, tuple(notes), lowered_from)


def _extend_runs(runs: list[list[Any]], n: int, mode: str) -> None:
    """Append request count ``n`` with graph ``mode`` to ``[first, last, mode]`` runs."""
    if runs and runs[-1][2] == mode:
        runs[-1][1] = n
    else:
        runs.append([n, n, mode])


def capture_plan(
    release: Any,
    *,
    max_num_seqs: int = 256,
    num_speculative_tokens: int = 0,
    max_num_batched_tokens: int = 8192,
    cudagraph_mode: str | None = None,
    max_cudagraph_capture_size: int | None = None,
    cudagraph_capture_sizes: Sequence[int] | None = None,
    enforce_eager: bool = False,
    blackwell: bool = False,
    runner: str = "v1",
    backend_cg_support: str | None = None,
    performance_mode: str = "balanced",
    draft_decode_steps: bool = False,
) -> CudaGraphPlan:
    """Capture sizes and decode-graph coverage for one configuration.

    ``runner``: 'v1' or 'v2' (see :func:`wizard.mechanisms.method_support.model_runner`);
    ``backend_cg_support``: the selected attention backend's AttentionCGSupport name
    (``wizard.vllm.backends`` facts ``cudagraph_support``), None = not limiting.
    ``blackwell``: SM 10.x device (1024-token default ceiling). Never raises: vLLM's refusals
    come back as ``error``.
    ``draft_decode_steps``: the method is eagle/eagle3/draft_model or single-module MTP (0.34+:
    its one-token draft decodes add graphs up to ``max_num_seqs`` tokens to the recorded sizes).
    From 0.34 (table feature ``split_capture_sizes``) the runner is always 'v2', whatever ``runner`` says.
    """
    key = release_for(release)
    table = releases.load(key, "cudagraph.json")
    rel = table.get("release", key)
    mode = (cudagraph_mode or table.get("default_mode") or "FULL_AND_PIECEWISE").upper()
    if mode not in _MODES:
        return CudaGraphPlan(rel, mode, 1 + num_speculative_tokens, error=f"unknown cudagraph_mode {mode!r}; one of {_MODES}")
    q = 1 + max(0, int(num_speculative_tokens))
    notes: list[str] = []
    lowered_from: str | None = None
    if enforce_eager:
        mode = "NONE"
    # resolve_cudagraph_mode_and_sizes: backend support (attention compiled piecewise, the default)
    if backend_cg_support in CG_SUPPORT_ORDER and mode != "NONE":
        sup = CG_SUPPORT_ORDER.index(backend_cg_support)
        if _mixed_mode(mode) == "FULL" and backend_cg_support != "ALWAYS":
            if backend_cg_support == "NEVER":
                return CudaGraphPlan(rel, mode, q, error=(
                    f"CUDAGraphMode.{mode} is not supported with this attention backend (support: NEVER); "
                    "please try cudagraph_mode=PIECEWISE"))
            notes.append(f"cudagraph_mode {mode} -> FULL_AND_PIECEWISE (backend support {backend_cg_support})")
            mode = "FULL_AND_PIECEWISE"
        if _decode_mode(mode) == "FULL" and backend_cg_support == "NEVER":
            notes.append(f"cudagraph_mode {mode} -> PIECEWISE (backend has no full CUDA graphs)")
            mode = "PIECEWISE"
        if _decode_mode(mode) == "FULL" and q > 1 and sup < CG_SUPPORT_ORDER.index("UNIFORM_BATCH") and \
                table["features"].get("spec_decode_full_needs_uniform_batch", True):
            notes.append(f"cudagraph_mode {mode} -> PIECEWISE: FULL decode graphs with speculation need "
                         f"UNIFORM_BATCH support, the backend has {backend_cg_support}")
            lowered_from, mode = mode, "PIECEWISE"
    try:
        sizes, mx = capture_sizes(
            table, max_num_seqs=max_num_seqs, k=q - 1, max_num_batched_tokens=max_num_batched_tokens, mode=mode,
            max_cudagraph_capture_size=max_cudagraph_capture_size, cudagraph_capture_sizes=cudagraph_capture_sizes,
            enforce_eager=enforce_eager, blackwell=blackwell, performance_mode=performance_mode)
    except ValueError as e:
        return CudaGraphPlan(rel, mode, q, error=str(e), notes=tuple(notes))
    if table["features"].get("split_capture_sizes"):
        return _split_plan(rel, table, mode, q, list(sizes), mx, max_num_seqs=max_num_seqs,
                           max_num_batched_tokens=max_num_batched_tokens,
                           legacy=max_cudagraph_capture_size is not None or cudagraph_capture_sizes is not None,
                           blackwell=blackwell, draft_decode_steps=draft_decode_steps,
                           performance_mode=performance_mode, notes=notes, lowered_from=lowered_from)
    rsizes, rmax = sizes, mx
    adjust_applies = runner == "v1" or not table["features"].get("spec_adjust_v1_only")
    if adjust_applies and _decode_mode(mode) == "FULL" and q > 1 and sizes:
        try:
            rsizes, rmax = _adjust(list(sizes), mx, q)
        except ValueError as e:
            return CudaGraphPlan(rel, mode, q, tuple(sizes), mx, runner, error=str(e), notes=tuple(notes))
        if rmax < mx:
            notes.append(f"sizes rounded to multiples of {q} (1+k): largest graph {rmax} tokens instead of {mx}")
    if runner == "v1":
        runs = _decode_runs(list(rsizes), rmax, mode, q, max_num_seqs)
    else:  # V2 runner (vllm/v1/worker/gpu/cudagraph_utils.py): graph iff n*(1+k) <= largest size
        dm = _decode_mode(mode) if mode != "NONE" else "NONE"
        n_max = rmax // q if rsizes else 0
        runs = []
        if n_max >= 1:
            runs.append([1, min(n_max, max_num_seqs), dm])
        if n_max < max_num_seqs:
            runs.append([max(1, n_max + 1), max_num_seqs, "NONE"])
    eager = next((a for a, b, m in runs if m == "NONE"), None)
    if eager is not None and mode != "NONE":
        notes.append(
            f"decode steps with {eager} or more requests ({eager}x{q} = {eager * q} tokens > largest graph "
            f"{rmax}) run without CUDA graphs")
    return CudaGraphPlan(rel, mode, q, tuple(sizes), mx, runner, tuple(rsizes), rmax,
                         tuple(tuple(r) for r in runs), eager, None, tuple(notes), lowered_from)
