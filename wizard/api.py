"""The one entry point every face calls: load -> resolve -> rules -> report.

    from wizard.api import load, check
    cfg = load(command="vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config '{...}'")
    report = check(cfg, gpu="H100x1")
    report.verdict, report.findings, report.command

Faces (CLI, Gradio UI, notebook, launcher) hold no rule logic: they call these functions.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from wizard.advisories import advisory_findings
from wizard.config import ConfigError, Patch, ServeConfig, apply_patch, config_from_dict
from wizard.context import CheckContext, resolve_context
from wizard.engine.abbreviations import written_fix
from wizard.hardware.catalog import parse_gpu_spec
from wizard.hardware.spec import Hardware
from wizard.io.argv import parse_command
from wizard.io.export import to_command
from wizard.io.safeio import MAX_YAML_CONFIG_BYTES, InputRefused, read_text_file
from wizard.io.yaml_config import config_file_args, parse_yaml
from wizard.mechanisms import apply as mechanisms
from wizard.plan.acceptance import TASKS as PLAN_TASKS  # the tasks plan(task=...) takes
from wizard.plan.acceptance import AcceptanceInputError, rising
from wizard.plan.planner import Plan
from wizard.plan.planner import plan as _plan
from wizard.rules.registry import Finding, Severity, iter_findings
from wizard.vllm.versions import VllmVersion, default_version, parse_version

if TYPE_CHECKING:
    from wizard.suggest import Suggestions

__all__ = ["Report", "load", "resolve", "check", "check_context", "explain", "export", "fix_all", "suggest", "ConfigError", "long_form",
           "plan", "PLAN_TASKS", "speedup_chart_rows", "tune"]


class Report(BaseModel):
    """Result of a check. ``verdict``: 'error' if any error finding, else 'warning' if any
    warning, else 'ok'. ``command``: the normalised `vllm serve` command (JSON form)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    verdict: str
    vllm_version: str
    findings: list[Finding] = Field(default_factory=list)
    command: str = ""
    #: the long form vLLM builds when it rewrites the command: a speculators checkpoint given as the
    #: model (verifier as --model, the checkpoint as speculative_config.model) or abbreviated --spec-*
    #: shorthands or other abbreviated options (wizard.engine.abbreviations); "" otherwise
    long_command: str = ""
    #: what the long form rewrote (the text report's heading reads them): the model as written when
    #: it was a speculators checkpoint, and the abbreviated options as written (``max_model_l``)
    speculators_checkpoint: str | None = None
    verifier: str | None = None
    abbreviations: list[str] = Field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == Severity.ERROR]

    def as_json(self) -> dict[str, Any]:
        """The CLI's stable JSON shape (see README: `wizard check --format json`)."""
        out = {
            "verdict": self.verdict,
            "vllm_version": self.vllm_version,
            "findings": [f.as_json() for f in self.findings],
            "command": self.command,
        }
        if self.long_command:
            out["long_command"] = self.long_command
        return out


