"""The mechanisms applied to one check: what vLLM will do with this configuration, on this
release and hardware -- computed once per :class:`~wizard.context.CheckContext` (``ctx.mechanism_results``)
and shared by the rules SD700-SD799, the older rules that use the same facts, and
:func:`explain`.

Each function takes the context and returns the mechanism's answer, or None when the facts it
needs are unknown (no hardware given, a model that could not be read, no speculation):

* :func:`route` -- the model runner and proposer (:mod:`.method_support`);
* :func:`layouts` / :func:`backends` -- attention-backend selection for target and drafter
  (:mod:`.attention_backend`);
* :func:`kv_grouping` -- KV-cache groups of target + drafter layers (:mod:`.kv_groups`);
* :func:`capture` -- CUDA-graph capture sizes and eager decode (:mod:`.cudagraph`);
* :func:`drafter_length` -- drafter context vs served length (:mod:`.drafter_context`);
* :func:`quantization` -- the drafter's quantization (:mod:`.quantized_drafter`).

:func:`explain` puts them together as plain JSON (the "why nothing fired" view of the UI):
per model the backend it gets and why, the KV-cache groups, the CUDA-graph coverage, the drafter
context, the runner; :mod:`wizard.api` exposes it as ``api.explain``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from wizard import resolve
from wizard.mechanisms import attention_backend as AB
from wizard.mechanisms import cudagraph as CG
from wizard.mechanisms import drafter_context as DC
from wizard.mechanisms import kv_groups as KG
from wizard.mechanisms import mamba_state as MSt
from wizard.mechanisms import method_support as MS
from wizard.mechanisms import quantized_drafter as QD
from wizard.vllm import backends as BK
from wizard.vllm import methods as M

if TYPE_CHECKING:  # pragma: no cover
    from wizard.context import CheckContext

__all__ = ["platform", "route", "runner", "layouts", "backends", "kv_grouping", "state_page", "capture", "capture_inputs",
           "drafter_length", "quantization", "served_length", "explain", "pinned_backends", "compilation_option",
           "DEFAULT_CEILING", "alternatives", "selection_text"]

#: vLLM's default largest CUDA-graph size in tokens (``_set_cudagraph_sizes``): 512, 1024 on SM 10.x
DEFAULT_CEILING = {False: 512, True: 1024}


_UNSET = object()


def _cached(ctx: "CheckContext", key: str, fn):
    """``fn()`` once per check. A mechanism that raises is recorded in ``ctx.mechanism_errors``
    (rule SD799 reports it as an internal-error finding naming the mechanism; :func:`explain`
    lists it) and answers None, so one broken mechanism does not take the whole check down."""
    hit = ctx.mechanism_results.get(key, _UNSET)
    if hit is _UNSET:
        try:
            hit = fn()
        except Exception as err:  # surfaced by SD799, never silent
            hit = None
            ctx.mechanism_errors[key] = f"{type(err).__name__}: {err}"
        ctx.mechanism_results[key] = hit
    return hit


def platform(ctx: "CheckContext") -> str | None:
    """'cuda', 'rocm', 'cpu' or None (no hardware given)."""
    hw = ctx.hardware
    if hw is None:
        return None
    return {"nvidia": "cuda", "amd": "rocm", "cpu": "cpu"}.get(hw.vendor)


def _is_moe(info) -> bool:
    return bool(getattr(info, "num_experts", None))  # > 1 routed experts (wizard.models.config_json)


def route(ctx: "CheckContext") -> MS.Route | None:
    """The runner and proposer vLLM uses for the resolved method (None without speculation)."""
    if ctx.spec is None or not ctx.method:
        return None

    def go():
        env = str((ctx.config.env or {}).get("VLLM_USE_V2_MODEL_RUNNER", "")).strip().lower()
        force = "v2" if env in ("1", "true") else "v1" if env in ("0", "false") else None
        if force is None and not ctx.version.at_least("0.22"):
            force = "v1"  # VLLM_USE_V2_MODEL_RUNNER defaulted to False up to 0.21 (vllm/envs.py)
        spec = ctx.spec
        d = ctx.view.drafter
        rw = resolve.mtp_rewrite(d) if d is not None else None
        nextn = ctx.view.mtp_layers or 1
        return MS.route(
            ctx.version, ctx.method,
            draft_model_type=(rw[0] if rw else getattr(d, "model_type", None)),
            draft_architectures=getattr(d, "architectures", None) or (),
            num_nextn_predict_layers=nextn, num_speculative_tokens=ctx.k or 1,
            parallel_drafting=bool(spec.parallel_drafting), heterogeneous_vocab=bool(spec.use_heterogeneous_vocab),
            adaptive_verification=bool(spec.enable_adaptive_verification), pipeline_parallel_size=ctx.pp,
            target_is_moe=_is_moe(ctx.target), target_architectures=getattr(ctx.target, "architectures", None) or (),
            force_runner=force, platform="cpu" if platform(ctx) == "cpu" else "cuda")

    return _cached(ctx, "route", go)


def runner(ctx: "CheckContext") -> str | None:
    """'v1' / 'v2' for the speculative method (None without speculation or when refused earlier)."""
    r = route(ctx)
    return r.runner if r is not None else None


def compilation_option(ctx: "CheckContext", name: str) -> Any:
    """A ``--compilation-config`` field as given (JSON, dotted ``-cc.X`` / ``compilation_config.X``
    or the top-level ``--X`` flag), None when unset. JSON strings are decoded."""
    extra = ctx.config.extra_args
    for key in (name, name.replace("_", "-"), f"compilation_config.{name}"):
        if key in extra:
            return _decode(extra[key])
    for key in ("compilation_config", "compilation-config", "optimization_level"):
        v = _decode(extra.get(key))
        if isinstance(v, dict) and name in v:
            return v[name]
    return None


def compilation_object(ctx: "CheckContext") -> dict[str, Any]:
    """The ``--compilation-config`` JSON object as given ({} when none or not an object): what a
    fix that sets some of its fields must keep (CLI trial: SD740's fix dropped ``mode`` and
    ``pass_config``)."""
    for key in ("compilation_config", "compilation-config"):
        v = _decode(ctx.config.extra_args.get(key))
        if isinstance(v, dict):
            return dict(v)
    return {}


def _decode(v: Any) -> Any:
    if isinstance(v, list):
        return [_decode(x) for x in v]
    if isinstance(v, str):
        s = v.strip()
        if s[:1] in "{[":
            try:
                return json.loads(s)
            except ValueError:
                return v
        if s.lstrip("-").isdigit():
            return int(s)
    return v


def pinned_backends(ctx: "CheckContext") -> tuple[str | None, str | None]:
    """(target, drafter) backends the user forced: ``--attention-backend`` (or
    ``--attention-config.backend``) and ``speculative_config.attention_backend`` ('auto' = None)."""
    t = ctx.config.attention_backend or _decode(ctx.config.extra_args.get("attention_config.backend"))
    if t is None:
        ac = _decode(ctx.config.extra_args.get("attention_config"))
        t = ac.get("backend") if isinstance(ac, dict) else None
    env = (ctx.config.env or {}).get("VLLM_ATTENTION_BACKEND")
    t = t or env
    d = ctx.spec.attention_backend if ctx.spec is not None else None
    norm = lambda x: None if x is None or str(x).strip().lower() in ("", "auto", "none") else str(x).strip().upper()  # noqa: E731
    return norm(t), norm(d)


def layouts(ctx: "CheckContext") -> tuple[AB.AttentionLayout | None, AB.AttentionLayout | None]:
    """What vLLM's selector sees for the target and for the drafter (None = unknown / none)."""

    def go():
        cfg = ctx.config
        m = ctx.method
        every = _non_causal_every_layer(ctx)
        t = AB.layout_for(ctx.target, kv_cache_dtype=ctx.target_kv_dtype(), dtype=cfg.dtype, block_size=cfg.block_size,
                          tensor_parallel_size=ctx.tp, role="target",
                          **({"use_non_causal": True} if every else {})) if ctx.target is not None else None
        d = None
        info = ctx.view.drafter if (ctx.spec is not None and M.uses_draft_kv_cache(m)) else None
        if info is not None:
            # the draft model runs in the target's dtype (ctx.view.drafter_dtype: vllm/config/speculative.py
            # 0.32 L1301), not in its checkpoint's torch_dtype
            d = AB.layout_for(info, kv_cache_dtype=ctx.drafter_kv_dtype(), dtype=ctx.view.drafter_dtype or cfg.dtype,
                              block_size=cfg.block_size,
                              tensor_parallel_size=ctx.tp, role="drafter", method=m)
            if d is not None and (m == M.DSPARK or every):
                d = replace(d, use_non_causal=True)
        return t, d

    return _cached(ctx, "layouts", go) or (None, None)


