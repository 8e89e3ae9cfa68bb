"""Known vLLM engine bugs, as data: ``wizard/data/advisories/*.yaml`` (one advisory a file).

Each advisory names the vLLM releases it affects (a PEP 440 specifier), the platforms, a
condition on the RESOLVED configuration (see :mod:`wizard.advisories.matcher`), its severity
(docs/severity.md), its sources and its fix (upgrade and/or option patches). Matching ones
become :class:`~wizard.rules.registry.Finding` objects with the advisory id as rule id, so the
CLI, JSON and UI show them like rule findings::

    from wizard.advisories import advisories, advisory_findings
    advisory_findings(ctx)   # -> [Finding(rule="PFX-0001", ...)]  never raises

A malformed file is skipped at run time (a user's check never fails on it) and reported by
:func:`load_errors`; ``tests/advisories`` fails on any. ``docs/advisories.md`` is
``render_advisories("markdown")``, kept in sync by a test.
"""

from __future__ import annotations

import functools
import json
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from wizard.advisories.matcher import evaluate, resolve_field
from wizard.advisories.schema import Advisory, FAMILIES, ID_PREFIX
from wizard.config import Patch
from wizard.datacache import cached
from wizard.rules.registry import Finding, Severity
from wizard.vllm.releases import release_of

if TYPE_CHECKING:  # pragma: no cover
    from wizard.context import CheckContext

__all__ = ["Advisory", "advisories", "reload", "load_errors", "applies", "matching", "advisory_findings",
           "render_advisories", "DATA_DIR", "FAMILIES", "ID_PREFIX"]

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "advisories"


@functools.lru_cache(maxsize=1)
def _index() -> tuple[tuple[tuple[str, bytes], ...], tuple[tuple[str, str], ...]]:
    """((affected, the pickled Advisory), ...) and the skipped files: a check unpickles only
    the advisories whose range holds its release (about 1 in 10), not all of them."""
    return cached("advisories", sources=sorted(DATA_DIR.glob("*.yaml")), code=[__file__, Advisory, Patch],
                  build=lambda: _pack(*_build()))


def _pack(good: tuple[Advisory, ...], bad: tuple[tuple[str, str], ...]):
    return tuple((a.affected, pickle.dumps(a, protocol=pickle.HIGHEST_PROTOCOL)) for a in good), bad


@functools.lru_cache(maxsize=None)
def _unpack(blob: bytes) -> Advisory:
    return pickle.loads(blob)  # noqa: S301 - built by _pack in this process or read from datacache's owner-only entry


@functools.lru_cache(maxsize=1)
def _load() -> tuple[tuple[Advisory, ...], tuple[tuple[str, str], ...]]:
    items, bad = _index()
    return tuple(_unpack(blob) for _, blob in items), bad


def _build() -> tuple[tuple[Advisory, ...], tuple[tuple[str, str], ...]]:
    import yaml
    from pydantic import ValidationError

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster than the pure-Python parser
    good: list[Advisory] = []
    bad: list[tuple[str, str]] = []
    seen: set[str] = set()
    for path in sorted(DATA_DIR.glob("*.yaml")):
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 - a safe loader
            adv = Advisory.model_validate(data)
        except (OSError, UnicodeDecodeError, yaml.YAMLError, ValidationError, ValueError, TypeError) as err:
            bad.append((path.name, f"{type(err).__name__}: {err}"))
            continue
        if path.stem != adv.id:
            bad.append((path.name, f"file name must be {adv.id}.yaml"))
            continue
        if adv.id in seen:
            bad.append((path.name, f"duplicate id {adv.id}"))
            continue
        seen.add(adv.id)
        good.append(adv)
    return tuple(good), tuple(bad)


def reload() -> None:
    """Forget what was read (the files are read again on next use; tests that swap DATA_DIR)."""
    for fn in (_index, _load, _unpack, _affecting):
        fn.cache_clear()


def advisories() -> list[Advisory]:
    """Every well-formed advisory, sorted by id (files are read once per process)."""
    return list(_load()[0])


def load_errors() -> dict[str, str]:
    """file name -> why it was skipped (empty when every file is well-formed)."""
    return dict(_load()[1])


@functools.lru_cache(maxsize=512)
def _spec(s: str) -> SpecifierSet:
    return SpecifierSet(s)


def _platform_ok(adv: Advisory, ctx: "CheckContext") -> bool | None:
    if not adv.platforms and not adv.compute_capability:
        return True
    platform = resolve_field(ctx, "hardware.platform")
    if platform is None:
        return None
    if adv.platforms and platform not in adv.platforms:
        return False
    if adv.compute_capability:
        cc = ctx.hardware.compute_capability if ctx.hardware else None
        if cc is None:
            return None if platform == "cuda" else False
        return _spec(adv.compute_capability).contains(Version(f"{cc[0]}.{cc[1]}"), prereleases=True)
    return True


