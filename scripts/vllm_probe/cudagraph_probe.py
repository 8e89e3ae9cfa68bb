"""Probe one release's CUDA-graph capture sizes with speculation (run by gen_mechanism_tables.py).

    python cudagraph_probe.py VLLM_ROOT

Runs the release's own code through :mod:`sourceexec` on stand-in config objects:

* ``VllmConfig._set_cudagraph_sizes`` (``vllm/config/vllm.py``) -- the capture sizes;
* ``CompilationConfig.adjust_cudagraph_sizes_for_spec_decode`` (``vllm/config/compilation.py``)
  -- the V1 model runner's rounding to multiples of 1+k under FULL decode graphs;
* ``CudagraphDispatcher`` (``vllm/v1/cudagraph_dispatcher.py``) -- which mode a uniform decode
  batch of n requests x (1+k) tokens runs in (FULL / PIECEWISE / NONE = eager), V1 runner.

Releases without Model Runner V1 (0.34+: no ``cudagraph_dispatcher.py``, no
``adjust_cudagraph_sizes_for_spec_decode``) are probed by :func:`main_split_sizes`: the same
``_set_cudagraph_sizes``, which now ends in ``_split_cudagraph_capture_sizes`` (prefill token
sizes / decode request sizes, ``get_decode_cudagraph_query_lens``,
``get_draft_decode_cudagraph_request_sizes``), and the V2 ``CudaGraphManager`` dispatch rule
(``vllm/v1/worker/gpu/cudagraph_utils.py``) on the release's ``decode_cudagraph_capture_shapes``.

Prints ``{"features": ..., "default_mode": ..., "samples": [...]}``. ``features`` are facts read
from the source (which steps exist in this release); the samples are the real outputs the
mirror in ``wizard/mechanisms/cudagraph.py`` is tested against.
"""

from __future__ import annotations

import json
import random
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sourceexec import Engine, Unknown, quiet  # noqa: E402


class NS(types.SimpleNamespace):
    pass


def _stub_platform(eng) -> dict:
    """Platform stubs for the evaluated sizing code; the returned ``{"v": bool}`` switches the
    device to Blackwell (SM 10.x) for the samples that ask for it."""
    eng.stubs[("vllm.compilation.breakable_cudagraph", "is_breakable_cudagraph_enabled")] = lambda: False
    blackwell = {"v": False}

    class Plat:
        def is_device_capability_family(self, x, device_id=0):
            return blackwell["v"] and x // 10 == 10

        def __getattr__(self, k):
            return lambda *a, **kw: False

    eng.stubs[("vllm.platforms", "current_platform")] = Plat()
    return blackwell