def load(
    *,
    command: str | Sequence[str] | None = None,
    config_file: str | Path | None = None,
    yaml_text: str | None = None,
    data: dict[str, Any] | None = None,
    read_config_files: bool = False,
) -> ServeConfig:
    """Build a ServeConfig from exactly one source.

    Args:
        command: a `vllm serve MODEL ...` command line (string, shell-quoted) or argv list.
        config_file: path of a YAML file for `vllm serve --config` (may hold `model:`).
        yaml_text: the same YAML as text.
        data: a plain dict of options (Python API style).
        read_config_files: let ``command`` name a ``--config FILE`` that is read and spliced in as
            vLLM does (the CLI; faces that import pasted text keep it off).

    Raises:
        ConfigError: unusable input (no model, unreadable file, not YAML); the message names the field.
    """
    given = [x is not None for x in (command, config_file, yaml_text, data)]
    if sum(given) != 1:
        raise ConfigError("give exactly one of: a vllm serve command, --config FILE, YAML text or a dict")
    if command is not None:
        return parse_command(command, config_file=config_file_args if read_config_files else None)
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
    if ctx.abbreviated:  # fixes apply to the configuration as written: they drop the abbreviation too
        findings = [f.model_copy(update={"fixes": [written_fix(p, ctx.abbreviated, ctx.config, ctx.written_config) for p in f.fixes]})
                    for f in findings]
    if any(f.severity == Severity.ERROR for f in findings):
        verdict = "error"
    elif any(f.severity == Severity.WARNING for f in findings):
        verdict = "warning"
    else:
        verdict = "ok"
    written = ctx.written_config or ctx.config
    try:
        command = to_command(written)
        long_command = to_command(ctx.config) if ctx.written_config is not None else ""
    except Exception as err:  # export must never hide the findings
        command, long_command = f"# could not export: {err}", ""
    checkpoint = written.model if ctx.written_config is not None and written.model != ctx.config.model else None
    return Report(verdict=verdict, vllm_version=str(ctx.version), findings=findings, command=command,
                  long_command=long_command, speculators_checkpoint=checkpoint,
                  verifier=ctx.config.model if checkpoint else None,
                  abbreviations=sorted({p.split(".", 1)[1] for p in ctx.abbreviated.values()}))


def long_form(
    config: ServeConfig,
    *,
    vllm_version: VllmVersion | str | None = None,
    allow_hub: bool = True,
) -> ServeConfig:
    """``config`` in the long form vLLM builds from it: a speculators checkpoint given as the model
    becomes ``--model <verifier>`` with the checkpoint as ``speculative_config.model``, its method
    and k (:mod:`wizard.engine.speculators`, per release). Any other config is returned as is
    (also when the release refuses the checkpoint: the check says why)."""
    ctx = resolve_context(config, _version(vllm_version), None, allow_hub=allow_hub)
    return ctx.config


def resolve(
    config: ServeConfig,
    *,
    vllm_version: VllmVersion | str | None = None,
    gpu: Hardware | str | None = None,
    allow_hub: bool = True,
    path_allowed: Callable[[str], bool] | None = None,
) -> CheckContext:
    """The resolved context of ``config`` (models inspected, version and hardware parsed): what
    :func:`check_context` and :func:`suggest` read. ``path_allowed``: a face's folder policy
    (:meth:`wizard.security.PathPolicy.allows`); refused local paths are not read at all.

    Raises:
        ValueError: bad --vllm-version; HardwareError (a ValueError): unknown GPU name.
    """
    return resolve_context(config, _version(vllm_version), _hardware(gpu), allow_hub=allow_hub,
                           path_allowed=path_allowed)


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
    return check_context(resolve(config, vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub))


def suggest(
    config: ServeConfig | CheckContext,
    *,
    vllm_version: VllmVersion | str | None = None,
    gpu: Hardware | str | None = None,
    allow_hub: bool = True,
) -> "Suggestions":
    """What fits ``config`` (:mod:`wizard.suggest`): methods for its target, catalog drafters,
    the k range, KV-cache dtypes with the attention backend each gets on ``gpu``, and the
    backends of target and drafter. A resolved :class:`CheckContext` is used as is.

    Raises:
        ValueError: bad --vllm-version; HardwareError (a ValueError): unknown GPU name.
    """
    ctx = config if isinstance(config, CheckContext) else resolve(config, vllm_version=vllm_version, gpu=gpu,
                                                                   allow_hub=allow_hub)
    from wizard.suggest import suggest as _suggest  # the suggestion tables: not part of a check

    return _suggest(ctx)


