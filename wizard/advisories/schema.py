"""The advisory file format (``wizard/data/advisories/*.yaml``), validated by pydantic.

One YAML file per advisory: a known vLLM engine bug that a valid-looking configuration hits on
some releases (wrong output, a crash at load or at the first request, acceptance near zero), in
the spirit of OSV / pip-audit. Fields::

    id: PFX-0003                      # FAMILY-NNNN, the finding's rule id; equals the file name
    title: one line
    summary: what happens, the mechanism, who is affected (markdown)
    family: prefix-caching            # one of FAMILIES
    severity: warning                 # docs/severity.md: error | warning | info
    affected: ">=0.19.0,<0.27.0"      # PEP 440 specifier over vLLM releases
    introduced: {version: 0.19.0, basis: code, note: ...}          # optional
    fixed: {version: 0.27.0, pr: URL, basis: code}                 # or {version: null, note: "fixed in: unknown"}
    platforms: [cuda]                 # optional: cuda | rocm | cpu | xpu | tpu (absent = every platform)
    compute_capability: ">=9.0"       # optional, CUDA only (PEP 440 over "major.minor")
    confidence: high                  # high | medium | low: how sure the evidence is
    match: {all: [{method: {in: [eagle3]}}, ...]}                  # see wizard/advisories/matcher.py
    fields: [speculative_config.method]   # dotted ServeConfig paths the finding points at
    sources: [URL, ...]               # issue / PR threads; the first is the primary one
    fix:
      upgrade: 0.27.0                 # optional: "upgrade to >= X"
      patches: [{description, set: {...}, unset: [...]}]           # optional option changes
    examples:                         # >= 1 match and >= 1 no_match; run by tests/advisories/
      - expect: match                 # or no_match
        command: vllm serve ...
        vllm_version: 0.26.0
        gpu: H100-SXM                 # optional NAME[xN]
        models: {./tiny-x: {config: {...}, tensors: {name: [shape]}}}  # optional local folders
    ledger: [51d613ec634df72a, ...]   # the release-ledger hunks (class b) whose fix this is
    notes: free text (what was verified and how)

``ValidationError`` (pydantic) is raised for a malformed file; :mod:`wizard.advisories` catches it
so a broken file never breaks a user's check, and ``tests/advisories`` fails on it.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from wizard.config import Patch

__all__ = ["Advisory", "AdvisoryFix", "Example", "FixedIn", "FAMILIES", "PLATFORMS", "ID_PREFIX"]

#: family -> id prefix (the advisory id is PREFIX-NNNN)
ID_PREFIX: dict[str, str] = {
    "eagle": "EAG",            # EAGLE / EAGLE-3 drafters and their proposer
    "mtp": "MTP",              # multi-token-prediction heads
    "draft-model": "DRF",      # separate small draft models
    "ngram-suffix": "NGR",     # ngram, ngram_gpu, suffix decoding
    "dflash": "DFL",           # DFlash / DSpark parallel drafters
    "kv-cache-dtype": "KVD",   # fp8 / MLA KV layouts, per-drafter KV dtype
    "prefix-caching": "PFX",   # prefix caching and KV offload with speculation
    "cuda-graphs": "CGR",      # CUDA-graph capture / dispatch with speculation
    "attention-backend": "ATT",  # attention kernels / backends on the verify or draft path
    "structured-output": "SOT",
    "parallelism": "PAR",      # TP / PP / DP / DCP / EP with speculation
    "async-scheduling": "ASY",
    "lora": "LRA",
    "multimodal": "MMD",
    "sampling": "SMP",         # request sampling parameters with speculation
    "hybrid-models": "HYB",    # recurrent / conv-state targets (Mamba, GDN, short_conv) with speculation
    "runtime": "RTM",          # engine runtime with a drafter: scheduling / preemption, sleep / wake, weight reload
}
FAMILIES = tuple(ID_PREFIX)
PLATFORMS = ("cuda", "rocm", "cpu", "xpu", "tpu")
_ID = re.compile(r"^[A-Z]{3}-\d{4}$")
_HUNK = re.compile(r"^[0-9a-f]{16}$")


def _check_version(v: str | None) -> str | None:
    if v is None:
        return None
    try:
        Version(str(v))
    except InvalidVersion:
        raise ValueError(f"not a PEP 440 version: {v!r}") from None
    return str(v)


def _check_specifier(s: str) -> str:
    try:
        SpecifierSet(s)
    except InvalidSpecifier:
        raise ValueError(f"not a PEP 440 specifier: {s!r}") from None
    return s


class FixedIn(BaseModel):
    """Where a bound of the affected range comes from.

    ``basis``: ``code`` (the change was located in each release's vLLM source), ``release-notes``,
    ``merge-date`` (the first release cut after the PR merged), ``report`` (a reporter's version).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    version: str | None = None
    pr: str | None = None
    basis: Literal["code", "release-notes", "merge-date", "report", "unknown"] = "unknown"
    note: str | None = None

    @field_validator("version")
    @classmethod
    def _version(cls, v: str | None) -> str | None:
        return _check_version(v)


class AdvisoryFix(BaseModel):
    """``upgrade`` (release that fixes it) and/or option changes that avoid it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    upgrade: str | None = None
    patches: list[Patch] = Field(default_factory=list)

    @field_validator("upgrade")
    @classmethod
    def _upgrade(cls, v: str | None) -> str | None:
        return _check_version(v)


class Example(BaseModel):
    """A `vllm serve` command the advisory must (``match``) or must not (``no_match``) fire on."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    expect: Literal["match", "no_match"]
    command: str
    vllm_version: str
    gpu: str | None = None
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)
    why: str | None = None

    @field_validator("vllm_version")
    @classmethod
    def _version(cls, v: str) -> str:
        return _check_version(v)  # type: ignore[return-value]

    @field_validator("command")
    @classmethod
    def _serve(cls, v: str) -> str:
        if "vllm serve" not in v:
            raise ValueError("an example command is a `vllm serve MODEL ...` line")
        return v

    @field_validator("models")
    @classmethod
    def _models(cls, v: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for path, spec in v.items():
            if not path.startswith("./") or ".." in path:
                raise ValueError(f"example model path {path!r} must be ./NAME")
            if not isinstance(spec, dict) or not isinstance(spec.get("config"), dict) or set(spec) - {"config", "tensors"}:
                raise ValueError(f"example model {path!r} needs {{config: {{...}}, tensors: {{...}}}}")
        return v


class Advisory(BaseModel):
    """One known engine bug, its affected releases and how to recognise the configuration."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str
    title: str
    summary: str
    family: Literal[FAMILIES]  # type: ignore[valid-type]
    severity: Literal["error", "warning", "info"]
    affected: str
    introduced: FixedIn | None = None
    fixed: FixedIn
    platforms: list[Literal[PLATFORMS]] = Field(default_factory=list)  # type: ignore[valid-type]
    compute_capability: str | None = None
    confidence: Literal["high", "medium", "low"]
    match: dict[str, Any]
    fields: list[str] = Field(default_factory=list)
    sources: list[str] = Field(..., min_length=1)
    fix: AdvisoryFix = Field(default_factory=AdvisoryFix)
    examples: list[Example] = Field(..., min_length=2)
    #: ids of the release-ledger hunks (wizard/data/vllm/ledger/ledger.jsonl, class b) this
    #: advisory turns into a finding: the fix the hunk ships is this advisory's ``fixed``
    ledger: list[str] = Field(default_factory=list)
    notes: str | None = None

    @field_validator("ledger")
    @classmethod
    def _hunks(cls, v: list[str]) -> list[str]:
        bad = [h for h in v if not _HUNK.match(h)]
        if bad:
            raise ValueError(f"ledger ids are 16 lowercase hex digits (ledger.jsonl 'id'): {bad}")
        return v

    @field_validator("affected")
    @classmethod
    def _affected(cls, v: str) -> str:
        return _check_specifier(v)

    @field_validator("compute_capability")
    @classmethod
    def _cc(cls, v: str | None) -> str | None:
        return None if v is None else _check_specifier(v)

    @field_validator("sources")
    @classmethod
    def _urls(cls, v: list[str]) -> list[str]:
        bad = [u for u in v if not u.startswith("https://")]
        if bad:
            raise ValueError(f"sources must be https URLs: {bad}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "Advisory":
        from wizard.advisories.matcher import validate_condition  # the matcher imports this schema: a real cycle

        if not _ID.match(self.id) or not self.id.startswith(ID_PREFIX[self.family] + "-"):
            raise ValueError(f"id {self.id!r} must be {ID_PREFIX[self.family]}-NNNN for family {self.family!r}")
        validate_condition(self.match)
        kinds = {e.expect for e in self.examples}
        if kinds != {"match", "no_match"}:
            raise ValueError("examples need at least one 'match' and one 'no_match' command")
        spec = SpecifierSet(self.affected)
        for e in self.examples:
            if e.expect == "match" and not spec.contains(Version(e.vllm_version), prereleases=True):
                raise ValueError(f"a 'match' example runs vLLM {e.vllm_version}, outside affected {self.affected!r}")
        if self.fixed.version is not None and spec.contains(Version(self.fixed.version), prereleases=True):
            raise ValueError(f"fixed.version {self.fixed.version} lies inside affected {self.affected!r}")
        if self.fix.upgrade and spec.contains(Version(self.fix.upgrade), prereleases=True):
            raise ValueError(f"fix.upgrade {self.fix.upgrade} lies inside affected {self.affected!r}")
        if self.compute_capability and self.platforms and "cuda" not in self.platforms:
            raise ValueError("compute_capability applies to the cuda platform only")
        if not self.fields:
            raise ValueError("fields: name at least one ServeConfig path the finding concerns")
        return self

    @property
    def primary_source(self) -> str:
        return self.sources[0]
