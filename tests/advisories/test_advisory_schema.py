"""The advisory database itself: every file well-formed, enough of them, sources kept apart from
the held-out public-bugs set, fields that exist, and the condition language's own behaviour."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from factory import DATA
from wizard import api
from wizard.advisories import DATA_DIR, advisories, load_errors
from wizard.advisories import matcher
from wizard.advisories.schema import Advisory
from wizard.config import SERVE_FIELDS, SPEC_FIELDS
from wizard.context import resolve_context
from wizard.vllm.versions import parse_version
from wizard.vllm import options as vllm_options
from wizard.vllm import releases

ADVISORIES = advisories()


def test_every_file_is_well_formed():
    assert load_errors() == {}
    assert len(list(DATA_DIR.glob("*.yaml"))) == len(ADVISORIES)


def test_at_least_eighty_advisories_with_unique_ids():
    ids = [a.id for a in ADVISORIES]
    assert len(ids) >= 80, len(ids)
    assert len(set(ids)) == len(ids)


def test_no_source_is_a_public_bugs_case():
    """The cases of tests/data/public-bugs.jsonl stay a held-out evaluation set."""
    held_out = set()
    for line in (DATA / "public-bugs.jsonl").read_text().splitlines():
        if line.strip():
            held_out.add(json.loads(line)["source"].rstrip("/"))
    used = {s.rstrip("/") for a in ADVISORIES for s in a.sources}
    assert not used & held_out, sorted(used & held_out)


def test_sources_are_listed_in_the_sources_doc():
    """docs/advisories-sources.md lists every source used (and the reports read but not used)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "advisories-sources.md").read_text()
    missing = sorted({s for a in ADVISORIES for s in a.sources if s not in doc})
    assert not missing, missing


def _serve_options() -> set[str]:
    out: set[str] = set()
    for key in releases.known_releases():
        out |= {k.lstrip("-").replace("-", "_") for k in vllm_options.serve_options(key)["options"]}
    return out


def test_fields_are_config_paths():
    """Each finding field is a ServeConfig field, a speculative_config key, env.NAME, or a
    `vllm serve` option that the wizard keeps verbatim (vLLM's own option table)."""
    options = _serve_options()
    for a in ADVISORIES:
        for f in a.fields:
            head, _, rest = f.partition(".")
            if head == "speculative_config":
                assert rest in SPEC_FIELDS, (a.id, f)
            elif head == "env":
                assert rest, (a.id, f)
            else:
                assert head in SERVE_FIELDS or head in options, (a.id, f)


def test_every_advisory_has_a_fix_or_says_why_not():
    for a in ADVISORIES:
        assert a.fix.upgrade or a.fix.patches or a.fixed.version is None, a.id
        if a.fixed.version:
            assert a.fix.upgrade == a.fixed.version, (a.id, "fix.upgrade should name the fixing release")


def test_malformed_file_is_skipped_and_reported(tmp_path, monkeypatch):
    import wizard.advisories as adv_mod

    good = (DATA_DIR / f"{ADVISORIES[0].id}.yaml").read_text()
    (tmp_path / f"{ADVISORIES[0].id}.yaml").write_text(good)
    (tmp_path / "KVD-9999.yaml").write_text("id: KVD-9999\ntitle: [unclosed\n")
    bad = yaml.safe_load(good)
    bad.update(id="KVD-9998", family="kv-cache-dtype", match={"all": [{"nonsense.field": 1}]})
    (tmp_path / "KVD-9998.yaml").write_text(yaml.safe_dump(bad))
    monkeypatch.setattr(adv_mod, "DATA_DIR", tmp_path)
    adv_mod.reload()
    try:
        assert [a.id for a in adv_mod.advisories()] == [ADVISORIES[0].id]
        errs = adv_mod.load_errors()
        assert set(errs) == {"KVD-9999.yaml", "KVD-9998.yaml"}
        assert "nonsense.field" in errs["KVD-9998.yaml"]
        # a user's check still works
        cfg = api.load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct")
        assert api.check(cfg, allow_hub=False).verdict in ("ok", "warning")
    finally:
        adv_mod.reload()