def main():
    quiet()
    root = Path(sys.argv[1])
    eng = Engine(root)
    if eng.module_path("vllm.v1.cudagraph_dispatcher") is None:
        return main_split_sizes(eng)
    blackwell = _stub_platform(eng)
    Mode = eng.get("vllm.config.compilation.CUDAGraphMode")
    set_sizes = eng.method("vllm.config.vllm", "VllmConfig", "_set_cudagraph_sizes")
    adjust = eng.method("vllm.config.compilation", "CompilationConfig", "adjust_cudagraph_sizes_for_spec_decode")
    udql = eng.method("vllm.config.vllm", "VllmConfig", "uniform_decode_query_len")
    nst = eng.method("vllm.config.vllm", "VllmConfig", "num_speculative_tokens")
    Dispatcher = eng.get("vllm.v1.cudagraph_dispatcher.CudagraphDispatcher")
    import inspect

    adjust_params = list(inspect.signature(adjust).parameters)
    src_sizes = eng.source_of("vllm.config.vllm", "VllmConfig", "_set_cudagraph_sizes") or ""
    src_resolve = eng.source_of("vllm.config.compilation", "CompilationConfig", "resolve_cudagraph_mode_and_sizes") or ""
    try:
        o2 = eng.get("vllm.config.vllm.OPTIMIZATION_LEVEL_02")
        default_mode = o2["compilation_config"]["cudagraph_mode"].name
    except Exception as e:  # older layouts
        default_mode = f"?{type(e).__name__}"
    features = {
        "uniform_decode_sizes": "uniform_decode_sizes" in src_sizes,
        "dynamic_tiers": "uses_dynamic_speculative_decoding" in src_sizes,
        "no_spec_appends_max_num_seqs": "uniform_decode_sizes = [max_num_seqs]" in src_sizes,
        "interactivity_mode": "interactivity" in src_sizes,
        "sequence_parallel_rounding": "update_sizes_for_sequence_parallelism" in src_sizes,
        "blackwell_default_1024": "1024 if" in src_sizes,
        "spec_adjust_v1_only": "not use_v2_model_runner" in src_resolve,
        "spec_adjust_takes_tp": "tensor_parallel_size" in adjust_params,
        "spec_decode_full_needs_uniform_batch": "UNIFORM_BATCH" in src_resolve,
    }

    def run(max_num_seqs, k, mnbt, bw, user_max, user_sizes, mode_name, enforce_eager=False):
        blackwell["v"] = bw
        mode = getattr(Mode, mode_name)
        cc = NS(cudagraph_mode=mode, max_cudagraph_capture_size=user_max,
                cudagraph_capture_sizes=list(user_sizes) if user_sizes else None, compile_sizes=None,
                pass_config=NS(enable_sp=False), cudagraph_specialize_lora=False,
                post_init_cudagraph_sizes=lambda: None,
                is_attention_compiled_piecewise=lambda: True)
        spec = NS(num_speculative_tokens=k, num_speculative_tokens_per_batch_size=None,
                  uses_dynamic_speculative_decoding=lambda: False) if k else None

        class Self:
            pass

        s = Self()
        s.model_config = NS(enforce_eager=enforce_eager)
        s.compilation_config = cc
        s.scheduler_config = NS(max_num_seqs=max_num_seqs, max_num_batched_tokens=mnbt)
        s.speculative_config = spec
        s.diffusion_config = None
        s.performance_mode = "balanced"
        s.parallel_config = NS(tensor_parallel_size=1)
        s.lora_config = None
        Self.num_speculative_tokens = property(nst)
        if udql is not None:
            Self.uniform_decode_query_len = property(udql)
        out = {}
        try:
            set_sizes(s)
        except Exception as e:
            return {"error": f"{type(e).__name__}: {e}"[:300]}
        out["sizes"] = list(cc.cudagraph_capture_sizes or [])
        out["max"] = cc.max_cudagraph_capture_size
        # V1 runner: rounding under FULL decode graphs with speculation
        q = 1 + k
        if mode.decode_mode() == Mode.FULL and q > 1 and cc.cudagraph_capture_sizes:
            try:
                args = [cc, q] + ([1] if "tensor_parallel_size" in adjust_params else [])
                adjust(*args)
                out["v1_sizes"] = list(cc.cudagraph_capture_sizes)
                out["v1_max"] = cc.max_cudagraph_capture_size
            except Exception as e:
                out["v1_error"] = f"{type(e).__name__}: {e}"[:300]
                return out
        else:
            out["v1_sizes"], out["v1_max"] = out["sizes"], out["max"]
        # V1 dispatcher: uniform decode batches of n requests
        try:
            vc = NS(compilation_config=cc, scheduler_config=s.scheduler_config, lora_config=None,
                    num_speculative_tokens=k)
            d = Dispatcher(vc)
            d.initialize_cudagraph_keys(mode, q)
            runs = []
            for n in range(1, max_num_seqs + 1):
                m, desc = d.dispatch(n * q, uniform_decode=True)
                name = m.name
                if runs and runs[-1][2] == name:
                    runs[-1][1] = n
                else:
                    runs.append([n, n, name])
            out["v1_decode"] = runs
        except Unknown as e:
            out["v1_decode_unknown"] = str(e)[:200]
        except Exception as e:
            out["v1_decode_error"] = f"{type(e).__name__}: {e}"[:300]
        return out

    rng = random.Random(7)
    samples = []
    grid = []
    for mns in (1, 8, 64, 128, 256, 512, 1024):
        for k in (0, 1, 3, 4, 7):
            grid.append((mns, k, 8192, False, None, None, default_mode if not default_mode.startswith("?") else "FULL_AND_PIECEWISE"))
    for _ in range(120):
        grid.append((
            rng.choice([1, 4, 16, 48, 100, 128, 200, 256, 384, 512, 1024]),
            rng.choice([0, 1, 2, 3, 4, 5, 7, 9, 15]),
            rng.choice([256, 2048, 8192, 16384]),
            rng.random() < 0.3,
            rng.choice([None, None, None, 16, 64, 100, 512, 1024]),
            rng.choice([None, None, None, None, [1, 2, 4, 8], [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]]),
            rng.choice(["FULL_AND_PIECEWISE", "FULL_AND_PIECEWISE", "PIECEWISE", "FULL_DECODE_ONLY", "FULL", "NONE"]),
        ))
    for g in grid:
        mns, k, mnbt, bw, umax, usizes, mode = g
        if umax is not None and usizes is not None:
            umax = None  # both together only raise when inconsistent; keep samples meaningful
        res = run(mns, k, mnbt, bw, umax, usizes, mode)
        samples.append({"max_num_seqs": mns, "k": k, "max_num_batched_tokens": mnbt, "blackwell": bw,
                        "max_cudagraph_capture_size": umax, "cudagraph_capture_sizes": usizes,
                        "mode": mode, **res})
    json.dump({"features": features, "default_mode": default_mode, "samples": samples}, sys.stdout)


