"""Every advisory's own examples, through the real check path (``wizard.api.check``).

For each example of each advisory: the ``match`` command produces a finding with the advisory's
id, severity, fields and source link; the ``no_match`` command does not. For each match example,
every fix patch of the advisory, applied, removes the finding without creating a new error.
Example model folders (``models:``) are written with tests/factory.make_model_dir into a fresh
folder the commands run in; everything else is a catalog id (offline).
"""

from __future__ import annotations

import pytest

from factory import make_model_dir
from wizard import api
from wizard.advisories import advisories
from wizard.config import apply_patch
from wizard.context import clear_model_cache
from wizard.rules.registry import Severity

ADVISORIES = advisories()
CASES = [(a, i) for a in ADVISORIES for i in range(len(a.examples))]


def _run(adv, ex, root, monkeypatch):
    folder = root / f"{adv.id}-{adv.examples.index(ex)}"
    folder.mkdir()
    for path, spec in ex.models.items():
        make_model_dir(folder / path[2:], spec["config"], spec.get("tensors") or {})
    monkeypatch.chdir(folder)
    clear_model_cache()  # relative ./folders of different examples share names
    cfg = api.load(command=ex.command)
    return cfg, api.check(cfg, vllm_version=ex.vllm_version, gpu=ex.gpu, allow_hub=False)


@pytest.mark.parametrize("adv,i", CASES, ids=[f"{a.id}-{i}-{a.examples[i].expect}" for a, i in CASES])
def test_example(adv, i, tmp_path, monkeypatch):
    ex = adv.examples[i]
    cfg, report = _run(adv, ex, tmp_path, monkeypatch)
    mine = [f for f in report.findings if f.rule == adv.id]
    others = [(f.rule, f.severity.value) for f in report.findings]
    if ex.expect == "no_match":
        assert not mine, f"{adv.id} fired on its no_match example ({ex.why or ''}): {mine[0].message}"
        return
    assert len(mine) == 1, f"{adv.id} did not fire on its match example; findings: {others}"
    f = mine[0]
    assert f.severity == Severity(adv.severity) and f.title == adv.title
    assert f.fields == adv.fields
    assert adv.primary_source in f.message and adv.affected in f.message
    before = {(g.rule, tuple(g.fields)) for g in report.findings if g.severity == Severity.ERROR}
    for patch in adv.fix.patches:
        fixed = apply_patch(cfg, patch)
        after = api.check(fixed, vllm_version=ex.vllm_version, gpu=ex.gpu, allow_hub=False)
        assert not [g for g in after.findings if g.rule == adv.id], f"{adv.id}: patch {patch.description!r} did not remove it"
        new = [(g.rule, g.message) for g in after.findings
               if g.severity == Severity.ERROR and (g.rule, tuple(g.fields)) not in before]
        assert not new, f"{adv.id}: patch {patch.description!r} creates new errors {new}"
    if adv.fix.upgrade:
        up = api.check(cfg, vllm_version=adv.fix.upgrade, gpu=ex.gpu, allow_hub=False)
        assert not [g for g in up.findings if g.rule == adv.id], f"{adv.id} still fires on its fix release {adv.fix.upgrade}"
