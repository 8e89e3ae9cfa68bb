"""CheckContext = ServeConfig + ModelInfo(target) + ModelInfo(drafter) + Hardware + VllmVersion.

Built once per check by :func:`resolve_context`; every rule reads only this. Model lookups go
through :func:`wizard.models.resolve.resolve_model` (local folder, catalog, then Hub) and are cached,
so re-checking on every keystroke costs no I/O after the first time.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

from wizard import resolve
from wizard.config import ServeConfig
from wizard.engine import EngineView, build_view
from wizard.engine.abbreviations import abbreviation_rewrite
from wizard.engine.speculators import speculators_rewrite
from wizard.hardware.spec import Hardware
from wizard.models.info import ModelInfo, ModelLookupError
from wizard.models.resolve import resolve_model
from wizard.vllm.versions import VllmVersion, default_version

__all__ = ["CheckContext", "resolve_context", "clear_model_cache", "REFUSED_PATH"]

#: the lookup error of a local path outside the folders a face may read (no detail on purpose)
REFUSED_PATH = ("a local path outside the folders this UI may read: not inspected and not launched "
                "(start app.py with --allow-model-dir DIR to allow one)")


@dataclass
class CheckContext:
    """Everything a rule may read. ``target``/``drafter`` are None when unknown (see ``lookup_errors``)."""

    config: ServeConfig
    version: VllmVersion
    target: ModelInfo | None = None
    drafter: ModelInfo | None = None
    hardware: Hardware | None = None
    lookup_errors: dict[str, str] = field(default_factory=dict)  # dotted field -> reason
    #: fields whose model name a path policy refused (never inspected; see resolve_context)
    refused_paths: set[str] = field(default_factory=set)
    #: per-check results of the rule layer, computed once (None = not yet)
    option_problems_memo: list | None = field(default=None, repr=False, compare=False)
    memory_plan_memo: Any = field(default=None, repr=False, compare=False)
    #: mechanism name -> result (wizard.mechanisms.apply) and name -> internal error text
    mechanism_results: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    mechanism_errors: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    #: the model was a speculators checkpoint: what vLLM does with it (wizard.engine.speculators); when it
    #: (or an abbreviated option, wizard.engine.abbreviations) applies, ``config`` is the long
    #: form vLLM builds and ``written_config`` the configuration as given
    speculators: Any = None
    written_config: ServeConfig | None = None
    #: abbreviated options moved into the long form: {path in ``config``: ``extra_args`` path as written}
    abbreviated: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    #: the verifier a speculators-format *drafter* names (``speculators_config.verifier.name_or_path``),
    #: looked up when it differs from the target (rule SD232 compares the two); None = not looked up / unknown
    verifier: ModelInfo | None = None

    @functools.cached_property
    def view(self) -> EngineView:
        """The derived engine facts of this check (:mod:`wizard.engine`), built on first use."""
        return build_view(self)

    # ---- derived, vLLM's own resolution (wizard.resolve) ---------------------------------
    @property
    def spec(self):
        return self.config.speculative_config

    @functools.cached_property
    def method(self) -> str | None:
        """The method vLLM will actually run (aliases, inference and path detection applied)."""
        return resolve.resolved_method(self)

    @functools.cached_property
    def k(self) -> int | None:
        """num_speculative_tokens as vLLM resolves it (explicit, else n_predict / defaults)."""
        return resolve.resolved_k(self)

    def target_kv_dtype(self) -> str:
        """Effective target KV dtype: --kv-cache-dtype, or what the checkpoint forces under auto."""
        return resolve.target_kv_dtype(self)

    def model_dtype(self) -> str | None:
        """The dtype vLLM runs the target (and the drafter) in; None when --dtype is auto and
        the target is unknown (``ctx.view.model_dtype``, :mod:`wizard.engine.dtype`)."""
        return self.view.model_dtype

    def drafter_kv_dtype(self) -> str:
        """Effective drafter KV dtype: speculative_config.kv_cache_dtype, else the target's."""
        return resolve.drafter_kv_dtype(self)

    @property
    def target_problem(self) -> str | None:
        """Why the target model could not be read (None: it was): an unknown id offline, a refused
        path, a broken or unusable config.json (``ModelInfo.errors`` / ``config_problems``)."""
        t = self.target
        if t is None:
            return self.lookup_errors.get("model", "not inspected")
        problems = [*t.errors, *(p.message for p in t.config_problems)]
        return problems[0] if problems else None

    @property
    def tp(self) -> int:
        return self.config.tensor_parallel_size or 1

    @property
    def pp(self) -> int:
        return self.config.pipeline_parallel_size or 1


