"""An abbreviated --speculative-config (argparse allow_abbrev: ``--speculative-conf``) and a misspelt
one are read and fixed like the full spelling: the speculative rules judge it, and no fix removes
the speculation the user wrote (trial report 2026-12-04, item 2)."""

from __future__ import annotations

import json

from wizard.cli import main

M, E = "meta-llama/Llama-3.1-8B-Instruct", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def _check(capsys, *argv):
    rc = main(["check", "--offline", "--format", "json", "--", "vllm", "serve", M, *argv])
    return rc, json.loads(capsys.readouterr().out)


def test_abbreviation_is_judged_like_the_full_spelling(capsys):
    spec = json.dumps({"method": "eagle3", "model": E, "num_speculative_tokens": "three"})
    rc, data = _check(capsys, "--speculative-conf", spec)
    rules = {f["rule"]: f for f in data["findings"]}
    assert rc == 1 and rules["SD022"]["severity"] == "error"  # 'three' is not an integer, as spelled out
    assert rules["SD013"]["severity"] == "warning"
    # every fix keeps the speculative config, in the full spelling
    for f in data["findings"]:
        for fix in f["fixes"]:
            if "extra_args.speculative_conf" in fix.get("unset", []):
                assert fix["set"].get("speculative_config", {}).get("method") == "eagle3", fix
    rename = rules["SD013"]["fixes"][0]
    assert rename["description"] == "Rename to --speculative-config"


def test_fix_keeps_the_speculation_of_an_abbreviation_and_a_typo(capsys, tmp_path):
    spec = json.dumps({"method": "eagle3", "model": E, "num_speculative_tokens": "three"})
    assert main(["fix", "--offline", "--", "vllm", "serve", M, "--speculative-conf", spec]) in (0, 1)
    out = capsys.readouterr().out
    assert "--speculative-config '{\"method\":\"eagle3\"" in out and "speculative-conf " not in out
    y = tmp_path / "typo.yaml"
    y.write_text(f"model: {M}\nspeculativ_config: {{method: ngram, num_speculative_tokens: 3}}\nmax_modl_len: 4096\n")
    main(["fix", "--offline", "--config", str(y), "--to", "yaml"])
    out = capsys.readouterr().out
    assert "speculative-config:" in out and "method: ngram" in out and "max-model-len: 4096" in out
    assert "# applied: Rename to --speculative-config" in out


def test_dotted_abbreviation_is_read_and_each_fix_keeps_the_rest(capsys):
    from wizard import api
    from wizard.config import apply_patch

    cfg = api.load(command=["vllm", "serve", M, "--port", "8001", "--max-model", "4096", "--speculative-conf.method",
                            "ngram", "--speculative-conf.num_speculative_tokens", "3"])
    report = api.check(cfg)
    assert not [f for f in report.findings if f.severity.value == "error"], report.findings
    assert any(f.rule == "SD091" for f in report.findings)  # judged as n-gram, as vLLM reads it
    for f in report.findings:
        for fix in f.fixes if f.rule == "SD013" else ():
            out = apply_patch(cfg, fix)
            assert out.extra_args.get("port") == "8001"
            assert out.max_model_len == 4096 or out.extra_args.get("max_model") == "4096"
            assert out.speculative_config is not None or any(k.startswith("speculative_conf.") for k in out.extra_args)
