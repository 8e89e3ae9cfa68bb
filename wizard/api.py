"""The one entry point every face calls: load -> resolve -> rules -> report.

    from wizard.api import load, check
    cfg = load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{...}'")
    report = check(cfg, gpu="H100x1")
    report.verdict, report.findings, report.command

Faces (CLI, Gradio UI, notebook, launcher) hold no rule logic: they call these functions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field

from wizard.advisories import advisory_findings
from wizard.config import ConfigError, Patch, ServeConfig, apply_patch, config_from_dict
from wizard.context import CheckContext, resolve_context
from wizard.hardware.catalog import parse_gpu_spec
from wizard.hardware.spec import Hardware
from wizard.io.argv import parse_command
from wizard.io.export import to_command
from wizard.io.safeio import MAX_YAML_CONFIG_BYTES, InputRefused, read_text_file
from wizard.io.yaml_config import parse_yaml
from wizard.rules.registry import Finding, Severity, iter_findings
from wizard.vllm.versions import VllmVersion, default_version, parse_version

__all__ = ["Report", "load", "check", "check_context", "fix_all", "ConfigError"]


class Report(BaseModel):
    """Result of a check. ``verdict``: 'error' if any error finding, else 'warning' if any
    warning, else 'ok'. ``command``: the normalised `vllm serve` command (JSON form)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    verdict: str
    vllm_version: str
    findings: list[Finding] = Field(default_factory=list)
    command: str = ""

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == Severity.ERROR]

    def as_json(self) -> dict[str, Any]:
        """The CLI's stable JSON shape (see README: `wizard check --format json`)."""
        return {
            "verdict": self.verdict,
            "vllm_version": self.vllm_version,
            "findings": [f.as_json() for f in self.findings],
            "command": self.command,
        }


def load(
    *,
    command: str | Sequence[str] | None = None,
    config_file: str | Path | None = None,
    yaml_text: str | None = None,
    data: dict[str, Any] | None = None,
) -> ServeConfig:
    """Build a ServeConfig from exactly one source.

    Args:
        command: a `vllm serve MODEL ...` command line (string, shell-quoted) or argv list.
        config_file: path of a YAML file for `vllm serve --config` (may hold `model:`).
        yaml_text: the same YAML as text.
        data: a plain dict of options (Python API style).

    Raises:
        ConfigError: unusable input (no model, unreadable file, not YAML); the message names the field.
    """
    given = [x is not None for x in (command, config_file, yaml_text, data)]
    if sum(given) != 1:
        raise ConfigError("give exactly one of: a vllm serve command, --config FILE, YAML text or a dict")
    if command is not None:
        return parse_command(command)
    if config_file is not None:
        p = Path(config_file)
        try:
            text = read_text_file(p, limit=MAX_YAML_CONFIG_BYTES, what="--config")
        except InputRefused as err:
            raise ConfigError(f"config: {err}", field="config") from None
        except OSError as err:
            raise ConfigError(f"config: --config {p}: cannot read file ({err.strerror or err})", field="config") from None
        except ValueError as err:  # e.g. a NUL byte in the path
            raise ConfigError(f"config: --config {p!r}: not a usable path ({err})", field="config") from None
        return parse_yaml(text, source=str(p))
    if yaml_text is not None:
        return parse_yaml(yaml_text)
    return config_from_dict(data)  # type: ignore[arg-type]


def _version(v: VllmVersion | str | None) -> VllmVersion:
    if v is None:
        return default_version()
    if isinstance(v, VllmVersion):
        return v
    return parse_version(v)


def _hardware(gpu: Hardware | str | None) -> Hardware | None:
    if gpu is None or isinstance(gpu, Hardware):
        return gpu
    return parse_gpu_spec(gpu)


def check_context(ctx: CheckContext) -> Report:
    """Run every applicable rule and advisory (wizard.advisories) on a resolved context."""
    findings = sorted([*iter_findings(ctx), *advisory_findings(ctx)], key=lambda f: (f.severity.rank, f.rule, f.fields))
    if any(f.severity == Severity.ERROR for f in findings):
        verdict = "error"
    elif any(f.severity == Severity.WARNING for f in findings):
        verdict = "warning"
    else:
        verdict = "ok"
    try:
        command = to_command(ctx.config)
    except Exception as err:  # export must never hide the findings
        command = f"# could not export: {err}"
    return Report(verdict=verdict, vllm_version=str(ctx.version), findings=findings, command=command)


def check(
    config: ServeConfig,
    *,
    vllm_version: VllmVersion | str | None = None,
    gpu: Hardware | str | None = None,
    allow_hub: bool = True,
) -> Report:
    """Check ``config`` against every rule for ``vllm_version`` (default: installed/newest) and
    ``gpu`` (e.g. 'H100x2'; None = unknown hardware, hardware rules stay quiet).

    Raises:
        ValueError: bad --vllm-version; HardwareError (a ValueError): unknown GPU name.
    """
    ctx = resolve_context(config, _version(vllm_version), _hardware(gpu), allow_hub=allow_hub)
    return check_context(ctx)


def fix_all(
    config: ServeConfig,
    *,
    vllm_version: VllmVersion | str | None = None,
    gpu: Hardware | str | None = None,
    max_rounds: int = 8,
    allow_hub: bool = True,
) -> tuple[ServeConfig, list[Patch], Report]:
    """Apply the first fix of each error finding, re-checking after each, until no error
    with a fix remains (at most ``max_rounds`` patches). Returns (config, applied, report).
    ``allow_hub=False`` (CLI ``--offline``): no check, first or after a fix, contacts the Hub."""
    applied: list[Patch] = []
    report = check(config, vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub)
    seen: set[str] = set()
    for _ in range(max_rounds):
        candidates = [f for f in report.errors if f.fixes and f"{f.rule}:{f.fields}" not in seen]
        if not candidates:
            break
        f = candidates[0]
        seen.add(f"{f.rule}:{f.fields}")
        config = apply_patch(config, f.fixes[0])
        applied.append(f.fixes[0])
        report = check(config, vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub)
    return config, applied, report
