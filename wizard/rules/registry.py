"""Rule, Finding and the registry every face shares.

A rule is a small class, one per module under ``wizard/rules/<family>/sdNNN_<name>.py``: its id,
severity, the vLLM versions it applies to, the fields it concerns, and a ``check(ctx)`` that
yields findings. Rules read only the :class:`~wizard.context.CheckContext`; they never parse
argv, touch the UI or start processes.

The class docstring is the rule's documentation, written once in Ruff's style: a title line
(the rule's ``title``), then the sections of :data:`SECTIONS` as ``## Heading`` blocks. The
``Example`` section holds the command that triggers the rule and ``Use instead`` one that does
not, each in a ```` ```sh ```` block (``\\``-continued lines allowed); ``tests/rules/SDNNN.yml``
runs them with the context they need, plus further cases (``tests/rules/test_rule_cases.py``).
"""

from __future__ import annotations

import enum
import functools
import importlib
import inspect
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Iterable, Iterator

from pydantic import BaseModel, ConfigDict, Field

from wizard.config import Patch
from wizard.context import CheckContext
from wizard.vllm.releases import has_file

__all__ = ["Severity", "Finding", "Rule", "RuleDoc", "SECTIONS", "register", "all_rules", "get_rule", "iter_findings"]

#: The docstring sections of every rule, in order.
SECTIONS = ("What it does", "Why it matters", "Example", "Use instead", "Fix safety", "Source")


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
    #: a Python module the server's interpreter must import for this configuration (e.g.
    #: ``arctic_inference`` for suffix decoding up to 0.33): rules do not probe the machine, the
    #: launcher (which knows the interpreter it starts) makes the finding an error when it cannot
    server_module: str | None = None

    def as_json(self) -> dict[str, Any]:
        out = {
            "rule": self.rule,
            "severity": self.severity.value,
            "title": self.title,
            "message": self.message,
            "fields": list(self.fields),
            "fixes": [f.as_json() for f in self.fixes],
        }
        if self.server_module:
            out["server_module"] = self.server_module
        return out


_SH_BLOCK = re.compile(r"```sh\n(.*?)\n```", re.S)


def sh_commands(markdown: str) -> list[str]:
    """The commands of the ```` ```sh ```` blocks in ``markdown``, ``\\``-continued lines joined."""
    return [" ".join(re.sub(r"\\\n", " ", block).split()) for block in _SH_BLOCK.findall(markdown)]


@dataclass(frozen=True)
class RuleDoc:
    """A rule's docstring, parsed: ``title`` (first line), ``sections`` (heading -> markdown,
    in :data:`SECTIONS` order), ``text`` (the whole docstring, dedented)."""

    title: str
    sections: dict[str, str]
    text: str

    @property
    def example(self) -> str:
        """The first command of the Example section (it triggers the rule); '' if none."""
        return next(iter(sh_commands(self.sections.get("Example", ""))), "")

    @property
    def use_instead(self) -> str:
        """The first command of the Use instead section (it does not trigger the rule); '' if none."""
        return next(iter(sh_commands(self.sections.get("Use instead", ""))), "")

    def prose(self, heading: str) -> str:
        """A section without its ```sh blocks."""
        return re.sub(r"\n{3,}", "\n\n", _SH_BLOCK.sub("", self.sections.get(heading, ""))).strip()


def parse_doc(doc: str | None) -> RuleDoc:
    """Split a rule docstring into title and ``## Heading`` sections (unknown headings are kept)."""
    text = inspect.cleandoc(doc or "")
    title, _, body = text.partition("\n")
    sections: dict[str, str] = {}
    current = None
    for line in body.splitlines():
        m = re.match(r"^## (.+?)\s*$", line)
        if m:
            current = m.group(1)
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    return RuleDoc(title=title.strip(), sections={k: v.strip() for k, v in sections.items()}, text=text)


