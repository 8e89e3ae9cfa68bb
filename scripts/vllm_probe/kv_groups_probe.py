"""Probe one release's KV-cache grouping and page-size unification (run by gen_mechanism_tables.py).

    python kv_groups_probe.py VLLM_ROOT

Builds the release's own ``KVCacheSpec`` objects (``vllm/v1/kv_cache_interface.py``) for
layer mixes of a target plus a drafter -- full attention, sliding window, MLA, Mamba-style
state -- and calls the release's ``get_kv_cache_groups`` (``vllm/v1/core/kv_cache_utils.py``,
``kv_cache_planning.py`` in 0.33; in 0.10, which has no such function, ``get_kv_cache_config``
with ample memory, reading the groups off the returned ``KVCacheConfig``) through
:mod:`sourceexec`. Prints
``{"features": ..., "samples": [...]}``: features are facts read from the source (which
steps exist), samples the real groupings the mirror in ``wizard/mechanisms/kv_groups.py`` is
tested against.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sourceexec import Engine, Poison, Unknown, quiet  # noqa: E402

NS = types.SimpleNamespace


class Cfg:
    def __init__(self, name, values):
        object.__setattr__(self, "_n", name)
        object.__setattr__(self, "_v", values)

    def __getattr__(self, k):
        v = object.__getattribute__(self, "_v")
        if k in v:
            return v[k]
        return Poison(f"{object.__getattribute__(self, '_n')}.{k}")


def main():
    quiet()
    import torch

    root = Path(sys.argv[1])
    eng = Engine(root)

    class Plat:
        def __getattr__(self, k):
            return lambda *a, **kw: False

    eng.stubs[("vllm.platforms", "current_platform")] = Plat()
    mod = "vllm.v1.core.kv_cache_planning" if eng.module_path("vllm.v1.core.kv_cache_planning") else "vllm.v1.core.kv_cache_utils"
    I = "vllm.v1.kv_cache_interface"
    # 0.10 and older: no get_kv_cache_groups; get_kv_cache_config(vllm_config, specs, available_memory)
    # groups the layers (after checking the memory) and returns a KVCacheConfig holding the groups
    entry = "get_kv_cache_groups" if eng.source_of(mod, None, "get_kv_cache_groups") else "get_kv_cache_config"
    if entry == "get_kv_cache_groups":
        get_groups = eng.get(f"{mod}.get_kv_cache_groups")
    else:
        get_config = eng.get(f"{mod}.get_kv_cache_config")

        def get_groups(vc, specs):
            return get_config(vc, specs, 1 << 50).kv_cache_groups
    Full = eng.get(f"{I}.FullAttentionSpec")
    Sliding = eng.get(f"{I}.SlidingWindowSpec")
    has_mla_class = eng.source_of(I, None, "MLAAttentionSpec") is not None
    MLA = eng.get(f"{I}.MLAAttentionSpec") if has_mla_class else None
    Mamba = eng.get(f"{I}.MambaSpec")
    attn_fields = {f.name for f in dataclasses.fields(Full)}
    mamba_fields = {f.name for f in dataclasses.fields(Mamba)}
    src_unify = eng.source_of(mod, None, "unify_kv_cache_spec_page_size") or ""
    src_group = (eng.source_of(mod, None, "_get_kv_cache_groups_uniform_page_size")
                 or eng.source_of(mod, None, "_get_kv_cache_config_uniform_page_size") or "")
    src_uniform = (eng.source_of(mod, None, "is_kv_cache_spec_uniform")
                   or eng.source_of(mod, None, "is_kv_cache_type_uniform") or "")
    features = {
        "module": mod.replace("vllm.", "vllm/").replace(".", "/") + ".py",
        "entry": entry,
        # the steps a release has (absent in 0.10: pages must already be equal, else NotImplementedError)
        "unify_page_sizes": bool(src_unify),
        "uniform_type_specs": eng.source_of(I, None, "UniformTypeKVCacheSpecs") is not None,
        # how "the same spec" is decided: KVCacheSpec.type_id (0.10.0: kind, block size and page size,
        # not heads/head size) or merge()/equality of every field
        "spec_equality": "type_id" if ".type_id" in src_uniform else "merge",
        # the page-size-uniform path cuts each bucket into consecutive slices (0.10) or strided ones
        "group_split": "contiguous" if "layers[i:i + group_size]" in src_group else "strided",
        "mla_spec": "MLAAttentionSpec" if has_mla_class else "FullAttentionSpec",
        "pad_attention_pages": "page_size_padded=max_page_size" in src_unify and "MLAAttentionSpec" in src_unify,
        "pad_mamba_pages": "MambaSpec" in src_unify,
        "mla_swa_full_allocation_fallback": eng.source_of(mod, None, "_try_get_full_allocation_fallback_groups") is not None,
        # the group size is the largest bucket when it is within this factor of the smallest
        # (0.12-0.15: 1.25; later 1.5; None: always the smallest bucket)
        "group_size_max_within": (float(m.group(1)) if (m := re.search(r"max_num_layers < min_num_layers \* ([0-9.]+)",
                                                                       src_group)) else None),
        "merge_compatible_buckets": ".merge(" in src_group,
    }

    def spec(layer, block):
        kind = layer["kind"]
        dt = torch.float8_e4m3fn if layer.get("fp8") else torch.bfloat16
        mla_kw = {"use_mla": False} if "use_mla" in attn_fields else {}  # 0.10: MLA is FullAttentionSpec(use_mla=True)
        if kind == "full":
            return Full(block_size=block, num_kv_heads=layer["kv_heads"], head_size=layer["head"], dtype=dt, **mla_kw)
        if kind == "sliding":
            return Sliding(block_size=block, num_kv_heads=layer["kv_heads"], head_size=layer["head"], dtype=dt,
                           sliding_window=layer["window"], **mla_kw)
        if kind == "mla" and MLA is None:
            return Full(block_size=block, num_kv_heads=1, head_size=layer["head"], dtype=dt, use_mla=True)
        if kind == "mla":
            return MLA(block_size=block, num_kv_heads=1, head_size=layer["head"], dtype=dt, cache_dtype_str="auto")
        if kind == "mamba":
            shapes = tuple(tuple(s) for s in layer["shapes"])
            if "dtypes" in mamba_fields:
                return Mamba(block_size=block, shapes=shapes, dtypes=(torch.bfloat16,) * len(shapes))
            return Mamba(block_size=block, shapes=shapes, dtype=torch.bfloat16)  # 0.10: one dtype for every state
        raise ValueError(kind)

    layout_mod = eng.module_path("vllm.v1.kv_cache_layout")
    if layout_mod is not None:
        Layout = eng.get("vllm.v1.kv_cache_layout.KVCacheLayout")
        layout_name = "LBNHC" if "LBNHC" in Layout.__members__ else next(iter(Layout.__members__))
        layout = Layout[layout_name]
    else:
        layout_name, layout = "NHD", None
    features["assumed_kv_cache_layout"] = layout_name

    def run(target, drafter, block, disable_hybrid, method):
        specs = {}
        for i, l in enumerate(target):
            specs[f"model.layers.{i}.attn"] = spec(l, block)
        n = len(target)
        for j, l in enumerate(drafter):
            specs[f"model.layers.{n + j}.attn" if method == "mtp" else f"draft.layers.{j}.attn"] = spec(l, block)
        sc = None
        if method:
            sc = Cfg("speculative_config", {
                "method": method, "use_eagle": lambda: method in ("eagle", "eagle3", "mtp", "dflash", "dspark"),
                "use_eagle_block_drop": lambda: method in ("eagle", "eagle3", "mtp", "dflash", "dspark"),
                "disable_eagle_block_drop": False,
            })
        vc = Cfg("vllm_config", {
            "scheduler_config": Cfg("scheduler_config", {"disable_hybrid_kv_cache_manager": disable_hybrid,
                                                         "max_num_batched_tokens": 8192}),
            "speculative_config": sc,
            # max_model_len, num_gpu_blocks_override, max_num_batched_tokens: read by 0.10's
            # get_kv_cache_config (memory check and logging) around the grouping
            "model_config": Cfg("model_config", {"hf_config": NS(model_type="llama"), "max_model_len": 4096}),
            "attention_config": Cfg("attention_config", {"hisparse_config": None}),
            "parallel_config": Cfg("parallel_config", {"decode_context_parallel_size": 1, "tensor_parallel_size": 1}),
            "cache_config": Cfg("cache_config", {"enable_prefix_caching": True, "kv_cache_layout": layout_name,
                                                 "num_gpu_blocks_override": None, "block_size": block,
                                                 "get_resolved_kv_cache_layout": lambda: layout}),
            "kv_transfer_config": None,
        })
        page = {k: v.page_size_bytes for k, v in specs.items()}
        try:
            groups = get_groups(vc, dict(specs))
        except Unknown as e:
            return {"unknown": str(e)[:200], "pages": page}
        except Exception as e:
            return {"error": f"{type(e).__name__}: {e}"[:300], "pages": page}
        out = []
        for g in groups:
            s = g.kv_cache_spec
            out.append({
                "layers": list(g.layer_names),
                "spec": type(s).__name__,
                "block_size": s.block_size,
                "page_size": s.page_size_bytes,
                "eagle": bool(getattr(g, "is_eagle_group", False)),
            })
        return {"groups": out, "pages": page}

    rng = random.Random(11)
    samples = []

    def L(kind, **kw):
        return {"kind": kind, **kw}

    llama = [L("full", kv_heads=8, head=128)]
    scenarios = [
        # Llama-3.1-8B + EAGLE3 (1 full layer, same shape)
        (llama * 32, llama, 16, False, "eagle3"),
        # gpt-oss-20b (12 sliding + 12 full, 8x64) + EAGLE3 (1 full layer)
        ([L("sliding", kv_heads=8, head=64, window=128), L("full", kv_heads=8, head=64)] * 12,
         [L("full", kv_heads=8, head=64)], 16, False, "eagle3"),
        # DeepSeek-V3 (61 MLA) + MTP (1 MLA)
        ([L("mla", head=576)] * 61, [L("mla", head=576)], 64, False, "mtp"),
        # Kimi/DeepSeek MLA target + Llama-style EAGLE3 drafter (8x128 full)
        ([L("mla", head=576)] * 61, [L("full", kv_heads=8, head=128)], 64, False, "eagle3"),
        # Gemma-3 style 5:1 sliding/full + EAGLE drafter
        ([L("sliding", kv_heads=8, head=256, window=1024)] * 5 * 4 + [L("full", kv_heads=8, head=256)] * 4,
         [L("full", kv_heads=8, head=256)], 16, False, "eagle"),
        # hybrid GDN target (3 linear : 1 full) + MTP with one full layer
        ([L("mamba", shapes=[[3, 8192], [32, 128, 128]])] * 3 * 8 + [L("full", kv_heads=2, head=256)] * 8,
         [L("full", kv_heads=2, head=256)], 528, False, "mtp"),
        # DFlash drafter with sliding + full layers on a full-attention target
        (llama * 32, [L("sliding", kv_heads=8, head=128, window=2048), L("full", kv_heads=8, head=128)], 16, False, "dflash"),
        # fp8 target pages with a bf16 drafter
        ([L("full", kv_heads=8, head=128, fp8=True)] * 32, llama, 16, False, "eagle3"),
        # disable hybrid manager on gpt-oss
        ([L("sliding", kv_heads=8, head=64, window=128), L("full", kv_heads=8, head=64)] * 12,
         [L("full", kv_heads=8, head=64)], 16, True, "eagle3"),
        # Llama-3.1-8B + an EAGLE drafter trained with 4 KV heads (vLLM issue 22432): pages differ
        (llama * 32, [L("full", kv_heads=4, head=128)], 16, False, "eagle"),
        # MLA target + sliding-window drafter (full-allocation fallback)
        ([L("mla", head=576)] * 8, [L("sliding", kv_heads=8, head=128, window=4096)], 64, False, "eagle3"),
    ]
    for t, d, b, dh, m in scenarios:
        samples.append({"target": t, "drafter": d, "block_size": b, "disable_hybrid": dh, "method": m,
                        **run(t, d, b, dh, m)})
    kinds = ["full", "full", "sliding", "mla", "mamba"]
    for _ in range(160):
        pattern = []
        tk = rng.sample(kinds, rng.choice([1, 1, 2, 2, 3]))
        heads = rng.choice([1, 2, 4, 8])
        hs = rng.choice([64, 128, 256])
        for k in tk:
            cnt = rng.choice([1, 2, 3, 5, 8])
            if k == "full":
                pattern += [L("full", kv_heads=heads, head=hs, fp8=rng.random() < 0.15)] * cnt
            elif k == "sliding":
                pattern += [L("sliding", kv_heads=heads, head=hs, window=rng.choice([128, 512, 4096]))] * cnt
            elif k == "mla":
                pattern += [L("mla", head=576)] * cnt
            else:
                pattern += [L("mamba", shapes=[[rng.choice([3, 4]), rng.choice([1024, 4096])], [rng.choice([8, 16]), 64, 64]])] * cnt
        reps = rng.choice([1, 2, 4])
        target = pattern * reps
        dk = rng.choice(["full", "full", "sliding", "mla", "none", "mixed"])
        if dk == "none":
            drafter = []
        elif dk == "mixed":
            drafter = [L("sliding", kv_heads=heads, head=hs, window=512), L("full", kv_heads=heads, head=hs)]
        elif dk == "mla":
            drafter = [L("mla", head=576)]
        else:
            drafter = [L(dk, kv_heads=rng.choice([heads, 8]), head=rng.choice([hs, 128]), window=512)]
            if dk == "full":
                drafter[0].pop("window")
        block = rng.choice([16, 16, 32, 64])
        method = rng.choice(["eagle3", "eagle", "mtp", "draft_model", None]) if drafter else rng.choice([None, "ngram"])
        dh = rng.random() < 0.15
        samples.append({"target": target, "drafter": drafter, "block_size": block,
                        "disable_hybrid": dh, "method": method, **run(target, drafter, block, dh, method)})
    json.dump({"features": features, "samples": samples}, sys.stdout)


if __name__ == "__main__":
    main()