@pytest.mark.parametrize("cond,fragment", [
    ({"all": []}, "non-empty list"),
    ({"methd": {"in": ["eagle"]}}, "unknown field"),
    ({"method": {"among": ["eagle"]}}, "unknown operator"),
    ({"spec.num_speculative_tokens": {"gt": "3"}}, "needs a number"),
    ({"hardware.gpu": "H100"}, "hardware fields"),
    ({"target.no_such_field": 1}, "ModelInfo has no field"),
    ({"kv_cache_dtype": {"in": "fp8"}}, "needs a list"),
    ({"options": 1}, "needs a sub-field"),
])
def test_condition_validation_names_the_problem(cond, fragment):
    with pytest.raises(matcher.ConditionError, match=fragment):
        matcher.validate_condition(cond)


def _ctx(command: str, version: str = "0.26.0", gpu: str | None = None):
    from wizard.hardware.catalog import parse_gpu_spec

    cfg = api.load(command=command)
    return resolve_context(cfg, parse_version(version), parse_gpu_spec(gpu) if gpu else None, allow_hub=False)


E3 = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --kv-cache-dtype fp8 --speculative-config "
      "'{\"method\":\"eagle3\",\"model\":\"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\",\"num_speculative_tokens\":3}'")


def test_condition_language_on_a_resolved_context():
    ctx = _ctx(E3, gpu="H100-SXM")
    ev = matcher.evaluate
    assert ev({"method": ["eagle3"]}, ctx) is True
    assert ev({"method": "eagle"}, ctx) is False
    assert ev({"kv_cache_dtype": {"startswith": "fp8"}}, ctx) is True
    assert ev({"draft_kv_cache_dtype": "fp8"}, ctx) is True  # inherits the target's
    assert ev({"k": {"ge": 3, "le": 3}}, ctx) is True
    assert ev({"target.model_type": {"in": ["llama"]}, "target.architecture": "LlamaForCausalLM"}, ctx) is True
    assert ev({"hardware.platform": "cuda", "hardware.sm": {"ge": 90}}, ctx) is True
    assert ev({"parallel.tp": 1, "options.enforce_eager": False}, ctx) is True  # vLLM defaults
    assert ev({"any": [{"method": "mtp"}, {"not": {"method": "mtp"}}]}, ctx) is True
    assert ev({"target.config.rope_scaling.rope_type": "llama3"}, ctx) is True


def test_unknown_facts_never_make_an_advisory_fire():
    ctx = _ctx(E3)  # no hardware
    assert matcher.evaluate({"hardware.platform": "cuda"}, ctx) is None
    assert matcher.evaluate({"not": {"hardware.platform": "cuda"}}, ctx) is None
    assert matcher.evaluate({"any": [{"hardware.platform": "cuda"}, {"method": "eagle3"}]}, ctx) is True
    assert matcher.evaluate({"all": [{"hardware.platform": "cuda"}, {"method": "mtp"}]}, ctx) is False
    assert matcher.evaluate({"options.enable_prefix_caching": {"eq": True, "default": True}}, ctx) is True
    assert matcher.evaluate({"options.enable_prefix_caching": True}, ctx) is None
    assert matcher.evaluate({"options.enable_prefix_caching": {"set": False}}, ctx) is True
    unknown_model = _ctx("vllm serve no-such-org/no-such-model --speculative-config "
                         "'{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'")
    assert matcher.evaluate({"target.model_type": {"in": ["llama"]}}, unknown_model) is None
    assert matcher.evaluate({"method": "ngram"}, unknown_model) is True


def test_json_options_are_looked_into():
    ctx = _ctx("vllm serve meta-llama/Llama-3.1-8B-Instruct -cc '{\"cudagraph_mode\":\"FULL\"}' "
               "--kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'")
    assert matcher.resolve_field(ctx, "options.compilation_config.cudagraph_mode") == "FULL"
    assert matcher.resolve_field(ctx, "options.kv_transfer_config.kv_connector") == "NixlConnector"
    assert matcher.resolve_field(ctx, "options.kv_transfer_config.missing") is None


def test_runner_field_follows_the_release_default():
    assert matcher.resolve_field(_ctx(E3, "0.21.0"), "runner") == "v1"
    assert matcher.resolve_field(_ctx(E3, "0.26.0"), "runner") is None
    assert matcher.resolve_field(_ctx("VLLM_USE_V2_MODEL_RUNNER=1 " + E3, "0.26.0"), "runner") == "v2"


