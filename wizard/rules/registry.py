"""Rule, Finding and the registry every face shares.

A rule is a small class (one per concern) with its id, title, severity, the vLLM versions
it applies to, its docs (why it matters, a bad and a good example, the vLLM source or public
report behind it) and a ``check(ctx)`` that yields findings. Rules read only the
:class:`~wizard.context.CheckContext`; they never parse argv, touch the UI or start processes.

Examples in each rule's docs are commands (``vllm serve ...``) run by
``tests/test_rule_examples.py``: the bad one must trigger the rule, the good one must not.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Iterator

from pydantic import BaseModel, ConfigDict, Field

from wizard.config import Patch

if TYPE_CHECKING:  # pragma: no cover
    from wizard.context import CheckContext

__all__ = ["Severity", "Finding", "Rule", "register", "all_rules", "get_rule", "Fix"]

Fix = Patch


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


class Finding(BaseModel):
    """One diagnosis: which rule, how bad, what to read, which fields, how to fix.

    ``fields`` are dotted paths into ServeConfig ('kv_sharing_fast_prefill',
    'speculative_config.kv_cache_dtype'). Each fix is a Patch that, applied, removes this
    finding without creating a new error.
    """

    model_config = ConfigDict(extra="forbid")

    rule: str
    severity: Severity
    title: str
    message: str
    fields: list[str] = Field(default_factory=list)
    fixes: list[Patch] = Field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "title": self.title,
            "message": self.message,
            "fields": list(self.fields),
            "fixes": [f.as_json() for f in self.fixes],
        }


class Rule:
    """Base class of every rule. Subclass, set the class attributes, implement ``check``.

    Class attributes:
        id: stable id, e.g. 'SD001'.
        title: one line.
        severity: default severity of its findings.
        versions: PEP 440 specifier of vLLM versions it applies to ('' = all).
        fields: dotted paths it concerns.
        topic: family (method, drafter, kv_cache, mtp, parallel, scheduling, cli_syntax, memory...).
        why: why it matters (markdown).
        bad / good: example `vllm serve ...` commands (catalog ids or ngram so they run offline).
        example_gpu: optional NAME[xN] used when running the examples.
        example_version: optional vLLM version used when running the examples.
        example_hardware: optional :class:`~wizard.hardware.Hardware` field overrides applied on
            top of ``example_gpu``'s catalog entry when running the examples, for facts only NVML
            discovery gives (e.g. ``{"used_bytes": 40 << 30}``: 40 GiB held by other processes).
        example_models: local model folders the examples use, relative path ->
            {"config": config.json dict, "tensors": {name: shape}}; the examples test writes
            them (tests/factory.py make_model_dir) into the folder the commands run in, so an
            example can say `--speculative-config '{"model":"./eagle3-own-embed",...}'`.
        phase: when vLLM catches it: 'parse' (argparse), 'config' (create_engine_config),
            'load' (weights / attention backend), 'run' (serving, acceptance), 'plan', or ''.
        source: the vLLM file and version mirrored, or the public report(s).
        fix_safety: 'safe' (behaviour-preserving) or 'unsafe' (changes what is served) + a sentence.
    """

    id: ClassVar[str] = ""
    title: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.ERROR
    versions: ClassVar[str] = ""
    fields: ClassVar[tuple[str, ...]] = ()
    topic: ClassVar[str] = ""
    why: ClassVar[str] = ""
    bad: ClassVar[str] = ""
    good: ClassVar[str] = ""
    example_gpu: ClassVar[str | None] = None
    example_version: ClassVar[str | None] = None
    example_hardware: ClassVar[dict[str, Any]] = {}
    example_models: ClassVar[dict[str, dict[str, Any]]] = {}
    phase: ClassVar[str] = ""
    source: ClassVar[str] = ""
    fix_safety: ClassVar[str] = ""

    def check(self, ctx: "CheckContext") -> Iterable[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    def finding(
        self,
        message: str,
        fields: Iterable[str] | None = None,
        fixes: Iterable[Patch] = (),
        severity: Severity | None = None,
        title: str | None = None,
    ) -> Finding:
        """Build a Finding of this rule (defaults: the rule's severity, title and fields)."""
        return Finding(
            rule=self.id,
            severity=severity or self.severity,
            title=title or self.title,
            message=message,
            fields=list(fields if fields is not None else self.fields),
            fixes=list(fixes),
        )

    @classmethod
    def docs(cls) -> dict[str, Any]:
        return {
            "id": cls.id,
            "title": cls.title,
            "severity": cls.severity.value,
            "versions": cls.versions or "all",
            "fields": list(cls.fields),
            "topic": cls.topic,
            "why": cls.why.strip(),
            "bad": cls.bad.strip(),
            "good": cls.good.strip(),
            "source": cls.source.strip(),
            "fix_safety": cls.fix_safety.strip(),
            "phase": cls.phase,
            "example_hardware": dict(cls.example_hardware),
            "example_models": {k: v for k, v in cls.example_models.items()},
        }


_REGISTRY: dict[str, Rule] = {}


def register(cls: type[Rule]) -> type[Rule]:
    """Class decorator: instantiate and register a rule. Raises ValueError on a duplicate id."""
    if not cls.id:
        raise ValueError(f"{cls.__name__} has no id")
    if cls.id in _REGISTRY and type(_REGISTRY[cls.id]) is not cls:
        raise ValueError(f"duplicate rule id {cls.id}: {cls.__name__} and {type(_REGISTRY[cls.id]).__name__}")
    _REGISTRY[cls.id] = cls()
    return cls


def _load_all() -> None:
    import importlib
    import pkgutil

    import wizard.rules as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name not in ("registry",) and not mod.name.startswith("_"):
            importlib.import_module(f"wizard.rules.{mod.name}")


def all_rules() -> list[Rule]:
    """Every registered rule, sorted by id (rule modules are imported on first call)."""
    if not _REGISTRY:
        _load_all()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def get_rule(rule_id: str) -> Rule:
    """Raises KeyError with the list of ids when unknown."""
    all_rules()
    try:
        return _REGISTRY[rule_id]
    except KeyError:
        raise KeyError(f"unknown rule {rule_id!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def iter_findings(ctx: "CheckContext") -> Iterator[Finding]:
    """Run every rule that applies to ``ctx.version``; a crashing rule becomes an internal finding."""
    for rule in all_rules():
        if not ctx.version.matches(rule.versions):
            continue
        try:
            yield from rule.check(ctx) or ()
        except Exception as exc:  # a rule bug must never take the check down
            yield Finding(
                rule=rule.id,
                severity=Severity.WARNING,
                title=f"internal error in rule {rule.id}",
                message=f"rule {rule.id} failed: {type(exc).__name__}: {exc}. Please report it.",
                fields=list(rule.fields),
            )