def main_split_sizes(eng):
    """0.34+: prefill and decode CUDA-graph sizes resolved separately, V2 runner only."""
    blackwell = _stub_platform(eng)
    Mode = eng.get("vllm.config.compilation.CUDAGraphMode")
    shapes_fn = eng.get("vllm.config.compilation.decode_cudagraph_capture_shapes")
    max_tokens_fn = eng.get("vllm.config.compilation.decode_cudagraph_capture_max_tokens")
    names = ("_set_cudagraph_sizes", "_split_cudagraph_capture_sizes", "get_decode_cudagraph_query_lens",
             "get_draft_decode_cudagraph_request_sizes", "get_varlen_decode_cudagraph_token_sizes")
    meth = {n: eng.method("vllm.config.vllm", "VllmConfig", n) for n in names}
    udql = eng.method("vllm.config.vllm", "VllmConfig", "uniform_decode_query_len")
    nst = eng.method("vllm.config.vllm", "VllmConfig", "num_speculative_tokens")
    src_sizes = eng.source_of("vllm.config.vllm", "VllmConfig", "_set_cudagraph_sizes") or ""
    src_split = eng.source_of("vllm.config.vllm", "VllmConfig", "_split_cudagraph_capture_sizes") or ""
    src_resolve = eng.source_of("vllm.config.compilation", "CompilationConfig", "resolve_cudagraph_mode_and_sizes") or ""
    try:
        o2 = eng.get("vllm.config.vllm.OPTIMIZATION_LEVEL_02")
        default_mode = o2["compilation_config"]["cudagraph_mode"].name
    except Exception as e:  # noqa: BLE001
        default_mode = f"?{type(e).__name__}"
    features = {
        "uniform_decode_sizes": "uniform_decode_sizes" in src_sizes,
        "dynamic_tiers": "target_query_lens" in src_sizes,
        "no_spec_appends_max_num_seqs": "uniform_decode_sizes = [max_num_seqs]" in src_sizes,
        "interactivity_mode": "interactivity" in src_sizes,
        "sequence_parallel_rounding": "update_sizes_for_sequence_parallelism" in src_sizes,
        "blackwell_default_1024": "1024 if" in src_sizes,
        # no V1 runner, so no rounding of the sizes to multiples of 1+k
        "spec_adjust": eng.source_of("vllm.config.compilation", "CompilationConfig",
                                     "adjust_cudagraph_sizes_for_spec_decode") is not None,
        "spec_adjust_v1_only": True,
        "spec_adjust_takes_tp": False,
        "spec_decode_full_needs_uniform_batch": "UNIFORM_BATCH" in src_resolve,
        "split_capture_sizes": bool(src_split),
        "wide_defaults_sm100": "wide_defaults" in src_split,
        "draft_decode_request_sizes": meth["get_draft_decode_cudagraph_request_sizes"] is not None,
    }

    def run(max_num_seqs, k, mnbt, bw, user_max, user_sizes, mode_name, method):
        blackwell["v"] = bw
        mode = getattr(Mode, mode_name)
        cc = NS(cudagraph_mode=mode, max_cudagraph_capture_size=user_max,
                cudagraph_capture_sizes=list(user_sizes) if user_sizes else None, compile_sizes=None,
                prefill_cudagraph_capture_token_sizes=None, max_prefill_cudagraph_capture_tokens=None,
                decode_cudagraph_capture_request_sizes=None, max_decode_cudagraph_capture_requests=None,
                max_decode_cudagraph_capture_tokens=None,
                pass_config=NS(enable_sp=False), cudagraph_specialize_lora=False,
                post_init_cudagraph_sizes=lambda: None, is_attention_compiled_piecewise=lambda: True)
        spec = NS(num_speculative_tokens=k, num_speculative_tokens_per_batch_size=None, method=method,
                  uses_dynamic_speculative_decoding=lambda: False, use_multi_module_mtp=lambda: False,
                  use_gemma4_mtp=lambda: False, enable_adaptive_verification=False) if k else None

        class Self:
            pass

        for n, f in meth.items():
            if f is not None:
                setattr(Self, n, f)
        Self.num_speculative_tokens = property(nst)
        Self.uniform_decode_query_len = property(udql)
        s = Self()
        s.model_config = NS(enforce_eager=False)
        s.compilation_config = cc
        s.scheduler_config = NS(max_num_seqs=max_num_seqs, max_num_batched_tokens=mnbt)
        s.speculative_config = spec
        s.diffusion_config = None
        s.performance_mode = "balanced"
        s.parallel_config = NS(tensor_parallel_size=1)
        s.lora_config = None
        try:
            s._set_cudagraph_sizes()
        except Exception as e:  # noqa: BLE001
            return {"error": f"{type(e).__name__}: {e}"[:300]}
        out = {"sizes": list(cc.cudagraph_capture_sizes or []), "max": cc.max_cudagraph_capture_size,
               "prefill_sizes": list(cc.prefill_cudagraph_capture_token_sizes or []),
               "decode_request_sizes": list(cc.decode_cudagraph_capture_request_sizes or []),
               "mode_after": cc.cudagraph_mode.name}
        # V2 CudaGraphManager._init_candidates / dispatch for a uniform decode batch of n requests
        mode = cc.cudagraph_mode
        q = 1 + k
        query_lens = s.get_decode_cudagraph_query_lens(q)
        decode_n = []
        if mode != Mode.NONE and mode.separate_routine() and mode.decode_mode() != Mode.NONE:
            shapes = shapes_fn(cc.decode_cudagraph_capture_request_sizes or [],
                               {qq: min(r, max_num_seqs) for qq, r in query_lens.items()}, max_tokens_fn(cc))
            decode_n = sorted(n for n, qq in shapes if qq == q)
        mixed = mode.mixed_mode() if mode != Mode.NONE else Mode.NONE
        token_sizes = sorted(cc.prefill_cudagraph_capture_token_sizes or []) if mixed != Mode.NONE else []
        runs = []
        for n in range(1, max_num_seqs + 1):
            if decode_n and n <= decode_n[-1]:
                m = mode.decode_mode().name
            elif token_sizes and n * q <= token_sizes[-1]:
                m = mixed.name
            else:
                m = "NONE"
            if runs and runs[-1][2] == m:
                runs[-1][1] = n
            else:
                runs.append([n, n, m])
        out["decode"] = runs
        return out

    rng = random.Random(7)
    grid = []
    dm = default_mode if not default_mode.startswith("?") else "FULL_AND_PIECEWISE"
    for mns in (1, 8, 64, 128, 256, 512, 1024):
        for k in (0, 1, 3, 4, 7):
            grid.append((mns, k, 8192, False, None, None, dm, "ngram"))
            if k >= 2 and mns in (64, 1024):
                grid.append((mns, k, 8192, False, None, None, dm, "eagle3"))
    for _ in range(140):
        grid.append((
            rng.choice([1, 4, 16, 48, 100, 128, 200, 256, 384, 512, 1024]),
            rng.choice([0, 1, 2, 3, 4, 5, 7, 9, 15]),
            rng.choice([256, 2048, 8192, 16384]),
            rng.random() < 0.3,
            rng.choice([None, None, None, 16, 64, 100, 512, 1024]),
            rng.choice([None, None, None, None, [1, 2, 4, 8], [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]]),
            rng.choice(["FULL_AND_PIECEWISE", "FULL_AND_PIECEWISE", "PIECEWISE", "FULL_DECODE_ONLY", "FULL", "NONE"]),
            rng.choice(["ngram", "ngram", "eagle3", "dflash"]),
        ))
    samples = []
    for mns, k, mnbt, bw, umax, usizes, mode, method in grid:
        if umax is not None and usizes is not None:
            umax = None
        res = run(mns, k, mnbt, bw, umax, usizes, mode, method)
        samples.append({"max_num_seqs": mns, "k": k, "max_num_batched_tokens": mnbt, "blackwell": bw,
                        "max_cudagraph_capture_size": umax, "cudagraph_capture_sizes": usizes,
                        "mode": mode, "method": method if k else None, **res})
    json.dump({"features": features, "default_mode": default_mode, "samples": samples}, sys.stdout)


if __name__ == "__main__":
    main()
