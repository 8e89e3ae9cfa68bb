"""Build local model folders for tests: real config.json, real safetensors files, a real tokenizer.

* :func:`make_tiny_llama` — a loadable random Llama (default hidden 128, 4 heads, 2 KV heads,
  4 layers, vocab 512) with a 512-token BPE tokenizer made with `tokenizers`. vLLM's CPU build
  serves it with ``--enforce-eager`` in ~40 s. CPU attention rejects head_dim 16.
* :func:`make_model_dir` — any config.json plus safetensors tensors with the given names and
  shapes (e.g. an EAGLE3 drafter with or without its own ``lm_head``/``embed_tokens``/``d2t``),
  for rules that read model facts. Tensors are tiny unless you ask otherwise.
* :func:`fixture_config` — a real config.json copied from the shared fixtures
  (``tests/data/hf/<org>--<name>/config.json``).

Everything is written under a directory the caller owns (pytest's ``tmp_path``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

DATA = Path(__file__).parent / "data"
HF = DATA / "hf"

_TOKENIZER_CACHE: dict[int, str] = {}


def fixture_config(name: str, file: str = "config.json") -> dict[str, Any]:
    """Load ``tests/data/hf/<name>/<file>`` (e.g. 'meta-llama--Llama-3.1-8B-Instruct')."""
    return json.loads((HF / name / file).read_text(encoding="utf-8"))


def _corpus() -> list[str]:
    words = (
        "the quick brown fox jumps over the lazy dog speculative decoding drafts tokens and the "
        "target model verifies them in one step so acceptance matters a lot for speed hello world "
        "vllm serves large language models with paged attention and a kv cache of blocks"
    ).split()
    lines = []
    for i in range(400):
        lines.append(" ".join(words[(i * 7 + j) % len(words)] for j in range(12)))
    lines.append("0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ .,;:!?'\"()[]{}")
    return lines


def write_tokenizer(folder: Path, vocab_size: int = 512) -> None:
    """Train a byte-level BPE tokenizer of ``vocab_size`` tokens and save it HF-style."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if vocab_size not in _TOKENIZER_CACHE:
        tok = Tokenizer(models.BPE(unk_token=None))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=["<s>", "</s>", "<unk>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tok.train_from_iterator(_corpus(), trainer=trainer)
        _TOKENIZER_CACHE[vocab_size] = tok.to_str()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text(_TOKENIZER_CACHE[vocab_size], encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<s>",
                "eos_token": "</s>",
                "unk_token": "<unk>",
                "model_max_length": 4096,
                "chat_template": "{% for m in messages %}{{ m['content'] }}\n{% endfor %}",
            }
        ),
        encoding="utf-8",
    )
    (folder / "special_tokens_map.json").write_text(
        json.dumps({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}), encoding="utf-8"
    )


def _save_tensors(path: Path, tensors: Mapping[str, np.ndarray], dtype: str) -> None:
    if dtype == "bfloat16":
        import torch
        from safetensors.torch import save_file as save_torch

        save_torch({k: torch.from_numpy(np.ascontiguousarray(v)).to(torch.bfloat16) for k, v in tensors.items()}, str(path))
    else:
        from safetensors.numpy import save_file

        np_dtype = {"float32": np.float32, "float16": np.float16}[dtype]
        save_file({k: np.ascontiguousarray(v, dtype=np_dtype) for k, v in tensors.items()}, str(path))


def llama_tensor_shapes(cfg: Mapping[str, Any], *, lm_head: bool = True, embed: bool = True, prefix: str = "model.") -> dict[str, tuple[int, ...]]:
    """Names and shapes of a LlamaForCausalLM checkpoint for ``cfg``."""
    h = cfg["hidden_size"]
    nh = cfg["num_attention_heads"]
    kvh = cfg.get("num_key_value_heads", nh)
    hd = cfg.get("head_dim") or h // nh
    inter = cfg["intermediate_size"]
    v = cfg["vocab_size"]
    shapes: dict[str, tuple[int, ...]] = {}
    if embed:
        shapes[f"{prefix}embed_tokens.weight"] = (v, h)
    for i in range(cfg["num_hidden_layers"]):
        p = f"{prefix}layers.{i}."
        shapes[p + "self_attn.q_proj.weight"] = (nh * hd, h)
        shapes[p + "self_attn.k_proj.weight"] = (kvh * hd, h)
        shapes[p + "self_attn.v_proj.weight"] = (kvh * hd, h)
        shapes[p + "self_attn.o_proj.weight"] = (h, nh * hd)
        shapes[p + "mlp.gate_proj.weight"] = (inter, h)
        shapes[p + "mlp.up_proj.weight"] = (inter, h)
        shapes[p + "mlp.down_proj.weight"] = (h, inter)
        shapes[p + "input_layernorm.weight"] = (h,)
        shapes[p + "post_attention_layernorm.weight"] = (h,)
    shapes[f"{prefix}norm.weight"] = (h,)
    if lm_head:
        shapes["lm_head.weight"] = (v, h)
    return shapes