def _non_causal_every_layer(ctx: "CheckContext") -> bool:
    """Whether the release selects every layer, the target's included, non-causal for this
    speculative method (0.20 for DFlash: get_attn_backend, features.json backend_selection)."""
    m = ctx.method
    return m is not None and ctx.spec is not None and m in (AB.selection_rules(ctx.version).get("non_causal_every_layer") or ())


def backends(ctx: "CheckContext") -> tuple[AB.Selection | None, AB.Selection | None]:
    """(target, drafter) selections on ``ctx.hardware``; (None, None) without hardware."""
    if ctx.hardware is None:
        return None, None

    def go():
        t, d = layouts(ctx)
        tp, dp = pinned_backends(ctx)
        return AB.select_for_pair(ctx.version, ctx.hardware, t, d, target_pinned=tp, drafter_pinned=dp, target_model=ctx.target)

    return _cached(ctx, "backends", go) or (None, None)


def kernel_block_size_refusals(ctx: "CheckContext") -> list[tuple[str, str, list[int]]]:
    """[(side, backend, block sizes its kernels take)] for each selected backend (target, drafter)
    that cannot run the ``--block-size`` the user set: vLLM's ``select_common_block_size``
    (vllm/v1/worker/utils.py:515, 0.32) takes the size when the backend supports it, else an
    explicit kernel size that divides it, else raises "No common block size for N (...)" when the
    KV cache is built. Judged on the generated ``supports_block_size`` facts (backends.json,
    candidates 1..1024): a size off the candidate grid stays unknown (no claim); a supported
    candidate that divides the size counts as the rescue (an over-approximation of vLLM's)."""
    bs = ctx.config.block_size
    if not isinstance(bs, int) or isinstance(bs, bool) or bs <= 0 or ctx.hardware is None:
        return []
    out = []
    table = BK.load(ctx.version)
    for side, sel in zip(("target", "drafter"), backends(ctx)):
        if sel is None or not sel.backend or not sel.profile:
            continue
        sizes = (table.facts(sel.profile, sel.backend) or {}).get("block_sizes") or {}
        if sizes.get(str(bs)) is not False:
            continue  # supported, or off the generated grid (unknown)
        ok = sorted(int(c) for c, v in sizes.items() if v is True and c.isdigit())
        if any(bs % c == 0 for c in ok):
            continue
        out.append((side, sel.backend, ok))
    return out