def applies(adv: Advisory, ctx: "CheckContext") -> bool:
    """True when ``ctx``'s vLLM release is affected, the platform matches and the condition is
    known to hold (unknown facts never make an advisory fire)."""
    if not _spec(adv.affected).contains(ctx.version.version, prereleases=True):
        return False
    return _applies_in_range(adv, ctx)


def _applies_in_range(adv: Advisory, ctx: "CheckContext") -> bool:
    if _platform_ok(adv, ctx) is not True:
        return False
    return evaluate(adv.match, ctx) is True


@functools.lru_cache(maxsize=64)
def _affecting(version: str) -> tuple[Advisory, ...]:
    """The advisories whose affected range holds ``version``: the range test (a PEP 440 specifier
    per advisory) runs once per release and process, not once per check."""
    v = Version(version)
    return tuple(_unpack(blob) for affected, blob in _index()[0] if _spec(affected).contains(v, prereleases=True))


def _candidates(ctx: "CheckContext") -> tuple[Advisory, ...]:
    return _affecting(str(ctx.version.version))


def matching(ctx: "CheckContext") -> list[Advisory]:
    """The advisories that apply to ``ctx`` (see :func:`applies`)."""
    return [a for a in _candidates(ctx) if _applies_in_range(a, ctx)]


def _fixed_text(adv: Advisory) -> str:
    f = adv.fixed
    if f.version:
        pr = f" ({f.pr})" if f.pr else ""
        return f"fixed in vLLM {f.version}{pr}"
    return "fixed in: unknown" + (f" ({f.note})" if f.note else "")


def finding_for(adv: Advisory, ctx: "CheckContext") -> "Finding":
    """The Finding an applying advisory produces (rule id = advisory id; source link in the message)."""
    summary = " ".join(adv.summary.split())
    todo = []
    if adv.fix.upgrade:
        todo.append(f"upgrade to vLLM >= {adv.fix.upgrade}")
    todo += [p.description for p in adv.fix.patches]
    msg = (f"Known vLLM bug {adv.id}: {summary} vLLM {ctx.version} is affected ({adv.affected}); "
           f"{_fixed_text(adv)}." + (f" Fix: {'; or '.join(todo)}." if todo else "")
           + f" Source: {adv.primary_source}")
    return Finding(rule=adv.id, severity=Severity(adv.severity), title=adv.title, message=msg,
                   fields=list(adv.fields), fixes=list(adv.fix.patches))


def advisory_findings(ctx: "CheckContext") -> list["Finding"]:
    """Findings of every applying advisory. Never raises: an advisory whose evaluation fails
    is skipped (its own tests catch that)."""
    out = []
    try:
        items = _candidates(ctx)
    except Exception:  # pragma: no cover - _load catches file errors; belt and braces
        return out
    for adv in items:
        try:
            if _applies_in_range(adv, ctx):
                out.append(finding_for(adv, ctx))
        except Exception:  # a bad condition must never take a user's check down
            continue
    return out


# ---- rendering (python -m wizard advisories; docs/advisories.md) ----------------------------

def _as_dict(adv: Advisory) -> dict[str, Any]:
    return adv.model_dump(mode="json", exclude_none=True)


def _counts(items: list[Advisory]) -> tuple[dict[str, int], dict[str, int]]:
    fam: dict[str, int] = {}
    sev: dict[str, int] = {}
    for a in items:
        fam[a.family] = fam.get(a.family, 0) + 1
        sev[a.severity] = sev.get(a.severity, 0) + 1
    return fam, sev


def _by_release(items: list[Advisory]) -> dict[str, dict[str, int]]:
    """minor release 'X.Y' -> {severity: advisories affecting one of its releases} (the releases the
    release ledger read, patch and .postN included: wizard/data/vllm/ledger/releases.json)."""
    path = DATA_DIR.parent / "vllm" / "ledger" / "releases.json"
    try:
        releases = json.loads(path.read_text(encoding="utf-8"))["releases"]
    except (OSError, ValueError, KeyError):
        return {}
    minors: dict[str, list[Version]] = {}
    for r in releases:
        minors.setdefault(release_of(r), []).append(Version(r))
    out: dict[str, dict[str, int]] = {}
    for minor, versions in minors.items():
        row = {"error": 0, "warning": 0, "info": 0}
        for a in items:
            spec = _spec(a.affected)
            if any(spec.contains(v, prereleases=True) for v in versions):
                row[a.severity] += 1
        out[minor] = row
    return out


