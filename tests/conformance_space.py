"""Broad conformance corpus: the whole `vllm serve` option space, not only speculative decoding.

Shared by ``benchmarks/conformance.py`` (``--corpus space``, the default) and tests; put
``tests/`` on ``sys.path`` to import it.

* :func:`catalog_models` copies the real catalog configs of ``tests/data/hf`` (only
  ``config.json``: vLLM's config build reads nothing else for these) into folders under
  ``root``; with :func:`conformance_corpus.build_models`'s tiny local models they are the targets.
* :func:`generate_space` yields ``(case_id, ServeConfig dict)`` — ``n`` configurations,
  deterministic for ``(seed, release)``. Each picks a target and perturbs 1-3 *dimensions*:
  parallel sizes (TP/PP/DP incl. non-divisors of the heads / KV heads / experts / layers, 0,
  -1, expert parallel), ``max_model_len`` against the model's limit (limit, limit + 1, 2x,
  300000, 0, -1, with and without ``VLLM_ALLOW_LONG_MAX_MODEL_LEN``, rope-scaling overrides),
  scheduler budgets (``max_num_seqs``, ``max_num_batched_tokens``, chunked prefill on/off,
  partial prefills, policy), ``dtype``, ``quantization``, KV-cache dtypes, block sizes,
  ``gpu_memory_utilization``, LoRA options, logprobs, structured-output backends,
  compilation / CUDA-graph options and optimization levels, tokenizer / runner / misc
  options, and the speculative-decoding fields (:func:`conformance_corpus._one`).

Allowed values come from the release's generated constraints (``wizard.vllm.constraints``:
the ``Literal`` values of ``ModelConfig.dtype``, ``CacheDType``, ``LoRAConfig.max_lora_rank``,
``StructuredOutputsConfig.backend`` ...) and tables (``quantization_methods``), plus wrong
spellings and boundary numbers, so every release is sampled over its own vocabulary.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable, Iterator

from wizard.vllm import constraints as vc
from wizard.vllm.releases import load as load_release_data

__all__ = ["CATALOG", "catalog_models", "model_facts", "generate_space", "DIMENSIONS"]

HF = Path(__file__).parent / "data" / "hf"

#: catalog targets (folder name under tests/data/hf, config file). Left out: Gemma-3 and
#: Devstral-2 (multimodal: vLLM's model inspection needs packages this host lacks -> every
#: config "cannot validate here") and the EAGLE/SpecForge drafter templates (not targets).
CATALOG = {
    "llama31-8b": ("meta-llama--Llama-3.1-8B-Instruct", "config.json"),
    "llama31-70b": ("meta-llama--Llama-3.1-70B-Instruct", "config.json"),
    "llama32-1b": ("meta-llama--Llama-3.2-1B-Instruct", "config.json"),
    "qwen3-8b": ("Qwen--Qwen3-8B", "config.json"),
    "qwen3-30b-a3b": ("Qwen--Qwen3-30B-A3B", "config.json"),
    "deepseek-v3": ("deepseek-ai--DeepSeek-V3", "config.json"),
    "gpt-oss-120b": ("openai--gpt-oss-120b", "config.json"),
    "gpt-oss-20b-bf16": ("openai--gpt-oss-20b", "config.no-quantization-variant.json"),
    "devstral-2507": ("mistralai--Devstral-Small-2507", "config.json"),
    "mimo-7b": ("XiaomiMiMo--MiMo-7B", "config.json"),  # custom code: needs --trust-remote-code
}


def catalog_models(root: Path) -> dict[str, str]:
    """Write ``root/<name>/config.json`` for each :data:`CATALOG` entry; name -> folder."""
    out = {}
    for name, (folder, file) in CATALOG.items():
        dst = Path(root) / name
        if not (dst / "config.json").exists():
            dst.mkdir(parents=True, exist_ok=True)
            (dst / "config.json").write_text((HF / folder / file).read_text(encoding="utf-8"), encoding="utf-8")
        out[name] = str(dst)
    return out


def model_facts(path: str) -> dict[str, Any]:
    """The numbers the generator aims boundaries at, read from ``config.json`` (text config of
    multimodal models): heads, KV heads, layers, experts, max positions, rope scaling."""
    cfg = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    text = cfg.get("text_config") or cfg
    experts = text.get("num_experts") or text.get("n_routed_experts") or text.get("num_local_experts") or 0
    return {
        "heads": int(text.get("num_attention_heads") or 1),
        "kv_heads": int(text.get("num_key_value_heads") or text.get("num_attention_heads") or 1),
        "layers": int(text.get("num_hidden_layers") or 1),
        "experts": int(experts),
        "max_pos": int(text.get("max_position_embeddings") or 2048),
        "rope_scaling": text.get("rope_scaling"),
        "quantized": bool(cfg.get("quantization_config")),
        "mla": "kv_lora_rank" in text,
    }


# ---- value pools from the release's generated data ---------------------------------------------

def _literals(release: str, cls: str, name: str) -> list[Any]:
    spec = vc.field_spec(cls, name, release)
    vals = list(spec.literals) if spec is not None else []
    if spec is not None and spec.enum:
        vals += list(spec.enum)
    return vals


def _tables(release: str) -> dict[str, Any]:
    return load_release_data(release, "tables.json")


# ---- dimensions: each mutates cfg (and may use the model facts) ---------------------------------

Dim = Callable[[random.Random, dict, dict, str], None]


def _divisor_or_not(rng: random.Random, n: int, pool=(1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 32, 64)) -> int:
    if rng.random() < 0.5:
        divs = [d for d in pool if n % d == 0]
        return rng.choice(divs or [1])
    nondiv = [d for d in pool if n % d != 0]
    return rng.choice(nondiv or [3])


def dim_parallel(rng, cfg, f, rel):
    r = rng.random()
    if r < 0.55:
        cfg["tensor_parallel_size"] = _divisor_or_not(rng, f["heads"] if rng.random() < 0.6 else f["kv_heads"])
    elif r < 0.62:
        cfg["tensor_parallel_size"] = rng.choice([0, -1, 1024])
    elif r < 0.80:
        cfg["pipeline_parallel_size"] = rng.choice([2, 3, 4, 5, 7, f["layers"], f["layers"] + 1, 0])
    else:
        cfg["data_parallel_size"] = rng.choice([2, 3, 4, 0, -1])
    if f["experts"] and rng.random() < 0.5:
        cfg["enable_expert_parallel"] = True
        cfg["tensor_parallel_size"] = _divisor_or_not(rng, f["experts"], (2, 3, 4, 6, 8, 16))
    if rng.random() < 0.1:
        cfg["pipeline_parallel_size"] = rng.choice([2, 3])


def dim_max_model_len(rng, cfg, f, rel):
    lim = f["max_pos"]
    cfg["max_model_len"] = rng.choice([lim, lim + 1, 2 * lim, lim - 1, 300000, 512, 1, 0, -1, 10 ** 7])
    if cfg["max_model_len"] > lim and rng.random() < 0.3:
        cfg["env"] = {**cfg.get("env", {}), "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    if rng.random() < 0.15:  # rope scaling override: the derived limit follows vLLM's rope rules
        factor = rng.choice([2.0, 4.0])
        cfg["hf_overrides"] = {"rope_scaling": {"rope_type": "yarn", "factor": factor,
                                                "original_max_position_embeddings": lim}}
        cfg["max_model_len"] = rng.choice([int(lim * factor), int(lim * factor) + 1, lim + 1])


def dim_scheduler(rng, cfg, f, rel):
    cfg["max_num_seqs"] = rng.choice([1, 8, 128, 256, 1024, 0, -1, None])
    cfg["max_num_batched_tokens"] = rng.choice([1, 256, 512, 2048, 8192, 65536, 0, None])
    r = rng.random()
    if r < 0.35:
        cfg["enable_chunked_prefill"] = False
        cfg.setdefault("max_model_len", rng.choice([512, 2048, 8192, None]))
    elif r < 0.55:
        cfg["enable_chunked_prefill"] = True
    if rng.random() < 0.15:
        cfg["max_num_partial_prefills"] = rng.choice([0, 1, 2, 4])
        if rng.random() < 0.5:
            cfg["max_long_partial_prefills"] = rng.choice([1, 2, 8])
    if rng.random() < 0.1:
        cfg["scheduling_policy"] = rng.choice(_literals(rel, "SchedulerConfig", "policy") + ["lifo"])
    for k in ("max_num_seqs", "max_num_batched_tokens", "max_model_len"):
        if cfg.get(k) is None:
            cfg.pop(k, None)


def dim_dtype(rng, cfg, f, rel):
    cfg["dtype"] = rng.choice(_literals(rel, "ModelConfig", "dtype") + ["float8", "fp16", "bf16", "int8"])


def dim_quantization(rng, cfg, f, rel):
    q = _tables(rel).get("quantization_methods") or ["fp8"]
    cfg["quantization"] = rng.choice(q + ["nope", "FP8", "awq", "fp8", "gptq", "bitsandbytes"])


def dim_kv_dtype(rng, cfg, f, rel):
    cfg["kv_cache_dtype"] = rng.choice(list(_tables(rel)["cache_dtypes"]) + ["fp9", "int8"])


def dim_block_size(rng, cfg, f, rel):
    cfg["block_size"] = rng.choice([0, 1, 7, 8, 16, 32, 64, 128, 256, 512, 1024, -1])


def dim_memory(rng, cfg, f, rel):
    r = rng.random()
    if r < 0.6:
        cfg["gpu_memory_utilization"] = rng.choice([0, 0.5, 0.9, 1.0, 1.1, -0.1])
    else:
        cfg[rng.choice(["cpu_offload_gb", "swap_space"])] = rng.choice([0, 4, -1])


def dim_lora(rng, cfg, f, rel):
    cfg["enable_lora"] = rng.random() < 0.85
    ranks = _literals(rel, "LoRAConfig", "max_lora_rank") or [8, 16]
    if rng.random() < 0.7:
        cfg["max_lora_rank"] = rng.choice(ranks + [24, 0, 1024])
    if rng.random() < 0.6:
        cfg["max_loras"] = rng.choice([0, 1, 4, 16, -1])
    if rng.random() < 0.4:
        cfg["max_cpu_loras"] = rng.choice([1, 2, 8, 0])
    if rng.random() < 0.2:
        cfg["lora_dtype"] = rng.choice(["auto", "float16", "bfloat16", "float32", "fp8"])
    if rng.random() < 0.15:
        cfg["fully_sharded_loras"] = True
    if rng.random() < 0.3:
        cfg["max_num_seqs"] = rng.choice([8, 256])
        cfg["max_num_batched_tokens"] = rng.choice([512, 2048, 8192])


def dim_logprobs(rng, cfg, f, rel):
    if rng.random() < 0.7:
        cfg["max_logprobs"] = rng.choice([-5, -2, -1, 0, 20, 100000])
    else:
        cfg["logprobs_mode"] = rng.choice(_literals(rel, "ModelConfig", "logprobs_mode") + ["logits", "probs"])


def dim_structured(rng, cfg, f, rel):
    backends = _literals(rel, "StructuredOutputsConfig", "backend") or ["auto", "xgrammar"]
    so: dict[str, Any] = {"backend": rng.choice(backends + ["outline", "xgrammer", "json"])}
    if rng.random() < 0.3:
        so["disable_fallback"] = True
    cfg["structured_outputs_config"] = so
    if rng.random() < 0.2:
        cfg["reasoning_parser"] = rng.choice(["deepseek_r1", "qwen3", "nope_parser"])


def dim_compilation(rng, cfg, f, rel):
    r = rng.random()
    if r < 0.2:
        cfg["enforce_eager"] = rng.choice([True, False])
    if r < 0.75:
        cc: dict[str, Any] = {}
        modes = _literals(rel, "CompilationConfig", "mode")
        if rng.random() < 0.5:
            cc["mode"] = rng.choice(modes + [0, 1, 2, 3, 4, -1])
        cg = _literals(rel, "CompilationConfig", "cudagraph_mode")
        if rng.random() < 0.6:
            cc["cudagraph_mode"] = rng.choice(cg + ["FULL_DECODE", "none", "PIECEWISE"])
        if rng.random() < 0.3:
            cc["cudagraph_capture_sizes"] = rng.choice([[1, 2, 4], [0], [4, 2, 1], [8192]])
        if rng.random() < 0.3:
            cc["max_cudagraph_capture_size"] = rng.choice([0, 1, 64, 512, 100000])
        cfg["compilation_config"] = cc
    else:
        cfg["optimization_level"] = rng.choice([0, 1, 2, 3, 4, -1])


def dim_misc(rng, cfg, f, rel):
    r = rng.random()
    if r < 0.15:
        cfg["tokenizer_mode"] = rng.choice(_literals(rel, "ModelConfig", "tokenizer_mode") + ["fast", "sentencepiece"])
    elif r < 0.3:
        cfg["runner"] = rng.choice(_literals(rel, "ModelConfig", "runner") + ["embed", "chat"])
    elif r < 0.42:
        cfg["convert"] = rng.choice(_literals(rel, "ModelConfig", "convert") + ["reward", "chat"])
    elif r < 0.55:
        cfg["enable_prefix_caching"] = rng.choice([True, False])
        if rng.random() < 0.5:
            cfg["prefix_caching_hash_algo"] = rng.choice(_literals(rel, "CacheConfig", "prefix_caching_hash_algo") + ["md5"])
    elif r < 0.65:
        cfg["seed"] = rng.choice([0, -1, 42, 2 ** 40])
    elif r < 0.75:
        cfg["disable_sliding_window"] = True
    elif r < 0.85:
        cfg["generation_config"] = rng.choice(["auto", "vllm", "/nonexistent/gen"])
    elif r < 0.93:
        cfg["trust_remote_code"] = True
    else:
        cfg["skip_tokenizer_init"] = True


def dim_spec(rng, cfg, f, rel, models=None):
    from conformance_corpus import _one

    spec_cfg = _one(rng, models, True)
    for k in ("model", "max_model_len", "speculative_config", "kv_cache_dtype", "tensor_parallel_size", "pipeline_parallel_size",
              "kv_sharing_fast_prefill", "enable_prefix_caching", "async_scheduling", "enforce_eager", "env",
              "enable_lora", "max_num_seqs", "max_num_batched_tokens"):
        if k in spec_cfg:
            cfg[k] = spec_cfg[k] if k != "env" else {**cfg.get("env", {}), **spec_cfg[k]}


#: name -> (weight, function)
DIMENSIONS: dict[str, tuple[float, Dim]] = {
    "parallel": (3.0, dim_parallel),
    "max_model_len": (2.5, dim_max_model_len),
    "scheduler": (2.5, dim_scheduler),
    "dtype": (1.0, dim_dtype),
    "quantization": (1.2, dim_quantization),
    "kv_cache_dtype": (1.2, dim_kv_dtype),
    "block_size": (0.8, dim_block_size),
    "memory": (0.6, dim_memory),
    "lora": (1.5, dim_lora),
    "logprobs": (0.8, dim_logprobs),
    "structured_outputs": (0.8, dim_structured),
    "compilation": (1.2, dim_compilation),
    "misc": (1.0, dim_misc),
    "spec": (3.0, None),  # needs the tiny models: see generate_space
}

#: target name -> weight (tiny local models carry the speculative dimension)
_TARGETS = {"target": 4.0, "target_fp16": 0.5, "dsv3_mtp1": 0.7, "target_modelopt": 0.3,
            "llama31-8b": 2.0, "llama31-70b": 1.0, "llama32-1b": 1.0, "qwen3-8b": 1.5, "qwen3-30b-a3b": 1.5,
            "deepseek-v3": 1.2, "gpt-oss-120b": 1.0, "gpt-oss-20b-bf16": 0.6, "devstral-2507": 0.8, "mimo-7b": 0.3}


def generate_space(models: dict[str, str], n: int, seed: int = 0, release: str = "0.32") -> Iterator[tuple[str, dict[str, Any]]]:
    """``n`` configurations over ``models`` (tiny models from ``build_models`` plus
    :func:`catalog_models`), deterministic for ``(seed, release)``; ids 'space-<seed>-<i>-<dims>'.

    Every configuration that does not set ``max_model_len`` on purpose gets ``max_model_len=512``
    for tiny models (their limit is 2048) and none for catalog models (vLLM derives it)."""
    rng = random.Random(f"{seed}:{release}")
    facts = {name: model_facts(path) for name, path in models.items() if name in _TARGETS}
    targets = [t for t in _TARGETS if t in models]
    weights = [_TARGETS[t] for t in targets]
    dims = list(DIMENSIONS)
    dim_w = [DIMENSIONS[d][0] for d in dims]
    tiny = {"target", "target_fp16", "dsv3_mtp1", "target_modelopt"}
    for i in range(n):
        target = rng.choices(targets, weights)[0]
        cfg: dict[str, Any] = {"model": models[target]}
        if target in tiny:
            cfg["max_model_len"] = 512
        if target == "mimo-7b" and rng.random() < 0.5:
            cfg["trust_remote_code"] = True
        k = rng.choice([1, 1, 2, 2, 3])
        chosen: list[str] = []
        while len(chosen) < k:
            d = rng.choices(dims, dim_w)[0]
            if d == "spec" and target not in tiny:
                continue
            if d not in chosen:
                chosen.append(d)
        for d in chosen:
            if d == "spec":
                dim_spec(rng, cfg, facts[target], release, models)
            else:
                DIMENSIONS[d][1](rng, cfg, facts[target], release)
        yield f"space-{seed}-{i}-{'+'.join(chosen)}", cfg
