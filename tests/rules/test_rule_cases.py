"""Every rule's case file ``tests/rules/SDNNN.yml`` runs here (format: wizard/rules/cases.py).

For each registered rule, with the context of its case file (gpu, vLLM version, Hardware
overrides, tiny model folders): the docstring's Example command triggers the rule (an error rule
with at least one error), its Use instead command does not, and every fix of every finding of the
Example, applied, removes that finding without creating a new error. Then each ``fail`` / ``pass``
/ ``fix`` case of the file. Commands run offline in one folder holding every case file's model
folders and ``models.yml``'s (tests/factory.make_model_dir).
"""

from __future__ import annotations

import math

import pytest
from factory import make_model_dir

from wizard import api
from wizard.config import apply_patch
from wizard.hardware.catalog import lookup
from wizard.rules.cases import CASES_DIR, Case, Context, ModelFolder, load_cases, shared_models
from wizard.rules.registry import Severity, all_rules

RULES = all_rules()
CASES = {r.id: load_cases(r.id) for r in RULES}


def _all_models() -> dict[str, ModelFolder]:
    """Every model folder of every case file and models.yml, by path. Raises AssertionError when
    two files declare one path differently (they would overwrite each other)."""
    out: dict[str, ModelFolder] = dict(shared_models())
    owner = {p: "models.yml" for p in out}
    for rid, cases in CASES.items():
        for path, spec in (cases.context.models if cases else {}).items():
            assert path.startswith("./") and ".." not in path, f"{rid}: model path {path!r} must be ./NAME"
            if path in out:
                assert out[path] == spec, f"{path!r} declared differently by {owner[path]} and {rid}"
            out[path], owner[path] = spec, rid
    return out


@pytest.fixture(scope="module")
def case_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("rule-cases")
    for path, spec in _all_models().items():
        make_model_dir(root / path[2:], spec.config, spec.tensors)
    return root


def _gpu(ctx: Context, case: Case | None = None):
    """The gpu of the case (else of the file), as a name or a catalog entry with overrides."""
    gpu = (case.gpu if case and case.gpu else None) or ctx.gpu
    hardware = case.hardware if case and case.hardware is not None else ctx.hardware
    if not hardware:
        return gpu
    assert gpu, "hardware overrides need a gpu"
    return lookup(gpu).model_copy(update=dict(hardware))


def _check(ctx: Context, command: str, case: Case | None = None):
    cfg = api.load(command=command, read_config_files=True)  # as the CLI reads it (files named in the command)
    version = (case.vllm if case and case.vllm else None) or ctx.vllm
    return cfg, api.check(cfg, vllm_version=version, gpu=_gpu(ctx, case), allow_hub=False)


def _key(f):
    return (f.rule, tuple(f.fields), f.title)


def _context(rule) -> Context:
    cases = CASES[rule.id]
    return cases.context if cases else Context()


def test_every_rule_has_a_case_file_and_full_docs():
    missing = [r.id for r in RULES if CASES[r.id] is None]
    assert not missing, f"rules without tests/rules/SDNNN.yml: {missing}"
    orphans = sorted(p.stem for p in CASES_DIR.glob("SD*.yml") if p.stem not in CASES)
    assert not orphans, f"case files of no registered rule: {orphans}"
    from wizard.rules.registry import SECTIONS

    for r in RULES:
        doc = type(r).doc()
        absent = [s for s in SECTIONS if not doc.sections.get(s)]
        assert not absent and r.title and doc.example and doc.use_instead, f"{r.id}: docstring lacks {absent or 'commands'}"


def test_case_models_are_small():
    """Declared folders stay tiny: at most 1M elements per folder (2 MB as float16)."""
    big = {p: n for p, spec in _all_models().items() if (n := sum(math.prod(s) for s in spec.tensors.values())) > 1_000_000}
    assert not big, f"case models too large (elements): {big}"


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_example_fires(rule, case_dir, monkeypatch):
    monkeypatch.chdir(case_dir)
    _, report = _check(_context(rule), type(rule).doc().example)
    fired = [f for f in report.findings if f.rule == rule.id]
    assert fired, f"{rule.id} did not fire on its Example; findings: {[(f.rule, f.message) for f in report.findings]}"
    assert all(f.message and f.title for f in fired)
    if rule.severity == Severity.ERROR:
        assert any(f.severity == Severity.ERROR for f in fired)


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_use_instead_is_quiet(rule, case_dir, monkeypatch):
    monkeypatch.chdir(case_dir)
    ctx = _context(rule)
    over = CASES[rule.id].use_instead if CASES[rule.id] else None
    if over is not None:
        ctx = ctx.model_copy(update=over.model_dump(exclude_unset=True))
    _, report = _check(ctx, type(rule).doc().use_instead)
    fired = [(f.rule, f.message) for f in report.findings if f.rule == rule.id]
    assert not fired, f"{rule.id} fired on its Use instead: {fired}"


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_example_fixes_remove_the_finding_without_new_errors(rule, case_dir, monkeypatch):
    monkeypatch.chdir(case_dir)
    ctx = _context(rule)
    cfg, report = _check(ctx, type(rule).doc().example)
    before_errors = {_key(f) for f in report.findings if f.severity == Severity.ERROR}
    for finding in [f for f in report.findings if f.rule == rule.id]:
        if finding.severity == Severity.ERROR:
            assert finding.fixes, f"{rule.id}: an error finding without a fix: {finding.message}"
        for fix in finding.fixes:
            fixed = apply_patch(cfg, fix)
            after = api.check(fixed, vllm_version=ctx.vllm, gpu=_gpu(ctx), allow_hub=False)
            still = [f for f in after.findings if _key(f) == _key(finding)]
            assert not still, f"{rule.id}: fix {fix.description!r} did not remove the finding"
            new_errors = [(f.rule, f.message) for f in after.findings
                          if f.severity == Severity.ERROR and _key(f) not in before_errors]
            assert not new_errors, f"{rule.id}: fix {fix.description!r} created new errors {new_errors}"