def explain(
    config: ServeConfig,
    *,
    vllm_version: VllmVersion | str | None = None,
    gpu: Hardware | str | None = None,
    allow_hub: bool = True,
) -> dict[str, Any]:
    """What vLLM will do with ``config`` on this release and GPU, mechanism by mechanism, as plain
    JSON (``wizard.mechanisms.apply.explain``): the runner and proposer, the attention backend the
    target and the drafter each get (or why none fits), the KV-cache groups, CUDA-graph coverage,
    the drafter context and the drafter's quantization, plus ``unknown`` (facts not computed and
    why). The "why did nothing fire" view; never raises for a config that :func:`check` accepts.

    Raises:
        ValueError: bad --vllm-version; HardwareError (a ValueError): unknown GPU name.
    """
    return mechanisms.explain(resolve(config, vllm_version=vllm_version, gpu=gpu, allow_hub=allow_hub))


def export(config: ServeConfig, to: str = "command", *, vllm_version: VllmVersion | str | None = None, **opts: Any) -> str:
    """``config`` written in the form ``to`` (:func:`wizard.io.forms.export`: ``command``, ``dotted``,
    ``yaml``, ``python`` and the scale-out manifests; ``opts`` go to the latter).

    Raises:
        KeyError: unknown form. ValueError: bad ``vllm_version``.
    """
    from wizard.io.forms import export as _export  # the writers and manifests: not part of a check

    return _export(config, to, vllm_version=vllm_version, **opts)


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


# ---- plan and tune (faces: the UI's Plan step and Launch step's Tune section, the notebook) -------------

def plan(
    config: ServeConfig | CheckContext,
    *,
    vllm_version: VllmVersion | str | None = None,
    gpu: Hardware | str | None = None,
    allow_hub: bool = False,
    kv_cache_space_gib: float | None = None,
    acceptance: Sequence[float] | None = None,
    acceptance_kind: str = "cumulative",
    acceptance_source: str | None = None,
    tune_result: dict[str, Any] | str | Path | None = None,
    context_tokens: int | None = None,
    baseline_tpot_ms: float | None = None,
    baseline_batch: int | None = None,
    k_max: int = 8,
    task: str | None = None,
    report: Report | None = None,
) -> Plan:
    """The memory and speed-up plan (:func:`wizard.plan.planner.plan`) for ``config`` on ``gpu``.

    ``acceptance``: per-position rates ('cumulative' as vLLM reports them, or 'conditional');
    ``tune_result``: a ``wizard tune`` result (dict or tune.json path) whose measured acceptance
    and baseline time per output token are used unless given explicitly. The speed-up per batch
    size is in ``plan.speedup.batches`` (chart rows: :func:`speedup_chart_rows`). ``task``
    ('chat' | 'code' | 'math' | 'summarization'): plan with the method's published acceptance for
    that task (``wizard.plan.acceptance.TASK_PRIORS``) unless a measured one is given.
    ``report``: the check of this same context when the caller has it (the UI's live check): its
    errors become ``plan.refused_by`` without checking again.

    Raises:
        ValueError: bad --vllm-version; HardwareError: unknown GPU; TuneError: unreadable tune
            result; PlanInputError: a size no plan can be made for.
    """
    ctx = config if isinstance(config, CheckContext) else resolve_context(
        config, _version(vllm_version), _hardware(gpu), allow_hub=allow_hub)
    if isinstance(config, CheckContext) and gpu is not None:
        ctx = CheckContext(config=ctx.config, version=ctx.version, target=ctx.target, drafter=ctx.drafter,
                           hardware=_hardware(gpu), lookup_errors=dict(ctx.lookup_errors))
    if tune_result is not None:
        inp = _plan_inputs(tune_result)
        if acceptance is None:
            acceptance, acceptance_source, acceptance_kind = inp["per_position"], inp["acceptance_source"], "cumulative"
        if baseline_tpot_ms is None and inp.get("baseline_tpot_ms"):
            baseline_tpot_ms, baseline_batch = inp["baseline_tpot_ms"], baseline_batch or inp.get("concurrency")
    if acceptance is not None and acceptance_kind == "cumulative" and acceptance_source in (None, "entered", "--acceptance"):
        why = rising(acceptance)  # typed by hand: refuse, do not flatten into 100% conditional acceptance
        if why:
            raise AcceptanceInputError(f"{acceptance_source or 'acceptance'}: {why}; if these are conditional rates "
                                       "(each given the previous accepted), say so (--acceptance-kind conditional)")
    p = _plan(ctx, kv_cache_space_gib=kv_cache_space_gib, acceptance=acceptance, acceptance_kind=acceptance_kind,
              acceptance_source=acceptance_source or ("entered" if acceptance is not None else None), k_max=k_max,
              context_tokens=context_tokens, baseline_step_s=baseline_tpot_ms / 1e3 if baseline_tpot_ms else None,
              baseline_batch=baseline_batch or 1, task=task)
    if tune_result is not None:
        p.notes.extend(_measured_notes(inp))
    errors = (report if report is not None else check_context(ctx)).errors
    if errors:  # memory is not the only reason a configuration does not run: no k is recommended for it
        p.refuse([f"{f.rule}: {f.title}" for f in errors])
    return p


