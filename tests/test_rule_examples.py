"""Every registered rule's docs examples are its tests.

For each rule (all families, all developers): the ``bad`` command triggers the rule, the
``good`` command does not, and each fix of the bad example's findings of that rule, applied,
removes that finding without creating a new error. Examples run offline: catalog ids, ``ngram``,
or the tiny local folders ``./tiny-*`` that ``conformance_corpus.build_models`` writes (the test
runs in that folder), or the folders a rule declares in ``example_models`` (relative path ->
{"config": config.json dict, "tensors": {name: shape}}), which the ``example_dir`` fixture writes
with ``tests/factory.make_model_dir`` before any command runs. ``rule.example_gpu`` /
``rule.example_version`` are honoured; ``rule.example_hardware`` (Hardware field overrides such as
``{"used_bytes": 40 << 30}``, for facts only NVML discovery gives) is applied on top of the
``example_gpu`` catalog entry.
"""

from __future__ import annotations

import pytest

from wizard import api
from wizard.config import apply_patch
from wizard.rules.registry import Severity, all_rules

RULES = all_rules()


def _example_models() -> dict[str, dict]:
    """Every rule's ``example_models``, merged by path. Raises AssertionError when two rules
    declare the same path with different contents (they would overwrite each other)."""
    out: dict[str, dict] = {}
    owner: dict[str, str] = {}
    for rule in RULES:
        for path, spec in (rule.example_models or {}).items():
            assert path.startswith("./") and ".." not in path, f"{rule.id}: example model path {path!r} must be ./NAME"
            assert set(spec) <= {"config", "tensors"} and isinstance(spec.get("config"), dict), \
                f"{rule.id}: example model {path!r} needs {{'config': {{...}}, 'tensors': {{...}}}}"
            if path in out:
                assert out[path] == spec, f"{path!r} declared differently by {owner[path]} and {rule.id}"
            out[path], owner[path] = spec, rule.id
    return out


@pytest.fixture(scope="module")
def example_dir(tmp_path_factory):
    from conformance_corpus import build_models
    from factory import make_model_dir

    root = tmp_path_factory.mktemp("examples")
    build_models(root)
    for path, spec in _example_models().items():
        make_model_dir(root / path[2:], spec["config"], spec.get("tensors") or {})
    return root


def _gpu(rule):
    """``example_gpu`` as given, or the catalog entry with ``example_hardware`` applied."""
    if not getattr(rule, "example_hardware", None):
        return rule.example_gpu
    from wizard.hardware_catalog import lookup

    assert rule.example_gpu, f"{rule.id}: example_hardware needs example_gpu"
    return lookup(rule.example_gpu).model_copy(update=dict(rule.example_hardware))


def _check(rule, command, version=None):
    cfg = api.load(command=command)
    return cfg, api.check(cfg, vllm_version=version or rule.example_version, gpu=_gpu(rule), allow_hub=False)


def _key(f):
    return (f.rule, tuple(f.fields), f.title)


def test_example_models_are_small():
    """Declared example folders stay tiny: at most 1M elements per folder (2 MB as float16)."""
    import math

    big = {p: n for p, spec in _example_models().items()
           if (n := sum(math.prod(s) for s in (spec.get("tensors") or {}).values())) > 1_000_000}
    assert not big, f"example models too large (elements): {big}"


def test_every_rule_has_examples_and_docs():
    missing = [r.id for r in RULES if not (r.bad and r.good and r.title and r.source and type(r).__doc__)]
    assert not missing, f"rules without bad/good/title/source/docstring: {missing}"


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_bad_example_fires(rule, example_dir, monkeypatch):
    monkeypatch.chdir(example_dir)
    _, report = _check(rule, rule.bad)
    fired = [f for f in report.findings if f.rule == rule.id]
    assert fired, f"{rule.id} did not fire on its bad example; findings: {[(f.rule, f.message) for f in report.findings]}"
    assert all(f.message and f.title for f in fired)
    if rule.severity == Severity.ERROR:
        assert any(f.severity == Severity.ERROR for f in fired)


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_good_example_is_quiet(rule, example_dir, monkeypatch):
    monkeypatch.chdir(example_dir)
    # a rule about the version itself (SD403) gives its good example its own version
    _, report = _check(rule, rule.good, getattr(rule, "example_good_version", None))
    fired = [(f.rule, f.message) for f in report.findings if f.rule == rule.id]
    assert not fired, f"{rule.id} fired on its good example: {fired}"


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_fixes_remove_the_finding_without_new_errors(rule, example_dir, monkeypatch):
    monkeypatch.chdir(example_dir)
    cfg, report = _check(rule, rule.bad)
    before_errors = {_key(f) for f in report.findings if f.severity == Severity.ERROR}
    for finding in [f for f in report.findings if f.rule == rule.id]:
        if finding.severity == Severity.ERROR:
            assert finding.fixes, f"{rule.id}: an error finding without a fix: {finding.message}"
        for fix in finding.fixes:
            fixed = apply_patch(cfg, fix)
            after = api.check(fixed, vllm_version=rule.example_version, gpu=_gpu(rule), allow_hub=False)
            still = [f for f in after.findings if _key(f) == _key(finding)]
            assert not still, f"{rule.id}: fix {fix.description!r} did not remove the finding"
            new_errors = [(f.rule, f.message) for f in after.findings
                          if f.severity == Severity.ERROR and _key(f) not in before_errors]
            assert not new_errors, f"{rule.id}: fix {fix.description!r} created new errors {new_errors}"
