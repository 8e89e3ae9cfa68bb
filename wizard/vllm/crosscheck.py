"""The wizard's verdict beside vLLM's own (:mod:`wizard.vllm.oracle`): ``wizard check --with-vllm``.

    from wizard.vllm.crosscheck import cross_check
    cc = cross_check(cfg, report, timeout=180)      # report = wizard.api.check(cfg, ...)
    print(cc.render_text()); cc.as_json()

Only config-time rules (``phase`` in :data:`CONFIG_PHASES`) are compared with vLLM's
``create_engine_config``: errors the wizard predicts for load or run time are listed apart, since
vLLM's config check cannot see them. A rejection that is about this host rather than the
configuration (see :func:`wizard.vllm.oracle.host_reason`) is 'unavailable', never a disagreement.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from wizard.config import ServeConfig
from wizard.rules.registry import get_rule
from wizard.vllm.oracle import NOT_INSTALLED_PREFIX, VllmOracle, VllmVerdict, cannot_validate_message, engine_kwargs, get_oracle, vllm_unavailable_reason

__all__ = ["CrossCheck", "cross_check", "compare", "rule_phase", "CONFIG_PHASES"]

#: rule phases whose errors vLLM's create_engine_config must agree with
CONFIG_PHASES = ("config",)


@dataclass
class CrossCheck:
    """The wizard's verdict beside vLLM's.

    ``agreement``: 'agree' | 'wizard_only' (the wizard reports a config-time error, vLLM accepts)
    | 'vllm_only' (vLLM rejects, no config-time rule fired) | 'unavailable'.
    ``wizard_config_errors``: error findings of config-time rules; ``wizard_later_errors``: errors
    the wizard predicts for load/run time (vLLM's config check cannot see those).
    """

    agreement: str
    vllm: VllmVerdict
    wizard_verdict: str
    wizard_config_errors: list[dict[str, Any]]
    wizard_later_errors: list[dict[str, Any]]
    engine_kwargs: dict[str, Any]
    env: dict[str, str]
    note: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"agreement": self.agreement, "vllm": self.vllm.as_json(), "wizard_verdict": self.wizard_verdict,
                "wizard_config_errors": self.wizard_config_errors, "wizard_later_errors": self.wizard_later_errors,
                "engine_kwargs": self.engine_kwargs, "env": self.env, "note": self.note}

    def render_text(self) -> str:
        v = self.vllm
        head = f"\n== vLLM cross-check{_header(v)} ==\n"
        if self.agreement == "unavailable":
            if (v.message or "").startswith("vLLM cannot validate on this host"):
                return head + f"{v.message}\n"
            return head + f"vLLM's own check did not run: {v.message}\n"
        ids = ", ".join(f["rule"] for f in self.wizard_config_errors)
        if self.agreement == "agree" and v.rejected:
            body = f"vLLM also rejects this: {v.exc_type}: {v.short_message()}\n"
        elif self.agreement == "agree":
            r = v.resolved
            body = (f"vLLM also accepts this (config time): method={r.get('method')}, k={r.get('num_speculative_tokens')}, "
                    f"kv={r.get('cache_dtype')}, async_scheduling={r.get('async_scheduling')}.\n")
            if self.wizard_later_errors:
                body += ("The wizard's errors (" + ", ".join(f["rule"] for f in self.wizard_later_errors) +
                         ") are load/run-time failures, which vLLM's config check cannot see.\n")
        else:
            kind = ("the wizard reports an error that vLLM accepts" if self.agreement == "wizard_only"
                    else "vLLM rejects this but no wizard rule caught it")
            body = (f"!! DISAGREEMENT: {kind}.\n"
                    f"   wizard: {self.wizard_verdict}{' (' + ids + ')' if ids else ''}\n"
                    f"   vLLM:   {v.verdict}{': ' + str(v.exc_type) + ': ' + v.short_message() if v.rejected else ''}\n"
                    "   Please file it with this data:\n"
                    f"   engine_kwargs = {json.dumps(self.engine_kwargs, default=str)}\n"
                    f"   env = {json.dumps(self.env)}\n")
        if self.note:
            body += self.note + "\n"
        return head + body


def _header(v: VllmVerdict) -> str:
    """What the cross-check ran on: "(0.32.0, platform cpu)", or what is known instead of
    question marks (": vLLM not installed" when there is no vLLM to run)."""
    if v.vllm_version:
        return f" ({v.vllm_version}, platform {v.platform or 'unknown'})"
    if (v.message or "").startswith(NOT_INSTALLED_PREFIX):
        return ": vLLM not installed"
    return ": vLLM did not report its version"


def rule_phase(rule_id: str) -> str:
    """'parse' | 'config' | 'load' | 'run' | 'plan' | '' for a rule id: the rule's ``phase``
    ('' for an unknown id)."""
    try:
        return get_rule(rule_id).phase
    except KeyError:
        return ""


def agreement_hint(report) -> bool:
    """True unless the report already shows CPU-platform reasoning (a finding mentioning the CPU platform)."""
    return not any("CPU platform" in f.message for f in report.findings)


def compare(report, verdict: VllmVerdict, kwargs: dict[str, Any] | None = None, env: dict[str, str] | None = None,
            target_platform: str | None = None) -> CrossCheck:
    """Classify a wizard report against a vLLM verdict (see :class:`CrossCheck`).

    ``target_platform``: the platform the report was made for ('cpu' for ``gpu='cpu'``, else
    'cuda'/None). A rejection by a platform hook of a *different* platform than the target
    (``host_reason == 'platform'``) becomes 'unavailable' ("vLLM cannot validate on this host")."""
    if (verdict.rejected and verdict.host_reason == "platform"
            and (target_platform or "").lower() != (verdict.platform or "").lower()):
        verdict = VllmVerdict(**{**verdict.__dict__, "verdict": "unavailable"})
        verdict.message = cannot_validate_message(verdict)
    errs = [f for f in report.findings if f.severity.value == "error"]
    cfg_errs = [f.as_json() for f in errs if rule_phase(f.rule) in CONFIG_PHASES]
    later = [f.as_json() for f in errs if rule_phase(f.rule) not in CONFIG_PHASES and rule_phase(f.rule) != "parse"]
    parse = [f for f in errs if rule_phase(f.rule) == "parse"]
    note = None
    if parse:
        note = ("Note: " + ", ".join(f.rule for f in parse) + " concern how the command is written (vLLM's argument "
                "parser); the cross-check ran vLLM on what the wizard understood.")
    if (verdict.platform or "").lower() == "cpu" and agreement_hint(report):
        note = ((note + "\n") if note else "") + (
            "Note: vLLM validated with its CPU platform (V1 runner, async scheduling off); the wizard's "
            "hardware-dependent rules follow --gpu, so use --gpu cpu to compare like with like.")
    if verdict.verdict not in ("accepted", "rejected"):
        agreement = "unavailable"
    elif bool(cfg_errs) == verdict.rejected:
        agreement = "agree"
    else:
        agreement = "wizard_only" if cfg_errs else "vllm_only"
    return CrossCheck(agreement, verdict, report.verdict, cfg_errs, later, kwargs or {}, env or {}, note)


def cross_check(cfg: ServeConfig, report, timeout: float = 180.0, oracle: VllmOracle | None = None,
                gpu: str | None = None) -> CrossCheck:
    """Run vLLM's own config construction for ``cfg`` and compare with ``report``.

    Never raises for vLLM problems: without vLLM, when the worker fails, or when vLLM cannot
    build a config on this host (see :func:`host_reason`), the result has agreement
    'unavailable' and a one-line reason. ``gpu``: the hardware the report was made for
    (``'cpu'`` compares platform checks of a CPU host like for like).
    """
    kw, env = engine_kwargs(cfg)
    reason = vllm_unavailable_reason()
    if reason:
        verdict = VllmVerdict("unavailable", message=reason)
    else:
        verdict = (oracle or get_oracle()).check_kwargs(kw, env, timeout)
    target = "cpu" if str(gpu or "").strip().lower() == "cpu" else None
    return compare(report, verdict, kw, env, target_platform=target)