def _drafter_layers(ctx: "CheckContext", kv: str) -> list[KG.LayerKV]:
    m = ctx.method
    info = ctx.view.drafter
    if info is None or not M.uses_draft_kv_cache(m):
        return []
    if info is ctx.target:  # MTP layers of the target checkpoint: full attention of the target's geometry
        n = ctx.view.mtp_layers or 1
        proto = KG.layers_for(info.model_copy(update={"num_hidden_layers": 1, "layer_types": None, "num_kv_shared_layers": 0}),
                              "drafter", kv_cache_dtype=kv, tensor_parallel_size=ctx.tp)
        return [replace(proto[0], name=f"draft.layers.{i}.attn") for i in range(n)] if proto else []
    return KG.layers_for(info, "drafter", kv_cache_dtype=kv, tensor_parallel_size=ctx.tp)


def state_page(ctx: "CheckContext") -> MSt.StatePage | None:
    """The target's recurrent-state page (None for targets without recurrent layers)."""
    if ctx.target is None or not (getattr(ctx.target, "num_mamba_layers", 0) or 0):
        return None

    def go():
        extra = ctx.config.extra_args
        return MSt.state_page(ctx.target, ctx.version, tensor_parallel_size=ctx.tp,
                              num_speculative_tokens=(ctx.k or 0) if ctx.spec is not None else 0,
                              model_dtype=ctx.model_dtype(),
                              mamba_cache_dtype=str(_decode(extra.get("mamba_cache_dtype")) or "auto"),
                              mamba_ssm_cache_dtype=str(_decode(extra.get("mamba_ssm_cache_dtype")) or "auto"))

    return _cached(ctx, "state_page", go)