@functools.lru_cache(maxsize=256)
def _cached_model(name: str, revision: str | None, allow_hub: bool) -> tuple[ModelInfo | None, str | None]:
    try:
        return resolve_model(name, revision=revision, allow_hub=allow_hub), None
    except ModelLookupError as err:
        return None, str(err)
    except Exception as err:  # corrupt file etc.: never crash a check
        return None, f"{type(err).__name__}: {err}"


def clear_model_cache() -> None:
    """Forget inspected models (e.g. after a local folder changed)."""
    _cached_model.cache_clear()


def resolve_context(
    config: ServeConfig,
    version: VllmVersion | None = None,
    hardware: Hardware | None = None,
    *,
    allow_hub: bool = True,
    path_allowed: Callable[[str], bool] | None = None,
) -> CheckContext:
    """Resolve models and version for ``config``. Never raises for lookup failures:
    they are recorded in ``lookup_errors`` for a rule to report.

    ``path_allowed``: when given (the UI: :meth:`wizard.security.PathPolicy.allows`), a model
    name it refuses is not looked at at all (no existence test, no config.json read): its
    lookup error is :data:`REFUSED_PATH`, the same whether or not the path exists, and the
    field is listed in ``ctx.refused_paths``."""
    ctx = CheckContext(config=config, version=version or default_version(), hardware=hardware)
    refused = ctx.refused_paths

    def lookup(field_: str, name: str, revision: str | None):
        if path_allowed is not None and not path_allowed(name):
            refused.add(field_)
            return None, REFUSED_PATH
        return _cached_model(name, revision, allow_hub)

    target, err = lookup("model", config.model, config.revision)
    ctx.target = target
    if err:
        ctx.lookup_errors["model"] = err
    short = abbreviation_rewrite(config, ctx.version)
    if short is not None:
        short, ctx.abbreviated = short
        # --kv-cache-d fp8, --spec-me ngram: the release's parser reads an abbreviation as its option (allow_abbrev)
        ctx.written_config, ctx.config, config = config, short, short
    rw = speculators_rewrite(config, target, ctx.version)
    if rw is not None:
        ctx.speculators = rw
        if rw.ok:
            # vLLM's maybe_override_with_speculators: the verifier is the target, the checkpoint the drafter
            ctx.written_config, ctx.config, config = ctx.written_config or config, rw.config, rw.config
            verifier, err = lookup("model", config.model, config.revision)
            ctx.target = verifier
            if err:
                ctx.lookup_errors["model"] = f"the verifier {config.model} named by speculator {rw.speculator}: {err}"
            ctx.drafter = target
            return ctx
    spec = config.speculative_config
    draft_name = resolve.drafter_model_name(ctx)
    if draft_name and draft_name != config.model:
        info, err = lookup("speculative_config.model", draft_name, spec.revision if spec else None)
        ctx.drafter = info
        if err:
            ctx.lookup_errors["speculative_config.model"] = err
    elif draft_name and draft_name == config.model:
        ctx.drafter = target
    d = ctx.drafter
    if d is not None and d is not target and isinstance(d.speculators_config, dict):
        v = d.speculators_config.get("verifier")
        vname = v.get("name_or_path") if isinstance(v, dict) else None
        if (isinstance(vname, str) and vname.strip() and vname != config.model
                and (path_allowed is None or path_allowed(vname))):
            ctx.verifier = _cached_model(vname, None, allow_hub)[0]
    return ctx
