"""Prefill/decode pairs (wizard/pairs, wizard/io/pd.py, `wizard pair`): every pair rule's docstring
Example pair fails and its Use instead pair passes, its cases in tests/pairs/SD79N.yml hold, its
fixes make the pair pass; a mismatched speculative config is an error naming both sides; a matching
pair exports as two commands and as four Kubernetes objects that validate and re-import."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from wizard import api
from wizard.cli import main
from wizard.io.pd import pd_export
from wizard.pairs import SIDES, apply_pair_fix, check_pair, pair_rules
from wizard.rules.registry import SECTIONS

CASES = Path(__file__).parent / "pairs"
K8S_VERSION = "1.30"
NIXL = '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'
E3 = '{"method":"eagle3","model":"AngelSlim/Qwen3-8B_eagle3","num_speculative_tokens":3}'
PREFILL = f"vllm serve Qwen/Qwen3-8B --port 8100 --kv-transfer-config '{NIXL}' --speculative-config '{E3}'"
DECODE = f"vllm serve Qwen/Qwen3-8B --port 8200 --kv-transfer-config '{NIXL}' --speculative-config '{E3}'"


def _blocks(section: str) -> list[str]:
    return [" ".join(b.replace("\\\n", " ").split()) for b in re.findall(r"```sh\n(.*?)```", section, flags=re.S)]


def _check(rule_id, prefill, decode, ctx):
    rep = check_pair(api.load(command=prefill), api.load(command=decode), vllm_version=ctx.get("vllm"),
                     gpu=ctx.get("gpu"), allow_hub=False)
    return rep, [f for f in rep.findings if f.rule == rule_id]


def _case_file(rule_id):
    return yaml.safe_load((CASES / f"{rule_id}.yml").read_text())


RULES = [r.id for r in pair_rules()]


def test_pair_rules_have_docs_and_case_files():
    assert RULES == ["SD790", "SD791", "SD792"]
    for r in pair_rules():
        secs = type(r).doc_sections()
        assert all(s in secs for s in SECTIONS)
        assert len(_blocks(secs["Example"])) == 2 and len(_blocks(secs["Use instead"])) == 2, r.id
        assert _case_file(r.id)["rule"] == r.id


@pytest.mark.parametrize("rule_id", RULES)
def test_docstring_example_fails_and_use_instead_passes(rule_id):
    rule = next(r for r in pair_rules() if r.id == rule_id)
    secs = type(rule).doc_sections()
    ctx = _case_file(rule_id).get("context", {})
    _, got = _check(rule_id, *_blocks(secs["Example"]), ctx)
    assert got, f"{rule_id}: Example is quiet"
    _, got = _check(rule_id, *_blocks(secs["Use instead"]), ctx)
    assert not got, [f.message for f in got]


CASE_ROWS = [(rid, i, c) for rid in RULES for i, c in enumerate(_case_file(rid).get("cases", []))]


@pytest.mark.parametrize("rule_id,index,case", CASE_ROWS, ids=[f"{r}-{c.get('name', i)}" for r, i, c in CASE_ROWS])
def test_case(rule_id, index, case):
    ctx = {**_case_file(rule_id).get("context", {}), **{k: case[k] for k in ("vllm", "gpu") if k in case}}
    rep, got = _check(rule_id, case["prefill"], case["decode"], ctx)
    if case.get("pass"):
        assert not got, [f.message for f in got]
        return
    assert got, f"{rule_id} quiet on {case.get('name')}"
    if "message" in case:
        assert any(case["message"] in f.message for f in got), [f.message for f in got]
    if "severity" in case:
        assert any(f.severity.value == case["severity"] for f in got)


def test_mismatch_names_both_sides_and_the_fix_makes_the_pair_pass():
    decode = DECODE.replace("AngelSlim/Qwen3-8B_eagle3", "Tengyunw/qwen3_8b_eagle3")
    p, d = api.load(command=PREFILL), api.load(command=decode)
    rep = check_pair(p, d, vllm_version="0.32", gpu="H100", allow_hub=False)
    assert rep.verdict == "error"
    (f,) = [f for f in rep.findings if f.rule == "SD790"]
    assert "prefill" in f.message and "decode" in f.message
    assert "AngelSlim/Qwen3-8B_eagle3" in f.message and "Tengyunw/qwen3_8b_eagle3" in f.message
    assert f.fields == {"prefill": ["speculative_config"], "decode": ["speculative_config"]}
    assert [x.side for x in f.fixes] == ["decode", "prefill"]
    p2, d2 = apply_pair_fix(p, d, f.fixes[0])
    assert d2.speculative_config == p.speculative_config
    rep2 = check_pair(p2, d2, vllm_version="0.32", gpu="H100", allow_hub=False)
    assert not [x for x in rep2.findings if x.rule == "SD790"]


def test_each_sides_own_findings_are_reported_under_its_side():
    decode = DECODE.replace('"num_speculative_tokens":3', '"num_speculative_tokens":0')
    rep = check_pair(api.load(command=PREFILL), api.load(command=decode), vllm_version="0.32", gpu="H100",
                     allow_hub=False)
    mine = [f for f in rep.findings if f.message.startswith("decode: ")]
    assert mine and all(set(f.fields) == {"decode"} for f in mine)


def test_matching_pair_exports_two_commands_that_reimport():
    p, d = api.load(command=PREFILL), api.load(command=DECODE)
    text = pd_export(p, d, "commands")
    cmds = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert len(cmds) == 2
    for side, line, cfg in zip(SIDES, cmds, (p, d)):
        words = shlex.split(line)
        env = dict(w.split("=", 1) for w in words[: words.index("vllm")])
        assert env["VLLM_NIXL_SIDE_CHANNEL_PORT"] == {"prefill": "5600", "decode": "5601"}[side]
        back = api.load(command=words[words.index("vllm"):])
        assert back.speculative_config == cfg.speculative_config
        assert back.extra_args == cfg.extra_args  # kv-transfer-config and port kept verbatim


def test_matching_pair_k8s_objects_validate():
    p, d = api.load(command=PREFILL), api.load(command=DECODE)
    docs = [x for x in yaml.safe_load_all(pd_export(p, d, "k8s", hardware="H100")) if x]
    assert [x["kind"] for x in docs] == ["Deployment", "Service", "Deployment", "Service"]
    for x in docs:
        assert kubernetes_validate.validate(x, K8S_VERSION, strict=True) == K8S_VERSION
    for dep, svc, side, cfg in ((docs[0], docs[1], "prefill", p), (docs[2], docs[3], "decode", d)):
        assert dep["metadata"]["name"].endswith("-" + side)
        assert svc["spec"]["selector"]["app.kubernetes.io/component"] == side
        (c,) = dep["spec"]["template"]["spec"]["containers"]
        back = api.load(command=["vllm", "serve", *c["args"]])
        assert back.speculative_config == cfg.speculative_config and back.extra_args == cfg.extra_args
        env = {e["name"]: e for e in c["env"]}
        assert env["VLLM_NIXL_SIDE_CHANNEL_HOST"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"


def test_cli_pair(tmp_path, capsys):
    pf, df, bad = tmp_path / "prefill.txt", tmp_path / "decode.txt", tmp_path / "bad.txt"
    pf.write_text(PREFILL + "\n")
    df.write_text("# decode\n" + DECODE.replace(" --port", " \\\n --port") + "\n")
    bad.write_text(DECODE.replace("AngelSlim/Qwen3-8B_eagle3", "Tengyunw/qwen3_8b_eagle3"))
    common = ["--vllm-version", "0.32", "--gpu", "H100", "--offline"]
    assert main(["pair", str(pf), str(df), *common]) == 0
    assert capsys.readouterr().out.startswith("pair verdict: warning")  # SD792 on the decode side
    assert main(["pair", str(pf), str(bad), *common, "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "error" and "SD790" in [f["rule"] for f in out["findings"]]
    assert main(["pair", str(pf), str(df), *common, "--to", "k8s"]) == 0
    assert len([x for x in yaml.safe_load_all(capsys.readouterr().out) if x]) == 4
    assert main(["pair", str(pf), str(bad), *common, "--to", "commands"]) == 1
    assert capsys.readouterr().out == ""
    assert main(["pair", str(tmp_path / "missing.txt"), str(df), *common]) == 2


@pytest.mark.vllm
def test_vllm_accepts_both_sides_of_the_exported_pair(tmp_path):
    """vLLM 0.32's own parser and config build on each exported command (model folders: config.json only)."""
    from wizard.vllm.oracle import VllmOracle, vllm_unavailable_reason

    if vllm_unavailable_reason():
        pytest.skip(vllm_unavailable_reason())
    hf = Path(__file__).parent / "data" / "hf"
    drafter = tmp_path / "qwen3-8b-eagle3"
    drafter.mkdir()
    # AngelSlim's Qwen3-8B EAGLE-3 training config (tests/data/hf/SOURCES.md)
    (drafter / "config.json").write_text((hf / "Tencent--AngelSlim" / "configs" / "qwen3-8b-eagle3.json").read_text())
    target = str(hf / "Qwen--Qwen3-8B")
    p = api.load(command=PREFILL.replace("Qwen/Qwen3-8B", target).replace("AngelSlim/Qwen3-8B_eagle3", str(drafter)))
    d = api.load(command=DECODE.replace("Qwen/Qwen3-8B", target).replace("AngelSlim/Qwen3-8B_eagle3", str(drafter)))
    assert not [f for f in check_pair(p, d, vllm_version="0.32", gpu="cpu", allow_hub=False).findings if f.rule == "SD790"]
    cmds = [ln for ln in pd_export(p, d, "commands").splitlines() if ln and not ln.startswith("#")]
    with VllmOracle() as oracle:
        for line in cmds:
            words = shlex.split(line)
            env = dict(w.split("=", 1) for w in words[: words.index("vllm")])
            v = oracle.check_argv(words[words.index("vllm") + 2:], env=env, timeout=600)
            assert v.verdict == "accepted", v.short_message(400)
            assert v.resolved["method"] == "eagle3"
