"""Defects of the clean-clone trial (/tmp/trial_report.md, items 1, 5, 7-12): the UI on a busy port,
`plan` on a model it could not read, PWD scrubbed as a secret, SD500 on the CPU, --context-tokens,
argument slips, `serve --dry-run`'s exit code and the console script's usage line.
(Item 6, the Python export, is in tests/test_export.py.)"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from hostile import check_error_line, run_cli
from wizard import api
from wizard.config import apply_patch

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
QWEN = "Qwen/Qwen3-0.6B"
NGRAM = '{"method":"ngram","num_speculative_tokens":3}'
EAGLE3 = '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'


# ---- 1: the UI on a port that is taken --------------------------------------------------------

@pytest.fixture()
def busy_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    yield s.getsockname()[1]
    s.close()


def test_ui_on_a_busy_port_is_one_line_naming_the_port(busy_port, monkeypatch, capsys):
    from wizard.ui import main as ui_main

    built = []
    monkeypatch.setattr(ui_main, "build_app", lambda **kw: built.append(kw))
    monkeypatch.delenv("SPECWIZARD_AUTH", raising=False)
    assert ui_main.main(["--port", str(busy_port)], prog="python -m wizard ui") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"python -m wizard ui: port {busy_port} on 127.0.0.1 is already in use; pass --port N")
    assert len(err.splitlines()) == 1 and "GRADIO" not in err and "launch()" not in err
    assert built == []  # refused before Gradio builds anything


def test_ui_bind_failure_inside_gradio_is_one_line(monkeypatch, capsys):
    from wizard.ui import main as ui_main

    class Demo:
        def launch(self, **kw):
            raise OSError("Cannot find empty port in range: 7860-7860. You can specify ... launch()")

    monkeypatch.setattr(ui_main, "build_app", lambda **kw: Demo())
    monkeypatch.setattr(ui_main, "_port_in_use", lambda host, port: None)  # taken after the test
    monkeypatch.delenv("SPECWIZARD_AUTH", raising=False)
    assert ui_main.main(["--port", "7860"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("app.py: cannot serve on 127.0.0.1:7860 (Cannot find empty port") and "--port N" in err
    assert len(err.splitlines()) == 1


def test_app_py_on_a_busy_port_exits_2_without_traceback(busy_port):
    root = Path(__file__).resolve().parent.parent
    p = subprocess.run([sys.executable, str(root / "app.py"), "--port", str(busy_port)], capture_output=True,
                       text=True, timeout=300, cwd=root)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith(f"app.py: port {busy_port} on 127.0.0.1 is already in use; pass --port N")


# ---- 5: no "fits" for a model that could not be read ---------------------------------------------

def test_plan_of_a_corrupt_model_has_no_fit_verdict_and_no_speedups(tmp_path):
    (tmp_path / "config.json").write_text('{"architectures": ["LlamaForCausalLM"], "hidden_size": \n')
    cmd = ["--gpu", "H100", "--", "vllm", "serve", str(tmp_path), "--speculative-config", NGRAM]
    rc, out, err = run_cli(["plan", *cmd])
    assert rc == 2
    assert "  verdict                unknown (plan incomplete): the target model could not be read: config.json is not " \
           "valid JSON (line 2, column 1" in out
    assert "fits\n" not in out and "    k   tokens/step" not in out and "k schedule" not in out
    assert "Speed-up: not estimated (the plan is incomplete: " in out
    check_error_line(err)
    assert err.startswith("wizard: model: plan incomplete, no fit verdict: the target model could not be read")
    rc, out, _ = run_cli(["plan", "--format", "json", *cmd])
    d = json.loads(out)
    assert rc == 2 and d["fits"] is None and d["fit_problem"].startswith("the target model could not be read: config.json")
    assert d["speedup"]["table"] == [] and d["speedup"]["batches"] == [] and d["speedup"]["best_k"] is None


def test_plan_of_an_unknown_id_offline_has_no_fit_verdict():
    rc, out, err = run_cli(["plan", "--offline", "--gpu", "H100", "--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instrcut"])
    assert rc == 2 and "  verdict                unknown (plan incomplete): the target model could not be read (" in out
    assert "'meta-llama/Llama-3.1-8B-Instrcut'" in err
    # a readable model still gets its verdict, and check's rules see no change (SD500 quiet)
    rc, out, _ = run_cli(["plan", "--gpu", "H100", "--", "vllm", "serve", LLAMA, "--speculative-config", NGRAM])
    assert rc == 0 and "  verdict                fits\n" in out


# ---- 7: PWD is not a secret --------------------------------------------------------------------

def test_pwd_is_not_scrubbed_but_credentials_are():
    from wizard.privacy import is_secret_env, secret_values

    assert not is_secret_env("PWD") and not is_secret_env("OLDPWD")
    assert is_secret_env("MYSQL_PWD") and is_secret_env("HF_TOKEN") and is_secret_env("DB_PASSWORD")
    env = {"PWD": "/tmp/trial", "OLDPWD": "/home/me", "HF_TOKEN": "hf_abcdefgh", "MYSQL_PWD": "hunter22"}
    assert secret_values(environ=env) == ["hf_abcdefgh", "hunter22"]


def test_dry_run_argv_keeps_the_current_folder(monkeypatch, tmp_path):
    from wizard.hardware import nvml

    monkeypatch.setattr(nvml, "discover", lambda: [])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PWD", str(tmp_path))
    model = tmp_path / "m"
    model.mkdir()
    rc, out, _ = run_cli(["serve", "--dry-run", "--", "vllm", "serve", str(model), "--speculative-config", NGRAM])
    argv = json.loads(out.split("# argv\n")[1].splitlines()[0])
    assert str(model) in argv and "***" not in out


# ---- 8: SD500 on the CPU build -------------------------------------------------------------------

def test_sd500_on_the_cpu_names_vllm_cpu_kvcache_space_and_raises_it(monkeypatch):
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "4")
    cfg = api.load(command=f"vllm serve {QWEN} --speculative-config '{NGRAM}'")
    [f] = [f for f in api.check(cfg, gpu="cpu", allow_hub=False).findings if f.rule == "SD500"]
    assert f.title == "Does not fit in memory" and "GPU" not in f.message and "drafter" not in f.message
    assert f.message.startswith("Does not fit on the CPU with tensor_parallel_size 1: one request at max_model_len 40960 "
                                "needs 4.39 GiB of KV cache, 4.00 GiB available (VLLM_CPU_KVCACHE_SPACE = 4 GiB")
    assert "one request needs VLLM_CPU_KVCACHE_SPACE=5 (wizard serve / plan --kv-cache-space-gib 5)" in f.message
    assert "env.VLLM_CPU_KVCACHE_SPACE" in f.fields and "gpu_memory_utilization" not in f.fields
    [raise_it] = [p for p in f.fixes if "env.VLLM_CPU_KVCACHE_SPACE" in p.set]
    assert raise_it.set == {"env.VLLM_CPU_KVCACHE_SPACE": "5"}
    fixed = apply_patch(cfg, raise_it)
    assert fixed.env == {"VLLM_CPU_KVCACHE_SPACE": "5"}
    assert not [g for g in api.check(fixed, gpu="cpu", allow_hub=False).findings if g.rule == "SD500"]


def test_sd500_title_names_the_drafter_only_when_there_is_one():
    ngram = api.check(api.load(command=f"vllm serve {LLAMA} --speculative-config '{NGRAM}'"), gpu="L4", allow_hub=False)
    eagle = api.check(api.load(command=f"vllm serve {LLAMA} --speculative-config '{EAGLE3}'"), gpu="L4", allow_hub=False)
    assert [f.title for f in ngram.findings if f.rule == "SD500"] == ["Does not fit in memory"]
    assert [f.title for f in eagle.findings if f.rule == "SD500"] == ["Target + drafter do not fit in memory"]


# ---- 9: --context-tokens -------------------------------------------------------------------------

def test_context_tokens_takes_long_contexts():
    rc, out, _ = run_cli(["plan", "--gpu", "H100", "--context-tokens", "16384", "--", "vllm", "serve", LLAMA,
                          "--speculative-config", EAGLE3])
    assert rc == 0 and "context 16,384 tokens per sequence" in out
    rc, out, _ = run_cli(["plan", "--gpu", "H100", "--context-tokens", "200000", "--", "vllm", "serve", LLAMA,
                          "--max-model-len", "4096", "--speculative-config", NGRAM])
    assert "note: context 200,000 tokens per sequence is longer than max_model_len 4,096" in out
    for bad in ("0", "10000001", "-5", "1e6"):
        rc, _, err = run_cli(["plan", "--context-tokens", bad, "--", "vllm", "serve", LLAMA])
        assert rc == 2 and f"argument --context-tokens: '{bad}' must be a whole number of tokens from 1 to 10000000" in err
    rc, out, _ = run_cli(["plan", "--help"])
    assert "1 to 10,000,000" in " ".join(out.split())


def test_planner_refuses_context_and_baseline_batch_out_of_range():
    from wizard.plan.inputs import PlanInputError
    from wizard.plan.planner import plan

    cfg = api.load(command=f"vllm serve {LLAMA}")
    with pytest.raises(PlanInputError, match="context_tokens: 0 is not a context length"):
        plan(cfg, hardware="H100", context_tokens=0)
    with pytest.raises(PlanInputError, match="baseline_batch: '0' is not a concurrency"):
        plan(cfg, hardware="H100", baseline_step_s=0.01, baseline_batch=0)


# ---- 10: argument slips ------------------------------------------------------------------------

def test_reversed_k_range_and_zero_baseline_batch(tmp_path):
    rc, _, err = run_cli(["tune", "--sweep-grid", str(tmp_path / "g"), "--k", "5-1", "--", "vllm", "serve", LLAMA,
                          "--speculative-config", NGRAM])
    assert rc == 2 and "argument --k: '5-1': the range is reversed; write it low to high, e.g. 1-5" in err
    rc, _, err = run_cli(["plan", "--gpu", "H100", "--baseline-tpot-ms", "10", "--baseline-batch", "0", "--",
                          "vllm", "serve", LLAMA])
    assert rc == 2 and "argument --baseline-batch: '0' must be a whole number from 1 to 10000 (at least one request)" in err


def test_sd009_offline_suggests_close_catalog_ids():
    r = api.check(api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instrcut --speculative-config "
                                   "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8\"}'"),
                  allow_hub=False)
    by = {f.fields[0]: f for f in r.findings if f.rule == "SD009"}
    assert "Did you mean meta-llama/Llama-3.1-8B-Instruct (or " in by["model"].message
    assert by["model"].fixes[0].set == {"model": LLAMA}
    assert "Did you mean yuhuili/EAGLE3-LLaMA3.1-Instruct-8B (or " in by["speculative_config.model"].message
    r = api.check(api.load(command="vllm serve no-such-org/no-such-model-xyz"), allow_hub=False)
    [f] = [f for f in r.findings if f.rule == "SD009"]
    assert "Did you mean" not in f.message and f.fixes == []


# ---- 11: serve --dry-run as a pre-flight ---------------------------------------------------------

def test_dry_run_exits_1_when_the_launch_would_be_refused(monkeypatch):
    from wizard.hardware import nvml

    monkeypatch.setattr(nvml, "discover", lambda: [])
    # --gpu H100: the exit code under test, not this machine's CPU (serve checks the machine when no --gpu is given)
    rc, out, _ = run_cli(["serve", "--dry-run", "--gpu", "H100", "--", "vllm", "serve", LLAMA, "--speculative-config",
                          '{"method":"eagle3",'])
    assert rc == 1 and "# check: 1 error(s) (SD002): `wizard serve` refuses this launch unless --force" in out
    rc, out, _ = run_cli(["serve", "--dry-run", "--force", "--gpu", "H100", "--", "vllm", "serve", LLAMA,
                          "--speculative-config", '{"method":"eagle3",'])
    assert rc == 0 and "launches it anyway (--force)" in out
    rc, _, _ = run_cli(["serve", "--dry-run", "--gpu", "H100", "--", "vllm", "serve", LLAMA, "--max-model-len", "2048",
                        "--speculative-config", NGRAM])
    assert rc == 0
    rc, out, _ = run_cli(["serve", "--dry-run", "--gpu", "H100", "--", "vllm", "serve", LLAMA, "--max-model-len", "2048",
                          "--trust-remote-code", "--speculative-config", NGRAM])
    assert rc == 1 and "# needs --allow-unsafe-options: " in out  # the launch policy refuses it too


# ---- 12: the console script's usage line ---------------------------------------------------------

def test_usage_names_the_program_as_started():
    from wizard.cli import prog_name

    assert prog_name("/venv/bin/specwizard") == "specwizard"
    assert prog_name("/src/wizard/__main__.py") == "python -m wizard"
    rc, out, _ = run_cli(["--help"])
    assert rc == 0 and out.startswith("usage: python -m wizard ")
    script = Path(sys.executable).with_name("specwizard")
    if script.exists():  # an editable or wheel install made the console script
        p = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0 and p.stdout.startswith("usage: specwizard ")
    p = subprocess.run([sys.executable, "-m", "wizard", "--help"], capture_output=True, text=True, timeout=120)
    assert p.stdout.startswith("usage: python -m wizard ")


def test_sd740_fix_keeps_the_users_other_compilation_fields():
    """CLI trial round 2, defect 2: SD740's fix replaced the whole --compilation-config with the new
    sizes, dropping the user's mode and pass_config."""
    import json as _json

    from wizard import api
    from wizard.config import apply_patch

    cfg = api.load(command=(
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 16 --speculative-config "
        "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":5}' "
        "--compilation-config '{\"cudagraph_mode\":\"PIECEWISE\",\"cudagraph_capture_sizes\":[1,2,4,8],\"mode\":3,"
        "\"pass_config\":{\"fuse_norm_quant\":true}}'"))
    rep = api.check(cfg, vllm_version="0.33.0", gpu="H100", allow_hub=False)
    f = next(f for f in rep.findings if f.rule == "SD740")
    fixed = apply_patch(cfg, f.fixes[0])
    comp = _json.loads(fixed.extra_args["compilation_config"])
    assert comp["mode"] == 3 and comp["pass_config"] == {"fuse_norm_quant": True}
    assert comp["cudagraph_mode"] == "PIECEWISE" and max(comp["cudagraph_capture_sizes"]) >= 16 * 6
    assert "SD740" not in {x.rule for x in api.check(fixed, vllm_version="0.33.0", gpu="H100", allow_hub=False).findings}