def _hybrid_layers(ctx: "CheckContext", tl: list[KG.LayerKV], block: int) -> tuple[list[KG.LayerKV], int] | None:
    """Target layers with their state pages and the block size after ``_align_hybrid_block_size``."""
    sp = state_page(ctx)
    attn = next((layer for layer in tl if layer.kind != "mamba"), None)
    if sp is None or sp.page_bytes is None or attn is None:
        return None
    al = MSt.hybrid_alignment(KG.page_size(attn, 1), sp.page_bytes, block_size=block,
                              use_mla=attn.kind == "mla")
    padded = al.padded_state_page_bytes if al.padded_state_page_bytes > sp.page_bytes else None
    return [replace(layer, state_bytes=sp.page_bytes, state_padded=padded) if layer.kind == "mamba" else layer
            for layer in tl], al.block_size


def kv_grouping(ctx: "CheckContext") -> KG.GroupingResult | None:
    """vLLM's KV-cache groups for target + drafter layers (None without speculation or models)."""
    if ctx.spec is None or ctx.target is None or not M.uses_draft_kv_cache(ctx.method):
        return None

    def go():
        tl = KG.layers_for(ctx.target, "target", kv_cache_dtype=ctx.target_kv_dtype(), tensor_parallel_size=ctx.tp)
        dl = _drafter_layers(ctx, ctx.drafter_kv_dtype())
        if not dl:
            return None
        block = ctx.view.block_size  # wizard.engine.block_size
        if any(layer.kind == "mamba" for layer in tl):
            aligned = _hybrid_layers(ctx, tl, block)
            if aligned is None:  # the state formula of this model class is not known
                return None
            tl, block = aligned
        disable = bool(_decode(ctx.config.extra_args.get("disable_hybrid_kv_cache_manager")))
        return KG.kv_cache_groups(ctx.version, tl + dl, block_size=block,
                                  disable_hybrid_kv_cache_manager=disable)

    return _cached(ctx, "kv_grouping", go)


#: backends whose builder computes its CUDA-graph support from the model and parallel config at
#: run time (FlashInfer's ``get_cudagraph_support``: trtllm / XQA head checks, DCP): the generated
#: value was taken without a model config, so it does not limit the plan
_DYNAMIC_CG_SUPPORT = frozenset({"FLASHINFER"})


