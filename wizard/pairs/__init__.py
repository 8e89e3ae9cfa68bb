"""Prefill/decode pairs: two ``vllm serve`` configurations joined by a KV connector
(``--kv-transfer-config``), checked as a pair.

    from wizard.pairs import check_pair
    report = check_pair(prefill_cfg, decode_cfg, vllm_version="0.32", gpu="H200x8")
    report.verdict, report.findings          # PairFinding: rule, severity, message, fields per side, fixes per side

Each side is first checked on its own (every rule of :mod:`wizard.rules`, reported under its side),
then every *pair rule* runs on the two resolved :class:`~wizard.context.CheckContext` objects.
A pair rule is one small module here, ``sd79N_<name>.py`` (ids SD790-SD799, kept free in
``wizard/rules``), with the same docstring sections as a rule (What it does / Why it matters /
Example / Use instead / Fix safety / Source); ``Example`` and ``Use instead`` each hold two
``sh`` blocks, prefill first. Its cases are ``tests/pairs/SD79N.yml`` (``prefill`` / ``decode``
commands, ``fail`` or ``pass``; run by ``tests/test_pairs.py``). A fix names the side it patches
(``PairFix.side``) and is an ordinary :class:`~wizard.config.Patch` on that side's config.

Pair rules read only the two contexts (``ctx.view``, ``ctx.method``, the KV dtypes); the KV
connector facts they share are in :mod:`wizard.pairs.connector`.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any, ClassVar, Iterator

from pydantic import BaseModel, ConfigDict, Field

from wizard import api
from wizard.config import Patch, ServeConfig, apply_patch
from wizard.context import CheckContext
from wizard.rules.registry import SECTIONS, Severity
from wizard.vllm.versions import VllmVersion

__all__ = ["SIDES", "PairFix", "PairFinding", "PairReport", "PairRule", "register", "pair_rules", "check_pair",
           "check_pair_contexts", "apply_pair_fix"]

SIDES = ("prefill", "decode")


class PairFix(BaseModel):
    """A fix of a pair finding: a Patch on one side's configuration."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    side: str
    patch: Patch

    @property
    def description(self) -> str:
        return f"{self.side}: {self.patch.description}"


class PairFinding(BaseModel):
    """One diagnosis of a pair: ``fields`` maps each side to its dotted ServeConfig paths."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    rule: str
    severity: Severity
    title: str
    message: str
    fields: dict[str, list[str]] = Field(default_factory=dict)
    fixes: list[PairFix] = Field(default_factory=list)


class PairReport(BaseModel):
    """Both sides' own findings (``side`` set) and the pair rules' findings."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)
    verdict: str
    vllm_version: str
    findings: list[PairFinding]

    def as_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "vllm_version": self.vllm_version,
                "findings": [f.model_dump(mode="json") for f in self.findings]}


class PairRule:
    """Base class of a pair rule (see the module docstring)."""

    id: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.ERROR
    versions: ClassVar[str] = ""
    fields: ClassVar[dict[str, tuple[str, ...]]] = {}

    @property
    def title(self) -> str:
        return (type(self).__doc__ or "").strip().splitlines()[0].strip()

    def applies(self, version: VllmVersion) -> bool:
        return version.matches(self.versions)

    def check(self, prefill: CheckContext, decode: CheckContext) -> Iterator[PairFinding]:  # pragma: no cover
        raise NotImplementedError

    def finding(self, message: str, *, fields: dict[str, list[str]] | None = None, fixes: list[PairFix] = (),
                severity: Severity | None = None) -> PairFinding:
        return PairFinding(rule=self.id, severity=severity or self.severity, title=self.title, message=message,
                           fields=fields if fields is not None else {s: list(f) for s, f in self.fields.items()},
                           fixes=list(fixes))

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        """The docstring's ``## Heading`` sections (the rule's documentation)."""
        text = (cls.__doc__ or "")
        out: dict[str, str] = {}
        for part in re.split(r"^\s*## ", text, flags=re.M)[1:]:
            head, _, body = part.partition("\n")
            out[head.strip()] = body
        return out


_REGISTRY: dict[str, PairRule] = {}


def register(cls: type[PairRule]) -> type[PairRule]:
    if not cls.id:
        raise ValueError(f"{cls.__name__} has no id")
    missing = [s for s in SECTIONS if s not in cls.doc_sections()]
    if missing:
        raise ValueError(f"{cls.id}: docstring lacks sections {missing}")
    _REGISTRY[cls.id] = cls()
    return cls


def pair_rules() -> list[PairRule]:
    """Every pair rule, by id (its modules imported on first call)."""
    here = [str(Path(__file__).parent)]
    for m in pkgutil.iter_modules(here):
        if m.name.startswith("sd"):
            importlib.import_module(f"wizard.pairs.{m.name}")
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def check_pair_contexts(prefill: CheckContext, decode: CheckContext) -> PairReport:
    """Each side's own rules, then the pair rules (see the module docstring)."""
    findings: list[PairFinding] = []
    for side, ctx in (("prefill", prefill), ("decode", decode)):
        for f in api.check_context(ctx).findings:
            findings.append(PairFinding(rule=f.rule, severity=f.severity, title=f.title, message=f"{side}: {f.message}",
                                        fields={side: list(f.fields)},
                                        fixes=[PairFix(side=side, patch=p) for p in f.fixes]))
    for rule in pair_rules():
        if not rule.applies(prefill.version):
            continue
        try:
            findings.extend(rule.check(prefill, decode))
        except Exception as exc:  # noqa: BLE001 - a broken pair rule must not hide the others
            findings.append(PairFinding(rule=rule.id, severity=Severity.WARNING, title=rule.title,
                                        message=f"pair rule {rule.id} failed: {type(exc).__name__}: {exc}. Please report it."))
    findings.sort(key=lambda f: (f.severity.rank, f.rule))
    verdict = ("error" if any(f.severity == Severity.ERROR for f in findings)
               else "warning" if any(f.severity == Severity.WARNING for f in findings) else "ok")
    return PairReport(verdict=verdict, vllm_version=str(prefill.version), findings=findings)


def check_pair(prefill: ServeConfig, decode: ServeConfig, *, vllm_version: Any = None, gpu: Any = None,
               allow_hub: bool = True) -> PairReport:
    """Resolve both sides (same release and hardware) and check them as a pair."""
    p = api.resolve(prefill, vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub)
    d = api.resolve(decode, vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub)
    return check_pair_contexts(p, d)


def apply_pair_fix(prefill: ServeConfig, decode: ServeConfig, fix: PairFix) -> tuple[ServeConfig, ServeConfig]:
    """The pair with ``fix`` applied to its side."""
    if fix.side == "prefill":
        return apply_patch(prefill, fix.patch), decode
    return prefill, apply_patch(decode, fix.patch)