def test_model_runner_field_is_the_release_own_choice():
    """``model_runner``: the generated route (env first, then the release's default), V1 on CPU. The
    0.24-0.27 tables decide it too since their probe gives the model config its serve defaults
    (enable_return_routed_experts, logprobs_mode, no EC transfer / reasoning config)."""
    assert matcher.resolve_field(_ctx(E3, "0.21.0"), "model_runner") == "v1"
    assert matcher.resolve_field(_ctx(E3, "0.26.0", "H100-SXM"), "model_runner") == "v2"
    assert matcher.resolve_field(_ctx(E3, "0.24.0", "H100-SXM"), "model_runner") == "v2"
    assert matcher.resolve_field(_ctx(E3, "0.28.0", "H100-SXM"), "model_runner") == "v2"
    assert matcher.resolve_field(_ctx("VLLM_USE_V2_MODEL_RUNNER=0 " + E3, "0.28.0", "H100-SXM"), "model_runner") == "v1"
    assert matcher.resolve_field(_ctx("VLLM_USE_V2_MODEL_RUNNER=1 " + E3, "0.26.0", "H100-SXM"), "model_runner") == "v2"
    assert matcher.resolve_field(_ctx(E3, "0.28.0", "CPU"), "model_runner") == "v1"
    assert matcher.resolve_field(_ctx("vllm serve meta-llama/Llama-3.1-8B-Instruct", "0.28.0"), "model_runner") is None


def test_schema_rejects_inconsistent_ranges():
    data = yaml.safe_load((DATA_DIR / f"{ADVISORIES[0].id}.yaml").read_text())
    data["fixed"]["version"] = data["examples"][0]["vllm_version"]
    with pytest.raises(ValueError, match="inside affected"):
        Advisory.model_validate(data)
    data = yaml.safe_load((DATA_DIR / f"{ADVISORIES[0].id}.yaml").read_text())
    data["examples"] = [e for e in data["examples"] if e["expect"] == "match"]
    with pytest.raises(ValueError, match="at least"):
        Advisory.model_validate(data)


def test_method_family_predicates_follow_wizard_vllm_methods():
    """``method: {is: NAME}`` names one of vLLM's method families (wizard.vllm.methods), so an
    advisory follows the family when vLLM widens it; unknown names and other fields are refused."""
    matcher.validate_condition({"method": {"is": "use_eagle"}})
    matcher.validate_condition({"method": {"is_not": ["is_lookup", "is_noncausal"]}})
    with pytest.raises(matcher.ConditionError, match="unknown method family"):
        matcher.validate_condition({"method": {"is": "eagle_like"}})
    with pytest.raises(matcher.ConditionError, match="apply to .method. only"):
        matcher.validate_condition({"k": {"is": "use_eagle"}})
    assert matcher._predicate("dflash", {"is": "use_eagle"}) is True
    assert matcher._predicate("draft_model", {"is": "use_eagle"}) is False
    assert matcher._predicate("eagle3", {"is": ["use_eagle", "is_eagle_head"]}) is True
    assert matcher._predicate("ngram_gpu", {"is_not": "is_lookup"}) is False
    assert matcher._predicate(None, {"is": "use_eagle"}) is None  # unknown stays unknown


def test_release_prefilter_matches_the_full_scan():
    """advisory_findings scans only the advisories whose range holds the release (cached per
    release); the result equals testing every advisory."""
    from wizard.advisories import _candidates, applies
    from wizard.io.argv import parse_command

    cfg = parse_command("vllm serve Qwen/Qwen3-8B --speculative-config "
                        "'{\"method\":\"ngram\",\"num_speculative_tokens\":3,\"prompt_lookup_max\":4}'")
    for v in ("0.20.0", "0.28.0", "0.33.0"):
        ctx = resolve_context(cfg, parse_version(v), None, allow_hub=False)
        full = [a.id for a in advisories() if applies(a, ctx)]
        fast = [a.id for a in _candidates(ctx) if applies(a, ctx)]
        assert full == fast and len(_candidates(ctx)) < len(advisories()), v