def backend_cg_supports(ctx: "CheckContext") -> list[tuple[str, str]]:
    """(backend, AttentionCGSupport) of the attention backends vLLM selects for the target and
    the drafter (generated ``cudagraph_support`` facts of backends.json); backends whose support
    is computed at run time (:data:`_DYNAMIC_CG_SUPPORT`) and NEVER (only seen from evaluating a
    builder without a config) are left out."""
    out: list[tuple[str, str]] = []
    for sel in backends(ctx):
        if sel is None or not sel.ok or sel.backend in _DYNAMIC_CG_SUPPORT or not sel.profile:
            continue
        try:
            facts = BK.load(ctx.version).facts(sel.profile, sel.backend) or {}
        except Exception:  # noqa: BLE001 - a table that cannot be read: the plan is not limited
            continue
        v = facts.get("cudagraph_support")
        if v in CG.CG_SUPPORT_ORDER and v != "NEVER":
            out.append((sel.backend, v))
    return out


def backend_cg_floor(ctx: "CheckContext") -> tuple[str | None, tuple[str, ...]]:
    """(the lowest AttentionCGSupport over the backends of :func:`backend_cg_supports`, the
    backends that have it, sorted): ``_check_and_update_cudagraph_mode`` takes the minimum over
    every attention group, drafter groups included; (None, ()) when no backend is known. E.g.
    TRITON_MLA (the MLA backend on SM 8.x / 12.x) reports UNIFORM_SINGLE_TOKEN_DECODE in
    0.26-0.30, so FULL decode graphs fall back to PIECEWISE with speculation there."""
    found = backend_cg_supports(ctx)
    if not found:
        return None, ()
    low = min((v for _, v in found), key=CG.CG_SUPPORT_ORDER.index)
    return low, tuple(sorted({b for b, v in found if v == low}))


def backend_cg_support(ctx: "CheckContext") -> str | None:
    """The lowest AttentionCGSupport of :func:`backend_cg_floor`."""
    return backend_cg_floor(ctx)[0]


def _draft_decode_steps(ctx: "CheckContext") -> bool:
    """The drafter's steps after the first are one-token decodes with their own FULL graphs
    (0.34 ``VllmConfig.get_draft_decode_cudagraph_request_sizes``, vllm/config/vllm.py L708):
    eagle, eagle3, draft_model and single-module MTP (``use_multi_module_mtp``, speculative.py
    L1813: MTP with more than one module and k > 1, no index sharing, not MiniMax-M3), k >= 2."""
    m, k = ctx.method, ctx.k or 0
    if k < 2 or m not in (M.EAGLE, M.EAGLE3, M.MTP, M.DRAFT_MODEL):
        return False
    if m != M.MTP:
        return True
    d = ctx.view.drafter
    modules = ctx.view.mtp_layers or 1
    share = bool(ctx.spec.index_share_for_mtp_iteration) if ctx.spec is not None else False
    return not (min(modules, k) > 1 and not share and (d is None or d.model_type != M.MINIMAX_M3_MTP))


def capture_inputs(ctx: "CheckContext") -> dict[str, Any]:
    """The arguments of :func:`~wizard.mechanisms.cudagraph.capture_plan` for this check, with
    which were given by the user (``given``) and which are vLLM's defaults."""
    cfg = ctx.config
    b = ctx.view.budget  # max_num_seqs / max_num_batched_tokens as vLLM resolves them (wizard.engine.batch)
    d = ctx.view.batch_defaults
    sizes = compilation_option(ctx, "cudagraph_capture_sizes")
    mx = compilation_option(ctx, "max_cudagraph_capture_size")
    mode = compilation_option(ctx, "cudagraph_mode")
    hw = ctx.hardware
    cc = getattr(hw, "compute_capability", None) if hw is not None else None
    return {
        "max_num_seqs": b.seqs if b is not None else (cfg.max_num_seqs or d.seqs),
        "max_num_batched_tokens": b.tokens if b is not None else (cfg.max_num_batched_tokens or d.tokens),
        "num_speculative_tokens": ctx.k or 0,
        "cudagraph_mode": str(mode).upper() if isinstance(mode, str) else None,
        "max_cudagraph_capture_size": mx if isinstance(mx, int) and not isinstance(mx, bool) else None,
        "cudagraph_capture_sizes": ([s for s in sizes if isinstance(s, int) and not isinstance(s, bool)]
                                    if isinstance(sizes, list) else [sizes] if isinstance(sizes, int) else None),
        "enforce_eager": bool(cfg.enforce_eager),
        "blackwell": bool(cc and cc[0] == 10),
        "runner": runner(ctx) or "v1",
        "backend_cg_support": backend_cg_support(ctx),
        "draft_decode_steps": _draft_decode_steps(ctx),
        "given": sorted(k for k, v in (("max_num_seqs", cfg.max_num_seqs), ("max_num_batched_tokens", cfg.max_num_batched_tokens),
                                       ("max_cudagraph_capture_size", mx), ("cudagraph_capture_sizes", sizes),
                                       ("cudagraph_mode", mode)) if v is not None),
    }