def render_advisories(fmt: str = "text") -> str:
    """Every advisory as 'text', 'json' or 'markdown' (docs/advisories.md).

    Raises:
        ValueError: unknown ``fmt``.
    """
    items = advisories()
    if fmt == "json":
        fam, sev = _counts(items)
        return json.dumps({"advisories": [_as_dict(a) for a in items], "by_family": fam, "by_severity": sev,
                           "by_release": _by_release(items), "skipped_files": load_errors()}, indent=2) + "\n"
    if fmt == "text":
        out = []
        for a in items:
            fixed = a.fixed.version or "unknown"
            plat = ",".join(a.platforms) or "any"
            out.append(f"{a.id}  [{a.severity}]  {a.title}")
            out.append(f"    affected: {a.affected}   fixed: {fixed}   platforms: {plat}   confidence: {a.confidence}")
            out.append(f"    source: {a.primary_source}")
        fam, sev = _counts(items)
        out.append("")
        out.append(f"{len(items)} advisories; by severity: " + ", ".join(f"{k} {v}" for k, v in sorted(sev.items()))
                   + "; by family: " + ", ".join(f"{k} {v}" for k, v in sorted(fam.items())))
        for name, why in load_errors().items():
            out.append(f"skipped {name}: {why}")
        return "\n".join(out) + "\n"
    if fmt == "markdown":
        return _markdown(items)
    raise ValueError(f"unknown format {fmt!r}; use text, json or markdown")


def _markdown(items: list[Advisory]) -> str:
    import yaml

    fam, sev = _counts(items)
    lines = [
        "# Advisories: known vLLM bugs that valid-looking configurations hit",
        "",
        "<!-- generated by `python -m wizard advisories --format markdown > docs/advisories.md`; "
        "tests/advisories/test_docs.py keeps it in sync -->",
        "",
        "Each advisory is a YAML file under `wizard/data/advisories/`: the vLLM releases it affects, the",
        "platforms, a condition on the resolved configuration (method, models, KV dtypes, options, hardware),",
        "its severity (see [severity.md](severity.md)), its sources and its fix. `python -m wizard check` reports",
        "every advisory that applies to the vLLM version checked against, like a rule finding whose rule id is",
        "the advisory id. The condition language is documented in `wizard/advisories/matcher.py`.",
        "",
        f"**{len(items)} advisories.** By severity: " + ", ".join(f"{k} {v}" for k, v in sorted(sev.items()))
        + ". By family: " + ", ".join(f"{k} {v}" for k, v in sorted(fam.items())) + ". "
        + f"{sum(1 for a in items if a.ledger)} come from the release ledger ([ledger.md](ledger.md)): they list "
        + f"{sum(len(a.ledger) for a in items)} class b hunks in `ledger:`.",
        "",
        "Per vLLM release (advisories whose affected range contains one of its releases, patch releases included):",
        "",
        "| release | advisories | error | warning | info |",
        "|---|---:|---:|---:|---:|",
    ]
    for minor, row in sorted(_by_release(items).items(), key=lambda kv: Version(kv[0])):
        lines.append(f"| {minor} | {sum(row.values())} | {row['error']} | {row['warning']} | {row['info']} |")
    lines += [
        "",
        "| id | severity | family | affected | fixed in | confidence | title |",
        "|---|---|---|---|---|---|---|",
    ]
    for a in items:
        lines.append(f"| [{a.id}](#{a.id.lower()}) | {a.severity} | {a.family} | `{a.affected}` | "
                     f"{a.fixed.version or 'unknown'} | {a.confidence} | {a.title.replace('|', '/')} |")
    for a in items:
        lines += ["", f"## {a.id}", "", f"**{a.title}**", "", " ".join(a.summary.split()), ""]
        lines.append(f"- Severity: {a.severity}; family: {a.family}; confidence: {a.confidence}")
        lines.append(f"- Affected vLLM: `{a.affected}`; {_fixed_text(a)}"
                     + (f" (basis: {a.fixed.basis})" if a.fixed.version else ""))
        if a.introduced and a.introduced.version:
            lines.append(f"- Introduced in {a.introduced.version}" + (f" ({a.introduced.pr})" if a.introduced.pr else "")
                         + f" (basis: {a.introduced.basis})")
        if a.platforms or a.compute_capability:
            lines.append(f"- Platforms: {', '.join(a.platforms) or 'any'}"
                         + (f"; compute capability `{a.compute_capability}`" if a.compute_capability else ""))
        lines.append(f"- Fields: {', '.join(f'`{f}`' for f in a.fields)}")
        fixes = ([f"upgrade to vLLM >= {a.fix.upgrade}"] if a.fix.upgrade else []) + [p.description for p in a.fix.patches]
        if fixes:
            lines.append(f"- Fix: {'; or '.join(fixes)}")
        lines.append("- Sources: " + ", ".join(a.sources))
        if a.ledger:
            lines.append("- Release-ledger hunks: " + ", ".join(f"`{h}`" for h in a.ledger))
        if a.notes:
            lines.append(f"- Notes: {' '.join(a.notes.split())}")
        lines += ["", "Condition:", "", "```yaml", yaml.safe_dump(a.match, sort_keys=False).rstrip(), "```", ""]
        for e in a.examples:
            where = f"vLLM {e.vllm_version}" + (f", {e.gpu}" if e.gpu else "")
            lines.append(f"- {'matches' if e.expect == 'match' else 'does not match'} ({where}): `{e.command}`")
    return "\n".join(lines) + "\n"
