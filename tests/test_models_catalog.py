"""Offline catalog (presets/models/*.yaml) and resolve order."""

from __future__ import annotations

import time

import pytest

from factory import make_model_dir
from wizard.models.info import ModelLookupError
from wizard.models.resolve import resolve_model
from wizard.models import catalog
from wizard.models.local import inspect_folder

REQUIRED_TARGETS = [
    "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.3-70B-Instruct",
    "meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-3B-Instruct", "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct", "Qwen/Qwen3-0.6B", "Qwen/Qwen3-8B", "Qwen/Qwen3-32B",
    "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-235B-A22B", "Qwen/Qwen3-Next-80B-A3B-Instruct", "deepseek-ai/DeepSeek-V3",
    "deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3.1", "deepseek-ai/DeepSeek-V3.2-Exp",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "zai-org/GLM-4.5",
    "zai-org/GLM-4.5-Air", "zai-org/GLM-4.6", "openai/gpt-oss-20b", "openai/gpt-oss-120b", "google/gemma-3-1b-it",
    "google/gemma-3-4b-it", "google/gemma-3-12b-it", "google/gemma-3-27b-it", "google/gemma-3n-E4B-it",
    "mistralai/Mistral-7B-Instruct-v0.3", "mistralai/Mistral-Small-24B-Instruct-2501", "mistralai/Devstral-Small-2507",
    "XiaomiMiMo/MiMo-7B-RL",
]
REQUIRED_DRAFTERS = [
    "yuhuili/EAGLE-LLaMA3-Instruct-8B", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "yuhuili/EAGLE3-LLaMA3.3-Instruct-70B",
    "RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3", "nvidia/gpt-oss-120b-Eagle3", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
    "AngelSlim/Qwen3-8B_eagle3", "Tengyunw/qwen3_8b_eagle3",
]


def test_catalog_loads_without_errors_and_counts():
    assert catalog.load_errors() == []
    targets = [e for e in catalog.entries() if e.role == "target"]
    drafters = [e for e in catalog.entries() if e.role == "drafter"]
    assert len(targets) >= 30 and len(drafters) >= 20
    assert len(catalog.entries("target")) == len(targets)
    # same-family small models are offered as drafters too
    assert "meta-llama/Llama-3.2-1B-Instruct" in {e.id for e in catalog.entries("drafter")}
    ids = {e.id for e in catalog.entries()}
    assert set(REQUIRED_TARGETS) <= ids and set(REQUIRED_DRAFTERS) <= ids