def capture(ctx: "CheckContext") -> CG.CudaGraphPlan | None:
    """CUDA-graph capture plan with speculation (None without speculation, or on CPU)."""
    if ctx.spec is None or not ctx.k or platform(ctx) == "cpu" or runner(ctx) is None:
        return None

    def go():
        a = {k: v for k, v in capture_inputs(ctx).items() if k != "given"}
        return CG.capture_plan(ctx.version, **a)

    return _cached(ctx, "capture", go)


def served_length(ctx: "CheckContext") -> int | None:
    """The served ``max_model_len`` (``ctx.view.served_max_model_len``; None = unknown)."""
    return ctx.view.served_max_model_len


def drafter_length(ctx: "CheckContext") -> DC.DrafterContext | None:
    """What happens when prompts approach the served length with this drafter."""
    if ctx.spec is None or not ctx.method or M.has_no_model(ctx.method):
        return None
    info = ctx.view.drafter
    if info is None:
        return None

    def go():
        return DC.drafter_context(ctx.version, ctx.method, drafter=info, served_len=served_length(ctx),
                                  runner=runner(ctx) or "v2", speculative_max_model_len=ctx.spec.max_model_len,
                                  num_speculative_tokens=ctx.k or 1)

    return _cached(ctx, "drafter_length", go)


def served_length_after_drafter(ctx: "CheckContext") -> int | None:
    """The ``max_model_len`` the server runs with: the served length, lowered to the drafter's
    where ``VllmConfig._limit_max_model_len_to_draft`` applies (0.33 on the V2 runner, 0.34
    always: :func:`drafter_length` outcome ``served_length_reduced``). The one definition the
    planner and the rules read (issue 21: SD026 used to skip the 0.33 V2 cap the plan applied)."""
    dc = drafter_length(ctx)
    if dc is not None and dc.outcome == "served_length_reduced" and dc.effective_max_model_len:
        return dc.effective_max_model_len
    return served_length(ctx)


def quantization(ctx: "CheckContext") -> QD.QuantVerdict | None:
    """The drafter's quantization verdict (None without a drafter network)."""
    if ctx.spec is None or not ctx.method or M.has_no_model(ctx.method):
        return None

    def go():
        spec = ctx.spec
        return QD.check_quantized_drafter(
            ctx.version, ctx.method, drafter=ctx.view.drafter, speculative_quantization=spec.quantization,
            target_quantization=ctx.config.quantization or getattr(ctx.target, "quant_method", None),
            draft_lm_head_quantization=spec.draft_lm_head_quantization,
            hardware=ctx.hardware, runner=runner(ctx) or "v2", target=ctx.target)

    return _cached(ctx, "quantization", go)


# ---- explain ------------------------------------------------------------------------------