def make_tiny_llama(
    folder: Path,
    *,
    hidden_size: int = 128,
    num_attention_heads: int = 4,
    num_key_value_heads: int = 2,
    num_hidden_layers: int = 4,
    head_dim: int | None = None,
    intermediate_size: int = 256,
    vocab_size: int = 512,
    max_position_embeddings: int = 2048,
    dtype: str = "float32",
    seed: int = 0,
    extra_config: Mapping[str, Any] | None = None,
    tokenizer: bool = True,
) -> Path:
    """Write a loadable random LlamaForCausalLM to ``folder`` and return it.

    ``head_dim`` defaults to hidden_size // heads (32 here; CPU attention rejects 16).
    ``dtype``: 'float32' (numpy only) or 'bfloat16' (needs torch).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cfg: dict[str, Any] = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": hidden_size,
        "intermediate_size": intermediate_size,
        "num_attention_heads": num_attention_heads,
        "num_key_value_heads": num_key_value_heads,
        "num_hidden_layers": num_hidden_layers,
        "head_dim": head_dim or hidden_size // num_attention_heads,
        "vocab_size": vocab_size,
        "max_position_embeddings": max_position_embeddings,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "bos_token_id": 0,
        "eos_token_id": 1,
        "torch_dtype": dtype,
    }
    if extra_config:
        cfg.update(extra_config)
    (folder / "config.json").write_text(json.dumps(cfg, indent=2), encoding="utf-8")
    (folder / "generation_config.json").write_text(json.dumps({"bos_token_id": 0, "eos_token_id": 1}), encoding="utf-8")
    rng = np.random.default_rng(seed)
    tensors = {}
    for name, shape in llama_tensor_shapes(cfg).items():
        if name.endswith("layernorm.weight") or name.endswith("norm.weight"):
            tensors[name] = np.ones(shape, dtype=np.float32)
        else:
            tensors[name] = (rng.standard_normal(shape) * 0.02).astype(np.float32)
    _save_tensors(folder / "model.safetensors", tensors, dtype)
    if tokenizer:
        write_tokenizer(folder, vocab_size)
    return folder


def make_model_dir(
    folder: Path,
    config: Mapping[str, Any],
    tensors: Mapping[str, Iterable[int]] | None = None,
    *,
    dtype: str = "float16",
    shards: int = 1,
    index: bool | None = None,
) -> Path:
    """Write ``config.json`` and safetensors files holding ``tensors`` (name -> shape, zeros).

    With ``shards > 1`` (or ``index=True``) the tensors are split over
    ``model-0000i-of-0000n.safetensors`` files with a ``model.safetensors.index.json``.
    Shapes are real, so keep them small in tests.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(dict(config), indent=2), encoding="utf-8")
    if not tensors:
        return folder
    arrays = {k: np.zeros(tuple(v), dtype=np.float32) for k, v in tensors.items()}
    names = list(arrays)
    if shards <= 1 and not index:
        _save_tensors(folder / "model.safetensors", arrays, dtype)
        return folder
    n = max(shards, 1)
    weight_map: dict[str, str] = {}
    total = 0
    for s in range(n):
        part = {k: arrays[k] for k in names[s::n]}
        fname = f"model-{s + 1:05d}-of-{n:05d}.safetensors"
        if part:
            _save_tensors(folder / fname, part, dtype)
        for k, a in part.items():
            weight_map[k] = fname
            total += a.size * (2 if dtype in ("float16", "bfloat16") else 4)
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2), encoding="utf-8"
    )
    return folder