@pytest.mark.parametrize("entry", catalog.entries(), ids=lambda e: e.id)
def test_every_entry_resolves_offline_and_has_source(entry, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert entry.source and entry.title and entry.methods
    info = resolve_model(entry.id, allow_hub=False)
    assert info.source == "catalog" and info.id == entry.id and info.provenance and entry.source in info.provenance
    if entry.role == "drafter" and entry.methods[0] in ("medusa", "mlp_speculator"):
        # head drafters: MLPs over the target's hidden state, no attention and no KV cache (vLLM's
        # MedusaModelArchConfigConvertor: head size 0, 0 KV heads; MLPSpeculatorConfig: hidden_size
        # is emb_dim, no layers); what sizes them is the hidden size, the vocabulary and the heads
        assert info.architectures and info.hidden_size and info.vocab_size and info.n_predict
        assert info.param_count and info.param_count > 0
        return
    assert info.architectures and info.hidden_size and info.num_hidden_layers
    # a block drafter that shares the target's embedding and lm_head may publish no vocab_size
    # (z-lab/Qwen3.5-27B-DFlash's config has none); it must then say so, never get one invented
    shares_vocab = (entry.role == "drafter" and entry.raw.get("has_lm_head") is False
                    and entry.raw.get("has_embed_tokens") is False and "vocab_size" not in entry.raw["config"]
                    and "no vocab_size" in (entry.approximate or ""))
    assert info.vocab_size or shares_vocab
    assert info.num_attention_heads and info.num_key_value_heads and info.head_dim
    assert info.param_count and info.param_count > 0 and info.weight_bytes and info.weight_bytes > 0
    if entry.role == "drafter":
        assert entry.verifier and catalog.get_entry(entry.verifier) is not None, entry.verifier
        assert info in [catalog.lookup(d.id) for d in catalog.drafters_for(entry.verifier)]


@pytest.mark.parametrize("entry", catalog.entries(), ids=lambda e: e.id)
def test_catalog_resolves_like_a_local_folder(entry, tmp_path):
    """The entry's config written as config.json gives the same config facts as the catalog."""
    folder = make_model_dir(tmp_path / "m", entry.raw["config"])
    local = inspect_folder(folder).model_dump(exclude={"id", "source", "path", "json_files", "tensors", "provenance", "param_count", "weight_bytes",
                                                        "has_lm_head", "has_embed_tokens", "has_d2t", "has_t2d", "has_mtp_weights"})
    cat = catalog.lookup(entry.id).model_dump(exclude={"id", "source", "path", "json_files", "tensors", "provenance", "param_count", "weight_bytes",
                                                       "has_lm_head", "has_embed_tokens", "has_d2t", "has_t2d", "has_mtp_weights"})
    assert local == cat


def test_key_facts():
    l8 = catalog.lookup("meta-llama/Llama-3.1-8B-Instruct")
    assert (l8.vocab_size, l8.hidden_size, l8.num_hidden_layers, l8.num_key_value_heads, l8.head_dim) == (128256, 4096, 32, 8, 128)
    e3 = catalog.lookup("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    assert e3.draft_vocab_size == 32000 and e3.has_lm_head is True and e3.tensors["lm_head.weight"].shape == [32000, 4096]
    assert e3.has_d2t and e3.has_t2d and e3.tensors["d2t"].shape == [32000] and e3.has_embed_tokens is False
    e70 = catalog.lookup("yuhuili/EAGLE3-LLaMA3.3-Instruct-70B")
    assert e70.has_embed_tokens is True and e70.tensors["embed_tokens.weight"].shape == [128256, 8192]
    ds = catalog.lookup("deepseek-ai/DeepSeek-V3")
    assert ds.mtp_layers == 1 and ds.use_mla and ds.kv_lora_rank == 512 and ds.qk_rope_head_dim == 64 and ds.num_hidden_layers == 61
    assert ds.has_mtp_weights is True
    nv = catalog.lookup("nvidia/gpt-oss-120b-Eagle3")
    assert nv.has_lm_head is False and nv.has_embed_tokens is False and nv.eagle_aux_hidden_state_layer_ids == [1, 17, 33]
    rh = catalog.lookup("RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3")
    assert rh.speculators_config["algorithm"] == "eagle3" and rh.n_predict == 3 and rh.hidden_size == 4096
    g3n = catalog.lookup("google/gemma-3n-E4B-it")
    assert g3n.num_kv_shared_layers == 15 and g3n.is_multimodal
    qn = catalog.lookup("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert qn.num_mamba_layers == 36 and qn.head_dim == 256
    assert catalog.lookup("meta-llama/Llama-3.2-1B-Instruct").has_lm_head is False  # tied embeddings
    assert catalog.lookup("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B").vocab_size != catalog.lookup("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B").vocab_size


def test_case_insensitive_and_aliases():
    a = catalog.lookup("META-LLAMA/llama-3.1-8b-instruct")
    assert a is not None and a.id == "meta-llama/Llama-3.1-8B-Instruct"
    assert catalog.lookup("meta-llama/Meta-Llama-3.1-8B-Instruct").id == "meta-llama/Llama-3.1-8B-Instruct"
    assert catalog.lookup("  qwen/qwen3-8b/ ").id == "Qwen/Qwen3-8B"
    assert catalog.lookup("not/in-catalog") is None and catalog.lookup("") is None


def test_drafters_for():
    ids = {e.id for e in catalog.drafters_for("meta-llama/Llama-3.1-8B-Instruct")}
    assert {"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3", "meta-llama/Llama-3.2-1B-Instruct"} <= ids
    assert "nvidia/gpt-oss-120b-Eagle3" in {e.id for e in catalog.drafters_for("OPENAI/GPT-OSS-120B")}
    assert "Qwen/Qwen3-0.6B" in {e.id for e in catalog.drafters_for("Qwen/Qwen3-8B")}
    acc = catalog.get_entry("RedHatAI/gpt-oss-20b-speculator.eagle3").acceptance
    assert acc["mean_acceptance_length"] == 2.49 and acc["source"].startswith("https://github.com/vllm-project/vllm/pull/")


def test_lookup_is_cached_and_fast():
    catalog.lookup("Qwen/Qwen3-8B")
    t = time.perf_counter()
    for _ in range(1000):
        catalog.lookup("qwen/QWEN3-8B")
    per = (time.perf_counter() - t) / 1000
    assert per < 1e-3  # generous bound for a loaded CI box; benchmarks measure the real figure
    assert catalog.lookup("Qwen/Qwen3-8B") is catalog.lookup("qwen/qwen3-8b")


def test_resolve_order(tmp_path, monkeypatch):
    # an existing local folder wins over a catalog id of the same spelling
    monkeypatch.chdir(tmp_path)
    make_model_dir(tmp_path / "Qwen" / "Qwen3-8B", {"model_type": "qwen3", "hidden_size": 64})
    info = resolve_model("Qwen/Qwen3-8B", allow_hub=False)
    assert info.source == "local" and info.hidden_size == 64
    monkeypatch.chdir(tmp_path / "Qwen")
    assert resolve_model("Qwen/Qwen3-8B", allow_hub=False).source == "catalog"
    with pytest.raises(ModelLookupError, match="not a local folder nor a catalog id"):
        resolve_model("someone/unknown-model", allow_hub=False)
    with pytest.raises(ModelLookupError, match="does not exist"):
        resolve_model("./no/such/dir", allow_hub=False)
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(ModelLookupError, match="is a file"):
        resolve_model(str(tmp_path / "file.txt"))
    with pytest.raises(ModelLookupError, match="empty"):
        resolve_model("  ")