def _why(sel: AB.Selection | None, layout: AB.AttentionLayout | None, who: str, release: str, hw_name: str) -> dict[str, Any]:
    if layout is None:
        return {"backend": None, "why": f"the {who}'s head size is unknown (its config could not be read)"}
    facts = []
    if layout.use_non_causal:
        facts.append("non-causal")
    if layout.use_mla:
        facts.append("MLA" + (" sparse" if layout.use_sparse else ""))
    if layout.kv_cache_dtype not in (None, "auto"):
        facts.append(f"{layout.kv_cache_dtype} KV")
    if layout.has_sliding_window:
        facts.append("sliding window")
    if layout.has_sink:
        facts.append("attention sinks")
    facts.append(f"head size {layout.head_size}")
    desc = " + ".join(facts)
    if sel is None:
        return {"backend": None, "layout": desc, "why": "no hardware given: give --gpu to see the backend"}
    rejected = sel.why_not()
    out: dict[str, Any] = {"backend": sel.backend, "pinned": sel.pinned, "layout": desc, "profile": sel.profile,
                           "rejected": rejected, "certain": sel.certain,
                           "notes": list(sel.notes) + ([f"pinned by vLLM: {sel.pin_source}"] if sel.pin_source else [])}
    if sel.backend:
        skipped = "; ".join(f"{b}: {r}" for b, r in rejected.items())
        out["why"] = (f"{who}: {desc} on {release}/{hw_name} -> {sel.backend} accepts it"
                      + (" (pinned)" if sel.pinned else "") + (f"; passed over: {skipped}" if skipped else ""))
    else:
        out["why"] = f"{who}: {desc} on {release}/{hw_name} -> no backend fits: {sel.error}"
    return out


def explain(ctx: "CheckContext") -> dict[str, Any]:
    """What vLLM will do with this configuration, mechanism by mechanism, as plain JSON: why a
    rule stays quiet as much as why one fires. Keys: release, hardware, platform, speculating,
    method, k, runner, attention {target, drafter}, kv_cache, cuda_graphs, drafter_context,
    quantization, unknown (facts not computed and why). Never raises."""
    hw = ctx.hardware
    hw_name = getattr(hw, "name", None) or "unknown hardware"
    release = ctx.version.key
    out: dict[str, Any] = {
        "release": str(ctx.version), "hardware": getattr(hw, "name", None), "platform": platform(ctx),
        "speculating": bool(ctx.spec is not None and ctx.method), "method": ctx.method, "k": ctx.k, "unknown": [],
    }
    unknown = out["unknown"]
    if hw is None:
        unknown.append("hardware: not given, so attention backends and CUDA graphs are not predicted")
    for role, info in (("target", ctx.target), ("drafter", ctx.drafter)):
        err = ctx.lookup_errors.get("model" if role == "target" else "speculative_config.model")
        if err:
            unknown.append(f"{role} model: {err}")
    r = route(ctx)
    out["runner"] = None if r is None else {"runner": r.runner, "proposer": r.proposer, "error": r.error,
                                            "v2_blockers": list(r.v2_blockers), "notes": list(r.notes)}
    t_lay, d_lay = layouts(ctx)
    t_sel, d_sel = backends(ctx)
    att = {"target": _why(t_sel, t_lay, "target", release, hw_name)}
    if ctx.spec is not None and M.uses_draft_kv_cache(ctx.method):
        att["drafter"] = _why(d_sel, d_lay, "drafter", release, hw_name)
    out["attention"] = att
    g = kv_grouping(ctx)
    if g is None:
        sp = state_page(ctx)
        if ctx.spec is not None and M.uses_draft_kv_cache(ctx.method) and sp is not None and sp.error:
            unknown.append(f"KV-cache groups: the target's recurrent-state page is unknown ({sp.error})")
        out["kv_cache"] = None
    else:
        out["kv_cache"] = {"groups": [{"spec": x.spec, "layers": len(x.layers), "block_size": x.block_size,
                                       "page_size_bytes": x.page_size, "roles": list(x.roles)} for x in g.groups],
                           "num_groups": g.num_groups, "drafter_groups": list(g.drafter_groups),
                           "padding_layers": g.padding_layers, "error": g.error, "notes": list(g.notes)}
        sp = state_page(ctx)
        if sp is not None and sp.page_bytes is not None:
            out["kv_cache"]["recurrent_state"] = {"page_bytes": sp.page_bytes, "shapes": [list(x) for x in sp.shapes],
                                                  "formula": f"{sp.module}.py {sp.calculator}", "release": sp.release}
    plan = capture(ctx)
    if plan is not None:
        inputs = capture_inputs(ctx)
        out["cuda_graphs"] = {"mode": plan.mode, "decode_query_len": plan.decode_query_len, "largest_graph_tokens": plan.runner_max_size,
                              "graphs_up_to_requests": plan.max_graph_requests, "eager_from_requests": plan.eager_from,
                              "max_num_seqs": inputs["max_num_seqs"], "given": inputs["given"], "error": plan.error,
                              "notes": list(plan.notes)}
    else:
        out["cuda_graphs"] = None
    dc = drafter_length(ctx)
    out["drafter_context"] = None if dc is None else {
        "outcome": dc.outcome, "drafter_len": dc.drafter_len, "served_len": dc.served_len, "skip_from": dc.skip_from,
        "effective_max_model_len": dc.effective_max_model_len, "severity": dc.severity, "message": dc.message,
        "source": dc.source}
    q = quantization(ctx)
    out["quantization"] = None if q is None else {"drafter_quantization": q.quantization, "errors": list(q.errors),
                                                   "warnings": list(q.warnings), "notes": list(q.notes), "certain": q.certain}
    for key, err in ctx.mechanism_errors.items():
        unknown.append(f"{key}: internal error {err}")
    return out


