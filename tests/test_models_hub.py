"""wizard.models.hub without network: offline mode, connection errors, and a local HF-cache layout."""

from __future__ import annotations

import json

import pytest

from wizard.models.info import ModelLookupError
from wizard.models.resolve import resolve_model
from wizard.models import hub


def test_offline_env_without_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLookupError) as ei:
        hub.inspect_hub("someone/not-cached", cache_dir=str(tmp_path))
    msg = str(ei.value)
    assert "could not reach the Hugging Face Hub for 'someone/not-cached' (offline?)" in msg
    assert "python -m wizard models" in msg and "HF_HUB_OFFLINE=0" in msg


def test_resolve_falls_back_to_hub_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ModelLookupError, match="offline"):
        resolve_model("someone/unknown-model-xyz")


def test_connection_error_is_offline_message(monkeypatch):
    import httpx

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "hub_offline", lambda: False)

    def boom(*a, **k):
        raise httpx.ConnectError("Name or service not known")

    monkeypatch.setattr(hub, "_download", boom)
    with pytest.raises(ModelLookupError, match=r"could not reach the Hugging Face Hub for 'org/model' \(offline\?\)"):
        hub.inspect_hub("org/model")


def test_repo_not_found_message(monkeypatch):
    from huggingface_hub import errors

    monkeypatch.setattr(hub, "hub_offline", lambda: False)

    def nf(*a, **k):
        import httpx

        resp = httpx.Response(404, request=httpx.Request("GET", "https://huggingface.co/api/models/org/missing"))
        raise errors.RepositoryNotFoundError("404 Repository Not Found", response=resp)

    monkeypatch.setattr(hub, "_download", nf)
    with pytest.raises(ModelLookupError, match="was not found on the Hugging Face Hub"):
        hub.inspect_hub("org/missing")


def _hf_cache(root, repo, files):
    commit = "0123456789abcdef0123456789abcdef01234567"
    base = root / ("models--" + repo.replace("/", "--"))
    (base / "refs").mkdir(parents=True)
    (base / "refs" / "main").write_text(commit)
    snap = base / "snapshots" / commit
    snap.mkdir(parents=True)
    for name, content in files.items():
        (snap / name).write_text(content)
    return root


def test_happy_path_from_local_hf_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000}
    _hf_cache(tmp_path, "org/tiny", {"config.json": json.dumps(cfg)})
    info = hub.inspect_hub("org/tiny", cache_dir=str(tmp_path))
    assert info.source == "hub" and info.hidden_size == 256 and info.head_dim == 64 and info.num_key_value_heads == 2
    assert info.has_lm_head is None and any("HF_HUB_OFFLINE" in n for n in info.notes)


def test_hub_mistral_params_fallback_and_bad_json(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _hf_cache(tmp_path, "org/bad", {"config.json": "{not json"})
    info = hub.inspect_hub("org/bad", cache_dir=str(tmp_path))
    assert info.hidden_size is None and any("unreadable" in n for n in info.notes)


def test_safetensors_metadata_conversion(monkeypatch):
    """HfApi().get_safetensors_metadata result -> tensor facts (stubbed: no network here)."""
    from huggingface_hub.utils import SafetensorsFileMetadata, SafetensorsRepoMetadata, TensorInfo

    monkeypatch.setattr(hub, "hub_offline", lambda: False)
    monkeypatch.setattr(hub, "hub_reachable", lambda *a, **k: True)  # the stubbed Hub counts as reachable
    monkeypatch.setattr(hub, "_fetch_config", lambda *a: ({"model_type": "llama", "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1, "vocab_size": 16, "draft_vocab_size": 4}, False, []))
    tensors = {
        "lm_head.weight": TensorInfo(dtype="BF16", shape=[4, 8], data_offsets=(0, 64)),
        "d2t": TensorInfo(dtype="I64", shape=[4], data_offsets=(64, 96)),
    }
    meta = SafetensorsRepoMetadata(metadata=None, sharded=False, weight_map={k: "model.safetensors" for k in tensors},
                                   files_metadata={"model.safetensors": SafetensorsFileMetadata(metadata={}, tensors=tensors)})

    class FakeApi:
        def get_safetensors_metadata(self, repo_id, revision=None, timeout=None):
            return meta

    monkeypatch.setattr("huggingface_hub.HfApi", FakeApi)
    hub._safetensors_meta.cache_clear()
    info = hub.inspect_hub("org/drafter")
    assert info.has_lm_head and info.has_d2t and info.has_embed_tokens is False and info.has_t2d is False
    assert info.tensors["lm_head.weight"].shape == [4, 8] and info.weight_bytes == 96 and info.param_count == 36
    hub._safetensors_meta.cache_clear()


def test_unreachable_endpoint_fails_fast_and_quietly(tmp_path, monkeypatch, capfd):
    """HF_ENDPOINT on a closed loopback port: one probe, the 'offline?' message, no retry noise."""
    import socket
    import time

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setattr(hub, "hub_offline", lambda: False)
    hub._probe_cache.clear()
    t0 = time.monotonic()
    with pytest.raises(ModelLookupError, match=r"offline\?"):
        hub.inspect_hub("someone/never-cached", cache_dir=str(tmp_path))
    assert time.monotonic() - t0 < 3.0
    assert hub_endpoint_cached(port)
    # the second lookup reuses the probe answer
    t0 = time.monotonic()
    with pytest.raises(ModelLookupError):
        hub.inspect_hub("someone/other", cache_dir=str(tmp_path))
    assert time.monotonic() - t0 < 1.0
    out, err = capfd.readouterr()
    assert "Retrying" not in out + err
    hub._probe_cache.clear()


def hub_endpoint_cached(port: int) -> bool:
    return hub._probe_cache.get(f"http://127.0.0.1:{port}", (0, True))[1] is False