class Rule:
    """Base class of every rule. Subclass, document it (see the module docstring), set the class
    attributes, implement ``check``.

    Class attributes:
        id: stable id, e.g. 'SD001'; the module is ``sd001_<name>.py`` in the family folder
            one of whose id ranges (its ``__init__``'s ``ID_RANGES``) holds it.
        title: one line; the docstring's first line unless set.
        severity: default severity of its findings.
        versions: PEP 440 specifier of vLLM versions it applies to ('' = all).
        tables: generated data files (``wizard/data/vllm/<X.Y>/``) the rule judges by; it applies
            only to a release that has its own copy of each (a release without one would be
            judged by another release's table: SD403 says so instead).
        fields: dotted paths it concerns.
        phase: when vLLM catches it: 'parse' (argparse), 'config' (create_engine_config),
            'load' (weights / attention backend), 'run' (serving, acceptance), 'plan', or ''.
    """

    id: ClassVar[str] = ""
    title: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.ERROR
    versions: ClassVar[str] = ""
    tables: ClassVar[tuple[str, ...]] = ()
    fields: ClassVar[tuple[str, ...]] = ()
    phase: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "title" not in cls.__dict__ and cls.__doc__:
            # the docstring's first line, as parse_doc gives it (without parsing the sections:
            # 127 rules are defined on every cold start)
            cls.title = cls.__doc__.lstrip().partition("\n")[0].strip()

    @property
    def family(self) -> str:
        """The rule's family: the folder of its module, ``wizard.rules.<family>.sdNNN_<name>``
        ('' for a rule defined elsewhere)."""
        parts = type(self).__module__.split(".")
        return parts[2] if len(parts) == 4 and parts[:2] == ["wizard", "rules"] else ""

    @classmethod
    @functools.cache
    def doc(cls) -> RuleDoc:
        """The parsed docstring."""
        return parse_doc(cls.__doc__)

    def check(self, ctx: CheckContext) -> Iterable[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    def finding(
        self,
        message: str,
        fields: Iterable[str] | None = None,
        fixes: Iterable[Patch] = (),
        severity: Severity | None = None,
        title: str | None = None,
        server_module: str | None = None,
    ) -> Finding:
        """Build a Finding of this rule (defaults: the rule's severity, title and fields)."""
        return Finding(
            rule=self.id,
            severity=severity or self.severity,
            title=title or self.title,
            message=message,
            fields=list(fields if fields is not None else self.fields),
            fixes=list(fixes),
            server_module=server_module,
        )


_REGISTRY: dict[str, Rule] = {}
_SORTED: list[Rule] = []  # _REGISTRY's rules by id, rebuilt when a rule is registered


def register(cls: type[Rule]) -> type[Rule]:
    """Class decorator: instantiate and register a rule. Raises ValueError on a duplicate id."""
    if not cls.id:
        raise ValueError(f"{cls.__name__} has no id")
    if cls.id in _REGISTRY and type(_REGISTRY[cls.id]) is not cls:
        raise ValueError(f"duplicate rule id {cls.id}: {cls.__name__} and {type(_REGISTRY[cls.id]).__name__}")
    _REGISTRY[cls.id] = cls()
    _SORTED.clear()
    return cls


def rule_modules() -> list[str]:
    """Dotted names of every rule module (``wizard.rules.<family>.sdNNN_<name>``: each ``.py`` of a
    family package, the folders of ``wizard/rules`` with an ``__init__.py``), sorted."""
    out = []
    with os.scandir(Path(__file__).parent) as families:
        for fam in families:
            if not fam.is_dir() or not os.path.isfile(os.path.join(fam.path, "__init__.py")):
                continue
            with os.scandir(fam.path) as files:
                out.extend(f"wizard.rules.{fam.name}.{f.name[:-3]}" for f in files
                           if f.name.endswith(".py") and f.name != "__init__.py" and f.name[:-3].isidentifier())
    return sorted(out)


_LOADED: list[bool] = []  # set once every rule module has been imported


def _load_all() -> None:
    for name in rule_modules():
        importlib.import_module(name)
    _LOADED.append(True)


def all_rules() -> list[Rule]:
    """Every registered rule, sorted by id (rule modules are imported on first call; a rule module
    imported on its own before that, e.g. for its docs, does not stand for the whole set)."""
    if not _LOADED:
        _load_all()
    if len(_SORTED) != len(_REGISTRY):
        _SORTED[:] = [_REGISTRY[k] for k in sorted(_REGISTRY)]
    return list(_SORTED)


def get_rule(rule_id: str) -> Rule:
    """Raises KeyError with the list of ids when unknown."""
    all_rules()
    try:
        return _REGISTRY[rule_id]
    except KeyError:
        raise KeyError(f"unknown rule {rule_id!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def iter_findings(ctx: CheckContext) -> Iterator[Finding]:
    """Run every rule that applies to ``ctx.version``; a crashing rule becomes an internal finding,
    and so does a mechanism (:mod:`wizard.mechanisms.apply`) that raised while a rule read it:
    the rule would otherwise go silent."""
    for rule in all_rules():
        if not ctx.version.matches(rule.versions) or not all(has_file(ctx.version.short, t) for t in rule.tables):
            continue
        seen = set(ctx.mechanism_errors)
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
        for name in [n for n in ctx.mechanism_errors if n not in seen]:
            yield Finding(
                rule=rule.id,
                severity=Severity.WARNING,
                title=f"internal error in mechanism {name}",
                message=(f"mechanism {name!r} failed ({ctx.mechanism_errors[name]}), so rule {rule.id} could not "
                         "check this configuration. Please report it."),
                fields=list(rule.fields),
            )