def alternatives(ctx: "CheckContext", role: str) -> list[str]:
    """Backends of this device's table that accept the model's layout (``role``: 'target' or
    'drafter') without kernel refusals, in table order: what a pinned backend could be when
    auto-selection fails. [] when unknown."""
    t_lay, d_lay = layouts(ctx)
    layout = t_lay if role == "target" else d_lay
    if layout is None or ctx.hardware is None:
        return []
    table = AB.load(ctx.version)
    profile = table.profile_for(ctx.hardware)
    if profile is None or table.kind(profile) not in ("cuda", "rocm"):
        return []
    out = []
    for name in table.data["profiles"][profile].get("backends", {}):
        sel = AB.select_backend(ctx.version, ctx.hardware, layout, name)
        if sel.ok and sel.certain and not AB.kernel_checks(sel, layout, ctx.hardware):
            out.append(name)
    return out


def selection_text(sel: AB.Selection | None) -> str:
    """One line: the backend chosen, or each candidate's first failing condition (vLLM's words)."""
    if sel is None:
        return "unknown"
    if sel.backend:
        return sel.backend
    why = sel.why_not()
    if why:
        return "none (" + "; ".join(f"{b}: {r}" for b, r in why.items()) + ")"
    return f"none ({sel.error})"


def imposed_pin_help(ctx: "CheckContext") -> tuple[list[str], str | None, str]:
    """For a backend vLLM imposed (a model's lock, or the target's backend inherited by the
    drafter) that a model refuses: (backends a user pin could be that accept the target and,
    when it inherits, the drafter; the first newer release whose backend_selection facts no longer
    impose it; why the layouts are non-causal, or '')."""
    _, d_sel = backends(ctx)
    rules = AB.selection_rules(ctx.version)
    alts = alternatives(ctx, "target")
    if rules.get("drafter_inherits_target_backend") and d_sel is not None:
        alts = [b for b in alts if b in set(alternatives(ctx, "drafter"))]
    fixed = AB.first_release_where(ctx.version, lambda r: bool(r) and not r.get("drafter_inherits_target_backend")
                                   and not r.get("non_causal_every_layer"))
    why = (f"vLLM {rules.get('release', ctx.version)} selects every layer, the target's included, with use_non_causal for "
           f"method {ctx.method} (vllm/v1/attention/selector.py get_attn_backend)") if _non_causal_every_layer(ctx) else ""
    return alts, fixed, why