def _measured_notes(inp: dict[str, Any]) -> list[str]:
    """Plan notes for what a measured result holds beyond acceptance and the baseline: the fastest
    k per swept concurrency and the measured schedule (wizard.launch.tune_results)."""
    rows = [r for r in inp.get("by_concurrency") or [] if r.get("speedup")]
    out = list(inp.get("notes") or [])
    if rows:
        out.append("measured: " + "; ".join(
            f"concurrency {r['concurrency']}: fastest " + ("no speculation" if r["best_k"] == 0 else f"k={r['best_k']}")
            + f" ({r['speedup']:.2f}x)" for r in rows))
    if inp.get("schedule"):
        out.append(f"measured schedule: num_speculative_tokens_per_batch_size = {inp['schedule']} with "
                   f"num_speculative_tokens = {inp['schedule_max']}")
    return out


def speedup_chart_rows(p: Plan) -> list[dict[str, Any]]:
    """Rows for a speed-up vs k chart with one line per batch size: ``{"k", "speedup",
    "batch" (str, the series name), "best" (this k is that batch's best), "fits_kv"}``."""
    rows = []
    for b in p.speedup.batches:
        for pt in b.points:
            rows.append({"k": pt.k, "speedup": pt.speedup, "batch": str(b.batch), "best": pt.k == b.best_k,
                         "fits_kv": b.fits_kv})
    return rows


def _plan_inputs(tune_result: dict[str, Any] | str | Path) -> dict[str, Any]:
    # wizard.launch imports this module (check before start): imported here, not at the top
    from wizard.launch.tune import plan_inputs_from_results

    return plan_inputs_from_results(tune_result)


def tune(config: ServeConfig, *, progress: Any = None, grid_dir: str | Path | None = None, **kwargs: Any):
    """Measure output speed vs k on real servers (:func:`wizard.launch.tune.tune`; same keyword
    arguments: ks, concurrency, num_prompts, output_len, prompts, url, baseline, out_dir,
    kv_cache_space_gib, allow_hub, force ...). ``progress`` gets one dict per step
    ``{stage, k, index, total, message, run?}``. Returns a TuneResult (``.as_json()``, ``.runs``,
    ``.baseline``, ``.recommended_k``, ``.json_path``, ``.chart_path``). ``concurrency`` may be a
    list (the sweep is k x concurrency; ``.by_concurrency``, ``.schedule``). ``grid_dir``: start
    nothing, write the same sweep as a ``vllm bench sweep serve`` grid there and return a
    SweepGrid (:mod:`wizard.launch.sweep_grid`). Raises TuneError for unusable input; a failed
    run is reported in its ``error``, never raised."""
    # wizard.launch imports this module (check before start): imported here, not at the top
    from wizard.launch.tune import sweep_grid as _grid, tune as _tune

    if grid_dir is not None:
        keep = ("ks", "concurrency", "baseline", "num_prompts", "output_len", "prompts", "temperature", "chat", "port")
        return _grid(config, grid_dir, **{k: v for k, v in kwargs.items() if k in keep})
    return _tune(config, progress=progress, **kwargs)