#: rules whose case file has no boundary case yet (issue #21 item 3); shrink it, never grow it
_NO_BOUNDARY_YET: frozenset[str] = frozenset()


def test_every_case_file_is_pinned_and_has_fail_pass_and_boundary_cases():
    """Issue #21 item 3: each case file pins ``context.vllm`` (its commands, the docstring's too, do
    not run at whatever vLLM is installed) and has a failing, a passing and a boundary case (a
    ``name`` starting ``boundary``: the value just inside / outside the rule's condition). The
    docstring's Example counts as the failing case and its Use instead as the passing one."""
    unpinned, no_boundary = [], []
    for r in RULES:
        cases = CASES[r.id]
        if cases is None:
            continue  # test_every_rule_has_a_case_file_and_full_docs
        if not cases.context.vllm:
            unpinned.append(r.id)
        doc = type(r).doc()
        kinds = {c.kind for c in cases.cases}
        assert doc.example or "fail" in kinds or "fix" in kinds, f"{r.id}: no failing case"
        assert doc.use_instead or "pass" in kinds, f"{r.id}: no passing case"
        if r.id not in _NO_BOUNDARY_YET and not any((c.name or "").startswith("boundary") for c in cases.cases):
            no_boundary.append(r.id)
    assert not unpinned, f"case files without context.vllm: {unpinned}"
    assert not no_boundary, f"case files without a boundary_* case: {no_boundary}"
    stale = sorted(rid for rid in _NO_BOUNDARY_YET
                   if CASES.get(rid) and any((c.name or "").startswith("boundary") for c in CASES[rid].cases))
    assert not stale, f"remove from _NO_BOUNDARY_YET (they have boundary cases now): {stale}"


_EXTRA = [(r, i, c) for r in RULES if CASES[r.id] for i, c in enumerate(CASES[r.id].cases)]


@pytest.mark.parametrize("rule,index,case", _EXTRA, ids=[f"{r.id}-{c.name or i}" for r, i, c in _EXTRA])
def test_case(rule, index, case, case_dir, monkeypatch):
    monkeypatch.chdir(case_dir)
    ctx = _context(rule)
    cfg, report = _check(ctx, case.command, case)
    fired = [f for f in report.findings if f.rule == rule.id]
    if case.kind == "pass":
        assert not fired, f"{rule.id} fired on pass case {case.name or index}: {[f.message for f in fired]}"
        return
    assert fired, f"{rule.id} did not fire on case {case.name or index}: {[(f.rule, f.message) for f in report.findings]}"
    if case.message:
        assert any(case.message in f.message for f in fired), [f.message for f in fired]
    if case.severity:
        assert any(f.severity.value == case.severity for f in fired), [f.severity for f in fired]
    if case.kind == "fail":
        return
    finding = fired[0]
    fixes = [x for x in finding.fixes if case.apply is None or case.apply in x.description]
    assert fixes, f"{rule.id}: no fix {case.apply!r} among {[x.description for x in finding.fixes]}"
    before_errors = {_key(f) for f in report.findings if f.severity == Severity.ERROR}
    after = api.check(apply_patch(cfg, fixes[0]), vllm_version=case.vllm or ctx.vllm, gpu=_gpu(ctx, case), allow_hub=False)
    assert not [f for f in after.findings if _key(f) == _key(finding)], f"{rule.id}: {fixes[0].description!r} left the finding"
    new_errors = [(f.rule, f.message) for f in after.findings if f.severity == Severity.ERROR and _key(f) not in before_errors]
    assert not new_errors, f"{rule.id}: {fixes[0].description!r} created new errors {new_errors}"
